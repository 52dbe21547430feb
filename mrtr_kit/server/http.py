"""Streamable HTTP adapter (2026-07-28): a plain ASGI app around the sans-IO core.

What the adapter does for one request, in order (digest KIT-HTTP-B, docs/conformance.md §3 order):

1. Host and Origin, parsed strictly, in an ASGI middleware
   around the whole app, so before any routing             -> 403           (HTTP-27, HTTP-29)
   one endpoint path (``McpApp``): ``/mcp/`` is 404, never
   a redirect                                              -> 404 -32600    (HTTP-1)
2. only POST; GET/DELETE of legacy clients                -> 405           (HTTP-20)
   authentication, when ``principal_of`` is given         -> 401           (HTTP-29)
3. Content-Length over the cap, before reading anything   -> 413 -32600
   the body read chunk by chunk, stopped at the cap       -> 413 -32600
   the body not complete within ``body_timeout_s``        -> 408 -32600, connection closed
4. decode: UTF-8, depth, digits, NaN, surrogates, dup keys -> 400 -32700    (CORE-1, and
   (``protocol.wire_json.decode_body``)                           docs/architecture.md §6)
5. one call: ``McpServer.handle(message, principal=..., headers=...)`` runs every protocol
   step, header checks included, in the order its module docstring lists (``core.py``)
6. the reply as JSON, or as SSE (below); its status from ``HTTP_STATUS``, the one table
   from an error's reason to its HTTP status (§2.6, HTTP-5, HTTP-15..18, KIT-HTTP-B)

A response is one JSON body, unless the handler sends notifications (progress, log) before
its answer: then the response is an SSE stream scoped to this request, ending with the answer
(HTTP-6, HTTP-21..23). The core runs in the request's own task, and the first notification
opens the stream (``_SseStream``); closing that stream cancels the handler (HTTP-25).

Never a 500: every reply is encoded by ``wire_json.encode_message``. One that cannot be
encoded (a handler returned NaN or a lone surrogate) is a server bug: it is logged and
answered -32603 with HTTP 200; on an SSE stream, the stream ends with that error event.

Connections are bounded by ``uvicorn_config``, the one place the kit configures uvicorn
(``serve`` uses it for every process of a fleet), with uvicorn's documented settings only: see
the limits below. Alone, the kit puts no deadline and no size cap on a request head: uvicorn
has neither for its httptools parser. On a network with untrusted clients, put the kit's
nginx configuration in front (``server/nginx.py``, docs/deploy.md), which has both.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Literal

import uvicorn
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..protocol import errors
from ..protocol import headers as hdr
from ..protocol.errors import McpError, Reason
from ..protocol.wire_json import MAX_MESSAGE_BYTES, Unencodable, decode_body, encode_message
from . import hosts
from .auth import Unauthenticated
from .core import McpServer, Reply, encoded_internal_error, error_reply
from .era2025_http import LegacyEra, LegacyLimits
from .sse import SseResponse

log = logging.getLogger("mrtr_kit.http")
auth_log = logging.getLogger("mrtr_kit.auth")

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
# Each process of a fleet names itself in this response header (``serve --instance-name``), so
# an operator (and lesson 03) sees which instance answered which round.
INSTANCE_HEADER = "X-Mcp-Instance"
# Sync or async: an OAuth introspection or a JWKS fetch is I/O, awaited in the request's task.
PrincipalOf = Callable[[Request], str | Awaitable[str | None] | None]

# -- limits (docs/architecture.md §6) --------------------------------------------------------------
# A request body: the kit's message cap (wire_json.MAX_MESSAGE_BYTES), checked against
# Content-Length before reading, and counted while reading a body sent without one.
MAX_BODY_BYTES = MAX_MESSAGE_BYTES
# The whole body must arrive within 10 s of the request head (a 1 MB body at 100 KB/s):
# a body declared and never sent, or dripped a byte at a time, gets 408. An ASGI-level
# deadline (asyncio.timeout around receive), so it holds under any ASGI server.
BODY_TIMEOUT_S = 10.0
# uvicorn's own documented settings: an idle keep-alive connection closes 5 s after its last
# response; beyond 4096 connections or tasks at once, uvicorn answers 503 to every request.
# uvicorn still accepts and holds connections beyond it: the limit bounds running requests,
# not memory, and it counts idle connections too. At 512 (an old value), 2,200 idle and
# slowloris connections got every honest request a 503 (benchmarks/flood.py, README.md).
# MAX_HEAD_BYTES caps a request head (request line + headers) under h11 only
# (``h11_max_incomplete_event_size``, answered 400); httptools, the kit's parser, has no cap.
#
# What uvicorn does not bound, and the kit alone therefore does not either: a connection that
# sends nothing, or dribbles a request head (slowloris), stays open (uvicorn's keep-alive
# timer runs only after a response, and any byte received stops it); a request head under
# httptools may be any size (a 20 MB one is read whole). A server open to untrusted clients
# belongs behind the kit's nginx configuration (``mrtr_kit/server/nginx.conf``, docs/deploy.md):
# nginx gives a request head 5 s and 16 KiB, and passes on only whole requests.
KEEP_ALIVE_S = 5
MAX_HEAD_BYTES = 16 * 1024
MAX_CONCURRENCY = 4096

_CONTENT_LENGTH = re.compile(r"[0-9]{1,18}")  # digits only; 18 of them cannot overflow
# The HTTP status of an error response, by the reason the request failed (§2.6). MUSTs:
# -32601 is 404 (HTTP-17), -32602 for a missing _meta key 400 (HTTP-18), -32020/-32021/-32022
# 400 (HTTP-14..16, HTTP-18). KIT: 400 for -32700 and -32600 (the spec leaves them open), and
# 200 for errors of the method itself (unknown tool, bad arguments, bad requestState,
# internal), so a dual-era client does not take them for a legacy server (KIT-HTTP-B, VER-4);
# 503 with Retry-After when a store the request needs is down (KIT-ERR-A).
HTTP_STATUS: dict[Reason, int] = {
    Reason.PARSE_ERROR: 400,
    Reason.INVALID_REQUEST: 400,
    Reason.METHOD_NOT_FOUND: 404,
    Reason.MALFORMED_PARAMS: 400,
    Reason.INVALID_PARAMS: 200,
    Reason.HEADER_MISMATCH: 400,
    Reason.MISSING_CAPABILITY: 400,
    Reason.UNSUPPORTED_VERSION: 400,
    Reason.INTERNAL_ERROR: 200,
    Reason.APPLICATION: 200,
    Reason.UNAVAILABLE: 503,
}


def http_status(reply: Reply) -> int:
    """The status a reply of the core goes out with: 202 for an accepted notification (HTTP-5),
    200 for a result, else ``HTTP_STATUS`` of the error's reason."""
    if reply.body is None:
        return 202
    return 200 if reply.reason is None else HTTP_STATUS[reply.reason]


