"""JSON-RPC error codes of 2026-07-28 and the one exception type that carries them (§2.6).

An ``McpError`` raised anywhere in the server core becomes one JSON-RPC error response. It also
carries the HTTP status the Streamable HTTP binding prescribes for that failure, because the
spec ties the status to the *reason* (missing ``_meta`` key -> 400, unknown tool -> 200), which
only the code that detects the failure knows.
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Codes a 2026-07-28 peer must never emit (ERR-2): old resource-not-found and URL-elicitation.
LEGACY_RESOURCE_NOT_FOUND = -32002
LEGACY_URL_ELICITATION_REQUIRED = -32042


class McpError(Exception):
    """A JSON-RPC error: ``code``, ``message``, optional ``data``, plus the HTTP status hint."""

    def __init__(
        self, code: int, message: str, data: Any = None, *, http_status: int = 200
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    def to_error_object(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    def __repr__(self) -> str:
        return f"McpError({self.code}, {self.message!r}, data={self.data!r})"


def parse_error(detail: str) -> McpError:
    return McpError(PARSE_ERROR, f"Parse error: {detail}", http_status=400)


def invalid_request(detail: str) -> McpError:
    return McpError(INVALID_REQUEST, f"Invalid Request: {detail}", http_status=400)


def method_not_found(method: str, data: Any = None) -> McpError:
    # HTTP-17: 404 is a MUST; the JSON-RPC body tells it apart from a legacy server's bare 404.
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method}", data, http_status=404)


def invalid_params(message: str, data: Any = None, *, http_status: int = 200) -> McpError:
    return McpError(INVALID_PARAMS, message, data, http_status=http_status)


def missing_meta(detail: str) -> McpError:
    # CORE-11 / HTTP-18: a missing required _meta key is -32602 with HTTP 400.
    return McpError(INVALID_PARAMS, f"Invalid params: {detail}", http_status=400)


def header_mismatch(message: str) -> McpError:
    # ERR-1: -32020 has no defined data.
    return McpError(HEADER_MISMATCH, message, http_status=400)


def missing_capability(required: dict[str, Any], message: str | None = None) -> McpError:
    # ERR-1 / CAP-2: data.requiredCapabilities is a ClientCapabilities-shaped object.
    names = ", ".join(_capability_paths(required)) or "a client capability"
    return McpError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        message or f"This request needs client capability {names}, not declared in this request",
        {"requiredCapabilities": required},
        http_status=400,
    )


def unsupported_version(supported: list[str], requested: str) -> McpError:
    # ERR-1 / VER-1: data.supported (string[]) and data.requested (string).
    return McpError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(supported), "requested": requested},
        http_status=400,
    )


def internal_error() -> McpError:
    # The cause goes to the server log, never onto the wire.
    return McpError(INTERNAL_ERROR, "Internal error")


def _capability_paths(caps: dict[str, Any], prefix: str = "") -> list[str]:
    paths: list[str] = []
    for key, value in caps.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            paths.extend(_capability_paths(value, path + "."))
        else:
            paths.append(path)
    return paths
