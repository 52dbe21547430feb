"""A ledger in Redis, for a fleet of machines (MRTR-S5d, and the business records of
``ledger.py``).

Each write is one Lua script, and Redis runs a script as one step: no other command runs
between its check and its write, from any process on any machine. A spend is ``SET NX PX``
on ``<prefix><token id>``, so of any number of concurrent spends of one id exactly one sets
the key, and the expiry makes Redis forget the id once no instance would accept the token
anyway. A record takes the next number of its kind (``INCR``) and is kept in two hashes (key
-> number, number -> body). A flow counter is ``INCRBY`` and a flow mark ``SET NX`` holding
its owner, under ``<flows prefix><flow id>:``. Before writing, each script compares the
write's deadline with Redis's own clock (``TIME``) and refuses a write that arrives late: a
Redis frozen while the server waited, and woken after the server gave up, writes nothing
(``ledger.bounded``).

Configure Redis for it: persistence decides whether a spend or a record survives a Redis
restart. ``check_persistence`` refuses a Redis with neither AOF nor snapshots (it forgets
everything when it restarts); ``serve --allow-volatile-ledger`` opts out, for a throw-away
demo. AOF with ``appendfsync always`` keeps every acknowledged write across a crash; with
``everysec``, up to a second of writes; snapshots alone, everything since the last one. A
replica that has not yet received a write can, after a failover, accept the same id again.
Needs the ``redis`` package (``pip install 'mrtr-kit[redis]'``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import redis
from redis.asyncio import BlockingConnectionPool, Redis
from redis.commands.core import AsyncScript

from .base import LEDGER_TIMEOUT_S, LedgerUnavailable, Record, bounded

DEFAULT_PREFIX = "mrtr-kit:spent:"
RECORDS_PREFIX = "mrtr-kit:records:"
FLOWS_PREFIX = "mrtr-kit:flows:"

# Whether a deadline (epoch seconds) is past by Redis's own clock.
_LATE = """
local function late(deadline)
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1e6 > tonumber(deadline)
end
"""

# KEYS[1] the spent key; ARGV: ttl in ms, deadline. Returns 1 spent, 0 spent before, -1 late.
SPEND = (
    _LATE
    + """
if late(ARGV[2]) then return -1 end
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 1 end
return 0
"""
)

# KEYS: key -> seq hash, seq -> body hash, the kind's counter; ARGV: key, body, deadline.
# Returns {1 new | 0 kept | -1 late, seq, body}.
RECORD_ONCE = (
    _LATE
    + """
local seq = redis.call('HGET', KEYS[1], ARGV[1])
if seq then return {0, tonumber(seq), redis.call('HGET', KEYS[2], seq)} end
if late(ARGV[3]) then return {-1, 0, ''} end
seq = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[1], ARGV[1], seq)
redis.call('HSET', KEYS[2], seq, ARGV[2])
return {1, seq, ARGV[2]}
"""
)

# KEYS[1] the key; ARGV: deadline. Returns 1 done, -1 late. (An unspend.)
DELETE = (
    _LATE
    + """
if late(ARGV[1]) then return -1 end
redis.call('DEL', KEYS[1])
return 1
"""
)

# KEYS[1] the counter; ARGV: by, deadline. Returns {1 | -1 late, the new value}.
FLOW_COUNT = (
    _LATE
    + """
if late(ARGV[2]) then return {-1, 0} end
return {1, redis.call('INCRBY', KEYS[1], ARGV[1])}
"""
)

# KEYS[1] the mark; ARGV: owner, deadline. Returns 1 marked, 0 marked before, -1 late.
FLOW_ONCE = (
    _LATE
    + """
if late(ARGV[2]) then return -1 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 1 end
return 0
"""
)

# KEYS[1] the mark; ARGV: owner, deadline. Deletes it only if owner made it. 1 done, -1 late.
FLOW_RELEASE = (
    _LATE
    + """
