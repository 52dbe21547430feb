"""The sans-IO step API of ``client/call.py``: ``receive(response)`` says what to do next.

Every client rule is decided there, once: a driver (the httpx session, the Jupyter flow, the
loop below) only sends what it is given and acts on the step. The first tests run such a loop
against the server core in this process; the others pin each step on plain dicts. A client
that reuses an id, drops or alters the ``requestState`` or sends part of the answers fails
them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from mrtr_kit.client import (
    AnswerThese,
    CallStatus,
    Done,
    ElicitResult,
    GiveUp,
    InputDeclined,
    InvalidAnswers,
    McpRemoteError,
    MrtrCall,
    NoMutualVersion,
    ProtocolViolation,
    Question,
    RequestFactory,
    Resend,
    RetryStateOnly,
    Step,
    TooManyRounds,
    client_capabilities,
)
from mrtr_kit.client.call import PlainRequest
from mrtr_kit.client.results import check_response_id
from mrtr_kit.protocol.constants import META_PROTOCOL_VERSION, META_SERVER_INFO, PROTOCOL_VERSION
from mrtr_kit.server import McpServer
from mrtr_kit.server.context import elicit_form

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOUR = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}
FORM = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": NAME}}
SAMPLE = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10}}
ACCEPT = {"action": "accept", "content": {"name": "Ann"}}
SERVER_INFO = {"name": "steps-server", "version": "1"}


def survey_server() -> McpServer:
    """Round 1 asks two questions; rounds 2 and 3 are state-only; round 4 answers. A round
    that lacks an answer asks again (MRTR-E4); the state carries everything asked so far."""
    s = McpServer("steps-server", "1", state_key=b"s" * 32)

    @s.tool(description="Two questions, then two state-only rounds.")
    def survey(ctx: Any) -> Any:
        state = ctx.state
        ask = {"name": elicit_form("Name?", NAME), "colour": elicit_form("Colour?", COLOUR)}
        if state is None:
            return ctx.input_required(ask, {"step": 1})
        if state["step"] == 1:
            name, colour = ctx.elicitation("name"), ctx.elicitation("colour")
            if name is None or colour is None:
                return ctx.input_required(ask, state)
            who = {"name": name.content["name"], "colour": colour.content["colour"]}
            return ctx.input_required(state={"step": 2, **who})
        if state["step"] == 2:
            return ctx.input_required(state={**state, "step": 3})
        return f"{state['name']} likes {state['colour']}"

    return s


def factory() -> RequestFactory:
    return RequestFactory(capabilities=client_capabilities(form=True, sampling=True))


def answer_all(step: AnswerThese) -> dict[str, Any]:
    values = {"name": {"name": "Ann"}, "colour": {"colour": "teal"}}
    return {q.key: ElicitResult(action="accept", content=values[q.key]) for q in step.questions}


async def drive(
    call: MrtrCall, server: McpServer, answer: Callable[[AnswerThese], dict[str, Any]]
) -> tuple[Done, list[Step], list[dict[str, Any]], list[dict[str, Any]]]:
    """The whole client loop: send, get the step, act. Nothing else decides anything."""
    steps: list[Step] = []
    sent: list[dict[str, Any]] = []
    received: list[dict[str, Any]] = []

    async def exchange(request: dict[str, Any]) -> Step:
        sent.append(request)
        response = (await server.handle(request)).body
        assert response is not None
        received.append(response)
        steps.append(call.receive(response))
        return steps[-1]

    step = await exchange(call.first_request())
    while not isinstance(step, Done):
        if isinstance(step, AnswerThese):
            step = await exchange(call.retry_request(answer(step)))
        elif isinstance(step, RetryStateOnly):
            step = await exchange(call.retry_request())
        elif isinstance(step, Resend):
            step = await exchange(step.request)
        else:
            raise step.error
    return step, steps, sent, received


def test_mrtr_c1_c2_c3_c6_a_loop_over_the_steps_finishes_a_four_round_call():
    """MRTR-C1 / MRTR-C2 / MRTR-C3 / MRTR-C6 / CORE-3: the steps lead a plain loop through
    answers, two state-only rounds and the result; every request has a new id, carries the
    very requestState received last and, after a question, an answer for each key."""
    call = MrtrCall.tool(factory(), "survey", state_only_backoff_s=0.25)
    done, steps, sent, received = asyncio.run(drive(call, survey_server(), answer_all))
    assert done.result["content"][0]["text"] == "Ann likes teal"
    assert [type(s) for s in steps] == [AnswerThese, RetryStateOnly, RetryStateOnly, Done]
    assert [s.delay_s for s in steps if isinstance(s, RetryStateOnly)] == [0.25, 0.5]
    assert len({r["id"] for r in sent}) == 4 and call.rounds == 4
    for before, retry in zip(received[:-1], sent[1:], strict=True):
        assert retry["params"]["requestState"] is before["result"]["requestState"]
    assert set(sent[1]["params"]["inputResponses"]) == {"name", "colour"}
    assert all("inputResponses" not in r["params"] for r in sent[2:])
    assert all(r["params"]["name"] == "survey" for r in sent)


def test_mrtr_c1_c6_a_partial_answer_set_is_refused_before_anything_is_sent():
    """MRTR-C1 / MRTR-C6: a driver that answers only some questions gets no request to send."""
    call = MrtrCall.tool(factory(), "survey")

    def first_only(step: AnswerThese) -> dict[str, Any]:
        return dict(list(answer_all(step).items())[:1])

    with pytest.raises(InvalidAnswers) as info:
        asyncio.run(drive(call, survey_server(), first_only))
    assert info.value.missing == ["colour"] and call.rounds == 1
    assert call.status is CallStatus.INPUT_REQUIRED


def test_mrtr_c1_answer_these_asks_every_question_with_who_is_asking():
    """MRTR-C1 / ELIC-15: ``AnswerThese`` lists every input request in the server's order,
    each with its context: key, method, target, the round that asked, serverInfo."""
    call = MrtrCall.tool(factory(), "book", {"party": 2})
    first = call.first_request()
    result = {
        "resultType": "input_required",
        "inputRequests": {"b": FORM, "a": SAMPLE},
        "_meta": {META_SERVER_INFO: SERVER_INFO},
    }
    step = call.receive({"jsonrpc": "2.0", "id": first["id"], "result": result})
    assert isinstance(step, AnswerThese) and step is call.step
    assert [q.key for q in step.questions] == ["b", "a"]
    assert step.requests == {"b": FORM, "a": SAMPLE}
    question = step.questions[0]
    assert isinstance(question, Question)
    ctx = question.context
    assert (ctx.key, ctx.method, ctx.target, ctx.round) == ("b", "tools/call", "book", 1)
    assert ctx.server_info == SERVER_INFO


# --- each step on plain dicts ----------------------------------------------------------------


def reply(request: dict, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def asking(request: dict, state: str | None = "S") -> dict:
    result: dict = {"resultType": "input_required", "inputRequests": {"k": FORM}}
    if state is not None:
        result["requestState"] = state
    return reply(request, result)


def state_only(request: dict, state: str = "S") -> dict:
    return reply(request, {"resultType": "input_required", "requestState": state})


def version_error(request: dict, supported: list[str]) -> dict:
    error = {"code": -32022, "message": "Unsupported", "data": {"supported": supported}}
    return {"jsonrpc": "2.0", "id": request["id"], "error": error}


def test_rt_2_mrtr_c9_done_says_whether_a_cache_may_keep_the_result():
    """RT-2 / MRTR-C9: no resultType is complete: ``Done``. A plain resources/read result
    may be cached; the result of a retry (it carried answers and state) may not."""
    plain = MrtrCall.resource(factory(), "kit://a")
    step = plain.receive(reply(plain.first_request(), {"contents": []}))
    assert step == Done({"contents": []}, cacheable=True) and plain.is_complete
    guarded = MrtrCall.resource(factory(), "kit://b")
    guarded.receive(asking(guarded.first_request()))
    step = guarded.receive(reply(guarded.retry_request({"k": ACCEPT}), {"contents": []}))
    assert isinstance(step, Done) and step.cacheable is False
    tool = MrtrCall.tool(factory(), "t")
    assert tool.receive(reply(tool.first_request(), {"content": []})) == Done({"content": []})


def test_mrtr_c7_state_only_steps_back_off_and_a_question_resets_the_pause():
    """MRTR-C1 / MRTR-C7: each state-only result in a row doubles the pause (capped at 2 s);
    a result with questions starts the count again."""
    call = MrtrCall.tool(factory(), "t", max_rounds=20, state_only_backoff_s=0.5)
    request = call.first_request()
    delays = []
    for _ in range(4):
        step = call.receive(state_only(request))
        assert isinstance(step, RetryStateOnly)
        delays.append(step.delay_s)
        request = call.retry_request()
    assert delays == [0.5, 1.0, 2.0, 2.0]
    assert isinstance(call.receive(asking(request)), AnswerThese)
    step = call.receive(state_only(call.retry_request({"k": ACCEPT})))
    assert step == RetryStateOnly(0.5)


@pytest.mark.parametrize("last", [asking, state_only], ids=["questions", "state-only"])
def test_mrtr_c7_at_the_round_limit_the_step_is_give_up(last):
    """MRTR-C7: when the last allowed round is answered with input_required the step is
    ``GiveUp`` (nobody is asked a question whose answer would never be sent), and building
    another round still raises ``TooManyRounds``."""
    call = MrtrCall.tool(factory(), "t", max_rounds=2)
    call.receive(asking(call.first_request()))
    step = call.receive(last(call.retry_request({"k": ACCEPT})))
    assert isinstance(step, GiveUp) and isinstance(step.error, TooManyRounds)
    assert call.input_required is not None  # what the server asked is still there to see
    with pytest.raises(TooManyRounds):
        call.retry_request({"k": ACCEPT} if last is asking else None)


def test_ver_2_resend_is_the_same_round_under_a_fresh_id_and_a_supported_version():
    """VER-2 / MRTR-C2 / MRTR-C3: after -32022 the step is ``Resend``: the same round (its
    answers, its exact state) under a new id, with the first of our versions the server
    lists, which every later request keeps. It is not a new round."""
    f = RequestFactory(
        protocol_version="2027-01-01", supported_versions=("2027-01-01", "2026-07-28")
    )
    call = MrtrCall.tool(f, "t")
    call.receive(asking(call.first_request(), state="STATE"))
    retry = call.retry_request({"k": ACCEPT})
    step = call.receive(version_error(retry, ["2025-11-25", "2026-07-28"]))
    assert isinstance(step, Resend) and call.rounds == 2
    again = step.request
    assert again["id"] != retry["id"]
    assert again["params"]["_meta"][META_PROTOCOL_VERSION] == "2026-07-28"
    assert again["params"]["requestState"] is retry["params"]["requestState"]
    assert again["params"]["inputResponses"] == retry["params"]["inputResponses"]
    assert f.protocol_version == "2026-07-28"
    assert isinstance(call.receive(reply(again, {"content": []})), Done)


def test_ver_2_a_second_version_error_in_one_round_is_the_servers_error():
    """VER-2: "resend once": a -32022 to the resend is raised, not resent again; the next
    round may negotiate anew."""
    call = MrtrCall.tool(factory(), "t")
    step = call.receive(version_error(call.first_request(), ["2026-07-28"]))
    assert isinstance(step, Resend)
    with pytest.raises(McpRemoteError) as info:
        call.receive(version_error(step.request, ["2026-07-28"]))
    assert info.value.code == -32022 and call.status is CallStatus.FAILED
    assert call.step is None


def test_ver_2_no_mutual_version_fails_the_call():
    """VER-2: no version in common: ``NoMutualVersion``, nothing to resend."""
    call = MrtrCall.tool(factory(), "t")
    with pytest.raises(NoMutualVersion):
        call.receive(version_error(call.first_request(), ["2025-11-25"]))
    assert call.status is CallStatus.FAILED and call.step is None


def test_core_4_a_response_to_another_request_is_refused_and_changes_nothing():
    """CORE-4 / MRTR-C3: the response must echo the id of the request it answers; a stale
    one (the previous round's id, as a client reusing ids would see) is refused."""
    call = MrtrCall.tool(factory(), "t")
    first = call.first_request()
    call.receive(asking(first))
    call.retry_request({"k": ACCEPT})
    with pytest.raises(ProtocolViolation, match="does not match"):
        call.receive(reply(first, {"content": []}))
    assert call.status is CallStatus.AWAITING
    check_response_id(7, {"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}})
    with pytest.raises(ProtocolViolation):
        check_response_id(7, {"jsonrpc": "2.0", "id": "7", "result": {}})


def test_mrtr_c8_refusing_sampling_ends_the_call_but_an_elicitation_is_declined():
    """MRTR-C8: no answer to sampling (or roots) means no retry: ``InputDeclined``; an
    elicitation has decline/cancel answers, so giving none is ``InvalidAnswers``."""
    call = MrtrCall.tool(factory(), "t")
    first = call.first_request()
    result = {"resultType": "input_required", "inputRequests": {"llm": SAMPLE, "k": FORM}}
    call.receive(reply(first, result))
    refused = call.refuse("llm")
    assert isinstance(refused, InputDeclined) and refused.key == "llm"
    assert isinstance(call.refuse("k"), InvalidAnswers)
    with pytest.raises(RuntimeError):
        call.refuse("other")
    assert call.status is CallStatus.INPUT_REQUIRED  # nothing sent; it may still be answered


def test_mrtr_r3_rt_3_plain_requests_are_one_round_and_negotiate_like_calls():
    """MRTR-R3 / RT-3 / VER-2: a plain request ends in ``Done`` (cacheable when the method
    is), resends once after -32022, and refuses input_required and unknown result types."""
    with pytest.raises(ValueError):
        PlainRequest(factory(), "tools/call", {"name": "t"})
    listing = PlainRequest(factory(), "tools/list", {"cursor": "2"})
    first = listing.first_request()
    assert first["params"]["cursor"] == "2" and listing.rounds == 1
    step = listing.receive(version_error(first, ["2026-07-28"]))
    assert isinstance(step, Resend) and step.request["id"] != first["id"]
    assert step.request["params"]["cursor"] == "2" and listing.rounds == 1
    assert listing.receive(reply(step.request, {"tools": []})) == Done({"tools": []}, True)
    for result, rule in (
        ({"resultType": "input_required", "requestState": "s"}, "MRTR-R3"),
        ({"resultType": "task"}, "RT-3"),
    ):
        plain = PlainRequest(factory(), "tools/list")
        with pytest.raises(ProtocolViolation, match=rule):
            plain.receive(reply(plain.first_request(), result))
        assert plain.status is CallStatus.FAILED


# --- the step a call keeps (call.step, call.request) -------------------------------------------


def test_mrtr_c3_a_new_call_has_no_step_and_no_request_yet():
    """MRTR-C3: before round 1 a call has built no request and has no step to act on.

    Kills: ``self.request = {}`` or ``self._step = None`` removed from ``Exchange.__init__``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    assert call.request == {} and call.step is None
    first = call.first_request()
    assert call.request is first and call.step is None


def test_ver_2_the_resend_is_the_calls_step_and_each_round_may_negotiate_once():
    """VER-2: after -32022 ``call.step`` is the ``Resend`` (a driver that reads the step, not
    the return value, sends it too); a later round that meets -32022 again negotiates again.

    Kills: ``self._step = resend`` removed; ``self._renegotiated = False`` removed from
    ``_next_round``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    step = call.receive(version_error(call.first_request(), [PROTOCOL_VERSION]))
    assert isinstance(step, Resend) and call.step is step
    call.receive(asking(step.request))
    again = call.receive(version_error(call.retry_request({"k": ACCEPT}), [PROTOCOL_VERSION]))
    assert isinstance(again, Resend) and call.rounds == 2


def test_mrtr_c8_only_a_question_of_the_waiting_round_can_be_refused():
    """MRTR-C8: ``refuse`` names the error for a question of the round the call waits on; a
    complete call has no question left to refuse.

    Kills: ``needs is None`` dropped from the check in ``refuse``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    call.receive(reply(call.first_request(), {"resultType": "complete", "content": []}))
    with pytest.raises(RuntimeError, match="not asked"):
        call.refuse("k")