class _BodyRefused(Exception):
    """The body broke a limit of this adapter (not a protocol rule): its own status."""

    def __init__(self, status: int, error: McpError) -> None:
        super().__init__(error.message)
        self.status = status
        self.error = error


def _too_large() -> _BodyRefused:
    return _BodyRefused(413, McpError(-32600, "Request body too large"))


def _forbidden_body() -> bytes:
    return encode_message({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Forbidden"}})


class HostOriginGuard:
    """ASGI middleware: the DNS-rebinding check (HTTP-27, HTTP-29) before anything else.

    It wraps the whole app, so no route, redirect or error page runs for a request whose
    ``Host`` or ``Origin`` is not an allowed host (``hosts.host_and_origin_problem``).
    """

    def __init__(
        self,
        app: ASGIApp,
        allowed_hosts: Iterable[str],
        response_headers: dict[str, str] | None = None,
    ) -> None:
        """Wrap ``app``; ``allowed_hosts`` are host names or addresses (``*``: any) and
        ``response_headers`` go on the 403 it sends. A bad entry raises ``ValueError``."""
        self.app = app
        self.allowed_hosts = frozenset(_allowed_host(h) for h in allowed_hosts)
        self.response_headers = response_headers or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            problem = hosts.host_and_origin_problem(scope["headers"], self.allowed_hosts)
            if problem is not None:
                log.warning("refused request: %s", problem)
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                response = Response(
                    _forbidden_body(), 403, self.response_headers, media_type="application/json"
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _allowed_host(entry: str) -> str:
    if entry == "*":
        return entry
    host = hosts.parse_host(entry)
    if host is None:
        raise ValueError(f"allowed_hosts entry {entry!r} is not a host name or address")
    return host


class _StreamEnded(BaseException):
    """Raised from ``emit`` into the handler when its SSE stream has ended (the notification
    could not be encoded). A BaseException, like CancelledError, so that the core's
    ``except Exception`` (or a handler's own) does not answer it: the stream already holds the
    answer, and a second one would break HTTP-21. Correctness, not speed: it costs nothing on
    a stream that ends normally."""


class _SseStream(SseResponse):
    """One request's SSE response, opened by the handler's first notification (HTTP-21..23).

    Until then nothing is sent, so a handler that emits nothing is answered with plain JSON.
    Once open, a hang-up by the client cancels the handler (HTTP-25): ``SseResponse`` watches
    for ``http.disconnect`` and cancels the task running the handler.
    """

    def __init__(self, send: Send, receive: Receive, headers: list[tuple[bytes, bytes]]) -> None:
        super().__init__(send, receive, headers)
        self.request_id: Any = None

    async def emit(self, notification: dict[str, Any]) -> None:
        try:
            data = encode_message(notification)
        except Unencodable as exc:
            # A handler emitted what JSON cannot carry: a server bug. End the stream with an
            # error for this request instead of cutting it, and stop the handler.
            log.error("a notification for request %r cannot be encoded (%s)", self.request_id, exc)
            await self.event(encoded_internal_error(self.request_id))
            raise _StreamEnded from None
        await self.event(data)

    async def end(self, data: bytes) -> None:
        """The answer: the last event, which ends the stream (HTTP-21)."""
        await self.event(data)
        await self.send({"type": "http.response.body", "body": b""})


class McpHttpEndpoint:
    """The ASGI endpoint for one ``McpServer``; see the module docstring for the pipeline.

    A plain ASGI app (no Starlette Request or Response per request): it reads the body from
    ``receive`` and writes its one response, JSON or SSE, with ``send``.
    """

    def __init__(
        self,
        server: McpServer,
        *,
        principal_of: PrincipalOf | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        body_timeout_s: float = BODY_TIMEOUT_S,
        response_headers: dict[str, str] | None = None,
        legacy: LegacyEra | None = None,
    ) -> None:
        """Serve ``server`` over Streamable HTTP.

        ``principal_of`` maps a request to its authenticated principal (None: no authentication),
        sync or async (``create_app``);
        ``max_body_bytes`` and ``body_timeout_s`` bound the body a client may send;
        ``response_headers`` are added to every response; ``legacy``, when given, serves
        2025-11-25 sessions beside the 2026-07-28 pipeline (``era2025_http``)."""
        self.server = server
        self.legacy = legacy
        self.principal_of = principal_of
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s
        self.response_headers = response_headers or {}
        extra = [
            (k.lower().encode("latin-1"), v.encode("latin-1"))
            for k, v in self.response_headers.items()
        ]
        self._extra = extra
        self._json_headers = [(b"content-type", b"application/json"), *extra]
        self._sse_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no"),
            *extra,
        ]

    async def _send(
        self,
        send: Send,
        status: int,
        body: bytes = b"",
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        """One whole response; a JSON one unless ``headers`` say otherwise."""
        head = self._json_headers if headers is None else headers
        if body:
            head = [*head, (b"content-length", str(len(body)).encode())]
        else:
            head = [*[h for h in head if h[0] != b"content-type"], (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": body})

    async def _send_reply(self, send: Send, reply: Reply) -> None:
        if reply.body is None:
            await self._send(send, http_status(reply))
            return
        content, status = self._encode(reply)
        headers = None
        if reply.reason is Reason.UNAVAILABLE:  # KIT-ERR-A: data's wait in ms, HTTP's in s
            wait_s = math.ceil(reply.body["error"]["data"]["retryAfterMs"] / 1000)
            headers = [*self._json_headers, (b"retry-after", str(wait_s).encode())]
        await self._send(send, status, content, headers)

    def _encode(self, reply: Reply) -> tuple[bytes, int]:
        """The reply as bytes; one that cannot be encoded is a server bug: -32603, HTTP 200."""
        assert reply.body is not None
        try:
            return encode_message(reply.body), http_status(reply)
        except Unencodable as exc:
            request_id = reply.body.get("id")
            log.error("the reply to request %r cannot be encoded (%s)", request_id, exc)
            return encoded_internal_error(request_id), 200

    async def _unauthorized(self, send: Send) -> None:
        # One answer for a missing and a wrong token: the reason is only in the server log.
        body = {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Unauthorized"}}
        headers = [(b"www-authenticate", b'Bearer realm="mcp"'), *self._json_headers]
        await self._send(send, 401, encode_message(body), headers)

    async def _read_body(self, headers: Mapping[str, str], receive: Receive) -> bytes:
        """The body, read chunk by chunk within the limits; ``_BodyRefused`` 413 / 408, or
        McpError -32600 for a malformed Content-Length, or ClientDisconnect."""
        declared = headers.get("content-length")
        if declared is not None:
            if not _CONTENT_LENGTH.fullmatch(declared):
                raise errors.invalid_request("Content-Length is not a decimal of at most 18 digits")
            if int(declared) > self.max_body_bytes:
                raise _too_large()  # refused before a byte of it is read
        body = bytearray()
        try:
            async with asyncio.timeout(self.body_timeout_s):
                while True:
                    event = await receive()
                    if event["type"] == "http.disconnect":
                        raise ClientDisconnect
                    body += event.get("body", b"")
                    if len(body) > self.max_body_bytes:
                        raise _too_large()  # stop reading: the rest is never held
                    if not event.get("more_body", False):
                        break
        except TimeoutError:
            message = f"Request body not received within {self.body_timeout_s:g} s"
            raise _BodyRefused(408, McpError(-32600, message)) from None
        return bytes(body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        legacy = self.legacy
        if scope["method"] != "POST" and (legacy is None or scope["method"] != "DELETE"):  # 2
            allow = [(b"allow", b"POST" if legacy is None else b"POST, DELETE"), *self._extra]
            await self._send(send, 405, headers=allow)
            return
        # The request headers once, lower-case names, the first of a repeated one (HTTP-8):
        # what the core's header checks read, and this adapter too.
        headers = hdr.received(
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]
        )
        try:
            # The principal comes from the credential, never from the body (SEC-9); it is
            # what requestState gets bound to (MRTR-S5a). Strangers' bodies are not read.
            principal = self.principal_of(Request(scope)) if self.principal_of else None
            if inspect.isawaitable(principal):
                principal = await principal
        except Unauthenticated as exc:
            auth_log.warning("rejected request: %s", exc.reason)
            await self._unauthorized(send)
            return
        except Exception:  # the authenticator's bug or outage: refused, never a 500
            auth_log.exception("rejected request: principal_of raised")
            await self._unauthorized(send)
            return
        if legacy is not None and scope["method"] == "DELETE":  # a 2025-11-25 session's end
            await legacy.other_method("DELETE", principal, headers, send)
            return
        try:
            message = decode_body(await self._read_body(headers, receive))  # 3, 4
        except _BodyRefused as exc:
            # A body we gave up waiting for leaves the connection unusable: close it.
            close = [(b"connection", b"close")] if exc.status == 408 else []
            content = encode_message({"jsonrpc": "2.0", "error": exc.error.to_error_object()})
            await self._send(send, exc.status, content, [*self._json_headers, *close])
            return
        except McpError as exc:
            await self._send_reply(send, error_reply(None, exc))
            return
        except ClientDisconnect:
            await self._send(send, 400)  # nobody is left to read it
            return
        if legacy is not None and legacy.handles(message, headers):
            await legacy.respond(message, principal, headers, receive, send)
            return
        wants_sse = "text/event-stream" in headers.get("accept", "")
        await self._respond(message, principal, headers, wants_sse, receive, send)  # 5, 6

    async def _respond(
        self,
        message: Any,
        principal: str | None,
        headers: Mapping[str, str],
        sse: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        """Run the core in this task; JSON if it answers without a notification before, else
        the SSE stream its first notification opened."""
        request_id = message.get("id") if isinstance(message, dict) else None
        stream = _SseStream(send, receive, self._sse_headers) if sse else None
        if stream is not None:
            stream.request_id = request_id
        try:
            reply = await self.server.handle(
                message,
                principal=principal,
                headers=headers,
                emit=stream.emit if stream is not None else None,
                decoded=True,  # decode_body's value: step 1 need not look for non-JSON again
            )
        except _StreamEnded:
            if stream is not None:
                await stream.send({"type": "http.response.body", "body": b""})
            return
        except asyncio.CancelledError:
            if stream is None or not stream.hung_up:
                raise
            # The client closed the stream, so we cancelled the handler (HTTP-25); the
            # cancellation was ours, not this task's owner's.
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            return
        except Exception:  # handle answers every failure itself: this is a core bug
            log.exception("request %r failed outside the core's pipeline", request_id)
            reply = error_reply(request_id, errors.internal_error())
        finally:
            if stream is not None:
                stream.close()
        if stream is None or not stream.open:
            await self._send_reply(send, reply)
            return
        data, _status = self._encode(reply)
        await stream.end(data)  # the answer ends the stream (HTTP-21)


def bind_tcp(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket on ``host:port`` (port 0 picks a free one) for uvicorn.

    Binding before serving lets the caller print or hand out the real URL. The socket already
    listens, so a client that connects as soon as it reads the URL waits in the backlog until
    uvicorn accepts, instead of being refused. The protocol is IPPROTO_TCP, not 0: asyncio
    sets TCP_NODELAY only on sockets that say they are TCP, and without it a response written
    in two parts waits ~40 ms for a delayed ACK (Nagle).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)  # uvicorn's default backlog; it calls listen() again, harmlessly
    return sock


_NOT_FOUND = encode_message(
    {"jsonrpc": "2.0", "error": {"code": -32600, "message": "No MCP endpoint here"}}
)


class McpApp:
    """The app ``create_app`` builds, inside ``HostOriginGuard``: one path, the endpoint.

    Plain ASGI, no framework router: a request for any other path is 404 -32600 (HTTP-1),
    with nothing from the request (path, Host) in the answer, and never a redirect (a
    ``/mcp/`` redirect would be built from the Host header). Mounted under a prefix (say,
    Starlette's ``Mount``), the path is matched below the prefix (``root_path``).
    """

    def __init__(self, endpoint: McpHttpEndpoint, path: str) -> None:
        self.endpoint = endpoint
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1000})  # the kit serves no WebSocket
        elif _route_path(scope) == self.path:
            await self.endpoint(scope, receive, send)
        else:
            head = [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(_NOT_FOUND)),
            ]
            await send({"type": "http.response.start", "status": 404, "headers": head})
            await send({"type": "http.response.body", "body": _NOT_FOUND})


def _route_path(scope: Scope) -> str:
    """The request path below the prefix the app is mounted at (ASGI ``root_path``)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


async def _lifespan(receive: Receive, send: Send) -> None:
    """Nothing to start or stop: acknowledge both, so servers need no ``lifespan="off"``."""
    while True:
        event = await receive()
        if event["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif event["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def create_app(
    server: McpServer,
    *,
    path: str = "/mcp",
    allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
    principal_of: PrincipalOf | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    body_timeout_s: float = BODY_TIMEOUT_S,
    response_headers: dict[str, str] | None = None,
    eras: Literal["modern", "both"] = "modern",
    legacy_limits: LegacyLimits | None = None,
) -> HostOriginGuard:
    """An ASGI app serving ``server`` at ``path`` (HTTP-1): ``McpApp`` inside the Host/Origin
    guard. Run it with uvicorn, ideally with ``uvicorn_config``, or mount it in a Starlette
    app.

    ``allowed_hosts`` lists the Host names (and Origin hosts) accepted; the default admits only
    loopback names, the DNS-rebinding defence a local server needs. ``principal_of`` maps a
    request to the authenticated principal that requestState is bound to, or raises
    ``auth.Unauthenticated`` for a 401 (``auth.BearerTokens`` is one; ``auth.FromHeaders`` wraps
    a check of the headers). It may be sync or async (an OAuth introspection awaits the
    network). Any other exception it raises is logged with its traceback and answered 401
    (fail closed, never a 500).

    ``eras="modern"`` (the default) serves 2026-07-28 only: a 2025-11-25 ``initialize`` gets
    -32022 naming the supported versions (VER-5). ``eras="both"`` also serves 2025-11-25
    clients from the same handlers, in sessions bounded by ``legacy_limits``
    (``era2025_http``; opt-in, KIT).
    """
    if eras not in ("modern", "both"):
        raise ValueError(f"eras must be 'modern' or 'both', not {eras!r}")
    legacy = None
    if eras == "both":
        legacy = LegacyEra(server, limits=legacy_limits, response_headers=response_headers)
    endpoint = McpHttpEndpoint(
        server,
        principal_of=principal_of,
        max_body_bytes=max_body_bytes,
        body_timeout_s=body_timeout_s,
        response_headers=response_headers,
        legacy=legacy,
    )
    hosts = [_allowed_host(h) for h in allowed_hosts]  # a bad entry fails here, not later
    return HostOriginGuard(McpApp(endpoint, path), hosts, response_headers)


# -- serving ------------------------------------------------------------------------------------


def uvicorn_config(app: ASGIApp, *, log_level: str = "info", **overrides: Any) -> uvicorn.Config:
    """The uvicorn settings of every kit server, in one place (limits: see above), all of them
    uvicorn's documented settings.

    ``http="httptools"``: llhttp, in C; h11 (pure Python) costs the kit 0.56x the official
    SDK's CPU per flow against 0.42-0.46x (benchmarks/bench_flows.py). An ``http="h11"``
    override still gets the head cap (``h11_max_incomplete_event_size``). ``ws="none"``: the
    kit serves no WebSocket, so an upgrade request is plain HTTP to it.
    ``proxy_headers=False``: nothing in the kit reads the client's address or scheme, so no
    ``X-Forwarded-*`` header may rewrite them (and the middleware that would costs time on
    every request). Behind a trusted proxy, ``proxy_headers=True, forwarded_allow_ips="IP,..."``
    (``serve --forwarded-allow-ips``) lets those addresses' ``X-Forwarded-For``/``-Proto`` set
    the client address and scheme, for the access log; ``X-Forwarded-Host`` is read by neither
    uvicorn nor the kit: ``HostOriginGuard`` checks the ``Host`` header the proxy sends, so
    the public names go in ``create_app(allowed_hosts=...)`` (``serve --allowed-host``).
    The access log is built only at a level that prints it (info, debug).
    """
    options: dict[str, Any] = {
        "http": "httptools",
        "ws": "none",
        "log_level": log_level,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
        "limit_concurrency": MAX_CONCURRENCY,
        "timeout_graceful_shutdown": 2,
        "proxy_headers": False,
        "access_log": log_level in ("info", "debug", "trace"),
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)


def run_announced(config: uvicorn.Config, sock: socket.socket, line: str) -> None:
    """Serve ``config``'s app on ``sock`` (from ``bind_tcp``) and print ``line`` once uvicorn
    accepts connections, not before: what a fleet, a test or a learner waits for.

    Printed earlier, the line would invite a Ctrl-C while ``asyncio.run`` is still starting,
    which uvicorn does not catch yet (a traceback and a never-awaited ``serve`` warning); once
    it shows, uvicorn handles SIGINT/SIGTERM and shuts down gracefully (then re-raises the
    signal, as ``KeyboardInterrupt`` for Ctrl-C).
    """
    import gc

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:  # not after a failed start (uvicorn then exits)
                # What start-up built (modules, models, the app) lives as long as the process:
                # moved out of the collector's reach, it is not walked again on every sweep.
                gc.freeze()
                print(line, flush=True)

    Announcing(config).run(sockets=[sock])
