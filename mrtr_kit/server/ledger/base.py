"""The ledger: what must happen once, shared by every instance that may serve a retry.

It keeps three things.

**Spent states** (MRTR-S5d, SEC-7). A signed, bound, unexpired requestState can still be
replayed as often as the client likes until it expires: integrity says *the server issued it*,
not *it was never used*. Where a step must happen at most once (a payment, a refund, a
booking), the handler calls ``await ctx.redeem_once()`` before it; the core then spends the
state's token id (``jti``) here. The second redemption is rejected like a forged state.

**Business records under an idempotency key.** Single use is about *states*, but round 1
issues a new state every time it is asked, so "one refund per order" is a rule about
*orders*: it needs a record keyed by the order, checked and written in one step
(``record_once``), in the store every instance shares. A record kept in one process's memory
lets each instance of a fleet pay once.

**Per-flow counters and marks** (KIT). Single use covers one *state*; a round whose state the
handler does not spend can be replayed, and every replay mints a new state: the call forks
(a handler may run N times for one logical call, MIG-3). Every fork carries the same sealed
flow id (``ctx.flow_id``), so entries keyed by it hold across forks: ``flow_count`` (attempts
at a step: a one-time code tried at most 3 times per flow) and ``flow_once`` (a side effect
done once per flow, first wins). Like records they never expire: a flow has no end the ledger
could know, and an entry forgotten while a fork is still alive would reset its limit.

Ledgers may do I/O, so they sit at the edge behind async methods. Pick by deployment:

================= =============================================== ===========================
ledger            where it keeps spent ids and records            safe for
================= =============================================== ===========================
``MemoryLedger``  dicts in this process                           one process (a notebook)
``SqliteLedger``  a SQLite file (``ledger/sqlite.py``)             processes on one machine
``RedisLedger``   Redis (``ledger/redis.py``)                      a fleet of machines
================= =============================================== ===========================

``open_ledger("memory" | "sqlite:PATH" | "redis://HOST:PORT/DB")`` (in ``ledger/__init__.py``)
builds one from a configuration string.

**When the store is down or slow** (KIT-ERR-A). A ledger bounds every write itself
(``bounded``): the write carries a deadline, ``timeout_s`` from now; the store refuses to
apply a write that reaches it after the deadline, and the ledger waits for the answer until
the deadline plus ``CLOCK_MARGIN_S`` at most. A write that is not acknowledged by then cannot
be applied later (a frozen Redis that wakes up refuses it), so "gave up waiting" means
"nothing was written": the approval is not burnt, and the client may send the same retry
again. The ledger raises ``LedgerUnavailable``; the core answers -31000 "try again later".
The one window left: a store whose clock runs more than ``CLOCK_MARGIN_S`` behind this
server's (Redis compares the deadline with its own ``TIME``), or a SQLite commit stalled on
the disk for longer than the margin after its deadline check.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

T = TypeVar("T")

LEDGER_TIMEOUT_S = 3.0  # how long a write may take before the store must refuse it
CLOCK_MARGIN_S = 1.0  # extra wait for the acknowledgement: covers clock skew with the store
RETRY_AFTER_S = 2  # what the retryable error tells the client to wait


class LedgerUnavailable(Exception):
    """The ledger could not be reached, or did not acknowledge a write by its deadline.

    Either way the write was not applied (see the module docstring for the one window)."""


class LedgerRefused(ValueError):
    """A ledger that cannot be opened as configured, before any request: a SQLite file that
    does not exist (never created unless asked: ``SqliteLedger(path, create=True)`` or
    ``mrtr-kit ledger init sqlite:PATH``), a folder that does not exist, a file that is not
    a SQLite database or not a ledger, or one this process may not write (KIT). The message
    is one line that says what to do; ``serve`` prints it and exits with status 2."""


@dataclass(frozen=True)
class Record:
    """A business record: number ``seq`` of its ``kind`` (1, 2, ...), kept under ``key``."""

    kind: str
    seq: int
    key: str
    body: str


class Ledger(Protocol):
    """Where single-use states are spent and business records kept (module docstring); async,
    atomic."""

    async def spend(self, token_id: str, expires_at: float) -> bool:
        """Record ``token_id`` as spent; True the first time, False on every later call.

        Atomic: of any number of concurrent calls with one id, exactly one gets True.
        ``expires_at`` (epoch seconds) is when no instance would accept the token anyway,
        so the entry may be forgotten after it. Raises ``LedgerUnavailable``, having spent
        nothing, when the store cannot be reached or does not answer in time.
        """
        ...

    async def unspend(self, token_id: str) -> None:
        """Forget that ``token_id`` was spent: the core's undo of a round whose later ledger
        write failed (``LedgerUnavailable``), so the client's same retry is still good.
        ``LedgerUnavailable`` as for ``spend``."""
        ...

    async def flow_count(self, flow_id: str, name: str, by: int = 1) -> int:
        """Add ``by`` to the counter ``name`` of the flow ``flow_id`` (0 before the first
        call) and return the new value.

        Atomic: of ``n`` concurrent calls with ``by=1`` each gets a different value, 1 to
        ``n``. ``by=-1`` is the core's undo. ``LedgerUnavailable`` as for ``spend``."""
        ...

    async def flow_once(self, flow_id: str, name: str, owner: str) -> bool:
        """Mark ``name`` done in the flow ``flow_id`` by ``owner``: True the first time, False
        (and nothing written) once a mark is there. Atomic: of concurrent calls exactly one
        gets True. ``LedgerUnavailable`` as for ``spend``."""
        ...

    async def flow_release(self, flow_id: str, name: str, owner: str) -> None:
        """Remove the mark of ``name`` in the flow if ``owner`` made it (the core's undo of
        ``flow_once``; another owner's mark stays). ``LedgerUnavailable`` as for ``spend``."""
        ...

    async def record_once(self, kind: str, key: str, body: str) -> tuple[Record, bool]:
        """Keep ``body`` under ``(kind, key)`` unless a record is there: ``(record, True)``
        for the new record, else ``(the first record, False)`` and nothing is written.

        Atomic like ``spend``: of concurrent calls with one key exactly one writes. Records
        never expire. ``LedgerUnavailable`` as for ``spend``.
        """
        ...

    async def record(self, kind: str, key: str) -> Record | None:
        """The record kept under ``(kind, key)``, if any."""
        ...

    async def records(self, kind: str) -> list[Record]:
        """Every record of ``kind``, oldest first."""
        ...

    async def aclose(self) -> None:
        """Release the connection or file the ledger holds."""
        ...


