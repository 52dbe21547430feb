"""Every ledger keeps the same contract (MRTR-S5d, SEC-7): an id spends once, atomically, and
is forgotten only after it expires. The memory ledger is checked in one process, the SQLite
ledger across processes on one machine, the Redis ledger against a real ``redis-server``."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections import Counter

import pytest

from mrtr_kit.server.ledger import Ledger, LedgerUnavailable, MemoryLedger, Record, open_ledger
from mrtr_kit.server.ledger.sqlite import SqliteLedger
from tests.ledger_services import spend_all, start_redis, stop

NOW = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.t = NOW

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def redis_url(tmp_path):
    server = start_redis(tmp_path)
    try:
        yield server.url
    finally:
        stop(server.proc)


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.slow)])
def make_ledger(request, tmp_path):
    """A factory: ``make_ledger(clock)`` -> a fresh ledger of this kind. A scenario closes it
    itself, inside its own event loop (a Redis connection belongs to one loop)."""
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None

    def make(clock: Clock) -> Ledger:
        if request.param == "memory":
            return MemoryLedger(now=clock)
        if request.param == "sqlite":
            return SqliteLedger(tmp_path / "spent.sqlite3", now=clock, sweep_every_s=0, create=True)
        from mrtr_kit.server.ledger.redis import RedisLedger

        return RedisLedger.from_url(url, now=clock)

    return make


def test_an_id_spends_once(make_ledger):
    """MRTR-S5d: True the first time, False every later time; ids are independent."""

    async def scenario():
        ledger = make_ledger(Clock())
        try:
            return [
                await ledger.spend("a", NOW + 60),
                await ledger.spend("a", NOW + 60),
                await ledger.spend("b", NOW + 60),
                await ledger.spend("a", NOW + 600),
            ]
        finally:
            await ledger.aclose()

    assert asyncio.run(scenario()) == [True, False, True, False]


def test_concurrent_spends_of_one_id_exactly_one_wins(make_ledger):
    """MRTR-S5d: 50 concurrent spends of one id (one event loop): exactly one True."""

    async def scenario():
        ledger = make_ledger(Clock())
        try:
            return await asyncio.gather(*(ledger.spend("same", NOW + 60) for _ in range(50)))
        finally:
            await ledger.aclose()

    assert Counter(asyncio.run(scenario())) == {True: 1, False: 49}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("sweep_every_s", [0, 3600], ids=["swept", "not-yet-swept"])
def test_expired_ids_are_forgotten_and_live_ones_are_not(kind, sweep_every_s, tmp_path):
    """An id is remembered until ``expires_at`` (no instance would accept it after) and may be
    forgotten then, so the store does not grow for ever. (Redis: PTTL, in the next test.)"""

    async def scenario():
        clock = Clock()
        if kind == "memory":
            ledger: Ledger = MemoryLedger(now=clock, sweep_every_s=sweep_every_s)
        else:
            path = tmp_path / "spent.sqlite3"
            ledger = SqliteLedger(path, now=clock, sweep_every_s=sweep_every_s, create=True)
        try:
            await ledger.spend("short", NOW + 10)
            await ledger.spend("long", NOW + 1000)
            clock.t = NOW + 11
            return await ledger.spend("short", NOW + 100), await ledger.spend("long", NOW + 1000)
        finally:
            await ledger.aclose()

    assert asyncio.run(scenario()) == (True, False)


@pytest.mark.slow  # a real redis-server
def test_redis_ledger_sets_nx_with_an_expiry(redis_url):
    """SET NX PX: the key exists once, and Redis drops it when the token expires anyway."""
    from mrtr_kit.server.ledger.redis import DEFAULT_PREFIX, RedisLedger

    async def scenario():
        ledger = RedisLedger.from_url(redis_url, now=Clock())
        try:
            first = await ledger.spend("jti-1", NOW + 90)
            again = await ledger.spend("jti-1", NOW + 90)
            ttl_ms = await ledger.redis.pttl(DEFAULT_PREFIX + "jti-1")
            keys = await ledger.redis.keys(DEFAULT_PREFIX + "*")
        finally:
            await ledger.aclose()
        return first, again, ttl_ms, keys

    first, again, ttl_ms, keys = asyncio.run(scenario())
    assert (first, again) == (True, False)
    assert 0 < ttl_ms <= 90_000
    assert keys == [(DEFAULT_PREFIX + "jti-1").encode()]


def test_sqlite_ledger_survives_a_restart(tmp_path):
    """A spend is on disk before the guarded step runs: a new process still refuses it."""
    path = tmp_path / "spent.sqlite3"

    async def spend_in_new_ledger():
        ledger = SqliteLedger(path, create=not path.exists())
        try:
            return await ledger.spend("jti", NOW * 2), ledger.spent_count()
        finally:
            await ledger.aclose()

    assert asyncio.run(spend_in_new_ledger()) == (True, 1)
    assert asyncio.run(spend_in_new_ledger()) == (False, 1)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_processes_sharing_a_ledger_spend_each_id_once(backend, tmp_path, request):
    """MRTR-S5d across processes: 4 processes race to spend the same 200 ids; every id is
    won by exactly one process."""
    if backend == "sqlite":
        spec = f"sqlite:{tmp_path / 'spent.sqlite3'}"
        asyncio.run(SqliteLedger(tmp_path / "spent.sqlite3", create=True).aclose())
    else:
        spec = request.getfixturevalue("redis_url")
    ids = [f"jti-{n}" for n in range(200)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        won = pool.starmap(spend_all, [(spec, ids)] * 4)
    assert Counter(t for per_process in won for t in per_process) == Counter(ids)


def test_open_ledger_reads_configuration(tmp_path):
    assert isinstance(open_ledger("memory"), MemoryLedger)
    sqlite = open_ledger(f"sqlite:{tmp_path / 'x.sqlite3'}", create=True)
    assert isinstance(sqlite, SqliteLedger)
    asyncio.run(sqlite.aclose())
    from mrtr_kit.server.ledger.redis import RedisLedger

    redis = open_ledger("redis://127.0.0.1:1/0", allow_volatile=True)  # connects lazily
    assert isinstance(redis, RedisLedger)
    asyncio.run(redis.aclose())
    for bad in ("sqlite:", "postgres://x", "", "Memory"):
        with pytest.raises(ValueError):
            open_ledger(bad)


def test_an_unreachable_ledger_fails_closed_with_a_retryable_error_kit_err_a(caplog):
    """KIT-ERR-A: if the ledger cannot be asked, nothing is paid: the spend raises, the core
    answers -31000 "try again later" with the reason, and the guarded step never runs. The
    operator's log says what failed; the client's error does not."""
    from mrtr_kit.server import McpServer
    from mrtr_kit.server.context import elicit_form
    from mrtr_kit.server.keyring import KeyRing
    from mrtr_kit.server.ledger.redis import RedisLedger
    from tests.helpers import error, request, result

    paid = []
    server = McpServer(
        "s",
        state_keys=KeyRing.generate(),
        ledger=RedisLedger.from_url("redis://127.0.0.1:1/0"),
    )
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    @server.tool(description="Pays once.")
    async def pay(ctx):
        if ctx.state is None:
            return ctx.input_required({"confirm": elicit_form("Pay?", schema)}, {})
        await ctx.redeem_once()
        paid.append(1)
        return "paid"

    caps = {"elicitation": {"form": {}}}
    first = result(
        asyncio.run(server.handle(request("tools/call", {"name": "pay"}, capabilities=caps)))
    )
    retry = {
        "name": "pay",
        "requestState": first["requestState"],
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
    }
    message = request("tools/call", retry, capabilities=caps)
    reply = asyncio.run(server.handle(message))
    assert error(reply) == {
        "code": -31000,
        "message": "Temporarily unavailable: try again later",
        "data": {"reason": "ledger_unavailable", "retryAfterMs": 2000},
    }
    assert paid == []
    logged = [r.getMessage() for r in caplog.records if r.name == "mrtr_kit.server"]
    assert len(logged) == 1 and "127.0.0.1:1" in logged[0], logged
    assert logged[0].startswith(f"request {message['id']}: the ledger is unavailable: Redis")


# -- business records: one per key, atomically, numbered per kind --------------------------------


def test_a_record_is_kept_once_per_key_and_numbered_per_kind(make_ledger):
    """``record_once`` is an idempotency key: the first body is kept; a later call gets it
    back and writes nothing. Each kind counts its own records, and ``records`` lists them in
    that order."""

    async def scenario():
        ledger = make_ledger(Clock())
        try:
            first = await ledger.record_once("payout", "refund:A-1", '{"cents": 100}')
            again = await ledger.record_once("payout", "refund:A-1", '{"cents": 999}')
            other = await ledger.record_once("payout", "refund:A-2", '{"cents": 5}')
            booking = await ledger.record_once("booking", "refund:A-1", "{}")  # another kind
            return (
                first,
                again,
                other,
                booking,
                await ledger.records("payout"),
                await ledger.record("payout", "refund:A-2"),
                await ledger.record("payout", "refund:A-3"),
            )
        finally:
            await ledger.aclose()

    first, again, other, booking, payouts, found, missing = asyncio.run(scenario())
    kept = Record("payout", 1, "refund:A-1", '{"cents": 100}')
    assert first == (kept, True) and again == (kept, False)
    assert other == (Record("payout", 2, "refund:A-2", '{"cents": 5}'), True)
    assert booking == (Record("booking", 1, "refund:A-1", "{}"), True)
    assert payouts == [kept, other[0]] and found == other[0] and missing is None


def test_concurrent_records_under_one_key_exactly_one_writes(make_ledger):
    async def scenario():
        ledger = make_ledger(Clock())
        try:
            return await asyncio.gather(
                *(ledger.record_once("payout", "refund:A-1", f'{{"n": {n}}}') for n in range(50))
            )
        finally:
            await ledger.aclose()

    outcomes = asyncio.run(scenario())
    assert sum(new for _, new in outcomes) == 1
    assert len({record for record, _ in outcomes}) == 1


def test_sqlite_write_that_cannot_get_the_lock_by_its_deadline_writes_nothing_kit_err_a(tmp_path):
    """Another process holds SQLite's write lock past the write's deadline: the write gives
    up with ``LedgerUnavailable`` and, once the lock is free, nothing of it is in the file."""
    import sqlite3

    path = tmp_path / "ledger.sqlite3"
    asyncio.run(SqliteLedger(path, create=True).aclose())  # the schema
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the write lock, held

    async def scenario():
        ledger = SqliteLedger(path, timeout_s=0.2)
        try:
            with pytest.raises(LedgerUnavailable):
                await ledger.spend("jti", NOW * 2)
            with pytest.raises(LedgerUnavailable):
                await ledger.record_once("payout", "refund:A-1", "{}")
            with pytest.raises(LedgerUnavailable):
                await ledger.flow_count("f", "otp")
            with pytest.raises(LedgerUnavailable):
                await ledger.flow_once("f", "deploy", "me")
        finally:
            holder.execute("ROLLBACK")
        try:
            return (
                ledger.spent_count(),
                await ledger.records("payout"),
                await ledger.flow_count("f", "otp"),
                await ledger.flow_once("f", "deploy", "me"),
            )
        finally:
            await ledger.aclose()

    assert asyncio.run(scenario()) == (0, [], 1, True)
    holder.close()


def test_sqlite_write_that_gets_its_turn_after_its_deadline_writes_nothing_kit_err_a(tmp_path):
    """The write waits its turn behind another write of this process (its connection's
    lock) until after its deadline: when its turn comes it must not write, since the caller
    has stopped waiting (``ledger.bounded``) and answered "try again later"."""
    import threading

    ledger = SqliteLedger(tmp_path / "ledger.sqlite3", timeout_s=0.2, create=True)
    release = threading.Event()

    def hold_the_turn() -> None:
        with ledger._lock:  # what a slow earlier write of this process would hold
            release.wait(10)

    holder = threading.Thread(target=hold_the_turn)
    holder.start()

    async def scenario():
        asyncio.get_running_loop().call_later(0.5, release.set)  # well past the deadline
        with pytest.raises(LedgerUnavailable):
            await ledger.spend("jti", NOW * 2)
        holder.join()
        try:
            return ledger.spent_count()
        finally:
            await ledger.aclose()

    assert asyncio.run(scenario()) == 0


def test_sqlite_full_disk_is_unavailable_not_a_crash_kit_err_a(tmp_path):
    """A write SQLite cannot make (here: the file may not grow, as on a full disk) raises
    ``LedgerUnavailable``, so the client gets -31000 "try again later", not -32603; and the
    ledger still works for what needs no new page."""
    ledger = SqliteLedger(tmp_path / "ledger.sqlite3", create=True)
    pages = ledger._db.execute("PRAGMA page_count").fetchone()[0]
    ledger._db.execute(f"PRAGMA max_page_count = {pages}")  # this connection's file is "full"

    async def scenario():
        try:
            with pytest.raises(LedgerUnavailable, match="full"):
                await ledger.record_once("payout", "refund:A-1", "x" * 20_000)
            return ledger.spent_count(), await ledger.records("payout")
        finally:
            await ledger.aclose()

    assert asyncio.run(scenario()) == (0, [])


# -- per-flow counters and marks (KIT): what holds across the forks of one call (MIG-3) ----------


def test_flow_counters_count_per_flow_and_name_and_undo_by_minus_one(make_ledger):
    """``flow_count`` adds and returns the new value, separately per (flow, name); ``by=-1``
    is the core's undo of a count."""

    async def scenario():
        ledger = make_ledger(Clock())
        try:
            return [
                await ledger.flow_count("f1", "otp"),
                await ledger.flow_count("f1", "otp"),
                await ledger.flow_count("f1", "sms"),
                await ledger.flow_count("f2", "otp"),
                await ledger.flow_count("f1", "otp", -1),
                await ledger.flow_count("f1", "otp"),
            ]
        finally:
            await ledger.aclose()

    assert asyncio.run(scenario()) == [1, 2, 1, 1, 1, 2]


