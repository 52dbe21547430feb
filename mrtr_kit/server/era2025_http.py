"""The 2025-11-25 era on the same endpoint: sessions over Streamable HTTP.

``create_app(server, eras="both")`` puts a ``LegacyEra`` beside the 2026-07-28 pipeline. The
HTTP edge (``http.py``) still checks Host/Origin, authenticates, bounds and decodes every body;
then a POST goes here when it is a 2025-11-25 ``initialize`` (no 2026-07-28 ``_meta`` version)
or carries an ``Mcp-Session-Id`` and is not a 2026-07-28 request. Everything else takes the
modern path, unchanged. The client's first request decides its era, as in the official SDKs.

What a session does with each message (one handler, one set of rules, the calls that cannot
finish, URL mode, the bounds, bad answers) is ``era2025.py``'s, shared with stdio; this module
is its HTTP transport. A call's pushed requests and notifications go on the POST's SSE stream,
its answer as the stream's last event; the client POSTs each response on its session (202).

**Sessions** (2025-11-25 Streamable HTTP, session management): ``initialize`` answers with an
unguessable ``Mcp-Session-Id`` (256 random bits), bound to the principal that opened it: any
other principal, an unknown, deleted or expired id all get 404 (the spec's "start again").
Its capabilities, version and clientInfo come from that ``initialize``; ``MCP-Protocol-Version``,
when sent, must match the session's (else 400). DELETE ends a session; GET is 405 (no
standalone stream is offered, which the 2025-11-25 transport allows).

**Bounds** (``LegacyLimits``, KIT), besides ``era2025.py``'s: sessions per principal (and in
all, 429 beyond them) and idle time per session. A hang-up or a DELETE ends a call like
``notifications/cancelled`` does.

**Bad input** gets a JSON-RPC error and an HTTP status, never a 500, and loses nothing: a
response to an id this session is not waiting for 400; an answer too large 413 and a malformed
one 400 (``legacy.Refused``); a second ``initialize`` 400; a malformed body 400 -32700
(``http.py``); a request without a session other than ``initialize`` 400 (from the modern
path, which needs its headers). Errors of the methods themselves are HTTP 200 here: on this
transport a 404 would tell the client that its session is gone.

Not offered: resumption (SSE event ids, ``Last-Event-ID``) and the standalone GET stream. A
client that hangs up its POST's stream loses that call (it is cancelled; nothing could deliver
its answer), which 2025-11-25 allows servers without resumption.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from starlette.types import Receive, Send

from ..protocol.constants import MRTR_METHODS
from ..protocol.wire_json import Unencodable, encode_message
from .core import McpServer
from .era2025 import (
    LEGACY_VERSIONS,
    LegacyLimits,
    LegacyRounds,
    LegacySession,
    Refused,
    encoded,
    error_body,
    is_legacy_initialize,
    is_modern_request,
    legacy_result,
    valid_id,
)
from .sse import SseResponse

__all__ = [
    "LEGACY_VERSIONS",
    "SESSION_HEADER",
    "LegacyEra",
    "LegacyLimits",
    "LegacySession",
    "is_legacy_initialize",
    "is_modern_request",
    "legacy_result",
]

log = logging.getLogger("mrtr_kit.legacy")

SESSION_HEADER = "mcp-session-id"


class _PushStream(SseResponse):
    """The SSE response of one legacy call, opened by its first pushed request or notification.

    A hang-up cancels the call (``hung_up``): without resumption, nothing could deliver its
    answer, and its pending requests must not outlive it."""

    async def emit(self, notification: dict[str, Any]) -> None:
        """A handler's notification (progress, log): the 2025-11-25 shapes are the same."""
        try:
            await self.event(encode_message(notification))
        except Unencodable as exc:  # a handler bug; the call goes on without it
            log.error("a notification could not be encoded (%s)", exc)

    async def end(self, data: bytes | None) -> None:
        """The answer as the last event (or none, for a cancelled call), ending the stream."""
        if data is not None:
            await self.event(data)
        elif not self.open:
            self.open = True
            await self.send({"type": "http.response.start", "status": 200, "headers": self.headers})
        await self.send({"type": "http.response.body", "body": b""})


