"""Lesson: a tool that takes several rounds and carries earlier answers in ``requestState``.

``book_table`` is a three-round exchange (MRTR-0, MRTR-C6):

* round 1 — returns ``input_required``: a form for party size and date;
* round 2 — the retry carries ``details``; the handler folds them into a **new** state and
  asks for confirmation (the next retry will carry only the *next* answer, MRTR-C6);
* round 3 — the retry carries ``confirm`` and the round-2 state; only now does it book.

The handler is re-entrant: it runs from the top on every round, and the verified state says
how far the conversation got. The core seals each state (AEAD by default) and binds it to this
tool, these arguments and this principal, so a client cannot edit the party size or replay the
state against another restaurant (MRTR-S4, MRTR-S5, SEC-5).

The one side effect (the booking) happens after the last answer (MIG-3). Integrity does not
stop a client from sending round 3 twice, so the handler makes sure it books once. Two designs,
chosen with ``register(..., idempotent=...)``:

* **single use** (the default): before booking, the handler spends the round-3 state in the
  server's ledger with ``ctx.redeem_once()``; a replay is refused like a forged state
  (MRTR-S5d, SEC-7). The price: a client whose round-3 response was lost, and which sends the
  same request again (HTTP-26), gets an error, and never learns its booking reference.
* **idempotent**: round 2 puts a random nonce in the state it seals; round 3 books under that
  nonce, once (``ReservationBook.book_once``), and answers any repeat of itself with the booking
  it already made. The same retry gets the same reference; a new conversation gets a new nonce
  and is a new booking. The client cannot choose or change the nonce: it is inside the sealed
  state (MRTR-S4a). The nonce store must be shared by every instance that may serve the retry,
  and keep each nonce at least as long as a state can be accepted (TTL plus clock skew): the
  bookings are records in the server's ledger, which keeps them for good.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.context import elicit_form
from mrtr_kit.server.ledger import Ledger, MemoryLedger, Record

DETAILS_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "party": {
            "type": "integer",
            "title": "Party size",
            "minimum": 1,
            "maximum": 12,
            "default": 2,
        },
        "when": {"type": "string", "title": "Date", "format": "date"},
    },
    "required": ["party", "when"],
}

CONFIRM_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "title": "Book it?", "default": True}},
    "required": ["ok"],
}

RESTAURANT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"restaurant": {"type": "string", "minLength": 1}},
    "required": ["restaurant"],
}


@dataclass(frozen=True)
class Booking:
    reference: str
    restaurant: str
    party: int
    when: str


BOOKING = "booking"  # the kind of record a booking is kept as in the ledger


class ReservationBook:
    """The restaurant's bookings (a pretend booking system), kept as records in a ledger:
    the server's own, by default, so every instance that shares it shares the bookings."""

    def __init__(self, records: Ledger | None = None) -> None:
        self.records: Ledger = records or MemoryLedger()

    async def book(self, restaurant: str, party: int, when: str) -> Booking:
        """Book, with no questions asked: every call is a new booking."""
        booking, _ = await self._record(secrets.token_urlsafe(12), restaurant, party, when)
        return booking

    async def book_once(self, nonce: str, restaurant: str, party: int, when: str) -> Booking:
        """Book under ``nonce`` the first time; return that same booking on every later call.

        The ledger checks the nonce and records the booking in one atomic step, in the store
        every instance shares, so of concurrent calls with one nonce exactly one books.
        """
        booking, _ = await self._record(f"nonce:{nonce}", restaurant, party, when)
        return booking

    async def _record(
        self, key: str, restaurant: str, party: int, when: str
    ) -> tuple[Booking, bool]:
        body = json.dumps({"restaurant": restaurant, "party": party, "when": when})
        record, new = await self.records.record_once(BOOKING, key, body)
        return _booking(record), new

    async def booked_under(self, nonce: str) -> Booking | None:
        record = await self.records.record(BOOKING, f"nonce:{nonce}")
        return None if record is None else _booking(record)

    async def bookings(self) -> list[Booking]:
        return [_booking(r) for r in await self.records.records(BOOKING)]


