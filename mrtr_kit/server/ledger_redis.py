"""A single-use ledger in Redis, for a fleet of machines (MRTR-S5d).

Spending is one command: ``SET <prefix><token id> 1 NX PX <ms until expiry>``. Redis runs
commands one at a time, so of any number of concurrent spends of one id - from any process
on any machine - exactly one sets the key; the others get nil (False). The expiry makes
Redis forget the id once no instance would accept the token anyway.

Configure Redis for it: persistence (AOF with ``appendfsync always``, or at least
``everysec``) decides whether a spend survives a Redis crash; a replica that has not yet
received a write can, after a failover, accept the same id again. Needs the ``redis``
package (``pip install 'mrtr-kit[redis]'``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis

DEFAULT_PREFIX = "mrtr-kit:spent:"


class RedisLedger:
    """Spent token ids as expiring Redis keys, shared by every instance of a fleet."""

    def __init__(
        self,
        client: Redis,
        *,
        prefix: str = DEFAULT_PREFIX,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.redis = client
        self.prefix = prefix
        self._now = now

    @classmethod
    def from_url(cls, url: str, *, max_connections: int = 50, **kw: Any) -> RedisLedger:
        """``redis://HOST:PORT/DB`` (or ``rediss://`` for TLS)."""
        # A blocking pool: a burst of spends waits for a free connection instead of failing.
        pool = BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=10)
        return cls(Redis.from_pool(pool), **kw)

    async def spend(self, token_id: str, expires_at: float) -> bool:
        ttl_ms = max(1, math.ceil((expires_at - self._now()) * 1000))
        created = await self.redis.set(self.prefix + token_id, b"1", nx=True, px=ttl_ms)
        return bool(created)

    async def aclose(self) -> None:
        await self.redis.aclose()