def test_concurrent_flow_counts_each_get_their_own_number(make_ledger):
    """50 forks count at once: they get 1..50, each number once, so a limit of 3 lets exactly
    3 through however the forks race."""

    async def scenario():
        ledger = make_ledger(Clock())
        try:
            return await asyncio.gather(*(ledger.flow_count("f", "otp") for _ in range(50)))
        finally:
            await ledger.aclose()

    assert sorted(asyncio.run(scenario())) == list(range(1, 51))


def test_a_flow_mark_is_won_once_and_released_only_by_its_owner(make_ledger):
    """``flow_once``: first wins, per (flow, name); ``flow_release`` by another owner keeps the
    mark, by its owner removes it (the core's undo), and the name can be won again."""

    async def scenario():
        ledger = make_ledger(Clock())
        try:
            return [
                await ledger.flow_once("f1", "deploy", "a"),
                await ledger.flow_once("f1", "deploy", "b"),
                await ledger.flow_once("f2", "deploy", "b"),
                await ledger.flow_once("f1", "notify", "b"),
                await ledger.flow_release("f1", "deploy", "b"),
                await ledger.flow_once("f1", "deploy", "c"),
                await ledger.flow_release("f1", "deploy", "a"),
                await ledger.flow_once("f1", "deploy", "c"),
            ]
        finally:
            await ledger.aclose()

    assert asyncio.run(scenario()) == [True, False, True, True, None, False, None, True]


