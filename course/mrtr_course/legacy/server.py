"""A 2025-11-25 ("push style") MCP server, small but faithful, for the migration lesson only.

Before 2026-07-28 a tool that needed the user's input *sent the client a request* in the middle
of its code and waited::

    async def plan_trip(ctx):
        dates = await ctx.elicit("When are you travelling?", DATES_FORM)   # waits here
        ...

``ctx.elicit`` writes a JSON-RPC request (``elicitation/create``, with an id) onto the SSE stream
of the ``tools/call`` response, parks a future in ``PendingRequests`` and suspends the tool. The
client answers with a *separate* HTTP POST carrying a JSON-RPC response with that id; only the
process holding the future can resume the tool. That is the property that breaks behind a load
balancer, and the reason MRTR exists (MRTR-0, MIG-1, MIG-2).

What 2026-07-28 removed and this module still does, on purpose: the ``initialize`` handshake,
sessions (``Mcp-Session-Id``), server-to-client requests, capabilities read from the session,
results without ``resultType``. The HTTP side is in ``http.py``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mrtr_course.legacy.sessions import Session, SessionStore
from mrtr_kit import __version__
from mrtr_kit.protocol.elicitation import check_requested_schema
from mrtr_kit.protocol.models import ElicitResult
from mrtr_kit.server.arguments import ArgumentsSchema

LEGACY_PROTOCOL_VERSION = "2025-11-25"
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18")

# JSON-RPC codes of that era. REQUEST_TIMEOUT is the official SDK's code for "the peer never
# answered my request"; it lies in -32000..-32019, which 2026-07-28 reserves (ERR-3).
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_TIMEOUT = -32001

log = logging.getLogger("mrtr_course.legacy")

Send = Callable[[dict[str, Any]], Awaitable[None]]
LegacyHandler = Callable[["LegacyToolContext"], Awaitable[Any]]


class LegacyError(Exception):
    """Becomes the JSON-RPC error of the request being served."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_error_object(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


class PendingRequests:
    """Server-to-client requests still waiting for the client's response, in *this* process.

    Each entry is an ``asyncio.Future`` a suspended tool is awaiting. A future cannot be
    pickled, stored in a database or sent to another process: the answer must come back here.
    """

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, int | str], asyncio.Future[dict[str, Any]]] = {}

    def open(self, session_id: str, request_id: int | str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[(session_id, request_id)] = future
        return future

    def resolve(self, session_id: str, response: dict[str, Any]) -> bool:
        """Hand a client's JSON-RPC response to the tool waiting for it; False if none is."""
        future = self._waiting.pop((session_id, response.get("id")), None)  # type: ignore[arg-type]
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    def discard(self, session_id: str, request_id: int | str) -> None:
        self._waiting.pop((session_id, request_id), None)

    def ids(self) -> list[tuple[str, int | str]]:
        return list(self._waiting)


@dataclass
class LegacyToolContext:
    """What a 2025-11-25 tool sees: its arguments and the *session*, plus ``elicit``."""

    server: LegacyServer
    session: Session
    tool: str
    arguments: dict[str, Any]
    send: Send  # writes one message onto this tools/call's SSE stream

    async def elicit(self, message: str, requested_schema: dict[str, Any]) -> ElicitResult:
        """Send ``elicitation/create`` to the client and wait for its answer (2025-11-25).

        The tool is suspended right here until the client POSTs a response with the same id
        to *this* process, or until the server's answer timeout.
        """
        check_requested_schema(requested_schema)
        server = self.server
        request_id = server.next_request_id(self.session.id)
        future = server.pending.open(self.session.id, request_id)
        try:
            await self.send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": message,
                        "requestedSchema": requested_schema,
                    },
                }
            )
            try:
                response = await asyncio.wait_for(future, server.answer_timeout_s)
            except TimeoutError:
                raise LegacyError(
                    REQUEST_TIMEOUT,
                    f"Request 'elicitation/create' (id {request_id}) timed out after "
                    f"{server.answer_timeout_s:g} s: no answer reached this process",
                ) from None
        finally:
            server.pending.discard(self.session.id, request_id)
        if "error" in response:
            error = response["error"]
            raise LegacyError(INTERNAL_ERROR, f"the client refused to answer: {error}")
        return ElicitResult.model_validate(response.get("result"))


