"""Lesson 01, the client's round loop: the exercise ``call_with_mrtr`` and its checkpoint.

The learner writes the loop every MRTR client runs (one logical call, as many rounds as the
server needs) against a small interface:

    async def call_with_mrtr(send, answer, method, params, max_rounds=10) -> dict

* ``await send(request)`` sends one JSON-RPC request dict and returns its response dict;
* ``answer(input_requests)`` returns the ``inputResponses`` for one ``inputRequests`` object;
* ``params`` are the first round's params (``_meta``, ``name``, ``arguments``);
* the loop returns the complete result, and raises on an error, an unknown ``resultType`` or
  after ``max_rounds`` rounds.

``check_call_with_mrtr`` drives it against scripted servers. Each one checks every request it
receives against the client rules (MRTR-C1…C7, CORE-3, CORE-10, RT-2, RT-3) and the verdict
names the first rule broken, the scenario and the round. ``core_sender`` and ``answers_from``
let the same loop talk to a real kit server in the notebook.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.messages import FORM_CAPS, meta
from mrtr_kit.server import McpServer

Send = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Answer = Callable[[dict[str, Any]], dict[str, Any]]
Loop = Callable[..., Any]


# -- for the notebook: the learner's loop against a real server -----------------------------------


def core_sender(server: McpServer) -> Send:
    """``send`` for ``call_with_mrtr``: hands each request to the server core, no HTTP."""

    async def send(request: dict[str, Any]) -> dict[str, Any]:
        reply = await server.handle(request)
        assert reply.body is not None  # requests (with an id) always get a reply
        return reply.body

    return send


def answers_from(contents: Mapping[str, Mapping[str, Any]]) -> Answer:
    """``answer`` for ``call_with_mrtr``: accepts each form with the content given for its key,
    as a user filling it in would (``{"login": {"login": "ada"}}``)."""

    def answer(input_requests: dict[str, Any]) -> dict[str, Any]:
        return {key: {"action": "accept", "content": dict(contents[key])} for key in input_requests}

    return answer


# -- the scripted servers -------------------------------------------------------------------------


class _Broken(BaseException):
    """A rule was broken: stop the learner's loop at once.

    A BaseException, so that an ``except Exception`` in the learner's loop cannot swallow it
    and go on looping; the verdict is recorded before it is raised.
    """


def _question(message: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


def _asks(*keys: str, state: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "resultType": "input_required",
        "inputRequests": {key: _question(f"What is your {key}?") for key in keys},
    }
    if state is not None:
        result["requestState"] = state
    return result


def _state_only(state: str) -> dict[str, Any]:
    return {"resultType": "input_required", "requestState": state}


def _done(text: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


_ERROR = {"error": {"code": -32603, "message": "the booking service is down"}}


def _expected_answer(key: str, request: Any) -> dict[str, Any]:
    """What the checkpoint's ``answer`` gives for one input request: derived from its key."""
    return {"action": "accept", "content": {"value": f"my {key}"}}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 48 else text[:45] + "..."


@dataclass
class _Call:
    """One logical call the scenario expects, and what the server has seen of it."""

    name: str
    replies: list[dict[str, Any]]  # one per round: a result, or {"error": ...}
    rounds: list[dict[str, Any]] = field(default_factory=list)  # the requests received

    @property
    def finished(self) -> bool:
        return len(self.rounds) >= len(self.replies)


