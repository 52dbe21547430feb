"""The handler's form helper, ``ctx.form(key, message, schema, state=...)`` (``server.context``).

A handler reads a form answer and asks (again) through one ``FormAnswer``. Each outcome of a
round is checked here: no answer (ask, MRTR-E4), an accept that does not fit the form (ask
again, saying what was wrong: ELIC-14, MRTR-E4), decline and cancel (ELIC-6, the handler
decides), a good answer (only the form's fields, typed: ELIC-14), a malformed answer (-32602,
MRTR-E1/E2), and that ``ask`` carries exactly the state the handler chose (MRTR-S3).
"""

from __future__ import annotations

from typing import Any

import pytest

from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    RESULT_INPUT_REQUIRED,
)
from mrtr_kit.protocol.elicitation import SchemaOutsideSubset
from mrtr_kit.protocol.errors import McpError
from mrtr_kit.protocol.models import ElicitRequestFormParams, RequestMeta
from mrtr_kit.server import InputRequired, McpServer, RequestContext
from mrtr_kit.server.context import FormAnswer
from tests.helpers import error, request, result, run

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "party": {"type": "integer", "minimum": 1, "maximum": 12},
        "when": {"type": "string", "format": "date"},
        "note": {"type": "string"},
    },
    "required": ["party", "when"],
}
MESSAGE = "How many people, and when?"
STATE = {"step": "details"}


def context(answers: dict[str, Any]) -> RequestContext:
    meta = RequestMeta.model_validate(
        {
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
        }
    )
    return RequestContext("tools/call", "t", {}, meta, None, answers, None)


def read(answer: Any = None, *, key: str = "details", state: Any = STATE) -> FormAnswer:
    answers = {} if answer is None else {key: answer}
    return context(answers).form("details", MESSAGE, FORM, state=state)


def asked(ask: InputRequired) -> tuple[list[str], str, dict[str, Any] | None]:
    """(keys asked, the message under "details", the state) of an ``ask()``."""
    params = ask.requests["details"].params
    assert isinstance(params, ElicitRequestFormParams)
    assert params.requested_schema == FORM  # the same form on every ask
    return list(ask.requests), params.message, ask.state


def outcome(answer: FormAnswer) -> list[str]:
    flags = ("needs_asking", "accepted", "declined", "cancelled")
    return [flag for flag in flags if getattr(answer, flag)]


def test_mrtr_e4_no_answer_yet_needs_asking_and_ask_asks_the_question_with_the_state():
    answer = read()
    assert outcome(answer) == ["needs_asking"] and answer.action is None
    assert answer.content == {} and answer.problems == {}
    assert asked(answer.ask()) == (["details"], MESSAGE, STATE)


def test_mrtr_e4_an_answer_under_another_key_is_no_answer():
    answer = read({"action": "accept", "content": {"party": 2, "when": "2026-09-01"}}, key="x")
    assert outcome(answer) == ["needs_asking"]
    assert asked(answer.ask()) == (["details"], MESSAGE, STATE)


@pytest.mark.parametrize(
    ("content", "problems"),
    [
        (
            {"party": 20, "when": "soon"},
            {"party": "must be at most 12", "when": "must be a date such as 2026-09-01"},
        ),
        ({"party": "2", "when": "2026-09-01"}, {"party": "must be a number"}),
        ({"when": "2026-09-01"}, {"party": "is required"}),
        (None, {"party": "is required", "when": "is required"}),  # accept without content
    ],
)
def test_elic_14_mrtr_e4_an_accept_that_does_not_fit_is_asked_again_saying_why(content, problems):
    wire: dict[str, Any] = {"action": "accept"}
    if content is not None:
        wire["content"] = content
    answer = read(wire)
    assert outcome(answer) == ["needs_asking"] and answer.action == "accept"
    assert answer.problems == problems
    assert answer.content == {}  # nothing of an answer that does not fit may be acted on
    why = "; ".join(f"{name} {problem}" for name, problem in problems.items())
    keys, message, state = asked(answer.ask())
    assert (keys, state) == (["details"], STATE)
    assert message == f"Please check your answer: {why}. {MESSAGE}"


