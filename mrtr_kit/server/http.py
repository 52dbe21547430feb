"""Streamable HTTP adapter (2026-07-28): a thin Starlette app around the sans-IO core.

The pipeline for one POST, in order (digest KIT-HTTP-B, CONFORMANCE §3 order):

1. Host and Origin checks against DNS rebinding          -> 403           (HTTP-27, HTTP-29)
2. only POST; GET/DELETE of legacy clients                -> 405           (HTTP-20)
   authentication, when ``principal_of`` is given         -> 401           (HTTP-29)
3. body size cap, then JSON parse                         -> 413 / 400 -32700
4. JSON-RPC shape                                         -> 400 -32600
5. a notification                                         -> 202, empty    (HTTP-5)
6. standard headers present                               -> 400 -32020    (HTTP-15)
7. required _meta keys                                    -> 400 -32602    (CORE-11)
8. header values equal body values                        -> 400 -32020    (HTTP-7/10/14)
9. core: version, method, dispatch                        -> -32022/400, -32601/404, ...

A response is one JSON body, unless the handler sends notifications (progress, log) before
its answer: then the response is an SSE stream scoped to this request, ending with the answer
(HTTP-6, HTTP-21..23). Closing that stream cancels the handler (HTTP-25).
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ..protocol import errors
from ..protocol.errors import McpError
from ..protocol.models import JSONRPCNotification
from . import headers as hdr
from .auth import Unauthenticated
from .core import McpServer, Reply, check_request_meta, error_reply, parse_message

log = logging.getLogger("mrtr_kit.http")
auth_log = logging.getLogger("mrtr_kit.auth")

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
MAX_BODY_BYTES = 1_000_000
PrincipalOf = Callable[[Request], str | None]


def dumps(message: dict[str, Any]) -> str:
    """Single-line JSON: newline-delimited readers split on newlines (CONFORMANCE §3)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def json_response(reply: Reply, extra_headers: dict[str, str] | None = None) -> Response:
    if reply.body is None:
        return Response(status_code=reply.http_status, headers=extra_headers)
    return Response(
        dumps(reply.body),
        status_code=reply.http_status,
        media_type="application/json",
        headers=extra_headers,
    )


def _hostname(host_header: str) -> str:
    """``127.0.0.1:8000`` -> ``127.0.0.1``; ``[::1]:8000`` -> ``[::1]``."""
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if ":" in host_header else host_header


def _origin_host(origin: str) -> str | None:
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname


