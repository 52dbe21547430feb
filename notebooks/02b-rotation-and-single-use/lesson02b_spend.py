"""Lesson 02b: spending a state's token id once, atomically, in a SQLite file two instances share.

A "spend" records a state's token id (``jti``) as spent and says whether this call was the first
(MRTR-S5d). The lesson's race and the exercise's checkpoint (``check_spend_once``, in
``lesson02b_checkpoints.py`` beside this file) run a spend function on two connections to one
SQLite file (two server instances sharing a ledger), each in its own thread, and force the
interleaving that defeats a check-then-act spend: every ``execute`` waits until the other
connection has reached its own next ``execute`` (``Lockstep``), so both SELECTs run before either
INSERT, every time, not by chance.

A thread that is blocked inside SQLite (waiting for a lock the other connection holds in an open
transaction) cannot reach its next ``execute``; the lockstep then stops forcing (see
``Lockstep.step``). That happens only to a spend that locks the file first, which is atomic anyway.
A thread held back in Python instead (a ``threading.Lock`` around the check and the insert) would
wait for ever: after ``STALLED_S`` the lockstep stops forcing and says so (``Race.stalled``).

Two server instances are two processes: they share the SQLite file and nothing else. So instance
B can run its own copy of the spend (``another_process``): the same code, with fresh copies of
the sets, dicts, lists and locks it reaches through its module's globals, default arguments and
closure, as a second process would have them.
"""

from __future__ import annotations

import copy
import sqlite3
import tempfile
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Spend = Callable[[Any, str], Any]
SCHEMA = "CREATE TABLE IF NOT EXISTS spent (jti TEXT PRIMARY KEY)"
BUSY_TIMEOUT_S = 10.0  # SQLite waits this long for a lock another connection holds
BLOCKED_S = 1.0  # a statement still running after this long is waiting for a lock: stop forcing
# A thread whose turn it is, outside any statement for this long, is held back in Python (a lock
# the other thread holds while it waits for its turn): stop forcing, and report it. Generous, so
# a busy machine never trips it: a correct spend reaches its next statement in microseconds.
STALLED_S = 10.0
# A second process's lock of each kind (the lock types themselves cannot be instantiated).
_NEW_LOCK = {type(threading.Lock()): threading.Lock, type(threading.RLock()): threading.RLock}
_MEMORY_TYPES = (set, dict, list, bytearray)


def new_ledger(directory: str | Path | None = None) -> Path:
    """A fresh SQLite file with the ``spent`` table (one row per spent token id)."""
    folder = Path(directory or tempfile.mkdtemp(prefix="mrtr-spend-"))
    path = folder / "ledger.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(SCHEMA)
    return path


def connect(path: str | Path) -> sqlite3.Connection:
    """One instance's connection to the shared file. ``check_same_thread=False``: the race runs
    each call in a thread of its own."""
    return sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)


