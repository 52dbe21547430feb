"""A 2025-11-25 ("push style") MCP server and client, kept only for the migration lesson.

Do not build on this package: 2026-07-28 removed everything it does (the ``initialize``
handshake, ``Mcp-Session-Id`` sessions, server-to-client requests). It exists so that the
lesson can run the old pattern for real, watch it fail behind a load balancer, and port it to
MRTR (notebook 03, digest §12).

* ``server``   — ``LegacyServer``: tools that ``await ctx.elicit(...)``, waiting in-process
* ``sessions`` — per-process (``LocalSessions``) or fleet-wide signed (``SignedSessions``)
* ``http``     — the 2025-11-25 Streamable HTTP endpoint (``create_legacy_app``)
* ``client``   — ``LegacyClient``: handshake, session, answers POSTed back to the server
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each name from its module, imported when first used: a server that only needs
# ``LegacyServer`` (the examples' registry) does not load the client and its HTTP stack.
_WHERE = {
    "LegacyClient": "client",
    "LegacyClientError": "client",
    "LegacyExchange": "client",
    "LegacyHttpError": "client",
    "LegacyRemoteError": "client",
    "format_trace": "client",
    "INSTANCE_HEADER": "http",
    "create_legacy_app": "http",
    "LEGACY_PROTOCOL_VERSION": "server",
    "REQUEST_TIMEOUT": "server",
    "LegacyError": "server",
    "LegacyServer": "server",
    "LegacyToolContext": "server",
    "PendingRequests": "server",
    "LocalSessions": "sessions",
    "Session": "sessions",
    "SignedSessions": "sessions",
}

__all__ = [
    "INSTANCE_HEADER",
    "LEGACY_PROTOCOL_VERSION",
    "REQUEST_TIMEOUT",
    "LegacyClient",
    "LegacyClientError",
    "LegacyError",
    "LegacyExchange",
    "LegacyHttpError",
    "LegacyRemoteError",
    "LegacyServer",
    "LegacyToolContext",
    "LocalSessions",
    "PendingRequests",
    "Session",
    "SignedSessions",
    "create_legacy_app",
    "format_trace",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value  # once found, an ordinary module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


if TYPE_CHECKING:
    from mrtr_course.legacy.client import (
        LegacyClient,
        LegacyClientError,
        LegacyExchange,
        LegacyHttpError,
        LegacyRemoteError,
        format_trace,
    )
    from mrtr_course.legacy.http import INSTANCE_HEADER, create_legacy_app
    from mrtr_course.legacy.server import (
        LEGACY_PROTOCOL_VERSION,
        REQUEST_TIMEOUT,
        LegacyError,
        LegacyServer,
        LegacyToolContext,
        PendingRequests,
    )
    from mrtr_course.legacy.sessions import LocalSessions, Session, SignedSessions
