"""What a handler sees and returns.

A handler is a re-entrant function of (arguments, inputResponses, verified requestState): the
code before the point where it needs input runs again on every round (MIG-3). It gets a
``RequestContext`` and returns a complete result or ``ctx.input_required(...)`` — the one way
to ask, so every question passes the core's checks. For a form, ``ctx.form(key, message,
schema)`` reads the answer checked against its schema (ELIC-14) and asks, or asks again
saying what was wrong (MRTR-E4), with ``answer.ask()``; act only on ``answer.content``. The
schema may be a pydantic model instead (``ctx.form(key, message, Booking)``): the form is
``form_schema(Booking)`` and ``answer.value`` is a ``Booking`` (``server.typed_forms``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, ValidationError

from ..protocol import errors
from ..protocol.constants import LOG_LEVELS
from ..protocol.elicitation import check_requested_schema, checked_content, explain
from ..protocol.models import (
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    Implementation,
    ListRootsRequest,
    ListRootsResult,
    RequestMeta,
)
from .typed_forms import form_schema, model_problems

InputRequestModel = ElicitRequest | CreateMessageRequest | ListRootsRequest
Emit = Callable[[dict[str, Any]], Awaitable[None]]
Redeem = Callable[[], Awaitable[None]]
Attempt = Callable[[str], Awaitable[int]]
Once = Callable[[str], Awaitable[bool]]
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")  # what ``FormAnswer.value`` is: a model instance, or the content dict


@dataclass
class InputRequired:
    """A handler's "I need more": input requests keyed by name and/or state to carry forward.

    The core always issues a requestState, sealed and bound to this principal and request: it
    records the keys asked, so on the retry only answers to those keys reach the handler
    (MRTR-E3). ``state`` is the handler's own data carried in it: a dict (even an empty one),
    or ``None`` to keep nothing (``ctx.state`` is then ``None`` on the retry). Asking nothing
    and keeping nothing is a handler bug (it would loop), refused by the core.
    """

    requests: dict[str, InputRequestModel] = field(default_factory=dict)
    state: dict[str, Any] | None = None


def elicit_form(message: str, requested_schema: dict[str, Any]) -> ElicitRequest:
    """A form-mode elicitation, its schema checked against the form subset first (ELIC-5).

    The check here only fails early, at the line that built the form. The guarantee is the
    core's: it checks every input request where it leaves the server (``McpServer._finish``),
    so a hand-built ``ElicitRequest`` cannot skip it.
    """
    check_requested_schema(requested_schema)
    return ElicitRequest(
        params=ElicitRequestFormParams(message=message, requested_schema=requested_schema)
    )


def elicit_url(message: str, url: str) -> ElicitRequest:
    """A URL-mode elicitation: ``message`` and the ``url`` the user should open."""
    return ElicitRequest(params=ElicitRequestURLParams(mode="url", message=message, url=url))


def create_message(
    prompt: str, *, max_tokens: int = 200, system_prompt: str | None = None
) -> CreateMessageRequest:
    """A one-message ``sampling/createMessage`` request (deprecated in 2026-07-28, SEP-2577)."""
    return CreateMessageRequest(
        params=CreateMessageRequestParams.model_validate(
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                "maxTokens": max_tokens,
                "systemPrompt": system_prompt,
            }
        )
    )


def list_roots() -> ListRootsRequest:
    """A ``roots/list`` request (deprecated in 2026-07-28, SEP-2577)."""
    return ListRootsRequest(params={})


@dataclass(frozen=True)
class FormAnswer(Generic[T]):
    """One form question and what this round brought for it, checked against its form.

    ``ctx.form(key, message, schema)`` builds it; exactly one of these is true:

    * ``needs_asking``: no answer under ``key`` yet (a first round, or the answer went
      missing), or an ``accept`` that does not fit the form. Return ``answer.ask()``: it asks
      the question, and after a bad answer its message first says what was wrong (ELIC-14,
      MRTR-E4);
    * ``accepted``: ``content`` holds exactly the form's fields, each valid, a whole-number
      ``integer`` as an ``int``: the only content to act on. ``value`` is the same answer
      typed: for ``ctx.form(key, message, Model)`` a ``Model`` built from ``content`` (a
      ``date`` field is a ``datetime.date``), for a dict schema ``content`` itself;
    * ``declined``: the user said no; ``cancelled``: the user dismissed the form (ELIC-6).
      What follows is the handler's choice: finish, use defaults, or ``ask(why)`` again.

    The official SDK's ``Elicit(message, Model)`` resolver reads answers from a type
    annotation instead; there an accept that does not fit is a tool error, and a decline ends
    the call unless the tool takes the whole outcome. Here each outcome is one ``if``.
    """

    key: str
    message: str
    schema: dict[str, Any]
    state: dict[str, Any] | None = None  # the requestState ``ask`` carries forward
    action: str | None = None  # None: no answer under ``key``
    content: dict[str, Any] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)  # field -> what was wrong
    typed: T | None = field(default=None, repr=False)  # ``value``; None unless accepted

    @property
    def value(self) -> T:
        """The accepted answer, typed: a model instance for a typed form, else ``content``.

        Only an accepted answer has one: read it after ``if answer.accepted``; on any other
        outcome this raises ``ValueError`` rather than hand over something not to act on.
        """
        if not self.accepted or self.typed is None:
            raise ValueError(f"form {self.key!r} has no accepted answer (action {self.action!r})")
        return self.typed

    @property
    def needs_asking(self) -> bool:
        """True when there is no answer under ``key`` yet, or an accept that does not fit."""
        return self.action is None or bool(self.problems)

    @property
    def accepted(self) -> bool:
        """True for an ``accept`` whose content fits the form: the one outcome to act on."""
        return self.action == "accept" and not self.problems

    @property
    def declined(self) -> bool:
        """True when the user declined the form."""
        return self.action == "decline"

    @property
    def cancelled(self) -> bool:
        """True when the user dismissed the form."""
        return self.action == "cancel"

    def request(self, why: str | None = None) -> ElicitRequest:
        """This question as an input request, for a round that asks several things at once.

        What was wrong with the last answer, then ``why``, go before the message.
        """
        notes = [explain(self.problems)] if self.problems else []
        if why:
            notes.append(why)
        # Not elicit_form: ctx.form checked this schema already, and the core checks it again
        # where it leaves the server (ELIC-5, McpServer._finish).
        params = ElicitRequestFormParams(
            message=" ".join([*notes, self.message]), requested_schema=self.schema
        )
        return ElicitRequest(params=params)

    def ask(self, why: str | None = None) -> InputRequired:
        """What the handler returns to ask (again): the ``InputRequired`` that
        ``ctx.input_required({key: self.request(why)}, state)`` builds, with the ``state``
        given to ``ctx.form``, so it passes the core's checks like any other question."""
        return InputRequired({self.key: self.request(why)}, self.state)