def rows(path: str | Path, jti: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM spent WHERE jti = ?", (jti,)).fetchone()[0])


# -- the lockstep: both connections reach each statement before either runs it -------------------


class Lockstep:
    """Turns, in a fixed order: A runs until it reaches its next statement (or returns), then B,
    then A again... So A's first statement, and what A does with its result, come before B's
    first statement, and both before either's second: a check-then-act loses every time, and the
    trace reads the same on every run.

    A thread stuck inside a statement is waiting for SQLite's lock, held by a transaction of a
    thread that is waiting for its turn: then the turns stop (``broken``) for the rest of the
    run. Only a spend that takes the lock before it reads gets there, and that one is atomic."""

    def __init__(self, order: list[str], *, forcing: bool = True) -> None:
        self._cond = threading.Condition()
        self._order = list(order)
        self._holder = self._order[0]
        self._ran: set[str] = set()
        self._inside: dict[str, int] = {}  # who is running a statement: its statement number
        self._statements = 0
        self.broken = not forcing
        self.stalled: str | None = None  # who never reached its statement in STALLED_S

    def step(self, who: str) -> None:
        with self._cond:
            if self.broken:
                return
            if self._holder == who and who in self._ran:
                self._pass()
            seen: tuple[str, int | None] | None = None
            idle = 0.0  # how long the holder has been outside any statement, on its turn
            while self._holder != who and not self.broken:
                if self._cond.wait(BLOCKED_S):
                    continue
                now = (self._holder, self._inside.get(self._holder))
                if now[1] is not None and now == seen:  # the same statement for 2 × BLOCKED_S
                    self.broken = True
                    self._cond.notify_all()
                idle = idle + BLOCKED_S if now[1] is None and now == seen else 0.0
                if idle >= STALLED_S:  # bounded: never wait for ever on a Python-level lock
                    self.stalled, self.broken = now[0], True
                    self._cond.notify_all()
                seen = now
            self._ran.add(who)

    def enter(self, who: str) -> None:
        with self._cond:
            self._statements += 1
            self._inside[who] = self._statements

    def exit(self, who: str) -> None:
        with self._cond:
            self._inside.pop(who, None)

    def leave(self, who: str) -> None:
        with self._cond:
            if self._holder == who and len(self._order) > 1:
                self._pass()
            self._order.remove(who)
            self._cond.notify_all()

    def _pass(self) -> None:
        at = self._order.index(self._holder)
        self._holder = self._order[(at + 1) % len(self._order)]
        self._cond.notify_all()


@dataclass
class Trace:
    """What each connection did, in order: the race, as the learner reads it."""

    lines: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, line: str) -> None:
        with self.lock:
            self.lines.append(line)


class _Cursor:
    """The cursor a statement returned, logging the rows the spend reads."""

    def __init__(self, cursor: sqlite3.Cursor, who: str, trace: Trace) -> None:
        self._cursor, self._who, self._trace = cursor, who, trace

    def fetchone(self) -> Any:
        row = self._cursor.fetchone()
        self._trace.add(f"{self._who} read {row}")
        return row

    def fetchall(self) -> list[Any]:
        found = self._cursor.fetchall()
        self._trace.add(f"{self._who} read {found}")
        return found

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


class _InstanceCursor:
    """``db.cursor()``: its ``execute`` is the instance's, so it waits for its turn too."""

    def __init__(self, instance: Instance) -> None:
        self._instance = instance
        self._last: _Cursor | None = None

    def execute(self, sql: str, parameters: Any = ()) -> _InstanceCursor:
        self._last = self._instance.execute(sql, parameters)
        return self

    def __getattr__(self, name: str) -> Any:
        if self._last is None:
            raise AttributeError(name)
        return getattr(self._last, name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._last or ())


class Instance:
    """One server instance's connection, paused before each statement until the other instance
    has reached its own next statement. Anything else is the real ``sqlite3.Connection``'s."""

    def __init__(self, db: sqlite3.Connection, who: str, lockstep: Lockstep, trace: Trace) -> None:
        self._db, self._who, self._lockstep, self._trace = db, who, lockstep, trace

    def execute(self, sql: str, parameters: Any = ()) -> _Cursor:
        self._lockstep.step(self._who)
        self._lockstep.enter(self._who)
        text = " ".join(sql.split())
        try:
            cursor = self._db.execute(sql, parameters)
        except sqlite3.Error as exc:
            self._trace.add(f"{self._who} {text} → {type(exc).__name__}: {exc}")
            raise
        finally:
            self._lockstep.exit(self._who)
        changed = f" → {cursor.rowcount} row(s) changed" if cursor.rowcount >= 0 else ""
        self._trace.add(f"{self._who} {text}{changed}")
        return _Cursor(cursor, self._who, self._trace)

    def cursor(self) -> _InstanceCursor:
        return _InstanceCursor(self)  # cursor().execute goes through the turns too

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)

    def __enter__(self) -> Instance:
        self._db.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._db.__exit__(*exc)


