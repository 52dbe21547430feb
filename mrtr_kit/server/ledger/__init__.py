"""The ledger: what must happen once, shared by every instance that may serve a retry.

``base`` holds the contract every ledger keeps (``Ledger``, ``Record``, ``LedgerUnavailable``,
the write deadline) and ``MemoryLedger``; ``sqlite`` and ``redis`` are the two shared stores.
``open_ledger`` picks one from a configuration string and imports only the backend it needs, so
a server that keeps its ledger in memory never loads sqlite3 or redis-py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from .base import (
    CLOCK_MARGIN_S,
    LEDGER_TIMEOUT_S,
    RETRY_AFTER_S,
    Ledger,
    LedgerRefused,
    LedgerUnavailable,
    MemoryLedger,
    Record,
    bounded,
    past,
)

__all__ = [
    "CLOCK_MARGIN_S",
    "LEDGER_TIMEOUT_S",
    "RETRY_AFTER_S",
    "Ledger",
    "LedgerRefused",
    "LedgerUnavailable",
    "MemoryLedger",
    "Record",
    "bounded",
    "open_ledger",
    "past",
]


def open_ledger(
    spec: str,
    *,
    now: Callable[[], float] = time.time,
    timeout_s: float = LEDGER_TIMEOUT_S,
    allow_volatile: bool = False,
    create: bool = False,
) -> Ledger:
    """A ledger from configuration: ``memory``, ``sqlite:PATH`` or ``redis://HOST:PORT/DB``.

    ``timeout_s`` bounds each write (see above). A Redis that would forget spends when it
    restarts (no AOF, no snapshots) is refused unless ``allow_volatile``
    (``redis.check_persistence``). A SQLite file that does not exist is refused
    (``LedgerRefused``) unless ``create``: a ledger that vanished must not come back empty
    and accept replays of what it had spent (``SqliteLedger``).
    """
    if spec == "memory":
        return MemoryLedger(now=now)
    if spec.startswith("sqlite:"):
        from .sqlite import SqliteLedger

        path = spec.removeprefix("sqlite:")
        if not path:
            raise ValueError("write the SQLite ledger as sqlite:PATH")
        return SqliteLedger(path, now=now, timeout_s=timeout_s, create=create)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        try:
            from .redis import RedisLedger, check_persistence
        except ModuleNotFoundError as exc:
            raise ValueError(
                f"a Redis ledger needs the redis package ({exc.name} is missing): "
                "pip install 'mrtr-kit[redis]'"
            ) from exc

        if not allow_volatile:
            how = check_persistence(spec)
            if how != "AOF":
                logging.getLogger("mrtr_kit.ledger").warning("Redis ledger: %s", how)
        return RedisLedger.from_url(spec, now=now, timeout_s=timeout_s)
    raise ValueError(f"unknown ledger {spec!r}: use memory, sqlite:PATH or redis://HOST:PORT/DB")
