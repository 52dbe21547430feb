"""Lesson 03 — migrating from server-initiated requests: the checkpoints of its exercises.

Each checkpoint serves the learner's handler on a real ``McpServer`` in this process, calls it
as a client would and says whether it is right (and, if not, which case failed):

* ``check_require_forms`` — exercise 1, the capability gate ``guided_walk`` calls;
* ``check_pick_seat`` — exercise 2, a one-question tool;
* ``check_rent_bike`` — exercise 3, the first answer carried in ``requestState``; every round
  runs on a fresh instance (``FreshInstances``), as behind round robin;
* ``check_open_ticket`` — exercise 4, one side effect per completed call, even when the final
  retry arrives twice;
* ``check_sdk_port`` — section 4, a port written with the official SDK: it is sent answers
  nobody asked for (early, and with no state), answers that do not fit the form, an ``accept``
  with no content, and its final retry twice.

Every checkpoint that grades a tool sends it answers that do not fit its form and an ``accept``
with no content, and expects the question asked again (ELIC-14 SHOULD, MRTR-E4 SHOULD).

What the exercises port (the legacy tools, their forms and texts) is in ``lesson03_lab.py``,
beside this file.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lesson03_lab import (
    BIKE_SCHEMA,
    FLIGHT_SCHEMA,
    FORMS_NEEDED,
    TICKET_SCHEMA,
    WALK_SCHEMA,
    Tracker,
    ask_seat,
    bike_text,
    make_guided_walk,
    seat_text,
    walk_text,
)

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.refund_lab.lab import RawCaller, ServerAnswer
from mrtr_course.trips import result_line, result_text
from mrtr_course.users import scripted_user
from mrtr_kit.client import McpClient, McpClientError, McpRemoteError, TooManyRounds
from mrtr_kit.protocol.errors import MISSING_REQUIRED_CLIENT_CAPABILITY, McpError
from mrtr_kit.protocol.models import ClientCapabilities, ElicitRequestFormParams, ElicitResult
from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.http import create_app

# -- running the learner's code --------------------------------------------------------------------


def _names(code: types.CodeType) -> set[str]:
    """The global names ``code`` (and the functions nested in it) may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _from_another_module(name: str, value: Any, own: dict[str, Any]) -> bool:
    """Whether ``value`` is something imported (a form schema, say), not the learner's own."""
    return any(
        getattr(module, "__dict__", own) is not own and vars(module).get(name) is value
        for module in list(sys.modules.values())
    )


class FreshInstances:
    """Runs ``fn`` as newly started server processes would, one per ``new()``.

    The dicts, lists and sets ``fn`` reads from its own module (and its mutable defaults) start
    every instance as they were when this object was made, like a fresh import: what a handler
    kept in memory between rounds is gone, as when the balancer sends the next round to another
    instance. Containers imported from other modules (the lesson's forms) are left alone.
    ``memory`` names the containers a run changed: memory kept in the process.
    """

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.snapshot: dict[str, Any] = {}
        self._instances: list[dict[str, Any]] = []
        if not isinstance(fn, types.FunctionType):
            return
        own = fn.__globals__
        for name in sorted(_names(fn.__code__)):
            value = own.get(name)
            if isinstance(value, dict | list | set) and not _from_another_module(name, value, own):
                try:
                    self.snapshot[name] = copy.deepcopy(value)
                except Exception:  # a container that cannot be copied stays shared
                    continue

    def new(self) -> Any:
        fn = self.fn
        if not isinstance(fn, types.FunctionType):
            return fn
        fresh = copy.deepcopy(self.snapshot)
        self._instances.append(fresh)
        defaults = copy.deepcopy(fn.__defaults__)
        run = types.FunctionType(
            fn.__code__, {**fn.__globals__, **fresh}, fn.__name__, defaults, fn.__closure__
        )
        run.__kwdefaults__ = fn.__kwdefaults__
        return run

    @property
    def memory(self) -> list[str]:
        return [
            name
            for name, start in self.snapshot.items()
            if any(instance[name] != start for instance in self._instances)
        ]


