"""The HTTP headers a client sends with each request, and the ``tools/list`` filter that keeps
only tools whose headers it can compute (digest §3.2).

The rules live in ``protocol.headers``, shared with the server; this module gives the client
its API over them, raising the client's ``HeaderValueError``:

* ``request_headers`` - ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and
  ``Mcp-Param-*`` for one JSON-RPC request (HTTP-4, HTTP-7, HTTP-11, HTTP-12).
* ``encode_header_value`` / ``param_header_value`` - the value encoding of HTTP-9.
* ``header_annotations`` / ``filter_tools`` - where a tool's ``x-mcp-header`` annotations
  point, and dropping (with a logged warning) tools whose annotations are invalid (HTTP-13).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..protocol import headers as h
from ..protocol.headers import (
    MAX_SAFE_INTEGER,
    HeaderMap,
    InvalidHeaderAnnotation,
    PropertyPath,
    header_annotations,
)
from .errors import HeaderValueError

__all__ = [
    "MAX_SAFE_INTEGER",
    "HeaderMap",
    "InvalidHeaderAnnotation",
    "PropertyPath",
    "RejectedTool",
    "encode_header_value",
    "filter_tools",
    "header_annotations",
    "param_header_value",
    "request_headers",
]

log = logging.getLogger("mrtr_kit.client")
T = TypeVar("T")


def _as_client_error(build: Callable[[], T]) -> T:
    try:
        return build()
    except h.UnencodableHeaderValue as exc:
        raise HeaderValueError(str(exc)) from None


def encode_header_value(value: str) -> str:
    """``value`` as it goes into ``Mcp-Name`` or ``Mcp-Param-*`` (HTTP-9)."""
    return _as_client_error(lambda: h.encode_value(value))


def param_header_value(value: Any) -> str | None:
    """An argument value as an ``Mcp-Param-*`` value; ``None`` means "send no header" (HTTP-12)."""
    return _as_client_error(lambda: h.param_value(value))


def request_headers(
    request: Mapping[str, Any], header_map: HeaderMap | None = None
) -> dict[str, str]:
    """The MCP headers for one JSON-RPC request (``protocol.headers.request_headers``)."""
    return _as_client_error(lambda: h.request_headers(request, header_map))


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