def _booking(record: Record) -> Booking:
    body = json.loads(record.body)
    return Booking(f"BK-{record.seq:04d}", body["restaurant"], body["party"], body["when"])


def ended_text(restaurant: str, action: str | None) -> str:
    """The answer when the user did not go ahead: a decline (or "no" on the confirmation) is an
    explicit no, a cancel a form dismissed without a choice (ELIC-6); each in its own words."""
    if action == "decline":
        return f"You declined. Nothing was booked at {restaurant}."
    return f"No booking made: the form was dismissed. Nothing was booked at {restaurant}."


def confirm_question(restaurant: str, state: dict[str, Any]) -> str:
    return f"Book {restaurant} for {state['party']} on {state['when']}?"


def booked_text(booking: Booking) -> str:
    return (
        f"Booked {booking.restaurant} for {booking.party} on {booking.when} "
        f"(reference {booking.reference})."
    )


def make_book_table(book: ReservationBook, *, idempotent: bool = False) -> Any:
    """The handler, closed over the reservation book it writes to; ``idempotent`` picks how
    a repeated final round is answered (see the module's docstring)."""

    async def book_table(ctx: RequestContext) -> Any:
        restaurant = ctx.arguments["restaurant"]
        state = ctx.state or {"step": "details"}  # verified state, or a fresh conversation

        if state["step"] == "details":
            question = f"Booking {restaurant}: how many people, and when?"
            details = ctx.form("details", question, DETAILS_FORM, state=state)
            if details.needs_asking:  # round 1, a lost answer, or one that does not fit
                return details.ask()
            if not details.accepted:  # the kit finishes after a no (KIT; MRTR-S8 allows asking)
                return ended_text(restaurant, details.action)
            # Fold round 2's answers into the next state: round 3 will not resend them.
            party, when = details.content["party"], details.content["when"]
            state = {"step": "confirm", "party": party, "when": when}
            if idempotent:  # the key of this conversation's booking, sealed with the state
                state["nonce"] = secrets.token_urlsafe(16)
            # Round 2 carries no answer to this question yet: ask it, with the new state.
            ask = elicit_form(confirm_question(restaurant, state), CONFIRM_FORM)
            return ctx.input_required({"confirm": ask}, state)

        if idempotent:
            earlier = await book.booked_under(state["nonce"])
            if earlier is not None:  # a repeat of a round 3 that booked: the same answer
                return booked_text(earlier)

        confirm = ctx.form(
            "confirm", confirm_question(restaurant, state), CONFIRM_FORM, state=state
        )
        if confirm.needs_asking:  # a lost answer, or one that does not fit (ELIC-14)
            return confirm.ask()
        if not (confirm.accepted and confirm.content["ok"]):  # declined, cancelled, or no
            return ended_text(restaurant, "decline" if confirm.accepted else confirm.action)

        # MIG-3: the only side effect, after the last answer, and once.
        if idempotent:
            booking = await book.book_once(
                state["nonce"], restaurant, state["party"], state["when"]
            )
        else:
            # A replay of this round is refused here with -32602 before anything is booked
            # (MRTR-S5d).
            await ctx.redeem_once()
            booking = await book.book(restaurant, state["party"], state["when"])
        return booked_text(booking)

    return book_table


def register(
    server: McpServer, book: ReservationBook | None = None, *, idempotent: bool = False
) -> ReservationBook:
    book = book or ReservationBook(server.ledger)
    server.tool(
        "book_table",
        description="Book a restaurant table: asks for party size and date, then confirms.",
        input_schema=RESTAURANT_SCHEMA,
        annotations={"destructiveHint": False, "idempotentHint": False},
    )(make_book_table(book, idempotent=idempotent))
    return book


def build_server(state_keys: KeyRing | None = None, **options: Any) -> McpServer:
    """``state_keys`` seal its requestState: a fresh key for this process unless given
    (``serve`` passes the fleet's); ``options`` go to ``McpServer`` (codec, ledger, ...)."""
    server = McpServer(
        "booking-example",
        instructions="Book restaurant tables.",
        state_keys=state_keys or KeyRing.generate(),
        **options,
    )
    register(server)
    return server
