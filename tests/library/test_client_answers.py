"""Answer handlers (``mrtr_kit.client.answers``): dispatch by input-request kind, capability
declaration, and checking answers before they are sent. No HTTP.
"""

from __future__ import annotations

import asyncio

import pytest

from mrtr_kit.client import (
    AnswerContext,
    AnswerHandlers,
    ElicitResult,
    InputDeclined,
    InvalidAnswers,
    ProtocolViolation,
    check_answer,
)

CTX = AnswerContext("k", "tools/call", "t", 1, {"name": "srv", "version": "1"})
SCHEMA = {
    "type": "object",
    "properties": {"party": {"type": "integer", "minimum": 1}},
    "required": ["party"],
}
FORM = {
    "method": "elicitation/create",
    "params": {"message": "How many?", "requestedSchema": SCHEMA},
}
URL = {
    "method": "elicitation/create",
    "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/x"},
}
ROOTS = {"method": "roots/list"}


def answer(handlers: AnswerHandlers, request: dict) -> dict:
    return asyncio.run(handlers.answer(request, CTX))


def test_capabilities_are_exactly_the_handlers():
    """§2.9: one capability per handler, as JSON objects."""
    assert AnswerHandlers().capabilities() == {}
    handlers = AnswerHandlers(url_elicitation=lambda p, c: None, sampling=lambda p, c: None)
    assert handlers.capabilities() == {"elicitation": {"url": {}}, "sampling": {}}


def test_elic_1_request_without_mode_goes_to_the_form_handler():
    """ELIC-1: no mode means form mode; the handler gets the parsed params."""
    got = []

    def form(params, ctx):
        got.append(params.requested_schema)
        return ElicitResult(action="accept", content={"party": 2})

    assert answer(AnswerHandlers(elicitation=form), FORM) == {
        "action": "accept",
        "content": {"party": 2},
    }
    assert got == [SCHEMA]


def test_mrtr_s7_request_kind_without_a_handler_is_refused():
    """MRTR-S7: only form mode declared, the server asks for URL mode -> protocol violation."""
    handlers = AnswerHandlers(elicitation=lambda p, c: ElicitResult(action="cancel"))
    with pytest.raises(ProtocolViolation, match="MRTR-S7"):
        answer(handlers, URL)
    with pytest.raises(ProtocolViolation, match="MRTR-S7"):
        answer(handlers, ROOTS)


def test_mrtr_c8_elicitation_handlers_must_answer_but_sampling_may_refuse():
    """MRTR-C8: decline/cancel are answers; None from an elicitation handler is a bug, None
    from a sampling or roots handler means 'do not retry'."""
    with pytest.raises(InvalidAnswers, match="decline"):
        answer(AnswerHandlers(elicitation=lambda p, c: None), FORM)
    with pytest.raises(InputDeclined):
        answer(AnswerHandlers(roots=lambda p, c: None), ROOTS)


async def _async_roots(params, ctx):
    return {"roots": [{"uri": "file:///home/ann"}]}


def test_async_handlers_and_roots_params_default():
    """ROOTS-1: roots/list params are optional; async handlers are awaited."""
    assert answer(AnswerHandlers(roots=_async_roots), ROOTS) == {
        "roots": [{"uri": "file:///home/ann"}]
    }


def test_elic_14_answers_are_checked_before_sending():
    """ELIC-14 / ROOTS-1: content must fit requestedSchema; root URIs must be file://."""
    with pytest.raises(InvalidAnswers) as info:
        check_answer(FORM, {"action": "accept", "content": {"party": 0}})
    assert "party" in info.value.problems
    with pytest.raises(InvalidAnswers):
        check_answer(FORM, {"action": "maybe"})
    with pytest.raises(InvalidAnswers):
        check_answer(ROOTS, {"roots": [{"uri": "https://example.com"}]})
    assert check_answer(FORM, {"action": "decline"}) == {"action": "decline"}


def test_elic_5_malformed_or_unrenderable_requests_are_the_servers_fault():
    """ELIC-5 (KIT): a schema outside the form subset, or a request missing required fields,
    is a protocol violation."""
    nested = {"type": "object", "properties": {"a": {"type": "object"}}}
    bad_schema = {
        "method": "elicitation/create",
        "params": {"message": "?", "requestedSchema": nested},
    }
    no_message = {"method": "elicitation/create", "params": {"requestedSchema": SCHEMA}}
    for request in (bad_schema, no_message, {"method": "ping"}):
        with pytest.raises(ProtocolViolation):
            check_answer(request, {"action": "cancel"})