@dataclass
class _Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: LegacyHandler
    arguments: ArgumentsSchema  # input_schema compiled once, at registration


class LegacyServer:
    """Tools, sessions and pending requests of one 2025-11-25 server process."""

    def __init__(
        self,
        name: str,
        version: str = __version__,
        *,
        sessions: SessionStore,
        answer_timeout_s: float = 300.0,
        instructions: str | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.sessions = sessions
        self.answer_timeout_s = answer_timeout_s
        self.instructions = instructions
        self.pending = PendingRequests()
        self._tools: dict[str, _Tool] = {}
        self._request_ids: dict[str, itertools.count[int]] = {}

    def tool(
        self, name: str, *, description: str, input_schema: dict[str, Any]
    ) -> Callable[[LegacyHandler], LegacyHandler]:
        def register(fn: LegacyHandler) -> LegacyHandler:
            compiled = ArgumentsSchema(input_schema)  # InvalidSchema if it is not one
            self._tools[name] = _Tool(name, description, input_schema, fn, compiled)
            return fn

        return register

    def next_request_id(self, session_id: str) -> int:
        """Ids of the server's own requests: 0, 1, 2, ... per session, in this process."""
        return next(self._request_ids.setdefault(session_id, itertools.count()))

    # -- the handshake --------------------------------------------------------------------------

    def initialize(self, params: dict[str, Any]) -> tuple[dict[str, Any], Session]:
        """Negotiate once for the whole session: version, capabilities, identities."""
        asked = params.get("protocolVersion")
        version = asked if asked in LEGACY_VERSIONS else LEGACY_PROTOCOL_VERSION
        session = self.sessions.create(
            version, dict(params.get("capabilities") or {}), dict(params.get("clientInfo") or {})
        )
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": self.name, "version": self.version},
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result, session

    # -- requests after the handshake -----------------------------------------------------------

    async def handle_request(
        self, session: Session, request: dict[str, Any], send: Send
    ) -> dict[str, Any]:
        """One JSON-RPC request of an initialised session -> its JSON-RPC response."""
        try:
            result = await self._dispatch(session, request, send)
            return {"jsonrpc": "2.0", "id": request["id"], "result": result}
        except LegacyError as exc:
            return {"jsonrpc": "2.0", "id": request["id"], "error": exc.to_error_object()}
        except Exception:
            log.exception("%s failed", request["method"])
            error = {"code": INTERNAL_ERROR, "message": "Internal error"}
            return {"jsonrpc": "2.0", "id": request["id"], "error": error}

    async def _dispatch(
        self, session: Session, request: dict[str, Any], send: Send
    ) -> dict[str, Any]:
        method, params = request["method"], request.get("params") or {}
        if method == "ping":
            return {}
        if method == "tools/list":
            return {
                "tools": [
                    {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                    for t in self._tools.values()
                ]
            }
        if method == "tools/call":
            return await self._call(session, params, send)
        raise LegacyError(METHOD_NOT_FOUND, f"Method not found: {method}")

    async def _call(self, session: Session, params: dict[str, Any], send: Send) -> dict[str, Any]:
        tool = self._tools.get(params.get("name", ""))
        if tool is None:
            raise LegacyError(INVALID_PARAMS, f"Unknown tool: {params.get('name')}")
        arguments = params.get("arguments") or {}
        problem = tool.arguments.problem(arguments)
        if problem is not None:
            raise LegacyError(INVALID_PARAMS, f"Invalid arguments: {problem}")
        ctx = LegacyToolContext(self, session, tool.name, dict(arguments), send)
        outcome = await tool.handler(ctx)
        if isinstance(outcome, dict):
            return outcome
        blocks = [outcome] if isinstance(outcome, str) else list(outcome)
        content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
        return {"content": content, "isError": False}  # no resultType: 2025-11-25 had none
