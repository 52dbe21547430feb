"""The sans-IO MRTR server core: a registry of tools, prompts and resources, and one function,
``McpServer.handle``, that turns a decoded JSON-RPC message (plus who is asking and, over HTTP,
the request headers) into the response.

The pipeline: every request takes these steps, in this order, in ``handle`` and nowhere else.
An adapter does only what precedes them (the HTTP one: Host/Origin, POST, auth, body limits,
JSON decoding; see ``http.py``). The first failing step answers; each error carries its
``Reason``, which the HTTP adapter maps to a status (``http.HTTP_STATUS``).

1. JSON-RPC shape; params an object of JSON values     -32600 / -32602   CORE-1..6, MRTR-E2
   (``parse_message``)
2. a notification: accepted, nothing to answer         (HTTP 202)        CORE-5, HTTP-5
3. a 2025-11-25 ``initialize`` (its version in params)  -32022            VER-1, VER-5
   (``_legacy_initialize_version``)
4. over HTTP only: the standard headers are present    -32020            HTTP-15
   (``protocol.headers.check_present``)
5. params._meta with protocolVersion and capabilities  -32602            CORE-10, CORE-11
   (``check_request_meta``)
6. over HTTP only: header values equal body values     -32020            HTTP-7/10/14
   (``protocol.headers.check_matches_body``)
7. protocol version supported                          -32022            VER-1, HTTP-16
8. method known and its capability served              -32601            CORE-11, HTTP-17, VER-5
   (``_dispatch``)
9. the method itself; handler failures                 -32602 / -32603   KIT-HTTP-B
   a ledger down or too slow (``LedgerUnavailable``)   -31000            KIT-ERR-A
   (this round's ledger writes undone first, ``_RoundWrites``)

``headers=None`` means "not over HTTP": steps 4 and 6 are skipped, so ``handle(dict)`` works
in a notebook or a test, and over stdio, which has no header layer (STDIO-1, ``stdio.py``).

The operator's view: with an ``observer`` set, ``handle`` reports each answered request once,
after its reply, as a ``rounds.ServerRound`` (what was answered, the requestState verified or
refused and why, the outcome); the client still sees only the reply. With none, nothing is built.

Every MRTR rule lives here, once:

* input_required only for tools/call, prompts/get, resources/read (MRTR-R1/R2): only ``_call``
  runs handlers, and only those three methods reach it
* one way for a handler to ask: ``ctx.input_required(...)``; every such outcome goes through
  ``_finish`` (a handler's own input_required result is refused, see ``_as_result``)
* each input request is one of the three kinds (MRTR-S2b), a form inside the form subset
  (ELIC-5) - ``_finish``
* never ask for a capability this request did not declare, and name everything missing at
  once (MRTR-S7, CAP-2, ERR-1) - ``_gate``
* at least one of inputRequests / requestState (MRTR-S6) - ``_finish``
* params are JSON: no NaN, Infinity, lone surrogates or Python-only values (MRTR-E2) -
  ``parse_message``
* malformed inputResponses -> -32602 (MRTR-E1/E2) - ``_mrtr_inputs``; unrequested ones
  ignored (MRTR-E3): every input_required seals the keys it asked, even for a handler that
  keeps no state (``_finish``), so only answers to those keys reach a handler, and none on a
  first round (``_mrtr_inputs``); missing ones are the handler's "ask again" (MRTR-E4)
* requestState verified before any handler sees it, one fixed error for every failure
  (MRTR-S4/S5, SEC-2; the single error is a kit convention, KIT) - ``_mrtr_inputs``
* one flow id per call, minted on its first round and sealed into every state of the call,
  forks included (``ctx.flow_id``; KIT, for MIG-3) - ``_call``
* -31000 leaves the same retry good: a round's ledger writes all stay, or are undone when a
  later one fails (KIT-ERR-A) - ``_RoundWrites``
* resultType, serverInfo, ttlMs/cacheScope on results (RT-1, CORE-16, CACHE-1..3, CACHE-5,
  CACHE-6) - ``_stamp``
* x-mcp-header annotations the server can check (HTTP-13, HTTP-14) - ``tool``

Construction is explicit: the requestState keys (or a codec holding them), the ledger, the
clock and the token-id source are arguments. Nothing here reads the environment or makes up
a key: ``python -m mrtr_kit serve`` reads ``MRTR_KIT_STATE_KEYS`` (``KeyRing.from_env``), a
notebook says ``state_keys=KeyRing.generate()``.

No sockets, no event loop of its own: adapters (``http.py``, ``stdio.py``) call ``handle``.
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel, TypeAdapter, ValidationError

from .. import __version__
from ..protocol import errors
from ..protocol import headers as hdr
from ..protocol.aio import maybe_await
from ..protocol.constants import (
    CACHEABLE_METHODS,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MRTR_METHODS,
    PROTOCOL_VERSION,
    REMOVED_METHODS,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
    SUPPORTED_VERSIONS,
)
from ..protocol.elicitation import SchemaOutsideSubset, check_requested_schema
from ..protocol.errors import McpError, Reason
from ..protocol.jsonvalues import has_lone_surrogate, json_problem
from ..protocol.models import (
    BlobResourceContents,
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    CreateMessageRequest,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    GetPromptRequestParams,
    GetPromptResult,
    Implementation,
    InputRequest,
    JSONRPCNotification,
    JSONRPCRequest,
    ListRootsRequest,
    PaginatedRequestParams,
    Prompt,
    PromptArgument,
    PromptMessage,
    PromptReference,
    ReadResourceRequestParams,
    ReadResourceResult,
    RequestMeta,
    Resource,
    ResourceTemplate,
    TextContent,
    TextResourceContents,
    Tool,
    WireModel,
    to_wire,
)
from ..protocol.wire_json import Unencodable, encode_message
from .arguments import ArgumentsSchema
from .codecs import DEFAULT_CODEC, StateCodec, make_codec
from .context import Emit, InputRequestModel, InputRequired, RequestContext
from .keyring import KeyRing
from .ledger import RETRY_AFTER_S, Ledger, LedgerUnavailable, MemoryLedger
from .rounds import Observer, RoundNotes, build_round
from .state import (
    CLOCK_SKEW_S,
    DEFAULT_TTL_S,
    InvalidState,
    StateBinding,
    StateChecks,
    StateIssuer,
    StateRefused,
    invalid_state_error,
    new_token_id,
    request_digest,
)

log = logging.getLogger("mrtr_kit.server")
state_log = logging.getLogger("mrtr_kit.state")

Handler = Callable[[RequestContext], Any]
CACHE_SCOPES = ("public", "private")
COMPLETION_MAX_VALUES = 100  # CompleteResult.completion.values: maxItems 100
_INPUT_REQUEST: TypeAdapter[InputRequestModel] = TypeAdapter(InputRequest)


class HandlerBug(RuntimeError):
    """A handler returned something the protocol does not allow. The request gets -32603
    (the bug is the server's, not the client's) and the log gets this message."""


class RedeemWithoutState(HandlerBug):
    """``ctx.redeem_once()`` on a round that carries no requestState: the first round of a
    request, before the server has asked anything. No client input leads here (answers sent
    on a first round never reach the handler, MRTR-E3), so it is the handler's own bug: it
    spends before it asked. Logged with the fix; the client gets -32603."""


class _RoundWrites:
    """The ledger writes one round makes through its context, and how to undo each.

    KIT-ERR-A promises that after -31000 the client's same retry is still good. A failed write
    writes nothing (``Ledger``), but the round's earlier writes did happen: a spent state would
    refuse the retry, a counted attempt would count twice. So when ``LedgerUnavailable``
    leaves the handler, ``undo`` takes them back, newest first. The handler's side effect
    comes after its last ledger call (``ctx.once``), so a round that fails in the ledger has
    done none. An undo that fails too is logged: then that retry is refused, as before.
    """

    def __init__(self, ledger: Ledger, flow: str) -> None:
        self.ledger = ledger
        self.flow = flow
        self._undo: list[tuple[str, Callable[[], Awaitable[object]]]] = []

    async def spend(self, token_id: str, until: float) -> bool:
        spent = await self.ledger.spend(token_id, until)
        if spent:
            self._undo.append(("the spend", lambda: self.ledger.unspend(token_id)))
        return spent

    async def attempt(self, step: str) -> int:
        count = await self.ledger.flow_count(self.flow, step)
        self._undo.append(
            (f"attempt {step!r}", lambda: self.ledger.flow_count(self.flow, step, -1))
        )
        return count

    async def once(self, key: str) -> bool:
        owner = new_token_id()  # so an undo never removes another fork's mark
        first = await self.ledger.flow_once(self.flow, key, owner)
        if first:
            self._undo.append(
                (f"mark {key!r}", lambda: self.ledger.flow_release(self.flow, key, owner))
            )
        return first

    async def undo(self, where: str) -> None:
        while self._undo:
            what, undo = self._undo.pop()
            try:
                await undo()
            except LedgerUnavailable as exc:
                log.error(
                    "%s: could not undo %s, so its retry will be refused: %s", where, what, exc
                )


@dataclass
class Reply:
    """The core's answer: the JSON-RPC response, or None for a notification (accepted, nothing
    to answer); for an error response, why the request failed (§2.6), from which the HTTP
    adapter takes its status."""

    body: dict[str, Any] | None
    reason: Reason | None = None


@dataclass
class _Entry:
    handler: Handler
    descriptor: WireModel
    ttl_ms: int = 0
    cache_scope: str = "private"
    header_params: dict[str, tuple[str, str]] = field(default_factory=dict)
    completions: dict[str, list[str]] = field(default_factory=dict)
    pattern: re.Pattern[str] | None = None
    arguments: ArgumentsSchema | None = None  # a tool's compiled inputSchema
    stateless_answers: frozenset[str] = frozenset()  # read without a requestState (see tool)
    mime_type: str | None = None  # a resource's, for the plain text or bytes it returns


def _template_regex(template: str) -> re.Pattern[str]:
    """RFC 6570 level 1: each ``{var}`` matches one non-empty path segment."""
    out, pos = [], 0
    for m in re.finditer(r"\{([A-Za-z0-9_]+)\}", template):
        out.append(re.escape(template[pos : m.start()]))
        out.append(f"(?P<{m.group(1)}>[^/?#]+)")
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("^" + "".join(out) + "$")


def _check_cache_hints(ttl_ms: Any, cache_scope: Any) -> None:
    """CACHE-1 / CACHE-5: ttlMs a whole number >= 0, cacheScope public or private."""
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
        raise ValueError(f"ttl must be a whole number of milliseconds >= 0, not {ttl_ms!r}")
    if cache_scope not in CACHE_SCOPES:
        raise ValueError(f"cache_scope must be 'public' or 'private', not {cache_scope!r}")


def _pydantic_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "params"
    return f"{loc}: {first['msg']}"


class McpServer:
    """A 2026-07-28 MCP server with no I/O: register features, then call ``handle``."""

    def __init__(
        self,
        name: str = "mrtr-kit-server",
        version: str = __version__,
        *,
        instructions: str | None = None,
        state_keys: KeyRing | None = None,
        state_key: bytes | None = None,
        state_codec: StateCodec | str = DEFAULT_CODEC,
        state_checks: StateChecks | None = None,
        state_ttl_s: int | None = None,
        clock_skew_s: int | None = None,
        ledger: Ledger | None = None,
        now: Callable[[], float] | None = None,
        token_ids: Callable[[], str] = new_token_id,
        supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS,
        list_ttl_ms: int = 60_000,
        observer: Observer | None = None,
    ) -> None:
        """Where requestState protection comes from, explicitly:

        * ``state_codec``: ``"aead"`` (default: AES-256-GCM, the client can neither edit nor
          read a state, SEC-8) or ``"hmac"`` (tamper-proof, but every claim and the handler's
          data are readable by the client) over ``state_keys`` (a ``KeyRing``:
          ``KeyRing.generate()`` for one process, ``KeyRing.from_env()`` for a fleet) or
          ``state_key`` (one secret of 32+ bytes); ``"plain"`` (unsafe, lessons only, no
          keys); or a codec object, which holds its own keys;
        * ``state_ttl_s``: a requestState's lifetime; ``None`` keeps ``state.DEFAULT_TTL_S``,
          15 minutes (SEC-4, KIT). A user who answers a form later gets -32602;
        * ``clock_skew_s``: how far apart the clocks of the instances that share the keys may
          be; ``None`` keeps ``state.CLOCK_SKEW_S``, 30 s (KIT). A state is accepted until
          ``state_ttl_s + clock_skew_s`` after it was issued and refused after, to the second;
          0 for one instance, or a fleet whose clocks agree;
        * ``ledger``: where single-use states are spent (MRTR-S5d); an in-memory one by default;
          a ledger that is down or too slow answers -31000 "try again later" (KIT-ERR-A);
        * ``now``: the clock (epoch seconds; ``time.time`` by default); ``token_ids``: each
          state's ``jti`` (16 random base64url characters by default, ``state.new_token_id``);
        * ``observer``: called with a ``rounds.ServerRound`` once per request answered (the
          operator's view of each round; ``None``, the default, builds nothing). An attribute:
          it may be set or cleared later.
        """
        _check_cache_hints(list_ttl_ms, "public")  # CACHE-5: never a negative ttlMs
        skew_s = CLOCK_SKEW_S if clock_skew_s is None else clock_skew_s
        if isinstance(skew_s, bool) or not isinstance(skew_s, int) or skew_s < 0:
            raise ValueError(f"clock_skew_s must be a whole number of seconds >= 0, not {skew_s!r}")
        self.info = Implementation(name=name, version=version)
        self._info_wire = self.info.to_wire()  # serverInfo on every result (CORE-16)
        self.instructions = instructions
        self.supported_versions = supported_versions
        self.list_ttl_ms = list_ttl_ms
        clock = now or time.time
        self.states = StateIssuer(
            _codec(state_codec, state_keys, state_key),
            audience=name,  # a state from another server is rejected even under a shared key
            skew_s=skew_s,
            checks=state_checks,
            now=clock,
            token_ids=token_ids,
            ttl_s=DEFAULT_TTL_S if state_ttl_s is None else state_ttl_s,
        )
        self.ledger: Ledger = ledger or MemoryLedger(now=clock)
        self.observer = observer
        self._tools: dict[str, _Entry] = {}
        self._prompts: dict[str, _Entry] = {}
        self._resources: dict[str, _Entry] = {}
        self._templates: dict[str, _Entry] = {}

    # -- registration -----------------------------------------------------------------------

    def tool(
        self,
        name: str | None = None,
        *,
        description: str,
        input_schema: dict[str, Any] | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        stateless_answers: tuple[str, ...] = (),
    ) -> Callable[[Handler], Handler]:
        """Decorator: register the handler as the tool ``name`` (default: the function's name).

        ``description`` is required; ``input_schema`` is the arguments' JSON schema (default: an
        object with no properties), compiled once here and checked on every call; ``title`` and
        ``annotations`` go into ``tools/list``. A bad schema or ``x-mcp-header`` annotation
        raises here. The handler takes a ``RequestContext`` (sync or async) and returns text,
        content blocks, a result model or dict, or ``ctx.input_required(...)`` / ``answer.ask()``
        to ask. Returns the function unchanged::

            @server.tool(description="Greets you.")
            def greet(ctx):
                return f"Hello, {ctx.arguments.get('name', 'you')}!"

        ``stateless_answers`` (default none) names answer keys this tool reads even on a
        request that carries no requestState. By default such answers never reach a handler:
        the server asked nothing yet, so they are unrequested (MRTR-E3). Name a key only
        where acting on an answer nobody asked for is harmless (the official conformance
        suite's elicitation fixture sends ``user_name`` so); never a confirmation, and never
        for a step guarded by ``redeem_once()``, which has no state to spend on such a round.
        """

        def register(fn: Handler) -> Handler:
            schema = input_schema or {"type": "object", "properties": {}}
            arguments_schema = ArgumentsSchema(schema)  # compiled once; InvalidSchema if bad
            tool = Tool.model_validate(
                {
                    "name": name or fn.__name__,
                    "title": title,
                    "description": description,
                    "inputSchema": schema,
                    "annotations": annotations,
                }
            )
            # HTTP-13 / HTTP-14: refuse what clients would drop or the server could not check.
            params = hdr.checked_param_headers(schema)
            self._tools[tool.name] = _Entry(
                fn,
                tool,
                header_params=params,
                arguments=arguments_schema,
                stateless_answers=frozenset(stateless_answers),
            )
            return fn

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        description: str,
        arguments: list[dict[str, Any]] | None = None,
        title: str | None = None,
        completions: dict[str, list[str]] | None = None,
    ) -> Callable[[Handler], Handler]:
        """Decorator: register the handler as the prompt ``name`` (default: the function's name).

        ``arguments`` are ``PromptArgument`` dicts (``{"name": ..., "required": True}``);
        ``completions`` maps an argument name to the values ``completion/complete`` offers (and
        declares the ``completions`` capability). The handler returns a string (one user
        message), a list of ``PromptMessage``, a result, or asks like a tool. Returns the
        function unchanged::

            @server.prompt(description="A haiku about a topic.", arguments=[{"name": "topic"}])
            def haiku(ctx):
                return f"Write a haiku about {ctx.arguments['topic']}."
        """

        def register(fn: Handler) -> Handler:
            prompt = Prompt(
                name=name or fn.__name__,
                title=title,
                description=description,
                arguments=[PromptArgument.model_validate(a) for a in arguments or []] or None,
            )
            self._prompts[prompt.name] = _Entry(fn, prompt, completions=completions or {})
            return fn

        return register

    def resource(
        self,
        uri: str,
        *,
        name: str,
        description: str | None = None,
        mime_type: str = "text/plain",
        ttl_ms: int = 60_000,
        cache_scope: str = "public",
    ) -> Callable[[Handler], Handler]:
        """Decorator: register the handler as the resource at ``uri``.

        ``name`` is required; ``mime_type`` labels plain text or bytes the handler returns;
        ``ttl_ms`` and ``cache_scope`` are the result's ``ttlMs``/``cacheScope`` (CACHE-1,
        checked here: ttl >= 0, scope public or private). The handler returns str, bytes, a list
        of resource contents, or asks like a tool. Returns the function unchanged::

            @server.resource("config://app", name="app config")
            def config(ctx):
                return "debug = false"
        """
        _check_cache_hints(ttl_ms, cache_scope)

        def register(fn: Handler) -> Handler:
            res = Resource(uri=uri, name=name, description=description, mime_type=mime_type)
            self._resources[uri] = _Entry(
                fn, res, ttl_ms=ttl_ms, cache_scope=cache_scope, mime_type=mime_type
            )
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str,
        description: str | None = None,
        mime_type: str = "text/plain",
        ttl_ms: int = 0,
        cache_scope: str = "private",
    ) -> Callable[[Handler], Handler]:
        """Decorator: register the handler for every URI matching ``uri_template``.

        Each ``{var}`` matches one non-empty path segment and is given to the handler in
        ``ctx.uri_params``. The cache hints default to ``ttl_ms=0`` and ``private``; otherwise as
        ``resource``::

            @server.resource_template("users://{id}/profile", name="profile")
            def profile(ctx):
                return f"user {ctx.uri_params['id']}"
        """
        _check_cache_hints(ttl_ms, cache_scope)

        def register(fn: Handler) -> Handler:
            tpl = ResourceTemplate(
                uri_template=uri_template, name=name, description=description, mime_type=mime_type
            )
            self._templates[uri_template] = _Entry(
                fn,
                tpl,
                ttl_ms=ttl_ms,
                cache_scope=cache_scope,
                pattern=_template_regex(uri_template),
                mime_type=mime_type,
            )
            return fn

        return register

    def tool_header_params(self, name: str) -> dict[str, tuple[str, str]]:
        """``Mcp-Param-*`` headers a tools/call for ``name`` must carry (HTTP-14)."""
        entry = self._tools.get(name)
        return dict(entry.header_params) if entry else {}

    @property
    def capabilities(self) -> dict[str, Any]:
        # DISC-5: declare exactly what is served; no listChanged, since there is no
        # subscriptions/listen stream to announce changes on.
        """The server capabilities: exactly the features registered (DISC-5), no ``listChanged``."""
        caps: dict[str, Any] = {}
        if self._tools:
            caps["tools"] = {}
        if self._prompts:
            caps["prompts"] = {}
        if self._resources or self._templates:
            caps["resources"] = {}
        if any(e.completions for e in self._prompts.values()):
            caps["completions"] = {}
        return caps

    # -- the pipeline -----------------------------------------------------------------------

    async def handle(
        self,
        message: Any,
        *,
        principal: str | None = None,
        headers: Mapping[str, str] | None = None,
        emit: Emit | None = None,
        decoded: bool = False,
    ) -> Reply:
        """One decoded JSON message in, one reply out: the pipeline of the module docstring,
        steps 1-9. Never raises for bad input.

        ``principal`` is who the credential says is asking (SEC-9; requestState is bound to
        it, MRTR-S5a). ``headers`` are the HTTP request's, or None when the message did not
        come over HTTP. ``emit`` sends a notification (progress, log) before the answer.
        ``decoded=True`` says ``message`` is what ``wire_json.decode_body`` returned (the
        HTTP and stdio adapters): the decoder refused every value that is not JSON, so step
        1 does not walk the params for such values again. A dict built in Python (a
        notebook, a test, the 2025-11-25 adapter) keeps the default and is walked.
        """
        request_id = message.get("id") if isinstance(message, dict) else None
        # The operator's view of this round (rounds.py), only when someone watches.
        notes = RoundNotes() if self.observer is not None else None
        refused: str | None = None
        try:
            request = parse_message(message, decoded=decoded)  # 1
            if isinstance(request, JSONRPCNotification):
                return Reply(None)  # 2: CORE-5, HTTP-5
            legacy_version = _legacy_initialize_version(request)  # 3
            if legacy_version is not None:
                raise errors.unsupported_version(list(self.supported_versions), legacy_version)
            received = None if headers is None else hdr.received(headers)
            if received is not None:
                hdr.check_present(received, request.method)  # 4
            meta = check_request_meta(request)  # 5
            if received is not None:
                hdr.check_matches_body(  # 6
                    received,
                    request.method,
                    request.params,
                    meta.protocol_version,
                    self.tool_header_params,
                )
            if meta.protocol_version not in self.supported_versions:  # 7
                raise errors.unsupported_version(
                    list(self.supported_versions), meta.protocol_version
                )
            result = await self._dispatch(request, meta, principal, emit, notes)  # 8, 9
            reply = Reply({"jsonrpc": "2.0", "id": request.id, "result": result})
        except StateRefused as exc:  # the one wire error; the reason is the operator's
            refused = exc.operator_reason
            reply = error_reply(request_id, exc)
        except McpError as exc:
            reply = error_reply(request_id, exc)
        except LedgerUnavailable as exc:  # nothing was written: the client may retry (KIT-ERR-A)
            log.warning("request %r: the ledger is unavailable: %s", request_id, exc)
            reply = error_reply(
                request_id, errors.try_again_later("ledger_unavailable", RETRY_AFTER_S)
            )
        except Exception:
            log.exception("request %r failed", request_id)
            reply = error_reply(request_id, errors.internal_error())
        if notes is not None:  # a body, always: a notification returned at step 2
            self._observe(message, cast(dict[str, Any], reply.body), notes, refused)
        return reply

    def _observe(
        self, message: Any, body: dict[str, Any], notes: RoundNotes, refused: str | None
    ) -> None:
        observer = self.observer
        if observer is None:  # cleared while this request ran
            return
        try:
            observer(build_round(message, body, notes, refused, self.states.now()))
        except Exception:  # an observer never changes a reply
            log.exception("the round observer failed")

    async def _dispatch(
        self,
        req: JSONRPCRequest,
        meta: RequestMeta,
        principal: str | None,
        emit: Emit | None,
        notes: RoundNotes | None = None,
    ) -> dict[str, Any]:
        m = req.method
        caps = self.capabilities
        if m == "server/discover":
            return self._stamp(m, self._discover())
        if m == "tools/list" and "tools" in caps:
            return self._list(m, req, meta, "tools", self._tools)
        if m == "prompts/list" and "prompts" in caps:
            return self._list(m, req, meta, "prompts", self._prompts)
        if m == "resources/list" and "resources" in caps:
            return self._list(m, req, meta, "resources", self._resources)
        if m == "resources/templates/list" and "resources" in caps:
            return self._list(m, req, meta, "resourceTemplates", self._templates)
        if m == "completion/complete" and "completions" in caps:
            return self._stamp(m, self._complete(req, meta))
        if m in MRTR_METHODS and m.split("/")[0] in caps:
            return await self._call(req, meta, principal, emit, notes)
        if m in REMOVED_METHODS:
            # VER-5: a legacy client learns which versions this modern-only server speaks.
            raise errors.method_not_found(
                m, {"removedIn": PROTOCOL_VERSION, "supported": list(self.supported_versions)}
            )
        raise errors.method_not_found(m)

    # -- simple methods ---------------------------------------------------------------------

    def _discover(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "supportedVersions": list(self.supported_versions),
            "capabilities": self.capabilities,
            "ttlMs": self.list_ttl_ms,
            "cacheScope": "public",
        }
        if self.instructions:
            out["instructions"] = self.instructions
        return out

    def _list(
        self,
        method: str,
        req: JSONRPCRequest,
        meta: RequestMeta,
        key: str,
        table: dict[str, _Entry],
    ) -> dict[str, Any]:
        params = _parse(PaginatedRequestParams, req.params, meta)
        if params.cursor is not None:
            raise errors.invalid_params("Invalid cursor: this server returns one page")
        items = [e.descriptor.to_wire() for e in table.values()]  # registration order
        return self._stamp(method, {key: items, "ttlMs": self.list_ttl_ms, "cacheScope": "public"})

    def _complete(self, req: JSONRPCRequest, meta: RequestMeta) -> dict[str, Any]:
        params = _parse(CompleteRequestParams, req.params, meta)
        matches: list[str] = []
        ref = params.ref
        if isinstance(ref, PromptReference) and ref.name in self._prompts:
            options = self._prompts[ref.name].completions.get(params.argument.name, [])
            matches = [v for v in options if v.startswith(params.argument.value)]
        # values holds at most 100 (schema maxItems); total counts every match and hasMore
        # says some were left out.
        values = matches[:COMPLETION_MAX_VALUES]
        more = len(matches) > len(values)
        return {"completion": {"values": values, "total": len(matches), "hasMore": more}}

    # -- tools/call, prompts/get, resources/read: the MRTR methods ---------------------------

    async def _call(
        self,
        req: JSONRPCRequest,
        meta: RequestMeta,
        principal: str | None,
        emit: Emit | None,
        notes: RoundNotes | None = None,
    ) -> dict[str, Any]:
        m = req.method
        uri_params: dict[str, str] = {}
        if m == "tools/call":
            p = _parse(CallToolRequestParams, req.params, meta)
            entry = self._tools.get(p.name)
            if entry is None:
                raise errors.invalid_params(f"Unknown tool: {p.name}")
            target, arguments = p.name, p.arguments or {}
            _check_arguments(entry, arguments)
        elif m == "prompts/get":
            p = _parse(GetPromptRequestParams, req.params, meta)
            entry = self._prompts.get(p.name)
            if entry is None:
                raise errors.invalid_params(f"Unknown prompt: {p.name}")
            target, arguments = p.name, dict(p.arguments or {})
            _check_prompt_arguments(entry, arguments)
        else:
            p = _parse(ReadResourceRequestParams, req.params, meta)
            target, arguments = p.uri, {}
            entry, uri_params = self._find_resource(p.uri)

        for key in ("inputResponses", "requestState"):
            if key in req.params and req.params[key] is None:
                # Absent is fine; null is a malformed value (MRTR-E1, MRTR-C2: omit, never null).
                raise errors.invalid_params(f"Invalid params: {key} must not be null; omit it")
        binding = StateBinding(principal, request_digest(m, target, arguments))
        where = f"{m} {target!r}, principal {principal!r}"  # for the server log only
        answers, claims = self._mrtr_inputs(
            req.params, p.request_state, binding, where, entry.stateless_answers
        )
        if notes is not None and claims is not None:
            notes.state_verified = True
        # KIT: every state of a call carries its first round's flow id, so every fork does too.
        flow = claims["flow"] if claims is not None else self.states.new_flow()
        writes = _RoundWrites(self.ledger, flow)

        async def redeem() -> None:
            # MRTR-S5d: signature, binding and expiry do not stop a replay; the ledger does.
            if claims is None:
                raise RedeemWithoutState(
                    f"redeem_once() in the {m} handler of {target!r} on a first round: there "
                    "is no requestState to spend until the server has asked something. Return "
                    "ctx.input_required(...) first, and call redeem_once() on the retry, after "
                    "reading the answer that allows the one-time step (answers a client sends "
                    "on a first round are ignored, MRTR-E3)"
                )
            if not await writes.spend(claims["jti"], self.states.spent_until(claims)):
                state_log.warning("rejected requestState (%s): already redeemed", where)
                raise invalid_state_error("already redeemed")

        ctx = RequestContext(
            method=m,
            target=target,
            arguments=arguments,
            meta=meta,
            principal=principal,
            input_responses=answers,
            state=claims["data"] if claims else None,  # None too if the handler kept none
            _has_state=claims is not None,
            uri_params=uri_params,
            flow_id=flow,
            _emit=emit,
            _redeem=redeem,
            _attempt=writes.attempt,
            _once=writes.once,
        )
        try:
            outcome = await maybe_await(entry.handler(ctx))
        except LedgerUnavailable:
            await writes.undo(where)  # KIT-ERR-A: -31000 leaves the same retry good
            raise
        if isinstance(outcome, InputRequired):
            return self._finish(outcome, meta, binding, flow)
        result = _as_result(m, outcome, target, entry.mime_type)
        if m == "resources/read" and ctx.is_retry:
            # CACHE-3 (KIT): a result reached through a retry depends on inputs that are not
            # in any cache key, so it is marked uncacheable, whatever the handler said.
            result["ttlMs"], result["cacheScope"] = 0, "private"
        return self._stamp(m, result, entry.ttl_ms, entry.cache_scope)

    def _find_resource(self, uri: str) -> tuple[_Entry, dict[str, str]]:
        if uri in self._resources:
            return self._resources[uri], {}
        for entry in self._templates.values():
            assert entry.pattern is not None
            match = entry.pattern.match(uri)
            if match:
                return entry, match.groupdict()
        # SEP-2164: unknown resource is -32602 with data.uri (never -32002, ERR-2).
        raise errors.invalid_params(f"Resource not found: {uri}", {"uri": uri})

    def _mrtr_inputs(
        self,
        raw_params: dict[str, Any],
        token: str | None,
        binding: StateBinding,
        where: str,
        stateless_answers: frozenset[str] = frozenset(),
    ) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
        """Answers and verified state claims for a handler (MRTR-E1..E3, MRTR-S4/S5).

        Every input_required this server sends carries a state recording the keys it asked
        (``_finish``), so a request without one is a first round: the server has asked nothing
        yet, and any inputResponses on it are unrequested (MRTR-E3; SEC-6, KIT) and dropped, except
        under the keys a tool registered as ``stateless_answers``.
        """
        answers: dict[str, dict[str, Any]] = raw_params.get("inputResponses") or {}
        if token is None:
            return {k: v for k, v in answers.items() if k in stateless_answers}, None
        try:
            claims = self.states.verify(token, binding)
        except InvalidState as exc:
            # The reason goes to the log; the wire gets the one fixed error (KIT).
            state_log.warning("rejected requestState (%s): %s", where, exc.reason)
            raise invalid_state_error(exc.reason) from None
        # SEC-6 (KIT) / MRTR-E3: only answers to what this state's round asked for reach the
        # handler; anything else the client sent is ignored.
        asked = set(claims["asked"])
        return {k: v for k, v in answers.items() if k in asked}, claims

    def _finish(
        self, outcome: InputRequired, meta: RequestMeta, binding: StateBinding, flow: str
    ) -> dict[str, Any]:
        """The one place an InputRequiredResult is built; every input_required a handler
        asks for passes every check here. A handler mistake raises ``HandlerBug`` (-32603)
        before the client-facing gate, so a client is never told to add a capability only
        to hit the bug on its next round."""
        requests = {key: _input_request(key, req) for key, req in outcome.requests.items()}
        if not requests and outcome.state is None:
            # MRTR-S6 holds anyway (a state is always minted below), but a round that asks
            # nothing and keeps nothing would bring back the same request: a loop.
            raise HandlerBug(
                "input_required needs input requests, a state to carry forward, or both"
            )
        if outcome.state is not None and not isinstance(outcome.state, dict):
            raise HandlerBug(f"input_required state must be a dict, not {type(outcome.state)}")
        for key, req in requests.items():
            if isinstance(req, ElicitRequest) and isinstance(req.params, ElicitRequestFormParams):
                try:  # ELIC-5 (KIT): only forms a client can render leave the server
                    check_requested_schema(req.params.requested_schema)
                except SchemaOutsideSubset as exc:
                    raise HandlerBug(f"inputRequests[{key!r}]: {exc} (ELIC-5)") from None
        _gate(requests, meta)  # MRTR-S7 / CAP-2
        # Always a state, even for a handler that keeps none (its data is then null): it
        # records the keys asked this round, so the retry's unasked answers are dropped before
        # any handler sees them (MRTR-E3; SEC-6, KIT), and gives the retry a jti to redeem
        # (MRTR-S5d).
        state = self.states.mint(binding, list(requests), outcome.state, flow)
        # The InputRequiredResult on the wire, from parts validated above: each request is a
        # model already, so none is validated a second time on its way out.
        result: dict[str, Any] = {"resultType": RESULT_INPUT_REQUIRED}
        if requests:
            result["inputRequests"] = {key: req.to_wire() for key, req in requests.items()}
        result["requestState"] = state
        result["_meta"] = {META_SERVER_INFO: dict(self._info_wire)}  # CORE-16
        return result  # CACHE-2: never ttlMs / cacheScope on input_required

    def _stamp(
        self,
        method: str,
        result: dict[str, Any],
        ttl_ms: int = 0,
        cache_scope: str = "private",
    ) -> dict[str, Any]:
        """RT-1, CORE-16 and the cache hints of a complete result. ``ttl_ms``/``cache_scope``
        are the defaults for a result that brings none of its own."""
        result.setdefault("resultType", RESULT_COMPLETE)  # RT-1
        meta = result.setdefault("_meta", {})
        meta.setdefault(META_SERVER_INFO, dict(self._info_wire))  # CORE-16
        if method in CACHEABLE_METHODS:  # CACHE-1
            result.setdefault("ttlMs", ttl_ms)
            result.setdefault("cacheScope", cache_scope)
            try:  # CACHE-5: a handler's own hints are checked like registered ones
                _check_cache_hints(result["ttlMs"], result["cacheScope"])
            except ValueError as exc:
                raise HandlerBug(f"{method} result: {exc}") from None
        elif "ttlMs" in result or "cacheScope" in result:
            raise HandlerBug(f"{method} results are never cacheable: no ttlMs/cacheScope (CACHE-6)")
        return result


# -- steps of the pipeline --------------------------------------------------------------------


def parse_message(message: Any, *, decoded: bool = False) -> JSONRPCRequest | JSONRPCNotification:
    """JSON-RPC 2.0 shape (CORE-1..6). Raises -32600 (or -32602 for non-object params).

    ``decoded``: ``message`` came from ``wire_json.decode_body`` (see ``McpServer.handle``)."""
    if isinstance(message, list):
        raise errors.invalid_request("batches are not part of MCP; send one message per POST")
    if not isinstance(message, dict):
        raise errors.invalid_request("a message must be a JSON object")
    if message.get("jsonrpc") != "2.0":
        raise errors.invalid_request('"jsonrpc" must be "2.0"')
    if "method" not in message:
        if "result" in message or "error" in message:
            # CORE-6: in 2026-07-28 the server sends no requests, so nothing needs answering.
            raise errors.invalid_request("clients do not send JSON-RPC responses in 2026-07-28")
        raise errors.invalid_request('"method" is missing')
    if not isinstance(message["method"], str) or has_lone_surrogate(message["method"]):
        raise errors.invalid_request('"method" must be a string of UTF-8 text')
    if "params" in message and not isinstance(message["params"], dict):
        raise errors.malformed_params("params must be an object holding _meta")
    if "id" not in message:
        return JSONRPCNotification.model_validate(message)
    rid = message["id"]
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        raise errors.invalid_request('"id" must be a string or an integer, never null (CORE-2)')
    if isinstance(rid, str) and has_lone_surrogate(rid):
        raise errors.invalid_request('"id" holds a lone surrogate: it could not be echoed')
    # MRTR-E2: the HTTP and stdio edges decode only JSON (``decode_body`` refuses NaN, lone
    # surrogates and deep nesting), but a dict handed to McpServer.handle may hold values no
    # JSON text can (NaN, lone surrogates, bytes, ...): refuse them here, before anything
    # digests, validates or echoes them.
    problem = None if decoded else json_problem(message.get("params", {}))
    if problem is not None:
        raise errors.malformed_params(problem)
    # jsonrpc, id, method and params were each checked above, so this cannot fail; the
    # constructor (pydantic's compiled validator) costs less than model_construct (Python).
    return JSONRPCRequest(id=rid, method=message["method"], params=message.get("params", {}))


def _legacy_initialize_version(request: JSONRPCRequest) -> str | None:
    """The version a 2025-11-25 ``initialize`` asks for, or None for any other request.

    A legacy client puts its version in ``params.protocolVersion`` and sends no MCP headers
    and no ``_meta`` version. Its request names a version this server does not speak, so it
    gets that answer (VER-1), which lists the supported versions (VER-5), instead of -32020
    for headers it could not know about. Sent the 2026-07-28 way, ``initialize`` reaches
    ``_dispatch`` and gets its -32601 (HTTP-17).
    """
    if request.method != "initialize":
        return None
    meta = request.params.get("_meta")
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return None
    version = request.params.get("protocolVersion")
    return version if isinstance(version, str) else None


def check_request_meta(request: JSONRPCRequest) -> RequestMeta:
    """CORE-10/11: ``_meta`` with protocolVersion and clientCapabilities, else -32602 / 400."""
    meta = request.params.get("_meta")
    if not isinstance(meta, dict):
        raise errors.malformed_params("params._meta is required")
    for key in (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES):
        if key not in meta:
            raise errors.malformed_params(f"params._meta is missing {key!r}")
    try:
        return RequestMeta.model_validate(meta)
    except ValidationError as exc:
        raise errors.malformed_params(f"params._meta.{_pydantic_problem(exc)}") from None


def error_reply(request_id: Any, exc: McpError) -> Reply:
    """The JSON-RPC error response for ``exc``, with ``request_id`` unless it is unreadable."""
    body: dict[str, Any] = {"jsonrpc": "2.0"}
    readable = isinstance(request_id, int) and not isinstance(request_id, bool)
    readable = readable or (isinstance(request_id, str) and not has_lone_surrogate(request_id))
    if readable:
        body["id"] = request_id  # omitted only when the id was unreadable (§2.1)
    body["error"] = exc.to_error_object()
    return Reply(body, exc.reason)


# What a transport sends when even the -32603 reply cannot be encoded (an id it cannot write).
_INTERNAL_ERROR = b'{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}'


def encoded_internal_error(request_id: Any) -> bytes:
    """The -32603 reply to ``request_id`` as bytes, for a reply that could not be encoded (a
    handler returned NaN or a lone surrogate): a server bug, answered, never a crash."""
    fallback = error_reply(request_id, errors.internal_error())
    assert fallback.body is not None
    try:
        return encode_message(fallback.body)
    except Unencodable:
        return _INTERNAL_ERROR


# -- helpers -----------------------------------------------------------------------------------


def _codec(kind: StateCodec | str, keys: KeyRing | None, secret: bytes | None) -> StateCodec:
    """The requestState codec ``McpServer`` was given, or builds from the keys it was given."""
    if not isinstance(kind, str):
        if keys is not None or secret is not None:
            raise ValueError("a codec object holds its own keys: pass state_key(s) or a codec")
        return kind
    if keys is not None and secret is not None:
        raise ValueError("pass state_keys or state_key, not both")
    if secret is not None:
        keys = KeyRing.single(secret)
    if keys is None and kind != "plain":
        # Never a silent random key: a server's states must open wherever they should.
        raise ValueError(
            f"the {kind!r} requestState codec needs keys: state_keys=KeyRing.generate() for "
            "one process, KeyRing.from_env() for a fleet, or state_key=<32+ secret bytes>"
        )
    return make_codec(kind, keys)


def _parse(model: type[Any], params: dict[str, Any], meta: RequestMeta) -> Any:
    """A method's params; ``meta`` is ``params._meta`` as step 5 validated it, which pydantic
    takes as it is instead of validating that part again."""
    try:
        return model.model_validate({**params, "_meta": meta})
    except ValidationError as exc:
        raise errors.invalid_params(f"Invalid params: {_pydantic_problem(exc)}") from None


def _check_arguments(entry: _Entry, arguments: dict[str, Any]) -> None:
    problem = entry.arguments.problem(arguments) if entry.arguments is not None else None
    if problem is not None:
        raise errors.invalid_params(f"Invalid arguments: {problem}")


def _check_prompt_arguments(entry: _Entry, arguments: dict[str, str]) -> None:
    prompt: Prompt = entry.descriptor  # type: ignore[assignment]
    missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in arguments]
    if missing:
        raise errors.invalid_params(f"Missing required prompt arguments: {', '.join(missing)}")


def _input_request(key: Any, request: Any) -> InputRequestModel:
    """One inputRequests value as a model (MRTR-S2a/S2b): a handler may pass a model or its
    wire dict, but never anything else, so the gate sees each request's real kind."""
    if not isinstance(key, str):
        raise HandlerBug(f"inputRequests key {key!r} is not a string (MRTR-S2a)")
    if isinstance(request, ElicitRequest | CreateMessageRequest | ListRootsRequest):
        return request
    try:
        return _INPUT_REQUEST.validate_python(request)
    except ValidationError as exc:
        raise HandlerBug(
            f"inputRequests[{key!r}] is not an elicitation/create, sampling/createMessage or "
            f"roots/list request (MRTR-S2b): {_pydantic_problem(exc)}"
        ) from None


def _gate(requests: dict[str, InputRequestModel], meta: RequestMeta) -> None:
    """MRTR-S7 / CAP-2: every input request needs a capability declared in *this* request."""
    caps = meta.client_capabilities
    missing: dict[str, Any] = {}
    for req in requests.values():
        if isinstance(req, ElicitRequest):
            mode = "url" if isinstance(req.params, ElicitRequestURLParams) else "form"
            if not caps.supports_elicitation(mode):
                missing.setdefault("elicitation", {})[mode] = {}
        elif isinstance(req, CreateMessageRequest):
            p = req.params
            wants_tools = p.tools is not None or p.tool_choice is not None
            wants_context = p.include_context not in (None, "none")
            if not caps.supports_sampling(tools=wants_tools, context=wants_context):
                # ERR-1: name every sub-capability needed, declared sampling or not, and merge
                # across requests, so one -32021 tells the client everything.
                need = missing.setdefault("sampling", {})
                if wants_tools:
                    need["tools"] = {}
                if wants_context:
                    need["context"] = {}
        elif isinstance(req, ListRootsRequest) and not caps.supports_roots():
            missing["roots"] = {}
    if missing:
        raise errors.missing_capability(missing)


def _as_result(method: str, outcome: Any, target: str, mime_type: str | None) -> dict[str, Any]:
    """Let handlers return plain Python: text, content blocks, messages, bytes or a model."""
    if isinstance(outcome, BaseModel | dict):
        result = to_wire(outcome) if isinstance(outcome, BaseModel) else dict(outcome)
        kind = result.get("resultType", RESULT_COMPLETE)
        if kind == RESULT_INPUT_REQUIRED:
            # One way to ask, so every question passes the same checks: a handler's own
            # input_required result would skip the capability gate (MRTR-S7), the S6 and ELIC-5
            # checks, the sealing of its requestState (MRTR-S4a) and CACHE-2. Converting it
            # is no fix: its requestState is a string the core did not mint. Refused loudly.
            raise HandlerBug(
                f"the {method} handler returned an input_required result itself; return "
                "ctx.input_required(requests, state) so the core can check and seal it"
            )
        if kind != RESULT_COMPLETE:
            raise HandlerBug(f"the {method} handler returned resultType {kind!r} (RT-1)")
        return result
    if method == "tools/call":
        if isinstance(outcome, str):  # the usual answer, written as its wire form at once
            return {"resultType": RESULT_COMPLETE, "content": [{"type": "text", "text": outcome}]}
        blocks = [outcome] if isinstance(outcome, BaseModel) else list(outcome)
        content = [TextContent(text=b) if isinstance(b, str) else b for b in blocks]
        return CallToolResult.model_validate({"content": content}).to_wire()
    if method == "prompts/get":
        if isinstance(outcome, str):
            outcome = [PromptMessage(role="user", content=TextContent(text=outcome))]
        return GetPromptResult(messages=list(outcome)).to_wire()
    # A resource handler's plain str or bytes takes the uri and mimeType it was registered with.
    if isinstance(outcome, bytes):
        blob = base64.b64encode(outcome).decode()
        binary = BlobResourceContents(uri=target, blob=blob, mime_type=mime_type)
        return ReadResourceResult(contents=[binary]).to_wire()
    if isinstance(outcome, str):
        text = TextResourceContents(uri=target, text=outcome, mime_type=mime_type)
        return ReadResourceResult(contents=[text]).to_wire()
    return ReadResourceResult(contents=list(outcome)).to_wire()
