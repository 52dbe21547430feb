"""The two examples whose side effect must happen once: the refund desk (lesson 02) and the
table booking. What "once" means differs, and each test names the rule it checks:

* MRTR-S5d / SEC-7: a state that must be consumed at most once is spent in a server-side ledger.
  That stops *one state* being used twice; it does not stop the server issuing a second state.
* One refund per order is a business invariant, not a property of any state: it is kept by an
  idempotency key on the order, checked and recorded in one step with the payout (MIG-3 asks
  for side effects that are idempotent).
* A lost final response: with a ledger, the same retry is refused; with a nonce in the state
  (the idempotent design), the same retry gets the same booking back (HTTP-26: a client that
  lost a response sends the request again).
* ELIC-14: the server validates an accepted answer against its requestedSchema before acting
  on it, so ``{"ok": "false"}`` (a string) is not a yes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mrtr_course.examples import booking, refunds
from mrtr_kit.server import McpServer
from mrtr_kit.server.ledger import MemoryLedger
from tests.helpers import error, request, result, run

FORM_CAPS = {"elicitation": {"form": {}}}
YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


def call(
    server: McpServer,
    name: str,
    arguments: dict[str, Any],
    principal: str | None = None,
    **extra: Any,
):
    params = {"name": name, "arguments": arguments, **extra}
    return run(server, request("tools/call", params, capabilities=FORM_CAPS), principal)


def payouts(desk: refunds.RefundDesk) -> list[refunds.Payout]:
    return asyncio.run(desk.payouts())


def paid_cents(desk: refunds.RefundDesk) -> int:
    return asyncio.run(desk.paid_cents())


def bookings(book: booking.ReservationBook) -> list[booking.Booking]:
    return asyncio.run(book.bookings())


def text_of(res: dict[str, Any]) -> str:
    return "\n".join(b["text"] for b in res["content"] if b["type"] == "text")


# -- refunds ------------------------------------------------------------------------------------


def refund_server(**options: Any) -> tuple[McpServer, refunds.RefundDesk]:
    server = McpServer("refunds-test", state_key=b"r" * 32, ledger=MemoryLedger())
    desk = refunds.register(server, **options)
    return server, desk


def approval(server: McpServer, order_id: str = "A-1001", principal: str = "alice") -> str:
    first = result(call(server, "request_refund", {"order_id": order_id}, principal))
    assert first["resultType"] == "input_required", first
    return first["requestState"]


def redeem(server, state, order_id="A-1001", principal="alice", answers=None):
    return call(
        server,
        "request_refund",
        {"order_id": order_id},
        principal,
        inputResponses=YES if answers is None else answers,
        requestState=state,
    )


def test_ledger_refuses_the_same_state_twice_mrtr_s5d():
    server, desk = refund_server(one_per_order=False)
    state = approval(server)
    assert text_of(result(redeem(server, state))).startswith("Refunded $124.50")
    assert error(redeem(server, state))["code"] == -32602
    assert len(payouts(desk)) == 1


def test_single_use_ledger_alone_pays_a_second_approval_for_the_same_order_mrtr_s5d():
    """The gap lesson 02 shows: each approval is a new state, so the ledger pays each once."""
    server, desk = refund_server(one_per_order=False)
    for _ in range(2):
        assert text_of(result(redeem(server, approval(server)))).startswith("Refunded $124.50")
    assert [p.order_id for p in payouts(desk)] == ["A-1001", "A-1001"]
    assert paid_cents(desk) == 24900  # the full price, though the policy allows half, once


def test_one_refund_per_order_even_for_approvals_redeemed_at_the_same_instant():
    """The example's default: ten approvals issued before any payout (all pass round 1's
    check), redeemed at once: one payout; every other answer names it."""
    server, desk = refund_server()
    states = [approval(server) for _ in range(10)]

    async def race():
        return await asyncio.gather(
            *(
                server.handle(
                    request(
                        "tools/call",
                        {
                            "name": "request_refund",
                            "arguments": {"order_id": "A-1001"},
                            "inputResponses": YES,
                            "requestState": s,
                        },
                        capabilities=FORM_CAPS,
                    ),
                    principal="alice",
                )
                for s in states
            )
        )

    texts = [text_of(result(reply)) for reply in asyncio.run(race())]
    assert len(payouts(desk)) == 1 and paid_cents(desk) == 12450
    paid = [t for t in texts if t.startswith("Refunded ")]
    assert paid == ["Refunded $124.50 to alice for order A-1001 (payout P-0001)."]
    assert texts.count(refunds.already_refunded_text(payouts(desk)[0])) == 9


def test_after_a_refund_round_1_says_so_and_issues_no_approval():
    server, desk = refund_server()
    redeem(server, approval(server))
    again = result(call(server, "request_refund", {"order_id": "A-1001"}, "alice"))
    assert again["resultType"] == "complete" and "requestState" not in again
    assert text_of(again) == refunds.already_refunded_text(payouts(desk)[0])
    assert len(payouts(desk)) == 1


def test_pay_once_is_keyed_on_the_order_not_on_the_user_or_amount():
    desk = refunds.RefundDesk()

    async def pay_three():
        return [
            await desk.pay_once("alice", "A-1001", 12450),
            await desk.pay_once("alice", "A-1001", 24900),
            await desk.pay_once("alice", "A-1002", 1990),
        ]

    (first, new), (again, new_again), (other, new_other) = asyncio.run(pay_three())
    assert (new, new_again, new_other) == (True, False, True)
    assert again == first and other.reference == "P-0002"
    assert paid_cents(desk) == 12450 + 1990


@pytest.mark.parametrize(
    "content",
    [{"ok": "false"}, {"ok": "no"}, {"ok": 0}, {"ok": 1}, {"ok": "true"}, {}],
)
def test_refund_acts_only_on_an_answer_that_fits_its_schema_elic_14(content):
    """ELIC-14: ``bool("false")`` is True; the server validates the answer before paying and
    asks again, with the problem, when it does not fit the form."""
    server, desk = refund_server()
    state = approval(server)
    reply = result(
        redeem(server, state, answers={"confirm": {"action": "accept", "content": content}})
    )
    assert payouts(desk) == []
    assert reply["resultType"] == "input_required"
    message = reply["inputRequests"]["confirm"]["params"]["message"]
    assert message.startswith("Please check") and "Refund $124.50" in message


def test_refund_ok_false_as_a_boolean_is_a_no():
    server, desk = refund_server()
    reply = result(
        redeem(
            server,
            approval(server),
            answers={"confirm": {"action": "accept", "content": {"ok": False}}},
        )
    )
    assert text_of(reply) == "You declined. Nothing was paid for A-1001."
    assert payouts(desk) == []


def test_export_acts_only_on_an_answer_that_fits_its_schema_elic_14():
    server, _ = refund_server()
    first = result(call(server, "export_orders", {}, "carol"))
    reply = result(
        call(
            server,
            "export_orders",
            {},
            "carol",
            inputResponses={"confirm": {"action": "accept", "content": {"ok": "false"}}},
            requestState=first["requestState"],
        )
    )
    assert reply["resultType"] == "input_required"  # asked again, nothing exported


# -- booking ------------------------------------------------------------------------------------


def booking_server(**options: Any) -> tuple[McpServer, booking.ReservationBook]:
    server = McpServer("booking-test", state_key=b"b" * 32, ledger=MemoryLedger())
    return server, booking.register(server, **options)


ARGS = {"restaurant": "Luigi's"}
DETAILS = {"details": {"action": "accept", "content": {"party": 4, "when": "2026-09-01"}}}


def to_confirm(server: McpServer) -> str:
    r1 = result(call(server, "book_table", ARGS))
    r2 = result(
        call(server, "book_table", ARGS, inputResponses=DETAILS, requestState=r1["requestState"])
    )
    assert "confirm" in r2["inputRequests"]
    return r2["requestState"]


def confirm(server, state, content=None):
    answer = {"action": "accept", "content": {"ok": True} if content is None else content}
    return call(server, "book_table", ARGS, inputResponses={"confirm": answer}, requestState=state)


BOOKED = "Booked Luigi's for 4 on 2026-09-01 (reference BK-0001)."


def test_booking_single_use_refuses_the_same_final_retry_mrtr_s5d():
    """The default design: the lost response cannot be asked for again."""
    server, book = booking_server()
    state = to_confirm(server)
    assert text_of(result(confirm(server, state))) == BOOKED  # ... and lost on the way
    assert error(confirm(server, state))["code"] == -32602
    assert len(bookings(book)) == 1


def test_booking_idempotent_returns_the_same_reference_to_the_same_retry_mig_3():
    """A nonce in the state keys the booking: the same retry gets the same booking back."""
    server, book = booking_server(idempotent=True)
    state = to_confirm(server)
    first = text_of(result(confirm(server, state)))
    again = text_of(result(confirm(server, state)))
    assert first == again == BOOKED
    assert len(bookings(book)) == 1


def test_booking_idempotent_new_conversation_books_again_and_replays_are_atomic():
    """The key is the conversation's nonce, not the restaurant: a second conversation is a
    second booking; ten copies of one final retry at once make one booking."""
    server, book = booking_server(idempotent=True)
    state = to_confirm(server)

    async def race():
        return await asyncio.gather(
            *(
                server.handle(
                    request(
                        "tools/call",
                        {
                            "name": "book_table",
                            "arguments": ARGS,
                            "inputResponses": {
                                "confirm": {"action": "accept", "content": {"ok": True}}
                            },
                            "requestState": state,
                        },
                        capabilities=FORM_CAPS,
                    )
                )
                for _ in range(10)
            )
        )

    texts = {text_of(result(reply)) for reply in asyncio.run(race())}
    assert texts == {BOOKED} and len(bookings(book)) == 1
    second = text_of(result(confirm(server, to_confirm(server))))
    assert second.endswith("(reference BK-0002).") and len(bookings(book)) == 2


def test_booking_idempotent_state_carries_a_nonce_the_client_cannot_change():
    """The nonce is inside the sealed state: an edited state is rejected (MRTR-S4a)."""
    server, book = booking_server(idempotent=True)
    state = to_confirm(server)
    head, tag = state.rsplit(".", 1)
    forged = f"{head}.{'A' if tag[0] != 'A' else 'B'}{tag[1:]}"
    assert error(confirm(server, forged))["code"] == -32602
    assert bookings(book) == []


@pytest.mark.parametrize("idempotent", [False, True])
@pytest.mark.parametrize("content", [{"ok": "false"}, {"ok": "true"}, {"ok": 1}, {}])
def test_booking_acts_only_on_an_answer_that_fits_its_schema_elic_14(idempotent, content):
    """ELIC-14 / MRTR-E4: a confirmation that does not fit the form books nothing and is
    asked again, saying what was wrong, with the same state; a yes to that books once."""
    server, book = booking_server(idempotent=idempotent)
    state = to_confirm(server)
    reply = result(confirm(server, state, content))
    assert bookings(book) == []
    assert reply["resultType"] == "input_required"
    message = reply["inputRequests"]["confirm"]["params"]["message"]
    assert (
        message
        == "Please check your answer: ok "
        + ("is required." if content == {} else "must be true or false.")
        + " Book Luigi's for 4 on 2026-09-01?"
    )
    assert text_of(result(confirm(server, reply["requestState"]))) == BOOKED
    assert len(bookings(book)) == 1


def test_booking_idempotent_on_two_instances_sharing_a_sqlite_ledger_mig_3(tmp_path):
    """The nonce store is the ledger's records, so it is shared as the ledger is: round 3
    answered by instance A and sent again to instance B gets A's booking, not a second one."""
    from mrtr_kit.server.ledger.sqlite import SqliteLedger

    path = tmp_path / "ledger.sqlite3"
    instances = [
        McpServer("booking-test", state_key=b"b" * 32, ledger=SqliteLedger(path, create=n == 0))
        for n in range(2)
    ]
    books = [booking.register(server, idempotent=True) for server in instances]
    a, b = instances
    state = to_confirm(a)
    assert text_of(result(confirm(a, state))) == BOOKED
    assert text_of(result(confirm(b, state))) == BOOKED
    # One booking, in the file both instances share (a per-instance book would hold one each).
    kept = asyncio.run(SqliteLedger(path).records(booking.BOOKING))
    assert [(r.seq, r.key.startswith("nonce:")) for r in kept] == [(1, True)]
    assert bookings(books[0]) == bookings(books[1])
