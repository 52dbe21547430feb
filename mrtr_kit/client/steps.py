"""What to do next: the steps ``receive(response)`` returns and a driver acts on. No I/O.

``AnswerThese`` (questions, each with its ``AnswerContext``), ``RetryStateOnly`` (after a delay
that grows, ``state_only_delay``: MRTR-C7), ``Resend`` (the same round again, VER-2),
``GiveUp`` (the round limit, MRTR-C7) or ``Done`` (with whether a cache may keep the result,
MRTR-C9). A transport (``session.McpClient``, a notebook cell) does what the step says and
decides nothing about the protocol itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import McpClientError

DEFAULT_STATE_ONLY_BACKOFF_S = 0.05  # MRTR-C7 (KIT): the first pause before a state-only retry


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
        """The input requests to answer, by key."""
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


def state_only_delay(
    consecutive: int, *, base_s: float = DEFAULT_STATE_ONLY_BACKOFF_S, cap_s: float = 2.0
) -> float:
    """Seconds to wait before retrying after the ``consecutive``-th state-only result in a row:
    exponential backoff, so a server that keeps saying "call me again" is not hammered
    (MRTR-C7)."""
    if consecutive < 1:
        return 0.0
    return min(cap_s, base_s * 2.0 ** (consecutive - 1))