def test_concurrent_flow_marks_exactly_one_wins(make_ledger):
    async def scenario():
        ledger = make_ledger(Clock())
        try:
            return await asyncio.gather(
                *(ledger.flow_once("f", "deploy", f"owner-{n}") for n in range(50))
            )
        finally:
            await ledger.aclose()

    assert Counter(asyncio.run(scenario())) == {True: 1, False: 49}


def test_mrtr_s5d_an_unspent_id_spends_again(make_ledger):
    """MRTR-S5d with the core's undo (KIT-ERR-A): ``unspend`` forgets one spent id, so the same
    state spends once more; other ids stay spent, and unspending an unknown id is no error."""

    async def scenario():
        ledger = make_ledger(Clock())
        try:
            await ledger.spend("a", NOW + 60)
            await ledger.spend("b", NOW + 60)
            await ledger.unspend("a")
            await ledger.unspend("never-spent")
            return [
                await ledger.spend("a", NOW + 60),
                await ledger.spend("a", NOW + 60),
                await ledger.spend("b", NOW + 60),
            ]
        finally:
            await ledger.aclose()

    assert asyncio.run(scenario()) == [True, False, False]


def test_sqlite_flow_entries_survive_a_restart(tmp_path):
    """A count and a mark are on disk: a new process continues the count and sees the mark."""
    path = tmp_path / "ledger.sqlite3"

    async def count_and_mark():
        ledger = SqliteLedger(path, create=not path.exists())
        try:
            return await ledger.flow_count("f", "otp"), await ledger.flow_once("f", "deploy", "x")
        finally:
            await ledger.aclose()

    assert asyncio.run(count_and_mark()) == (1, True)
    assert asyncio.run(count_and_mark()) == (2, False)


