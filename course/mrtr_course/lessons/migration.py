"""Lesson 03 — migrating from server-initiated requests: labs, views and checkpoints.

The notebook calls these; the tests call the same ones.

* showing code: ``show_source`` and ``side_by_side`` (a 2025-11-25 handler beside its port);
* the push-style tool on a fleet: ``legacy_trip`` (one call, every HTTP exchange and the
  instance that served it);
* the MRTR side of the fleet: ``mrtr_trip`` (one call, round by round, with the instance that
  served each round) and ``run_flows`` (many calls at once, counted);
* the traps of porting, run in this process: ``run_trap``;
* the capability gate the learner writes (``guided_walk`` calls it) and its checkpoint;
* the exercises: the legacy tools to port (``pick_seat_legacy``, ``rent_bike_legacy``,
  ``open_ticket_legacy``), what they need, and one checkpoint each.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import html
import inspect
import json
import sys
import textwrap
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mrtr_course.examples import trip_planner, trip_traps
from mrtr_course.examples.trip_planner import HotelDesk, traveller
from mrtr_course.fleet import FRONT_URL, Fleet, Hit, RoundRobin, start_processes
from mrtr_course.legacy import (
    LegacyClient,
    LegacyClientError,
    LegacyExchange,
    LegacyToolContext,
    format_trace,
)
from mrtr_course.checkpoints import Checkpoint
from mrtr_course.plain.trace_view import wire_json
from mrtr_kit.client import McpClient, McpClientError, McpRemoteError, TooManyRounds
from mrtr_kit.protocol.elicitation import validate_content
from mrtr_kit.protocol.errors import MISSING_REQUIRED_CLIENT_CAPABILITY, McpError
from mrtr_kit.protocol.models import (
    ClientCapabilities,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
)
from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.context import elicit_form
from mrtr_kit.server.http import create_app

# -- showing code ----------------------------------------------------------------------------------


def _source(fn: Callable[..., Any]) -> str:
    return textwrap.dedent(inspect.getsource(fn)).rstrip()


@dataclass(frozen=True)
class Listing:
    """Source code for the notebook: plain text, or HTML without syntax colours (stable)."""

    title: str
    code: str

    def __repr__(self) -> str:
        return f"# {self.title}\n{self.code}"

    def _repr_html_(self) -> str:
        return (
            f"<div><b>{html.escape(self.title)}</b>"
            f"<pre style='font-size:85%'>{html.escape(self.code)}</pre></div>"
        )


def show_source(fn: Callable[..., Any], title: str | None = None) -> Listing:
    return Listing(title or fn.__name__, _source(fn))


@dataclass(frozen=True)
class SideBySide:
    before: Listing
    after: Listing

    def __repr__(self) -> str:
        return f"{self.before!r}\n\n{self.after!r}"

    def _repr_html_(self) -> str:
        cell = "<td style='vertical-align:top;text-align:left'>{}</td>"
        return (
            "<table><tr>"
            + cell.format(self.before._repr_html_())
            + cell.format(self.after._repr_html_())
            + "</tr></table>"
        )


def side_by_side(
    before: Callable[..., Any],
    after: Callable[..., Any],
    titles: tuple[str, str] = ("before: 2025-11-25", "after: 2026-07-28 (MRTR)"),
) -> SideBySide:
    return SideBySide(show_source(before, titles[0]), show_source(after, titles[1]))


# -- the push-style tool on a fleet ----------------------------------------------------------------


@dataclass
class LegacyRun:
    """One 2025-11-25 call through a balancer: its trace, and its result or its error."""

    trace: list[LegacyExchange]
    text: str | None
    error: LegacyClientError | None

    def __repr__(self) -> str:
        outcome = f"result: {self.text}" if self.error is None else f"failed: {self.error}"
        return f"{format_trace(self.trace)}\n{outcome}"


async def legacy_trip(balancer: RoundRobin, city: str = "Lisbon", answers: Any = None) -> LegacyRun:
    """``plan_trip`` with the 2025-11-25 client through ``balancer``; errors are kept, not
    raised, so that the trace can be shown next to them."""
    client = LegacyClient(
        FRONT_URL, elicitation=answers or traveller(), transport=balancer.transport()
    )
    try:
        async with client:
            result = await client.call_tool("plan_trip", {"city": city})
    except LegacyClientError as exc:
        return LegacyRun(client.trace, None, exc)
    return LegacyRun(client.trace, _kinds(result).removeprefix("complete: "), None)


def show_logs(fleet: Fleet) -> None:
    """Print what each instance logged about its tools (its start-up line left out)."""
    for instance in fleet:
        for line in instance.log_lines(f"{instance.name}:"):
            print(line)


def crash_first(fleet: Fleet, name: str, answers: Any = None) -> Any:
    """An answer handler that crashes instance ``name`` (SIGKILL) when the first question
    arrives, then answers like ``traveller``: the instance dies while the user is thinking."""
    answer = answers or traveller()

    def crash_then_answer(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
        if fleet[name].running:
            fleet[name].crash()
        return answer(params, ctx)

    return crash_then_answer


# -- the MRTR port on a fleet ----------------------------------------------------------------------


def _kinds(result: dict[str, Any]) -> str:
    if result.get("resultType") == "input_required":
        return "input_required, asks " + ", ".join(result.get("inputRequests") or {})
    texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
    return "complete: " + " ".join(texts)


@dataclass
class TripRun:
    """One MRTR call through a balancer: each round, and the instance that served it."""

    rounds: list[tuple[int, str, str]]  # (round, instance, what the server answered)
    text: str

    @property
    def instances(self) -> list[str]:
        return [instance for _, instance, _ in self.rounds]

    def __repr__(self) -> str:
        lines = [f"round {n} -> {who:<11} {what}" for n, who, what in self.rounds]
        return "\n".join(lines)


async def mrtr_trip(
    balancer: RoundRobin, city: str = "Lisbon", answers: Any = None, **call: Any
) -> TripRun:
    """``plan_trip`` with the MRTR client through ``balancer``, answering as ``traveller``."""
    transport = balancer.transport()
    async with McpClient(FRONT_URL, elicitation=answers or traveller(), transport=transport) as c:
        result = await c.call_tool("plan_trip", {"city": city, **call})
        rounds = [
            (record.round, hit.instance or "?", _kinds((record.response or {}).get("result", {})))
            for record, hit in zip(c.trace, transport.hits, strict=True)
        ]
    return TripRun(rounds, _kinds(result).removeprefix("complete: "))


@dataclass
class FlowReport:
    """What ``run_flows`` saw: completed and lost calls, and where their rounds went."""

    flows: int
    completed: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    per_instance: Counter[str] = field(default_factory=Counter)
    rounds: int = 0
    spread: int = 0  # calls whose rounds were served by two or more instances

    @property
    def lost(self) -> int:
        return self.flows - self.completed

    def __repr__(self) -> str:
        instances = ", ".join(f"{name}: {n}" for name, n in sorted(self.per_instance.items()))
        lines = [
            f"{self.completed} of {self.flows} calls completed, {self.lost} lost",
            f"{self.rounds} rounds served ({instances})",
            "rounds of one call served by different instances: " + ("yes" if self.spread else "no"),
        ]
        lines += [f"error: {error} x{n}" for error, n in sorted(self.errors.items())]
        return "\n".join(lines)


def expected_summary(city: str, start: str = "2026-09-01", nights: int = 3) -> str:
    return trip_planner.Reservation(city, start, nights, "double").summary()


async def run_flows(balancer: RoundRobin, flows: int, concurrency: int) -> FlowReport:
    """``flows`` whole ``plan_trip`` calls (3 rounds, 2 forms each), ``concurrency`` at a time,
    each its own client behind the same balancer. A call is lost if it raises or ends with
    anything but its own reservation."""
    report = FlowReport(flows)
    gate = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        city, nights = f"City {n % 7}", 1 + n % 5
        async with gate:
            transport = balancer.transport()
            try:
                async with McpClient(
                    FRONT_URL, elicitation=traveller(nights=nights), transport=transport
                ) as client:
                    result = await client.call_tool("plan_trip", {"city": city})
            except (McpClientError, OSError) as exc:
                report.errors[type(exc).__name__] += 1
                return
        instances = [hit.instance or "?" for hit in transport.hits]
        report.rounds += len(instances)
        report.per_instance.update(instances)
        report.spread += len(set(instances)) > 1
        if _kinds(result) == "complete: " + expected_summary(city, nights=nights):
            report.completed += 1
        else:
            report.errors["wrong result"] += 1

    await asyncio.gather(*(one(n) for n in range(flows)))
    return report


def rounds_by_instance(hits: list[Hit]) -> str:
    counts = Counter(hit.instance or "?" for hit in hits)
    return ", ".join(f"{name}: {n}" for name, n in sorted(counts.items()))


# -- the official SDK ------------------------------------------------------------------------------


def start_sdk_servers(styles: tuple[str, ...] = ("v1", "mrtr", "resolve")) -> Fleet:
    """One process per style of ``mrtr_course.sdk_port`` (needs ``mcp``), named
    ``sdk-<style>``."""
    from mrtr_course.sdk_port import serve_command

    return start_processes(
        {f"sdk-{style}": serve_command(style, f"sdk-{style}") for style in styles}, timeout=120
    )


async def sdk_client_trip(url: str, city: str = "Lisbon") -> str:
    """``plan_trip`` at ``url`` with the official SDK's client (2026-07-28), answering the
    forms like ``traveller``; returns the result text."""
    from mcp import Client
    from mcp_types import ElicitResult as SdkElicitResult

    answer = traveller()

    async def elicitation(context: Any, params: Any) -> SdkElicitResult:
        ours = ElicitRequestFormParams(
            message=params.message, requested_schema=params.requested_schema
        )
        return SdkElicitResult.model_validate(answer(ours, None).to_wire())

    async with Client(url, mode="2026-07-28", elicitation_callback=elicitation) as client:
        result = await client.call_tool("plan_trip", {"city": city})
    return " ".join(getattr(block, "text", "") for block in result.content)


# -- the traps, in this process --------------------------------------------------------------------


@dataclass
class TrapRun:
    name: str
    asked: list[list[str]]  # the input-request keys of each round
    outcome: str
    desk: HotelDesk

    def __repr__(self) -> str:
        asked = " | ".join(", ".join(keys) or "-" for keys in self.asked)
        return (
            f"{self.name}: {len(self.asked)} rounds\n"
            f"  asked per round: {asked}\n"
            f"  outcome: {self.outcome}\n"
            f"  hotel desk: {self.desk.holds_placed} holds placed, {len(self.desk.holds)} still "
            f"open, {len(self.desk.reservations)} reservation(s)"
        )


async def run_trap(name: str) -> TrapRun:
    """Run one of ``trip_traps.TRAPS`` (or ``plan_trip``, the right port) once, in process."""
    desk = HotelDesk()
    server = trip_traps.build_server(desk)
    trip_planner.register(server, desk)
    async with McpClient.for_app(create_app(server), elicitation=traveller()) as client:
        try:
            result = await client.call_tool(name, {"city": "Lisbon"})
            outcome = _kinds(result)
        except TooManyRounds as exc:
            outcome = (
                f"TooManyRounds: the client gave up after {exc.max_rounds} rounds, "
                "the kit's round cap: MRTR-C7 (KIT)"
            )
        asked = [
            list(((record.response or {}).get("result") or {}).get("inputRequests") or {})
            for record in client.trace
            if record.method == "tools/call"
        ]
    return TrapRun(name, asked, outcome, desk)


# -- the capability gate (exercise 1) --------------------------------------------------------------

FORMS_NEEDED: dict[str, Any] = {"elicitation": {"form": {}}}  # requiredCapabilities (ERR-1)
WALK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"town": {"type": "string", "minLength": 1}},
    "required": ["town"],
}
PEOPLE_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"people": {"type": "integer", "title": "People", "minimum": 1, "maximum": 12}},
    "required": ["people"],
}


def walk_text(town: str, day: str, people: int) -> str:
    return f"Guided walk in {town} on {day} for {people}."


def make_guided_walk(require_forms: Callable[[RequestContext], None]) -> Any:
    """``guided_walk(town)`` asks the day, then how many people; ``require_forms(ctx)``, the
    capability gate, runs first on every round, before anything is asked (CAP-2, CAP-4)."""

    def guided_walk(ctx: RequestContext) -> Any:
        require_forms(ctx)
        town = ctx.arguments["town"]
        state = ctx.state or {}
        if "day" not in state:
            day = ctx.elicitation("day")
            if day is None:
                return ctx.input_required({"day": elicit_form(f"Which day in {town}?", DAY_FORM)})
            if day.action != "accept":
                return f"No walk booked in {town}."
            state = {"day": str((day.content or {})["day"])}
        people = ctx.elicitation("people")
        if people is None:
            ask = elicit_form(f"How many people on {state['day']}?", PEOPLE_FORM)
            return ctx.input_required({"people": ask}, state)
        if people.action != "accept":
            return f"No walk booked in {town}."
        return walk_text(town, state["day"], int((people.content or {})["people"]))

    return guided_walk


@dataclass
class Wire:
    """One request and the answer it got, as they went over HTTP."""

    request: dict[str, Any]
    status: int | None
    response: dict[str, Any] | None

    def __repr__(self) -> str:
        return (
            f"request:\n{wire_json(self.request)}\n\n"
            f"answer: HTTP {self.status}\n{wire_json(self.response)}"
        )


async def without_forms(arguments: dict[str, Any] | None = None) -> Wire:
    """``plan_trip`` called by a client that declares no capabilities: the request, then the
    server's answer (the kit's port of plan_trip gates on this request's capabilities)."""
    app = create_app(trip_planner.build_server())
    async with McpClient.for_app(app) as client:  # no answer handlers: clientCapabilities {}
        with contextlib.suppress(McpRemoteError):  # the error is what this shows
            await client.call_tool("plan_trip", arguments or {"city": "Lisbon"})
        record = client.trace[-1]
    return Wire(record.request, record.http_status, record.response)


