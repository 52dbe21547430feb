"""A 2025-11-25 client: the handshake, a session, and answering the server's requests.

``LegacyClient`` does what a pre-2026 client did, no more:

1. ``POST initialize`` -> keep the ``Mcp-Session-Id`` the server returns; ``POST
   notifications/initialized``;
2. ``POST tools/call`` with the session id; read the SSE stream of the response;
3. when the stream carries a *request* from the server (``elicitation/create`` with an id),
   ask the answer handler and ``POST`` a JSON-RPC *response* with that id — a separate HTTP
   request, which a load balancer may send to any instance;
4. keep reading the stream until the ``tools/call`` response arrives.

Every HTTP exchange and every message read from a stream is kept in ``trace``, with the
instance that served it (``X-Mcp-Instance``), so the lesson can show where each one went.
Answer handlers are the MRTR client's (``mrtr_kit.client.answers``), so one handler serves both.
"""

from __future__ import annotations

import inspect
import itertools
import json
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx

from mrtr_course.legacy.http import INSTANCE_HEADER, SESSION_HEADER, VERSION_HEADER
from mrtr_course.legacy.server import LEGACY_PROTOCOL_VERSION
from mrtr_kit import __version__
from mrtr_kit.client.answers import AnswerContext, FormHandler, answer_to_wire
from mrtr_kit.client.sse import SseDecoder
from mrtr_kit.protocol.models import ElicitRequestFormParams

ACCEPT = "application/json, text/event-stream"


@dataclass
class LegacyExchange:
    """One line of the trace: an HTTP POST the client made, or a message read from a stream."""

    step: int | None  # numbered for POSTs; None for messages arriving on an open stream
    what: str
    instance: str | None
    http_status: int | None = None
    note: str = ""

    def line(self) -> str:
        step = f"{self.step:>2} POST" if self.step is not None else "   <-  "
        status = str(self.http_status) if self.http_status is not None else ""
        text = f"{step} {self.what:<34} {self.instance or '?':<11} {status:<4} {self.note}"
        return text.rstrip()


class LegacyClientError(Exception):
    """Base of the legacy client's errors."""


class LegacyHttpError(LegacyClientError):
    """An HTTP status the client cannot continue from (e.g. 404: session unknown here)."""

    def __init__(self, what: str, status: int, body: str, instance: str | None) -> None:
        super().__init__(f"{what}: HTTP {status} from {instance or '?'}: {body}")
        self.status = status
        self.body = body
        self.instance = instance


class LegacyRemoteError(LegacyClientError):
    """A JSON-RPC error response from the server."""

    def __init__(self, code: int, message: str, instance: str | None) -> None:
        super().__init__(f"server error {code} from {instance or '?'}: {message}")
        self.code = code
        self.message = message
        self.instance = instance


def format_trace(trace: list[LegacyExchange]) -> str:
    return "\n".join(record.line() for record in trace)