class _LearnerCode:
    """Runs the learner's handler inside a real server, keeping its exceptions for the report
    (the server would otherwise turn them into an internal error and log a traceback)."""

    def __init__(self, handler: Callable[..., Any], *extra: Any, fresh: bool = False) -> None:
        self.handler = handler
        self.extra = extra
        self.instances = FreshInstances(handler) if fresh else None  # a new one each run
        self.states: list[dict[str, Any] | None] = []  # the verified state of each run
        self.error: BaseException | None = None
        self.error_case: str | None = None  # the case the checkpoint was running then
        self.case: str | None = None  # set by the checkpoint before each call
        self.runs = 0

    async def __call__(self, ctx: RequestContext) -> Any:
        self.runs += 1
        self.states.append(ctx.state)
        handler = self.instances.new() if self.instances else self.handler
        try:
            outcome = handler(ctx, *self.extra)
            return await outcome if inspect.isawaitable(outcome) else outcome
        except McpError:  # a protocol error the handler means to send, e.g. -32021
            raise
        except Exception as exc:
            if self.error is None:
                self.error, self.error_case = exc, self.case
            return f"(the handler raised {type(exc).__name__})"

    def problem(self, name: str) -> Checkpoint | None:
        if isinstance(self.error, NotImplementedError):
            return Checkpoint("not done", f"{name}() still raises NotImplementedError.")
        if self.error is None:
            return None
        raised = f"{name}() raised {type(self.error).__name__}: {self.error}"
        if self.error_case == "decline":
            return Checkpoint(
                "not yet",
                f"with a declined answer, {raised}. A decline carries no content: check "
                "answer.action before reading answer.content.",
            )
        if self.error_case is not None:
            return Checkpoint("not yet", f"with {self.error_case}, {raised}")
        return Checkpoint("not yet", raised)


def _app(name: str, code: Any, schema: dict[str, Any], keys: KeyRing | None = None) -> Any:
    server = McpServer("lesson-03-checkpoint", state_keys=keys or KeyRing.generate())
    server.tool(name, description="The learner's port.", input_schema=schema)(code)
    return create_app(server)


def _instance_per_request(name: str, code: _LearnerCode, schema: dict[str, Any]) -> Any:
    """An ASGI app that serves every request on a newly built server sharing one state key:
    a fleet where each round lands on another instance, as behind round robin."""
    keys = KeyRing.generate()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await _app(name, code, schema, keys)(scope, receive, send)

    return app


