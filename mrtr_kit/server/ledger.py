"""Single use, enforced server-side (MRTR-S5d, SEC-7).

A signed, bound, unexpired requestState can still be replayed as often as the client likes
until it expires: integrity says *the server issued it*, not *it was never used*. Where a step
must happen at most once (a payment, a refund, a booking), the handler redeems the state's
token id in a ledger shared by every instance that can serve the retry.

The ledger is an edge component (it may do I/O), so its interface is async. This module holds
the interface and the in-process ledger; stores shared between processes plug in the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol


class Ledger(Protocol):
    async def spend(self, token_id: str, expires_at: float) -> bool:
        """Record ``token_id`` as spent; True the first time, False on every later call.

        ``expires_at`` (epoch seconds) is when the token stops being valid anyway, so the
        entry may be forgotten after it.
        """
        ...


class MemoryLedger:
    """A ledger for one process. Enough for a notebook; not for a fleet of instances."""

    def __init__(self, *, now: Callable[[], float] = time.time) -> None:
        self._spent: dict[str, float] = {}
        self._lock = asyncio.Lock()
        self._now = now

    async def spend(self, token_id: str, expires_at: float) -> bool:
        async with self._lock:
            now = self._now()
            for old in [k for k, exp in self._spent.items() if exp < now]:
                del self._spent[old]  # expired tokens are rejected by expiry anyway
            if token_id in self._spent:
                return False
            self._spent[token_id] = expires_at
            return True
