"""The client's sans-IO round logic (``mrtr_kit.client.call`` and its modules) on plain dicts,
no I/O.

Each test names the rule it checks and fails if the rule is broken.
"""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from mrtr_kit.client import (
    CallStatus,
    ElicitResult,
    InvalidAnswers,
    McpClientError,
    McpRemoteError,
    MrtrCall,
    NoMutualVersion,
    NotJson,
    ProtocolViolation,
    RequestFactory,
    TooManyRounds,
    client_capabilities,
    encode_request,
)
from mrtr_kit.client.call import DEFAULT_MAX_ROUNDS
from mrtr_kit.client.factory import choose_version
from mrtr_kit.client.results import Complete, NeedsInput, interpret_result, result_of
from mrtr_kit.client.steps import AnswerThese, Done, Resend, state_only_delay
from mrtr_kit.client.transitions import TRANSITIONS, Event, IllegalTransition, next_status
from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    MRTR_METHODS,
    PROTOCOL_VERSION,
)
from mrtr_kit.protocol.models import CreateMessageResult, Implementation, TextContent
from tests.helpers import ACCEPT, FORM, asking, irr, reply

SAMPLE = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10}}


def done(request: dict) -> dict:
    return reply(request, {"resultType": "complete", "content": []})


def factory(**kw) -> RequestFactory:
    return RequestFactory(capabilities=client_capabilities(form=True), **kw)


def started(result: dict, **kw) -> tuple[MrtrCall, dict]:
    """A tools/call whose first round got ``result``."""
    call = MrtrCall.tool(factory(), "book", {"party": 4}, **kw)
    first = call.first_request()
    call.receive(reply(first, result))
    return call, first


# --- every request: ids and _meta ------------------------------------------------------------


def test_core_10_every_request_has_meta_with_version_capabilities_and_client_info():
    """CORE-10 / CORE-12: _meta with protocolVersion, clientCapabilities, clientInfo."""
    req = factory().request("tools/list")
    meta = req["params"]["_meta"]
    assert meta[META_PROTOCOL_VERSION] == "2026-07-28"
    assert meta[META_CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}
    assert meta[META_CLIENT_INFO]["name"] == "mrtr-kit-client"


def test_core_12_client_info_can_be_switched_off():
    """CORE-12: clientInfo is a SHOULD 'unless configured not to'."""
    meta = RequestFactory(client_info=None).request("tools/list")["params"]["_meta"]
    assert META_CLIENT_INFO not in meta


def test_meta_objects_are_fresh_for_each_request():
    """CORE-10: a new _meta every time; mutating one request cannot change the next."""
    f = factory()
    first = f.request("tools/list")
    first["params"]["_meta"][META_CLIENT_CAPABILITIES]["sampling"] = {}
    second = f.request("tools/list")
    assert second["params"]["_meta"][META_CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}


def test_extra_meta_cannot_override_required_keys():
    """CORE-10: protocolVersion and clientCapabilities are the client's own business."""
    f = factory()
    assert f.request("x", extra_meta={"progressToken": "p"})["params"]["_meta"]["progressToken"]
    with pytest.raises(ValueError):
        f.request("x", extra_meta={META_PROTOCOL_VERSION: "1999-01-01"})


def test_capabilities_are_json_objects():
    """§2.9 / CAP-3: capability values are objects ({}), elicitation only with a mode."""
    assert client_capabilities() == {}
    assert client_capabilities(form=True, url=True, sampling=True, roots=True) == {
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
        "roots": {},
    }
    with pytest.raises(ValueError):
        RequestFactory(capabilities={"roots": True})


def test_core_3_ids_are_never_reused():
    """CORE-3: every request of a client gets a new id."""
    f = factory()
    ids = [f.request("tools/list")["id"] for _ in range(5)]
    assert len(set(ids)) == 5


def test_core_10_core_12_no_two_requests_share_a_mutable_part_of_meta():
    """CORE-10 / CORE-12: every request gets its own ``_meta``; a transport that edits one
    request (adds a header hint, redacts client info) never changes the next.

    Kills: clientInfo, capabilities or an extra ``_meta`` value put in by reference.
    """
    factory = RequestFactory(
        capabilities={"elicitation": {"form": {}}}, client_info={"name": "n", "version": "1"}
    )
    extra = {"progressToken": {"n": 1}}
    first = factory.request("tools/call", {"name": "t"}, extra)
    meta = first["params"]["_meta"]
    meta[META_CLIENT_INFO]["name"] = "edited"
    meta[META_CLIENT_CAPABILITIES]["elicitation"]["url"] = {}
    meta["progressToken"]["n"] = 2
    second = factory.request("tools/call", {"name": "t"}, extra)["params"]["_meta"]
    assert second[META_CLIENT_INFO] == {"name": "n", "version": "1"}
    assert second[META_CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}
    assert second["progressToken"] == {"n": 1} and extra == {"progressToken": {"n": 1}}


def test_core_10_a_factory_keeps_its_own_copy_of_what_it_was_given():
    """CORE-10: the capabilities a client declares are the ones it was built with; changing
    the dicts passed in afterwards does not change later requests.

    Kills: ``dict(capabilities ...)`` and ``dict(client_info)`` dropped in the factory.
    """
    caps = {"elicitation": {"form": {}}}
    info = {"name": "n", "version": "1"}
    factory = RequestFactory(capabilities=caps, client_info=info)
    caps["roots"] = {}
    info["name"] = "changed"
    meta = factory.meta()
    assert meta[META_CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}
    assert meta[META_CLIENT_INFO] == {"name": "n", "version": "1"}