# -- exercise 2: a one-question tool ---------------------------------------------------------------

SEATS = {"window": "12A", "aisle": "12C"}
SEAT_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"seat": {"type": "string", "title": "Seat", "enum": ["window", "aisle"]}},
    "required": ["seat"],
}
FLIGHT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"flight": {"type": "string", "minLength": 1}},
    "required": ["flight"],
}


def seat_question(flight: str) -> str:
    return f"Window or aisle on {flight}?"


def ask_seat(flight: str) -> ElicitRequest:
    return elicit_form(seat_question(flight), SEAT_FORM)


def seat_text(flight: str, seat: str) -> str:
    return f"Seat {SEATS[seat]} ({seat}) on {flight}."


async def pick_seat_legacy(ctx: LegacyToolContext) -> str:
    flight = ctx.arguments["flight"]
    answer = await ctx.elicit(seat_question(flight), SEAT_FORM)
    if answer.action != "accept" or validate_content(SEAT_FORM, answer.content):
        return f"No seat chosen on {flight}."
    return seat_text(flight, str((answer.content or {})["seat"]))


# -- exercise 3: carry the first answer ------------------------------------------------------------

DAY_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"day": {"type": "string", "title": "Day", "format": "date"}},
    "required": ["day"],
}
HOURS_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"hours": {"type": "integer", "title": "Hours", "minimum": 1, "maximum": 8}},
    "required": ["hours"],
}
BIKE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"shop": {"type": "string", "minLength": 1}},
    "required": ["shop"],
}


