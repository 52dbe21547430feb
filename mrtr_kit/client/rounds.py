"""Sans-IO client rounds: build requests, read results, build MRTR retries. No I/O at all.

This module is where the client rules of 2026-07-28 live, each in one place:

* fresh JSON-RPC ids (CORE-3, MRTR-C3) and fresh ``_meta`` (CORE-10, CORE-12)
  on every request — ``RequestFactory``;
* reading a result: missing ``resultType`` = complete (RT-2), unknown ones rejected (RT-3),
  ``input_required`` only from the three MRTR methods (MRTR-R3), never an empty one
  (MRTR-S6) — ``interpret_result``;
* every request and its response — ``Exchange`` (``PlainRequest`` for the non-MRTR methods):
  the response echoes the request id (CORE-4, ``check_response_id``), one resend under a
  version the server supports after ``-32022`` (VER-2: ``RequestFactory.negotiate``,
  ``choose_version``);
* one logical call across its rounds — ``MrtrCall``: same method and target (MRTR-C5),
  an answer for every requested key and nothing else (MRTR-C1, MRTR-C6), ``requestState``
  echoed untouched or left out (MRTR-C2), state private to the call (MRTR-C4), a round
  limit and a backoff on state-only rounds (MRTR-C7, ``state_only_delay``); decline/cancel
  are ordinary answers, a refused sampling or roots request ends the call (MRTR-C8,
  ``refusal``);
* what to do next — ``receive(response)`` returns a ``Step``: ``AnswerThese`` (questions
  with their ``AnswerContext``), ``RetryStateOnly`` (after a delay), ``Resend``, ``GiveUp``
  or ``Done`` (with whether a cache may keep the result);
* what may be cached (MRTR-C9) — ``may_cache``; under which key and for how long
  (CACHE-4, CACHE-5) — ``ResultCache``;
* the bytes of a request: UTF-8 JSON (CORE-1), a received string echoed exactly even when it
  is not valid Unicode (MRTR-C2) — ``encode_request``.

A transport (``session.McpClient``, or a notebook cell) moves the dicts this module builds and
acts on the steps; it decides nothing about the protocol itself.
"""

from __future__ import annotations

import copy
import itertools
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel

from .. import __version__
from ..protocol.constants import (
    CACHEABLE_METHODS,
    ELICITATION_CREATE,
    INPUT_REQUEST_METHODS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MRTR_METHODS,
    PROTOCOL_VERSION,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
    SUPPORTED_VERSIONS,
)
from ..protocol.errors import UNSUPPORTED_PROTOCOL_VERSION
from ..protocol.models import Implementation, to_wire
from .errors import (
    InputDeclined,
    InvalidAnswers,
    McpClientError,
    McpRemoteError,
    NoMutualVersion,
    NotJson,
    ProtocolViolation,
    TooManyRounds,
)

DEFAULT_MAX_ROUNDS = 10  # MRTR-C7 (KIT): rounds per logical call before the client gives up
DEFAULT_STATE_ONLY_BACKOFF_S = 0.05  # MRTR-C7 (KIT): the first pause before a state-only retry
DEFAULT_CLIENT_INFO = Implementation(name="mrtr-kit-client", version=__version__)
RESERVED_CALL_PARAMS = ("_meta", "inputResponses", "requestState")


# --- every request: ids and _meta -------------------------------------------------------------


def client_capabilities(
    *, form: bool = False, url: bool = False, sampling: bool = False, roots: bool = False
) -> dict[str, Any]:
    """The ``clientCapabilities`` object for the input kinds a client can answer (§2.9).

    Every value is a JSON object (``{}``), never ``true``: servers and the conformance suite
    read the object form. ``elicitation`` is declared only with at least one mode (CAP-3).
    """
    caps: dict[str, Any] = {}
    modes: dict[str, Any] = {name: {} for name, on in (("form", form), ("url", url)) if on}
    if modes:
        caps["elicitation"] = modes
    if sampling:
        caps["sampling"] = {}
    if roots:
        caps["roots"] = {}
    return caps