class LegacyEra(LegacyRounds):
    """2025-11-25 sessions for one ``McpServer`` (``server``), served by its MRTR handlers
    (module docstring). ``limits`` are the ``LegacyLimits``; ``response_headers`` go on every
    response; ``now`` is the clock idle time is measured with (monotonic seconds)."""

    def __init__(
        self,
        server: McpServer,
        *,
        limits: LegacyLimits | None = None,
        response_headers: Mapping[str, str] | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(server, limits=limits, now=now)
        self.sessions: dict[str, LegacySession] = {}
        self._next_sweep = 0.0
        extra = [
            (k.lower().encode("latin-1"), v.encode("latin-1"))
            for k, v in (response_headers or {}).items()
        ]
        self._extra = extra
        self._json_headers = [(b"content-type", b"application/json"), *extra]
        self._sse_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
            *extra,
        ]

    # -- routing ------------------------------------------------------------------------------

    def handles(self, message: Any, headers: Mapping[str, str]) -> bool:
        """Whether a decoded POST body belongs to this era (module docstring)."""
        if SESSION_HEADER in headers:
            return not is_modern_request(message)
        return is_legacy_initialize(message)

    async def respond(
        self,
        message: Any,
        principal: str | None,
        headers: Mapping[str, str],
        receive: Receive,
        send: Send,
    ) -> None:
        """Answer one POST of this era: ``initialize``, or a message on a session."""
        self._sweep()
        sid = headers.get(SESSION_HEADER)
        if sid is None:
            await self._initialize(message, principal, send)
            return
        session = self._session(sid, principal)
        if session is None:
            await self._json(send, 404, error_body(None, -32600, "Session not found"))
            return
        version = headers.get("mcp-protocol-version")
        if version is not None and version != session.version:
            problem = f"MCP-Protocol-Version {version!r} is not this session's ({session.version})"
            await self._json(send, 400, error_body(None, -32600, problem))
            return
        session.last_seen = self.now()
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            await self._json(send, 400, error_body(None, -32600, "not a JSON-RPC 2.0 message"))
        elif "method" not in message:
            try:
                self.take_answer(session, message)
            except Refused as refused:
                await self._json(send, refused.status, refused.body)
            else:
                await self._json(send, 202, None)
        elif not isinstance(message["method"], str):
            await self._json(send, 400, error_body(None, -32600, '"method" must be a string'))
        elif "id" not in message:
            self.notification(session, message)
            await self._json(send, 202, None)
        elif not valid_id(message["id"]):
            await self._json(
                send, 400, error_body(None, -32600, '"id" must be a string or integer')
            )
        elif message["method"] == "initialize":
            await self._json(
                send, 400, error_body(message["id"], -32600, "Session already initialized")
            )
        elif message["method"] == "ping":
            await self._json(send, 200, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
        elif message["method"] in MRTR_METHODS:
            await self._call(session, message, receive, send)
        else:
            body = await self.one_shot(session, message)
            await self._json(send, 200, body)

    async def other_method(
        self, method: str, principal: str | None, headers: Mapping[str, str], send: Send
    ) -> None:
        """DELETE ends a session (200; 404 if it is not the caller's). GET, and a DELETE
        without a session, are 405: no standalone stream is offered."""
        sid = headers.get(SESSION_HEADER)
        if method != "DELETE" or sid is None:  # without a session, as modern-only (HTTP-20)
            await self._json(send, 405, None, [(b"allow", b"POST, DELETE")])
            return
        session = self._session(sid, principal)
        if session is None:
            await self._json(send, 404, error_body(None, -32600, "Session not found"))
            return
        self.end(session)
        await self._json(send, 200, None)

    # -- sessions -----------------------------------------------------------------------------

    def _session(self, sid: str, principal: str | None) -> LegacySession | None:
        session = self.sessions.get(sid)
        if session is None or session.principal != principal:
            return None  # one answer for unknown and not yours: no oracle for ids
        return session

    def _sweep(self) -> None:
        """Sessions idle for ``idle_timeout_s`` (no call running) end. At most once a second
        (or once per ``idle_timeout_s``, if shorter): a walk over every session."""
        now = self.now()
        if now < self._next_sweep:
            return
        self._next_sweep = now + min(1.0, self.limits.idle_timeout_s / 2)
        deadline = now - self.limits.idle_timeout_s
        for session in [s for s in self.sessions.values() if s.last_seen < deadline]:
            if not session.calls:
                log.info("legacy session ended after %g s idle", self.limits.idle_timeout_s)
                self.end(session)

    def end(self, session: LegacySession) -> None:
        """The session is over (DELETE, idle): forgotten, its calls cancelled."""
        self.sessions.pop(session.id, None)
        super().end(session)

    async def _initialize(self, message: Any, principal: str | None, send: Send) -> None:
        sid = secrets.token_urlsafe(32)  # 256 random bits, visible ASCII only
        try:
            session = self.open_session(sid, message, principal)
        except Refused as refused:
            await self._json(send, refused.status, refused.body)
            return
        mine = sum(1 for s in self.sessions.values() if s.principal == principal)
        if mine >= self.limits.max_sessions_per_principal or len(self.sessions) >= (
            self.limits.max_sessions
        ):
            message_ = "Too many sessions: end one (DELETE) or let one go idle"
            await self._json(send, 429, error_body(message["id"], -32600, message_))
            return
        self.sessions[sid] = session
        body = self.initialize_result(session, message["id"])
        await self._json(send, 200, body, [(SESSION_HEADER.encode(), sid.encode())])

    async def _call(
        self, session: LegacySession, message: dict[str, Any], receive: Receive, send: Send
    ) -> None:
        stream = _PushStream(send, receive, self._sse_headers)
        try:
            body = await self.call(session, message, stream)
        except Refused as refused:
            await self._json(send, refused.status, refused.body)
            return
        finally:
            stream.close()
        if stream.hung_up:
            return
        if body is None:
            await stream.end(None)
        elif stream.open:
            await stream.end(encoded(body))
        else:
            await self._json(send, 200, body)

    async def _json(
        self,
        send: Send,
        status: int,
        body: dict[str, Any] | None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        content = b"" if body is None else encoded(body)
        head = [*(self._json_headers if content else self._extra), *(headers or [])]
        head.append((b"content-length", str(len(content)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": content})
