"""Lesson: a tool that takes several rounds and carries earlier answers in ``requestState``.

``book_table`` is the digest's worked exchange (§4.5):

* round 1 — returns ``input_required``: a form for party size and date;
* round 2 — the retry carries ``details``; the handler folds them into a **new** state and
  asks for confirmation (the next retry will carry only the *next* answer, MRTR-C6);
* round 3 — the retry carries ``confirm`` and the round-2 state; only now does it book.

The handler is re-entrant: it runs from the top on every round, and the verified state says
how far the conversation got. The core seals each state with an HMAC and binds it to this
tool, these arguments and this principal, so a client cannot edit the party size or replay the
state against another restaurant (MRTR-S4, MRTR-S5, SEC-5).

The one side effect (the booking) happens after the last answer (MIG-3). Integrity does not
stop a client from sending round 3 twice, so before booking the handler spends the round-3
state in the server's ledger with ``ctx.redeem_once()``: a replay is then refused like a forged
state (MRTR-S5d, SEC-7). The price: a client whose round-3 response got lost cannot ask again
for the booking reference. Where that matters, make the step idempotent instead — key it by a
nonce carried in the state and answer a replay with the booking it already made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocol.elicitation import validate_content
from ..protocol.models import ElicitRequest
from ..server import McpServer, RequestContext
from ..server.context import elicit_form
from .forms import explain

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


class ReservationBook:
    """The restaurant's bookings (in memory: a pretend booking system)."""

    def __init__(self) -> None:
        self.bookings: list[Booking] = []

    def book(self, restaurant: str, party: int, when: str) -> Booking:
        booking = Booking(f"BK-{len(self.bookings) + 1:04d}", restaurant, party, when)
        self.bookings.append(booking)
        return booking


def ask_details(restaurant: str, why: str | None = None) -> ElicitRequest:
    message = f"Booking {restaurant}: how many people, and when?"
    return elicit_form(f"{why} {message}" if why else message, DETAILS_FORM)


def ask_confirm(restaurant: str, state: dict[str, Any]) -> ElicitRequest:
    return elicit_form(f"Book {restaurant} for {state['party']} on {state['when']}?", CONFIRM_FORM)


def make_book_table(book: ReservationBook) -> Any:
    """The handler, closed over the reservation book it writes to."""

    async def book_table(ctx: RequestContext) -> Any:
        restaurant = ctx.arguments["restaurant"]
        state = ctx.state or {"step": "details"}  # verified state, or a fresh conversation

        if state["step"] == "details":
            details = ctx.elicitation("details")
            if details is None:  # round 1, or an answer went missing (MRTR-E4)
                return ctx.input_required({"details": ask_details(restaurant)}, state)
            if details.action != "accept":
                return f"Booking cancelled: no details given. Nothing was booked at {restaurant}."
            problems = validate_content(DETAILS_FORM, details.content)
            if problems:
                return ctx.input_required(
                    {"details": ask_details(restaurant, explain(problems))}, state
                )
            content = details.content or {}
            # Fold round 2's answers into the next state: round 3 will not resend them.
            state = {"step": "confirm", "party": int(content["party"]), "when": content["when"]}
            return ctx.input_required({"confirm": ask_confirm(restaurant, state)}, state)

        confirm = ctx.elicitation("confirm")
        if confirm is None:
            return ctx.input_required({"confirm": ask_confirm(restaurant, state)}, state)
        said_yes = (
            confirm.action == "accept"
            and not validate_content(CONFIRM_FORM, confirm.content)
            and (confirm.content or {}).get("ok") is True
        )
        if not said_yes:  # declined, cancelled, "ok": false, or an unusable answer
            return f"Booking cancelled. Nothing was booked at {restaurant}."

        # MIG-3: the only side effect, after the last answer, and once per state: a replay
        # of this round is refused here with -32602 before anything is booked (MRTR-S5d).
        await ctx.redeem_once()
        booking = book.book(restaurant, state["party"], state["when"])
        return (
            f"Booked {booking.restaurant} for {booking.party} on {booking.when} "
            f"(reference {booking.reference})."
        )

    return book_table


def register(server: McpServer, book: ReservationBook | None = None) -> ReservationBook:
    book = book or ReservationBook()
    server.tool(
        "book_table",
        description="Book a restaurant table: asks for party size and date, then confirms.",
        input_schema=RESTAURANT_SCHEMA,
        annotations={"destructiveHint": False, "idempotentHint": False},
    )(make_book_table(book))
    return book


def build_server() -> McpServer:
    server = McpServer("booking-example", instructions="Book restaurant tables.")
    register(server)
    return server
