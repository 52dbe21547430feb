"""What can go wrong on the client side, as one small exception tree.

ERR-4 asks that errors *received from the peer* stay distinguishable from errors raised
*locally*. So there are two branches under ``McpClientError``:

* ``McpRemoteError`` — the server answered with a JSON-RPC error; it keeps the peer's
  ``code``, ``message`` and ``data`` untouched (plus the HTTP status it came with).
* everything else — the client itself gave up: the server broke the protocol
  (``ProtocolViolation``), the round limit was hit (``TooManyRounds``), the caller's answers
  do not fit the questions (``InvalidAnswers``), a handler chose not to answer
  (``InputDeclined``), no common protocol version (``NoMutualVersion``), the HTTP layer
  returned something that is not MCP (``TransportError``), a tool was dropped from the
  ``tools/list`` view because its ``x-mcp-header`` annotation is invalid (``ToolRejected``),
  or an argument cannot be mirrored into its ``Mcp-Param-*`` header (``HeaderValueError``).
  None of these has a JSON-RPC code: the spec assigns none to local failures.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class McpClientError(Exception):
    """Base class of every error the client raises."""


class McpRemoteError(McpClientError):
    """A JSON-RPC error object sent by the server, kept exactly as received (ERR-4)."""

    def __init__(
        self, code: int, message: str, data: Any = None, *, http_status: int | None = None
    ) -> None:
        """The peer's ``code``, ``message`` and ``data``, and the ``http_status`` it came with."""
        super().__init__(f"server error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    @classmethod
    def from_error_object(cls, error: Any, *, http_status: int | None = None) -> McpRemoteError:
        """Build from the ``error`` member of a JSON-RPC response (CORE-4)."""
        if not isinstance(error, dict) or not isinstance(error.get("code"), int):
            raise ProtocolViolation(f"malformed JSON-RPC error object: {error!r}")
        message = error.get("message")
        return cls(
            error["code"],
            message if isinstance(message, str) else "",
            error.get("data"),
            http_status=http_status,
        )

    def __repr__(self) -> str:
        return f"McpRemoteError({self.code}, {self.message!r}, data={self.data!r})"


class ProtocolViolation(McpClientError):
    """The server sent something 2026-07-28 does not allow (RT-3, MRTR-R3, MRTR-S6, ...)."""


class TooManyRounds(McpClientError):
    """One logical call needed more rounds than the client allows (MRTR-C7)."""

    def __init__(self, method: str, target: str | None, max_rounds: int) -> None:
        """``method`` and ``target`` of the call that hit ``max_rounds``."""
        what = f"{method} {target!r}" if target else method
        super().__init__(
            f"gave up on {what} after {max_rounds} rounds: the server kept answering "
            "input_required (round limit, MRTR-C7)"
        )
        self.method = method
        self.target = target
        self.max_rounds = max_rounds


class InvalidAnswers(McpClientError):
    """The answers handed to a retry do not match the latest ``inputRequests`` (MRTR-C1/C6)."""

    def __init__(
        self,
        message: str,
        *,
        missing: Iterable[str] = (),
        unexpected: Iterable[str] = (),
        problems: dict[str, Any] | None = None,
    ) -> None:
        """``message``; ``missing`` and ``unexpected`` keys (kept sorted); per-key ``problems``."""
        super().__init__(message)
        self.missing = sorted(missing)
        self.unexpected = sorted(unexpected)
        self.problems = problems or {}


class InputDeclined(McpClientError):
    """A sampling or roots handler chose not to answer. There is no error slot for that in
    ``inputResponses``, so the client simply does not retry and reports it here (MRTR-C8)."""

    def __init__(self, key: str, method: str) -> None:
        """``key`` of the input request the ``method`` handler did not answer."""
        super().__init__(
            f"the {method} handler gave no answer for input request {key!r}; "
            "the call is abandoned without a retry (MRTR-C8)"
        )
        self.key = key
        self.method = method


class NoMutualVersion(McpClientError):
    """The server supports none of the client's protocol versions (VER-2)."""

    def __init__(self, ours: Iterable[str], theirs: Iterable[str]) -> None:
        """``ours``: the client's versions; ``theirs``: the server's."""
        self.ours = list(ours)
        self.theirs = list(theirs)
        super().__init__(f"no common protocol version: client {self.ours}, server {self.theirs}")


class TransportError(McpClientError):
    """The HTTP exchange did not carry an MCP response (wrong content type, not JSON, ...)."""

    def __init__(self, message: str, *, http_status: int | None = None) -> None:
        """``message`` says what was wrong; ``http_status`` is the response's status, if any."""
        super().__init__(message)
        self.http_status = http_status


class ToolRejected(McpClientError):
    """The tool was dropped from the ``tools/list`` view: invalid ``x-mcp-header`` (HTTP-13)."""

    def __init__(self, name: str, reason: str) -> None:
        """The tool ``name`` and why it was dropped (``reason``)."""
        super().__init__(f"tool {name!r} is not callable: {reason} (HTTP-13)")
        self.name = name
        self.reason = reason


class NotJson(McpClientError, ValueError):
    """A request holds a value no JSON text can carry (NaN, Infinity, bytes, ...): it is
    refused here rather than sent as something that is not JSON (CORE-1)."""


class HeaderValueError(McpClientError, ValueError):
    """A tool argument cannot be mirrored into its ``Mcp-Param-*`` header (HTTP-9, HTTP-13)."""


class LegacyServer(McpClientError):
    """The server speaks 2025-11-25 only (VER-4). ``call_tool``, ``get_prompt``,
    ``read_resource`` and ``request`` fall back to a 2025-11-25 session by themselves; the
    round-by-round calls (``begin_*``, ``continue_call``) have no 2025-11-25 counterpart, since
    there the server pushes its questions in the middle of one request. ``original`` is the
    error the modern request got, raised instead if the server turns out modern after all."""

    def __init__(self, message: str, original: McpClientError) -> None:
        """Why the server looks legacy, and the modern request's own error (``original``)."""
        super().__init__(message)
        self.original = original
