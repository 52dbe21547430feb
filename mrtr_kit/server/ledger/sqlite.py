"""A ledger in a SQLite file: the embedded default, safe across processes on one machine
(MRTR-S5d, and the business records of ``ledger.py``).

Each write is one ``BEGIN IMMEDIATE`` transaction: it takes the database-wide write lock
(waiting for it at most until the write's deadline), checks the deadline, then inserts. A
spend inserts the token id into a table whose primary key it is (``ON CONFLICT`` it changes
nothing, unless the old row has expired); a record inserts under a unique ``(kind, key)``
with the next number of its kind; a flow mark inserts under a unique ``(flow, name)``. So of
any number of concurrent writes of one key - from threads or from other processes - exactly
one writes a row; the others see ``rowcount == 0``. A flow counter is one upsert that adds and
returns the sum, so concurrent counts each get their own value.

Settings and why:

* WAL journal: readers never block the writer, and several processes share the file;
* ``synchronous=FULL``: a write is on disk before the step it guards runs, so a crash
  cannot forget it and allow a second payment;
* a busy timeout up to the write's deadline (``timeout_s`` from the call): a writer waits for
  the lock instead of failing with "database is locked", but never past the moment
  ``ledger.bounded`` stops waiting.

**Never silently empty** (KIT). A ledger that vanished and came back empty would accept a
replay of every state it had spent. So the file is created by an explicit step only
(``SqliteLedger(path, create=True)``, or ``mrtr-kit ledger init sqlite:PATH``); opening a
missing file, an empty one or another application's database is ``LedgerRefused``. And a
running instance checks, before every read and write, that the path still names the file it
opened, by device and inode (``os.stat``): a file unlinked, or replaced by a rename (``mv``,
an atomic restore), makes every ledger call ``LedgerUnavailable`` (-31000, try again later)
instead of spending into a file nobody else sees, until the instance is restarted. (An
overwrite in place, ``cp`` onto the open file, keeps the inode and is not seen: SQLite's own
docs call that corrupting the database.)

Keep the file on a local disk: SQLite's locking is not reliable on network filesystems. For
several machines use ``RedisLedger``. The sqlite3 calls block, so they run in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from .base import LEDGER_TIMEOUT_S, LedgerRefused, LedgerUnavailable, Record, bounded, past

T = TypeVar("T")
log = logging.getLogger("mrtr_kit.ledger")
INIT_HINT = "mrtr-kit ledger init sqlite:{path}"  # the one command that creates a ledger file

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS spent (token_id TEXT PRIMARY KEY, expires_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS spent_expiry ON spent (expires_at)",
    "CREATE TABLE IF NOT EXISTS records (kind TEXT NOT NULL, key TEXT NOT NULL,"
    " seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, key), UNIQUE (kind, seq))",
    "CREATE TABLE IF NOT EXISTS flow_counts (flow TEXT NOT NULL, name TEXT NOT NULL,"
    " n INTEGER NOT NULL, PRIMARY KEY (flow, name))",
    "CREATE TABLE IF NOT EXISTS flow_marks (flow TEXT NOT NULL, name TEXT NOT NULL,"
    " owner TEXT NOT NULL, PRIMARY KEY (flow, name))",
)


class SqliteLedger:
    """Spent token ids and business records in a SQLite file shared by the processes of one
    machine."""

    def __init__(
        self,
        path: str | Path,
        *,
        now: Callable[[], float] = time.time,
        timeout_s: float = LEDGER_TIMEOUT_S,
        sweep_every_s: float = 60.0,
        create: bool = False,
    ) -> None:
        """Keep the ledger in the SQLite file ``path``; every write is bounded by ``timeout_s``, and
        expired spent ids are swept every ``sweep_every_s``.

        The file must exist and be a ledger, unless ``create`` (then a missing file is created
        with the schema); anything else is ``LedgerRefused``, with one line that says why."""
        self.path = Path(path)
        # Checked by this name even if the process changes its working folder later.
        self._absolute = self.path.absolute()
        self._now = now
        self.timeout_s = timeout_s
        self._sweep_every_s = sweep_every_s
        self._next_sweep = 0.0
        self._lock = threading.Lock()  # one connection, used by one worker thread at a time
        self._db = _connect(self.path, timeout_s, create)
        try:
            # Which file this connection holds: compared with the path's before every use.
            self._file = _identity(self._absolute)
        except OSError as exc:  # gone between the connect and here
            self._db.close()
            raise LedgerRefused(f"SQLite ledger {self.path}: {exc.strerror}") from None

    @contextmanager
    def _write(self, deadline: float) -> Iterator[sqlite3.Connection]:
        """One write transaction under the write lock, begun only if the deadline allows."""
        with self._lock:
            wait_s = max(0.0, deadline - time.time())
            try:
                self._db.execute(f"PRAGMA busy_timeout = {int(wait_s * 1000)}")
                self._db.execute("BEGIN IMMEDIATE")  # the write lock, or "database is locked"
            except sqlite3.OperationalError as exc:
                raise LedgerUnavailable(f"SQLite ledger {self.path}: {exc}") from exc
            try:
                if past(deadline):  # too late: bounded() has stopped waiting
                    raise LedgerUnavailable("the write got the lock after its deadline")
                self._check_file()  # under the write lock, so before anything is written
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as exc:
                # SQLite may have rolled back already (a full disk does): then there is
                # nothing to roll back, and ROLLBACK itself would fail.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):  # the disk, not a bug: retry
                    raise LedgerUnavailable(f"SQLite ledger {self.path}: {exc}") from exc
                raise

    def _check_file(self) -> None:
        """``LedgerUnavailable`` when ``path`` no longer names the file this ledger opened:
        unlinked, or replaced (renamed over). Checked before every read and write, by device
        and inode (``os.stat`` of the path against the one taken at open), so a running
        instance never spends into a file no other instance, nor its own restart, will see."""
        try:
            now = _identity(self._absolute)
        except OSError:
            now = None
        if now != self._file:
            what = "was deleted" if now is None else "was replaced by another file"
            log.error("SQLite ledger %s %s since this process opened it", self.path, what)
            raise LedgerUnavailable(
                f"SQLite ledger {self.path} {what} since this process opened it; restart the "
                "instance once the right ledger is back in place"
            )

    async def _bounded(self, write: Callable[..., T], *args: object) -> T:
        """``write(*args, deadline)`` in a worker thread, bounded (``ledger.bounded``)."""
        return await bounded(
            lambda deadline: asyncio.to_thread(write, *args, deadline),
            timeout_s=self.timeout_s,
        )

    async def spend(self, token_id: str, expires_at: float) -> bool:
        """``Ledger.spend``: record ``token_id`` as spent until ``expires_at``; True the first time,
        False after (MRTR-S5d)."""
        return await self._bounded(self._spend, token_id, expires_at)

    def _spend(self, token_id: str, expires_at: float, deadline: float) -> bool:
        with self._write(deadline) as db:
            now = self._now()
            if now >= self._next_sweep:  # forget ids no instance would accept anyway
                db.execute("DELETE FROM spent WHERE expires_at < ?", (now,))
                self._next_sweep = now + self._sweep_every_s
            # Insert, or take over a row whose id has expired anyway.
            cursor = db.execute(
                "INSERT INTO spent (token_id, expires_at) VALUES (?, ?) "
                "ON CONFLICT (token_id) DO UPDATE SET expires_at = excluded.expires_at "
                "WHERE spent.expires_at < ?",
                (token_id, expires_at, now),
            )
            return cursor.rowcount == 1

    async def unspend(self, token_id: str) -> None:
        """``Ledger.unspend``: forget that ``token_id`` was spent."""
        await self._bounded(self._unspend, token_id)

    def _unspend(self, token_id: str, deadline: float) -> None:
        with self._write(deadline) as db:
            db.execute("DELETE FROM spent WHERE token_id = ?", (token_id,))

    async def flow_count(self, flow_id: str, name: str, by: int = 1) -> int:
        """``Ledger.flow_count``: add ``by`` to the flow's counter ``name``; the new value."""
        return await self._bounded(self._flow_count, flow_id, name, by)

    def _flow_count(self, flow_id: str, name: str, by: int, deadline: float) -> int:
        with self._write(deadline) as db:
            row = db.execute(
                "INSERT INTO flow_counts (flow, name, n) VALUES (?, ?, ?) "
                "ON CONFLICT (flow, name) DO UPDATE SET n = n + excluded.n RETURNING n",
                (flow_id, name, by),
            ).fetchone()
            return int(row[0])

    async def flow_once(self, flow_id: str, name: str, owner: str) -> bool:
        """``Ledger.flow_once``: mark ``name`` done in the flow; True the first time."""
        return await self._bounded(self._flow_once, flow_id, name, owner)

    def _flow_once(self, flow_id: str, name: str, owner: str, deadline: float) -> bool:
        with self._write(deadline) as db:
            cursor = db.execute(
                "INSERT INTO flow_marks (flow, name, owner) VALUES (?, ?, ?) "
                "ON CONFLICT (flow, name) DO NOTHING",
                (flow_id, name, owner),
            )
            return cursor.rowcount == 1

    async def flow_release(self, flow_id: str, name: str, owner: str) -> None:
        """``Ledger.flow_release``: remove the mark if ``owner`` made it."""
        await self._bounded(self._flow_release, flow_id, name, owner)

    def _flow_release(self, flow_id: str, name: str, owner: str, deadline: float) -> None:
        with self._write(deadline) as db:
            db.execute(
                "DELETE FROM flow_marks WHERE flow = ? AND name = ? AND owner = ?",
                (flow_id, name, owner),
            )

    async def record_once(self, kind: str, key: str, body: str) -> tuple[Record, bool]:
        """``Ledger.record_once``: keep ``body`` under ``(kind, key)`` unless a record is there;
        returns ``(record, created)``."""
        return await self._bounded(self._record_once, kind, key, body)

    def _record_once(self, kind: str, key: str, body: str, deadline: float) -> tuple[Record, bool]:
        with self._write(deadline) as db:
            cursor = db.execute(
                "INSERT INTO records (kind, key, seq, body) "
                "SELECT ?, ?, COALESCE(MAX(seq), 0) + 1, ? FROM records WHERE kind = ? "
                "ON CONFLICT (kind, key) DO NOTHING",
                (kind, key, body, kind),
            )
            seq, kept = db.execute(
                "SELECT seq, body FROM records WHERE kind = ? AND key = ?", (kind, key)
            ).fetchone()
            return Record(kind, seq, key, kept), cursor.rowcount == 1

    async def record(self, kind: str, key: str) -> Record | None:
        """``Ledger.record``: the record kept under ``(kind, key)``, or None."""
        return await asyncio.to_thread(self._record, kind, key)

    def _record(self, kind: str, key: str) -> Record | None:
        with self._lock:
            self._check_file()
            row = self._db.execute(
                "SELECT seq, body FROM records WHERE kind = ? AND key = ?", (kind, key)
            ).fetchone()
        return None if row is None else Record(kind, row[0], key, row[1])

    async def records(self, kind: str) -> list[Record]:
        """``Ledger.records``: every record of ``kind``, oldest first."""
        return await asyncio.to_thread(self._records, kind)

    def _records(self, kind: str) -> list[Record]:
        with self._lock:
            self._check_file()
            rows = self._db.execute(
                "SELECT seq, key, body FROM records WHERE kind = ? ORDER BY seq", (kind,)
            ).fetchall()
        return [Record(kind, seq, key, body) for seq, key, body in rows]

    def spent_count(self) -> int:
        """How many ids the file remembers (for lessons and tests)."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM spent").fetchone()[0])

    async def aclose(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


def _identity(path: Path) -> tuple[int, int]:
    """The file ``path`` names now: (device, inode)."""
    info = os.stat(path)
    return info.st_dev, info.st_ino


def _connect(path: Path, timeout_s: float, create: bool) -> sqlite3.Connection:
    """A connection to the ledger in ``path``, its schema brought up to date; or
    ``LedgerRefused`` with one line. Opened by URI with ``mode=rw`` unless ``create``, so
    SQLite itself never creates a missing file (no window between a check and the open)."""
    where = f"SQLite ledger {path}"
    folder = path.absolute().parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise LedgerRefused(f"{where}: the folder {folder} {what}")
    if not create and not path.exists():
        raise LedgerRefused(
            f"{where} does not exist; create it with `{INIT_HINT.format(path=path)}` "
            "(a ledger is never created empty by itself: it would accept replays of what the "
            "lost one had spent)"
        )
    uri = f"{path.absolute().as_uri()}?mode={'rwc' if create else 'rw'}"
    try:
        # isolation_level=None: autocommit; the writes open their own transactions.
        db = sqlite3.connect(
            uri, uri=True, timeout=timeout_s, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise LedgerRefused(f"{where}: {exc}") from None
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "spent" not in tables and tables:  # another application's database: a typo?
            raise LedgerRefused(f"{where} holds other tables: not a ledger")
        if not tables and not create:  # an empty file: made by hand, never initialised
            raise LedgerRefused(
                f"{where} is empty, not a ledger yet: `{INIT_HINT.format(path=path)}` makes it one"
            )
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        for statement in SCHEMA:  # a ledger from an older kit gains the newer tables
            db.execute(statement)
    except sqlite3.Error as exc:  # not a database, read-only, no room for the WAL file, ...
        db.close()
        raise LedgerRefused(f"{where}: {exc}") from None
    except LedgerRefused:
        db.close()
        raise
    return db
