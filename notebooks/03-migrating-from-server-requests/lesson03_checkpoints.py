"""Lesson 03 — migrating from server-initiated requests: the checkpoints of its exercises.

Each checkpoint serves the learner's handler on a real ``McpServer`` in this process, calls it
as a client would and says whether it is right (and, if not, which case failed):

* ``check_require_forms`` — exercise 1, the capability gate ``guided_walk`` calls;
* ``check_pick_seat`` — exercise 2, a one-question tool;
* ``check_sdk_port`` — section 5, a port written with the official SDK: it is sent answers
  nobody asked for (early, and with no state), a reply of the wrong kind, answers that do not
  fit the form, an ``accept`` with no content, and its final retry twice;
* ``check_sdk_answer_to`` — exercise 3, the same checks on that port with the learner's
  ``answer_to`` (which answers the tool may read) in place of its own.

Every checkpoint that grades a tool sends it answers that do not fit its form and an ``accept``
with no content, and expects the question asked again (ELIC-14 SHOULD, MRTR-E4 SHOULD). What
the porting checkpoints share (the learner's code in a real server, the probes) is in
``mrtr_course.port_checks``; the practice ports that follow this lesson (carry an answer, one
side effect per call) are checked in ``../03c-porting-practice-OPTIONAL``.

What the exercises port (the legacy tools, their forms and texts) is in ``lesson03_lab.py``,
beside this file.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lesson03_lab import (
    FLIGHT_SCHEMA,
    FORMS_NEEDED,
    WALK_SCHEMA,
    ask_seat,
    make_guided_walk,
    seat_text,
    walk_text,
)

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.port_checks import (
    NO_CONTENT,
    FreshInstances,
    LearnerCode,
    accept,
    acted_twice,
    decline,
    probe_unfit,
    serve_tool,
)
from mrtr_course.refund_lab.lab import RawCaller, ServerAnswer
from mrtr_course.trips import result_line, result_text
from mrtr_course.users import scripted_user
from mrtr_kit.client import McpClient, McpClientError, McpRemoteError
from mrtr_kit.protocol.errors import MISSING_REQUIRED_CLIENT_CAPABILITY, McpError
from mrtr_kit.protocol.models import ClientCapabilities, ElicitResult
from mrtr_kit.server import KeyRing, RequestContext


def _app(name: str, code: object, schema: dict[str, object], keys: KeyRing | None = None) -> object:
    return serve_tool(name, code, schema, keys, server_name="lesson-03-checkpoint")


# -- exercise 2: a one-question tool ---------------------------------------------------------------


async def check_pick_seat(pick_seat: Callable[[RequestContext], Any]) -> Checkpoint:
    """Exercise 2: ``pick_seat`` asks ``seat`` with ``ask_seat`` and answers like the original."""
    code = LearnerCode(pick_seat)
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
        ("decline", decline),
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
        "the seat 'middle' (not a choice)": accept({"seat": "middle"}),
        "the seat 7 (not a string)": accept({"seat": 7}),
        "an accept with no content": NO_CONTENT,
    }
    if problem := await probe_unfit(app, code, "pick_seat", flight, "seat", unfit):
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


# -- section 5: a port written with the official SDK -----------------------------------------------

SDK_CITY = {"city": "Lisbon"}
SDK_DATES = {"dates": accept({"start": "2026-09-01", "nights": 3})}
SDK_ROOM = {"room": accept({"room": "double"})}


async def check_sdk_port(build_server: Callable[..., Any]) -> Checkpoint:
    """Section 5: a ``plan_trip`` port on the official SDK's ``MCPServer``.

    ``build_server(desk)`` returns the SDK server; it is served in this process. The checkpoint
    sends what a careless or hostile client might: both answers on a first call with no
    ``requestState``, the room answered early on round 2, a roots reply where the room's answer
    goes, a room that does not fit the form, an ``accept`` with no content; then the final
    retry twice. The SDK seals and checks the state; which questions were asked, and whether an
    answer fits, are the tool's to check."""
    return await _serve_and_grade(build_server)