class RequestFactory:
    """Builds the JSON-RPC requests of one client: a fresh id and a fresh ``_meta`` each time.

    ``protocol_version`` may change after version negotiation (``negotiate``, VER-2); every
    later request then carries the new one. ``supported_versions`` are the versions this
    client speaks, in preference order. ``client_info=None`` sends no ``clientInfo``
    (CORE-12 allows a client to be configured not to).
    """

    def __init__(
        self,
        *,
        protocol_version: str = PROTOCOL_VERSION,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Implementation | Mapping[str, Any] | None = DEFAULT_CLIENT_INFO,
        supported_versions: Sequence[str] = SUPPORTED_VERSIONS,
        first_id: int = 1,
    ) -> None:
        caps = dict(capabilities or {})
        for name, value in caps.items():
            if not isinstance(value, dict):
                raise ValueError(f"capability {name!r} must be a JSON object such as {{}}")
        self.protocol_version = protocol_version
        self.supported_versions = tuple(supported_versions)
        self.capabilities = caps
        if isinstance(client_info, BaseModel):
            client_info = to_wire(client_info)
        self.client_info = dict(client_info) if client_info is not None else None
        self._ids: Iterator[int] = itertools.count(first_id)

    def negotiate(self, error: McpRemoteError) -> str:
        """VER-2: after ``-32022``, switch every later request to the first of our versions
        the server supports (``choose_version``); return it."""
        self.protocol_version = choose_version(error, self.supported_versions)
        return self.protocol_version

    def next_id(self) -> int:
        """A JSON-RPC id never used before by this client (CORE-3, MRTR-C3)."""
        return next(self._ids)

    def meta(self) -> dict[str, Any]:
        """A new ``_meta`` object (CORE-10, CORE-12); deep copies, so no two requests share
        a mutable part."""
        meta: dict[str, Any] = {
            META_PROTOCOL_VERSION: self.protocol_version,
            META_CLIENT_CAPABILITIES: copy.deepcopy(self.capabilities),
        }
        if self.client_info is not None:
            meta[META_CLIENT_INFO] = copy.deepcopy(self.client_info)
        return meta

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        extra_meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``{"jsonrpc", "id", "method", "params": {"_meta": ..., **params}}``.

        ``params`` always exists because ``_meta`` is required (CORE-7). ``extra_meta`` adds
        optional keys such as ``progressToken`` or ``io.modelcontextprotocol/logLevel``.
        """
        meta = self.meta()
        for key, value in (extra_meta or {}).items():
            if key in (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES):
                raise ValueError(f"{key} is set by the client itself (CORE-10)")
            meta[key] = copy.deepcopy(value)
        body = {k: v for k, v in (params or {}).items() if k != "_meta"}
        return {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": method,
            "params": {"_meta": meta, **body},
        }


# --- reading a response -----------------------------------------------------------------------


@dataclass(frozen=True)
class Complete:
    """A final result (``resultType`` ``"complete"``, or absent: RT-2)."""

    result: dict[str, Any]


@dataclass(frozen=True)
class NeedsInput:
    """An ``InputRequiredResult``: what the server asks for, and the state to echo.

    ``input_requests`` is ``{}`` for a state-only result ("call me again", MRTR-C1).
    ``request_state`` is the very string object received, or ``None`` when the result had
    none (MRTR-C2).
    """

    input_requests: dict[str, dict[str, Any]]
    request_state: str | None
    result: dict[str, Any]

    @property
    def is_state_only(self) -> bool:
        return not self.input_requests


Outcome = Complete | NeedsInput


def result_of(response: Mapping[str, Any], *, http_status: int | None = None) -> dict[str, Any]:
    """The ``result`` of a JSON-RPC response; an ``error`` is raised as ``McpRemoteError``
    carrying the peer's code, message and data (ERR-4)."""
    if "error" in response:
        raise McpRemoteError.from_error_object(response["error"], http_status=http_status)
    result = response.get("result")
    if not isinstance(result, dict):
        raise ProtocolViolation(f"a response needs a result object or an error: {response!r}")
    return result