def test_core_12_client_info_from_a_model_goes_out_with_wire_names():
    """CORE-12: ``clientInfo`` built from an ``Implementation`` model uses the wire's field
    names (``websiteUrl``), not Python's.

    Kills: ``by_alias=True`` turned into ``False`` when the factory dumps the model.
    """
    info = Implementation(name="kit", version="1", website_url="https://example.org")
    meta = RequestFactory(client_info=info).meta()
    assert meta[META_CLIENT_INFO] == {
        "name": "kit",
        "version": "1",
        "websiteUrl": "https://example.org",
    }


def test_core_10_params_cannot_replace_the_required_meta():
    """CORE-10: ``protocolVersion`` and ``clientCapabilities`` are always the client's own; a
    ``_meta`` passed inside ``params`` is ignored, not sent instead.

    Kills: the ``k != "_meta"`` filter dropped, or comparing against ``""``.
    """
    sent = RequestFactory().request("tools/list", {"_meta": {"x": 1}, "cursor": "c"})
    assert sent["params"]["cursor"] == "c"
    meta = sent["params"]["_meta"]
    assert meta[META_PROTOCOL_VERSION] == PROTOCOL_VERSION and "x" not in meta


@pytest.mark.parametrize("key", ["_meta", "inputResponses", "requestState"])
def test_mrtr_c2_a_call_refuses_params_that_each_round_adds_itself(key):
    """MRTR-C2 / MRTR-C5: answers, state and ``_meta`` are added by each round; passed in the
    original params they would go out on round 1 (a state the server never sent). Refused.

    Kills: "_meta" or "inputResponses" emptied in RESERVED_CALL_PARAMS.
    """
    with pytest.raises(ValueError, match="must not contain"):
        MrtrCall(RequestFactory(), "tools/call", {"name": "t", key: {}})


def test_core_10_a_plain_request_keeps_its_own_params():
    """CORE-10 / VER-2: a plain request repeats its own params on a resend: a caller that
    changes the dict it passed, or the request it sent, changes nothing; read-only mappings
    are accepted. Once its result arrives it is complete.

    Kills: ``copy.deepcopy`` or ``dict`` dropped in ``PlainRequest``; its COMPLETE status
    not set.
    """
    from mrtr_kit.client.call import PlainRequest

    params = {"cursor": "c", "filter": {"tags": ["a"]}}
    plain = PlainRequest(RequestFactory(), "tools/list", params)
    params["filter"]["tags"].append("late")
    first = plain.first_request()
    first["params"]["filter"]["tags"].append("edited")
    resent = plain.resend_request()
    assert resent["params"]["filter"] == {"tags": ["a"]}
    plain.receive(reply(resent, {"tools": []}))
    assert plain.status is CallStatus.COMPLETE
    proxy = PlainRequest(RequestFactory(), "tools/list", MappingProxyType({"cursor": "x"}))
    assert proxy.first_request()["params"]["cursor"] == "x"


# --- reading results -----------------------------------------------------------------------------


def test_rt_2_missing_result_type_is_complete():
    """RT-2: a result without resultType is complete (legacy servers), never retried."""
    outcome = interpret_result("tools/call", {"content": []})
    assert isinstance(outcome, Complete)
    call, _ = started({"content": [{"type": "text", "text": "ok"}]})
    assert call.is_complete and call.result is not None
    with pytest.raises(RuntimeError):
        call.retry_request({})


def test_rt_3_unknown_result_type_is_a_protocol_violation():
    """RT-3: any other resultType (no extension negotiated) is invalid."""
    with pytest.raises(ProtocolViolation, match="RT-3"):
        interpret_result("tools/call", {"resultType": "task"})


@pytest.mark.parametrize("method", ["tools/list", "server/discover", "prompts/list"])
def test_mrtr_r3_input_required_on_other_methods_is_a_protocol_violation(method):
    """MRTR-R3: input_required outside tools/call, prompts/get, resources/read -> error."""
    with pytest.raises(ProtocolViolation, match="MRTR-R3"):
        interpret_result(method, irr({"k": FORM}, "s"))


@pytest.mark.parametrize("method", sorted(MRTR_METHODS))
def test_mrtr_r1_input_required_is_read_on_the_three_methods(method):
    """MRTR-R1: tools/call, prompts/get and resources/read may answer input_required."""
    assert isinstance(interpret_result(method, irr({"k": FORM})), NeedsInput)


@pytest.mark.parametrize("result", [irr(), irr({}), {"resultType": "input_required"}])
def test_mrtr_s6_input_required_with_nothing_is_a_protocol_violation(result):
    """MRTR-S6: an InputRequiredResult with neither inputRequests nor requestState."""
    with pytest.raises(ProtocolViolation, match="MRTR-S6"):
        interpret_result("tools/call", result)


