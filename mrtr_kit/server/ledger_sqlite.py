"""A single-use ledger in a SQLite file: the embedded default, safe across processes on one
machine (MRTR-S5d).

Spending is one ``INSERT`` into a table whose primary key is the token id (``ON CONFLICT``
it changes nothing, unless the old row has expired): SQLite runs each statement as an atomic
transaction under a database-wide write lock, so of any number of concurrent spends of one
id - from threads or from other processes - exactly one writes a row. The others see
``rowcount == 0`` and get False.

Settings and why:

* WAL journal: readers never block the writer, and several processes share the file;
* ``synchronous=FULL``: a spend is on disk before the step it guards runs, so a crash
  cannot forget it and allow a second payment;
* a busy timeout: a writer waits for the lock instead of failing with "database is locked".

Keep the file on a local disk: SQLite's locking is not reliable on network filesystems. For
several machines use ``RedisLedger``. The sqlite3 calls block, so they run in a worker thread.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS spent (token_id TEXT PRIMARY KEY, expires_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS spent_expiry ON spent (expires_at)",
)


class SqliteLedger:
    """Spent token ids in a SQLite file shared by the processes of one machine."""

    def __init__(
        self,
        path: str | Path,
        *,
        now: Callable[[], float] = time.time,
        busy_timeout_s: float = 30.0,
        sweep_every_s: float = 60.0,
    ) -> None:
        self.path = Path(path)
        self._now = now
        self._sweep_every_s = sweep_every_s
        self._next_sweep = 0.0
        self._lock = threading.Lock()  # one connection, used by one worker thread at a time
        # isolation_level=None: autocommit, so each INSERT is its own atomic transaction.
        self._db = sqlite3.connect(
            self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            for statement in SCHEMA:
                self._db.execute(statement)

    async def spend(self, token_id: str, expires_at: float) -> bool:
        return await asyncio.to_thread(self._spend, token_id, expires_at)

    def _spend(self, token_id: str, expires_at: float) -> bool:
        with self._lock:
            now = self._now()
            if now >= self._next_sweep:  # forget ids no instance would accept anyway
                self._db.execute("DELETE FROM spent WHERE expires_at < ?", (now,))
                self._next_sweep = now + self._sweep_every_s
            # One atomic statement: insert, or take over a row whose id has expired anyway.
            cursor = self._db.execute(
                "INSERT INTO spent (token_id, expires_at) VALUES (?, ?) "
                "ON CONFLICT (token_id) DO UPDATE SET expires_at = excluded.expires_at "
                "WHERE spent.expires_at < ?",
                (token_id, expires_at, now),
            )
            return cursor.rowcount == 1

    def spent_count(self) -> int:
        """How many ids the file remembers (for lessons and tests)."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM spent").fetchone()[0])

    async def aclose(self) -> None:
        with self._lock:
            self._db.close()
