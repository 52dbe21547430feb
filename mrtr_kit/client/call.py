"""One request and its response, and one MRTR call across its rounds. No I/O.

* ``Exchange`` — what every request shares: a fresh id and ``_meta`` each time it is built
  (CORE-3, CORE-10), the response-id check (CORE-4), reading the result (RT-2, RT-3) and the
  one resend after ``-32022`` (VER-2). Its ``status`` moves only by the table in
  ``transitions.py``;
* ``PlainRequest`` — any method but the three MRTR ones: one round, a complete result;
* ``MrtrCall`` — one logical ``tools/call``, ``prompts/get`` or ``resources/read``: the same
  method and target every round (MRTR-C5), the answers checked as a set (MRTR-C1, MRTR-C6,
  ``answers.retry_answers``), ``requestState`` echoed untouched or left out (MRTR-C2), state
  private to the call (MRTR-C4), a round limit and a backoff on state-only rounds (MRTR-C7);
  ``receive(response)`` returns the next ``Step`` (``steps.py``).

A transport (``session.McpClient``, or a notebook cell) moves the dicts built here and acts
on the steps; it decides nothing about the protocol itself.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..protocol.constants import META_SERVER_INFO, MRTR_METHODS
from ..protocol.errors import UNSUPPORTED_PROTOCOL_VERSION
from .answers import AnswerCheck, refusal, retry_answers
from .cache import may_cache
from .errors import McpClientError, McpRemoteError, TooManyRounds
from .factory import RequestFactory
from .results import Complete, NeedsInput, Outcome, check_response_id, interpret_result, result_of
from .steps import (
    DEFAULT_STATE_ONLY_BACKOFF_S,
    AnswerContext,
    AnswerThese,
    Done,
    GiveUp,
    Question,
    Resend,
    RetryStateOnly,
    Step,
    state_only_delay,
)
from .transitions import CallStatus, Event, next_status

DEFAULT_MAX_ROUNDS = 10  # MRTR-C7 (KIT): rounds per logical call before the client gives up
RESERVED_CALL_PARAMS = ("_meta", "inputResponses", "requestState")


class Exchange(ABC):
    """What every request of the client shares: a fresh id and ``_meta`` each time it is built
    (CORE-3, CORE-10), the response-id check (CORE-4), reading the result (RT-2, RT-3) and
    the one resend after an unsupported protocol version (VER-2).

    Sans-IO: ``first_request()`` returns the request dict; ``receive(response)`` takes the
    response dict and returns the next ``Step``. Whatever moves them decides how.

    ``status`` changes only by the table of ``transitions.py``, entered in ``_transition``
    (or ``_fire``): a method called in a state where the table has no row for its event raises
    ``IllegalTransition`` (a ``RuntimeError``) before it does anything.
    """

    def __init__(
        self, factory: RequestFactory, method: str, extra_meta: Mapping[str, Any] | None
    ) -> None:
        """``factory`` builds each request (ids, ``_meta``); ``extra_meta`` is added to the
        ``_meta`` of every request."""
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
        with self._transition(Event.FIRST_REQUEST):
            request = self._next_round()
        return request

    def resend_request(self) -> dict[str, Any]:
        """The current round again under a fresh id and ``_meta`` — after version
        negotiation (VER-2) or a lost response stream (HTTP-26). Not a new round."""
        with self._transition(Event.RESEND):
            request = self._send()
        return request

    def receive(self, response: Mapping[str, Any], *, http_status: int | None = None) -> Step:
        """Take the JSON-RPC response to the last request built; return what to do next.

        Raises ``McpRemoteError`` for an error response (``http_status`` is kept on it),
        ``ProtocolViolation`` for a response the protocol does not allow and
        ``NoMutualVersion`` when no protocol version fits (VER-2).
        """
        self._fire(Event.RESPONSE)
        check_response_id(self._pending_id, response)
        self._step = None
        try:
            error = self._first_version_error(response)
            if error is not None:
                with self._transition(Event.UNSUPPORTED_VERSION):
                    resend = self._version_resend(error, http_status)
                self._step = resend
                return resend
            outcome = interpret_result(self.method, result_of(response, http_status=http_status))
        except McpClientError:
            self._fire(Event.ERROR)
            raise
        self.outcome = outcome
        self._fire(Event.COMPLETE if isinstance(outcome, Complete) else Event.INPUT_REQUIRED)
        self._step = step = self._step_after(outcome)
        return step

    @contextmanager
    def _transition(self, event: Event) -> Iterator[None]:
        """The one place ``status`` changes after a call's work: the next state is looked up
        in ``TRANSITIONS`` first (an illegal ``event`` raises before the block runs) and
        entered when the block ends. A block that raises leaves the state as it was, so a
        refused retry (``InvalidAnswers``, ``TooManyRounds``) can still be answered."""
        after = next_status(self.status, event)
        yield
        self.status = after

    def _fire(self, event: Event) -> None:
        """``_transition`` for an event with no work of its own."""
        self.status = next_status(self.status, event)

    def _first_version_error(self, response: Mapping[str, Any]) -> dict[str, Any] | None:
        """The ``-32022`` error object of ``response`` if it is the round's first (VER-2: a
        second one is the server's error), else ``None``."""
        error = response.get("error")
        if not isinstance(error, dict) or error.get("code") != UNSUPPORTED_PROTOCOL_VERSION:
            return None
        if self._renegotiated:
            return None
        return error

    def _version_resend(self, error: dict[str, Any], http_status: int | None) -> Resend:
        """VER-2: switch to a version the server lists in ``data.supported`` and build the
        round again."""
        self._renegotiated = True
        self._factory.negotiate(McpRemoteError.from_error_object(error, http_status=http_status))
        return Resend(self._send())

    @abstractmethod
    def _step_after(self, outcome: Outcome) -> Step:
        """The step after a result (the status was already set by ``receive``)."""

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
        """One ``method`` request with ``params`` (copied) and extra ``meta`` keys.

        Raises ``ValueError`` for the three MRTR methods: use ``MrtrCall`` for them."""
        if method in MRTR_METHODS:
            raise ValueError(f"{method} can need several rounds: use call_tool / begin_* instead")
        super().__init__(factory, method, meta)
        self._body = copy.deepcopy(dict(params or {}))

    def _params(self) -> dict[str, Any]:
        return copy.deepcopy(self._body)

    def _step_after(self, outcome: Outcome) -> Step:
        # interpret_result refuses input_required for these methods (MRTR-R3).
        assert isinstance(outcome, Complete)
        return Done(outcome.result, may_cache(self.request, outcome))


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
        """A call of ``method`` (one of the three MRTR methods) with its original ``params``.

        The params are deep-copied and repeated on every round (MRTR-C5); they must not hold
        ``_meta``, ``inputResponses`` or ``requestState``. ``max_rounds`` (>= 1) is the round
        limit and ``state_only_backoff_s`` the pause before a state-only retry (MRTR-C7);
        ``meta`` adds ``_meta`` keys to every round. Raises ``ValueError`` for bad arguments."""
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
        """A ``tools/call`` of ``name`` with ``arguments``; ``kw`` as for the constructor."""
        return cls(factory, "tools/call", {"name": name, "arguments": dict(arguments or {})}, **kw)

    @classmethod
    def prompt(
        cls,
        factory: RequestFactory,
        name: str,
        arguments: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> MrtrCall:
        """A ``prompts/get`` of ``name`` with string ``arguments``; ``kw`` as for ``__init__``."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return cls(factory, "prompts/get", params, **kw)

    @classmethod
    def resource(cls, factory: RequestFactory, uri: str, **kw: Any) -> MrtrCall:
        """A ``resources/read`` of ``uri``; ``kw`` as for the constructor."""
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
        """True once the final result has arrived (``result`` holds it)."""
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
        with self._transition(Event.RETRY):
            needs = self.outcome
            assert isinstance(needs, NeedsInput)  # INPUT_REQUIRED comes with its NeedsInput
            if self.rounds >= self.max_rounds:  # MRTR-C7
                raise TooManyRounds(self.method, self.target, self.max_rounds)
            self._answers = retry_answers(needs.input_requests, answers, check)
            self._state = needs.request_state  # MRTR-C2: the received object itself, or None
            request = self._next_round()
        return request

    def refuse(self, key: str) -> McpClientError:
        """The error for giving no answer to ``key`` of the latest round (MRTR-C8, see
        ``refusal``). Nothing is sent; the call can still be answered later."""
        needs = self.input_required
        if needs is None or key not in needs.input_requests:
            raise RuntimeError(f"{key!r} is not asked in this round of the call")
        return refusal(key, needs.input_requests[key])

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
            return Done(outcome.result, may_cache(self.request, outcome))
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