def _decline(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
    return ElicitResult(action="decline")


# -- answers that do not fit, and a final retry sent twice -----------------------------------------

NO_CONTENT: dict[str, Any] = {"action": "accept"}  # an accept that carries no content at all


def _accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


async def _probe_unfit(
    app: Any,
    code: _LearnerCode,
    name: str,
    arguments: dict[str, Any],
    key: str,
    unfit: dict[str, dict[str, Any]],
    before: tuple[tuple[str, dict[str, Any]], ...] = (),
) -> Checkpoint | None:
    """Answer the question ``key`` with each answer in ``unfit`` (after answering ``before``,
    the questions on the way to it) and expect it asked again, not completed, not an error."""
    caller = RawCaller.for_app(app)
    try:
        reply = await caller.call_tool(name, arguments)
        for asked, answer in before:
            reply = await caller.call_tool(
                name, arguments, request_state=reply.request_state, input_responses={asked: answer}
            )
        state = reply.request_state
        for label, answer in unfit.items():
            code.error, code.case = None, label
            got = await caller.call_tool(
                name, arguments, request_state=state, input_responses={key: answer}
            )
            if code.error is not None and not isinstance(code.error, NotImplementedError):
                return Checkpoint(
                    "not yet",
                    f"with {label} under {key!r}, {name}() raised "
                    f"{type(code.error).__name__}: {code.error}. A server answers that with "
                    "-32603, an internal error, for an answer the user can fix. Read the answer "
                    f"with ctx.form({key!r}, message, form): it checks the answer against the "
                    "form (ELIC-14 SHOULD), and needs_asking is then True: return .ask(), "
                    "which asks again saying what was wrong (MRTR-E4 SHOULD).",
                )
            if got.kind != "input_required" or key not in (got.result.get("inputRequests") or {}):
                return Checkpoint(
                    "not yet",
                    f"with {label} under {key!r}, {name} answered {got!s:.120} -- an answer "
                    "that does not fit the form must not be used: the server validates "
                    "answers against its form (ELIC-14 SHOULD) and asks again, saying what "
                    f"was wrong (MRTR-E4 SHOULD). Read it with ctx.form({key!r}, message, "
                    "form) and return .ask() when .needs_asking.",
                )
    finally:
        await caller.aclose()
    code.error = None
    return None


async def _final_twice(
    app: Any,
    name: str,
    arguments: dict[str, Any],
    answers: tuple[tuple[str, dict[str, Any]], ...],
) -> tuple[ServerAnswer, ServerAnswer]:
    """Answer each question in turn, then send the final retry a second time, under a new id,
    as a client does whose response was lost (HTTP-26). The two final answers."""
    caller = RawCaller.for_app(app)
    try:
        reply = await caller.call_tool(name, arguments)
        for asked, answer in answers[:-1]:
            reply = await caller.call_tool(
                name, arguments, request_state=reply.request_state, input_responses={asked: answer}
            )
        last_key, last = answers[-1]
        final = {"request_state": reply.request_state, "input_responses": {last_key: last}}
        first = await caller.call_tool(name, arguments, **final)
        again = await caller.call_tool(name, arguments, **final)
    finally:
        await caller.aclose()
    return first, again


def _acted_twice(what: str, first: ServerAnswer, again: ServerAnswer) -> str:
    return (
        f"the final retry, sent a second time as a client does whose response was lost "
        f"(HTTP-26 MUST: it re-sends the same answers and state under a new id), {what} "
        f"(first: {first} | the repeat: {again}). A handler runs once per round that "
        "arrives, the last one too (MIG-3): do the side effect under a key sealed in the state "
        "(a random one made on the first round, as lesson 02b does with the booking nonce), so "
        "a repeat gets back what the first one did."
    )


async def check_pick_seat(pick_seat: Callable[[RequestContext], Any]) -> Checkpoint:
    """Exercise 2: ``pick_seat`` asks ``seat`` with ``ask_seat`` and answers like the original."""
    code = _LearnerCode(pick_seat)
    app = _app("pick_seat", code, FLIGHT_SCHEMA)
    flight = {"flight": "LX 123"}
    code.case = "no answer yet (round 1)"
    async with McpClient.for_app(app, elicitation=scripted_user(seat="window")) as client:
        first = await client.begin_tool_call("pick_seat", flight)
        again = await client.begin_tool_call("pick_seat", flight)
    if problem := code.problem("pick_seat"):
        return problem
    needs = first.input_required
    if needs is None:
        return Checkpoint(
            "not yet",
            "round 1 should return input_required; it returned "
            f"{result_line(first.result or {})!r}",
        )
    if list(needs.input_requests) != ["seat"]:
        return Checkpoint("not yet", f"round 1 asks {list(needs.input_requests)}, not ['seat']")
    if needs.input_requests != (
        again.input_required.input_requests if again.input_required else None
    ):
        return Checkpoint(
            "not yet", "two first rounds asked different questions: keep it deterministic"
        )
    if needs.input_requests["seat"] != ask_seat("LX 123").to_wire():
        return Checkpoint("not yet", "ask for the seat with ask_seat(flight)")
    outcomes = {}
    for label, handler in (
        ("window", scripted_user(seat="window")),
        ("aisle", scripted_user(seat="aisle")),
        ("decline", _decline),
    ):
        code.case = "decline" if label == "decline" else f"the answer {label!r}"
        async with McpClient.for_app(app, elicitation=handler) as client:
            try:
                outcomes[label] = result_text(await client.call_tool("pick_seat", flight))
            except McpClientError as exc:
                return Checkpoint("not yet", f"with answer {label!r} the call failed: {exc}")
    if problem := code.problem("pick_seat"):
        return problem
    expected = {
        "window": seat_text("LX 123", "window"),
        "aisle": seat_text("LX 123", "aisle"),
        "decline": "No seat chosen on LX 123.",
    }
    for label, text in expected.items():
        if outcomes[label] != text:
            return Checkpoint(
                "not yet", f"answer {label!r}: got {outcomes[label]!r}, want {text!r}"
            )
    unfit = {
        "the seat 'middle' (not a choice)": _accept({"seat": "middle"}),
        "the seat 7 (not a string)": _accept({"seat": 7}),
        "an accept with no content": NO_CONTENT,
    }
    if problem := await _probe_unfit(app, code, "pick_seat", flight, "seat", unfit):
        return problem
    code.case = "a client that cannot show forms"
    async with McpClient.for_app(app) as no_forms:
        try:
            await no_forms.call_tool("pick_seat", flight)
            return Checkpoint("not yet", "a client without forms got an answer; it must get -32021")
        except McpRemoteError as exc:
            if exc.code != -32021:
                return Checkpoint("not yet", f"a client without forms got {exc.code}, not -32021")
    return Checkpoint(
        "passed",
        "one question, asked the same way every time; window, aisle and decline answered like "
        "the original; 'middle', 7 and an accept with no content asked again (ELIC-14); a "
        "client without forms gets -32021.",
    )


def _holds(state: dict[str, Any] | None, value: str) -> bool:
    return value in json.dumps(state or {})


async def check_rent_bike(rent_bike: Callable[[RequestContext], Any]) -> Checkpoint:
    """Exercise 3: ``rent_bike`` asks the day, then the hours, and remembers the day in
    ``requestState``. Every round runs on a fresh server instance (module-level dicts empty),
    so a day kept in the process's memory is gone by round 3, as behind round robin."""
    code = _LearnerCode(rent_bike, fresh=True)
    app = _instance_per_request("rent_bike", code, BIKE_SCHEMA)
    answers = scripted_user(day="2026-09-02", hours=3)
    code.case = "accepted answers (day, then hours)"
    async with McpClient.for_app(app, elicitation=answers, max_rounds=5) as client:
        try:
            result = await client.call_tool("rent_bike", {"shop": "Velo"})
        except TooManyRounds:
            result = None
        asked = [
            list(((r.response or {}).get("result") or {}).get("inputRequests") or {})
            for r in client.trace
        ]
    if problem := code.problem("rent_bike"):
        return problem
    memory = code.instances.memory if code.instances else []
    in_memory = (
        f"the day was kept in this process's memory ({', '.join(memory)}), not in requestState"
        if memory
        else "the day was kept in this process's memory, not in requestState"
    )
    if result is None:
        flat = " | ".join(", ".join(keys) for keys in asked)
        if memory:
            return Checkpoint(
                "not yet",
                f"{in_memory}. Each round here runs on a fresh instance, as behind round robin, "
                f"where that memory does not hold it; asked per round: {flat}. Carry the day in "
                "the state: ctx.input_required(requests, state).",
            )
        return Checkpoint(
            "not yet",
            f"the call never finished; asked per round: {flat}. The day answered in round 2 is "
            "gone by round 3: carry it in the state (ctx.input_required(requests, state)).",
        )
    want = bike_text("Velo", "2026-09-02", 3)
    if result_text(result) != want:
        return Checkpoint("not yet", f"got {result_text(result)!r}, want {want!r}")
    if asked[:2] != [["day"], ["hours"]] or len(asked) != 3:
        return Checkpoint("not yet", f"expected rounds asking day, then hours, then done: {asked}")
    if not _holds(code.states[-1], "2026-09-02"):
        # Right text, but the last round's verified state lacks the day: it came from elsewhere.
        return Checkpoint(
            "not yet",
            f"{in_memory}: the last round's requestState does not hold it, so another instance "
            "could not finish this call. Put the day into the state you return with the "
            "second question.",
        )
    code.case = "decline"
    async with McpClient.for_app(app, elicitation=_decline) as client:
        declined = result_text(await client.call_tool("rent_bike", {"shop": "Velo"}))
    if problem := code.problem("rent_bike"):
        return problem
    if declined != "No bike booked.":
        return Checkpoint("not yet", f"after a decline: got {declined!r}, want 'No bike booked.'")
    shop = {"shop": "Velo"}
    unfit_day = {
        "the day 'next friday' (not a date)": _accept({"day": "next friday"}),
        "the day 5 (not a string)": _accept({"day": 5}),
        "an accept with no content": NO_CONTENT,
    }
    if problem := await _probe_unfit(app, code, "rent_bike", shop, "day", unfit_day):
        return problem
    unfit_hours = {
        "0 hours (below the form's minimum of 1)": _accept({"hours": 0}),
        "the hours 'three' (not a number)": _accept({"hours": "three"}),
        "an accept with no content": NO_CONTENT,
    }
    day = (("day", _accept({"day": "2026-09-02"})),)
    if problem := await _probe_unfit(app, code, "rent_bike", shop, "hours", unfit_hours, day):
        return problem
    return Checkpoint(
        "passed",
        "day, then hours, then the booking, in 3 rounds, each on a fresh instance: the day "
        "rode along in the state; answers that do not fit were asked again (ELIC-14).",
    )


async def check_open_ticket(open_ticket: Callable[[RequestContext, Tracker], Any]) -> Checkpoint:
    """Exercise 4: ``open_ticket`` files exactly one ticket per completed call, none otherwise."""
    tracker = Tracker()
    code = _LearnerCode(open_ticket, tracker)
    app = _app("open_ticket", code, TICKET_SCHEMA)
    code.case = "an accepted answer (severity high)"
    async with McpClient.for_app(app, elicitation=scripted_user(severity="high")) as client:
        try:
            result = await client.call_tool("open_ticket", {"title": "Login broken"})
        except McpClientError as exc:
            return code.problem("open_ticket") or Checkpoint("not yet", f"the call failed: {exc}")
    if problem := code.problem("open_ticket"):
        return problem
    if tracker.tickets != [("Login broken", "high")]:
        return Checkpoint("not yet", f"one call filed {tracker.tickets}, want one high ticket")
    if len(tracker.drafts) > 1:
        return Checkpoint(
            "not yet",
            f"one call opened {len(tracker.drafts)} drafts in {code.runs} runs of the handler: "
            "the code before the question runs on every round. File the ticket after the answer.",
        )
    if not result_text(result).startswith("Filed T-1"):
        return Checkpoint("not yet", f"got {result_text(result)!r}; say which ticket was filed")
    code.case = "decline"
    async with McpClient.for_app(app, elicitation=_decline) as client:
        await client.call_tool("open_ticket", {"title": "Typo"})
    if problem := code.problem("open_ticket"):
        return problem
    if len(tracker.tickets) != 1 or len(tracker.drafts) > 1:
        return Checkpoint("not yet", "a declined call must leave nothing behind in the tracker")
    title = {"title": "Login broken"}
    unfit = {
        "the severity 'critical' (not a choice)": _accept({"severity": "critical"}),
        "the severity 1 (not a string)": _accept({"severity": 1}),
        "an accept with no content": NO_CONTENT,
    }
    if problem := await _probe_unfit(app, code, "open_ticket", title, "severity", unfit):
        return problem
    if len(tracker.tickets) != 1:
        return Checkpoint(
            "not yet", f"answers that do not fit the form filed tickets: {tracker.tickets}"
        )
    code.case = "the final retry sent twice"
    first, again = await _final_twice(
        app, "open_ticket", title, (("severity", _accept({"severity": "low"})),)
    )
    if problem := code.problem("open_ticket"):
        return problem
    if len(tracker.tickets) > 2:
        return Checkpoint(
            "not yet", _acted_twice(f"filed a second ticket ({tracker.tickets[1:]})", first, again)
        )
    return Checkpoint(
        "passed",
        f"{code.runs} runs of the handler, one ticket per call, no stray drafts; a decline files "
        "nothing; answers that do not fit are asked again; the final retry sent twice files "
        "one ticket.",
    )


# -- the capability gate's checkpoint --------------------------------------------------------------


@dataclass
class _GateWatch:
    """Calls the learner's gate for ``guided_walk`` and notes, per run, whether this request
    declared form elicitation and what the gate raised. The kit's core gates every
    input_required itself (MRTR-S7), so the wire alone cannot show a gate that lets a request
    through; this record can."""

    gate: Callable[[RequestContext], Any]
    runs: list[tuple[bool, BaseException | None]] = field(default_factory=list)
    returned: BaseException | None = None  # an error the gate returned instead of raising

    def __call__(self, ctx: RequestContext) -> None:
        declared = ctx.capabilities.supports_elicitation("form")
        try:
            value = self.gate(ctx)
        except McpError as exc:  # a refusal: the server sends it as it is
            self.runs.append((declared, exc))
            raise
        except Exception as exc:  # noted; the server would answer -32603 and log a traceback
            self.runs.append((declared, exc))
            raise McpError(-32603, "Internal error") from None
        if isinstance(value, BaseException) and self.returned is None:
            self.returned = value  # `return errors.missing_capability(...)`: nothing refused
        self.runs.append((declared, None))

    def last(self) -> tuple[bool, BaseException | None]:
        return self.runs[-1] if self.runs else (False, None)


def _refusal_problem(
    exc: BaseException | None, who: str, returned: BaseException | None = None
) -> str | None:
    """What is wrong with the gate's answer to a request that lacks form elicitation."""
    if exc is None and returned is not None:
        return (
            f"for {who} your gate returned the error ({type(returned).__name__}: {returned}) "
            "instead of raising it. A returned value is ignored, so the request went on and "
            "the tool asked for the day anyway. Write `raise errors.missing_capability(...)`, "
            "not `return` (-32021, CAP-2 MUST)."
        )
    if exc is None:
        return (
            f"{who} got through your gate, and guided_walk asked for the day: an input_required "
            "this client cannot answer (MRTR-S7). The kit's core refused it for you here; your "
            "gate must refuse first, with -32021 (CAP-2)."
        )
    if not isinstance(exc, McpError):
        return (
            f"for {who} your gate raised {type(exc).__name__}: {exc}. The server answers that "
            "with -32603, an internal error (a bug), which tells the client nothing it can act "
            "on. Raise errors.missing_capability(...) (-32021, CAP-2)."
        )
    if exc.code != MISSING_REQUIRED_CLIENT_CAPABILITY:
        return (
            f"for {who} your gate refused with {exc.code}; a missing client capability is "
            "-32021 (CAP-2), the code a client can act on by declaring what is missing."
        )
    required = exc.data.get("requiredCapabilities") if isinstance(exc.data, dict) else None
    if required is None:
        return (
            f"for {who} your gate refused with -32021 but data={exc.data!r}: -32021 must carry "
            "data.requiredCapabilities, naming what the client lacks (ERR-1)."
        )
    try:
        names_forms = ClientCapabilities.model_validate(required).supports_elicitation("form")
    except ValueError:
        names_forms = False
    if not names_forms:
        return (
            f"for {who} your gate's data.requiredCapabilities is {required!r}; it must name "
            f"form elicitation: {FORMS_NEEDED!r} (ERR-1)."
        )
    return None


async def check_require_forms(require_forms: Callable[[RequestContext], Any]) -> Checkpoint:
    """Exercise 1: ``require_forms(ctx)`` refuses a request that lacks form elicitation with
    -32021 and ``data.requiredCapabilities``, judging by *this* request only, and lets a
    request that declares it through. Each call gets a fresh copy of the gate (empty
    module-level memory), as a new server would."""
    town = {"town": "Porto"}
    walker = scripted_user(day="2026-09-05", people=4)
    instances = FreshInstances(require_forms)  # one per call: a new server, a fresh import

    def serve() -> tuple[_GateWatch, Any]:
        watch = _GateWatch(instances.new())
        return watch, _app("guided_walk", make_guided_walk(watch), WALK_SCHEMA)

    # 1. A client with forms: the gate must let all three rounds through.
    watch, app = serve()
    async with McpClient.for_app(app, elicitation=walker) as client:
        try:
            result = result_text(await client.call_tool("guided_walk", town))
        except McpClientError as exc:
            result = f"error: {exc}"
    for n, (_, exc) in enumerate(watch.runs, 1):
        if isinstance(exc, NotImplementedError):
            return Checkpoint("not done", "require_forms() still raises NotImplementedError.")
        if exc is not None:
            return Checkpoint(
                "not yet",
                f"round {n} declared form elicitation, and your gate refused it "
                f"({type(exc).__name__}: {exc}). Refuse only when this request's "
                "clientCapabilities lack it (CAP-2).",
            )
    want = walk_text("Porto", "2026-09-05", 4)
    if result != want:
        return Checkpoint("not yet", f"with forms declared: got {result!r}, want {want!r}")

    # 2. No capabilities at all, then URL mode only: refused on round 1, over the wire.
    status = None
    for label, caps in (
        ("a request that declares no capabilities", {}),
        ("a request that declares only URL-mode elicitation", {"elicitation": {"url": {}}}),
    ):
        watch, app = serve()
        async with McpClient.for_app(app) as client:
            client.factory.capabilities = caps
            try:
                await client.begin_tool_call("guided_walk", town)
            except McpRemoteError as exc:
                status = exc.http_status
        if problem := _refusal_problem(watch.last()[1], label, watch.returned):
            return Checkpoint("not yet", problem)

    # 3. Forms on round 1, none on the retry (CAP-4): round 2 must be refused too.
    watch, app = serve()
    async with McpClient.for_app(app, elicitation=walker) as client:
        call = await client.begin_tool_call("guided_walk", town)
        client.factory.capabilities = {}  # the retry declares nothing
        with contextlib.suppress(McpRemoteError):  # the refusal is read from the watch
            await client.continue_call(
                call, {"day": ElicitResult(action="accept", content={"day": "2026-09-05"})}
            )
    declared, exc = watch.last()
    if len(watch.runs) == 2 and not declared and exc is None:
        return Checkpoint(
            "not yet",
            "round 1 declared form elicitation, the retry did not, and your gate let the retry "
            "through: it judged by capabilities an earlier request declared, as a 2025-11-25 "
            "server judged by the session (CAP-1). Each round carries its own: read "
            "ctx.capabilities every time (CAP-4).",
        )
    if problem := _refusal_problem(exc, "a retry that no longer declares forms", watch.returned):
        return Checkpoint("not yet", problem)
    return Checkpoint(
        "passed",
        "forms declared: 3 rounds and the booking; no forms, or URL mode only: -32021 with "
        f"requiredCapabilities (HTTP {status}); a retry without forms: refused as well.",
    )


# -- section 4: a port written with the official SDK -----------------------------------------------

SDK_CITY = {"city": "Lisbon"}
SDK_DATES = {"dates": _accept({"start": "2026-09-01", "nights": 3})}
SDK_ROOM = {"room": _accept({"room": "double"})}


async def check_sdk_port(build_server: Callable[..., Any]) -> Checkpoint:
    """Section 4: a ``plan_trip`` port on the official SDK's ``MCPServer``.

    ``build_server(desk)`` returns the SDK server; it is served in this process. The checkpoint
    sends what a careless or hostile client might: both answers on a first call with no
    ``requestState``, the room answered early on round 2, a room that does not fit the form,
    an ``accept`` with no content; then the final retry twice. The SDK seals and checks the
    state; which questions were asked, and whether an answer fits, are the tool's to check."""
    import httpx

    from mrtr_course.examples.trip_planner import HotelDesk

    desk = HotelDesk()
    app = build_server(desk).streamable_http_app(host="127.0.0.1")
    url = "http://127.0.0.1:8000/mcp"  # the SDK checks the Host header: loopback with a port
    async with app.router.lifespan_context(app):
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=url)
        caller = RawCaller(http, url)
        try:
            return await _grade_sdk_port(caller, desk)
        finally:
            await caller.aclose()