@pytest.mark.slow  # a real redis-server
def test_redis_flow_writes_that_arrive_after_their_deadline_write_nothing_kit_err_a(redis_url):
    """KIT-ERR-A, as for spends: each flow script compares its deadline with Redis's clock and
    writes nothing when it arrives late (a Redis woken after the server gave up)."""
    from mrtr_kit.server.ledger.redis import RedisLedger

    async def scenario():
        ledger = RedisLedger.from_url(redis_url, now=Clock())
        late = "0"  # a deadline long past
        key = ledger.flows_prefix + "f:"
        try:
            await ledger.redis.set(key + "once:held", "owner")
            await ledger.spend("jti", NOW * 2)
            outcomes = [
                await ledger._flow_count(keys=[key + "count:otp"], args=[1, late]),
                await ledger._flow_once(keys=[key + "once:deploy"], args=["me", late]),
                await ledger._flow_release(keys=[key + "once:held"], args=["owner", late]),
                await ledger._delete(keys=[ledger.prefix + "jti"], args=[late]),
            ]
            kept = sorted(await ledger.redis.keys("mrtr-kit:*"))
        finally:
            await ledger.aclose()
        return outcomes, kept

    outcomes, kept = asyncio.run(scenario())
    assert outcomes == [[-1, 0], -1, -1, -1]
    assert kept == [b"mrtr-kit:flows:f:once:held", b"mrtr-kit:spent:jti"]
