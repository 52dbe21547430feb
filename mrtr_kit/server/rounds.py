"""The server's view of each round: one ``ServerRound`` per request the core answered.

``McpServer(observer=f)`` (or ``server.observer = f``) calls ``f(round)`` once per request,
after the reply is built, from ``McpServer.handle`` and nowhere else. The record says what the
operator may see, and no more:

* the request: its id, method, tool/prompt name or resource URI, the client's declared name,
  and for each ``inputResponses`` key only what kind of answer it was (``accept``, ``decline``,
  ``cancel``, or ``answer`` for sampling and roots) - never the answer's content;
* ``requestState``: ``absent``, ``verified``, ``refused`` with the reason in words, or
  ``unchecked`` (the request failed before the state was looked at). The client only ever sees
  the one uniform error (MRTR-S4a; the single error is a kit convention, KIT); the operator may
  know why. Never the key, never the state's contents: the reasons are ``InvalidState``'s;
* the outcome: ``input_required`` (the keys asked, whether a new state was issued),
  ``complete``, or ``error`` with its code and message.

Only what reaches the core is recorded: a request the HTTP adapter refused at its edge (Host or
Origin, authentication, body size, JSON that does not parse) never reaches ``handle``, and
notifications are not answered, so neither is a round here.

No I/O: what an observer does with a record (a list, a JSON line in a file, a log) is its own
business; ``python -m mrtr_kit serve --trace PATH`` appends ``to_json()`` lines to a file. An
observer that raises is logged and ignored: it never changes a reply. With no observer the core
builds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..protocol.constants import META_CLIENT_INFO, RESULT_INPUT_REQUIRED

StateStatus = Literal["absent", "verified", "refused", "unchecked"]
Outcome = Literal["input_required", "complete", "error"]
Observer = Callable[["ServerRound"], None]

TEXT_LIMIT = 120  # client-chosen text (names, reasons quoting a key id) is cut to this length
ANSWER_KINDS = ("accept", "decline", "cancel")


@dataclass(frozen=True)
class ServerRound:
    """One request as the server saw and answered it."""

    at: float  # the server's clock (epoch seconds) when it answered
    id: Any  # the JSON-RPC id, as received (None if unreadable)
    method: str | None
    target: str | None = None  # tool or prompt name, resource URI
    client: str | None = None  # params._meta clientInfo.name, as the client declared it
    answers: Mapping[str, str] = field(default_factory=dict)  # key -> accept/decline/cancel/answer
    state: StateStatus = "absent"
    state_problem: str | None = None  # why a state was refused, for the operator only
    outcome: Outcome = "complete"
    asked: tuple[str, ...] = ()  # inputRequests keys of an input_required result
    state_issued: bool = False  # the input_required result carried a requestState
    error_code: int | None = None
    error_message: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON object (one line of a ``--trace`` file)."""
        out = asdict(self)
        out["answers"] = dict(self.answers)
        out["asked"] = list(self.asked)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerRound:
        """A round back from ``to_json`` data; unknown keys are ignored."""
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["answers"] = dict(known.get("answers") or {})
        known["asked"] = tuple(known.get("asked") or ())
        return cls(**known)


@dataclass
class RoundNotes:
    """What only the pipeline's inside knows, filled in as it runs (observed requests only)."""

    state_verified: bool = False


def _short(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return value if len(value) <= TEXT_LIMIT else value[:TEXT_LIMIT] + "…"


def answer_kind(value: Any) -> str:
    """``accept`` / ``decline`` / ``cancel`` for an ElicitResult, ``answer`` otherwise."""
    action = value.get("action") if isinstance(value, dict) else None
    return action if action in ANSWER_KINDS else "answer"


def build_round(
    message: Any,
    body: Mapping[str, Any],
    notes: RoundNotes,
    refused: str | None,
    at: float,
) -> ServerRound:
    """The record of one answered request, from the message, the reply body, what the
    pipeline noted, and the operator reason of a refused state (or None)."""
    msg = message if isinstance(message, dict) else {}
    params = msg.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    info = meta.get(META_CLIENT_INFO) if isinstance(meta, dict) else None
    responses = params.get("inputResponses")
    answers = (
        {str(k): answer_kind(v) for k, v in responses.items()}
        if isinstance(responses, dict)
        else {}
    )
    state: StateStatus = "absent"
    if refused is not None:
        state = "refused"
    elif notes.state_verified:
        state = "verified"
    elif params.get("requestState") is not None:
        state = "unchecked"
    common: dict[str, Any] = {
        "at": at,
        "id": body.get("id"),
        "method": _short(msg.get("method")),
        "target": _short(params.get("name") or params.get("uri")),
        "client": _short(info.get("name")) if isinstance(info, dict) else None,
        "answers": answers,
        "state": state,
        "state_problem": _short(refused),
    }
    error = body.get("error")
    if isinstance(error, dict):
        return ServerRound(
            **common,
            outcome="error",
            error_code=error.get("code"),
            error_message=_short(error.get("message")),
        )
    result = body.get("result") or {}
    if result.get("resultType") == RESULT_INPUT_REQUIRED:
        return ServerRound(
            **common,
            outcome="input_required",
            asked=tuple(result.get("inputRequests") or ()),
            state_issued="requestState" in result,
        )
    return ServerRound(**common, outcome="complete")


__all__ = ["Observer", "RoundNotes", "ServerRound", "answer_kind", "build_round"]
