"""What lesson 02b (02b-rotation-and-single-use.ipynb) runs on top of the refund lab: a key
rotation as a timeline, and a lost final response.

``rotation_timeline`` rolls key rings out to two instances and records, after each change, which
keys seal, which open and which states are accepted: from real seals and checks, nothing typed
in.

``lose_the_final_response`` runs the booking example's last round twice, as a client does whose
first answer was lost, once with each of the example's two designs (single use, idempotent).

The lab (``RefundLab``, ``RawCaller``) is ``course/mrtr_course/refund_lab/lab.py``; the tables
and marks it prints are ``course/mrtr_course/refund_lab/views.py``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mrtr_course.examples import booking
from mrtr_course.refund_lab.lab import RawCaller, RefundLab, ServerAnswer
from mrtr_course.refund_lab.views import Table, mark
from mrtr_kit.server import McpServer
from mrtr_kit.server.codecs import InvalidState
from mrtr_kit.server.http import create_app
from mrtr_kit.server.keyring import KeyRing, StateKey
from mrtr_kit.server.ledger import Ledger, MemoryLedger
from mrtr_kit.server.ledger.sqlite import SqliteLedger
from mrtr_kit.server.state import StateBinding, request_digest

# -- the rotation timeline ------------------------------------------------------------------------


def _change(old: KeyRing, new: KeyRing) -> str:
    added = [k for k in new.kids if k not in old.kids]
    removed = [k for k in old.kids if k not in new.kids]
    promoted = new.primary.kid != old.primary.kid
    if added and removed and promoted:
        return f"replace {', '.join(removed)} by {', '.join(added)}"
    parts = [f"add {k}" for k in added if not (promoted and k == new.primary.kid)]
    parts += [f"promote {new.primary.kid}"] if promoted else []
    parts += [f"retire {k}" for k in removed]
    return " + ".join(parts) or "same ring"


def _ring(lab: RefundLab) -> str:
    return f"{lab.keys.primary.kid} / {', '.join(lab.keys.kids)}"


def rotation_timeline(current: KeyRing, plan: Iterable[KeyRing]) -> Table:
    """Roll ``plan``'s rings out to two instances, A then B, from ``current``, and after every
    change record, from real seals and checks: each instance's sealing key and the keys it
    opens; which instances open a fresh state sealed with each key; and whether every state A
    and B have issued so far (and not expired) still opens on both. Before a ring that drops a
    key, the clock waits one state lifetime, as an operator must."""
    plan = list(plan)
    a = RefundLab.build("hmac", keys=current, label="A")
    b = RefundLab.build("hmac", keys=current, label="B", clock=a.clock, desk=a.desk)
    fleet = (a, b)
    every_key: dict[str, StateKey] = {}
    for ring in (current, *plan):
        every_key.update({k.kid: k for k in ring if k.kid not in every_key})
    sealers = {
        kid: RefundLab.build("hmac", keys=KeyRing([key]), clock=a.clock)
        for kid, key in every_key.items()
    }
    binding = StateBinding("alice", request_digest("tools/call", "request_refund", {}))
    in_flight: list[tuple[str, str]] = []  # (who sealed it, token)

    def opens_on(token: str) -> list[str]:
        found = []
        for lab in fleet:
            try:
                lab.server.states.verify(token, binding)
            except InvalidState:
                continue
            found.append(lab.label)
        return found

    def row(step: str) -> list[str]:
        for lab in fleet:
            sealed = lab.server.states.mint(binding, [], {})
            in_flight.append((f"{lab.label}'s {sealed.split('.')[1]} state", sealed))
        cells = [step, _ring(a), _ring(b)]
        for sealer in sealers.values():
            where = opens_on(sealer.server.states.mint(binding, [], {}))
            cells.append(" and ".join(where) if where else "neither")
        broken = [
            f"{who} rejected by {target}"
            for who, token in in_flight
            for target in sorted({lab.label for lab in fleet} - set(opens_on(token)))
        ]
        cells.append(mark(not broken, "; ".join(dict.fromkeys(broken)) or "yes"))
        return cells

    rows = [row("start")]
    lifetime = a.server.states.ttl_s + 2 * a.server.states.skew_s
    for number, ring in enumerate(plan, 1):
        change = _change(a.keys, ring)
        if set(a.keys.kids) - set(ring.kids):  # a key goes: first wait until its states expire
            a.clock.advance(lifetime)
            in_flight.clear()  # every state issued so far has expired
            rows.append(row(f"wait {lifetime // 60} min: earlier states expire"))
        for lab in fleet:
            lab.keys = ring
            rows.append(row(f"{number}. {change} → {lab.label}"))
    header = ["step", "A seals / opens", "B seals / opens"]
    header += [f"a {kid} state opens on" for kid in sealers]
    header += ["every state issued so far opens on both"]
    return Table("Key rotation, step by step (A first, then B)", header, rows)


# -- a lost final response (the booking example) ------------------------------------------------

BOOKING_ARGS = {"restaurant": "Luigi's"}
BOOKING_DETAILS = {"details": {"action": "accept", "content": {"party": 4, "when": "2026-09-01"}}}
BOOKING_YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


@dataclass(frozen=True)
class LostResponse:
    """What the client got for round 3 (lost on the way), and for the same request sent again."""

    design: str
    first: ServerAnswer
    again: ServerAnswer
    bookings: int
    instances: int = 1

    def __str__(self) -> str:
        on_a, on_b = (" on A", " on B") if self.instances == 2 else ("", "")
        return "\n".join(
            [
                f"{self.design}",
                f"  round 3{on_a}, lost on the way: {self.first}",
                f"  the same request again{on_b}:   {self.again}",
                f"  bookings made: {self.bookings}",
            ]
        )

    __repr__ = __str__


async def lose_the_final_response(design: str, instances: int = 1) -> LostResponse:
    """Book a table in three rounds and send round 3 twice, as a client does whose first
    answer was lost (HTTP-26). ``design``: ``"single use"`` (the ledger refuses the repeat) or
    ``"idempotent"`` (a nonce in the state; the repeat gets the same booking). With
    ``instances=2`` the repeat lands on instance B, which shares A's keys and SQLite ledger
    file (the spent ids and the bookings): nothing else."""
    if design not in ("single use", "idempotent"):
        raise ValueError("design is 'single use' or 'idempotent'")
    if instances not in (1, 2):
        raise ValueError("instances is 1 or 2")
    keys = KeyRing.generate()
    ledger_file = Path(tempfile.mkdtemp(prefix="mrtr-booking-")) / "ledger.sqlite3"
    servers, callers = [], []
    for n in range(instances):
        # The first instance creates the file (explicitly: a ledger never appears by itself);
        # the second opens the one the first created.
        ledger: Ledger = (
            SqliteLedger(ledger_file, create=n == 0) if instances == 2 else MemoryLedger()
        )
        server = McpServer("booking", state_keys=keys, ledger=ledger)
        book = booking.register(server, idempotent=design == "idempotent")
        servers.append(server)
        callers.append(RawCaller.for_app(create_app(server)))
    a, b = callers[0], callers[-1]
    try:
        r1 = await a.call_tool("book_table", BOOKING_ARGS)
        r2 = await a.call_tool(
            "book_table",
            BOOKING_ARGS,
            request_state=r1.request_state,
            input_responses=BOOKING_DETAILS,
        )
        final = {"request_state": r2.request_state, "input_responses": BOOKING_YES}
        first = await a.call_tool("book_table", BOOKING_ARGS, **final)
        again = await b.call_tool("book_table", BOOKING_ARGS, **final)
        made = len(await book.bookings())  # B's book: it reads the shared file
    finally:
        for caller in callers:
            await caller.aclose()
        for server in servers:
            await server.ledger.aclose()
    return LostResponse(design, first, again, made, instances)