def test_mrtr_s2b_unknown_input_request_method_is_a_protocol_violation():
    """MRTR-S2b: input requests are elicitation/create, sampling/createMessage, roots/list."""
    with pytest.raises(ProtocolViolation, match="MRTR-S2b"):
        interpret_result("tools/call", irr({"k": {"method": "ping", "params": {}}}))


def test_request_state_must_be_a_string():
    """§4.2: requestState is a string; null or a number is not echoed, it is refused."""
    for bad in (None, 42, {"a": 1}):
        result = {"resultType": "input_required", "inputRequests": {"k": FORM}}
        result["requestState"] = bad
        with pytest.raises(ProtocolViolation):
            interpret_result("tools/call", result)


def test_err_4_remote_errors_keep_code_message_and_data():
    """ERR-4: a peer's error keeps its code/message/data and is a different class from local
    failures."""
    response = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "m", "data": [1]}}
    with pytest.raises(McpRemoteError) as info:
        result_of(response, http_status=200)
    assert (info.value.code, info.value.message, info.value.data) == (-32602, "m", [1])
    assert info.value.http_status == 200
    for local in (ProtocolViolation, TooManyRounds, InvalidAnswers, NoMutualVersion):
        assert issubclass(local, McpClientError) and not issubclass(local, McpRemoteError)


@pytest.mark.parametrize(
    "result",
    [[1], "complete", None],
    ids=["list", "string", "null"],
)
def test_core_4_a_result_that_is_not_an_object_is_a_protocol_violation(result):
    """CORE-4: a result response has a ``result`` object; anything else is refused clearly.

    Kills: the two "not an object" raises removed (result_of, interpret_result).
    """
    with pytest.raises(ProtocolViolation):
        result_of({"jsonrpc": "2.0", "id": 1, "result": result})
    with pytest.raises(ProtocolViolation):
        interpret_result("tools/call", result)


@pytest.mark.parametrize(
    "requests",
    [["k"], {"k": "elicitation/create"}, {"k": ["elicitation/create"]}],
    ids=["list", "string-value", "list-value"],
)
def test_mrtr_s2b_input_requests_of_the_wrong_shape_are_a_protocol_violation(requests):
    """MRTR-S2 / MRTR-S2b: ``inputRequests`` is a map of request objects; a list, or a value
    that is not an object, is a protocol violation - never a crash of the client.

    Kills: the "inputRequests must be an object" raise removed; the ``isinstance(request,
    dict)`` check dropped.
    """
    with pytest.raises(ProtocolViolation):
        interpret_result("tools/call", {"resultType": "input_required", "inputRequests": requests})


def test_core_4_an_error_without_an_id_is_the_servers_error_not_a_mismatch():
    """CORE-4: a server that could not read the request's id answers without one; the client
    reports that error (code and message), not an id mismatch.

    Kills: ``rid is not None and`` dropped from the id check in ``receive``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    call.first_request()
    response = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    with pytest.raises(McpRemoteError) as raised:
        call.receive(response)
    assert raised.value.code == -32700 and call.status is CallStatus.FAILED


def test_rt_3_a_protocol_violation_fails_the_call():
    """RT-3: an unknown ``resultType`` is invalid; the call is FAILED (and may be resent),
    not left waiting for a response that already came.

    Kills: ProtocolViolation dropped from the ``except`` that marks the call failed.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    first = call.first_request()
    with pytest.raises(ProtocolViolation):
        call.receive(reply(first, {"resultType": "partial"}))
    assert call.status is CallStatus.FAILED
    assert call.resend_request()["params"]["name"] == "t"


# --- one call across rounds ----------------------------------------------------------------------


def test_mrtr_c2_request_state_is_echoed_as_the_very_same_string():
    """MRTR-C2: the retry carries exactly the received requestState — the same object, not a
    parsed or re-serialised copy (it looks like JSON with odd spacing on purpose)."""
    state = '{"nonce" : "é\\u00e9",  "originalId":1 }'
    call, _ = started(irr({"confirm": FORM}, state))
    retry = call.retry_request({"confirm": ACCEPT})
    assert retry["params"]["requestState"] is state


def test_mrtr_c2_no_request_state_means_the_key_is_absent_not_null():
    """MRTR-C2: no requestState in the result -> no requestState key at all on the retry."""
    call, _ = started(irr({"confirm": FORM}))
    retry = call.retry_request({"confirm": ACCEPT})
    assert "requestState" not in retry["params"]
    assert retry["params"]["inputResponses"] == {"confirm": ACCEPT}


def test_mrtr_c2_each_round_echoes_the_latest_state_only():
    """MRTR-C2: round 3 echoes round 2's state, not round 1's; a round without state drops it."""
    call, _ = started(irr({"a": FORM}, "S1"))
    second = call.retry_request({"a": ACCEPT})
    call.receive(reply(second, irr({"b": FORM}, "S2")))
    third = call.retry_request({"b": ACCEPT})
    assert third["params"]["requestState"] == "S2"
    call.receive(reply(third, irr({"c": FORM})))
    fourth = call.retry_request({"c": ACCEPT})
    assert "requestState" not in fourth["params"]


def test_mrtr_c3_every_retry_has_a_new_id():
    """MRTR-C3: each round is a separate request with a different JSON-RPC id."""
    call, first = started(irr({"a": FORM}, "S1"))
    second = call.retry_request({"a": ACCEPT})
    call.receive(reply(second, irr({"b": FORM}, "S2")))
    third = call.retry_request({"b": ACCEPT})
    assert len({first["id"], second["id"], third["id"]}) == 3


