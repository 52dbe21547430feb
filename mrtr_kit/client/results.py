"""Reading a response: its id, its ``result`` or ``error``, and what kind of result it is.
No I/O, no state.

* ``check_response_id`` — a response echoes its request's id (CORE-4);
* ``result_of`` — the ``result`` object, or the peer's error raised as ``McpRemoteError``
  (ERR-4);
* ``interpret_result`` — ``Complete`` (also when ``resultType`` is missing, RT-2) or
  ``NeedsInput``; unknown result types (RT-3), ``input_required`` from a method that may not
  send it (MRTR-R3), malformed ``inputRequests`` (MRTR-S2b) and an empty one (MRTR-S6) are
  ``ProtocolViolation``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol.constants import (
    INPUT_REQUEST_METHODS,
    MRTR_METHODS,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
)
from .errors import McpRemoteError, ProtocolViolation


def check_response_id(request_id: Any, response: Mapping[str, Any]) -> None:
    """CORE-4: a response echoes the id of the request it answers. A response without one
    (a server that could not read the request) is that server's error, not a mismatch."""
    rid = response.get("id")
    if rid is not None and rid != request_id:
        raise ProtocolViolation(f"response id {rid!r} does not match request id {request_id!r}")


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
        """True when the result carries no input requests, only a requestState."""
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