def interpret_result(method: str, result: Any) -> Outcome:
    """Classify the result of a ``method`` request (§2.5, §5, §6.5)."""
    if not isinstance(result, dict):
        raise ProtocolViolation(f"{method}: result must be a JSON object")
    result_type = result.get("resultType", RESULT_COMPLETE)  # RT-2: absent = complete
    if result_type == RESULT_COMPLETE:
        return Complete(result)
    if result_type != RESULT_INPUT_REQUIRED:
        # RT-3: no extension adding result types is negotiated by this client.
        raise ProtocolViolation(f"{method}: unknown resultType {result_type!r} (RT-3)")
    if method not in MRTR_METHODS:
        raise ProtocolViolation(f"{method} may not answer input_required (MRTR-R3)")

    requests = result.get("inputRequests", {})
    if not isinstance(requests, dict):
        raise ProtocolViolation(f"{method}: inputRequests must be an object")
    for key, request in requests.items():
        # MRTR-S2b: each value is a bare {method, params} of one of three kinds.
        if not isinstance(request, dict) or request.get("method") not in INPUT_REQUEST_METHODS:
            raise ProtocolViolation(
                f"{method}: inputRequests[{key!r}] is not an elicitation/create, "
                "sampling/createMessage or roots/list request (MRTR-S2b)"
            )
    if "requestState" in result and not isinstance(result["requestState"], str):
        raise ProtocolViolation(f"{method}: requestState must be a string")
    state = result.get("requestState")
    if not requests and state is None:
        raise ProtocolViolation(
            f"{method}: input_required with neither inputRequests nor requestState (MRTR-S6)"
        )
    return NeedsInput(dict(requests), state, result)


# --- what to do next: the steps a driver acts on ----------------------------------------------


@dataclass(frozen=True)
class AnswerContext:
    """Who is asking, for a handler that shows the question to a person (ELIC-15)."""

    key: str  # the inputRequests key being answered
    method: str  # the logical call: tools/call, prompts/get or resources/read
    target: str | None  # its tool/prompt name or resource URI
    round: int  # the round whose result asked
    server_info: dict[str, Any] | None  # result _meta serverInfo, self-reported (CORE-13)


@dataclass(frozen=True)
class Question:
    """One input request of a round, with who is asking."""

    key: str
    request: dict[str, Any]  # the bare {method, params} of an inputRequests value
    context: AnswerContext


@dataclass(frozen=True)
class Resend:
    """Send ``request`` and ``receive`` its response: the same round again, rebuilt under a
    fresh id with a protocol version the server supports (VER-2). Not a new round."""

    request: dict[str, Any]


@dataclass(frozen=True)
class AnswerThese:
    """The server asked for input: produce an answer for every question, then
    ``call.retry_request(answers)`` with all of them (MRTR-C1, MRTR-C6)."""

    questions: tuple[Question, ...]

    @property
    def requests(self) -> dict[str, dict[str, Any]]:
        return {q.key: q.request for q in self.questions}


@dataclass(frozen=True)
class RetryStateOnly:
    """A state-only result ("call me again", MRTR-C1): wait ``delay_s`` seconds, then send
    ``call.retry_request()``. The delay grows over consecutive state-only rounds (MRTR-C7)."""

    delay_s: float


@dataclass(frozen=True)
class GiveUp:
    """Stop: the server wants another round the client will not send (the round limit,
    MRTR-C7). Raise or show ``error``; nothing more goes to the server."""

    error: McpClientError


@dataclass(frozen=True)
class Done:
    """The final result. ``cacheable`` says whether a cache may keep it (MRTR-C9)."""

    result: dict[str, Any]
    cacheable: bool = False


Step = Resend | AnswerThese | RetryStateOnly | GiveUp | Done


def check_response_id(request_id: Any, response: Mapping[str, Any]) -> None:
    """CORE-4: a response echoes the id of the request it answers. A response without one
    (a server that could not read the request) is that server's error, not a mismatch."""
    rid = response.get("id")
    if rid is not None and rid != request_id:
        raise ProtocolViolation(f"response id {rid!r} does not match request id {request_id!r}")


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


# --- one request and its response ------------------------------------------------------------


class CallStatus(Enum):
    NEW = "new"  # nothing sent yet
    AWAITING = "awaiting"  # a request is out, its response not yet received
    INPUT_REQUIRED = "input_required"  # the server asked for input; retry next
    COMPLETE = "complete"  # done: ``result`` holds the answer
    FAILED = "failed"  # the server answered with a JSON-RPC error


