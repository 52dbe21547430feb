"""Answer handlers: how the client turns one input request into one ``inputResponses`` value.

A client registers a handler for each kind of input it can produce, and declares exactly
those capabilities (§2.9): a form-elicitation handler -> ``elicitation.form``, a URL one ->
``elicitation.url``, a sampling handler -> ``sampling``, a roots handler -> ``roots``.

Handlers are plain callables, sync or async: ``handler(params, ctx) -> answer``. ``params``
is the parsed request params (a pydantic model, or a dict for ``roots/list``); ``ctx`` says
which call, round and server is asking (ELIC-15). An elicitation handler always returns an
``ElicitResult`` — declining or cancelling is an answer too (MRTR-C8). A sampling or roots
handler may return ``None`` to refuse: there is nothing to send, so the call stops
(``InputDeclined``) instead of retrying.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..protocol.constants import ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE
from ..protocol.elicitation import SchemaOutsideSubset, check_requested_schema, validate_content
from ..protocol.models import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsRequest,
    ListRootsResult,
)
from .errors import InvalidAnswers, ProtocolViolation
from .rounds import AnswerContext, answer_to_wire, client_capabilities, refusal

__all__ = [
    "AnswerContext",  # defined with the other round facts in rounds.py; handlers receive it
    "AnswerHandlers",
    "FormHandler",
    "RootsHandler",
    "SamplingHandler",
    "UrlHandler",
    "check_answer",
    "parse_input_request",
]


Answer = BaseModel | dict[str, Any]
FormHandler = Callable[[ElicitRequestFormParams, AnswerContext], Answer | Awaitable[Answer]]
UrlHandler = Callable[[ElicitRequestURLParams, AnswerContext], Answer | Awaitable[Answer]]
MaybeAnswer = Answer | None  # None = "will not answer" (sampling and roots only)
SamplingHandler = Callable[
    [CreateMessageRequestParams, AnswerContext], MaybeAnswer | Awaitable[MaybeAnswer]
]
RootsHandler = Callable[[dict[str, Any], AnswerContext], MaybeAnswer | Awaitable[MaybeAnswer]]
AnyHandler = Callable[[Any, AnswerContext], Any]
M = TypeVar("M", bound=BaseModel)


def _validate(model: type[M], data: Any, what: str, *, theirs: bool) -> M:
    """``model.model_validate(data)``; a failure is the server's fault (``theirs``: a
    malformed input request) or ours (an answer that does not fit)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or what
        if theirs:
            raise ProtocolViolation(f"malformed {what}: {loc}: {first['msg']}") from None
        raise InvalidAnswers(
            f"not a valid {what}: {loc}: {first['msg']}", problems={loc: first["msg"]}
        ) from None


def parse_input_request(
    request: dict[str, Any],
) -> ElicitRequest | CreateMessageRequest | ListRootsRequest:
    """An ``inputRequests`` value as a model; malformed ones are the server's fault."""
    method = request.get("method")
    if method == ELICITATION_CREATE:
        parsed = _validate(ElicitRequest, request, "elicitation request", theirs=True)
        if isinstance(parsed.params, ElicitRequestFormParams):
            try:  # ELIC-5 (KIT): a form the client cannot render is a protocol error
                check_requested_schema(parsed.params.requested_schema)
            except SchemaOutsideSubset as exc:
                raise ProtocolViolation(f"requestedSchema outside the form subset: {exc}") from None
        return parsed
    if method == SAMPLING_CREATE_MESSAGE:
        return _validate(CreateMessageRequest, request, "sampling request", theirs=True)
    if method == ROOTS_LIST:
        return _validate(ListRootsRequest, request, "roots/list request", theirs=True)
    raise ProtocolViolation(f"unknown input request method {method!r} (MRTR-S2b)")


def check_answer(request: dict[str, Any], answer: Any) -> dict[str, Any]:
    """Validate one answer against the input request it answers; return its wire form.

    ``InvalidAnswers`` when it has the wrong shape, or when an accepted form's content does
    not fit ``requestedSchema`` (ELIC-14: the client SHOULD validate before sending).
    """
    parsed = parse_input_request(request)
    wire = answer_to_wire(answer)
    if isinstance(parsed, ElicitRequest):
        result = _validate(ElicitResult, wire, "ElicitResult", theirs=False)
        params = parsed.params
        if isinstance(params, ElicitRequestFormParams) and result.action == "accept":
            problems = validate_content(params.requested_schema, result.content or {})
            if problems:
                raise InvalidAnswers(
                    f"form content does not fit requestedSchema: {problems}", problems=problems
                )
        return result.to_wire()
    if isinstance(parsed, CreateMessageRequest):
        return _validate(CreateMessageResult, wire, "CreateMessageResult", theirs=False).to_wire()
    return _validate(ListRootsResult, wire, "ListRootsResult", theirs=False).to_wire()


async def _invoke(handler: Callable[..., Any], *args: Any) -> Any:
    value = handler(*args)
    return await value if inspect.isawaitable(value) else value


@dataclass(frozen=True)
class AnswerHandlers:
    """The handlers a client has; they decide its declared capabilities. Frozen: to change
    them, assign a new ``AnswerHandlers`` so the capabilities are recomputed too."""

    elicitation: FormHandler | None = None
    url_elicitation: UrlHandler | None = None
    sampling: SamplingHandler | None = None
    roots: RootsHandler | None = None

    def capabilities(self) -> dict[str, Any]:
        """Exactly the capabilities there are handlers for — no more (a server would send
        requests nobody can answer), no less (it would refuse with -32021)."""
        return client_capabilities(
            form=self.elicitation is not None,
            url=self.url_elicitation is not None,
            sampling=self.sampling is not None,
            roots=self.roots is not None,
        )

    async def answer(self, request: dict[str, Any], ctx: AnswerContext) -> dict[str, Any]:
        """Run the matching handler for one input request and return the checked answer."""
        parsed = parse_input_request(request)
        handler: AnyHandler | None
        if isinstance(parsed, ElicitRequest):
            url_mode = isinstance(parsed.params, ElicitRequestURLParams)
            handler = self.url_elicitation if url_mode else self.elicitation
            kind = "URL elicitation" if url_mode else "form elicitation"
        elif isinstance(parsed, CreateMessageRequest):
            handler, kind = self.sampling, "sampling"
        else:
            handler, kind = self.roots, "roots"
        if handler is None:
            # We declare only what we can answer, so this request breaks MRTR-S7.
            raise ProtocolViolation(
                f"server sent a {kind} request ({ctx.key!r}) this client did not declare (MRTR-S7)"
            )
        # roots/list params are optional (ROOTS-1): the handler gets {} then.
        params = parsed.params if parsed.params is not None else {}
        answer = await _invoke(handler, params, ctx)
        if answer is None:
            raise refusal(ctx.key, request)  # MRTR-C8: what no answer means, and no retry
        return check_answer(request, answer)
