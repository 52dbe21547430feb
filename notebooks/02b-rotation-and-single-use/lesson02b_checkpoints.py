"""The checkpoints of lesson 02b (02b-rotation-and-single-use.ipynb).

* ``check_rotation_plan`` (exercise 1) rolls your plan's key rings out to two refund server
  instances, one at a time, and after every step seals and checks real states: no state may be
  rejected on the way, and at the end the old key must be gone.
* ``check_spend_once`` (exercise 2) spends token ids with your ``spend_once`` on two
  connections to one SQLite file, one after the other, then in races that force the
  interleaving a check-then-act spend loses (``race``, in ``lesson02b_spend.py`` beside this
  file). Instance B runs its own process's copy of your function (``another_process``): what
  you keep in Python (a set, a lock) is not B's.

The lab the first builds (``RefundLab``) is ``course/mrtr_course/refund_lab/lab.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import lesson02b_spend
from lesson02b_spend import Spend, another_process, connect, new_ledger, race, rows

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.refund_lab.lab import RefundLab
from mrtr_kit.server.codecs import InvalidState
from mrtr_kit.server.keyring import KeyRing, StateKey
from mrtr_kit.server.state import StateBinding, request_digest

RACE_ROUNDS = 20  # the races check_spend_once runs, each forced statement by statement


def _not_done(name: str) -> Checkpoint:
    return Checkpoint(
        "not done", f"{name}() still raises NotImplementedError. Fill it in and run again."
    )


def _raised(name: str, exc: Exception) -> Checkpoint:
    return Checkpoint("not yet", f"{name}() raised {type(exc).__name__}: {exc}")


# -- exercise 1: your rotation plan, rolled out to two instances --------------------------------


def check_rotation_plan(
    rotation_plan: Callable[[KeyRing, StateKey], list[KeyRing]],
) -> Checkpoint:
    """Exercise 1: roll ``rotation_plan``'s rings out to two instances, one at a time, and
    check that no state is ever rejected on the way and that the old key is gone at the end."""
    old, new = StateKey.generate("k1"), StateKey.generate("k2")
    current = KeyRing([old])
    try:
        plan = list(rotation_plan(current, new))
    except NotImplementedError:
        return _not_done("rotation_plan")
    except Exception as exc:
        return _raised("rotation_plan", exc)
    if not plan or not all(isinstance(ring, KeyRing) for ring in plan):
        return Checkpoint("not yet", "rotation_plan() must return a non-empty list of KeyRings")

    a = RefundLab.build("hmac", keys=current, label="A")
    b = RefundLab.build("hmac", keys=current, label="B", clock=a.clock, desk=a.desk)
    fleet = (a, b)
    binding = StateBinding("alice", request_digest("tools/call", "request_refund", {}))
    in_flight = [(lab, lab.server.states.mint(binding, [], {})) for lab in fleet]
    ttl = a.server.states.ttl_s + 2 * a.server.states.skew_s
    for step, ring in enumerate(plan, 1):
        if set(a.keys.kids) - set(ring.kids):  # a key goes: the operator first waits a TTL
            a.clock.advance(ttl)
            in_flight = []  # every state issued so far has expired
        for lab in fleet:
            lab.keys = ring
            fresh = [(other, other.server.states.mint(binding, [], {})) for other in fleet]
            in_flight += fresh
            for origin, token in in_flight:
                for target in fleet:
                    try:
                        target.server.states.verify(token, binding)
                    except InvalidState as exc:
                        return Checkpoint(
                            "not yet",
                            f"step {step} {ring!r} reached {lab.label} before the other "
                            f"instance: a state sealed by {origin.label} was rejected by "
                            f"{target.label} ({exc.reason})",
                        )
    final = a.keys
    if final.primary.kid != new.kid:
        return Checkpoint("not yet", f"at the end {final!r} still seals with {final.primary.kid}")
    if old.kid in final.kids:
        return Checkpoint("not yet", f"at the end {final!r} still opens {old.kid}: retire it")
    return Checkpoint(
        "passed",
        f"{len(plan)} steps, every state accepted by both instances throughout; now {final!r}.",
    )


# -- exercise 2: your atomic spend, raced on two connections to one file ------------------------


def _call(spend: Spend, db: Any, jti: str) -> tuple[Any, BaseException | None]:
    try:
        return spend(db, jti), None
    except NotImplementedError:
        raise
    except Exception as exc:
        return None, exc


def _own_copies(copied: list[str]) -> str:
    """Why B, another process, disagrees with A: what it has its own copy of."""
    if not copied:
        return ""
    return (
        f"\nInstance B is another process: it has its own {', '.join(copied)}, not A's. A set "
        "or dict in Python is one process's memory, and a threading.Lock serialises one "
        "process's threads only. Decide from the SQLite file alone: one INSERT that conflicts "
        "on the primary key, and its cursor.rowcount."
    )


def _sequential(spend: Spend, path: Path, spend_b: Spend, copied: list[str]) -> str | None:
    """One instance after the other: the first spend of an id is True, every later one False,
    on either connection, and the id is in the file. A problem found, or None."""
    a, b = connect(path), connect(path)
    try:
        first, error = _call(spend, a, "seq-1")
        if error is not None:
            return f"the first spend of a new id raised {type(error).__name__}: {error}"
        if first is not True:
            return f"the first spend of a new id returned {first!r}: it must return True"
        if a.in_transaction:
            return (
                "spend_once() left its transaction open: the other instance cannot write "
                "until it ends. Commit (db.commit()) before you return."
            )
        stored = rows(path, "seq-1")
        again, error = _call(spend, a, "seq-1")
        if error is not None:
            return (
                f"spending an id a second time raised {type(error).__name__}: {error}. A spend "
                "that loses returns False: the server then refuses the state with -32602."
            )
        if stored == 0 and again is False:
            return (
                "the id is not in the SQLite file, yet the repeat on the same connection got "
                "False: you remember spent ids in Python (a dict or a set). Another instance, "
                "another process, has its own memory and pays again. Record it in the file."
            )
        if stored == 0:
            return (
                "spend_once() returned True but recorded nothing: the spent table has no row "
                "for the id, so every instance pays it again. INSERT it."
            )
        if again is not False:
            return (
                f"the same id spent twice on one connection returned True, then {again!r}: "
                "report whether THIS call inserted the row (cursor.rowcount == 1), not True "
                "every time"
            )
        other, error = _call(spend_b, b, "seq-1")
        if error is not None or other is not False:
            shown = f"raised {type(error).__name__}" if error else f"returned {other!r}"
            return (
                f"instance B spending the id A had spent {shown}: it must return False"
                + _own_copies(copied)
            )
        return None
    finally:
        a.close()
        b.close()


def check_spend_once(spend_once: Spend, rounds: int = RACE_ROUNDS) -> Checkpoint:
    """Exercise 2: is ``spend_once(db, jti)`` a spend two instances cannot both win?"""
    path = new_ledger()
    spend_b, copied = another_process(spend_once)  # B: a second process, its own memory
    try:
        problem = _sequential(spend_once, path, spend_b, copied)
    except NotImplementedError:
        return _not_done("spend_once")
    if problem:
        return Checkpoint("not yet", problem)
    forced = 0
    for n in range(1, rounds + 1):
        # Once a spend has been seen to take the lock first, the turns cannot be held: race free.
        result = race(spend_once, path, f"race-{n}", forcing=forced == n - 1, spend_b=spend_b)
        forced += result.forced
        if result.stalled:
            other = "B" if result.stalled == "A" else "A"
            return Checkpoint(
                "not yet",
                f"{result}\nround {n}: instance {result.stalled} did not reach its next "
                f"statement in {lesson02b_spend.STALLED_S:.0f} s while instance {other} waited "
                "for it in the middle of its own spend: something in Python holds one "
                "instance until the other is done, most likely a lock (threading.Lock) around "
                "the check and the insert. Two server instances are two processes and never "
                "share such a lock, so there the check-then-act still pays twice. Check and "
                "record in ONE statement: an INSERT that conflicts on the primary key, and its "
                "cursor.rowcount.",
            )
        winners = [who for who, value in result.returned.items() if value is True]
        if result.raised:
            return Checkpoint(
                "not yet",
                f"{result}\nA spend that loses the race must return False, not raise: "
                "make the INSERT itself the check (ON CONFLICT DO NOTHING, or catch "
                "sqlite3.IntegrityError).",
            )
        if len(winners) != 1 or result.rows != 1:
            return Checkpoint(
                "not yet",
                f"{result}\nround {n}: both instances read 'not spent' before either recorded "
                "it. Check and record in ONE statement: an INSERT that conflicts on the "
                "primary key, and its cursor.rowcount." + _own_copies(copied),
            )
    return Checkpoint(
        "passed",
        f"{rounds} races of two instances on one file, {forced} of them taken statement by "
        "statement, in turns: exactly one spend won each; a repeat on either instance got "
        "False.",
    )