def test_mrtr_c5_retry_repeats_method_name_and_arguments_with_fresh_meta():
    """MRTR-C5 / CORE-10: same method, name and arguments every round, plus a fresh _meta —
    even if the caller mutates the arguments dict it passed in."""
    arguments = {"party": 4, "tags": ["quiet"]}
    call = MrtrCall.tool(factory(), "book", arguments)
    first = call.first_request()
    arguments["party"] = 99  # a later change by the caller must not leak into the retry
    arguments["tags"].append("late")  # not even deep inside
    first["params"]["arguments"]["tags"].append("x")  # nor a change to an earlier request
    call.receive(reply(first, irr({"k": FORM}, "S")))
    retry = call.retry_request({"k": ACCEPT})
    assert retry["method"] == "tools/call"
    assert retry["params"]["name"] == "book"
    assert retry["params"]["arguments"] == {"party": 4, "tags": ["quiet"]}
    assert retry["params"]["_meta"] == first["params"]["_meta"]
    assert retry["params"]["_meta"] is not first["params"]["_meta"]


def test_mrtr_c5_resource_and_prompt_retries_keep_uri_and_name():
    """MRTR-C5: resources/read repeats its uri, prompts/get its name and arguments."""
    f = factory()
    for call, key, value in (
        (MrtrCall.resource(f, "kit://x"), "uri", "kit://x"),
        (MrtrCall.prompt(f, "p", {"topic": "t"}), "arguments", {"topic": "t"}),
    ):
        first = call.first_request()
        call.receive(reply(first, irr({"k": FORM})))
        assert call.retry_request({"k": ACCEPT})["params"][key] == value


def test_mrtr_c1_a_missing_answer_refuses_the_retry():
    """MRTR-C1 / MRTR-C6: every requested key must be answered; otherwise nothing is built
    and the call still waits for answers."""
    call, _ = started(irr({"a": FORM, "b": FORM}, "S"))
    with pytest.raises(InvalidAnswers) as info:
        call.retry_request({"a": ACCEPT})
    assert info.value.missing == ["b"]
    assert "every requested key" in str(info.value) and "(MRTR-C1, MRTR-C6)" in str(info.value)
    assert "KIT" not in str(info.value)  # a missing answer breaks the spec's rule
    assert call.status is CallStatus.INPUT_REQUIRED and call.rounds == 1
    with pytest.raises(InvalidAnswers):
        call.retry_request(None)


def test_mrtr_c1_state_only_result_may_be_retried_straight_away():
    """MRTR-C1: without inputRequests the client may retry at once: no inputResponses key."""
    call, _ = started(irr(state="S"))
    assert call.input_required is not None and call.input_required.is_state_only
    retry = call.retry_request()
    assert retry["params"]["requestState"] == "S"
    assert "inputResponses" not in retry["params"]


def test_mrtr_c6_extra_keys_are_refused_and_old_answers_not_resent():
    """MRTR-C6: answers answer the latest inputRequests; earlier rounds' answers are not
    re-sent (the server keeps them in requestState). Refusing an extra key is the kit's
    choice (KIT), and the message says so: the spec only asks servers to ignore it (MRTR-E3)."""
    call, _ = started(irr({"a": FORM}, "S1"))
    with pytest.raises(InvalidAnswers) as info:
        call.retry_request({"a": ACCEPT, "zzz": ACCEPT})
    assert info.value.unexpected == ["zzz"]
    assert "KIT" in str(info.value) and "MRTR-E3" in str(info.value)
    assert "MRTR-C1" not in str(info.value)  # no spec rule is broken by an extra key
    second = call.retry_request({"a": ACCEPT})
    call.receive(reply(second, irr({"b": FORM}, "S2")))
    third = call.retry_request({"b": {"action": "accept", "content": {"name": "Bo"}}})
    assert set(third["params"]["inputResponses"]) == {"b"}


def test_answers_must_be_objects_and_models_are_serialised():
    """§4.3: inputResponses values are result objects; pydantic answers become wire dicts."""
    call, _ = started(irr({"a": FORM}))
    with pytest.raises(InvalidAnswers):
        call.retry_request({"a": "yes"})
    retry = call.retry_request({"a": ElicitResult(action="accept", content={"name": "Ann"})})
    assert retry["params"]["inputResponses"] == {"a": ACCEPT}


def test_mrtr_c8_decline_and_cancel_are_answers():
    """MRTR-C8: declining is not failing — the retry carries {"action": "decline"}."""
    for action in ("decline", "cancel"):
        call, _ = started(irr({"a": FORM}, "S"))
        retry = call.retry_request({"a": ElicitResult(action=action)})
        assert retry["params"]["inputResponses"] == {"a": {"action": action}}


