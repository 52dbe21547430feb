"""Which era a server speaks, from what it answered (VER-4); no I/O.

A dual-era HTTP client sends its first request the 2026-07-28 way. A ``400`` whose body is a
recognised modern error (``-32022``, ``-32021``, ``-32020``, or ``-32601`` with ``404``) means "a
modern server: fix the request"; any other ``400`` (a legacy server's "missing session id",
"unsupported protocol version", or no JSON-RPC body at all) means "legacy: fall back to
``initialize``". Once an origin has answered the modern way, it is never taken for legacy
again: a later ``400`` is that request's problem, not the server's era.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from ..protocol.errors import (
    HEADER_MISMATCH,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
)

Era = Literal["modern", "legacy"]

# VER-4: the errors only a 2026-07-28 server sends (-32022 unsupported version, -32021 missing
# capability, -32020 header mismatch); -32601 counts only with a 404 (HTTP-17).
MODERN_CODES = frozenset(
    {UNSUPPORTED_PROTOCOL_VERSION, MISSING_REQUIRED_CLIENT_CAPABILITY, HEADER_MISMATCH}
)


def origin_of(url: str) -> str:
    """The origin (scheme, host and port) the era is cached for: ``http://host:port``."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def is_modern_error(response: Mapping[str, Any] | None, http_status: int) -> bool:
    """Whether an error response is one only a 2026-07-28 server gives (VER-4)."""
    error = response.get("error") if response is not None else None
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, int) or isinstance(code, bool):
        return False
    return code in MODERN_CODES or (code == METHOD_NOT_FOUND and http_status == 404)


def era_of_answer(response: Mapping[str, Any] | None, http_status: int) -> Era | None:
    """What one answer to a 2026-07-28 request says about the server: ``legacy`` for a 400
    that is not a modern error (``response`` None: its body was no JSON-RPC message);
    ``modern`` for a modern error or any JSON-RPC answer with a 2xx status; None when it says
    nothing (a 401, a 5xx, ...)."""
    if is_modern_error(response, http_status):
        return "modern"
    if http_status == 400:
        return "legacy"
    if 200 <= http_status < 300 and response is not None:
        return "modern"
    return None


class EraCache:
    """The era of each origin a client has heard from (VER-4's SHOULD). One per ``McpClient``
    unless several share one (pass the same ``EraCache``). ``learn`` never turns a modern
    origin legacy: no downgrade after a modern answer."""

    def __init__(self) -> None:
        """An empty cache: every origin's era is unknown."""
        self._eras: dict[str, Era] = {}

    def get(self, url: str) -> Era | None:
        """The era cached for ``url``'s origin, or None."""
        return self._eras.get(origin_of(url))

    def learn(self, url: str, era: Era | None) -> Era | None:
        """Record what an answer said (``era_of_answer``), unless the origin is known already;
        return the origin's era."""
        origin = origin_of(url)
        known = self._eras.get(origin)
        if known is None and era is not None:
            self._eras[origin] = era
            return era
        return known

    def settle(self, url: str, era: Era) -> None:
        """Set ``url``'s origin's era whatever was learnt: a server taken for legacy whose
        ``initialize`` got a modern refusal is modern after all."""
        self._eras[origin_of(url)] = era

    def forget(self, url: str) -> None:
        """Forget ``url``'s origin (a server that was replaced)."""
        self._eras.pop(origin_of(url), None)