@dataclass
class Race:
    """Two instances spent one token id at the same time: what each returned, and the trace."""

    jti: str
    returned: dict[str, Any]
    raised: dict[str, BaseException]
    rows: int
    trace: list[str]
    forced: bool  # the turns held to the end (they stop only for a spend that locks first)
    stalled: str | None = None  # the instance held back in Python for STALLED_S, if any

    @property
    def paid_twice(self) -> bool:
        return list(self.returned.values()) == [True, True]

    def __str__(self) -> str:
        lines = [f"two instances spend {self.jti!r} at once:", *(f"  {t}" for t in self.trace)]
        for who in ("A", "B"):
            if who in self.raised:
                error = self.raised[who]
                lines.append(f"  {who}'s spend raised {type(error).__name__}: {error}")
            else:
                lines.append(f"  {who}'s spend returned {self.returned[who]!r}")
        if self.paid_twice:
            lines.append("two calls both got True: paid twice")
        return "\n".join(lines)


def another_process(spend: Spend) -> tuple[Spend, list[str]]:
    """``spend`` as a second server process would run it, and the names of what it got its own
    copy of: the sets, dicts, lists and locks it reaches through its globals, default arguments
    and closure, copied (a lock: a new one), as they were when this is called. Everything else
    (modules, functions, the SQLite file) is shared, as it is between processes on one machine."""
    if not isinstance(spend, types.FunctionType):
        return spend, []
    copied: list[str] = []

    def own(name: str, value: Any) -> Any:
        if type(value) in _NEW_LOCK:
            copied.append(name)
            return _NEW_LOCK[type(value)]()
        if isinstance(value, _MEMORY_TYPES):
            copied.append(name)
            try:
                return copy.deepcopy(value)
            except Exception:  # a value deepcopy cannot copy: a shallow copy is still fresh
                return copy.copy(value)
        return value

    names = _global_names(spend.__code__)
    globals_ = dict(spend.__globals__)
    for name in sorted(names & globals_.keys()):
        globals_[name] = own(name, globals_[name])
    defaults = spend.__defaults__ and tuple(
        own("a default argument", d) for d in spend.__defaults__
    )
    closure = spend.__closure__ and tuple(
        types.CellType(own(name, cell.cell_contents))
        for name, cell in zip(spend.__code__.co_freevars, spend.__closure__, strict=True)
    )
    twin = types.FunctionType(spend.__code__, globals_, spend.__name__, defaults, closure)
    twin.__kwdefaults__ = spend.__kwdefaults__
    return twin, copied


def _global_names(code: types.CodeType) -> set[str]:
    """The names ``code`` and the functions defined inside it may read as globals."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def race(
    spend: Spend,
    path: str | Path | None = None,
    jti: str = "jti-1",
    *,
    forcing: bool = True,
    spend_b: Spend | None = None,
) -> Race:
    """Run ``spend`` for one ``jti`` on two connections to one file (instances A and B), in two
    threads, in lockstep: each statement waits until the other instance reaches its next one.
    ``spend_b``, if given, is what B runs (its own process's copy, ``another_process``)."""
    path = path or new_ledger()
    spends = {"A": spend, "B": spend_b or spend}
    lockstep, trace = Lockstep(["A", "B"], forcing=forcing), Trace()
    returned: dict[str, Any] = {}
    raised: dict[str, BaseException] = {}
    connections = {who: connect(path) for who in ("A", "B")}

    def run(who: str) -> None:
        try:
            returned[who] = spends[who](Instance(connections[who], who, lockstep, trace), jti)
        except BaseException as exc:  # the learner's code may raise anything: report it
            raised[who] = exc
        finally:
            lockstep.leave(who)

    threads = [threading.Thread(target=run, args=(who,)) for who in connections]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for db in connections.values():
        db.close()
    returned = {who: returned[who] for who in ("A", "B") if who in returned}
    forced = not lockstep.broken
    return Race(jti, returned, raised, rows(path, jti), trace.lines, forced, lockstep.stalled)


def check_then_act(db: sqlite3.Connection, jti: str) -> bool:
    """A spend that looks right: is it spent? If not, record it. Two instances can both read
    "not spent" before either records it."""
    if db.execute("SELECT 1 FROM spent WHERE jti = ?", (jti,)).fetchone():
        return False
    db.execute("INSERT OR IGNORE INTO spent (jti) VALUES (?)", (jti,))
    db.commit()
    return True
