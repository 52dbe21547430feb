"""Lesson 03: three *wrong* ports of ``plan_trip``, one per porting trap. Do not copy these.

Each is what a quick port of ``plan_trip_legacy`` tends to look like, and each fails only
because an MRTR handler runs again, from the top, on every round:

* ``plan_trip_hold_first`` keeps the legacy "hold a room, then ask" order: the hold runs on
  every round, so one trip leaves stray holds behind (fix: MIG-3, side effects after the last
  answer, or idempotent ones).
* ``plan_trip_forgetful`` returns ``input_required`` without ``requestState``: a retry carries
  only the latest answers (MRTR-C6), so on round 3 the dates are gone and it asks for them
  again, and again (fix: MIG-2, carry earlier answers in ``requestState``).
* ``plan_trip_counter_keys`` names its question with a counter, as the legacy server numbered
  its requests: every re-run asks a *new* question, so the answer to the old one is never
  read (fix: questions that are pure functions of arguments and state).

``trip_planner.plan_trip`` is the correct port.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..server import KeyRing, McpServer, RequestContext
from .trip_planner import (
    CITY_SCHEMA,
    DATES_FORM,
    HotelDesk,
    accepted,
    ask_dates,
    ask_room,
    room_form,
)


def make_plan_trip_hold_first(desk: HotelDesk) -> Any:
    def plan_trip_hold_first(ctx: RequestContext) -> Any:
        city = ctx.arguments["city"]
        hold = desk.hold(city)  # TRAP: runs on every round, not once per trip
        state = ctx.state or {}
        if "nights" not in state:
            dates = ctx.elicitation("dates")
            if dates is None:
                return ctx.input_required({"dates": ask_dates(city)}, state)
            when = accepted(dates, DATES_FORM)
            if when is None:
                desk.release(hold)
                return f"Trip to {city} cancelled. Nothing was reserved."
            state = {"start": when["start"], "nights": when["nights"]}
        room = ctx.elicitation("room")
        if room is None:
            return ctx.input_required({"room": ask_room(city, state)}, state)
        choice = accepted(room, room_form(state["nights"]))
        if choice is None:
            desk.release(hold)
            return f"Trip to {city} cancelled. Nothing was reserved."
        return desk.reserve(
            city, state["start"], state["nights"], choice["room"], hold=hold
        ).summary()

    return plan_trip_hold_first


def make_plan_trip_forgetful(desk: HotelDesk) -> Any:
    def plan_trip_forgetful(ctx: RequestContext) -> Any:
        city = ctx.arguments["city"]
        dates = ctx.elicitation("dates")  # TRAP: only present on the round right after asking
        if dates is None:
            return ctx.input_required({"dates": ask_dates(city)})
        when = accepted(dates, DATES_FORM)
        if when is None:
            return f"Trip to {city} cancelled. Nothing was reserved."
        room = ctx.elicitation("room")
        if room is None:
            return ctx.input_required({"room": ask_room(city, when)})  # TRAP: no requestState
        choice = accepted(room, room_form(when["nights"]))
        if choice is None:
            return f"Trip to {city} cancelled. Nothing was reserved."
        return desk.reserve(city, when["start"], when["nights"], choice["room"]).summary()

    return plan_trip_forgetful


def make_plan_trip_counter_keys(desk: HotelDesk) -> Any:
    numbers = itertools.count(1)  # like the legacy server's request ids: 1, 2, 3, ...

    def plan_trip_counter_keys(ctx: RequestContext) -> Any:
        city = ctx.arguments["city"]
        key = f"dates-{next(numbers)}"  # TRAP: a different question on every run
        dates = ctx.elicitation(key)
        if dates is None:
            return ctx.input_required({key: ask_dates(city)}, {})
        return f"Got the dates for {city}; this line is never reached."

    return plan_trip_counter_keys


TRAPS = {
    "plan_trip_hold_first": make_plan_trip_hold_first,
    "plan_trip_forgetful": make_plan_trip_forgetful,
    "plan_trip_counter_keys": make_plan_trip_counter_keys,
}


def build_server(desk: HotelDesk | None = None) -> McpServer:
    """All three wrong ports on one server, sharing one hotel desk."""
    desk = desk or HotelDesk()
    server = McpServer(
        "trip-traps",
        instructions="Wrong ports of plan_trip, for lesson 03.",
        state_keys=KeyRing.generate(),  # one process: its states die with it
    )
    for name, make in TRAPS.items():
        server.tool(
            name, description=f"A wrong port of plan_trip ({name}).", input_schema=CITY_SCHEMA
        )(make(desk))
    return server