class Exchange(ABC):
    """What every request of the client shares: a fresh id and ``_meta`` each time it is built
    (CORE-3, CORE-10), the response-id check (CORE-4), reading the result (RT-2, RT-3) and
    the one resend after an unsupported protocol version (VER-2).

    Sans-IO: ``first_request()`` returns the request dict; ``receive(response)`` takes the
    response dict and returns the next ``Step``. Whatever moves them decides how.
    """

    def __init__(
        self, factory: RequestFactory, method: str, extra_meta: Mapping[str, Any] | None
    ) -> None:
        self.method = method
        self.extra_meta = dict(extra_meta or {})  # e.g. a progressToken, on every request
        self.rounds = 0  # rounds sent so far (a resend of the same round does not count)
        self.status = CallStatus.NEW
        self.outcome: Outcome | None = None
        self.request: dict[str, Any] = {}  # the latest request built ({} before the first)
        self._factory = factory
        self._step: Step | None = None
        self._pending_id: Any = None
        self._renegotiated = False  # VER-2: once per round

    @property
    def step(self) -> Step | None:
        """What to do next, from the latest response; ``None`` before one arrived (or after
        a failed one)."""
        return self._step

    def first_request(self) -> dict[str, Any]:
        """Round 1: the original request, with no answers and no state."""
        if self.status is not CallStatus.NEW:
            raise RuntimeError("first_request() was already called for this call")
        return self._next_round()

    def resend_request(self) -> dict[str, Any]:
        """The current round again under a fresh id and ``_meta`` — after version
        negotiation (VER-2) or a lost response stream (HTTP-26). Not a new round."""
        if self.status not in (CallStatus.AWAITING, CallStatus.FAILED):
            raise RuntimeError(f"nothing to resend: the call is {self.status.value}")
        return self._send()

    def receive(self, response: Mapping[str, Any], *, http_status: int | None = None) -> Step:
        """Take the JSON-RPC response to the last request built; return what to do next.

        Raises ``McpRemoteError`` for an error response (``http_status`` is kept on it),
        ``ProtocolViolation`` for a response the protocol does not allow and
        ``NoMutualVersion`` when no protocol version fits (VER-2).
        """
        if self.status is not CallStatus.AWAITING:
            raise RuntimeError(f"no request is awaiting a response: the call is {self.status}")
        check_response_id(self._pending_id, response)
        self._step = None
        try:
            resend = self._version_resend(response, http_status)
            if resend is not None:
                self._step = resend
                return resend
            outcome = interpret_result(self.method, result_of(response, http_status=http_status))
        except McpClientError:
            self.status = CallStatus.FAILED
            raise
        self.outcome = outcome
        self._step = step = self._step_after(outcome)
        return step

    def _version_resend(
        self, response: Mapping[str, Any], http_status: int | None
    ) -> Resend | None:
        """VER-2: on the first ``-32022`` of a round, switch to a version the server lists in
        ``data.supported`` and build the round again; a second one is the server's error."""
        error = response.get("error")
        if not isinstance(error, dict) or error.get("code") != UNSUPPORTED_PROTOCOL_VERSION:
            return None
        if self._renegotiated:
            return None
        self._renegotiated = True
        self._factory.negotiate(McpRemoteError.from_error_object(error, http_status=http_status))
        return Resend(self._send())

    @abstractmethod
    def _step_after(self, outcome: Outcome) -> Step:
        """The step after a result: sets the status to match."""

    @abstractmethod
    def _params(self) -> dict[str, Any]:
        """The params of the round being sent (without ``_meta``)."""

    def _next_round(self) -> dict[str, Any]:
        self.rounds += 1
        self._renegotiated = False
        return self._send()

    def _send(self) -> dict[str, Any]:
        # A fresh id (CORE-3, MRTR-C3) and a fresh _meta (CORE-10) every time.
        request = self._factory.request(self.method, self._params(), self.extra_meta)
        self.request = request
        self._pending_id = request["id"]
        self.status = CallStatus.AWAITING
        return request


