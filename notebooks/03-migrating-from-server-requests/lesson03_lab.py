"""Lesson 03 — migrating from server-initiated requests: the lab the notebook's cells call.

The tests call the same functions. The fleet runs of ``plan_trip`` (``legacy_trip``,
``mrtr_trip``, ``run_flows``), which lesson 00 shows too, are in ``mrtr_course.trips``; the
checkpoints are in ``lesson03_checkpoints.py``, beside this file.

* showing code: ``show_source`` and ``side_by_side`` (a 2025-11-25 handler beside its port);
* ``crash_first``: an answer handler that crashes an instance of the fleet mid-call;
* the official SDK: ``start_sdk_servers`` (its ports, a process each) and ``sdk_client_trip``
  (its client calling a port);
* the traps of porting, run in this process: ``run_trap``;
* the capability gate the learner writes: ``guided_walk``, the tool it guards
  (``make_guided_walk``), and ``without_forms``, the refusal on the wire;
* exercise 2: the legacy tool to port (``pick_seat_legacy``) and what it needs (its form,
  question and text). The practice ports (``rent_bike_legacy``, ``open_ticket_legacy``) are in
  ``../03c-porting-practice-OPTIONAL/lesson03c_lab.py``.
"""

from __future__ import annotations

import contextlib
import html
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mrtr_course.examples import trip_planner, trip_traps
from mrtr_course.examples.trip_planner import HotelDesk, traveller
from mrtr_course.fleet import Fleet, start_processes
from mrtr_course.legacy import LegacyToolContext
from mrtr_course.plain.trace_view import wire_json
from mrtr_course.refund_lab.lab import RawCaller
from mrtr_course.trips import result_line
from mrtr_kit.client import McpClient, McpRemoteError, TooManyRounds
from mrtr_kit.protocol.elicitation import validate_content
from mrtr_kit.protocol.models import ElicitRequest, ElicitRequestFormParams, ElicitResult
from mrtr_kit.server import RequestContext
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


# -- the fleet: a crash mid-call -------------------------------------------------------------------


def crash_first(fleet: Fleet, name: str, answers: Any = None) -> Any:
    """An answer handler that crashes instance ``name`` (SIGKILL) when the first question
    arrives, then answers like ``traveller``: the instance dies while the user is thinking."""
    answer = answers or traveller()

    def crash_then_answer(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
        if fleet[name].running:
            fleet[name].crash()
        return answer(params, ctx)

    return crash_then_answer


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
    repeat: str | None = None  # the answer to the final retry sent again, if it was

    def __repr__(self) -> str:
        asked = " | ".join(", ".join(keys) or "-" for keys in self.asked)
        again = f"\n  the final retry again: {self.repeat}" if self.repeat is not None else ""
        return (
            f"{self.name}: {len(self.asked)} rounds\n"
            f"  asked per round: {asked}\n"
            f"  outcome: {self.outcome}{again}\n"
            f"  hotel desk: {self.desk.holds_placed} holds placed, {len(self.desk.holds)} still "
            f"open, {len(self.desk.reservations)} reservation(s)"
        )


async def run_trap(name: str, *, final_twice: bool = False) -> TrapRun:
    """Run one of ``trip_traps.TRAPS`` (or ``plan_trip``, the right port) once, in process.

    ``final_twice``: then send the last round's request once more, under a fresh id, as a
    client does whose response was lost on the way (HTTP-26)."""
    desk = HotelDesk()
    server = trip_traps.build_server(desk)
    trip_planner.register(server, desk)
    app = create_app(server)
    repeat = None
    async with McpClient.for_app(app, elicitation=traveller()) as client:
        try:
            result = await client.call_tool(name, {"city": "Lisbon"})
            outcome = result_line(result)
        except TooManyRounds as exc:
            outcome = (
                f"TooManyRounds: the client gave up after {exc.max_rounds} rounds, "
                "the kit's round cap: MRTR-C7 (KIT)"
            )
        calls = [record for record in client.trace if record.method == "tools/call"]
        asked = [
            list(((record.response or {}).get("result") or {}).get("inputRequests") or {})
            for record in calls
        ]
    if final_twice:
        caller = RawCaller.for_app(app)
        try:
            last = calls[-1].request["params"]
            again = await caller.call_tool(
                name,
                last["arguments"],
                request_state=last.get("requestState"),
                input_responses=last.get("inputResponses"),
            )
            repeat = str(again)
        finally:
            await caller.aclose()
    return TrapRun(name, asked, outcome, desk, repeat)


# -- the capability gate (exercise 1) --------------------------------------------------------------

FORMS_NEEDED: dict[str, Any] = {"elicitation": {"form": {}}}  # requiredCapabilities (ERR-1)
WALK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"town": {"type": "string", "minLength": 1}},
    "required": ["town"],
}
DAY_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"day": {"type": "string", "title": "Day", "format": "date"}},
    "required": ["day"],
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
    capability gate, runs where the tool is about to ask, on every round that asks (CAP-2,
    CAP-4): a final retry that needs no more input is never refused for a form it will not
    show."""

    def guided_walk(ctx: RequestContext) -> Any:
        town = ctx.arguments["town"]
        state = ctx.state or {}
        if "day" not in state:
            day = ctx.form("day", f"Which day in {town}?", DAY_FORM, state=state)
            if day.needs_asking:
                require_forms(ctx)  # about to ask with a form: this request must show one
                return day.ask()
            if not day.accepted:
                return f"No walk booked in {town}."
            state = {"day": day.content["day"]}
        people = ctx.form("people", f"How many people on {state['day']}?", PEOPLE_FORM, state=state)
        if people.needs_asking:
            require_forms(ctx)
            return people.ask()
        if not people.accepted:
            return f"No walk booked in {town}."
        return walk_text(town, state["day"], people.content["people"])

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
