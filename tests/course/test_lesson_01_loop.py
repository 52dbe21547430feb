"""Lesson 01's loop exercise: the learner's ``call_with_mrtr`` against the checkpoint's
scripted servers. The solution passes; each plausible mistake fails and the verdict names the
rule it breaks (MRTR-C1…C7, CORE-3, CORE-10, RT-2, RT-3; MRTR-C7 is the kit's convention, KIT).

Each mistake is the solution with one thing changed, so a test fails only for that one thing.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import lesson01_checkpoints as client_loop
import pytest

from mrtr_course.examples import lessons
from mrtr_course.messages import FORM_CAPS, meta

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "01-the-basic-flow"
SOLUTION = LESSON / "solutions" / "01_call_with_mrtr.py"


def loop_from(source: str):
    namespace: dict = {}
    exec(compile(source, str(SOLUTION), "exec"), namespace)
    return namespace["call_with_mrtr"]


def variant(*edits: tuple[str, str]):
    """The solution with each ``old`` replaced by ``new`` (each must occur exactly once)."""
    source = SOLUTION.read_text()
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return loop_from(source)


def check(loop):
    return asyncio.run(client_loop.check_call_with_mrtr(loop))


def test_the_solution_passes_and_books_a_table_on_the_kits_server():
    """The checkpoint ends with the payoff: the learner's loop on the kit's real server."""
    verdict = check(loop_from(SOLUTION.read_text()))
    assert verdict.passed, verdict
    assert "on the kit's lesson server, three rounds with sealed states: Booked Luigi's" in (
        verdict.message
    )


def test_the_stub_is_not_done():
    async def call_with_mrtr(send, answer, method, params, max_rounds=10):
        raise NotImplementedError

    verdict = check(call_with_mrtr)
    assert verdict.status == "not done"
    assert repr(verdict) == "… Not done yet: call_with_mrtr() still raises NotImplementedError."


ID = '"id": next(_ids)'
STATE = 'round_params["requestState"] = state  # exactly as received (MRTR-C2)'
KIND = 'kind = result.get("resultType", "complete")'

MISTAKES = {
    # MRTR-C3: the retry is a new request
    "reuses the id": ([(ID, '"id": 1')], "reuses id 1 of the round before", "MRTR-C3"),
    # CORE-3: ids unique among requests in flight, so not a per-call round number
    "numbers ids per call": (
        [("    for _ in range(max_rounds):", "    for n in range(max_rounds):"), (ID, '"id": n')],
        "already in use by a request still waiting",
        "CORE-3",
    ),
    # MRTR-C2: exact echo, or none
    "re-encodes the state": (
        [(STATE, 'round_params["requestState"] = state.strip()')],
        "the requestState was changed",
        "MRTR-C2",
    ),
    "re-serialises a JSON-looking state": (
        [
            (STATE, 'round_params["requestState"] = _tidy(state)'),
            (
                "_ids = itertools.count(1)",
                "_ids = itertools.count(1)\n\n\ndef _tidy(s):\n    import json\n\n"
                "    try:\n        return json.dumps(json.loads(s))\n    except ValueError:\n"
                "        return s",
            ),
        ],
        "the requestState was changed",
        "MRTR-C2",
    ),
    "drops the state": ([(STATE, "pass")], "dropped the requestState", "MRTR-C2"),
    "always sends a state": (
        [
            ("        if state is not None:\n", ""),
            (STATE, 'round_params["requestState"] = state'),
        ],
        "had no requestState, so the retry must not send one",
        "MRTR-C2",
    ),
    "keeps an older state": (
        [('state = result.get("requestState")', 'state = state or result.get("requestState")')],
        "an older requestState of this call",
        "MRTR-C2",
    ),
    # MRTR-C1 / MRTR-C6: every answer, together, before the retry; only the latest
    "sends answers one at a time": (
        [
            (
                "answers = answer(questions) if questions else None",
                "answers = dict([next(iter(answer(questions).items()))]) if questions else None",
            )
        ],
        "gather an answer for every key",
        "MRTR-C1",
    ),
    "sends old answers again": (
        [
            ("answers, state = None, None", "answers, state, old = None, None, {}"),
            (
                "answers = answer(questions) if questions else None",
                "answers = {**old, **answer(questions)} if questions else None\n"
                "        old = answers or {}",
            ),
        ],
        "which this round did not ask",
        "MRTR-C6",
    ),
    "passes the whole result to answer()": (
        [("answer(questions) if questions", "answer(result) if questions")],
        "answer() takes the result's inputRequests",
        "answer()",
    ),
    # MRTR-C7 (KIT): a round cap
    "has no round cap": (
        [("    for _ in range(max_rounds):", "    while True:")],
        "round 4 was sent",
        "MRTR-C7 (KIT)",
    ),
    "gives up a round early": (
        [("    for _ in range(max_rounds):", "    for _ in range(max_rounds - 1):")],
        "gave up after 2 round(s)",
        "MRTR-C7 (KIT)",
    ),
    # RT-2 / RT-3: reading resultType
    # Issue 19: the bare KeyError used to come without its rule.
    "treats a missing resultType as an error": (
        [(KIND, 'kind = result["resultType"]')],
        "'a result without resultType': call_with_mrtr raised KeyError: 'resultType'; a result "
        "may have no resultType, and a missing one means complete (RT-2)",
        "RT-2",
    ),
    "raises on a missing resultType": (
        [
            (
                KIND,
                'kind = result.get("resultType")\n        if kind is None:\n'
                '            raise ValueError("no resultType")',
            )
        ],
        "call_with_mrtr raised ValueError: no resultType; a result without resultType is "
        "complete (RT-2)",
        "RT-2",
    ),
    "retries when resultType is missing": (
        [(KIND, 'kind = result.get("resultType", "input_required")')],
        "no resultType, which means complete (RT-2)",
        "RT-2",
    ),
    "returns whatever is not input_required": (
        [('        if kind != "input_required":\n', '        if kind == "unheard-of":\n')],
        "resultType 'pending' is not one this client knows",
        "RT-3",
    ),
    "returns an error response": (
        [
            (
                '            raise RuntimeError(f"the server answered with an error: '
                "{response['error']}\")",
                "            return response",
            )
        ],
        "round 2 got a JSON-RPC error: raise it",
        "",
    ),
    # MRTR-C4: no state or answers carried into another call
    "keeps state from a previous call": (
        [
            ("_ids = itertools.count(1)", "_ids = itertools.count(1)\n_last = {}"),
            (
                "    answers, state = None, None",
                '    answers, state = None, _last.get("state")',
            ),
            (
                'state = result.get("requestState")',
                'state = _last["state"] = result.get("requestState")',
            ),
        ],
        "belongs to another call",
        "MRTR-C4",
    ),
    "edits the caller's params": (
        [("round_params = dict(params)", "round_params = params")],
        "changed the params it was given",
        "MRTR-C4",
    ),
    "repeats the wrong arguments": (
        [
            (
                "round_params = dict(params)",
                'round_params = dict(params, arguments={} if answers else params["arguments"])',
            )
        ],
        "params.arguments is {}",
        "MRTR-C5",
    ),
    "drops _meta on retries": (
        [
            (
                "round_params = dict(params)",
                "round_params = {k: v for k, v in params.items() if k != '_meta' or not answers}",
            )
        ],
        "every round carries the _meta",
        "CORE-10",
    ),
    "returns the response, not the result": (
        [("            return result\n", "            return response\n")],
        "return the complete result, response['result']",
        "",
    ),
    "forgets to await send": (
        [("response = await send(request)", "response = send(request)")],
        "did you forget to await send(...)?",
        "",
    ),
}


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_each_plausible_mistake_fails_naming_its_rule(mistake):
    edits, says, rule = MISTAKES[mistake]
    verdict = check(variant(*edits))
    assert verdict.status == "not yet", verdict
    assert says in verdict.message, verdict.message
    assert rule in verdict.message, verdict.message


def test_a_loop_that_swallows_exceptions_still_stops_and_is_told_why():
    """The checkpoint's stop is a BaseException: ``except Exception: continue`` cannot turn a
    broken rule into an endless loop."""

    async def call_with_mrtr(send, answer, method, params, max_rounds=10):
        while True:
            try:
                await send({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
            except Exception:
                continue

    verdict = check(call_with_mrtr)
    assert verdict.status == "not yet" and "MRTR-C3" in verdict.message, verdict


def test_a_loop_with_its_state_in_a_global_leaks_it_into_the_next_call_mrtr_c4():
    """A loop written with its state in a module global (updated on each input_required) starts
    the next call with the last call's state: the first round of that call is refused."""
    shared: dict = {}
    ids = itertools.count(1)

    async def call_with_mrtr(send, answer, method, params, max_rounds=10):
        answers = None
        for _ in range(max_rounds):
            p = dict(params)
            if answers is not None:
                p["inputResponses"] = answers
            if "state" in shared:
                p["requestState"] = shared["state"]
            response = await send(
                {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": p}
            )
            if "error" in response:
                raise RuntimeError(response["error"])
            result = response["result"]
            kind = result.get("resultType", "complete")
            if kind == "complete":
                return result
            if kind != "input_required":
                raise RuntimeError(kind)
            if "requestState" in result:
                shared["state"] = result["requestState"]
            else:
                shared.pop("state", None)
            questions = result.get("inputRequests")
            answers = answer(questions) if questions else None
        raise RuntimeError("too many rounds")

    verdict = check(call_with_mrtr)
    assert verdict.status == "not yet", verdict
    assert "the first round of a call carries requestState" in verdict.message
    assert "MRTR-C4" in verdict.message


def test_the_solution_drives_the_real_lesson_server_mrtr_c2():
    """The notebook's follow-up: the learner's loop books a table on the kit's server, three
    rounds with sealed states, through ``core_sender`` and ``answers_from``."""
    call_with_mrtr = loop_from(SOLUTION.read_text())
    answer = client_loop.answers_from(
        {"details": {"party": 4, "when": "2026-09-01"}, "confirm": {"ok": True}}
    )
    params = {
        "_meta": meta(FORM_CAPS),
        "name": "book_table",
        "arguments": {"restaurant": "Luigi's"},
    }
    send = client_loop.core_sender(lessons.build_server())
    result = asyncio.run(call_with_mrtr(send, answer, "tools/call", params))
    assert result["resultType"] == "complete"
    assert "Luigi's" in result["content"][0]["text"]