def test_mrtr_e4_ask_puts_what_was_wrong_then_the_reason_before_the_message():
    answer = read({"action": "accept", "content": {"party": 0, "when": "2026-09-01"}})
    _, message, _ = asked(answer.ask("We need a party size."))
    assert message == (
        f"Please check your answer: party must be at least 1. We need a party size. {MESSAGE}"
    )


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_elic_6_decline_and_cancel_are_answers_the_handler_decides_on(action):
    answer = read({"action": action})
    assert outcome(answer) == ["declined" if action == "decline" else "cancelled"]
    assert answer.action == action and answer.content == {} and answer.problems == {}
    # Asking again is the handler's choice; then the message says only what it adds.
    assert asked(answer.ask())[1] == MESSAGE
    assert asked(answer.ask("It is needed to book."))[1] == f"It is needed to book. {MESSAGE}"


def test_elic_14_a_good_answer_gives_only_the_forms_fields_typed():
    answer = read(
        {"action": "accept", "content": {"party": 3.0, "when": "2026-09-01", "extra": "x"}}
    )
    assert outcome(answer) == ["accepted"]
    assert answer.content == {"party": 3, "when": "2026-09-01"}
    assert type(answer.content["party"]) is int  # JSON's 3.0 is the integer 3


@pytest.mark.parametrize("bad", [12345, {"action": "maybe"}, {"content": {"party": 2}}])
def test_mrtr_e1_e2_a_malformed_answer_is_an_invalid_params_error_not_a_reask(bad):
    with pytest.raises(McpError) as info:
        read(bad)
    assert info.value.code == -32602 and "inputResponses['details']" in str(info.value)


def test_mrtr_s3_ask_carries_the_state_the_handler_chose():
    assert read(state=None).ask().state is None  # no requestState at all
    assert read(state={}).ask().state == {}  # an (empty) requestState is issued
    carried = {"start": "2026-09-01", "nights": 3}
    assert read(state=carried).ask().state == carried


def test_elic_5_a_form_outside_the_subset_fails_where_it_is_written():
    nested = {"type": "object", "properties": {"a": {"type": "object"}}}
    with pytest.raises(SchemaOutsideSubset):
        context({}).form("a", "?", nested)


# -- through the core: what a client sees, round by round ----------------------------------------


def booking_like_server() -> McpServer:
    server = McpServer("form-answer-test", state_key=b"f" * 32)

    @server.tool(description="Asks details, carrying a state; answers with what it read.")
    def book(ctx: RequestContext) -> Any:
        state = ctx.state or {"round": 1}
        details = ctx.form("details", MESSAGE, FORM, state={"round": state["round"] + 1})
        if details.needs_asking:
            return details.ask()
        if not details.accepted:
            return f"no booking ({details.action})"
        return f"{details.content['party']} on {details.content['when']}, round {state['round']}"

    return server


def call(server: McpServer, **params: Any) -> Any:
    body = {"name": "book", "arguments": {}, **params}
    return run(server, request("tools/call", body, capabilities={"elicitation": {"form": {}}}))


def test_mrtr_e4_elic_14_every_outcome_on_the_wire():
    server = booking_like_server()
    first = result(call(server))
    assert first["resultType"] == RESULT_INPUT_REQUIRED and first["requestState"]
    assert first["inputRequests"]["details"]["params"]["message"] == MESSAGE

    bad = {"details": {"action": "accept", "content": {"party": 13, "when": "2026-09-01"}}}
    again = result(call(server, inputResponses=bad, requestState=first["requestState"]))
    assert again["resultType"] == RESULT_INPUT_REQUIRED
    message = again["inputRequests"]["details"]["params"]["message"]
    assert message == f"Please check your answer: party must be at most 12. {MESSAGE}"

    good = {"details": {"action": "accept", "content": {"party": 4, "when": "2026-09-01"}}}
    done = result(call(server, inputResponses=good, requestState=again["requestState"]))
    assert done["content"][0]["text"] == "4 on 2026-09-01, round 3"  # the state went forward

    state = first["requestState"]  # answers count only on a retry of the round that asked
    declined = {"details": {"action": "decline"}}
    assert result(call(server, inputResponses=declined, requestState=state))["content"][0][
        "text"
    ] == ("no booking (decline)")
    maybe = {"details": {"action": "maybe"}}
    assert error(call(server, inputResponses=maybe, requestState=state))["code"] == -32602
