"""Lesson 03: four *wrong* ports of ``plan_trip``, one per porting trap. Do not copy these.

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
  read (fix: keep each question's key, and what an answer under it means, the same from
  one run to the next; the message may change).
* ``plan_trip_books_every_retry`` puts its side effect after the last answer (MIG-3) and
  stops there: a final retry that arrives twice (HTTP-26: the client re-sends a request whose
  response it lost) reserves twice (fix: book under a key sealed in the state, once).

``trip_planner.plan_trip`` is the correct port.
"""

from __future__ import annotations

import itertools
from typing import Any

from mrtr_course.examples.trip_planner import (
    CITY_SCHEMA,
    DATES_FORM,
    HotelDesk,
    dates_question,
    ended_text,
    room_form,
    room_question,
)
from mrtr_kit.server import KeyRing, McpServer, RequestContext


def make_plan_trip_hold_first(desk: HotelDesk) -> Any:
    def plan_trip_hold_first(ctx: RequestContext) -> Any:
        city = ctx.arguments["city"]
        hold = desk.hold(city)  # TRAP: runs on every round, not once per trip
        state = ctx.state or {}
        if "nights" not in state:
            dates = ctx.form("dates", dates_question(city), DATES_FORM, state=state)
            if dates.needs_asking:
                return dates.ask()
            if not dates.accepted:
                desk.release(hold)
                return ended_text(city, dates.action)
            state = {"start": dates.content["start"], "nights": dates.content["nights"]}
        question = room_question(city, state["start"], state["nights"])
        room = ctx.form("room", question, room_form(state["nights"]), state=state)
        if room.needs_asking:
            return room.ask()
        if not room.accepted:
            desk.release(hold)
            return ended_text(city, room.action)
        return desk.reserve(
            city, state["start"], state["nights"], room.content["room"], hold=hold
        ).summary()

    return plan_trip_hold_first


def make_plan_trip_forgetful(desk: HotelDesk) -> Any:
    def plan_trip_forgetful(ctx: RequestContext) -> Any:
        city = ctx.arguments["city"]
        # TRAP: the dates answer is only present on the round right after asking
        dates = ctx.form("dates", dates_question(city), DATES_FORM)
        if dates.needs_asking:
            return dates.ask()
        if not dates.accepted:
            return ended_text(city, dates.action)
        when = dates.content
        question = room_question(city, when["start"], when["nights"])
        # TRAP: the dates are not kept in the state for the next round
        room = ctx.form("room", question, room_form(when["nights"]))
        if room.needs_asking:
            return room.ask()
        if not room.accepted:
            return ended_text(city, room.action)
        return desk.reserve(city, when["start"], when["nights"], room.content["room"]).summary()

    return plan_trip_forgetful


def make_plan_trip_counter_keys(desk: HotelDesk) -> Any:
    numbers = itertools.count(1)  # like the legacy server's request ids: 1, 2, 3, ...

    def plan_trip_counter_keys(ctx: RequestContext) -> Any:
        city = ctx.arguments["city"]
        key = f"dates-{next(numbers)}"  # TRAP: a different question on every run
        dates = ctx.form(key, dates_question(city), DATES_FORM, state={})
        if dates.needs_asking:
            return dates.ask()
        return f"Got the dates for {city}; this line is never reached."

    return plan_trip_counter_keys


def make_plan_trip_books_every_retry(desk: HotelDesk) -> Any:
    def plan_trip_books_every_retry(ctx: RequestContext) -> Any:
        city = ctx.arguments["city"]
        state = ctx.state or {}
        if "nights" not in state:
            dates = ctx.form("dates", dates_question(city), DATES_FORM, state=state)
            if dates.needs_asking:
                return dates.ask()
            if not dates.accepted:
                return ended_text(city, dates.action)
            state = {"start": dates.content["start"], "nights": dates.content["nights"]}
        question = room_question(city, state["start"], state["nights"])
        room = ctx.form("room", question, room_form(state["nights"]), state=state)
        if room.needs_asking:
            return room.ask()
        if not room.accepted:
            return ended_text(city, room.action)
        # TRAP: after the last answer, but every time the final retry arrives
        return desk.reserve(city, state["start"], state["nights"], room.content["room"]).summary()

    return plan_trip_books_every_retry


TRAPS = {
    "plan_trip_hold_first": make_plan_trip_hold_first,
    "plan_trip_forgetful": make_plan_trip_forgetful,
    "plan_trip_counter_keys": make_plan_trip_counter_keys,
    "plan_trip_books_every_retry": make_plan_trip_books_every_retry,
}


def build_server(desk: HotelDesk | None = None) -> McpServer:
    """All four wrong ports on one server, sharing one hotel desk."""
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
