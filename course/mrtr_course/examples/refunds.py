"""Lesson 02: tools whose requestState decides something that matters.

``request_refund`` takes two rounds:

* round 1 - checks that the order belongs to the signed-in user, applies the refund policy
  and asks "Refund $124.50?"; the **approved amount** and an internal risk note travel to
  round 2 in ``requestState``;
* round 2 - on "yes", pays the amount in the state to the signed-in user, once.

``export_orders`` decides in round 1 whether the caller is an **admin** and carries that flag
in its state; round 2 exports every customer's orders for an admin, only yours otherwise.

Round 2 of each trusts its state and does not check again. That is the point of the lesson:
the trust is safe only because the core enforces, before a handler sees the state,

* integrity - nobody edited the amount or the flag (MRTR-S4a, the codec);
* the principal - this user is the one round 1 checked (MRTR-S5a);
* the request - these are round 1's arguments, so ``order_id`` is the order approved
  (MRTR-S5c);
* freshness - the approval is recent (MRTR-S5b);
* single use - ``ctx.redeem_once()`` spends the approval in the ledger before paying
  (MRTR-S5d).

Single use is about *states*: it stops one approval being paid twice, but round 1 issues a new
approval, with a new token id, every time it is asked. "One refund per order" is a rule about
*orders*, so it is kept where the payouts are recorded: ``RefundDesk.pay_once`` pays under an
idempotency key made from the order id, and the ledger that every instance shares (the
server's, by default) checks and records the key in one step. Of any number of approvals for
one order, redeemed one after another or at the same instant, on one instance or on several,
exactly one pays. (In a database: a unique key on the payouts table, written in the same
transaction as the payout; with a payment provider, its idempotency key.) Round 1 also
refuses an order that was refunded already, but that check is for the user; two approvals can
pass it before either pays.

Before acting on an accepted answer, the handlers check it against the form they sent (ELIC-14):
``{"ok": "false"}`` is a string, not a yes, and gets the question again with the problem named.

``mrtr_course.refund_lab.lab`` (lessons 02, 02a and 02b) builds this server with each protection
switched off in turn.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from mrtr_kit.protocol.models import CallToolResult, TextContent
from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.context import FormAnswer, elicit_form
from mrtr_kit.server.ledger import Ledger, MemoryLedger, Record

CONFIRM_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "title": "Go ahead?", "default": True}},
    "required": ["ok"],
}

ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "pattern": "^[A-Z]-[0-9]{4}$"}},
    "required": ["order_id"],
}

FULL_REFUND_DAYS = 30  # the policy: full refund within 30 days of delivery, half after


@dataclass(frozen=True)
class Order:
    id: str
    customer: str
    item: str
    paid_cents: int
    days_since_delivery: int
    risk_note: str  # internal: the customer must never see it (SEC-8)


@dataclass(frozen=True)
class Payout:
    reference: str
    principal: str
    order_id: str
    cents: int


ORDERS = (
    Order("A-1001", "alice", "Espresso machine", 24900, 45, "2 refunds in 90 days: watch"),
    Order("A-1002", "alice", "Milk frother", 1990, 3, "no refunds on file"),
    Order("B-2001", "bob", "Standing desk", 41900, 10, "VIP: never refuse"),
    Order("M-3001", "mallory", "USB cable", 499, 2, "account opened yesterday"),
)


def money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


def refund_policy(order: Order) -> int:
    """The approved refund in cents: all of it within 30 days of delivery, half after."""
    if order.days_since_delivery <= FULL_REFUND_DAYS:
        return order.paid_cents
    return order.paid_cents // 2


PAYOUT = "payout"  # the kind of record a payout is kept as in the ledger


class RefundDesk:
    """The shop's orders, and the payouts made so far (the lesson's "bank").

    The payouts are records in a ledger (``ledger.py``): the server's own, by default, so a
    fleet whose instances share their ledger (one SQLite file, one Redis) shares its payouts
    too, and "one refund per order" holds on every instance at once.
    """

    def __init__(
        self,
        records: Ledger | None = None,
        orders: tuple[Order, ...] = ORDERS,
        admins: tuple[str, ...] = ("carol",),
    ):
        self.records: Ledger = records or MemoryLedger()
        self.orders = {order.id: order for order in orders}
        self.admins = frozenset(admins)

    def orders_of(self, principal: str) -> list[Order]:
        return [o for o in self.orders.values() if o.customer == principal]

    async def pay(self, principal: str, order_id: str, cents: int) -> Payout:
        """Pay, with no questions asked: every call is a new payout."""
        payout, _ = await self._record_payout(secrets.token_urlsafe(12), principal, order_id, cents)
        return payout

    async def pay_once(self, principal: str, order_id: str, cents: int) -> tuple[Payout, bool]:
        """Refund ``order_id`` at most once: ``(payout, True)`` the first time; afterwards the
        first payout and ``False``, and nothing is paid.

        The idempotency key is the order, so it does not matter which approval, state, user
        or instance asks. The ledger checks the key and records the payout in one atomic
        step, in the store every instance shares, so of concurrent calls exactly one pays.
        A database does the same with a unique key on the payouts table, written in the same
        transaction as the payout.
        """
        return await self._record_payout(f"refund:{order_id}", principal, order_id, cents)

    async def _record_payout(
        self, key: str, principal: str, order_id: str, cents: int
    ) -> tuple[Payout, bool]:
        body = json.dumps({"principal": principal, "order_id": order_id, "cents": cents})
        record, new = await self.records.record_once(PAYOUT, key, body)
        return _payout(record), new

    async def refund_of(self, order_id: str) -> Payout | None:
        """The payout ``pay_once`` made for this order, if any."""
        record = await self.records.record(PAYOUT, f"refund:{order_id}")
        return None if record is None else _payout(record)

    async def payouts(self) -> list[Payout]:
        return [_payout(r) for r in await self.records.records(PAYOUT)]

    async def paid_cents(self) -> int:
        return sum(p.cents for p in await self.payouts())

    async def summary(self, shown: int = 3) -> str:
        """Count and total, then the first ``shown`` payouts."""
        payouts = await self.payouts()
        total = sum(p.cents for p in payouts)
        lines = [f"{len(payouts)} payout(s), {money(total)} in total"]
        for p in payouts[:shown]:
            lines.append(f"  {p.reference}: {money(p.cents)} to {p.principal} for {p.order_id}")
        if len(payouts) > shown:
            lines.append(f"  ... and {len(payouts) - shown} more")
        return "\n".join(lines)


def _payout(record: Record) -> Payout:
    body = json.loads(record.body)
    return Payout(f"P-{record.seq:04d}", body["principal"], body["order_id"], body["cents"])


def refused(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=True)


def already_refunded_text(payout: Payout) -> str:
    return (
        f"Order {payout.order_id} was refunded already ({money(payout.cents)}, payout "
        f"{payout.reference}). Nothing more was paid."
    )


def said_yes(confirm: FormAnswer) -> bool:
    """An accepted ``{"ok": true}``; declined, cancelled and ``{"ok": false}`` are a no.

    ``confirm.content`` is checked against the form (ELIC-14): ``bool("false")`` is True, but
    the string ``"false"`` never gets this far, it is asked again.
    """
    return confirm.accepted and confirm.content["ok"] is True


def make_request_refund(desk: RefundDesk, *, single_use: bool, one_per_order: bool) -> Any:
    async def request_refund(ctx: RequestContext) -> Any:
        if ctx.principal is None:
            return refused("Sign in first: refunds are paid to an authenticated user.")
        order_id = ctx.arguments["order_id"]  # round 1's arguments on every round (MRTR-S5c)

        if ctx.state is None:  # round 1: check the order, decide the amount
            order = desk.orders.get(order_id)
            if order is None or order.customer != ctx.principal:
                return refused(f"There is no order {order_id} on your account.")
            earlier = await desk.refund_of(order_id) if one_per_order else None
            if earlier is not None:  # for the user only: pay_once is what guarantees it
                return already_refunded_text(earlier)
            cents = refund_policy(order)
            state = {"order": order.id, "approved_cents": cents, "note": order.risk_note}
            ask = elicit_form(f"Refund {money(cents)} for {order.item} ({order.id})?", CONFIRM_FORM)
            return ctx.input_required({"confirm": ask}, state)

        # Round 2: the verified state says what round 1 approved; nothing is checked again.
        cents = ctx.state["approved_cents"]
        question = f"Refund {money(cents)} for order {order_id}?"
        confirm = ctx.form("confirm", question, CONFIRM_FORM, state=ctx.state)
        if confirm.needs_asking:  # missing or unusable: ask again, same approval (MRTR-E4)
            return confirm.ask()
        if not said_yes(confirm):  # a decline or "no" is a no; a cancel, a dismissed form (ELIC-6)
            if confirm.cancelled:
                return f"No refund: the form was dismissed. Nothing was paid for {order_id}."
            return f"You declined. Nothing was paid for {order_id}."
        if single_use:
            await ctx.redeem_once()  # MRTR-S5d: spend the approval before paying, never after
        if one_per_order:  # one refund per order, whichever approval asks (idempotency key)
            # If the ledger fails right here, after the spend, the client gets -31000 and
            # nothing is paid; this approval is spent, so its retry is refused, and asking
            # again (round 1) issues a new approval, which pays: no payout is recorded yet.
            payout, new = await desk.pay_once(ctx.principal, order_id, cents)
            if not new:
                return already_refunded_text(payout)
        else:
            payout = await desk.pay(ctx.principal, order_id, cents)
        return (
            f"Refunded {money(cents)} to {ctx.principal} for order {order_id} "
            f"(payout {payout.reference})."
        )

    return request_refund


def make_export_orders(desk: RefundDesk) -> Any:
    def export_orders(ctx: RequestContext) -> Any:
        if ctx.principal is None:
            return refused("Sign in first: the export shows your orders.")

        if ctx.state is None:  # round 1: decide who may see what
            admin = ctx.principal in desk.admins
            what = "every customer's orders" if admin else "your orders"
            ask = elicit_form(f"Export {what}?", CONFIRM_FORM)
            return ctx.input_required({"confirm": ask}, {"admin": admin})

        confirm = ctx.form("confirm", "Export?", CONFIRM_FORM, state=ctx.state)
        if confirm.needs_asking:
            return confirm.ask()
        if not said_yes(confirm):
            return "Export cancelled."
        # Round 2 trusts the admin flag round 1 put in the state (MRTR-S4a keeps it honest).
        rows = desk.orders.values() if ctx.state["admin"] else desk.orders_of(ctx.principal)
        lines = [f"{o.id}  {o.customer:8} {o.item:17} {money(o.paid_cents):>8}" for o in rows]
        return "\n".join(lines) or "No orders."

    return export_orders


def register(
    server: McpServer,
    desk: RefundDesk | None = None,
    *,
    single_use: bool = True,
    one_per_order: bool = True,
) -> RefundDesk:
    """Add both tools to ``server``, paying from ``desk`` (by default one that keeps its
    payouts in the server's ledger). Switch ``single_use`` (the spent states) or
    ``one_per_order`` (the idempotency key on the order) off only to show what each stops."""
    desk = desk or RefundDesk(server.ledger)
    server.tool(
        "request_refund",
        description="Refund an order of yours: says how much the policy allows, then pays it.",
        input_schema=ORDER_SCHEMA,
        # Repeating a call adds nothing once each order is refunded at most once.
        annotations={"destructiveHint": False, "idempotentHint": one_per_order},
    )(make_request_refund(desk, single_use=single_use, one_per_order=one_per_order))
    server.tool(
        "export_orders",
        description="Export your orders (an admin gets every customer's).",
        annotations={"readOnlyHint": True},
    )(make_export_orders(desk))
    return desk


def build_server(state_keys: KeyRing | None = None, **options: Any) -> McpServer:
    """``state_keys`` seal its requestState: a fresh key for this process unless given
    (``serve`` passes the fleet's); ``options`` go to ``McpServer`` (codec, ledger, ...)."""
    server = McpServer(
        "refunds-example",
        instructions="Refunds for the orders of signed-in users.",
        state_keys=state_keys or KeyRing.generate(),
        **options,
    )
    register(server)
    return server
