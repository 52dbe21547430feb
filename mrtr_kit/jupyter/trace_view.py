"""The wire-trace view: what went over HTTP in each round, and a diagram of the rounds taken.

``TraceView(client.trace)`` shows every ``TraceRecord`` (one HTTP exchange) as a title line,
the request headers, and the request and response JSON. ``requestState`` is opaque to the
client (MRTR-C2) and usually long, so it is shortened to its first characters plus its length;
the real string still travels byte for byte. ``sequence_diagram(records)`` draws the same rounds
as a Mermaid sequence diagram, which JupyterLab 4 and GitHub render.

No widgets: both objects are plain rich-display objects (``_repr_mimebundle_``), with a
``text/plain`` form that reads well in a stored notebook.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

STATE_KEEP = 16  # characters of a requestState shown before the ellipsis
_SHOWN_HEADERS = ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name")


class TraceLike(Protocol):
    """The fields of ``mrtr_kit.client.TraceRecord`` this view reads."""

    call: int
    round: int
    method: str
    request: dict[str, Any]
    headers: dict[str, str]
    http_status: int | None
    response: dict[str, Any] | None
    cacheable: bool
    error: str | None


def short_state(token: str, keep: int = STATE_KEEP) -> str:
    """``"hmac1.k1.eyJhdWQi…(412 chars)"``: enough to tell two states apart at a glance."""
    if len(token) <= keep:
        return token
    return f"{token[:keep]}…({len(token)} chars)"


def shorten_states(obj: Any) -> Any:
    """A copy of ``obj`` with every ``requestState`` string shortened (for display only)."""
    if isinstance(obj, Mapping):
        return {
            k: short_state(v) if k == "requestState" and isinstance(v, str) else shorten_states(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [shorten_states(v) for v in obj]
    return obj


def wire_json(obj: Any, *, hide_meta: bool = False) -> str:
    """Indented JSON as it went over the wire, requestState shortened; ``hide_meta`` replaces
    each ``_meta`` object by ``"…"`` to keep long traces short."""
    shown = shorten_states(obj)
    if hide_meta:
        shown = _hide_meta(shown)
    return json.dumps(shown, indent=2, ensure_ascii=False)


def _hide_meta(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: "…" if k == "_meta" else _hide_meta(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_hide_meta(v) for v in obj]
    return obj


def result_text(result: Mapping[str, Any] | None) -> str:
    """The readable text of a complete result: tool content, prompt messages, resource text."""
    if not result:
        return ""
    texts: list[str] = []
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
    for message in result.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, dict) and content.get("type") == "text":
            texts.append(str(content.get("text", "")))
    for item in result.get("contents") or []:
        if isinstance(item, dict) and "text" in item:
            texts.append(str(item["text"]))
    return "\n".join(texts)


def _target(request: Mapping[str, Any]) -> str:
    params = request.get("params") or {}
    return str(params.get("name") or params.get("uri") or "")


def outcome_label(record: TraceLike) -> str:
    """``complete``, ``input_required: login``, ``error -32602: ...`` or the local failure."""
    if record.error:
        return f"failed: {record.error}"
    response = record.response or {}
    if "error" in response:
        err = response["error"] or {}
        return f"error {err.get('code')}: {err.get('message')}"
    result = response.get("result") or {}
    kind = result.get("resultType", "complete")
    if kind == "input_required":
        asked = ", ".join(result.get("inputRequests") or {})
        state = " + requestState" if "requestState" in result else ""
        return f"input_required: {asked or '(state only)'}{state}"
    return str(kind)


def request_label(record: TraceLike) -> str:
    params = record.request.get("params") or {}
    extras = []
    if "inputResponses" in params:
        extras.append(f"inputResponses: {', '.join(params['inputResponses'])}")
    if "requestState" in params:
        extras.append("requestState")
    target = _target(record.request)
    label = f"{record.method} {target}".strip() + f" (id {record.request.get('id')})"
    return label + (" + " + " + ".join(extras) if extras else "")


def round_title(record: TraceLike) -> str:
    status = record.http_status if record.http_status is not None else "—"
    return (
        f"call {record.call} · round {record.round} · {request_label(record)} "
        f"→ HTTP {status} · {outcome_label(record)}"
    )


def _headers_line(record: TraceLike) -> str:
    shown = [(k, v) for k, v in record.headers.items() if k in _SHOWN_HEADERS]
    return "  ".join(f"{k}: {v}" for k, v in shown)


class TraceView:
    """Rich display of trace records: one block per round, in the order they were sent."""

    def __init__(self, records: Iterable[TraceLike], *, hide_meta: bool = False) -> None:
        self.records: list[TraceLike] = list(records)
        self.hide_meta = hide_meta

    def text(self) -> str:
        if not self.records:
            return "(no requests sent yet)"
        blocks = []
        for r in self.records:
            response = r.response if r.response is not None else {"error": r.error}
            blocks.append(
                "\n".join(
                    [
                        f"── {round_title(r)}",
                        f"headers: {_headers_line(r)}",
                        f"cacheable: {'yes' if r.cacheable else 'no'}",
                        "request:",
                        wire_json(r.request, hide_meta=self.hide_meta),
                        "response:",
                        wire_json(response, hide_meta=self.hide_meta),
                    ]
                )
            )
        return "\n\n".join(blocks)

    def html(self) -> str:
        if not self.records:
            return "<p><i>(no requests sent yet)</i></p>"
        parts = []
        for r in self.records:
            response = r.response if r.response is not None else {"error": r.error}
            parts.append(
                "<details open><summary><b>"
                + html.escape(round_title(r))
                + "</b></summary>"
                + f"<div><code>{html.escape(_headers_line(r))}</code>"
                + f" · cacheable: {'yes' if r.cacheable else 'no'}</div>"
                + "<div><i>request</i></div><pre>"
                + html.escape(wire_json(r.request, hide_meta=self.hide_meta))
                + "</pre><div><i>response</i></div><pre>"
                + html.escape(wire_json(response, hide_meta=self.hide_meta))
                + "</pre></details>"
            )
        return '<div class="mrtr-trace">' + "".join(parts) + "</div>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}


def _mermaid_text(text: str) -> str:
    # Mermaid reads ";" and "#" specially inside sequence messages.
    return text.replace(";", ",").replace("#", "no.")


def sequence_diagram(records: Sequence[TraceLike], *, client: str = "Client") -> str:
    """Mermaid source for the rounds in ``records``, as they actually happened."""
    lines = [
        "sequenceDiagram",
        f"    participant C as {client}",
        "    participant S as Server",
    ]
    for i, r in enumerate(records):
        lines.append(f"    C->>S: {_mermaid_text(request_label(r))}")
        lines.append(f"    S-->>C: {_mermaid_text(outcome_label(r))}")
        result = (r.response or {}).get("result") or {}
        more = i + 1 < len(records) and records[i + 1].call == r.call
        if result.get("resultType") == "input_required" and more:
            asked = ", ".join(result.get("inputRequests") or {}) or "nothing (state only)"
            lines.append(f"    Note over C: gathers {_mermaid_text(asked)}, retries with a new id")
    return "\n".join(lines)


class Mermaid:
    """A Mermaid diagram: rendered by JupyterLab 4 (Markdown output), source as plain text."""

    def __init__(self, source: str) -> None:
        self.source = source

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/markdown": f"```mermaid\n{self.source}\n```", "text/plain": self.source}


def diagram(records: Sequence[TraceLike], **kw: Any) -> Mermaid:
    return Mermaid(sequence_diagram(records, **kw))
