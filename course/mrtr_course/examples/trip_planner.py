"""Lesson 03: one tool, ``plan_trip``, written the 2025-11-25 way and ported to MRTR.

``plan_trip(city)`` asks two questions — when, then which room (the second question uses the
first answer) — and reserves a hotel room. Both versions live here so the lesson can run and
show them side by side:

* ``plan_trip_legacy`` — push style: ``await ctx.elicit(...)`` twice, in the middle of the code.
  It checks the *session's* capabilities and holds a room before asking. Served by
  ``mrtr_course.legacy``; on several instances it needs sticky routing.
* ``plan_trip`` — the MRTR port, a re-entrant handler run once per round:

  - MIG-2: each ``await`` became "return ``input_required``; on re-entry read the answer", and
    the first answer travels to the next round inside ``requestState``;
  - MIG-3: the hold before the questions is gone; the reservation happens after the last
    answer, and **once**: round 2 seals a random nonce into the state, and the reservation is
    made under it, so a final retry that arrives twice (HTTP-26: a client whose response was
    lost sends it again) gets the same reservation back, not a second one (as 02b teaches);
  - MIG-4: capabilities come from *this* request, on every round, checked where the handler
    is about to ask (CAP-2): a final retry that needs no more input is never refused;
  - ``ctx.form(key, message, schema, state=...)`` reads each answer, checked against its form
    (ELIC-14); ``.ask()`` asks, or asks again saying what was wrong (MRTR-E4);
  - what must stay the same from one run to the next is the key of each question and what an
    answer under it means (its fields and their types): the run that reads ``"dates"`` expects
    what the run that asked under ``"dates"`` asked for. The message may change.

The hotel desk is in-memory, one per process: enough to count side effects in a lesson. It
stands for the hotel's own booking system, which every instance of a real fleet shares; the
nonce store must be that shared system (or a shared ledger), never an instance's memory.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from mrtr_course.legacy import LegacyServer, LegacyToolContext, LocalSessions, SignedSessions
from mrtr_course.legacy.sessions import SessionStore
from mrtr_kit.protocol import errors
from mrtr_kit.protocol.elicitation import checked_content
from mrtr_kit.protocol.models import ElicitRequestFormParams, ElicitResult
from mrtr_kit.server import McpServer, RequestContext
from mrtr_kit.server.context import FormAnswer, InputRequired
from mrtr_kit.server.keyring import KeyRing, derive_key

CITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "minLength": 1}},
    "required": ["city"],
}

DATES_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "start": {"type": "string", "title": "Arrival", "format": "date"},
        "nights": {"type": "integer", "title": "Nights", "minimum": 1, "maximum": 14, "default": 3},
    },
    "required": ["start", "nights"],
}

ROOM_PRICES = {"single": 80, "double": 120, "suite": 260}  # euros per night


def room_form(nights: int) -> dict[str, Any]:
    """The second question depends on the first answer: prices for that many nights."""
    options = [
        {"const": room, "title": f"{room.capitalize()}, {price * nights} EUR"}
        for room, price in ROOM_PRICES.items()
    ]
    room = {"type": "string", "title": "Room", "oneOf": options, "default": "double"}
    return {"type": "object", "properties": {"room": room}, "required": ["room"]}


def dates_question(city: str) -> str:
    return f"When are you going to {city}?"


def room_question(city: str, start: str, nights: int) -> str:
    return f"{nights} nights in {city} from {start}: which room?"


def ended_text(city: str, action: str | None) -> str:
    """What the tool answers when the user did not accept: a decline is the user's explicit
    "no", a cancel a form dismissed without a choice (ELIC-6); each gets its own words."""
    if action == "decline":
        return f"You declined: no trip to {city} planned. Nothing was reserved."
    return f"Trip to {city} not planned: the form was dismissed. Nothing was reserved."


def accepted(answer: ElicitResult, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The legacy handler's check: the answer's content if the user accepted and it fits the
    form (ELIC-14), else None. (The MRTR port reads its answers with ``ctx.form``.)

    Only the form's own fields, checked, ``nights`` as an ``int`` even if it came as ``3.0``.
    """
    if answer.action != "accept":
        return None
    content, problems = checked_content(schema, answer.content)
    return None if problems else content


@dataclass(frozen=True)
class Reservation:
    city: str
    start: str
    nights: int
    room: str

    @property
    def price(self) -> int:
        return ROOM_PRICES[self.room] * self.nights

    def summary(self) -> str:
        return (
            f"Reserved a {self.room} room in {self.city}: {self.nights} nights "
            f"from {self.start}, {self.price} EUR."
        )


@dataclass
class HotelDesk:
    """The hotel's side of things, in this process: holds and reservations, counted."""

    holds: dict[int, str] = field(default_factory=dict)  # open holds: number -> city
    holds_placed: int = 0
    reservations: list[Reservation] = field(default_factory=list)
    by_key: dict[str, Reservation] = field(default_factory=dict)  # idempotency key -> booking

    def hold(self, city: str) -> int:
        """Keep a room aside while the traveller decides (the legacy tool does this first)."""
        self.holds_placed += 1
        self.holds[self.holds_placed] = city
        return self.holds_placed

    def release(self, hold: int) -> None:
        self.holds.pop(hold, None)

    def reserve(
        self,
        city: str,
        start: str,
        nights: int,
        room: str,
        *,
        hold: int | None = None,
        key: str | None = None,
    ) -> Reservation:
        """Reserve a room. With ``key`` (an idempotency key), the first call reserves and
        every later call with the same key returns that reservation: a repeat books nothing."""
        if key is not None and key in self.by_key:
            return self.by_key[key]
        if hold is not None:
            self.release(hold)  # the held room becomes the reservation
        reservation = Reservation(city, start, nights, room)
        self.reservations.append(reservation)
        if key is not None:
            self.by_key[key] = reservation
        return reservation