def _asks(reply: ServerAnswer, key: str) -> bool:
    return reply.kind == "input_required" and key in (reply.result.get("inputRequests") or {})


async def _grade_sdk_port(caller: RawCaller, desk: Any) -> Checkpoint:
    def call(state: str | None = None, answers: dict[str, Any] | None = None) -> Any:
        return caller.call_tool("plan_trip", SDK_CITY, request_state=state, input_responses=answers)

    stateless = await call(None, {**SDK_DATES, **SDK_ROOM})
    if not _asks(stateless, "dates"):
        return Checkpoint(
            "not yet",
            f"a first tools/call carrying answers to both questions and no requestState got "
            f"{stateless} -- nothing was asked yet, so those answers answer nothing: ignore "
            "them (MRTR-E3 SHOULD) and ask for the dates. Decide what to read from what the "
            "state you issued says you asked (put the asked key in request_state), never from "
            "which answers are present.",
        )
    first = await call()
    early = await call(first.request_state, {**SDK_DATES, **SDK_ROOM})
    if not _asks(early, "room"):
        return Checkpoint(
            "not yet",
            f"round 2 answered the dates and, early, the room, which round 1 never asked; it "
            f"got {early} -- read only the answer to the question this round's state says was "
            "asked (MRTR-E3 SHOULD), and ask for the room.",
        )
    unfit = {
        "the room 'purple' (not a choice)": _accept({"room": "purple"}),
        "the room 42 (not a string)": _accept({"room": 42}),
        "an accept with no content": NO_CONTENT,
    }
    for label, answer in unfit.items():
        got = await call(early.request_state, {"room": answer})
        if not _asks(got, "room"):
            return Checkpoint(
                "not yet",
                f"with {label} the port answered {got} -- validate an accepted answer against "
                "its form (ELIC-14 SHOULD; an accept with no content does not fit either) and "
                "ask again saying what was wrong (MRTR-E4 SHOULD), never an error or a result.",
            )
    if desk.reservations:
        return Checkpoint("not yet", f"answers that do not fit made {desk.reservations}")
    done = await call(early.request_state, SDK_ROOM)
    again = await call(early.request_state, SDK_ROOM)
    if not done.ok or "Reserved" not in done.text:
        return Checkpoint("not yet", f"the right answers got {done}, not a reservation")
    if len(desk.reservations) > 1:
        return Checkpoint(
            "not yet", _acted_twice(f"made {len(desk.reservations)} reservations", done, again)
        )
    declined = await call(early.request_state, {"room": {"action": "decline"}})
    if "cancel" in declined.text.lower():
        return Checkpoint(
            "not yet",
            f"a decline got {declined} -- a decline is the user's explicit no, not a "
            "cancel, which is a dismissed form (ELIC-6 note): say so in words of its own.",
        )
    return Checkpoint(
        "passed",
        "unasked answers ignored (MRTR-E3); unfit ones asked again (ELIC-14); the repeated "
        "final retry booked once (MIG-3); a decline is not called a cancel.",
    )