def ask_day(shop: str) -> ElicitRequest:
    return elicit_form(f"Which day do you want a bike from {shop}?", DAY_FORM)


def ask_hours(shop: str, day: str) -> ElicitRequest:
    return elicit_form(f"How many hours on {day}?", HOURS_FORM)


def bike_text(shop: str, day: str, hours: int) -> str:
    return f"Bike from {shop} booked on {day} for {hours} h."


async def rent_bike_legacy(ctx: LegacyToolContext) -> str:
    shop = ctx.arguments["shop"]
    day = await ctx.elicit(f"Which day do you want a bike from {shop}?", DAY_FORM)
    if day.action != "accept":
        return "No bike booked."
    when = str((day.content or {})["day"])
    hours = await ctx.elicit(f"How many hours on {when}?", HOURS_FORM)
    if hours.action != "accept":
        return "No bike booked."
    return bike_text(shop, when, int((hours.content or {})["hours"]))


# -- exercise 4: one side effect -------------------------------------------------------------------

SEVERITY_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "severity": {"type": "string", "title": "Severity", "enum": ["low", "high"]},
    },
    "required": ["severity"],
}
TICKET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string", "minLength": 1}},
    "required": ["title"],
}


@dataclass
class Tracker:
    """An issue tracker that counts what it is asked to do."""

    drafts: list[str] = field(default_factory=list)  # drafts opened, ever
    tickets: list[tuple[str, str]] = field(default_factory=list)  # (title, severity)

    def open_draft(self, title: str) -> int:
        self.drafts.append(title)
        return len(self.drafts)

    def file(self, title: str, severity: str) -> str:
        self.tickets.append((title, severity))
        return f"T-{len(self.tickets)}"


