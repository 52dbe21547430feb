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

What this module checks, each in one place:

* one answer against the request it answers (ELIC-14) — ``check_answer``;
* the answers of a retry as a set: every requested key (MRTR-C1, MRTR-C6) and, the kit's
  choice (KIT), nothing else, each a JSON object — ``retry_answers``, which
  ``MrtrCall.retry_request`` applies;
* what giving no answer means (MRTR-C8) — ``refusal``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping
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
    to_wire,
)
from .errors import InputDeclined, InvalidAnswers, McpClientError, ProtocolViolation
from .factory import client_capabilities
from .steps import AnswerContext

__all__ = [
    "AnswerCheck",
    "AnswerContext",  # defined with the other steps in steps.py; handlers receive it
    "AnswerHandlers",
    "FormHandler",
    "RootsHandler",
    "SamplingHandler",
    "UrlHandler",
    "answer_to_wire",
    "check_answer",
    "parse_input_request",
    "refusal",
    "retry_answers",
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


def answer_to_wire(answer: Any) -> Any:
    """Accept pydantic answers (``ElicitResult`` etc.) as well as plain dicts."""
    if isinstance(answer, BaseModel):
        return to_wire(answer)
    return answer


AnswerCheck = Callable[[dict[str, Any], Any], dict[str, Any]]


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


def _answer_set_problem(asked: list[str], missing: list[str], unexpected: list[str]) -> str:
    """What is wrong with a retry's set of answers, saying which part is the spec's rule and
    which the kit's choice."""
    parts = []
    if missing:
        # The spec's rule: every requested key is answered before the retry (MRTR-C1, MRTR-C6).
        parts.append(
            f"no answer for {missing}: a client must answer every requested key of the "
            f"latest inputRequests {asked} before retrying (MRTR-C1, MRTR-C6)"
        )
    if unexpected:
        # Only the kit's choice: the spec asks servers to ignore extras (MRTR-E3); an extra
        # key is usually an answer meant for another call or an earlier round (MRTR-C4).
        parts.append(
            f"answers nobody asked for {unexpected}: this client does not send them (KIT; "
            "the spec only says a server SHOULD ignore them, MRTR-E3)"
        )
    return "; ".join(parts)


def retry_answers(
    requests: Mapping[str, dict[str, Any]],
    answers: Mapping[str, Any] | None,
    check: AnswerCheck | None = None,
) -> dict[str, Any] | None:
    """The ``inputResponses`` of a retry that answers ``requests`` (the latest
    ``inputRequests``), or ``None`` for a state-only round, which sends none.

    ``InvalidAnswers`` unless ``answers`` has every requested key (MRTR-C1, MRTR-C6), no
    other (KIT: servers ignore extras, MRTR-E3), and each answer is a JSON object.
    ``check(request, answer)`` validates one answer and returns its wire form
    (``check_answer``: ELIC-14).
    """
    given = dict(answers or {})
    asked = set(requests)
    missing = asked - set(given)
    unexpected = set(given) - asked
    if missing or unexpected:
        raise InvalidAnswers(
            _answer_set_problem(sorted(asked), sorted(missing), sorted(unexpected)),
            missing=missing,
            unexpected=unexpected,
        )
    if check is not None:
        given = {key: check(requests[key], value) for key, value in given.items()}
    # MRTR-C6: a deep copy, so a caller reusing its answer dicts cannot change this round.
    wire = {key: copy.deepcopy(answer_to_wire(value)) for key, value in given.items()}
    not_objects = [key for key, value in wire.items() if not isinstance(value, dict)]
    if not_objects:
        raise InvalidAnswers(
            f"answers {sorted(not_objects)} must be JSON objects (ElicitResult, "
            "CreateMessageResult or ListRootsResult)",
            problems={key: "not an object" for key in not_objects},
        )
    return wire or None  # a state-only round sends no inputResponses at all


def refusal(key: str, request: Mapping[str, Any]) -> McpClientError:
    """MRTR-C8: what giving no answer to an input request means. An elicitation is declined
    or cancelled *with* an answer, so no answer there is a mistake (``InvalidAnswers``);
    sampling and roots have no error slot, so no answer means no retry at all: the call
    ends here, locally (``InputDeclined``)."""
    method = request.get("method")
    if method == ELICITATION_CREATE:
        return InvalidAnswers(
            f"{key!r}: an elicitation is refused with the answer {{'action': 'decline'}} or "
            "{'action': 'cancel'}, not with no answer (MRTR-C8)"
        )
    return InputDeclined(key, str(method))


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