class PlainRequest(Exchange):
    """A request of any method but the three MRTR ones: one round, a complete result."""

    def __init__(
        self,
        factory: RequestFactory,
        method: str,
        params: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if method in MRTR_METHODS:
            raise ValueError(f"{method} can need several rounds: use call_tool / begin_* instead")
        super().__init__(factory, method, meta)
        self._body = copy.deepcopy(dict(params or {}))

    def _params(self) -> dict[str, Any]:
        return copy.deepcopy(self._body)

    def _step_after(self, outcome: Outcome) -> Step:
        # interpret_result refuses input_required for these methods (MRTR-R3).
        assert isinstance(outcome, Complete)
        self.status = CallStatus.COMPLETE
        return Done(outcome.result, may_cache(self.request, outcome))


def answer_to_wire(answer: Any) -> Any:
    """Accept pydantic answers (``ElicitResult`` etc.) as well as plain dicts."""
    if isinstance(answer, BaseModel):
        return to_wire(answer)
    return answer


AnswerCheck = Callable[[dict[str, Any], Any], dict[str, Any]]


class MrtrCall(Exchange):
    """One logical ``tools/call``, ``prompts/get`` or ``resources/read`` and all its rounds.

    ``receive(response)`` returns the next ``Step``: ``AnswerThese`` (answer, then
    ``retry_request(answers)``), ``RetryStateOnly`` (wait, then ``retry_request()``),
    ``Resend`` (send that request), ``GiveUp`` (the round limit) or ``Done``.

    The call owns its ``inputRequests`` and ``requestState``; nothing is shared with other
    calls, so a parallel call can never pick up another's state (MRTR-C4).
    """

    def __init__(
        self,
        factory: RequestFactory,
        method: str,
        params: Mapping[str, Any],
        *,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        meta: Mapping[str, Any] | None = None,
        state_only_backoff_s: float = DEFAULT_STATE_ONLY_BACKOFF_S,
    ) -> None:
        if method not in MRTR_METHODS:
            raise ValueError(f"{method} is not one of {sorted(MRTR_METHODS)}")
        reserved = [k for k in RESERVED_CALL_PARAMS if k in params]
        if reserved:
            raise ValueError(f"params must not contain {reserved}: each round adds its own")
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        super().__init__(factory, method, meta)
        # MRTR-C5: a private deep copy, so every round repeats exactly the original params
        # even if the caller later mutates the dict it passed in.
        self._original = copy.deepcopy(dict(params))
        self.max_rounds = max_rounds
        self.state_only_backoff_s = state_only_backoff_s
        self._state_only_streak = 0  # consecutive state-only results (MRTR-C7 backoff)
        self._answers: dict[str, Any] | None = None  # for the round being sent
        self._state: str | None = None  # for the round being sent

    # -- constructors for the three MRTR methods ----------------------------------------------

    @classmethod
    def tool(
        cls,
        factory: RequestFactory,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        **kw: Any,
    ) -> MrtrCall:
        return cls(factory, "tools/call", {"name": name, "arguments": dict(arguments or {})}, **kw)

    @classmethod
    def prompt(
        cls,
        factory: RequestFactory,
        name: str,
        arguments: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> MrtrCall:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return cls(factory, "prompts/get", params, **kw)

    @classmethod
    def resource(cls, factory: RequestFactory, uri: str, **kw: Any) -> MrtrCall:
        return cls(factory, "resources/read", {"uri": uri}, **kw)

    # -- what the call knows -----------------------------------------------------------------

    @property
    def target(self) -> str | None:
        """The tool or prompt name, or the resource URI."""
        return self._original.get("uri" if self.method == "resources/read" else "name")

    @property
    def params(self) -> dict[str, Any]:
        """A copy of the original params (no ``_meta``, answers or state)."""
        return copy.deepcopy(self._original)

    @property
    def result(self) -> dict[str, Any] | None:
        """The final result once the call is complete, else ``None``."""
        return self.outcome.result if isinstance(self.outcome, Complete) else None

    @property
    def input_required(self) -> NeedsInput | None:
        """The latest ``InputRequiredResult`` while the call waits for answers, else ``None``."""
        if self.status is CallStatus.INPUT_REQUIRED and isinstance(self.outcome, NeedsInput):
            return self.outcome
        return None

    @property
    def is_complete(self) -> bool:
        return self.status is CallStatus.COMPLETE

    # -- building requests -------------------------------------------------------------------

    def retry_request(
        self, answers: Mapping[str, Any] | None = None, *, check: AnswerCheck | None = None
    ) -> dict[str, Any]:
        """The next round, answering the latest ``inputRequests``.

        ``answers`` maps each requested key to its answer (a dict, or an ``ElicitResult`` /
        ``CreateMessageResult`` / ``ListRootsResult``). A declined or cancelled elicitation
        is an answer like any other (MRTR-C8). For a state-only result pass nothing.
        ``check(request, answer)`` validates one answer against its request and returns its
        wire form (``answers.check_answer``: ELIC-14).
        """
        needs = self.input_required
        if needs is None:
            raise RuntimeError(f"nothing to retry: the call is {self.status.value}")
        if self.rounds >= self.max_rounds:  # MRTR-C7
            raise TooManyRounds(self.method, self.target, self.max_rounds)
        self._answers = self._check_answers(needs, answers, check)
        self._state = needs.request_state  # MRTR-C2: the received object itself, or None
        return self._next_round()

    def refuse(self, key: str) -> McpClientError:
        """The error for giving no answer to ``key`` of the latest round (MRTR-C8, see
        ``refusal``). Nothing is sent; the call can still be answered later."""
        needs = self.input_required
        if needs is None or key not in needs.input_requests:
            raise RuntimeError(f"{key!r} is not asked in this round of the call")
        return refusal(key, needs.input_requests[key])

    @staticmethod
    def _check_answers(
        needs: NeedsInput, answers: Mapping[str, Any] | None, check: AnswerCheck | None
    ) -> dict[str, Any] | None:
        given = dict(answers or {})
        asked = set(needs.input_requests)
        missing = asked - set(given)
        unexpected = set(given) - asked
        if missing or unexpected:
            # MRTR-C1/C6: every requested key answered; MRTR-C4/C6: nothing else — an extra key
            # is usually an answer meant for another call or an earlier round.
            raise InvalidAnswers(
                f"answers must cover exactly the requested keys {sorted(asked)}; "
                f"missing {sorted(missing)}, unexpected {sorted(unexpected)} (MRTR-C1, MRTR-C6)",
                missing=missing,
                unexpected=unexpected,
            )
        if check is not None:
            given = {key: check(needs.input_requests[key], value) for key, value in given.items()}
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

    def _params(self) -> dict[str, Any]:
        params = copy.deepcopy(self._original)  # MRTR-C5: same method, name/uri, arguments
        if self._answers is not None:
            params["inputResponses"] = copy.deepcopy(self._answers)
        if self._state is not None:
            # MRTR-C2: the exact string received — not parsed, not copied, not re-encoded.
            # When the last result had no requestState, the key is absent (never null).
            params["requestState"] = self._state
        return params

    # -- reading the response ----------------------------------------------------------------

    def _step_after(self, outcome: Outcome) -> Step:
        if isinstance(outcome, Complete):
            self.status = CallStatus.COMPLETE
            return Done(outcome.result, may_cache(self.request, outcome))
        self.status = CallStatus.INPUT_REQUIRED
        if self.rounds >= self.max_rounds:  # MRTR-C7: no round beyond the limit
            return GiveUp(TooManyRounds(self.method, self.target, self.max_rounds))
        if outcome.is_state_only:
            self._state_only_streak += 1  # MRTR-C1 allows a retry at once; C7 backs off
            delay = state_only_delay(self._state_only_streak, base_s=self.state_only_backoff_s)
            return RetryStateOnly(delay)
        self._state_only_streak = 0
        meta = outcome.result.get("_meta")
        server_info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        return AnswerThese(
            tuple(
                Question(
                    key,
                    request,
                    AnswerContext(key, self.method, self.target, self.rounds, server_info),
                )
                for key, request in outcome.input_requests.items()
            )
        )

    def __repr__(self) -> str:
        return (
            f"<MrtrCall {self.method} {self.target!r} round {self.rounds}/{self.max_rounds} "
            f"{self.status.value}>"
        )


# --- helpers for the transport -------------------------------------------------------------------


def choose_version(error: McpRemoteError, ours: Sequence[str]) -> str:
    """After ``-32022``: the first of our versions (in preference order) the server lists in
    ``data.supported`` (VER-2). Raises ``NoMutualVersion`` when none fits."""
    if error.code != UNSUPPORTED_PROTOCOL_VERSION:
        raise ValueError(f"not an UnsupportedProtocolVersion error: {error.code}")
    data = error.data if isinstance(error.data, dict) else {}
    supported = data.get("supported")
    if not isinstance(supported, list) or not all(isinstance(v, str) for v in supported):
        raise ProtocolViolation("-32022 error without a data.supported string list (ERR-1)")
    for version in ours:
        if version in supported:
            return version
    raise NoMutualVersion(ours, supported)


def may_cache(request: Mapping[str, Any], outcome: Outcome) -> bool:
    """Whether a cache may keep this result (MRTR-C9).

    Never an ``input_required`` result (CACHE-2), never the result of a request that carried
    ``inputResponses`` or ``requestState`` — its inputs are not in any cache key (CACHE-3) —
    and only for the cacheable methods (CACHE-1, CACHE-6). The kit's session caches nothing;
    this is the rule a caching client would apply.
    """
    if not isinstance(outcome, Complete):
        return False
    params = request.get("params") or {}
    if "inputResponses" in params or "requestState" in params:
        return False
    return request.get("method") in CACHEABLE_METHODS


def state_only_delay(
    consecutive: int, *, base_s: float = DEFAULT_STATE_ONLY_BACKOFF_S, cap_s: float = 2.0
) -> float:
    """Seconds to wait before retrying after the ``consecutive``-th state-only result in a row:
    exponential backoff, so a server that keeps saying "call me again" is not hammered
    (MRTR-C7)."""
    if consecutive < 1:
        return 0.0
    return min(cap_s, base_s * 2.0 ** (consecutive - 1))


def encode_request(request: Mapping[str, Any]) -> bytes:
    """The request as UTF-8 JSON bytes (CORE-1).

    Text goes out as UTF-8. A string holding a lone surrogate (a server may send a
    ``requestState`` like ``"\\ud800"``) has no UTF-8 form, yet MRTR-C2 says echo it exactly:
    then the whole body is written with ``\\uXXXX`` escapes, which carry the same string in
    plain ASCII. NaN, Infinity and non-JSON values raise ``NotJson``.
    """
    try:
        text = json.dumps(request, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise NotJson(f"{request.get('method')}: the request is not JSON: {exc}") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(request, ensure_ascii=True, allow_nan=False).encode("ascii")


# --- what a caching client would keep (CACHE-1..7) ------------------------------------------


CacheKey = tuple[str, str, str | None]


def cache_key(request: Mapping[str, Any]) -> CacheKey | None:
    """CACHE-4: the key of a cacheable request: its method plus the params that change the
    result (``uri`` for ``resources/read``, ``cursor`` for a list page; ``server/discover``
    has none). Ids, ``_meta`` and anything else are not part of it. None for a request whose
    result may never be cached (CACHE-6, or one carrying MRTR inputs, CACHE-3)."""
    method = request.get("method")
    params = request.get("params") or {}
    if method not in CACHEABLE_METHODS:
        return None
    if "inputResponses" in params or "requestState" in params:
        return None
    if method == "resources/read":
        return (method, "uri", str(params.get("uri")))
    cursor = params.get("cursor")  # None (the first page) is a key of its own, apart from ""
    return (method, "cursor", None if cursor is None else str(cursor))


def fresh_for_ms(result: Mapping[str, Any]) -> int:
    """CACHE-5: how long a result stays fresh, read defensively: ``ttlMs`` absent, not a whole
    number, or negative all count as 0 (stale at once)."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 0:
        return 0
    return ttl


class ResultCache:
    """A sans-IO result cache for one client (one authorisation context, so ``private``
    results may be reused too; CACHE-1). ``now`` is injectable; milliseconds, monotonic.

    Keeps only what ``may_cache`` allows (MRTR-C9), under ``cache_key`` (CACHE-4), and serves
    an entry only while ``now < received + ttlMs`` (CACHE-5). ``McpClient(cache=...)`` uses it
    for plain requests; the kit's client caches nothing unless given one.
    """

    def __init__(self, now: Callable[[], float] | None = None) -> None:
        self._now = now or (lambda: time.monotonic() * 1000)
        self._entries: dict[CacheKey, tuple[float, dict[str, Any]]] = {}

    def store(self, request: Mapping[str, Any], outcome: Outcome) -> bool:
        """Keep ``outcome`` if a cache may; True when kept."""
        key = cache_key(request)
        if key is None or not may_cache(request, outcome):
            return False
        ttl = fresh_for_ms(outcome.result)
        if ttl == 0:
            self._entries.pop(key, None)
            return False
        self._entries[key] = (self._now() + ttl, copy.deepcopy(outcome.result))
        return True

    def lookup(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """A fresh result stored for this very method and params, else None."""
        key = cache_key(request)
        if key is None or key not in self._entries:
            return None
        fresh_until, result = self._entries[key]
        if self._now() >= fresh_until:
            del self._entries[key]
            return None
        return copy.deepcopy(result)

    def clear(self) -> None:
        """Forget everything (e.g. on a list_changed notification, CACHE-5)."""
        self._entries.clear()