def test_mrtr_c4_state_stays_with_its_own_call():
    """MRTR-C4: two interleaved calls on one client each echo only their own state, and an
    unrelated request carries no inputResponses or requestState at all."""
    f = factory()
    one, two = MrtrCall.tool(f, "t", {"n": 1}), MrtrCall.tool(f, "t", {"n": 2})
    r1, r2 = one.first_request(), two.first_request()
    one.receive(reply(r1, irr({"k": FORM}, "STATE-ONE")))
    two.receive(reply(r2, irr({"k": FORM}, "STATE-TWO")))
    unrelated = f.request("tools/call", {"name": "other", "arguments": {}})
    retry_two = two.retry_request({"k": ACCEPT})
    retry_one = one.retry_request({"k": ACCEPT})
    assert retry_one["params"]["requestState"] == "STATE-ONE"
    assert retry_two["params"]["requestState"] == "STATE-TWO"
    assert "inputResponses" not in unrelated["params"]
    assert "requestState" not in unrelated["params"]


def test_mrtr_c7_round_limit_raises_too_many_rounds():
    """MRTR-C7: a server that never stops asking hits the round limit (default 10)."""
    assert DEFAULT_MAX_ROUNDS == 10
    call = MrtrCall.tool(factory(), "loop", max_rounds=3)
    request = call.first_request()
    for _ in range(2):
        call.receive(reply(request, irr({"k": FORM}, "S")))
        request = call.retry_request({"k": ACCEPT})
    call.receive(reply(request, irr({"k": FORM}, "S")))
    with pytest.raises(TooManyRounds, match="3 rounds"):
        call.retry_request({"k": ACCEPT})
    assert call.rounds == 3


def test_mrtr_c7_state_only_rounds_back_off():
    """MRTR-C7: growing pauses between state-only rounds, capped."""
    delays = [state_only_delay(n, base_s=0.1, cap_s=1.0) for n in range(1, 7)]
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert state_only_delay(0) == 0.0


def test_error_response_fails_the_call_and_resend_keeps_the_round():
    """VER-2 / HTTP-26: after an error the same round can be re-sent under a fresh id."""
    call = MrtrCall.tool(factory(), "t")
    first = call.first_request()
    error = {"jsonrpc": "2.0", "id": first["id"], "error": {"code": -32603, "message": "x"}}
    with pytest.raises(McpRemoteError):
        call.receive(error)
    assert call.status is CallStatus.FAILED
    again = call.resend_request()
    assert again["id"] != first["id"] and call.rounds == 1
    assert again["params"]["name"] == "t"


def test_receive_checks_the_response_id():
    """CORE-4: a response must echo the id of the request it answers."""
    call = MrtrCall.tool(factory(), "t")
    first = call.first_request()
    with pytest.raises(ProtocolViolation):
        call.receive({"jsonrpc": "2.0", "id": first["id"] + 100, "result": {}})


def test_call_params_reject_reserved_keys():
    """MRTR-C2 / MRTR-C4: answers and state come only from the call itself."""
    with pytest.raises(ValueError):
        MrtrCall(factory(), "tools/call", {"name": "t", "requestState": "stolen"})
    with pytest.raises(ValueError):
        MrtrCall(factory(), "tools/list", {})


def test_mrtr_c7_a_one_round_limit_is_allowed_and_zero_is_not():
    """MRTR-C7 (KIT limit): ``max_rounds=1`` means the first request only; 0 is refused.

    Kills: ``max_rounds < 1`` turned into ``<= 1`` or ``< 0``; its raise removed.
    """
    call = MrtrCall.tool(RequestFactory(), "t", max_rounds=1)
    first = call.first_request()
    call.receive(asking(first, {"k": FORM}))
    with pytest.raises(TooManyRounds):
        call.retry_request({"k": ACCEPT})
    with pytest.raises(ValueError, match="at least 1"):
        MrtrCall.tool(RequestFactory(), "t", max_rounds=0)


def test_mrtr_c7_a_new_call_has_sent_no_round_and_has_no_outcome():
    """MRTR-C7: ``rounds`` counts the rounds sent (0 before the first), and a new call has no
    result and nothing to answer yet.

    Kills: ``self.rounds = 0`` removed or set to 1; ``self.outcome = None`` removed.
    """
    call = MrtrCall.resource(RequestFactory(), "file:///a")
    assert call.rounds == 0 and call.result is None and call.input_required is None
    assert call.status is CallStatus.NEW
    call.first_request()
    assert call.rounds == 1


@pytest.mark.parametrize(
    ("make", "target"),
    [
        (lambda f: MrtrCall.tool(f, "get_weather"), "get_weather"),
        (lambda f: MrtrCall.prompt(f, "greet"), "greet"),
        (lambda f: MrtrCall.resource(f, "file:///notes.txt"), "file:///notes.txt"),
    ],
    ids=["tool", "prompt", "resource"],
)
def test_mrtr_c5_a_call_knows_its_target(make, target):
    """MRTR-C5: the target every round repeats is the tool or prompt name, or the resource
    URI (also what TooManyRounds reports).

    Kills: "resources/read" or "uri" emptied in ``MrtrCall.target``.
    """
    assert make(RequestFactory()).target == target