def ask_severity(title: str) -> ElicitRequest:
    return elicit_form(f"How bad is {title!r}?", SEVERITY_FORM)


async def open_ticket_legacy(ctx: LegacyToolContext, tracker: Tracker) -> str:
    title = ctx.arguments["title"]
    tracker.open_draft(title)  # before the question: fine when the tool runs once
    answer = await ctx.elicit(f"How bad is {title!r}?", SEVERITY_FORM)
    if answer.action != "accept":
        return "No ticket filed."
    return f"Filed {tracker.file(title, str((answer.content or {})['severity']))}: {title}."


# -- checkpoints -----------------------------------------------------------------------------------


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


def scripted_user(**content: Any) -> Callable[[ElicitRequestFormParams, Any], ElicitResult]:
    """A scripted user for checkpoints: accepts each form with the fields it asks for (from
    ``content``), declines a form that asks for none of them."""

    def answer(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
        fields = params.requested_schema.get("properties", {})
        wanted = {k: v for k, v in content.items() if k in fields}
        return (
            ElicitResult(action="accept", content=wanted)
            if wanted
            else ElicitResult(action="decline")
        )

    return answer


def _decline(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
    return ElicitResult(action="decline")


def _text(result: dict[str, Any]) -> str:
    return _kinds(result).removeprefix("complete: ")


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
            f"round 1 should return input_required; it returned {_kinds(first.result or {})!r}",
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
                outcomes[label] = _text(await client.call_tool("pick_seat", flight))
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
        "the original; a client without forms gets -32021.",
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
    if _text(result) != want:
        return Checkpoint("not yet", f"got {_text(result)!r}, want {want!r}")
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
        declined = _text(await client.call_tool("rent_bike", {"shop": "Velo"}))
    if problem := code.problem("rent_bike"):
        return problem
    if declined != "No bike booked.":
        return Checkpoint("not yet", f"after a decline: got {declined!r}, want 'No bike booked.'")
    return Checkpoint(
        "passed",
        "day, then hours, then the booking, in 3 rounds, each on a fresh instance: the day "
        "rode along in the state.",
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
    if not _text(result).startswith("Filed T-1"):
        return Checkpoint("not yet", f"got {_text(result)!r}; say which ticket was filed")
    code.case = "decline"
    async with McpClient.for_app(app, elicitation=_decline) as client:
        await client.call_tool("open_ticket", {"title": "Typo"})
    if problem := code.problem("open_ticket"):
        return problem
    if len(tracker.tickets) != 1 or len(tracker.drafts) > 1:
        return Checkpoint("not yet", "a declined call must leave nothing behind in the tracker")
    return Checkpoint(
        "passed",
        f"{code.runs} runs of the handler, one ticket, no stray drafts; a decline files nothing.",
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

    def __call__(self, ctx: RequestContext) -> None:
        declared = ctx.capabilities.supports_elicitation("form")
        try:
            self.gate(ctx)
        except McpError as exc:  # a refusal: the server sends it as it is
            self.runs.append((declared, exc))
            raise
        except Exception as exc:  # noted; the server would answer -32603 and log a traceback
            self.runs.append((declared, exc))
            raise McpError(-32603, "Internal error") from None
        self.runs.append((declared, None))

    def last(self) -> tuple[bool, BaseException | None]:
        return self.runs[-1] if self.runs else (False, None)


def _refusal_problem(exc: BaseException | None, who: str) -> str | None:
    """What is wrong with the gate's answer to a request that lacks form elicitation."""
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
            result = _text(await client.call_tool("guided_walk", town))
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
        if problem := _refusal_problem(watch.last()[1], label):
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
    if problem := _refusal_problem(exc, "a retry that no longer declares forms"):
        return Checkpoint("not yet", problem)
    return Checkpoint(
        "passed",
        "forms declared: 3 rounds and the booking; no forms, or URL mode only: -32021 with "
        f"requiredCapabilities (HTTP {status}); a retry without forms: refused as well.",
    )