# -- before: 2025-11-25, push style ------------------------------------------------------------


def make_plan_trip_legacy(desk: HotelDesk) -> Any:
    async def plan_trip_legacy(ctx: LegacyToolContext) -> str:
        city = ctx.arguments["city"]
        if not ctx.session.supports_elicitation():  # fixed at initialize, for the session
            return f"This client cannot show forms, so I cannot plan a trip to {city}."
        hold = desk.hold(city)  # a side effect before the first question
        dates = await ctx.elicit(dates_question(city), DATES_FORM)  # waits in this process
        when = accepted(dates, DATES_FORM)
        if when is None:
            desk.release(hold)
            return ended_text(city, dates.action)
        start, nights = when["start"], when["nights"]
        form = room_form(nights)
        room = await ctx.elicit(room_question(city, start, nights), form)  # waits again
        choice = accepted(room, form)
        if choice is None:
            desk.release(hold)
            return ended_text(city, room.action)
        return desk.reserve(city, start, nights, choice["room"], hold=hold).summary()

    return plan_trip_legacy


# -- after: 2026-07-28, MRTR ----------------------------------------------------------------------


def ask(ctx: RequestContext, question: FormAnswer[Any]) -> InputRequired:
    """Ask ``question`` (again), once this request shows it can show a form: capabilities are
    this request's, checked where the handler asks (MIG-4, CAP-2), so a final retry that needs
    no more input is never refused. Round 1, a lost answer, or one that does not fit (MRTR-E4)."""
    if not ctx.capabilities.supports_elicitation("form"):
        raise errors.missing_capability({"elicitation": {"form": {}}})
    return question.ask()


def make_plan_trip(desk: HotelDesk) -> Any:
    def plan_trip(ctx: RequestContext) -> Any:
        city = ctx.arguments["city"]
        state = ctx.state or {}  # MIG-2: what earlier rounds learned (verified requestState)
        if "nights" not in state:
            dates = ctx.form("dates", dates_question(city), DATES_FORM, state=state)
            if dates.needs_asking:  # gate on this request's capabilities, then ask (MIG-4)
                return ask(ctx, dates)
            if not dates.accepted:  # declined or cancelled: the kit does not ask again (KIT)
                return ended_text(city, dates.action)
            state = {
                "start": dates.content["start"],
                "nights": dates.content["nights"],
                "nonce": secrets.token_urlsafe(16),  # this trip's booking key, sealed (MIG-3)
            }
        room = ctx.form(
            "room",
            room_question(city, state["start"], state["nights"]),
            room_form(state["nights"]),
            state=state,  # MIG-2: the dates (and the nonce) ride along in the new requestState
        )
        if room.needs_asking:
            return ask(ctx, room)  # the room form, with the dates in the state
        if not room.accepted:
            return ended_text(city, room.action)
        # MIG-3: the only side effect, after the last answer, and once: a repeated final
        # retry (HTTP-26) gets the reservation made under this nonce, not a second one.
        reservation = desk.reserve(
            city, state["start"], state["nights"], room.content["room"], key=state["nonce"]
        )
        return reservation.summary()

    return plan_trip


DESCRIPTION = "Plan a trip: asks when and which room, then reserves a hotel room."


def register(server: McpServer, desk: HotelDesk | None = None) -> HotelDesk:
    desk = desk or HotelDesk()
    server.tool("plan_trip", description=DESCRIPTION, input_schema=CITY_SCHEMA)(
        make_plan_trip(desk)
    )
    return desk


def build_server(
    desk: HotelDesk | None = None, state_keys: KeyRing | None = None, **options: Any
) -> McpServer:
    """The MRTR port. Instances of a fleet share one key ring (``serve`` passes the one of
    ``MRTR_KIT_STATE_KEY``), so a state minted by one instance verifies on any other; without
    ``state_keys``, a fresh key for this process. ``options`` go to ``McpServer``."""
    server = McpServer(
        "trip-planner",
        instructions="Plans trips; asks you two questions.",
        state_keys=state_keys or KeyRing.generate(),
        **options,
    )
    register(server, desk)
    return server


def build_legacy_server(
    desk: HotelDesk | None = None,
    *,
    shared_sessions: bool = True,
    answer_timeout_s: float = 300.0,
) -> LegacyServer:
    """The 2025-11-25 original. ``shared_sessions`` signs session ids with the fleet's key
    (``MRTR_KIT_STATE_KEY``) so every instance accepts them; otherwise they live in-process."""
    if shared_sessions:
        # The fleet's secret, with its own subkey: one secret never serves two purposes.
        secret = (KeyRing.from_env() or KeyRing.generate()).primary.secret
        sessions: SessionStore = SignedSessions(derive_key(secret, "legacy session ids"))
    else:
        sessions = LocalSessions()
    server = LegacyServer(
        "trip-planner-legacy",
        sessions=sessions,
        answer_timeout_s=answer_timeout_s,
        instructions="Plans trips; asks you two questions.",
    )
    server.tool("plan_trip", description=DESCRIPTION, input_schema=CITY_SCHEMA)(
        make_plan_trip_legacy(desk or HotelDesk())
    )
    return server


def traveller(
    start: str = "2026-09-01", nights: int = 3, room: str = "double", *, accept: bool = True
) -> Any:
    """A scripted user for both clients: answers the dates form, then the room form."""

    def answer(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
        if not accept:
            return ElicitResult(action="decline")
        fields = params.requested_schema.get("properties", {})
        if "nights" in fields:
            return ElicitResult(action="accept", content={"start": start, "nights": nights})
        if "room" in fields:
            return ElicitResult(action="accept", content={"room": room})
        return ElicitResult(action="decline")

    return answer
