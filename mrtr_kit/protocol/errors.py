"""JSON-RPC error codes of 2026-07-28 and the one exception type that carries them (§2.6).

An ``McpError`` raised anywhere in the server core becomes one JSON-RPC error response. It also
carries a ``Reason``: why the request failed, in protocol terms. The Streamable HTTP binding
ties its status to the reason, not to the code alone (-32602 for a missing ``_meta`` key is
400, for an unknown tool 200), and only the code that detects a failure knows its reason; the
table reason -> HTTP status is the HTTP adapter's (``server.http.HTTP_STATUS``).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# KIT-ERR-A: the kit's own code for "a store the request needs is unavailable: retry later".
# Outside -32768..-32000, as ERR-3 asks of application codes.
TRY_AGAIN_LATER = -31000

# Codes a 2026-07-28 peer must never emit (ERR-2): old resource-not-found and URL-elicitation.
LEGACY_RESOURCE_NOT_FOUND = -32002
LEGACY_URL_ELICITATION_REQUIRED = -32042


class Reason(Enum):
    """Why a request failed (§2.6), one member per row of the error table."""

    PARSE_ERROR = "parse error"  # -32700: the body is not JSON
    INVALID_REQUEST = "invalid request"  # -32600: not a JSON-RPC request
    METHOD_NOT_FOUND = "method not found"  # -32601 (HTTP-17)
    # -32602 for the envelope: params not an object or not JSON (MRTR-E2), _meta missing or
    # malformed (CORE-11); the arguments are another reason, INVALID_PARAMS.
    MALFORMED_PARAMS = "malformed params"
    INVALID_PARAMS = "invalid params"  # -32602: unknown tool, bad arguments, bad requestState
    HEADER_MISMATCH = "header mismatch"  # -32020 (HTTP-7, HTTP-14, HTTP-15)
    MISSING_CAPABILITY = "missing client capability"  # -32021 (CAP-2)
    UNSUPPORTED_VERSION = "unsupported protocol version"  # -32022 (VER-1)
    INTERNAL_ERROR = "internal error"  # -32603: the server's fault
    UNAVAILABLE = "temporarily unavailable"  # -31000 (KIT-ERR-A): a store is down; retry
    APPLICATION = "application error"  # any other code a handler raises


# A bare ``McpError(code, ...)`` (a handler's own) gets the reason of its code; the one code
# with two reasons, -32602, defaults to the handler-level one.
_REASON_OF_CODE = {
    PARSE_ERROR: Reason.PARSE_ERROR,
    INVALID_REQUEST: Reason.INVALID_REQUEST,
    METHOD_NOT_FOUND: Reason.METHOD_NOT_FOUND,
    INVALID_PARAMS: Reason.INVALID_PARAMS,
    INTERNAL_ERROR: Reason.INTERNAL_ERROR,
    HEADER_MISMATCH: Reason.HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY: Reason.MISSING_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION: Reason.UNSUPPORTED_VERSION,
    TRY_AGAIN_LATER: Reason.UNAVAILABLE,
}


class McpError(Exception):
    """A JSON-RPC error: ``code``, ``message``, optional ``data``, and why (``reason``)."""

    def __init__(
        self, code: int, message: str, data: Any = None, *, reason: Reason | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.reason = reason or _REASON_OF_CODE.get(code, Reason.APPLICATION)

    def to_error_object(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` object: ``code``, ``message``, and ``data`` when there is one."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    def __repr__(self) -> str:
        return f"McpError({self.code}, {self.message!r}, data={self.data!r})"


def parse_error(detail: str) -> McpError:
    """-32700: the body is not JSON (``detail`` says why)."""
    return McpError(PARSE_ERROR, f"Parse error: {detail}")


def invalid_request(detail: str) -> McpError:
    """-32600: the message is not a JSON-RPC request (``detail`` says why)."""
    return McpError(INVALID_REQUEST, f"Invalid Request: {detail}")


def method_not_found(method: str, data: Any = None) -> McpError:
    """-32601: no such method; ``data`` is passed through as the error's data."""
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method}", data)


def invalid_params(message: str, data: Any = None) -> McpError:
    """-32602 for a handler-level problem: unknown tool, bad arguments, bad requestState."""
    return McpError(INVALID_PARAMS, message, data)


def malformed_params(detail: str) -> McpError:
    # CORE-11 / HTTP-18 / MRTR-E2: the request's envelope, not its arguments, is wrong.
    """-32602 for the request's envelope, not its arguments (CORE-11, HTTP-18, MRTR-E2).

    Its reason is ``Reason.MALFORMED_PARAMS``, which the HTTP binding maps to its own status."""
    return McpError(INVALID_PARAMS, f"Invalid params: {detail}", reason=Reason.MALFORMED_PARAMS)


def header_mismatch(message: str) -> McpError:
    # ERR-1: -32020 has no defined data.
    """-32020: a header disagrees with the body (ERR-1: no data)."""
    return McpError(HEADER_MISMATCH, message)


def missing_capability(required: dict[str, Any], message: str | None = None) -> McpError:
    # ERR-1 / CAP-2: data.requiredCapabilities is a ClientCapabilities-shaped object.
    """-32021: the request needs a client capability it did not declare (CAP-2).

    ``required`` is a ClientCapabilities-shaped object, sent as ``data.requiredCapabilities``; the
    default message names its paths (``elicitation.form``, ...)."""
    names = ", ".join(_capability_paths(required)) or "a client capability"
    return McpError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        message or f"This request needs client capability {names}, not declared in this request",
        {"requiredCapabilities": required},
    )


def unsupported_version(supported: list[str], requested: str) -> McpError:
    # ERR-1 / VER-1: data.supported (string[]) and data.requested (string).
    """-32022: the requested protocol version is not supported (VER-1).

    ``data`` carries ``supported`` (the versions the server speaks) and ``requested``."""
    return McpError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(supported), "requested": requested},
    )


def internal_error() -> McpError:
    # The cause goes to the server log, never onto the wire.
    """-32603 with a fixed message: the cause goes to the server log, never onto the wire."""
    return McpError(INTERNAL_ERROR, "Internal error")


def try_again_later(reason: str, retry_after_s: int) -> McpError:
    # KIT-ERR-A: nothing was done, and the same request may succeed later. ``data`` names
    # why and how long to wait; over HTTP the status is 503 with Retry-After.
    """KIT-ERR-A: -31000, nothing was done and the same request may succeed later.

    ``data`` carries ``reason`` and ``retryAfterMs`` (``retry_after_s`` * 1000); over HTTP the
    status is 503 with Retry-After."""
    return McpError(
        TRY_AGAIN_LATER,
        "Temporarily unavailable: try again later",
        {"reason": reason, "retryAfterMs": retry_after_s * 1000},
    )


def _capability_paths(caps: dict[str, Any], prefix: str = "") -> list[str]:
    paths: list[str] = []
    for key, value in caps.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            paths.extend(_capability_paths(value, path + "."))
        else:
            paths.append(path)
    return paths
