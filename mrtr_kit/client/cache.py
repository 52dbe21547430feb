"""What a caching client would keep (CACHE-1..7, MRTR-C9). No I/O.

* ``may_cache`` — whether a result may be cached at all (MRTR-C9: never one of a round with
  MRTR inputs, never an ``input_required`` one);
* ``cache_key`` and ``fresh_for_ms`` — under which key (CACHE-4) and for how long (CACHE-5);
* ``ResultCache`` — a sans-IO cache applying the three. The kit's client caches nothing unless
  given one.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..protocol.constants import CACHEABLE_METHODS
from .results import Complete, Outcome


def may_cache(request: Mapping[str, Any], outcome: Outcome) -> bool:
    """Whether a cache may keep this result (MRTR-C9).

    Never an ``input_required`` result (CACHE-2), never the result of a request that carried
    ``inputResponses`` or ``requestState`` — its inputs are not in any cache key (CACHE-3) —
    and only for the cacheable methods (CACHE-1, CACHE-6). The kit's session caches nothing;
    this is the rule a caching client would apply.
    """
    if not isinstance(outcome, Complete):
        return False
    params = request.get("params") or {}
    if "inputResponses" in params or "requestState" in params:
        return False
    return request.get("method") in CACHEABLE_METHODS


CacheKey = tuple[str, str, str | None]


def cache_key(request: Mapping[str, Any]) -> CacheKey | None:
    """CACHE-4: the key of a cacheable request: its method plus the params that change the
    result (``uri`` for ``resources/read``, ``cursor`` for a list page; ``server/discover``
    has none). Ids, ``_meta`` and anything else are not part of it. None for a request whose
    result may never be cached (CACHE-6, or one carrying MRTR inputs, CACHE-3)."""
    method = request.get("method")
    params = request.get("params") or {}
    if method not in CACHEABLE_METHODS:
        return None
    if "inputResponses" in params or "requestState" in params:
        return None
    if method == "resources/read":
        return (method, "uri", str(params.get("uri")))
    cursor = params.get("cursor")  # None (the first page) is a key of its own, apart from ""
    return (method, "cursor", None if cursor is None else str(cursor))


def fresh_for_ms(result: Mapping[str, Any]) -> int:
    """CACHE-5: how long a result stays fresh, read defensively: ``ttlMs`` absent, not a whole
    number, or negative all count as 0 (stale at once)."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
        return 0
    return ttl


class ResultCache:
    """A sans-IO result cache for one client (one authorisation context, so ``private``
    results may be reused too; CACHE-1). ``now`` is injectable; milliseconds, monotonic.

    Keeps only what ``may_cache`` allows (MRTR-C9), under ``cache_key`` (CACHE-4), and serves
    an entry only while ``now < received + ttlMs`` (CACHE-5). ``McpClient(cache=...)`` uses it
    for plain requests; the kit's client caches nothing unless given one.
    """

    def __init__(self, now: Callable[[], float] | None = None) -> None:
        self._now = now or (lambda: time.monotonic() * 1000)
        self._entries: dict[CacheKey, tuple[float, dict[str, Any]]] = {}

    def store(self, request: Mapping[str, Any], outcome: Outcome) -> bool:
        """Keep ``outcome`` if a cache may; True when kept."""
        key = cache_key(request)
        if key is None or not may_cache(request, outcome):
            return False
        ttl = fresh_for_ms(outcome.result)
        if ttl == 0:
            self._entries.pop(key, None)
            return False
        self._entries[key] = (self._now() + ttl, copy.deepcopy(outcome.result))
        return True

    def lookup(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """A fresh result stored for this very method and params, else None."""
        key = cache_key(request)
        if key is None or key not in self._entries:
            return None
        fresh_until, result = self._entries[key]
        if self._now() >= fresh_until:
            del self._entries[key]
            return None
        return copy.deepcopy(result)

    def clear(self) -> None:
        """Forget everything (e.g. on a list_changed notification, CACHE-5)."""
        self._entries.clear()