def test_mrtr_c5_params_are_a_copy_and_any_mapping_will_do():
    """MRTR-C5: the call keeps a private copy of its params: what ``params`` returns and what
    the caller passed can be changed without changing the next round. Read-only mappings
    (``MappingProxyType``) are accepted for params, arguments and extra ``_meta``.

    Kills: ``dict(...)`` dropped before the deep copy of params, of tool or prompt arguments,
    or of the extra ``_meta``; ``params`` returned without a copy.
    """
    factory = RequestFactory()
    args = MappingProxyType({"city": "Paris"})
    meta = {"progressToken": "p1"}
    call = MrtrCall.tool(factory, "w", args, meta=meta)
    prompt = MrtrCall.prompt(factory, "p", MappingProxyType({"tone": "dry"}))
    raw = MrtrCall(factory, "resources/read", MappingProxyType({"uri": "file:///a"}))
    view = call.params
    view["arguments"]["city"] = "Rome"
    meta["progressToken"] = "p2"
    first = call.first_request()
    assert first["params"]["arguments"] == {"city": "Paris"}
    assert first["params"]["_meta"]["progressToken"] == "p1"
    assert call.params == {"name": "w", "arguments": {"city": "Paris"}}
    assert prompt.first_request()["params"]["arguments"] == {"tone": "dry"}
    assert raw.first_request()["params"]["uri"] == "file:///a"