# --- found by the mutation run once answers.py held the answer checks of a call --------------

SAMPLE = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10}}
OPEN_FORM = {
    "method": "elicitation/create",
    "params": {
        "message": "Anything to add?",
        "requestedSchema": {"type": "object", "properties": {"note": {"type": "string"}}},
    },
}


def test_elic_14_invalid_answers_name_the_field_that_does_not_fit():
    """ELIC-14: ``InvalidAnswers.problems`` is keyed by where the answer goes wrong: a field
    path joined with dots, or the expected result type when the answer is not even an object;
    a bad sampling or roots answer is ours to fix (InvalidAnswers), never the server's."""
    cases = [
        (FORM, {"action": "maybe"}, "action"),
        (ROOTS, {"roots": [{"uri": 5}]}, "roots.0.uri"),
        (FORM, "yes", "ElicitResult"),
        (SAMPLE, "yes", "CreateMessageResult"),
        (ROOTS, "yes", "ListRootsResult"),
    ]
    for request, bad, where in cases:
        with pytest.raises(InvalidAnswers) as info:
            check_answer(request, bad)
        assert list(info.value.problems) == [where]
        assert info.value.problems[where]  # with pydantic's reason


def test_elic_14_an_accept_without_content_fits_a_form_with_no_required_field():
    """ELIC-14: an ``accept`` with no ``content`` is checked as empty content: it fits a form
    whose fields are all optional, and misses the required one of a form that has one."""
    assert check_answer(OPEN_FORM, {"action": "accept"}) == {"action": "accept"}
    with pytest.raises(InvalidAnswers) as info:
        check_answer(FORM, {"action": "accept"})
    assert list(info.value.problems) == ["party"]


def test_mrtr_s2b_a_malformed_input_request_is_the_servers_fault_and_named():
    """MRTR-S2b: a malformed sampling, roots or elicitation request is a ProtocolViolation
    (the server's fault, not an answer to fix) whose message says which kind it was."""
    cases = [
        ({"method": "sampling/createMessage", "params": {"messages": "no"}}, "sampling request"),
        ({"method": "roots/list", "params": 5}, "roots/list request"),
        ({"method": "elicitation/create", "params": 5}, "elicitation request"),
    ]
    for request, kind in cases:
        with pytest.raises(ProtocolViolation, match=f"^malformed {kind}: "):
            check_answer(request, {})


def test_mrtr_s7_the_refusal_names_the_kind_the_client_did_not_declare():
    """MRTR-S7: asked for an input kind it declared no handler for, the client says which:
    form or URL elicitation, sampling or roots."""
    form_only = AnswerHandlers(elicitation=lambda p, c: ElicitResult(action="cancel"))
    url_only = AnswerHandlers(url_elicitation=lambda p, c: ElicitResult(action="cancel"))
    for handlers, request, kind in [
        (form_only, URL, "URL elicitation"),
        (url_only, FORM, "form elicitation"),
        (form_only, SAMPLE, "sampling"),
        (form_only, ROOTS, "roots"),
    ]:
        with pytest.raises(ProtocolViolation, match=f"^server sent a {kind} request "):
            answer(handlers, request)


def test_mrtr_c1_c6_kit_a_wrong_answer_set_says_both_problems_sorted_and_apart():
    """MRTR-C1 / MRTR-C6 (a missing answer) and the kit's refusal of extras (KIT, MRTR-E3), in
    one message: each list sorted, whatever order the keys came in, the two parts apart.

    Kills: the ``sorted`` of asked, missing or unexpected dropped; the parts joined with "".
    """
    from mrtr_kit.client.answers import retry_answers

    # Eight keys each: a set of them iterates in sorted order by luck 1 time in 40,320.
    asked = ["kappa", "alpha", "omega", "delta", "beta", "gamma", "sigma", "eta"]
    extra = ["zz", "aa", "mm", "cc", "bb", "qq", "ee", "hh"]
    requests = {k: {"method": "elicitation/create"} for k in asked}
    with pytest.raises(InvalidAnswers) as info:
        retry_answers(requests, {k: {"action": "cancel"} for k in extra})
    assert str(info.value) == (
        f"no answer for {sorted(asked)}: a client must answer every requested key of the "
        f"latest inputRequests {sorted(asked)} before retrying (MRTR-C1, MRTR-C6); "
        f"answers nobody asked for {sorted(extra)}: this client does not send them (KIT; the "
        "spec only says a server SHOULD ignore them, MRTR-E3)"
    )
