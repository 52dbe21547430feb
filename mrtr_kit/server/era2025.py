"""The 2025-11-25 era, transport aside: sessions that drive the same MRTR handlers.

``LegacyRounds`` is what a 2025-11-25 session does with each message, whatever carries it;
``era2025_http.py`` (Streamable HTTP: ``Mcp-Session-Id``, SSE, statuses) and ``stdio.py``
(one session per process, lines on stdin/stdout) are its two transports. A transport gives
it decoded messages and a ``Pusher`` (where a call's pushed requests and notifications go),
and writes what it returns. The client's first request decides its era, as in the official
SDKs.

**One handler, one set of rules.** Nothing here runs a handler itself. Each legacy request is
rebuilt as the 2026-07-28 request it stands for (the session's capabilities and clientInfo in
``_meta``) and given to ``McpServer.handle``, so every MRTR rule (capability gate MRTR-S7,
sealing and verifying requestState MRTR-S4/S5, single use MRTR-S5d, unrequested answers
MRTR-E3, ...) is applied by the core, in one place. When a ``tools/call``, ``prompts/get`` or
``resources/read`` answers ``input_required``, this module plays the MRTR client inside the
process (MIG-2 run backwards):

1. each input request is pushed to the client as a JSON-RPC request (``elicitation/create``,
   ``sampling/createMessage``, ``roots/list``), one at a time, as a 2025-11-25 handler
   awaiting ``ctx.elicit(...)`` would;
2. the client's JSON-RPC response (``take_answer``) becomes part of the next round's
   ``inputResponses``;
3. the round's ``requestState`` is echoed exactly (MRTR-C2) and never leaves the process;
4. the loop ends with the complete result, in the 2025-11-25 shape (no ``resultType``,
   ``ttlMs``, ``cacheScope`` or result ``serverInfo``).

A state-only round ("still waiting", MRTR-S3) re-enters the handler after ``poll_interval_s``
until it asks or completes, within ``answer_timeout_s``.

**A call that cannot finish** (KIT: the failure a 2025-11-25 server's ``await ctx.elicit()``
gives, as in the SDK 1.x): the session did not declare a capability the question needs (the
core's -32021, which 2025-11-25 does not have), the client answered a pushed request with an
error, or it never answered within ``answer_timeout_s``. ``tools/call`` then gets a result with
``isError: true`` naming the cause (a 2025-11-25 tool execution error); ``prompts/get`` and
``resources/read``, which have no ``isError``, get -32602 (capability) or -32603 (the rest).

**URL mode** (ELIC-11, MIG-7): ``elicitation/create`` with ``mode: "url"`` and an
``elicitationId`` minted here, then ``notifications/elicitation/complete`` once the handler,
re-entered after the client's ``accept``, moves past that question (completes, or asks
something else). Not -32042: that error ends the call, and the client's later retry would be a
new call without the state, so a re-entrant handler would start again and ask again. Pushing
keeps the call and its state in the process, which is the session model's point; the handler
still learns about completion the MRTR way (ELIC-9: ``accept`` means "the user went", its own
store says whether it is done, and a state-only round waits). A session that declared no
``elicitation.url`` gets the capability failure above.

**Bounds** (``LegacyLimits``, KIT): requests pushed and unanswered per session, bytes per
answer, time to answer, rounds per call (and, over HTTP, sessions and idle time). A call that
ends for any reason removes its pending requests (``drive``'s ``finally``); an answer that
comes later is refused like any unknown id.

**Bad answers** (``take_answer``) lose nothing: a response to an id this session is not
waiting for (never sent, already answered, timed out, or another session's), one too large,
and a malformed one are refused (``Refused``), the question still pending.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from ..protocol.constants import (
    ELICITATION_CREATE,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROGRESS_TOKEN,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    PROTOCOL_VERSION,
    RESULT_INPUT_REQUIRED,
    ROOTS_LIST,
    SAMPLING_CREATE_MESSAGE,
)
from ..protocol.errors import Reason
from ..protocol.models import (
    ClientCapabilities,
    CreateMessageResult,
    ElicitResult,
    Implementation,
    ListRootsResult,
)
from ..protocol.wire_json import Unencodable, encode_message
from .core import McpServer, encoded_internal_error

log = logging.getLogger("mrtr_kit.legacy")

# The 2025-11-25 revision, and 2025-06-18, which costs one line: its form requests carry no
# ``mode`` (modes came in 2025-11-25). An unknown version is answered with the first (the
# 2025-11-25 lifecycle: the server names a version it supports).
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18")
_ANSWER_MODELS: dict[str, type[BaseModel]] = {
    ELICITATION_CREATE: ElicitResult,
    SAMPLING_CREATE_MESSAGE: CreateMessageResult,
    ROOTS_LIST: ListRootsResult,
}
_LEGACY_ONLY_PARAMS = ("inputResponses", "requestState", "_meta", "task")


@dataclass(frozen=True)
class LegacyLimits:
    """The bounds of the 2025-11-25 path (KIT; the spec names none).

    ``max_sessions_per_principal`` and ``max_sessions`` (429 beyond them, until sessions are
    deleted or idle for ``idle_timeout_s``); ``max_pending_per_session``: pushed requests
    awaiting an answer; ``max_answer_bytes``: one answer, encoded (413 beyond it);
    ``answer_timeout_s``: how long a call waits for one answer (humans fill in forms slowly)
    or for a "still waiting" handler; ``max_rounds``: rounds that ask something, per call
    (MRTR-C7's cap, the driver being the client); ``poll_interval_s``: the wait before
    re-entering a handler whose round asked nothing.
    """

    max_sessions_per_principal: int = 32
    max_sessions: int = 10_000
    max_pending_per_session: int = 32
    max_answer_bytes: int = 256 * 1024
    idle_timeout_s: float = 600.0
    answer_timeout_s: float = 300.0
    max_rounds: int = 10
    poll_interval_s: float = 0.5


@dataclass
class _Ask:
    """A request pushed to the client, waiting for its response."""

    method: str
    future: asyncio.Future[dict[str, Any]]


@dataclass
class _Call:
    """A running tools/call, prompts/get or resources/read of a session."""

    task: asyncio.Task[Any] | None
    cancelled: bool = False


@dataclass
class LegacySession:
    """One 2025-11-25 session: who opened it (``principal``), what its ``initialize`` declared
    (``version``, ``capabilities``, ``client_info``), ``last_seen`` (monotonic seconds), the
    requests pushed and unanswered (``pending``, by the id the server gave them), the
    calls running (``calls``, by the client's request id), and whether the client sent
    ``notifications/initialized`` (``initialized``; informational)."""

    id: str
    principal: str | None
    version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    last_seen: float
    pending: dict[int, _Ask] = field(default_factory=dict)
    calls: dict[str | int, _Call] = field(default_factory=dict)
    initialized: bool = False
    _next_id: int = 0

    def next_id(self) -> int:
        """A new id for a request pushed on this session (CORE-3: never one still pending)."""
        self._next_id += 1
        return self._next_id


class _CallFailed(Exception):
    """The driver could not finish a call: the client's side did not come through."""

    def __init__(self, message: str, code: int = -32603, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = data


class Pusher(Protocol):
    """Where one call's pushed requests and notifications go: the POST's SSE stream over
    HTTP, stdout over stdio. ``hung_up``: the client went away (the call is then cancelled and
    answered with nothing)."""

    @property
    def hung_up(self) -> bool:
        """Whether the client went away."""

    async def event(self, data: bytes) -> None:
        """Send one encoded JSON-RPC message to the client."""

    async def emit(self, notification: dict[str, Any]) -> None:
        """Send a handler's notification (progress, log): the 2025-11-25 shapes are the same."""


class Refused(Exception):
    """A message the session refuses: ``body``, a JSON-RPC error, and ``status``, the HTTP
    status it is answered with over HTTP (stdio, which cannot answer a response, logs it)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body["error"]["message"])
        self.status = status
        self.body = body


def is_modern_request(message: Any) -> bool:
    """Whether ``message`` names a 2026-07-28 version in ``params._meta`` (CORE-10)."""
    if not isinstance(message, dict):
        return False
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


def is_legacy_initialize(message: Any) -> bool:
    """A 2025-11-25 ``initialize``: its version in params, none in ``_meta`` (VER-4, VER-5)."""
    return (
        isinstance(message, dict)
        and message.get("method") == "initialize"
        and not is_modern_request(message)
    )


def valid_id(rid: Any) -> bool:
    """A JSON-RPC request id: a string or an integer, never a bool (CORE-2)."""
    return isinstance(rid, str | int) and not isinstance(rid, bool)


def error_body(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response; without ``id`` when ``rid`` is not a valid one."""
    body: dict[str, Any] = {"jsonrpc": "2.0"}
    if valid_id(rid):
        body["id"] = rid
    body["error"] = {"code": code, "message": message}
    if data is not None:
        body["error"]["data"] = data
    return body


def encoded(body: dict[str, Any]) -> bytes:
    """A reply as bytes; one a handler made unencodable (NaN, ...) is -32603, never a 500."""
    try:
        return encode_message(body)
    except Unencodable as exc:
        log.error("the reply to request %r cannot be encoded (%s)", body.get("id"), exc)
        return encoded_internal_error(body.get("id"))


def legacy_result(result: dict[str, Any]) -> dict[str, Any]:
    """A complete 2026-07-28 result in the 2025-11-25 shape: no ``resultType`` (RT-1 is new),
    no ``ttlMs``/``cacheScope`` (CACHE-1 is new), serverInfo only in ``initialize`` (CORE-16
    is new)."""
    out = {k: v for k, v in result.items() if k not in ("resultType", "ttlMs", "cacheScope")}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        rest = {k: v for k, v in meta.items() if k != META_SERVER_INFO}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out


def _missing(required: Any) -> str:
    """``{"elicitation": {"form": {}}}`` as ``elicitation.form``, for a person to read."""
    names: list[str] = []
    for key, sub in (required or {}).items():
        parts = [f"{key}.{s}" for s in sub] if isinstance(sub, dict) and sub else [key]
        names.extend(parts)
    return ", ".join(names) or "a capability"


class LegacyRounds:
    """What a 2025-11-25 session does with each message, for one ``McpServer`` (``server``),
    whatever transport carries it (module docstring). ``limits`` are the ``LegacyLimits``;
    ``now`` is the clock idle time is measured with (monotonic seconds)."""

    def __init__(
        self,
        server: McpServer,
        *,
        limits: LegacyLimits | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.server = server
        self.limits = limits or LegacyLimits()
        self.now = now
        self._modern_version = (
            PROTOCOL_VERSION
            if PROTOCOL_VERSION in server.supported_versions
            else server.supported_versions[0]
        )

    # -- the session's life ---------------------------------------------------------------------

    def open_session(self, sid: str, message: Any, principal: str | None) -> LegacySession:
        """The session a 2025-11-25 ``initialize`` opens: its version (one this server speaks,
        the 2025-11-25 lifecycle), capabilities and clientInfo. ``Refused`` (400) if malformed."""
        rid = message.get("id") if isinstance(message, dict) else None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not valid_id(rid):
            raise Refused(400, error_body(None, -32600, "initialize must be a request"))
        params = message.get("params")
        try:
            if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
                raise ValueError("params.protocolVersion must be a string")
            caps = params.get("capabilities")
            if not isinstance(caps, dict):
                raise ValueError("params.capabilities must be an object")
            ClientCapabilities.model_validate(caps)
            info = Implementation.model_validate(params.get("clientInfo")).to_wire()
        except (ValueError, ValidationError) as exc:
            problem = str(exc).splitlines()[0]
            raise Refused(400, error_body(rid, -32602, f"Invalid initialize: {problem}")) from None
        asked = params["protocolVersion"]
        version = asked if asked in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
        return LegacySession(sid, principal, version, caps, info, self.now())

    def initialize_result(self, session: LegacySession, rid: str | int) -> dict[str, Any]:
        """The answer to the ``initialize`` that opened ``session``."""
        result: dict[str, Any] = {
            "protocolVersion": session.version,
            "capabilities": self.server.capabilities,
            "serverInfo": self.server.info.to_wire(),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def end(self, session: LegacySession) -> None:
        """The session is over: its calls are cancelled and its questions dropped."""
        for call in session.calls.values():
            call.cancelled = True
            if call.task is not None:
                call.task.cancel()
        for ask in session.pending.values():
            ask.future.cancel()
        session.pending.clear()

    # -- messages on a session ----------------------------------------------------------------

    def notification(self, session: LegacySession, message: dict[str, Any]) -> None:
        """A notification on the session: ``initialized``, or ``cancelled`` naming a call."""
        method = message["method"]
        if method == "notifications/initialized":
            session.initialized = True
        elif method == "notifications/cancelled":
            params = message.get("params")
            rid = params.get("requestId") if isinstance(params, dict) else None
            call = session.calls.get(rid) if isinstance(rid, str | int) else None
            if call is not None and call.task is not None:
                call.cancelled = True  # no answer follows (2025-11-25 cancellation)
                call.task.cancel()
        # Anything else (roots/list_changed, progress, ...) needs nothing from this server.

    def take_answer(self, session: LegacySession, message: dict[str, Any]) -> None:
        """A JSON-RPC response to a request this session was pushed, handed to the call that
        waits for it; ``Refused`` (400, or 413 too large) with the question still pending."""
        rid = message.get("id")
        has_result, has_error = "result" in message, "error" in message
        if has_result == has_error:
            raise Refused(400, error_body(None, -32600, "a response has result or error"))
        ask = (
            session.pending.get(rid) if isinstance(rid, int) and not isinstance(rid, bool) else None
        )
        if ask is None or ask.future.done():
            problem = f"no request with id {rid!r} is waiting for an answer on this session"
            raise Refused(400, error_body(None, -32600, problem))
        payload = message["result"] if has_result else message["error"]
        try:
            size = len(encode_message(payload))
        except Unencodable:
            size = self.limits.max_answer_bytes + 1
        if size > self.limits.max_answer_bytes:
            problem = f"an answer may hold {self.limits.max_answer_bytes} bytes"
            raise Refused(413, error_body(None, -32600, problem))
        try:
            if has_error:
                if not isinstance(payload, dict) or not isinstance(payload.get("code"), int):
                    raise ValueError("error.code must be an integer")
                if not isinstance(payload.get("message"), str):
                    raise ValueError("error.message must be a string")
            else:
                _ANSWER_MODELS[ask.method].model_validate(payload)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "result"
            problem = f"not an answer to {ask.method}: {where}: {first['msg']}"
            raise Refused(400, error_body(None, -32602, problem)) from None
        except ValueError as exc:
            problem = f"not an answer to {ask.method}: {exc}"
            raise Refused(400, error_body(None, -32602, problem)) from None
        ask.future.set_result({"error": payload} if has_error else {"result": payload})

    def _modern(
        self, session: LegacySession, rid: str | int, method: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        """The 2026-07-28 request a legacy one stands for: the session's initialize in
        ``_meta`` (CORE-10), the legacy request's own params otherwise."""
        legacy_meta = params.get("_meta")
        meta: dict[str, Any] = {}
        if isinstance(legacy_meta, dict) and META_PROGRESS_TOKEN in legacy_meta:
            meta[META_PROGRESS_TOKEN] = legacy_meta[META_PROGRESS_TOKEN]
        meta[META_PROTOCOL_VERSION] = self._modern_version
        meta[META_CLIENT_CAPABILITIES] = session.capabilities
        if session.client_info is not None:
            meta[META_CLIENT_INFO] = session.client_info
        # MRTR fields do not exist in 2025-11-25: a client may not inject a state or answers.
        own = {k: v for k, v in params.items() if k not in _LEGACY_ONLY_PARAMS}
        return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**own, "_meta": meta}}

    async def one_shot(self, session: LegacySession, message: dict[str, Any]) -> dict[str, Any]:
        """A request that never asks (lists, completion): one pass through the core."""
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return error_body(message["id"], -32602, "params must be an object")
        modern = self._modern(session, message["id"], message["method"], params or {})
        reply = await self.server.handle(modern, principal=session.principal)
        assert reply.body is not None
        if "result" in reply.body:
            return {**reply.body, "result": legacy_result(reply.body["result"])}
        return reply.body

    async def call(
        self, session: LegacySession, message: dict[str, Any], pusher: Pusher
    ) -> dict[str, Any] | None:
        """A ``tools/call``, ``prompts/get`` or ``resources/read``, run to its end: the answer,
        or None when the client cancelled it or went away (no answer follows). ``Refused``
        (400) for an id still in flight on this session (CORE-3)."""
        rid: str | int = message["id"]
        if rid in session.calls:
            raise Refused(400, error_body(rid, -32600, f"request id {rid!r} is in use"))
        call = _Call(asyncio.current_task())
        session.calls[rid] = call
        try:
            return await self._drive(session, message, pusher)
        except asyncio.CancelledError:
            if not (call.cancelled or pusher.hung_up):
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()  # our cancellation, not the server's shutdown
            return None
        except Exception:  # the core answers every failure: this is a bug here, never a 500
            log.exception("legacy request %r failed outside the core", rid)
            return error_body(rid, -32603, "Internal error")
        finally:
            session.calls.pop(rid, None)
            session.last_seen = self.now()

    async def _drive(
        self, session: LegacySession, message: dict[str, Any], stream: Pusher
    ) -> dict[str, Any]:
        """Run the MRTR handler to completion for a 2025-11-25 client (module docstring)."""
        rid: str | int = message["id"]
        method: str = message["method"]
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return error_body(rid, -32602, "params must be an object")
        request = self._modern(session, rid, method, params or {})
        limits = self.limits
        urls: dict[str, tuple[str, str]] = {}  # key -> (elicitationId, url), accepted
        asked_rounds = 0
        waiting_until = self.now() + limits.answer_timeout_s
        try:
            while True:
                reply = await self.server.handle(
                    request, principal=session.principal, emit=stream.emit
                )
                assert reply.body is not None
                if "error" in reply.body:
                    if reply.reason is Reason.MISSING_CAPABILITY:
                        data = reply.body["error"].get("data") or {}
                        required = data.get("requiredCapabilities")
                        raise _CallFailed(
                            f"This needs the client capability {_missing(required)}, which "
                            "this session's initialize did not declare",
                            -32602,
                            data,
                        )
                    return reply.body
                result: dict[str, Any] = reply.body["result"]
                asking = result.get("resultType") == RESULT_INPUT_REQUIRED
                asks: dict[str, Any] = (result.get("inputRequests") or {}) if asking else {}
                await self._complete_urls(stream, urls, None if asking and not asks else asks)
                if not asking:
                    return {"jsonrpc": "2.0", "id": rid, "result": legacy_result(result)}
                p = dict(request["params"])
                p.pop("inputResponses", None)
                p["requestState"] = result["requestState"]  # MRTR-C2: exact, kept in-process
                if not asks:  # state-only: "still waiting" (MRTR-S3)
                    if self.now() + limits.poll_interval_s > waiting_until:
                        raise _CallFailed(
                            f"Timed out after {limits.answer_timeout_s:g} s waiting for the "
                            "server's own work to finish"
                        )
                    await asyncio.sleep(limits.poll_interval_s)
                else:
                    asked_rounds += 1
                    if asked_rounds > limits.max_rounds:
                        raise _CallFailed(f"The call asked more than {limits.max_rounds} rounds")
                    p["inputResponses"] = await self._ask(session, asks, stream, urls)
                    waiting_until = self.now() + limits.answer_timeout_s
                request = {**request, "params": p}
        except _CallFailed as exc:
            log.info("legacy %s %r failed: %s", method, rid, exc.message)
            if method == "tools/call":  # a 2025-11-25 tool execution error
                text = {"type": "text", "text": exc.message}
                return {"jsonrpc": "2.0", "id": rid, "result": {"content": [text], "isError": True}}
            return error_body(rid, exc.code, exc.message, exc.data)

    async def _ask(
        self,
        session: LegacySession,
        asks: dict[str, Any],
        stream: Pusher,
        urls: dict[str, tuple[str, str]],
    ) -> dict[str, Any]:
        """Push a round's requests one at a time, as ``await ctx.elicit(...)`` does, and
        collect the answers under their keys."""
        limits = self.limits
        if len(session.pending) + 1 > limits.max_pending_per_session:
            raise _CallFailed("Too many requests are waiting for this session's answers")
        answers: dict[str, Any] = {}
        for key, ask in asks.items():
            method: str = ask["method"]
            params = dict(ask.get("params") or {})
            if method == ELICITATION_CREATE:
                if params.get("mode") == "url":
                    params["elicitationId"] = secrets.token_urlsafe(16)
                elif session.version == "2025-06-18":
                    params.pop("mode", None)  # no modes before 2025-11-25
            sid = session.next_id()
            pushed: dict[str, Any] = {"jsonrpc": "2.0", "id": sid, "method": method}
            if params:
                pushed["params"] = params
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            session.pending[sid] = _Ask(method, future)
            try:
                async with asyncio.timeout(limits.answer_timeout_s):
                    # the write too: a client that stops reading holds it (TCP backpressure)
                    await stream.event(encode_message(pushed))
                    outcome = await future
            except TimeoutError:
                raise _CallFailed(
                    f"Timed out after {limits.answer_timeout_s:g} s waiting for the client's "
                    f"answer to {method}"
                ) from None
            finally:
                session.pending.pop(sid, None)  # answered, timed out or cancelled: gone
            if "error" in outcome:
                err = outcome["error"]
                raise _CallFailed(
                    f"The client answered {method} with error {err['code']}: {err['message']}"
                )
            answer = outcome["result"]
            if "elicitationId" in params and answer.get("action") == "accept":
                urls[key] = (params["elicitationId"], params["url"])  # the user went
            answers[key] = answer
        return answers

    async def _complete_urls(
        self, stream: Pusher, urls: dict[str, tuple[str, str]], asks: dict[str, Any] | None
    ) -> None:
        """``notifications/elicitation/complete`` for each accepted URL question the handler
        no longer asks. ``asks`` None is a state-only round: the handler is still waiting."""
        if asks is None:
            return
        for key, (eid, url) in list(urls.items()):
            again = asks.get(key)
            params = again.get("params") if isinstance(again, dict) else None
            if isinstance(params, dict) and params.get("url") == url:
                continue  # asked again: not done yet
            del urls[key]
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": eid},
            }
            await stream.event(encode_message(note))