async def bounded(write: Callable[[float], Awaitable[T]], *, timeout_s: float) -> T:
    """Run ``write(deadline)`` and wait for it ``timeout_s + CLOCK_MARGIN_S`` at most.

    The store refuses the write after ``deadline``, so once this gives up nothing can still
    be applied: it raises ``LedgerUnavailable`` and the step the write guards does not run.
    The deadline is wall-clock time (``time.time``), never a ledger's injected clock: Redis
    compares it with its own ``TIME``. For the ledgers' own use.
    """
    try:
        async with asyncio.timeout(timeout_s + CLOCK_MARGIN_S):
            return await write(time.time() + timeout_s)
    except TimeoutError as exc:
        raise LedgerUnavailable(f"no answer within {timeout_s + CLOCK_MARGIN_S:g} s") from exc


def past(deadline: float) -> bool:
    """Whether a write whose deadline is ``deadline`` must be refused now."""
    return time.time() > deadline


class MemoryLedger:
    """A ledger for one process. Enough for a notebook; not for a fleet of instances."""

    def __init__(self, *, now: Callable[[], float] = time.time, sweep_every_s: float = 60.0):
        """``now`` is the clock for expiry; spent ids past their expiry are swept every
        ``sweep_every_s``."""
        self._spent: dict[str, float] = {}
        self._records: dict[tuple[str, str], Record] = {}
        self._count: dict[str, int] = {}  # records per kind
        self._flow_counts: dict[tuple[str, str], int] = {}
        self._flow_marks: dict[tuple[str, str], str] = {}  # (flow, name) -> owner
        self._now = now
        self._sweep_every_s = sweep_every_s
        self._next_sweep = 0.0

    async def spend(self, token_id: str, expires_at: float) -> bool:
        # No await between the check and the write: atomic within the event loop.
        """``Ledger.spend``: record ``token_id`` as spent until ``expires_at``; True the first time,
        False after (MRTR-S5d)."""
        now = self._now()
        if now >= self._next_sweep:  # forget ids no instance would accept anyway
            self._spent = {k: exp for k, exp in self._spent.items() if exp >= now}
            self._next_sweep = now + self._sweep_every_s
        known = self._spent.get(token_id)
        if known is not None and known >= now:
            return False
        self._spent[token_id] = expires_at
        return True

    async def unspend(self, token_id: str) -> None:
        """``Ledger.unspend``: forget that ``token_id`` was spent."""
        self._spent.pop(token_id, None)

    async def flow_count(self, flow_id: str, name: str, by: int = 1) -> int:
        """``Ledger.flow_count``: add ``by`` to the flow's counter ``name``; the new value."""
        value = self._flow_counts[flow_id, name] = self._flow_counts.get((flow_id, name), 0) + by
        return value

    async def flow_once(self, flow_id: str, name: str, owner: str) -> bool:
        """``Ledger.flow_once``: mark ``name`` done in the flow; True the first time."""
        if (flow_id, name) in self._flow_marks:
            return False
        self._flow_marks[flow_id, name] = owner
        return True

    async def flow_release(self, flow_id: str, name: str, owner: str) -> None:
        """``Ledger.flow_release``: remove the mark if ``owner`` made it."""
        if self._flow_marks.get((flow_id, name)) == owner:
            del self._flow_marks[flow_id, name]

    async def record_once(self, kind: str, key: str, body: str) -> tuple[Record, bool]:
        """``Ledger.record_once``: keep ``body`` under ``(kind, key)`` unless a record is there;
        returns ``(record, created)``."""
        earlier = self._records.get((kind, key))
        if earlier is not None:
            return earlier, False
        seq = self._count[kind] = self._count.get(kind, 0) + 1
        record = self._records[kind, key] = Record(kind, seq, key, body)
        return record, True

    async def record(self, kind: str, key: str) -> Record | None:
        """``Ledger.record``: the record kept under ``(kind, key)``, or None."""
        return self._records.get((kind, key))

    async def records(self, kind: str) -> list[Record]:
        """``Ledger.records``: every record of ``kind``, oldest first."""
        return sorted((r for r in self._records.values() if r.kind == kind), key=lambda r: r.seq)

    async def aclose(self) -> None:
        """Forget the spent token ids (records stay)."""
        self._spent.clear()