def test_mrtr_c6_a_resend_repeats_the_round_even_if_the_sent_request_was_edited():
    """MRTR-C6 / HTTP-26: a resend is the same round again; a transport that edited the
    request it sent (say, while logging it) does not change the resend.

    Kills: ``copy.deepcopy`` of the answers dropped in ``_send``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    first = call.first_request()
    call.receive(asking(first, {"k": FORM}))
    retry = call.retry_request({"k": {"action": "accept", "content": {"name": "Ann"}}})
    retry["params"]["inputResponses"]["k"]["content"]["name"] = "edited"
    assert call.resend_request()["params"]["inputResponses"] == {"k": ACCEPT}


def test_mrtr_c6_answers_are_copied_when_the_round_is_built():
    """MRTR-C6: the answers of a round are the ones given when it was built; a caller that
    reuses its answer dict (a form widget's value) must not change a later resend.

    Kills: the ``copy.deepcopy`` of the answers dropped in ``_check_answers``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    first = call.first_request()
    call.receive(asking(first, {"k": FORM}))
    answer = {"action": "accept", "content": {"name": "Ann"}}
    call.retry_request({"k": answer})
    answer["content"]["name"] = "Bob"
    assert call.resend_request()["params"]["inputResponses"] == {"k": ACCEPT}


def test_mrtr_c6_sampling_answers_go_out_with_wire_names():
    """MRTR-C6 / SAMP-1: a ``CreateMessageResult`` answer is sent as the wire's
    ``CreateMessageResult`` (``stopReason``), whatever model object the caller used.

    Kills: ``by_alias=True`` turned into ``False`` in ``answer_to_wire``.
    """
    call = MrtrCall.tool(RequestFactory(capabilities={"sampling": {}}), "t")
    first = call.first_request()
    call.receive(asking(first, {"s": SAMPLE}))
    answer = CreateMessageResult(
        role="assistant", content=TextContent(text="hi"), model="m", stop_reason="endTurn"
    )
    sent = call.retry_request({"s": answer})["params"]["inputResponses"]["s"]
    assert sent["stopReason"] == "endTurn" and "stop_reason" not in sent
    json.dumps(sent)


def test_mrtr_c3_a_round_is_sent_once_then_it_waits_for_its_response():
    """MRTR-C3 / MRTR-C4: after a retry is built the call waits for its response; it cannot
    build another retry from the same answers meanwhile, nor a first request twice, nor take
    a response when none is awaited, nor resend before anything was sent.

    Kills: the status check dropped from ``input_required`` (or its ``and`` made ``or``);
    the "already called", "nothing to resend" and "no request is awaiting" raises removed.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    with pytest.raises(RuntimeError, match="nothing to resend"):
        call.resend_request()
    first = call.first_request()
    with pytest.raises(RuntimeError, match="already called"):
        call.first_request()
    call.receive(asking(first, {"k": FORM}))
    with pytest.raises(RuntimeError, match="no request is awaiting"):
        call.receive(asking(first, {"k": FORM}))
    retry = call.retry_request({"k": ACCEPT})
    assert call.input_required is None
    with pytest.raises(RuntimeError, match="nothing to retry"):
        call.retry_request({"k": ACCEPT})
    call.receive(done(retry))
    assert call.is_complete and call.rounds == 2


def test_mrtr_c7_state_only_backoff_defaults_to_50_ms_doubling_up_to_2_s():
    """MRTR-C7 (KIT numbers): without arguments the backoff after state-only results is
    0.05 s, 0.1 s, 0.2 s ... and never more than 2 s.

    Kills: the 0.05 s base or the 2 s cap changed.
    """
    assert [state_only_delay(n) for n in (1, 2, 3)] == [0.05, 0.1, 0.2]
    assert state_only_delay(7) == 2.0 and state_only_delay(50) == 2.0


# --- version negotiation ---------------------------------------------------------------------


def version_error(supported) -> McpRemoteError:
    return McpRemoteError(-32022, "Unsupported protocol version", {"supported": supported})


def test_ver_2_choose_a_mutually_supported_version():
    """VER-2: the first of our versions that the server lists."""
    ours = ("2027-01-01", "2026-07-28")
    assert choose_version(version_error(["2025-11-25", "2026-07-28"]), ours) == "2026-07-28"
    assert choose_version(version_error(["2026-07-28"]), ("2026-07-28",)) == "2026-07-28"


def test_ver_2_no_mutual_version_is_reported():
    """VER-2: 'or reports an error if none fits'."""
    with pytest.raises(NoMutualVersion):
        choose_version(version_error(["2025-11-25"]), ("2026-07-28",))
    with pytest.raises(ProtocolViolation):
        choose_version(McpRemoteError(-32022, "x", {"requested": "y"}), ("2026-07-28",))


def test_err_1_ver_2_a_supported_list_with_a_non_string_is_a_protocol_violation():
    """ERR-1 / VER-2: ``data.supported`` of -32022 is a list of strings; one that is not is a
    protocol violation, and an error that is not -32022 is not a version error at all.

    Kills: the "every entry is a string" half of the check dropped; the "not an
    UnsupportedProtocolVersion error" raise removed.
    """
    bad = McpRemoteError(-32022, "Unsupported", {"supported": [PROTOCOL_VERSION, 2025]})
    with pytest.raises(ProtocolViolation):
        choose_version(bad, [PROTOCOL_VERSION])
    other = McpRemoteError(-32602, "Invalid params", {"supported": [PROTOCOL_VERSION]})
    with pytest.raises(ValueError, match="not an UnsupportedProtocolVersion"):
        choose_version(other, [PROTOCOL_VERSION])


def test_ver_2_the_factory_keeps_its_own_versions_and_says_which_it_chose():
    """VER-2: the versions a client speaks are fixed when it is built (a list passed in and
    changed later changes nothing); ``negotiate`` returns the version it switched to.

    Kills: ``tuple(supported_versions)`` unwrapped; ``negotiate`` returning None.
    """
    ours = ["2027-01-01", PROTOCOL_VERSION]
    factory = RequestFactory(protocol_version="2027-01-01", supported_versions=ours)
    ours.clear()
    assert factory.supported_versions == ("2027-01-01", PROTOCOL_VERSION)
    error = McpRemoteError(-32022, "no", {"supported": [PROTOCOL_VERSION]})
    assert factory.negotiate(error) == PROTOCOL_VERSION == factory.protocol_version


# --- issue 8: request bytes (what a caching client keeps: test_client_cache.py) ---------------


def test_core_1_mrtr_c2_request_bytes_are_utf8_and_echo_a_lone_surrogate_exactly():
    """CORE-1 / MRTR-C2: a body is UTF-8 JSON; non-ASCII text goes as UTF-8, and a received
    state holding a lone surrogate goes back as the same escape (json.loads gives the very
    string back), never as a bare UnicodeEncodeError."""
    f = factory()
    plain = f.request("tools/call", {"name": "café"})
    assert "café".encode() in encode_request(plain)
    odd = "tok\ud800en"
    call, _first = started(irr({"k": FORM}, odd))
    body = encode_request(call.retry_request({"k": ACCEPT}))
    body.decode("utf-8")
    assert json.loads(body)["params"]["requestState"] == odd


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), b"bytes", {1, 2}])
def test_core_1_a_request_json_cannot_carry_is_a_clear_client_error(bad):
    """CORE-1: NaN/Infinity would go out as non-JSON tokens; the client refuses instead."""
    request = factory().request("tools/call", {"name": "t", "arguments": {"x": bad}})
    with pytest.raises(NotJson, match="tools/call"):
        encode_request(request)


# --- the call's state machine: one table (client/transitions.py) ------------------------------

# The life of a call as the rules read, written out apart from the code: (state, event) -> next.
LIFE_OF_A_CALL = {
    (CallStatus.NEW, Event.FIRST_REQUEST): CallStatus.AWAITING,  # MRTR-C5, CORE-3
    (CallStatus.AWAITING, Event.RESPONSE): CallStatus.AWAITING,  # CORE-4
    (CallStatus.AWAITING, Event.UNSUPPORTED_VERSION): CallStatus.AWAITING,  # VER-2
    (CallStatus.AWAITING, Event.ERROR): CallStatus.FAILED,  # ERR-4, RT-3, MRTR-R3, MRTR-S6
    (CallStatus.AWAITING, Event.COMPLETE): CallStatus.COMPLETE,  # RT-2
    (CallStatus.AWAITING, Event.INPUT_REQUIRED): CallStatus.INPUT_REQUIRED,  # MRTR-C1
    (CallStatus.INPUT_REQUIRED, Event.RETRY): CallStatus.AWAITING,  # MRTR-C1..C3, MRTR-C5
    (CallStatus.AWAITING, Event.RESEND): CallStatus.AWAITING,  # HTTP-26, HTTP-14
    (CallStatus.FAILED, Event.RESEND): CallStatus.AWAITING,  # HTTP-26
}
ALL_PAIRS = [(status, event) for status in CallStatus for event in Event]


def test_mrtr_c1_c3_the_call_moves_by_exactly_the_table_of_its_rules():
    """MRTR-C1 / MRTR-C3 / VER-2 / HTTP-26: the transition table is the life of a call and
    nothing else: round 1, a response read, a version resend, an error, a result, the input
    the server asks for, the retry with a new id, the same round resent. COMPLETE is final."""
    assert TRANSITIONS == LIFE_OF_A_CALL
    for (status, event), after in LIFE_OF_A_CALL.items():
        assert next_status(status, event) is after


@pytest.mark.parametrize(
    ("status", "event"), [pair for pair in ALL_PAIRS if pair not in LIFE_OF_A_CALL]
)
def test_mrtr_c3_an_event_the_table_does_not_list_is_an_illegal_transition(status, event):
    """MRTR-C3 / MRTR-C7: a pair missing from the table raises ``IllegalTransition`` (a
    RuntimeError, not an McpClientError: the driver's bug, not the server's), naming what was
    tried and the call's state, so no round is sent twice and a finished call sends nothing."""
    with pytest.raises(IllegalTransition) as caught:
        next_status(status, event)
    error = caught.value
    assert isinstance(error, RuntimeError) and not isinstance(error, McpClientError)
    assert (error.status, error.event) == (status, event)
    words = {
        Event.FIRST_REQUEST: "first_request() was already called for this call",
        Event.RESPONSE: f"no request is awaiting a response: the call is {status}",
        Event.RETRY: f"nothing to retry: the call is {status.value}",
        Event.RESEND: f"nothing to resend: the call is {status.value}",
    }
    expected = words.get(event, f"{event.name} cannot happen to a call that is {status.value}")
    assert str(error) == expected


def test_mrtr_c3_c5_a_call_walks_every_row_of_the_table():
    """MRTR-C3 / MRTR-C5 / VER-2 / HTTP-26: one call driven through every transition the
    table has; its status after each is the table's, and every request has a new id."""
    call = MrtrCall.tool(factory(), "book", {"party": 4})
    assert call.status is CallStatus.NEW
    first = call.first_request()  # NEW -FIRST_REQUEST-> AWAITING
    assert call.status is CallStatus.AWAITING
    again = call.resend_request()  # AWAITING -RESEND-> AWAITING (HTTP-26)
    assert call.status is CallStatus.AWAITING and call.rounds == 1
    step = call.receive(reply(again, irr({"k": FORM})))  # -> INPUT_REQUIRED (MRTR-C1)
    assert call.status is CallStatus.INPUT_REQUIRED and isinstance(step, AnswerThese)
    retry = call.retry_request({"k": ACCEPT})  # INPUT_REQUIRED -RETRY-> AWAITING
    assert call.status is CallStatus.AWAITING and call.rounds == 2
    version = {"code": -32022, "message": "no", "data": {"supported": ["2026-07-28"]}}
    step = call.receive({"jsonrpc": "2.0", "id": retry["id"], "error": version})  # VER-2
    assert call.status is CallStatus.AWAITING and isinstance(step, Resend)
    resent = step.request
    with pytest.raises(McpRemoteError):  # a second -32022: AWAITING -ERROR-> FAILED
        call.receive({"jsonrpc": "2.0", "id": resent["id"], "error": version})
    assert call.status is CallStatus.FAILED and call.step is None
    last = call.resend_request()  # FAILED -RESEND-> AWAITING
    assert call.status is CallStatus.AWAITING and call.rounds == 2
    step = call.receive(reply(last, {"content": []}))  # AWAITING -COMPLETE-> COMPLETE (RT-2)
    assert call.status is CallStatus.COMPLETE and isinstance(step, Done)
    ids = [r["id"] for r in (first, again, retry, resent, last)]
    assert len(set(ids)) == len(ids)
    for action in (
        call.first_request,
        call.resend_request,
        lambda: call.retry_request({}),
        lambda: call.receive(reply(last, {"content": []})),
    ):
        with pytest.raises(IllegalTransition):
            action()
    assert call.status is CallStatus.COMPLETE


def test_mrtr_c7_a_transition_whose_work_fails_leaves_the_state_as_it_was():
    """MRTR-C7 / MRTR-C6 / CORE-10: a retry refused for its answers or for the round limit,
    and a first request whose _meta cannot be built, change nothing: the call can still be
    answered (or fixed) and sent."""
    call, _ = started(irr({"k": FORM}), max_rounds=2)
    with pytest.raises(InvalidAnswers):
        call.retry_request({})
    assert call.status is CallStatus.INPUT_REQUIRED and call.rounds == 1
    retry = call.retry_request({"k": ACCEPT})
    call.receive(reply(retry, irr({"k": FORM})))
    with pytest.raises(TooManyRounds):
        call.retry_request({"k": ACCEPT})
    assert call.status is CallStatus.INPUT_REQUIRED and call.rounds == 2
    broken = MrtrCall.tool(factory(), "book", meta={META_PROTOCOL_VERSION: "1999-01-01"})
    with pytest.raises(ValueError, match="CORE-10"):
        broken.first_request()
    assert broken.status is CallStatus.NEW


def test_mrtr_c3_a_response_with_the_wrong_id_leaves_the_call_waiting():
    """CORE-4 / MRTR-C3: a response that echoes another id is a protocol violation, but the
    request is still out: the call keeps waiting for its own response."""
    call = MrtrCall.tool(factory(), "book")
    first = call.first_request()
    with pytest.raises(ProtocolViolation):
        call.receive({"jsonrpc": "2.0", "id": first["id"] + 100, "result": {}})
    assert call.status is CallStatus.AWAITING
    assert isinstance(call.receive(reply(first, {"content": []})), Done)