if late(ARGV[2]) then return -1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""
)

# Errors that mean "Redis did not answer, or cannot write now": the write was not applied.
_UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError)


class VolatileRedis(ValueError):
    """This Redis would forget every spend when it restarts."""


def check_persistence(url: str, *, timeout_s: float = LEDGER_TIMEOUT_S) -> str:
    """Ask the Redis at ``url`` how it persists; return that in words, or raise
    ``VolatileRedis`` when it keeps nothing across a restart (no AOF and no snapshots), or
    when it will not say (``CONFIG`` disabled), and ``LedgerUnavailable`` when it cannot be
    reached. Runs once at start-up, with its own short-lived connection."""
    client = redis.Redis.from_url(
        url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, decode_responses=True
    )
    try:
        appendonly = client.config_get("appendonly").get("appendonly")
        save = client.config_get("save").get("save")
    except redis.ResponseError as exc:
        raise VolatileRedis(
            f"Redis at {url} does not say how it persists ({exc}); if spends survive its "
            "restarts, start with --allow-volatile-ledger to skip this check"
        ) from exc
    except _UNAVAILABLE as exc:
        raise LedgerUnavailable(f"cannot reach the Redis ledger at {url}: {exc}") from exc
    finally:
        client.close()
    if appendonly == "yes":
        return "AOF"
    if save:
        return f"snapshots only (save {save}): a crash forgets spends since the last one"
    raise VolatileRedis(
        f"Redis at {url} keeps nothing across a restart (appendonly no, save ''): every "
        "approval spent before a restart could be paid again after it. Turn on AOF "
        "(redis-server --appendonly yes), or, for a throw-away demo only, start with "
        "--allow-volatile-ledger"
    )