class McpHttpEndpoint:
    """The ASGI endpoint for one ``McpServer``; see the module docstring for the pipeline."""

    def __init__(
        self,
        server: McpServer,
        *,
        allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
        principal_of: PrincipalOf | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        response_headers: dict[str, str] | None = None,
    ) -> None:
        self.server = server
        self.allowed_hosts = {h.lower() for h in allowed_hosts}
        self.principal_of = principal_of
        self.max_body_bytes = max_body_bytes
        self.response_headers = response_headers or {}

    def _reject(self, exc: McpError, request_id: Any = None) -> Response:
        return json_response(error_reply(request_id, exc), self.response_headers)

    def _unauthorized(self) -> Response:
        # One answer for a missing and a wrong token: the reason is only in the server log.
        body = {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Unauthorized"}}
        headers = {"WWW-Authenticate": 'Bearer realm="mcp"', **self.response_headers}
        return Response(dumps(body), 401, headers, media_type="application/json")

    def _host_allowed(self, request: Request) -> bool:
        host = _hostname(request.headers.get("host", "")).lower()
        if "*" not in self.allowed_hosts and host not in self.allowed_hosts:
            return False
        origin = request.headers.get("origin")
        if origin is None:  # non-browser clients send no Origin (HTTP-27, KIT: allowed)
            return True
        origin_host = _origin_host(origin)
        if origin_host is None:
            return False
        return "*" in self.allowed_hosts or origin_host.lower() in self.allowed_hosts

    async def handle(self, request: Request) -> Response:
        if not self._host_allowed(request):  # 1
            return Response(
                dumps({"jsonrpc": "2.0", "error": {"code": -32600, "message": "Forbidden origin"}}),
                status_code=403,
                media_type="application/json",
                headers=self.response_headers,
            )
        if request.method != "POST":  # 2
            return Response(status_code=405, headers={"Allow": "POST", **self.response_headers})
        try:
            # The principal comes from the credential, never from the body (SEC-9); it is
            # what requestState gets bound to (MRTR-S5a). Strangers' bodies are not parsed.
            principal = self.principal_of(request) if self.principal_of else None
        except Unauthenticated as exc:
            auth_log.warning("rejected request: %s", exc.reason)
            return self._unauthorized()
        body = await request.body()  # 3
        if len(body) > self.max_body_bytes:
            return self._reject(McpError(-32600, "Request body too large", http_status=413))
        try:
            message = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return self._reject(errors.parse_error(str(exc)))
        request_id = message.get("id") if isinstance(message, dict) else None
        try:
            parsed = parse_message(message)  # 4
            if isinstance(parsed, JSONRPCNotification):  # 5
                return Response(status_code=202, headers=self.response_headers)
            hdr.check_present(request.headers, parsed.method)  # 6
            meta = check_request_meta(parsed)  # 7
            hdr.check_matches_body(  # 8
                request.headers,
                parsed.method,
                parsed.params,
                meta.protocol_version,
                self.server.tool_header_params(str(parsed.params.get("name", "")))
                if parsed.method == "tools/call"
                else {},
            )
        except McpError as exc:
            return self._reject(exc, request_id)
        wants_sse = "text/event-stream" in request.headers.get("accept", "")
        return await self._respond(parsed, meta, principal, wants_sse)  # 9

    async def _respond(self, parsed: Any, meta: Any, principal: str | None, sse: bool) -> Response:
        """Run the core; JSON if it answers straight away, SSE if it streams notifications."""
        queue: asyncio.Queue[dict[str, Any] | Reply] = asyncio.Queue()

        async def emit(notification: dict[str, Any]) -> None:
            await queue.put(notification)

        async def run() -> None:
            reply = await self.server.handle_request(
                parsed, meta, principal=principal, emit=emit if sse else None
            )
            await queue.put(reply)

        task = asyncio.create_task(run())
        try:
            first = await queue.get()
        except asyncio.CancelledError:
            task.cancel()  # the client went away before the first byte (HTTP-25)
            raise
        if isinstance(first, Reply):
            return json_response(first, self.response_headers)

        async def stream() -> AsyncIterator[str]:
            item: dict[str, Any] | Reply = first
            try:
                while True:
                    if isinstance(item, Reply):
                        assert item.body is not None
                        yield f"data: {dumps(item.body)}\n\n"
                        return  # the answer ends the stream (HTTP-21)
                    yield f"data: {dumps(item)}\n\n"
                    item = await queue.get()
            finally:
                if not task.done():  # the client closed the stream: that is the cancel (HTTP-25)
                    task.cancel()

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no", **self.response_headers}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


def bind_tcp(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket on ``host:port`` (port 0 picks a free one) for uvicorn.

    Binding before serving lets the caller print or hand out the real URL. The protocol is
    IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    without it a response written in two parts waits ~40 ms for a delayed ACK (Nagle).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def create_app(
    server: McpServer,
    *,
    path: str = "/mcp",
    allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
    principal_of: PrincipalOf | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    response_headers: dict[str, str] | None = None,
) -> Starlette:
    """A Starlette app serving ``server`` at ``path`` (HTTP-1). Run it with uvicorn.

    ``allowed_hosts`` lists the Host names (and Origin hosts) accepted; the default admits only
    loopback names, the DNS-rebinding defence a local server needs. ``principal_of`` maps a
    request to the authenticated principal that requestState is bound to, or raises
    ``auth.Unauthenticated`` for a 401 (``auth.BearerTokens`` is one).
    """
    endpoint = McpHttpEndpoint(
        server,
        allowed_hosts=allowed_hosts,
        principal_of=principal_of,
        max_body_bytes=max_body_bytes,
        response_headers=response_headers,
    )
    return Starlette(
        routes=[Route(path, endpoint.handle, methods=["GET", "POST", "DELETE", "PUT"])]
    )
