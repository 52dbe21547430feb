"""A 2025-11-25 session over Streamable HTTP, for ``McpClient`` talking to a legacy server.

``McpClient`` falls back here (VER-4, ``eras.py``) when its first 2026-07-28 request gets a
``400`` that is not a modern error. ``LegacySession`` then:

1. sends ``initialize`` (version 2025-11-25, the same capabilities and clientInfo the MRTR
   requests declare), keeps the ``Mcp-Session-Id`` it is given, and sends
   ``notifications/initialized``; every later POST carries the session id and
   ``MCP-Protocol-Version`` (the negotiated version);
2. sends each request as 2025-11-25 has it (no ``_meta`` version, no ``inputResponses``); a
   JSON answer is the response; an SSE answer carries notifications (handed to
   ``on_notification``), the server's pushed requests and finally the response;
3. answers each pushed ``elicitation/create``, ``sampling/createMessage`` and ``roots/list``
   with the client's ``AnswerHandlers``, the same callbacks the MRTR loop uses (MIG-6 run
   backwards), POSTing the JSON-RPC response on the session. A handler that fails (or refuses,
   MRTR-C8) answers the server with an error, so its call does not hang, and raises here;
4. listens on the session's standalone GET stream, where a server may push requests that
   belong to no call's stream (the SDK 1.x's ``list_roots()`` does); a server without one
   (405) is fine. Such a request is answered as in 3, for the call in flight, if any;
5. on ``404`` (the session is gone: expired, or its instance restarted) starts one new session
   and sends the request again, as 2025-11-25 says; ``aclose`` DELETEs the session.

Only HTTP's and the session's rules live here; which era to speak is ``eras.py``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from ..protocol.aio import maybe_await
from ..protocol.models import Implementation
from .answers import AnswerHandlers
from .errors import (
    McpClientError,
    McpRemoteError,
    NoMutualVersion,
    ProtocolViolation,
    TransportError,
)
from .sse import SseDecoder
from .steps import AnswerContext

log = logging.getLogger("mrtr_kit.client.era2025")

LEGACY_VERSION = "2025-11-25"
# What a 2025-11-25 server may answer our initialize with (2025-06-18 differs only in what the
# client sends, which is a subset here).
LEGACY_VERSIONS = (LEGACY_VERSION, "2025-06-18")
SESSION_HEADER = "Mcp-Session-Id"
_ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PUSHED_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})

Notify = Callable[[dict[str, Any]], Awaitable[None] | None]


class SessionGone(McpClientError):
    """The server answered 404 on the session: it no longer knows it."""


class LegacySession:
    """One 2025-11-25 session with the server at ``url`` (module docstring).

    ``http`` is the client's ``httpx.AsyncClient``; ``headers`` go on every POST
    (``Authorization``); ``handlers`` answer pushed requests; ``client_info`` and
    ``capabilities`` go into ``initialize``; ``on_notification`` gets the notifications of
    each call's stream."""

    def __init__(
        self,
        url: str,
        http: httpx.AsyncClient,
        *,
        handlers: AnswerHandlers,
        capabilities: Mapping[str, Any],
        client_info: Implementation | Mapping[str, Any] | None,
        headers: Mapping[str, str] | None = None,
        on_notification: Notify | None = None,
    ) -> None:
        """A session not opened yet: the first ``request`` opens it."""
        self.url = url
        self.http = http
        self.handlers = handlers
        self.capabilities = dict(capabilities)
        info = client_info.to_wire() if isinstance(client_info, Implementation) else client_info
        self.client_info = dict(info) if info is not None else {"name": "mrtr-kit", "version": "0"}
        self.headers = dict(headers or {})
        self.on_notification = on_notification
        self.session_id: str | None = None
        self.version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self.initialize_result: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        self._listener: asyncio.Task[None] | None = None
        self._current: _Call | None = None  # the call in flight, for the GET stream's requests

    # -- the session's life -------------------------------------------------------------------

    async def open(self) -> dict[str, Any]:
        """``initialize`` and ``notifications/initialized``; the server's initialize result."""
        self.session_id = None
        params = {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": "initialize"}
        response = await self.http.post(
            self.url, content=_encode({**message, "params": params}), headers=self._head()
        )
        reply = await _reply(response, message["id"], self)
        result = _result(reply, response.status_code)
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            raise NoMutualVersion(LEGACY_VERSIONS, [str(version)])
        self.version = str(version)
        self.session_id = response.headers.get(SESSION_HEADER)  # none: a server without sessions
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else None
        self.initialize_result = result
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.http.post(self.url, content=_encode(note), headers=self._head())
        self._stop_listening()
        if self.session_id is not None:
            self._listener = asyncio.create_task(self._listen())
        return result

    async def _listen(self) -> None:
        """The standalone GET stream: requests and notifications outside any call's stream.
        It ends with the session, or at once if the server offers none."""
        head = {**self._head(), "Accept": "text/event-stream"}
        try:
            async with self.http.stream("GET", self.url, headers=head) as response:
                kind = response.headers.get("content-type", "")
                if response.status_code != 200 or not kind.startswith("text/event-stream"):
                    return  # 405: no standalone stream, which 2025-11-25 allows
                decoder = SseDecoder()
                async for line in response.aiter_lines():
                    data = decoder.feed(line)
                    if data is None:
                        continue
                    message = _decode(data, 200)
                    if "method" in message and "id" in message:
                        await self._pushed(message, self._current or _Call("", None))
                    elif "method" in message and self.on_notification is not None:
                        await maybe_await(self.on_notification(message))
        except (httpx.HTTPError, McpClientError) as exc:  # the stream is a bonus: never fatal
            log.info("the session's GET stream ended: %s", exc)

    def _stop_listening(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None

    async def aclose(self) -> None:
        """End the session (DELETE); a server that does not allow it is fine (405)."""
        self._stop_listening()
        if self.session_id is None:
            return
        with contextlib.suppress(httpx.HTTPError):  # a server gone already: nothing to end
            await self.http.delete(self.url, headers=self._head())
        self.session_id = None

    # -- requests -----------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        target: str | None = None,
    ) -> dict[str, Any]:
        """Send one request on the session (opening it first, once more after a 404) and
        return its result, answering what the server pushes meanwhile; ``target`` (the tool,
        prompt or resource) is shown to the handlers (``AnswerContext``)."""
        if self.version is None:
            await self.open()
        try:
            return await self._request(method, params, target)
        except SessionGone:
            await self.open()  # 2025-11-25: on 404, start a new session
            return await self._request(method, params, target)

    async def _request(
        self, method: str, params: Mapping[str, Any] | None, target: str | None
    ) -> dict[str, Any]:
        rid = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            message["params"] = dict(params)
        call = self._current = _Call(method, target)
        try:
            async with self.http.stream(
                "POST", self.url, content=_encode(message), headers=self._head()
            ) as response:
                if response.status_code == 404 and self.session_id is not None:
                    raise SessionGone(f"the server no longer knows session {self.session_id}")
                if response.headers.get("content-type", "").startswith("text/event-stream"):
                    reply = await self._read_stream(response, rid, call)
                else:
                    reply = await _reply(response, rid, self)
        finally:
            self._current = None
        return _result(reply, response.status_code)

    async def _read_stream(self, response: httpx.Response, rid: int, call: _Call) -> dict[str, Any]:
        decoder = SseDecoder()
        async for line in response.aiter_lines():
            data = decoder.feed(line)
            if data is None:
                continue
            message = _decode(data, response.status_code)
            if "method" not in message:
                if message.get("id") == rid:
                    return message
                continue  # an answer to something else: not ours to read
            if "id" in message:
                await self._pushed(message, call)
            elif self.on_notification is not None:
                await maybe_await(self.on_notification(message))
        raise TransportError(
            f"the SSE stream for request {rid!r} ended without a response",
            http_status=response.status_code,
        )

    async def _pushed(self, message: dict[str, Any], call: _Call) -> None:
        """A request the server pushed: answered by the handlers, the answer POSTed back."""
        method = message.get("method")
        call.round += 1
        if method == "ping":
            await self._respond(message["id"], {"result": {}})
            return
        if method not in PUSHED_METHODS:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            await self._respond(message["id"], {"error": error})
            return
        request = {"method": method, "params": message.get("params") or {}}
        context = AnswerContext(
            key=str(message["id"]),
            method=call.method,
            target=call.target,
            round=call.round,
            server_info=self.server_info,
        )
        try:
            answer = await self.handlers.answer(request, context)
        except McpClientError as exc:
            # The server's call would wait for an answer until its timeout: say no at once.
            error = {"code": -32603, "message": f"The client could not answer: {exc}"}
            await self._respond(message["id"], {"error": error})
            raise
        await self._respond(message["id"], {"result": answer})

    async def _respond(self, rid: Any, outcome: dict[str, Any]) -> None:
        body = _encode({"jsonrpc": "2.0", "id": rid, **outcome})
        response = await self.http.post(self.url, content=body, headers=self._head())
        if response.status_code >= 300:
            status = response.status_code
            raise TransportError(
                f"HTTP {status}: the server refused our answer: {response.text[:200]}",
                http_status=status,
            )

    def _head(self) -> dict[str, str]:
        head = {**_ACCEPT, **self.headers}
        if self.session_id is not None:
            head[SESSION_HEADER] = self.session_id
        if self.version is not None:
            head["MCP-Protocol-Version"] = self.version
        return head


class _Call:
    """The request a pushed request belongs to, for the handlers' ``AnswerContext``."""

    def __init__(self, method: str, target: str | None) -> None:
        self.method = method
        self.target = target
        self.round = 0


def _encode(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def _decode(text: str | bytes, status: int) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise TransportError(f"HTTP {status}: the body is not JSON", http_status=status) from None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise TransportError(f"HTTP {status}: not a JSON-RPC message", http_status=status)
    return message


async def _reply(response: httpx.Response, rid: Any, session: LegacySession) -> dict[str, Any]:
    """The JSON-RPC response of a plain JSON (or SSE, for initialize) answer."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return await session._read_stream(response, rid, _Call("initialize", None))
    body = await response.aread()
    if response.status_code == 404 and session.session_id is not None:
        raise SessionGone(f"the server no longer knows session {session.session_id}")
    return _decode(body, response.status_code)


def _result(reply: Mapping[str, Any], status: int) -> dict[str, Any]:
    if "error" in reply:
        raise McpRemoteError.from_error_object(reply["error"], http_status=status)
    result = reply.get("result")
    if not isinstance(result, dict):
        raise ProtocolViolation(f"HTTP {status}: a response without a result object")
    return result
