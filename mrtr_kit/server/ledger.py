"""Single use, enforced server-side (MRTR-S5d, SEC-7).

A signed, bound, unexpired requestState can still be replayed as often as the client likes
until it expires: integrity says *the server issued it*, not *it was never used*. Where a step
must happen at most once (a payment, a refund, a booking), the handler calls
``await ctx.redeem_once()`` before it; the core then spends the state's token id (``jti``) in
a ledger shared by every instance that can serve the retry. The second redemption is rejected
like a forged state.

Ledgers may do I/O, so they sit at the edge behind one async method. Pick by deployment:

================= =============================================== ===========================
ledger            where the spent ids live                        safe for
================= =============================================== ===========================
``MemoryLedger``  a dict in this process                          one process (a notebook)
``SqliteLedger``  a SQLite file (``ledger_sqlite.py``)             processes on one machine
``RedisLedger``   Redis, ``SET NX`` with expiry (``ledger_redis``) a fleet of machines
================= =============================================== ===========================

``open_ledger("memory" | "sqlite:PATH" | "redis://HOST:PORT/DB")`` builds one from a
configuration string.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class Ledger(Protocol):
    async def spend(self, token_id: str, expires_at: float) -> bool:
        """Record ``token_id`` as spent; True the first time, False on every later call.

        Atomic: of any number of concurrent calls with one id, exactly one gets True.
        ``expires_at`` (epoch seconds) is when no instance would accept the token anyway,
        so the entry may be forgotten after it.
        """
        ...

    async def aclose(self) -> None:
        """Release the connection or file the ledger holds."""
        ...


class MemoryLedger:
    """A ledger for one process. Enough for a notebook; not for a fleet of instances."""

    def __init__(self, *, now: Callable[[], float] = time.time, sweep_every_s: float = 60.0):
        self._spent: dict[str, float] = {}
        self._now = now
        self._sweep_every_s = sweep_every_s
        self._next_sweep = 0.0

    async def spend(self, token_id: str, expires_at: float) -> bool:
        # No await between the check and the write: atomic within the event loop.
        now = self._now()
        if now >= self._next_sweep:  # forget ids no instance would accept anyway
            self._spent = {k: exp for k, exp in self._spent.items() if exp >= now}
            self._next_sweep = now + self._sweep_every_s
        known = self._spent.get(token_id)
        if known is not None and known >= now:
            return False
        self._spent[token_id] = expires_at
        return True

    async def aclose(self) -> None:
        self._spent.clear()


def open_ledger(spec: str, *, now: Callable[[], float] = time.time) -> Ledger:
    """A ledger from configuration: ``memory``, ``sqlite:PATH`` or ``redis://HOST:PORT/DB``."""
    if spec == "memory":
        return MemoryLedger(now=now)
    if spec.startswith("sqlite:"):
        from .ledger_sqlite import SqliteLedger

        path = spec.removeprefix("sqlite:")
        if not path:
            raise ValueError("write the SQLite ledger as sqlite:PATH")
        return SqliteLedger(path, now=now)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        from .ledger_redis import RedisLedger  # needs the optional redis package

        return RedisLedger.from_url(spec, now=now)
    raise ValueError(f"unknown ledger {spec!r}: use memory, sqlite:PATH or redis://HOST:PORT/DB")