@dataclass
class RequestContext:
    """One round of one request, as its handler sees it.

    ``flow_id`` names the call this round belongs to: the same in every round, and in every
    fork a replayed round makes of it (KIT). ``attempt`` and ``once`` keep their ledger
    entries under it."""

    method: str
    target: str  # tool or prompt name, or resource URI
    arguments: dict[str, Any]
    meta: RequestMeta
    principal: str | None
    input_responses: dict[str, dict[str, Any]]
    # The handler's data from the verified requestState: None on a first round, and on a
    # retry of a round that kept none.
    state: dict[str, Any] | None
    uri_params: dict[str, str] = field(default_factory=dict)
    # The call's flow id: minted by the core on the first round, sealed into every state of
    # the call, so the same in every round and every fork of it (KIT).
    flow_id: str = ""
    _emit: Emit | None = None
    _redeem: Redeem | None = None
    _attempt: Attempt | None = None
    _once: Once | None = None
    _has_state: bool = False  # this round carried a verified requestState (it is a retry)

    @property
    def capabilities(self) -> ClientCapabilities:
        """This request's client capabilities, never an earlier request's (CAP-1, CAP-4)."""
        return self.meta.client_capabilities

    @property
    def client_info(self) -> Implementation | None:
        """Self-reported, for display and logs only (CORE-13)."""
        return self.meta.client_info

    @property
    def is_retry(self) -> bool:
        """True when this round carries a requestState (the core mints one on every
        input_required) or any inputResponses."""
        return self._has_state or self.state is not None or bool(self.input_responses)

    def input_required(
        self,
        requests: Mapping[str, InputRequestModel] | None = None,
        state: dict[str, Any] | None = None,
    ) -> InputRequired:
        """What a handler returns to ask: ``requests`` keyed by name and/or ``state`` to carry.

        ``state=None`` issues no requestState; a dict (even empty) is sealed and bound by the
        core, which also checks that at least one of the two is given (MRTR-S6)."""
        return InputRequired(dict(requests or {}), state)

    # -- reading answers: absent -> None (ask again, MRTR-E4); malformed -> -32602 (MRTR-E2) --

    def _answer(self, key: str, model: type[M], what: str) -> M | None:
        raw = self.input_responses.get(key)
        if raw is None:
            return None
        try:
            return model.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            detail = f" ({loc}: {first['msg']})" if loc else f" ({first['msg']})"
            raise errors.invalid_params(
                f"inputResponses[{key!r}] is not a valid {what}{detail}"
            ) from None

    def elicitation(self, key: str) -> ElicitResult | None:
        """The ``ElicitResult`` under ``key``, its content unchecked: for a URL-mode answer,
        or a form answer the handler checks itself. ``form`` checks it for you."""
        return self._answer(key, ElicitResult, "ElicitResult")

    @overload
    def form(
        self,
        key: str,
        message: str,
        requested_schema: type[M],
        *,
        state: dict[str, Any] | None = None,
    ) -> FormAnswer[M]: ...

    @overload
    def form(
        self,
        key: str,
        message: str,
        requested_schema: dict[str, Any],
        *,
        state: dict[str, Any] | None = None,
    ) -> FormAnswer[dict[str, Any]]: ...

    def form(
        self,
        key: str,
        message: str,
        requested_schema: dict[str, Any] | type[BaseModel],
        *,
        state: dict[str, Any] | None = None,
    ) -> FormAnswer[Any]:
        """The form question ``key`` and this round's answer to it, checked against
        ``requested_schema`` (ELIC-14: the server validates answers against its schema).

        ``message`` and the schema are what ``answer.ask()`` sends; ``state`` is the
        handler's data the requestState carries (``None``: none; the core still seals the
        asked keys in it, MRTR-E3). Pass the same key, and a schema whose fields
        mean the same, on every run: the answer read here is the one to the question asked
        under this key on the round before. A malformed answer raises -32602 (MRTR-E1).
        A schema outside the form subset raises ``SchemaOutsideSubset`` here on a round that
        can ask it (no accepted answer yet; ELIC-5).

        The schema may be a pydantic model class: the form is ``form_schema(Model)`` (ELIC-5;
        a model outside the subset raises ``SchemaOutsideSubset`` here, or at import where the
        module calls ``form_schema``), and an accepted answer is also validated by the model,
        its errors asked again like the schema's (ELIC-14, MRTR-E4); ``answer.value`` is then
        the ``Model``. ``answer.content`` stays the checked dict.
        """
        model: type[BaseModel] | None = None
        if isinstance(requested_schema, type):
            model = requested_schema
            schema = form_schema(model)  # checked once per model class
        else:
            schema = requested_schema
        answer = self.elicitation(key)
        if answer is None or answer.action != "accept":
            if model is None:
                check_requested_schema(schema)  # ELIC-5: a bad form fails at this line
            action = answer.action if answer else None
            return FormAnswer(key, message, schema, state, action)
        # An accept is an answer to this form, which the core checked where it left the
        # server (ELIC-5, McpServer._finish): not checked again on the round that reads it.
        content, problems = checked_content(schema, answer.content)
        typed: Any = content
        if model is not None and not problems:
            try:
                # JSON mode: content is JSON data, so a strict model still reads a date
                typed = model.model_validate_json(json.dumps(content))
            except ValidationError as exc:  # the model's own rules: asked again the same way
                content, problems, typed = {}, model_problems(exc), None
        return FormAnswer(key, message, schema, state, "accept", content, problems, typed)

    def sampling(self, key: str) -> CreateMessageResult | None:
        """The ``CreateMessageResult`` under ``key``, or None; a malformed one raises -32602."""
        return self._answer(key, CreateMessageResult, "CreateMessageResult")

    def roots(self, key: str) -> ListRootsResult | None:
        """The ``ListRootsResult`` under ``key``, or None; a malformed one raises -32602."""
        return self._answer(key, ListRootsResult, "ListRootsResult")

    async def redeem_once(self) -> None:
        """Spend this round's requestState in the server's ledger before a one-time step.

        A second retry with the same state is then rejected like a forged one (MRTR-S5d).
        Every retry carries a state the core minted, even when the handler kept no data in
        it, so this works after any ``ctx.input_required(...)``. Call it on the retry, after
        reading the answer that allows the step: on a first round there is no state yet
        (and answers sent with a first round are ignored, MRTR-E3), so it raises
        ``core.RedeemWithoutState`` with that advice, logged for the handler's author; the
        client gets -32603 (a server bug, which no client input can reach). A state already
        spent raises the usual invalid-requestState -32602; a ledger that is down raises
        ``LedgerUnavailable`` (the client gets -31000, KIT-ERR-A); so does a later ledger
        write of this round, and then the core undoes the spend, so the same retry is still
        good. The ledger is ``McpServer.ledger``. It spends one state: for a limit or a side
        effect across every fork of the call, see ``attempt`` and ``once``.
        """
        if self._redeem is None:
            raise RuntimeError("this context has no ledger")
        await self._redeem()

    # -- once per flow (KIT): entries keyed by ``flow_id`` hold across forks (MIG-3) ----------

    async def attempt(self, step: str) -> int:
        """Count one attempt at ``step`` in this call's flow, in the ledger, and return its
        number: 1, 2, 3, ... across every round and every fork of the call.

        Count before evaluating the attempt, then refuse past the limit::

            if await ctx.attempt("otp") > 3:
                return "Too many tries."

        A limit kept in ``ctx.state`` resets in each fork (a replayed round mints a fresh
        state, MIG-3); this one does not. Atomic: concurrent forks get different numbers.
        A ledger that is down raises ``LedgerUnavailable`` (-31000, KIT-ERR-A)."""
        if self._attempt is None:
            raise RuntimeError("this context has no ledger")
        return await self._attempt(step)

    async def once(self, key: str) -> bool:
        """True the first time ``key`` is claimed in this call's flow, in the ledger; False
        in every later round or fork of the call. Guard a side effect with it, and do the
        side effect after it, as the round's last step::

            if not await ctx.once("deploy"):
                return "Deployed already."
            deploy()

        Atomic: of concurrent forks exactly one gets True. A ledger that is down raises
        ``LedgerUnavailable`` (-31000, KIT-ERR-A)."""
        if self._once is None:
            raise RuntimeError("this context has no ledger")
        return await self._once(key)

    # -- notifications on this request's own response stream (HTTP-21) ----------------------

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` on this request's stream (HTTP-21).

        Does nothing when the request carried no progressToken or the transport cannot stream."""
        token = self.meta.progress_token
        if token is None or self._emit is None:
            return  # no progressToken: the client did not ask for progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._emit({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        # CORE-14: no notifications/message unless this request set a logLevel, and then only
        # at or above that level.
        """Send ``notifications/message`` with ``data`` at ``level`` on this request's stream.

        CORE-14: only when this request set a logLevel, and only at or above it; otherwise
        nothing."""
        wanted = self.meta.log_level
        if wanted is None or self._emit is None:
            return
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        await self._emit({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