class RedisLedger:
    """Spent token ids as expiring Redis keys, and business records in hashes, shared by
    every instance of a fleet."""

    def __init__(
        self,
        client: Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        records_prefix: str = RECORDS_PREFIX,
        flows_prefix: str = FLOWS_PREFIX,
        now: Callable[[], float] = time.time,
        timeout_s: float = LEDGER_TIMEOUT_S,
    ) -> None:
        """Keep the ledger in the Redis ``client``, under keys starting with ``prefix`` (spent
        ids), ``records_prefix`` and ``flows_prefix``; every write is bounded by ``timeout_s``
        (``bounded``)."""
        self.redis = client
        self.timeout_s = timeout_s
        self.prefix = prefix
        self.records_prefix = records_prefix
        self.flows_prefix = flows_prefix
        self._now = now
        self._spend = client.register_script(SPEND)
        self._record_once = client.register_script(RECORD_ONCE)
        self._delete = client.register_script(DELETE)
        self._flow_count = client.register_script(FLOW_COUNT)
        self._flow_once = client.register_script(FLOW_ONCE)
        self._flow_release = client.register_script(FLOW_RELEASE)

    @classmethod
    def from_url(
        cls, url: str, *, max_connections: int = 50, timeout_s: float = LEDGER_TIMEOUT_S, **kw: Any
    ) -> RedisLedger:
        """``redis://HOST:PORT/DB`` (or ``rediss://`` for TLS). Connects on the first write."""
        # A blocking pool: a burst of writes waits for a free connection instead of failing;
        # every wait is bounded, so an unreachable Redis is an error, not a hang.
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=timeout_s,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
        )
        return cls(Redis.from_pool(pool), timeout_s=timeout_s, **kw)

    async def _run(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """One script, bounded: its deadline is its last argument (``ledger.bounded``)."""

        async def write(deadline: float) -> Any:
            try:
                return await script(keys=keys, args=[*args, repr(deadline)])
            except _UNAVAILABLE as exc:
                raise LedgerUnavailable(f"Redis ledger: {exc}") from exc

        return await bounded(write, timeout_s=self.timeout_s)

    async def spend(self, token_id: str, expires_at: float) -> bool:
        """``Ledger.spend``: record ``token_id`` as spent until ``expires_at``; True the first time,
        False after (MRTR-S5d)."""
        ttl_ms = max(1, math.ceil((expires_at - self._now()) * 1000))
        outcome = await self._run(self._spend, [self.prefix + token_id], [ttl_ms])
        if outcome == -1:
            raise LedgerUnavailable("the spend reached Redis after its deadline")
        return bool(outcome == 1)

    async def unspend(self, token_id: str) -> None:
        """``Ledger.unspend``: forget that ``token_id`` was spent."""
        if await self._run(self._delete, [self.prefix + token_id], []) == -1:
            raise LedgerUnavailable("the unspend reached Redis after its deadline")

    def _flow_key(self, flow_id: str, what: str, name: str) -> str:
        return f"{self.flows_prefix}{flow_id}:{what}:{name}"

    async def flow_count(self, flow_id: str, name: str, by: int = 1) -> int:
        """``Ledger.flow_count``: add ``by`` to the flow's counter ``name``; the new value."""
        key = self._flow_key(flow_id, "count", name)
        outcome, value = await self._run(self._flow_count, [key], [by])
        if outcome == -1:
            raise LedgerUnavailable("the count reached Redis after its deadline")
        return int(value)

    async def flow_once(self, flow_id: str, name: str, owner: str) -> bool:
        """``Ledger.flow_once``: mark ``name`` done in the flow; True the first time."""
        key = self._flow_key(flow_id, "once", name)
        outcome = await self._run(self._flow_once, [key], [owner])
        if outcome == -1:
            raise LedgerUnavailable("the mark reached Redis after its deadline")
        return bool(outcome == 1)

    async def flow_release(self, flow_id: str, name: str, owner: str) -> None:
        """``Ledger.flow_release``: remove the mark if ``owner`` made it."""
        key = self._flow_key(flow_id, "once", name)
        if await self._run(self._flow_release, [key], [owner]) == -1:
            raise LedgerUnavailable("the release reached Redis after its deadline")

    def _record_keys(self, kind: str) -> list[str]:
        base = f"{self.records_prefix}{kind}:"
        return [base + "keys", base + "bodies", base + "count"]

    async def record_once(self, kind: str, key: str, body: str) -> tuple[Record, bool]:
        """``Ledger.record_once``: keep ``body`` under ``(kind, key)`` unless a record is there;
        returns ``(record, created)``."""
        keys = self._record_keys(kind)
        outcome, seq, kept = await self._run(self._record_once, keys, [key, body])
        if outcome == -1:
            raise LedgerUnavailable("the record reached Redis after its deadline")
        return Record(kind, int(seq), key, _text(kept)), outcome == 1

    async def record(self, kind: str, key: str) -> Record | None:
        """``Ledger.record``: the record kept under ``(kind, key)``, or None."""
        by_key, bodies, _ = self._record_keys(kind)
        try:
            seq = await self.redis.hget(by_key, key)
            body = None if seq is None else await self.redis.hget(bodies, seq)
        except _UNAVAILABLE as exc:
            raise LedgerUnavailable(f"Redis ledger: {exc}") from exc
        return None if seq is None or body is None else Record(kind, int(seq), key, _text(body))

    async def records(self, kind: str) -> list[Record]:
        """``Ledger.records``: every record of ``kind``, oldest first."""
        by_key, bodies, _ = self._record_keys(kind)
        try:
            seqs = await self.redis.hgetall(by_key)
            texts = await self.redis.hgetall(bodies)
        except _UNAVAILABLE as exc:
            raise LedgerUnavailable(f"Redis ledger: {exc}") from exc
        found = [Record(kind, int(s), _text(k), _text(texts[s])) for k, s in seqs.items()]
        return sorted(found, key=lambda r: r.seq)

    async def aclose(self) -> None:
        """Close the Redis client."""
        await self.redis.aclose()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
