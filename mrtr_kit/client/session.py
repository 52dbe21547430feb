"""``McpClient``: the async HTTP edge around the sans-IO call of ``call.py``.

The same code runs over ``httpx.ASGITransport(app)`` (the server in this process: notebooks,
fast tests) and over real TCP (``McpClient("http://127.0.0.1:8765/mcp")``).

Two ways to run an MRTR call:

* automatic — ``await client.call_tool(name, args)``: every input request goes to the
  registered handler, the retry is sent, until the result is complete or the round limit
  (MRTR-C7) is hit;
* one round at a time — ``call = await client.begin_tool_call(name, args)``; look at
  ``call.step`` (what the call asks for next: ``AnswerThese``, ``RetryStateOnly``,
  ``GiveUp`` or ``Done``) or ``call.input_required``; later
  ``await client.continue_call(call, {"key": answer})``. The ``MrtrCall`` object is the
  handle: it holds that call's state and nothing else's.

Every protocol decision is the call's (``call.py``): this module sends what it is given,
resends what the call says to resend (VER-2) and acts on the step. Only HTTP's own rule lives
here: a ``-32020`` refreshes the ``tools/list`` header view once (HTTP-14).

Every HTTP exchange is appended to ``client.trace`` (``TraceRecord``) for display.

A legacy server (VER-4, no flag): when the first request gets a ``400`` that is not a modern
error (``eras.py`` decides), the client caches the origin as legacy (``client.eras``, an
``EraCache``) and ``call_tool``, ``get_prompt``, ``read_resource`` and ``request`` (so the
``list_*`` methods and ``discover``) go through a 2025-11-25 session (``era2025.py``), whose
pushed questions the same handlers answer. An origin that answered the modern way once is
never taken for legacy. The legacy exchanges are not in ``trace``.

Caching (MRTR-C9): by default the session caches no results at all, so it can never serve a
result obtained with ``inputResponses``/``requestState``; ``TraceRecord.cacheable`` shows what a
caching client would be allowed to keep. Pass ``cache=ResultCache()`` to reuse fresh results of
plain requests (lists, discover) by the rules of ``cache.ResultCache`` (CACHE-4, CACHE-5); MRTR
calls never go through it. The session also remembers, from the latest ``tools/list``, each
tool's ``x-mcp-header`` map, needed to send ``Mcp-Param-*`` headers (HTTP-12).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx

from ..protocol.aio import maybe_await
from ..protocol.constants import PROTOCOL_VERSION, SUPPORTED_VERSIONS
from ..protocol.errors import HEADER_MISMATCH
from ..protocol.headers import HeaderMap, header_annotations
from ..protocol.models import Implementation
from .answers import (
    AnswerHandlers,
    FormHandler,
    RootsHandler,
    SamplingHandler,
    UrlHandler,
    check_answer,
)
from .cache import ResultCache
from .call import DEFAULT_MAX_ROUNDS, Exchange, MrtrCall, PlainRequest
from .encoding import encode_request
from .era2025 import LegacySession
from .eras import EraCache, era_of_answer, is_modern_error
from .errors import (
    LegacyServer,
    McpClientError,
    McpRemoteError,
    ProtocolViolation,
    ToolRejected,
    TransportError,
)
from .factory import DEFAULT_CLIENT_INFO, RequestFactory
from .headers import RejectedTool, filter_tools, request_headers
from .sse import SseDecoder
from .steps import (
    DEFAULT_STATE_ONLY_BACKOFF_S,
    AnswerThese,
    Done,
    GiveUp,
    Resend,
    RetryStateOnly,
    Step,
)

# HTTP-3 (and KIT-HTTP-A): the body is JSON; the answer may be JSON or an SSE stream.
BASE_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
NotificationCallback = Callable[[dict[str, Any]], Awaitable[None] | None]
MAX_PAGES = 100  # a list that keeps handing out cursors is a broken server


@dataclass
class TraceRecord:
    """One HTTP exchange: what was sent, and what came back."""

    call: int  # which logical operation (all rounds of one MrtrCall share the number)
    round: int  # round within that call; 1 for plain requests
    method: str
    request: dict[str, Any]
    headers: dict[str, str]
    http_status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None
    response: dict[str, Any] | None = None
    notifications: list[dict[str, Any]] = field(default_factory=list)
    cacheable: bool = False  # whether a cache could keep this result (MRTR-C9); never used
    error: str | None = None  # a local failure while exchanging, if any


def _header_mismatch(exchange: Exchange, response: Mapping[str, Any]) -> bool:
    """A ``-32020`` on ``tools/call``: the Mcp-Param headers did not match (HTTP-14)."""
    error = response.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return exchange.method == "tools/call" and code == HEADER_MISMATCH


def _waiting_step(call: MrtrCall) -> Done | AnswerThese | RetryStateOnly | GiveUp:
    step = call.step
    if step is None or isinstance(step, Resend):
        raise RuntimeError(f"cannot continue a call that is {call.status.value}")
    return step


class McpClient:
    """An MCP 2026-07-28 client over Streamable HTTP, with MRTR.

    ``elicitation`` / ``url_elicitation`` / ``sampling`` / ``roots`` are answer handlers
    (see ``answers.py``); the client declares exactly the capabilities it has handlers for.
    ``headers`` are sent with every POST (an ``Authorization`` header, say).
    Pass ``transport=httpx.ASGITransport(app)`` to talk to an app in this process, or an
    ``http_client`` you manage yourself.
    """

    def __init__(
        self,
        url: str,
        *,
        elicitation: FormHandler | None = None,
        url_elicitation: UrlHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsHandler | None = None,
        on_notification: NotificationCallback | None = None,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 30.0,
        client_info: Implementation | Mapping[str, Any] | None = DEFAULT_CLIENT_INFO,
        protocol_version: str = PROTOCOL_VERSION,
        supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        state_only_backoff_s: float = DEFAULT_STATE_ONLY_BACKOFF_S,
        headers: Mapping[str, str] | None = None,
        cache: ResultCache | None = None,
        era_cache: EraCache | None = None,
    ) -> None:
        """A client for the MCP endpoint at ``url`` (POSTed to exactly as given).

        The answer handlers and ``headers`` as in the class docstring; ``on_notification``
        receives notifications that arrive on a response stream; ``http_client`` or ``transport``
        (not both: ``ValueError``) and ``timeout`` set up HTTP; ``client_info``,
        ``protocol_version`` and ``supported_versions`` go into every request; ``max_rounds`` and
        ``state_only_backoff_s`` bound each MRTR call (MRTR-C7); ``cache`` is an optional
        ``ResultCache``; ``era_cache`` is the ``EraCache`` of the eras learnt per origin (VER-4;
        a fresh one by default, or one several clients share)."""
        if http_client is not None and transport is not None:
            raise ValueError("pass http_client or transport, not both")
        self.url = url  # POSTed to exactly as given (docs/conformance.md §7.1)
        # Extra headers on every POST, e.g. Authorization: every request authenticates on its
        # own, there is no handshake to do it once (HTTP-29).
        self.extra_headers = dict(headers or {})
        self._handlers = AnswerHandlers(elicitation, url_elicitation, sampling, roots)
        self._factory = RequestFactory(
            protocol_version=protocol_version,
            capabilities=self._handlers.capabilities(),
            client_info=client_info,
            supported_versions=supported_versions,
        )
        self.max_rounds = max_rounds
        self.state_only_backoff_s = state_only_backoff_s
        self.on_notification = on_notification
        self.cache = cache
        self.trace: list[TraceRecord] = []
        self.tools: dict[str, dict[str, Any]] = {}  # the usable tools of the latest tools/list
        self.rejected_tools: dict[str, RejectedTool] = {}  # dropped by HTTP-13
        self._header_maps: dict[str, HeaderMap] = {}
        self._http = http_client or httpx.AsyncClient(transport=transport, timeout=timeout)
        self._owns_http = http_client is None
        self._numbers = itertools.count(1)
        self._call_numbers: weakref.WeakKeyDictionary[MrtrCall, int] = weakref.WeakKeyDictionary()
        self.eras = era_cache if era_cache is not None else EraCache()
        self._client_info = client_info
        self._legacy: LegacySession | None = None

    @classmethod
    def for_app(cls, app: Any, url: str = "http://localhost/mcp", **kw: Any) -> McpClient:
        """A client for an ASGI app in this process (no socket), e.g. ``create_app(server)``."""
        return cls(url, transport=httpx.ASGITransport(app), **kw)

    async def __aenter__(self) -> McpClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """End a 2025-11-25 session, if one was opened; close the HTTP client, if this client
        created it."""
        if self._legacy is not None:
            await self._legacy.aclose()
        if self._owns_http:
            await self._http.aclose()

    # -- configuration ----------------------------------------------------------------------

    @property
    def handlers(self) -> AnswerHandlers:
        """The answer handlers (``AnswerHandlers``) in use."""
        return self._handlers

    @handlers.setter
    def handlers(self, handlers: AnswerHandlers) -> None:
        """Swap the answer handlers; later requests declare the matching capabilities."""
        self._handlers = handlers
        self._factory.capabilities = handlers.capabilities()

    @property
    def capabilities(self) -> dict[str, Any]:
        """The ``clientCapabilities`` every request declares."""
        return copy.deepcopy(self._factory.capabilities)

    @property
    def protocol_version(self) -> str:
        """The protocol version requests carry now (it may change after negotiation, VER-2)."""
        return self._factory.protocol_version

    @property
    def supported_versions(self) -> tuple[str, ...]:
        """The versions this client speaks, in preference order (VER-2)."""
        return self._factory.supported_versions

    @supported_versions.setter
    def supported_versions(self, versions: tuple[str, ...]) -> None:
        self._factory.supported_versions = tuple(versions)

    @property
    def factory(self) -> RequestFactory:
        """The sans-IO request builder (ids, ``_meta``) behind this client: build an
        ``MrtrCall`` with it by hand and send it with ``begin``."""
        return self._factory

    def clear_trace(self) -> None:
        """Forget the recorded exchanges (``trace``)."""
        self.trace.clear()

    # -- plain requests -----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Send one non-MRTR request and return its (complete) result.

        ``meta`` adds optional ``_meta`` keys, as in every method below.
        """
        return await self._either(
            method, _legacy_params(params, meta), None, lambda: self._plain(method, params, meta)
        )

    async def _plain(
        self, method: str, params: Mapping[str, Any] | None, meta: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        exchange = PlainRequest(self._factory, method, params, meta)
        first = exchange.first_request()
        if self.cache is not None and (hit := self.cache.lookup(first)) is not None:
            return hit  # CACHE-4/5: the same method and params, still fresh
        step = await self._exchange(exchange, first, next(self._numbers))
        assert isinstance(step, Done) and exchange.outcome is not None
        if self.cache is not None:
            self.cache.store(exchange.request, exchange.outcome)
        return step.result

    async def discover(self) -> dict[str, Any]:
        """``server/discover`` (optional for clients, VER-3)."""
        return await self.request("server/discover")

    async def list_tools(self) -> list[dict[str, Any]]:
        """All pages of ``tools/list``, minus tools with invalid ``x-mcp-header`` (HTTP-13)."""
        kept, rejected = filter_tools(await self._list_all("tools/list", "tools"))
        self.tools = {tool["name"]: tool for tool in kept}
        self._header_maps = {t["name"]: header_annotations(t.get("inputSchema")) for t in kept}
        self.rejected_tools = {r.name: r for r in rejected}
        return kept

    async def list_prompts(self) -> list[dict[str, Any]]:
        """All pages of ``prompts/list``."""
        return await self._list_all("prompts/list", "prompts")

    async def list_resources(self) -> list[dict[str, Any]]:
        """All pages of ``resources/list``."""
        return await self._list_all("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """All pages of ``resources/templates/list``."""
        return await self._list_all("resources/templates/list", "resourceTemplates")

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            result = await self.request(method, {"cursor": cursor} if cursor is not None else {})
            page = result.get(key)
            if not isinstance(page, list):
                raise ProtocolViolation(f"{method}: result has no {key!r} list")
            items.extend(page)
            cursor = result.get("nextCursor")
            if cursor is None:
                return items
        raise ProtocolViolation(f"{method}: still paging after {MAX_PAGES} pages")

    # -- MRTR calls, automatic ----------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``tools/call`` to completion, answering input requests with the handlers.

        ``meta`` adds ``_meta`` keys to every round, e.g. ``{"progressToken": "p1"}`` to
        receive progress notifications (the server then answers with an SSE stream).
        """
        params = _legacy_params({"name": name, "arguments": dict(arguments or {})}, meta)
        return await self._either(
            "tools/call",
            params,
            name,
            lambda: self._complete(self.begin_tool_call(name, arguments, meta=meta)),
        )

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``prompts/get`` to completion, answering input requests with the handlers."""
        params = _legacy_params({"name": name, "arguments": dict(arguments or {})}, meta)
        return await self._either(
            "prompts/get",
            params,
            name,
            lambda: self._complete(self.begin_get_prompt(name, arguments, meta=meta)),
        )

    async def read_resource(
        self, uri: str, *, meta: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """``resources/read`` to completion, answering input requests with the handlers."""
        return await self._either(
            "resources/read",
            _legacy_params({"uri": uri}, meta),
            uri,
            lambda: self._complete(self.begin_read_resource(uri, meta=meta)),
        )

    async def _complete(self, begun: Awaitable[MrtrCall]) -> dict[str, Any]:
        return await self.complete_call(await begun)

    async def _either(
        self,
        method: str,
        legacy_params: dict[str, Any],
        target: str | None,
        modern: Callable[[], Awaitable[dict[str, Any]]],
    ) -> dict[str, Any]:
        """The modern way, unless the origin is legacy or its answer says so (VER-4); then the
        same request on the 2025-11-25 session."""
        fell: LegacyServer | None = None
        if self.eras.get(self.url) != "legacy":
            try:
                return await modern()
            except LegacyServer as exc:
                fell = exc  # round 1 told us: fall back with the same request
        session = self.legacy_session()
        try:
            return await session.request(method, legacy_params, target=target)
        except McpRemoteError as exc:
            refused = {"error": {"code": exc.code}}
            if fell is None or session.version is not None:
                raise
            if not is_modern_error(refused, exc.http_status or 0):
                raise
            # Our initialize was refused the modern way (-32022, VER-5): a modern server after
            # all, which the first request's error was about. Never a downgrade (VER-4).
            self.eras.settle(self.url, "modern")
            self._legacy = None
            raise fell.original from None

    def legacy_session(self) -> LegacySession:
        """The 2025-11-25 session this client uses with a legacy server (opened on first use),
        with the client's current handlers and headers."""
        if self._legacy is None:
            self._legacy = LegacySession(
                self.url,
                self._http,
                handlers=self._handlers,
                capabilities=self._factory.capabilities,
                client_info=self._client_info,
                headers=self.extra_headers,
                on_notification=self.on_notification,
            )
        self._legacy.handlers = self._handlers
        return self._legacy

    async def complete_call(self, call: MrtrCall) -> dict[str, Any]:
        """Drive ``call`` to its final result: answer each round with the handlers and retry.

        The call says what to do next (``call.step``); state-only rounds are retried after its
        pause, the round limit raises ``TooManyRounds``.
        """
        while True:
            step = await self.retry_state_only(call)
            if isinstance(step, Done):
                return step.result
            if isinstance(step, GiveUp):
                raise step.error
            # MRTR-C1: every requested input, one at a time (a person sees one question after
            # another); the handlers check each answer, so the retry does not check again.
            answers = {
                q.key: await self._handlers.answer(q.request, q.context) for q in step.questions
            }
            await self.continue_call(call, answers, validate=False)

    async def retry_state_only(self, call: MrtrCall) -> Done | AnswerThese | GiveUp:
        """Send the state-only retries ``call`` asks for, each after the call's pause
        (MRTR-C1, MRTR-C7); return the first other step."""
        step = _waiting_step(call)
        while isinstance(step, RetryStateOnly):
            await asyncio.sleep(step.delay_s)
            await self.continue_call(call)
            step = _waiting_step(call)
        return step

    # -- MRTR calls, one round at a time ---------------------------------------------------------

    async def begin(self, call: MrtrCall) -> MrtrCall:
        """Send round 1 of a call built with ``client.factory`` (``begin_*`` do this for you)."""
        self._call_numbers[call] = next(self._numbers)
        await self._send_round(call, call.first_request())
        return call

    async def begin_tool_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> MrtrCall:
        """Send round 1 of ``tools/call``; the returned call shows ``.result`` or
        ``.input_required``."""
        if name in self.rejected_tools:  # HTTP-13: never call a tool we dropped
            raise ToolRejected(name, self.rejected_tools[name].reason)
        call = MrtrCall.tool(self._factory, name, arguments, **self._call_options(meta))
        return await self.begin(call)

    async def begin_get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> MrtrCall:
        """Send round 1 of ``prompts/get``; the returned call shows ``.result`` or
        ``.input_required``."""
        call = MrtrCall.prompt(self._factory, name, arguments, **self._call_options(meta))
        return await self.begin(call)

    async def begin_read_resource(
        self, uri: str, *, meta: Mapping[str, Any] | None = None
    ) -> MrtrCall:
        """Send round 1 of ``resources/read``; the returned call shows ``.result`` or
        ``.input_required``."""
        return await self.begin(MrtrCall.resource(self._factory, uri, **self._call_options(meta)))

    async def continue_call(
        self,
        call: MrtrCall,
        answers: Mapping[str, Any] | None = None,
        *,
        validate: bool = True,
    ) -> MrtrCall:
        """Send the next round of ``call`` with ``answers`` for the latest input requests.

        With ``validate`` each answer is checked against its request first (shape, and form
        content against ``requestedSchema``, ELIC-14); pass ``False`` to send an answer the
        server should reject, e.g. to watch it ask again.
        """
        if call.input_required is None:
            raise RuntimeError(f"the call is {call.status.value}; there is nothing to answer")
        request = call.retry_request(answers, check=check_answer if validate else None)
        await self._send_round(call, request)
        return call

    def _call_options(self, meta: Mapping[str, Any] | None) -> dict[str, Any]:
        return {
            "max_rounds": self.max_rounds,
            "meta": meta,
            "state_only_backoff_s": self.state_only_backoff_s,
        }

    async def _send_round(self, call: MrtrCall, request: dict[str, Any]) -> Step:
        number = self._call_numbers.get(call)
        if number is None:  # round 1 was sent by other means; number the call from here on
            number = self._call_numbers[call] = next(self._numbers)
        return await self._exchange(call, request, number)

    async def _exchange(self, exchange: Exchange, request: dict[str, Any], number: int) -> Step:
        """POST ``request`` and hand the response to ``exchange``; send what it asks to resend
        (VER-2); return its next step. The one decision made here is HTTP's own (HTTP-14)."""
        header_map = self._header_map(exchange)
        refreshed = False
        while True:
            try:
                response, status, record = await self._post(
                    request, header_map, number, exchange.rounds
                )
            except TransportError as exc:  # a 400 with no JSON-RPC body: legacy too (VER-4)
                if exc.http_status == 400 and self._learn(None, 400) == "legacy":
                    raise LegacyServer(f"{self.url} speaks 2025-11-25 only: {exc}", exc) from exc
                raise
            if self._learn(response, status) == "legacy":
                error = response.get("error")
                original: McpClientError = (
                    McpRemoteError.from_error_object(error, http_status=status)
                    if isinstance(error, dict) and isinstance(error.get("code"), int)
                    else ProtocolViolation(f"HTTP {status}: {response!r}")
                )
                raise LegacyServer(f"{self.url} speaks 2025-11-25 only (HTTP {status})", original)
            if not refreshed and _header_mismatch(exchange, response):
                # HTTP-14: our view of the tool's x-mcp-header annotations may be stale.
                # Refresh tools/list once; if the annotations changed, send the round again.
                refreshed = True
                await self.list_tools()
                fresh = self._header_map(exchange)
                if fresh != header_map:
                    header_map, request = fresh, exchange.resend_request()
                    continue
            try:
                step = exchange.receive(response, http_status=status)
            except ProtocolViolation as exc:
                record.error = str(exc)
                raise
            if isinstance(step, Done):
                record.cacheable = step.cacheable  # MRTR-C9: shown, never used
            if not isinstance(step, Resend):
                return step
            request = step.request

    def _learn(self, response: dict[str, Any] | None, status: int) -> str | None:
        """What this answer says about the server's era, cached per origin (VER-4)."""
        return self.eras.learn(self.url, era_of_answer(response, status))

    def _header_map(self, exchange: Exchange) -> HeaderMap:
        if not isinstance(exchange, MrtrCall) or exchange.method != "tools/call":
            return {}
        name = str(exchange.target)
        if name in self.rejected_tools:
            raise ToolRejected(name, self.rejected_tools[name].reason)
        # A tool never listed gets no Mcp-Param headers; a -32020 then triggers the refresh.
        return self._header_maps.get(name, {})

    # -- HTTP ---------------------------------------------------------------------------------

    async def _post(
        self,
        request: dict[str, Any],
        header_map: HeaderMap | None,
        number: int,
        round_no: int,
    ) -> tuple[dict[str, Any], int, TraceRecord]:
        headers = {**BASE_HEADERS, **self.extra_headers, **request_headers(request, header_map)}
        body = encode_request(request)  # CORE-1; a NotJson request is never sent
        record = TraceRecord(
            call=number,
            round=round_no,
            method=request["method"],
            request=copy.deepcopy(request),
            headers=headers,
        )
        self.trace.append(record)
        try:
            async with self._http.stream("POST", self.url, content=body, headers=headers) as resp:
                record.http_status = resp.status_code
                record.content_type = resp.headers.get("content-type", "")
                record.response_headers = dict(resp.headers)
                if record.content_type.startswith("text/event-stream"):
                    message = await self._read_sse(resp, request["id"], record)
                else:
                    message = _json_response(await resp.aread(), resp.status_code)
        except httpx.HTTPError as exc:
            record.error = f"{type(exc).__name__}: {exc}"
            raise TransportError(f"HTTP request failed: {record.error}") from exc
        except (TransportError, ProtocolViolation) as exc:
            record.error = str(exc)
            raise
        record.response = message
        return message, resp.status_code, record

    async def _read_sse(
        self, resp: httpx.Response, request_id: Any, record: TraceRecord
    ) -> dict[str, Any]:
        """Read this request's SSE stream: notifications until its response (HTTP-21)."""
        decoder = SseDecoder()
        async for line in resp.aiter_lines():
            data = decoder.feed(line)
            if data is not None and (found := await self._sse_event(data, record)) is not None:
                return found  # leaving the stream closes it; the response was the last event
        tail = decoder.close()
        if tail is not None and (found := await self._sse_event(tail, record)) is not None:
            return found
        raise TransportError(
            f"the SSE stream for request {request_id!r} ended without a response",
            http_status=resp.status_code,
        )

    async def _sse_event(self, data: str, record: TraceRecord) -> dict[str, Any] | None:
        """One SSE event: a notification is recorded and handed on (``None``); the response
        is returned."""
        message = _json_message(data, record.http_status or 0)
        if "method" not in message:
            return message
        if "id" in message:  # CORE-6: servers never send requests in 2026-07-28
            raise ProtocolViolation(
                f"server sent a {message['method']!r} request on a response stream; "
                "2026-07-28 servers return input_required instead (CORE-6)"
            )
        record.notifications.append(message)
        if self.on_notification is not None:
            await maybe_await(self.on_notification(message))
        return None


def _legacy_params(
    params: Mapping[str, Any] | None, meta: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A request's params the 2025-11-25 way: ``meta`` (a progressToken, say) as ``_meta``."""
    out = dict(params or {})
    if meta:
        out["_meta"] = dict(meta)
    return out


def _json_message(text: str | bytes, status: int) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError):
        snippet = text[:80] if isinstance(text, str) else text[:80].decode("utf-8", "replace")
        raise TransportError(
            f"HTTP {status}: the body is not JSON: {snippet!r}", http_status=status
        ) from None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise TransportError(
            f"HTTP {status}: not a JSON-RPC message: {message!r}", http_status=status
        )
    return message


def _json_response(body: bytes, status: int) -> dict[str, Any]:
    """A plain JSON answer: one JSON-RPC response, success or error, whatever the status."""
    if not body.strip():
        raise TransportError(
            f"HTTP {status} with an empty body; expected a JSON-RPC response", http_status=status
        )
    message = _json_message(body, status)
    if "result" not in message and "error" not in message:
        raise ProtocolViolation(f"HTTP {status}: a JSON-RPC message but not a response")
    return message
