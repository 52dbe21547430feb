"""Streamable HTTP as it was in 2025-11-25, around ``LegacyServer``.

Per POST (one JSON-RPC message each):

* ``initialize`` (no session yet)         -> JSON result + ``Mcp-Session-Id`` header
* anything else without ``Mcp-Session-Id`` -> ``400``; with an id this instance does not accept
  -> ``404`` (the client must start a new session)
* a notification                          -> ``202``
* a JSON-RPC *response* (the client answering the server's ``elicitation/create``)
  -> ``202``, handed to the tool waiting for it **in this process**; if none is waiting here,
  the answer is dropped, as the official SDK does. That is the multi-instance failure.
* ``tools/call``                          -> JSON if the tool finishes without asking; else an
  SSE stream carrying the server's requests, then the response. Closing it cancels the tool.

``GET`` (the standalone server stream) and ``DELETE`` are answered ``405``: this server offers
neither, which 2025-11-25 allows. Every response names its instance in ``X-Mcp-Instance``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mrtr_course.legacy.server import LEGACY_VERSIONS, LegacyServer
from mrtr_course.legacy.sessions import Session
from mrtr_kit.server.http import INSTANCE_HEADER

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")

log = logging.getLogger("mrtr_course.legacy")


def configure_logging() -> None:
    """Plain one-line messages on stderr, for a server process (the lesson reads them)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def _dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def _loopback(request: Request) -> bool:
    """DNS-rebinding defence, as 2025-11-25 asked too: loopback Host, loopback Origin if any."""
    host = request.headers.get("host", "")
    name = host.split("]")[0] + "]" if host.startswith("[") else host.rsplit(":", 1)[0]
    if name.lower() not in LOOPBACK_HOSTS:
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True
    hostname = urlsplit(origin).hostname or ""
    return (f"[{hostname}]" if ":" in hostname else hostname) in LOOPBACK_HOSTS


@dataclass
class _Final:
    response: dict[str, Any]


class LegacyHttpEndpoint:
    """The one ``/mcp`` endpoint of a 2025-11-25 server process (see the module docstring)."""

    def __init__(self, server: LegacyServer, instance: str) -> None:
        self.server = server
        self.instance = instance
        self.headers = {INSTANCE_HEADER: instance}

    def _error(self, status: int, message: str, code: int = -32600) -> Response:
        body = {"jsonrpc": "2.0", "error": {"code": code, "message": message}}  # id-less
        return Response(_dumps(body), status, media_type="application/json", headers=self.headers)

    def _json(self, body: dict[str, Any], extra: dict[str, str] | None = None) -> Response:
        headers = {**self.headers, **(extra or {})}
        return Response(_dumps(body), media_type="application/json", headers=headers)

    async def handle(self, request: Request) -> Response:
        if not _loopback(request):
            return self._error(403, "Forbidden: Host or Origin is not loopback")
        if request.method != "POST":
            return Response(status_code=405, headers={**self.headers, "Allow": "POST"})
        accept = request.headers.get("accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            return self._error(406, "Not Acceptable: accept application/json and text/event-stream")
        try:
            message = json.loads(await request.body())
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._error(400, "Parse error", -32700)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return self._error(400, "Invalid Request")
        if message.get("method") == "initialize":
            result, session = self.server.initialize(message.get("params") or {})
            response = {"jsonrpc": "2.0", "id": message.get("id"), "result": result}
            return self._json(response, {SESSION_HEADER: session.id})
        session_or_error = self._session(request)
        if isinstance(session_or_error, Response):
            return session_or_error
        session = session_or_error
        if "method" not in message:
            return self._client_response(session, message)
        if "id" not in message:
            return Response(status_code=202, headers=self.headers)  # a notification
        return await self._request(session, message)

    def _session(self, request: Request) -> Session | Response:
        version = request.headers.get(VERSION_HEADER)
        if version is not None and version not in LEGACY_VERSIONS:
            return self._error(400, f"Bad Request: unsupported protocol version {version}")
        session_id = request.headers.get(SESSION_HEADER)
        if not session_id:
            return self._error(400, "Bad Request: Missing session ID")
        session = self.server.sessions.get(session_id)
        if session is None:
            log.warning("%s: 404 for a session this instance does not know", self.instance)
            return self._error(404, "Session not found")
        return session

    def _client_response(self, session: Session, message: dict[str, Any]) -> Response:
        """The client answering one of the server's requests: find the tool waiting for it."""
        if self.server.pending.resolve(session.id, message):
            log.info(
                "%s: answer to request %s received; the tool resumes",
                self.instance,
                message.get("id"),
            )
        else:
            log.warning(
                "%s: dropped the answer to request %s: no tool in this process is waiting for it",
                self.instance,
                message.get("id"),
            )
        return Response(status_code=202, headers=self.headers)

    async def _request(self, session: Session, message: dict[str, Any]) -> Response:
        queue: asyncio.Queue[dict[str, Any] | _Final] = asyncio.Queue()
        label = f"{message['method']} {(message.get('params') or {}).get('name', '')}".strip()

        async def send(outgoing: dict[str, Any]) -> None:
            log.info(
                "%s: %s sent %s (id %s) to the client and waits in this process",
                self.instance,
                label,
                outgoing.get("method"),
                outgoing.get("id"),
            )
            await queue.put(outgoing)

        async def run() -> None:
            response = await self.server.handle_request(session, message, send)
            if "error" in response:
                log.warning("%s: %s failed: %s", self.instance, label, response["error"]["message"])
            await queue.put(_Final(response))

        task = asyncio.create_task(run())
        try:
            first = await queue.get()
        except asyncio.CancelledError:
            task.cancel()
            raise
        if isinstance(first, _Final):
            return self._json(first.response)

        async def stream() -> AsyncIterator[str]:
            item: dict[str, Any] | _Final = first
            try:
                while not isinstance(item, _Final):
                    yield f"data: {_dumps(item)}\n\n"
                    item = await queue.get()
                yield f"data: {_dumps(item.response)}\n\n"
            finally:
                if not task.done():  # the client closed the stream: stop the tool
                    log.info("%s: %s cancelled: the client closed the stream", self.instance, label)
                    task.cancel()

        headers = {**self.headers, "Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


def create_legacy_app(
    server: LegacyServer, *, instance: str = "legacy", path: str = "/mcp"
) -> Starlette:
    """A Starlette app serving ``server`` 2025-11-25 style; ``instance`` names it in the
    ``X-Mcp-Instance`` header and in its log lines."""
    endpoint = LegacyHttpEndpoint(server, instance)
    return Starlette(routes=[Route(path, endpoint.handle, methods=["GET", "POST", "DELETE"])])