async def _serve_and_grade(
    build_server: Callable[..., Any], learner: _Watched | None = None
) -> Checkpoint:
    """``build_server``'s port served in this process and graded; with ``learner``, the grading
    stops at the first call in which the learner's function raised, and says so."""
    import httpx

    from mrtr_course.examples.trip_planner import HotelDesk

    desk = HotelDesk()
    app = build_server(desk).streamable_http_app(host="127.0.0.1")
    url = "http://127.0.0.1:8000/mcp"  # the SDK checks the Host header: loopback with a port
    # A tool that crashes is reported in the verdict, in a line; the SDK's own log of it (a
    # boxed traceback of a hundred lines, at ERROR) would bury that line under the cell.
    sdk_log = logging.getLogger("mcp.server.mcpserver.server")
    level = sdk_log.level
    sdk_log.setLevel(logging.CRITICAL)
    try:
        async with app.router.lifespan_context(app):
            http = httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=url)
            caller = RawCaller(http, url)
            try:
                return await _grade_sdk_port(caller, desk, learner)
            except _LearnerRaised:
                assert learner is not None and learner.error is not None
                return learner.verdict()
            finally:
                await caller.aclose()
    finally:
        sdk_log.setLevel(level)


_VALIDATE = (
    "validate an accepted answer against its form (ELIC-14 SHOULD; an accept with no content "
    "does not fit either) and ask again saying what was wrong (MRTR-E4 SHOULD), never an error "
    "or a result."
)
# The SDK parses each reply by its shape: {"roots": [...]} arrives as a ListRootsResult.
_WRONG_KIND = (
    "a form's answer is an ElicitResult; another kind of reply under its key answers nothing: "
    "treat it as not sent and ask again, never an error or a result."
)


def _asks(reply: ServerAnswer, key: str) -> bool:
    return reply.kind == "input_required" and key in (reply.result.get("inputRequests") or {})


async def _grade_sdk_port(caller: RawCaller, desk: Any, learner: _Watched | None) -> Checkpoint:
    async def call(state: str | None = None, answers: dict[str, Any] | None = None) -> Any:
        reply = await caller.call_tool(
            "plan_trip", SDK_CITY, request_state=state, input_responses=answers
        )
        if learner is not None and learner.error is not None:
            raise _LearnerRaised  # the reply is the SDK's tool error, which says nothing useful
        return reply

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
    unfit = [
        ("a roots reply (not a form's answer)", {"roots": []}, _WRONG_KIND),
        ("the room 'purple' (not a choice)", accept({"room": "purple"}), _VALIDATE),
        ("the room 42 (not a string)", accept({"room": 42}), _VALIDATE),
        ("an accept with no content", NO_CONTENT, _VALIDATE),
    ]
    for label, answer, advice in unfit:
        got = await call(early.request_state, {"room": answer})
        if not _asks(got, "room"):
            return Checkpoint("not yet", f"with {label} the port answered {got} -- {advice}")
    if desk.reservations:
        return Checkpoint("not yet", f"answers that do not fit made {desk.reservations}")
    done = await call(early.request_state, SDK_ROOM)
    again = await call(early.request_state, SDK_ROOM)
    if not done.ok or "Reserved" not in done.text:
        return Checkpoint("not yet", f"the right answers got {done}, not a reservation")
    if len(desk.reservations) > 1:
        return Checkpoint(
            "not yet", acted_twice(f"made {len(desk.reservations)} reservations", done, again)
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


# -- exercise 3: which answers the SDK port may read -----------------------------------------------


class _LearnerRaised(Exception):
    """The learner's function raised during a call: grading stops there."""


class _Watched:
    """The learner's function, called as the port calls it, keeping the first exception (the
    SDK would otherwise turn it into a tool error that says nothing about where it came from)."""

    def __init__(self, function: Callable[..., Any], name: str) -> None:
        self.function = function
        self.name = name
        self.error: Exception | None = None

    def __call__(self, *args: Any) -> Any:
        try:
            return self.function(*args)
        except Exception as exc:
            self.error = self.error or exc
            raise

    def verdict(self) -> Checkpoint:
        if isinstance(self.error, NotImplementedError):
            return Checkpoint("not done", f"{self.name}() still raises NotImplementedError.")
        return Checkpoint(
            "not yet",
            f"{self.name}() raised {type(self.error).__name__}: {self.error}. On a first call "
            "the state is {} and ctx.input_responses may be None: return None when there is "
            "nothing to read.",
        )


async def check_sdk_answer_to(answer_to: Callable[..., Any]) -> Checkpoint:
    """Exercise 3: ``answer_to(ctx, state, key)`` returns the answer under ``key`` only when the
    state says ``key`` was asked, and only if it is an ``ElicitResult``; otherwise ``None``.

    It is graded in place: ``trip_mrtr``'s port, served in this process, calls the learner's
    ``answer_to`` instead of its own while ``check_sdk_port``'s cases run."""
    from unittest import mock

    from mrtr_course.sdk_port import trip_mrtr

    learner = _Watched(answer_to, "answer_to")
    with mock.patch.object(trip_mrtr, "answer_to", learner):
        return await _serve_and_grade(trip_mrtr.build_server, learner)
