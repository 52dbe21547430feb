"""The HTTP headers a client sends with each request, and the ``tools/list`` filter that keeps
only tools whose headers it can compute (digest §3.2). Pure functions, no I/O.

* ``request_headers`` — ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and
  ``Mcp-Param-*`` for one JSON-RPC request (HTTP-4, HTTP-7, HTTP-11, HTTP-12).
* ``encode_header_value`` / ``param_header_value`` — the value encoding of HTTP-9.
* ``header_annotations`` / ``filter_tools`` — where a tool's ``x-mcp-header`` annotations
  point, and dropping tools whose annotations are invalid (HTTP-13).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol import constants as c

# HTTP-13's validity rules are shared with the server, which refuses to register what a client
# would drop; they are re-exported here, where the client's API has always had them.
from ..protocol.param_headers import (
    HeaderMap,
    InvalidHeaderAnnotation,
    PropertyPath,
    header_annotations,
)
from .errors import HeaderValueError

log = logging.getLogger("mrtr_kit.client")

_SENTINEL_START, _SENTINEL_END = "=?base64?", "?="
MAX_SAFE_INTEGER = 2**53 - 1  # HTTP-13: integers must survive a JavaScript number


# --- HTTP-9: value encoding ---------------------------------------------------------------


def _is_plain(value: str) -> bool:
    """Plain header-safe ASCII: printable 0x20-0x7E, no leading or trailing space.

    HTTP-9 also lets a tab through, but the conformance suite expects tabs encoded
    (CONFORMANCE §7.4) and encoding is always safe, so a tab makes a value non-plain here.
    """
    printable = all(0x20 <= ord(ch) <= 0x7E for ch in value)
    return printable and value == value.strip(" ")


def _looks_encoded(value: str) -> bool:
    return value.startswith(_SENTINEL_START) and value.endswith(_SENTINEL_END)


def encode_header_value(value: str) -> str:
    """``value`` as it goes into ``Mcp-Name`` or ``Mcp-Param-*`` (HTTP-9).

    Plain ASCII passes unchanged (``""`` stays an empty, present header). Anything else —
    non-ASCII, control characters, tab, CR/LF, leading/trailing space, or a plain value that
    itself looks like the sentinel — is sent as ``=?base64?<base64 of UTF-8>?=``.
    """
    if _is_plain(value) and not _looks_encoded(value):
        return value
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError:
        raise HeaderValueError(f"{value!r} holds a lone surrogate: it has no UTF-8 form") from None
    return _SENTINEL_START + base64.b64encode(raw).decode("ascii") + _SENTINEL_END


def param_header_value(value: Any) -> str | None:
    """An argument value as an ``Mcp-Param-*`` value; ``None`` means "send no header" (HTTP-12).

    Strings are encoded per HTTP-9, integers in decimal, booleans as ``true``/``false``.
    """
    if value is None:
        return None  # HTTP-12: absent or null -> no header
    if isinstance(value, bool):  # before int: True is an int in Python
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 42.0 in a JSON body is the integer 42
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise HeaderValueError(f"integer {value} is outside ±(2^53-1) (HTTP-13)")
        return str(value)
    if isinstance(value, str):
        return encode_header_value(value)
    raise HeaderValueError(
        f"a {type(value).__name__} cannot go into an Mcp-Param header; "
        "only strings, integers and booleans can (HTTP-9)"
    )


@dataclass(frozen=True)
class RejectedTool:
    """A tool left out of the client's ``tools/list`` view, and why (HTTP-13)."""

    name: str
    reason: str


def filter_tools(tools: list[Any]) -> tuple[list[dict[str, Any]], list[RejectedTool]]:
    """Split a ``tools/list`` page into usable tools and rejected ones, warning for each
    rejection with the tool and the reason (HTTP-13: MUST drop, SHOULD log)."""
    kept: list[dict[str, Any]] = []
    rejected: list[RejectedTool] = []
    for tool in tools:
        name = str(tool.get("name")) if isinstance(tool, dict) else repr(tool)
        try:
            if not isinstance(tool, dict):
                raise InvalidHeaderAnnotation("a tool must be a JSON object")
            header_annotations(tool.get("inputSchema"))
        except InvalidHeaderAnnotation as exc:
            log.warning("dropping tool %r from tools/list: %s", name, exc)
            rejected.append(RejectedTool(name, str(exc)))
        else:
            kept.append(tool)
    return kept, rejected


# --- HTTP-4 / HTTP-7 / HTTP-11 / HTTP-12: the headers of one request ----------------------


def _lookup(arguments: Any, path: PropertyPath) -> Any:
    value = arguments
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def request_headers(
    request: Mapping[str, Any], header_map: HeaderMap | None = None
) -> dict[str, str]:
    """The MCP headers for one JSON-RPC request.

    Every request: ``MCP-Protocol-Version`` (equal to ``_meta``'s, HTTP-7) and ``Mcp-Method``.
    ``tools/call``, ``prompts/get``, ``resources/read`` — first attempts and retries alike
    (HTTP-11) — add ``Mcp-Name``; ``tools/call`` adds one ``Mcp-Param-<Name>`` per annotated
    argument present and non-null in the body (HTTP-12), using the tool's ``header_map``.
    """
    params = request.get("params") or {}
    meta = params.get("_meta") or {}
    headers = {
        c.HEADER_PROTOCOL_VERSION: str(meta.get(c.META_PROTOCOL_VERSION, "")),
        c.HEADER_METHOD: str(request["method"]),
    }
    method = request["method"]
    if method in c.MRTR_METHODS:
        target = params.get("uri" if method == "resources/read" else "name")
        if isinstance(target, str):
            headers[c.HEADER_NAME] = encode_header_value(target)
    if method == "tools/call" and header_map:
        arguments = params.get("arguments") or {}
        for path, suffix in header_map.items():
            value = param_header_value(_lookup(arguments, path))
            if value is not None:
                headers[c.HEADER_PARAM_PREFIX + suffix] = value
    return headers