class LegacyClient:
    """A 2025-11-25 Streamable HTTP client. Use ``async with`` (it runs the handshake)."""

    def __init__(
        self,
        url: str,
        *,
        elicitation: FormHandler | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        client_info: dict[str, Any] | None = None,
    ) -> None:
        self.url = url
        self.elicitation = elicitation
        self.client_info = client_info or {"name": "mrtr-kit-legacy-client", "version": __version__}
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self.trace: list[LegacyExchange] = []
        self._http = httpx.AsyncClient(transport=transport, timeout=timeout)
        self._ids = itertools.count(1)
        self._steps = itertools.count(1)

    async def __aenter__(self) -> LegacyClient:
        try:
            await self.initialize()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    @property
    def capabilities(self) -> dict[str, Any]:
        """Declared once, in ``initialize``, for the whole session."""
        return {"elicitation": {"form": {}}} if self.elicitation is not None else {}

    # -- HTTP ---------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[VERSION_HEADER] = self.protocol_version
        return headers

    def _note(self, what: str, response: httpx.Response, note: str = "") -> LegacyExchange:
        instance = response.headers.get(INSTANCE_HEADER)
        record = LegacyExchange(next(self._steps), what, instance, response.status_code, note)
        self.trace.append(record)
        return record

    async def _notify(self, message: dict[str, Any], what: str) -> None:
        """POST a notification or a response: the server accepts it with ``202``."""
        body = json.dumps(message).encode()
        response = await self._http.post(self.url, content=body, headers=self._headers())
        self._note(what, response)
        if response.status_code != 202:
            instance = response.headers.get(INSTANCE_HEADER)
            raise LegacyHttpError(what, response.status_code, response.text, instance)

    async def _request(self, method: str, params: dict[str, Any], what: str) -> dict[str, Any]:
        """POST a request; read its answer as JSON, or as an SSE stream on which the server
        may send its own requests first (each answered with a separate POST)."""
        request_id = next(self._ids)
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        body = json.dumps(request).encode()
        instance: str | None = None
        try:
            async with self._http.stream(
                "POST", self.url, content=body, headers=self._headers()
            ) as r:
                instance = r.headers.get(INSTANCE_HEADER)
                sse = r.headers.get("content-type", "").startswith("text/event-stream")
                self._note(what, r, "SSE stream open" if sse else "")
                if r.status_code != 200:
                    await r.aread()
                    raise LegacyHttpError(what, r.status_code, r.text, instance)
                if SESSION_HEADER.lower() in r.headers:
                    self.session_id = r.headers[SESSION_HEADER]
                if sse:
                    response = await self._read_stream(r, request_id, params.get("name"), instance)
                else:
                    response = json.loads(await r.aread())
        except httpx.TransportError as exc:
            # The process holding this call went away (crash, restart, deploy): so did the call.
            self.trace.append(LegacyExchange(None, "connection lost", instance))
            raise LegacyClientError(
                f"{what}: the connection to {instance or 'the server'} broke before the "
                "response arrived; the call is lost"
            ) from exc
        if "error" in response:
            error = response["error"]
            note = error.get("message", "")
            self.trace.append(
                LegacyExchange(None, f"error {error.get('code')}", instance, None, note)
            )
            raise LegacyRemoteError(error.get("code", 0), note, instance)
        if sse:
            self.trace.append(LegacyExchange(None, "result", instance))
        return response["result"]

    # -- the session --------------------------------------------------------------------------

    async def initialize(self) -> dict[str, Any]:
        """The handshake: version and capabilities are fixed here for the whole session."""
        params = {
            "protocolVersion": LEGACY_PROTOCOL_VERSION,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        result = await self._request("initialize", params, "initialize")
        self.protocol_version = result["protocolVersion"]
        self.server_info = result.get("serverInfo")
        notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self._notify(notification, "notifications/initialized")
        return result

    async def list_tools(self) -> list[dict[str, Any]]:
        return (await self._request("tools/list", {}, "tools/list"))["tools"]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """``tools/call``, answering the server's requests on its stream until the result."""
        params = {"name": name, "arguments": dict(arguments or {})}
        return await self._request("tools/call", params, f"tools/call {name}")

    async def _read_stream(
        self, stream: httpx.Response, request_id: int, tool: str | None, instance: str | None
    ) -> dict[str, Any]:
        decoder = SseDecoder()
        async for line in stream.aiter_lines():
            data = decoder.feed(line)
            if not data:  # no event yet, or an empty priming event
                continue
            message = json.loads(data)
            if "method" in message and "id" in message:  # the server asks us something
                rid = message["id"]
                self.trace.append(LegacyExchange(None, f"{message['method']} (id {rid})", instance))
                answer = await self._answer(message, tool)
                await self._notify(
                    {"jsonrpc": "2.0", "id": rid, **answer}, f"answer to request {rid}"
                )
            elif "method" in message:
                self.trace.append(LegacyExchange(None, message["method"], instance))
            elif message.get("id") == request_id:
                return message
        raise LegacyClientError(f"the stream from {instance} ended without a response")

    async def _answer(self, request: dict[str, Any], tool: str | None) -> dict[str, Any]:
        """``{"result": ...}`` or ``{"error": ...}`` for one server request."""
        if request["method"] != "elicitation/create" or self.elicitation is None:
            return {"error": {"code": -32601, "message": f"{request['method']} not supported"}}
        params = ElicitRequestFormParams.model_validate(request.get("params") or {})
        ctx = AnswerContext(str(request["id"]), "tools/call", tool, 1, self.server_info)
        answer = self.elicitation(params, ctx)
        if inspect.isawaitable(answer):
            answer = await answer
        return {"result": answer_to_wire(answer)}