@dataclass
class _Server:
    """A scripted server: answers each call's rounds from its script and checks each request
    against the client rules before it answers. The first broken rule is kept in ``failure``."""

    scenario: str
    method: str
    calls: dict[str, _Call]
    max_rounds: int = 10
    rule: str = ""  # what a loop that returns instead of raising is told
    interleave: bool = False  # hold each request a moment, so concurrent calls overlap
    failure: str | None = None
    current: str | None = None  # set while calls run one after the other
    in_flight: set[Any] = field(default_factory=set)
    issued_states: dict[str, str] = field(default_factory=dict)  # state -> the call it was for
    answered: int = 0

    # The rules -----------------------------------------------------------------------------------

    def fail(self, call: _Call | None, message: str) -> _Broken:
        where = f"'{self.scenario}'"
        if call is not None:
            where += f", call '{call.name}' round {len(call.rounds) + 1}"
        if self.failure is None:
            self.failure = f"{where}: {message}"
        return _Broken(self.failure)

    def check(self, call: _Call, request: dict[str, Any]) -> None:
        params = request.get("params")
        if request.get("jsonrpc") != "2.0":
            raise self.fail(call, 'every request carries "jsonrpc": "2.0"')
        if request.get("method") != self.method:
            raise self.fail(
                call,
                f"the method is {request.get('method')!r}: every round repeats the call's method "
                f"{self.method!r} (MRTR-C5)",
            )
        request_id = request.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
            raise self.fail(call, f"the id must be a string or a number, not {request_id!r}")
        if not isinstance(params, dict):
            raise self.fail(call, "the request needs a params object")
        if not isinstance(params.get("_meta"), dict):
            raise self.fail(call, "every round carries the _meta it was given (CORE-10)")
        if request_id in self.in_flight:
            raise self.fail(
                call,
                f"id {request_id!r} is already in use by a request still waiting for its "
                "response: ids must be unique across calls too (CORE-3)",
            )
        if not call.rounds:
            self.check_first_round(call, params)
        else:
            self.check_retry(call, request, params)

    def check_first_round(self, call: _Call, params: dict[str, Any]) -> None:
        for key in ("requestState", "inputResponses"):
            if key in params:
                raise self.fail(
                    call,
                    f"the first round of a call carries {key} {_short(params[key])}, which "
                    "belongs to another call: a round's state and answers are for the retry of "
                    "that one call only (MRTR-C4)",
                )

    def check_retry(self, call: _Call, request: dict[str, Any], params: dict[str, Any]) -> None:
        previous_request = call.rounds[-1]
        previous = call.replies[len(call.rounds) - 1]
        first = call.rounds[0]["params"]
        for key in ("name", "arguments"):
            if params.get(key) != first.get(key):
                raise self.fail(
                    call,
                    f"params.{key} is {_short(params.get(key))}: a retry repeats the first "
                    f"round's {key} {_short(first.get(key))} (MRTR-C5)",
                )
        if request["id"] == previous_request["id"]:
            raise self.fail(
                call,
                f"the retry reuses id {request['id']!r} of the round before: every round is a "
                "new request with a new id (MRTR-C3)",
            )
        self.check_state(call, params, previous)
        self.check_answers(call, params, previous)

    def check_state(self, call: _Call, params: dict[str, Any], previous: dict[str, Any]) -> None:
        state = previous.get("requestState")
        if state is None:
            if "requestState" in params:
                raise self.fail(
                    call,
                    "the round before had no requestState, so the retry must not send one "
                    f"(it sent {_short(params['requestState'])}) (MRTR-C2)",
                )
            return
        if "requestState" not in params:
            raise self.fail(
                call, f"the retry dropped the requestState {_short(state)}: echo it (MRTR-C2)"
            )
        sent = params["requestState"]
        if sent == state and type(sent) is str:
            return
        owner = self.issued_states.get(sent) if isinstance(sent, str) else None
        if owner is not None and owner != call.name:
            raise self.fail(
                call,
                f"the retry carries the requestState of call '{owner}': each call echoes only "
                "its own state (MRTR-C4)",
            )
        if owner == call.name:
            raise self.fail(
                call,
                f"the retry sends back an older requestState of this call, {_short(sent)}: "
                f"echo the latest one, {_short(state)} (MRTR-C2)",
            )
        raise self.fail(
            call,
            f"the requestState was changed: received {_short(state)}, sent back "
            f"{_short(sent)}. Echo it exactly as received, byte for byte (MRTR-C2)",
        )

    def check_answers(self, call: _Call, params: dict[str, Any], previous: dict[str, Any]) -> None:
        asked = previous.get("inputRequests") or {}
        sent = params.get("inputResponses")
        if not asked:
            if sent not in (None, {}):
                raise self.fail(
                    call,
                    f"the round before asked nothing, yet the retry answers {sorted(sent)} "
                    "(MRTR-C6 note: the schema's comment, not a MUST)",
                )
            return
        if not isinstance(sent, dict):
            raise self.fail(
                call,
                f"the round before asked for {sorted(asked)}: the retry carries their answers "
                "in params.inputResponses (MRTR-C1)",
            )
        missing = sorted(set(asked) - set(sent))
        if missing:
            raise self.fail(
                call,
                f"the retry answers {sorted(sent)} but not {missing}: gather an answer for every "
                "key of inputRequests before retrying, and send them together (MRTR-C1, MRTR-C6)",
            )
        extra = sorted(set(sent) - set(asked))
        if extra:
            raise self.fail(
                call,
                f"the retry also answers {extra}, which this round did not ask: send only the "
                "answers to the latest inputRequests (MRTR-C6 note: the schema's comment, not a "
                "MUST; a server SHOULD ignore extras, MRTR-E3, but this checkpoint wants the "
                "exact set)",
            )
        for key, request in asked.items():
            if sent[key] != _expected_answer(key, request):
                raise self.fail(
                    call,
                    f"inputResponses[{key!r}] is {_short(sent[key])}, not what answer() "
                    "returned for it: send the answers answer() gives (MRTR-C1)",
                )

    # What the learner's loop talks to ------------------------------------------------------------

    def call_for(self, request: Any) -> _Call:
        if self.current is not None:  # calls one after the other: the one running now
            return self.calls[self.current]
        params = request.get("params") if isinstance(request, dict) else None
        name = params.get("name") if isinstance(params, dict) else None
        if name in self.calls:
            return self.calls[name]
        raise self.fail(None, f"a request for an unknown call {name!r} (MRTR-C5)")

    async def send(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.failure is not None:  # the loop swallowed _Broken and went on
            raise _Broken(self.failure)
        if not isinstance(request, dict):
            raise self.fail(None, f"send() takes a request dict, not {type(request).__name__}")
        request = copy.deepcopy(request)  # what was sent, whatever the loop does to it later
        call = self.call_for(request)
        if call.finished:
            raise self.fail(call, self.after_the_end(call))
        if len(call.rounds) >= self.max_rounds:
            raise self.fail(
                call,
                f"max_rounds is {self.max_rounds}, yet round {self.max_rounds + 1} was sent: "
                "stop after max_rounds rounds and raise (MRTR-C7 (KIT))",
            )
        self.check(call, request)
        self.in_flight.add(request["id"])
        try:
            if self.interleave:
                for _ in range(3):
                    await asyncio.sleep(0)
            reply = call.replies[len(call.rounds)]
            call.rounds.append(request)
            state = reply.get("requestState")
            if isinstance(state, str):
                self.issued_states[state] = call.name
        finally:
            self.in_flight.discard(request["id"])
        if "error" in reply:
            return {"jsonrpc": "2.0", "id": request["id"], "error": copy.deepcopy(reply["error"])}
        return {"jsonrpc": "2.0", "id": request["id"], "result": copy.deepcopy(reply)}

    def after_the_end(self, call: _Call) -> str:
        last = call.replies[-1]
        n = len(call.replies)
        if "error" in last:
            return f"round {n} got a JSON-RPC error: the call is over, raise it instead of retrying"
        kind = last.get("resultType")
        if kind is None:
            return (
                f"round {n}'s result has no resultType, which means complete (RT-2): return it "
                "instead of retrying"
            )
        if kind == "complete":
            return f"round {n} was complete: return its result instead of retrying"
        if kind != "input_required":
            return (
                f"round {n}'s resultType {kind!r} is not one this client knows: raise instead "
                "of retrying (RT-3)"
            )
        return "the script ran out of rounds"  # not reached: scripts end with an outcome

    def answer(self, input_requests: Any) -> dict[str, Any]:
        if self.failure is not None:
            raise _Broken(self.failure)
        if not isinstance(input_requests, dict) or not all(
            isinstance(r, dict) and "method" in r for r in input_requests.values()
        ):
            keys = sorted(input_requests) if isinstance(input_requests, dict) else None
            raise self.fail(
                None,
                "answer() takes the result's inputRequests (key -> {method, params}), not "
                f"{type(input_requests).__name__} {keys or ''}".rstrip(),
            )
        self.answered += 1
        return {key: _expected_answer(key, r) for key, r in input_requests.items()}


# -- the scenarios --------------------------------------------------------------------------------

# Sealed states are opaque strings: these look like one, with the characters a careless client
# would change (padding, "+" and "/", a space, a non-ASCII letter, a newline).
STATE_1 = "v1.eyJzdGVwIjogImRldGFpbHMifQ==.k+/Zé 9A=\n"
STATE_2 = '{"step": "confirm",  "party": 4}'
STATE_3 = "v1.c3RhdGUtb25seQ.Wq0_-x"


@dataclass(frozen=True)
class _Scenario:
    name: str
    calls: tuple[tuple[str, tuple[dict[str, Any], ...]], ...]
    outcome: str  # "return", "raise"
    rule: str  # what a wrong outcome is told
    max_rounds: int = 10
    concurrent: bool = False
    same_params: bool = False  # successive calls get the very same params object


def _scenarios() -> list[_Scenario]:
    return [
        _Scenario(
            "one question, no state",
            (("get_weather", (_asks("login"), _done("Sunny in Oslo"))),),
            "return",
            "",
        ),
        _Scenario(
            "a result without resultType",
            (("get_time", ({"content": [{"type": "text", "text": "12:00"}]},)),),
            "return",
            "a result without resultType is complete (RT-2): return it, do not raise",
        ),
        _Scenario(
            "three rounds, a new state each round",
            (
                (
                    "book_table",
                    (
                        _asks("details", state=STATE_1),
                        _asks("confirm", state=STATE_2),
                        _done("Booked"),
                    ),
                ),
            ),
            "return",
            "",
        ),
        _Scenario(
            "two questions at once",
            (("plan_trip", (_asks("dates", "room"), _done("Reserved"))),),
            "return",
            "",
        ),
        _Scenario(
            "a round with state and no question",
            (("export", (_state_only(STATE_3), _done("Exported"))),),
            "return",
            "",
        ),
        _Scenario(
            "an unknown resultType",
            (("get_weather", ({"resultType": "pending", "content": []},)),),
            "raise",
            "resultType 'pending' is not one this client knows: raise, do not return it (RT-3)",
        ),
        _Scenario(
            "an error in round 2",
            (("book_table", (_asks("details", state=STATE_1), _ERROR)),),
            "raise",
            "round 2 got a JSON-RPC error: raise it, do not return",
        ),
        _Scenario(
            "a server that never completes",
            (
                (
                    "endless",
                    tuple(_asks("again", state=f"{STATE_3}.{n}") for n in range(1, 9)),
                ),
            ),
            "raise",
            "after max_rounds rounds, raise: do not return (MRTR-C7 (KIT))",
            max_rounds=3,
        ),
        _Scenario(
            "a call after a failed call",
            (
                ("the failed call", (_asks("details", state=STATE_1), _ERROR)),
                ("the next call", (_asks("details", state=STATE_2), _done("Booked"))),
            ),
            "raise, return",
            "",
            same_params=True,
        ),
        _Scenario(
            "two calls at once",
            (
                (
                    "left",
                    (_asks("a", state="left-1"), _asks("b", state="left-2"), _done("left done")),
                ),
                (
                    "right",
                    (
                        _asks("c", state="right-1"),
                        _asks("d", state="right-2"),
                        _done("right done"),
                    ),
                ),
            ),
            "return",
            "",
            concurrent=True,
        ),
    ]


def _params(name: str) -> dict[str, Any]:
    return {"_meta": meta(FORM_CAPS), "name": name, "arguments": {"city": "Oslo", "party": 4}}


class _NotYet(Exception):
    pass


class _NotDone(Exception):
    pass


async def _run_loop(loop: Loop, server: _Server, params: dict[str, Any]) -> Any:
    outcome = loop(server.send, server.answer, server.method, params, max_rounds=server.max_rounds)
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome


def _learner_error(scenario: str, exc: BaseException, rule: str = "") -> _NotYet | _NotDone:
    """The loop raised where it should have returned: what it raised, and the rule the
    scenario checks, so a bare ``KeyError: 'resultType'`` comes with its RT-2 hint."""
    if isinstance(exc, NotImplementedError):
        return _NotDone()
    text = f"{type(exc).__name__}: {exc}"
    if "coroutine" in text:
        text += " (did you forget to await send(...)?)"
    if isinstance(exc, KeyError) and exc.args == ("resultType",):
        text += (
            "; a result may have no resultType, and a missing one means complete (RT-2): "
            'read it with result.get("resultType", "complete")'
        )
    elif rule:
        text += f"; {rule}"
    return _NotYet(f"'{scenario}': call_with_mrtr raised {text}")


async def _one(loop: Loop, server: _Server, call: _Call, params: dict[str, Any], want: str) -> None:
    """Run one call and judge its end: the final result returned, or an exception raised, as
    the script wants. A broken rule the server saw comes first."""
    try:
        returned = await _run_loop(loop, server, params)
    except _Broken:
        raise
    except Exception as exc:
        if server.failure is not None:  # the loop caught _Broken's effects some other way
            raise _Broken(server.failure) from None
        if want != "raise":
            raise _learner_error(server.scenario, exc, server.rule) from None
        endless = server.max_rounds < len(call.replies)
        if endless and len(call.rounds) < server.max_rounds:
            raise _NotYet(
                f"'{server.scenario}': call_with_mrtr gave up after {len(call.rounds)} round(s); "
                f"max_rounds={server.max_rounds} allows {server.max_rounds} (MRTR-C7 (KIT))"
            ) from None
        if not endless and not call.finished:
            raise _learner_error(server.scenario, exc) from None
        return
    if server.failure is not None:
        raise _Broken(server.failure)
    if want == "raise":
        raise _NotYet(
            f"'{server.scenario}': call_with_mrtr returned {_short(returned)}; {server.rule}"
        )
    final = call.replies[-1]
    if returned != final:
        raise _NotYet(
            f"'{server.scenario}', call '{call.name}': call_with_mrtr returned "
            f"{_short(returned)}; return the complete result, response['result'] "
            f"{_short(final)}"
        )


async def _play(loop: Loop, scenario: _Scenario) -> None:
    calls = {name: _Call(name, list(replies)) for name, replies in scenario.calls}
    server = _Server(
        scenario.name,
        "tools/call",
        calls,
        max_rounds=scenario.max_rounds,
        rule=scenario.rule,
        interleave=scenario.concurrent,
    )
    try:
        if scenario.concurrent:
            # Both calls run to their end (a broken rule stops the other at its next send), so
            # no task is left running in the learner's kernel; then the first verdict counts.
            ends = await asyncio.gather(
                *(
                    _one(loop, server, call, _params(name), "return")
                    for name, call in calls.items()
                ),
                return_exceptions=True,
            )
            for end in ends:
                if isinstance(end, BaseException):
                    raise end
            return
        shared = _params("book_table")
        wants = [w.strip() for w in scenario.outcome.split(",")]
        for (name, call), want in zip(calls.items(), wants, strict=True):
            params = shared if scenario.same_params else _params(name)
            given = copy.deepcopy(params)
            server.current = name
            await _one(loop, server, call, params, want)
            if params != given:
                raise _NotYet(
                    f"'{scenario.name}': call_with_mrtr changed the params it was given "
                    f"(now with {_short(sorted(params))}): build each round's params as a new "
                    "dict, or the next call starts with this call's answers and state (MRTR-C4)"
                )
    except _Broken:
        assert server.failure is not None
        raise _NotYet(server.failure) from None


RULES = (
    "new ids (MRTR-C3, CORE-3)",
    "same method, name and arguments (MRTR-C5) with _meta (CORE-10)",
    "requestState echoed exactly or left out (MRTR-C2)",
    "all answers at once, only the latest (MRTR-C1, MRTR-C6)",
    "resultType read right (RT-2, RT-3)",
    "a round cap (MRTR-C7 (KIT))",
    "nothing carried into another call (MRTR-C4)",
)


async def check_call_with_mrtr(call_with_mrtr: Loop) -> Checkpoint:
    """The checkpoint of the loop exercise: every scenario, in order; the first rule broken."""
    scenarios = _scenarios()
    try:
        for scenario in scenarios:
            await _play(call_with_mrtr, scenario)
    except _NotDone:
        return Checkpoint("not done", "call_with_mrtr() still raises NotImplementedError.")
    except _NotYet as exc:
        return Checkpoint("not yet", str(exc))
    booked = await _on_the_lesson_server(call_with_mrtr)
    if not booked.startswith("Booked"):
        return Checkpoint("not yet", f"the scripted servers passed, the kit's server: {booked}")
    return Checkpoint(
        "passed",
        f"{len(scenarios)} scripted servers took your loop: "
        + "; ".join(RULES)
        + f". And on the kit's lesson server, three rounds with sealed states: {booked}",
    )


async def _on_the_lesson_server(call_with_mrtr: Loop) -> str:
    """The payoff: the learner's loop books a table on the kit's real server core."""
    from mrtr_course.examples import lessons  # the examples import this package

    answer = answers_from({"details": {"party": 2, "when": "2026-10-10"}, "confirm": {"ok": True}})
    params = {
        "_meta": meta(FORM_CAPS),
        "name": "book_table",
        "arguments": {"restaurant": "Luigi's"},
    }
    return await run_your_loop(
        call_with_mrtr, core_sender(lessons.build_server()), answer, "tools/call", params
    )


async def run_your_loop(
    call_with_mrtr: Loop, send: Send, answer: Answer, method: str, params: dict[str, Any]
) -> str:
    """Run the learner's loop once for the notebook: the final result's text, or what stopped
    it (a stub not written yet is a note, not a traceback, so "Run All" goes on)."""
    try:
        outcome = call_with_mrtr(send, answer, method, params)
        result = await outcome if inspect.isawaitable(outcome) else outcome
    except NotImplementedError:
        return "call_with_mrtr() still raises NotImplementedError: write the loop above first."
    except Exception as exc:
        return f"call_with_mrtr raised {type(exc).__name__}: {exc}"
    texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
    return " ".join(texts) or repr(result)
