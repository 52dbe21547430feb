"""The wire-trace view: what went over HTTP in each round, and a diagram of the rounds taken.

``TraceView(client.trace)`` shows every ``TraceRecord`` (one HTTP exchange) as a title line,
the request headers, and the request and response JSON. ``requestState`` is opaque to the
client (MRTR-C2) and usually long, so it is shortened to its first characters plus its length;
the real string still travels byte for byte. ``sequence_diagram(records)`` draws the same rounds
as a Mermaid sequence diagram, which JupyterLab 4 and GitHub render.

``round_changes(records)`` is the trace as a list of differences: for each round, what changed
from the round before in the same call (a new id, the ``inputResponses`` keys added, whether
``requestState`` was echoed, what the server answered). ``RoundDiff(records)`` shows those
changes, one short block per round with its full JSON folded away in a ``<details>``; the
widget form (``round_view.RoundDiffView``) draws the same HTML and can refresh as rounds come.

No widgets here: every object is a plain rich-display object (``_repr_mimebundle_``), with a
``text/plain`` form that reads well in a stored notebook.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
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


# -- the round-diff view ----------------------------------------------------------------------

# What a round's requestState is, compared with the state the previous round's result carried.
STATE_NONE = "none"  # no state expected, none sent
STATE_ECHOED = "echoed"  # exactly the previous result's state (MRTR-C2)
STATE_ALTERED = "altered"  # a state, but not the one the server sent (breaks MRTR-C2)
STATE_DROPPED = "dropped"  # the server sent one, the retry left it out (breaks MRTR-C2)
STATE_UNASKED = "unasked"  # sent though the previous result carried none (breaks MRTR-C2)

_SAME_CALL_PARAMS = ("_meta", "inputResponses", "requestState")  # expected to change per round
# Compact lists: one fact per line, as in the text form (JupyterLab spaces list items widely).
_UL = ' style="margin:0.2em 0 0.4em 0;padding-left:1.4em"'
_LI = ' style="margin:0"'


@dataclass(frozen=True)
class RoundChange:
    """What one round changed, compared with the previous round of the same call."""

    record: TraceLike
    previous: TraceLike | None  # the previous round of this call; None on round 1
    new_id: bool  # True when the id differs from the previous round's (MRTR-C3); True on round 1
    answered: dict[str, str]  # inputResponses key -> a short summary of that answer
    unasked: tuple[str, ...]  # answered keys the previous round did not ask for (MRTR-E3)
    unanswered: tuple[str, ...]  # keys asked for and not answered (MRTR-C1, MRTR-C6)
    state_sent: str  # one of the STATE_* values above
    params_changed: tuple[str, ...]  # params other than _meta/answers/state that changed (MRTR-C5)
    result_type: str  # input_required, complete, error <code>, failed, pending, or as sent
    asks: tuple[str, ...]  # inputRequests keys of this round's result
    state_returned: str | None  # "new", "same" (as the one sent) or None (no state returned)
    notifications: int = 0
    lines: tuple[str, ...] = field(default=())

    @property
    def call(self) -> int:
        return self.record.call

    @property
    def round(self) -> int:
        return self.record.round

    @property
    def title(self) -> str:
        status = self.record.http_status if self.record.http_status is not None else "—"
        target = f"{self.record.method} {_target(self.record.request)}".strip()
        return (
            f"call {self.call} · round {self.round} · {target} → HTTP {status} · {self.result_type}"
        )


def _answer_summary(value: Any) -> str:
    """``accept (party, when)`` / ``decline`` / ``2 root(s)`` / ``sampling reply (model)``."""
    if not isinstance(value, Mapping):
        return "not an object"
    if "action" in value:
        content = value.get("content")
        fields = ", ".join(content) if isinstance(content, Mapping) and content else ""
        return f"{value['action']} ({fields})" if fields else str(value["action"])
    if "roots" in value:
        roots = value["roots"]
        return f"{len(roots) if isinstance(roots, list) else '?'} root(s)"
    if "role" in value or "model" in value:
        return f"sampling reply ({value.get('model', 'no model')})"
    return "answer"


def _result(record: TraceLike) -> Mapping[str, Any]:
    result = (record.response or {}).get("result")
    return result if isinstance(result, Mapping) else {}


def _result_type(record: TraceLike) -> str:
    if record.error:
        return "failed"
    if record.response is None:
        return "pending"  # sent, no response yet (the view may be drawn while a round runs)
    response = record.response
    if "error" in response:
        err = response["error"] if isinstance(response["error"], Mapping) else {}
        return f"error {err.get('code')}"
    return str(_result(record).get("resultType", "complete"))  # RT-2: absent means complete


def _state_sent(sent: Any, expected: Any) -> str:
    if sent is None:
        return STATE_DROPPED if expected is not None else STATE_NONE
    if expected is None:
        return STATE_UNASKED
    return STATE_ECHOED if sent == expected else STATE_ALTERED


def _change(record: TraceLike, previous: TraceLike | None) -> RoundChange:
    params = record.request.get("params") or {}
    answers = params.get("inputResponses")
    answers = answers if isinstance(answers, Mapping) else {}
    before = _result(previous) if previous is not None else {}
    asked = before.get("inputRequests")
    asked_keys = list(asked) if isinstance(asked, Mapping) else []
    prev_params = (previous.request.get("params") or {}) if previous is not None else {}
    changed = tuple(
        k
        for k in sorted(set(params) | set(prev_params))
        if k not in _SAME_CALL_PARAMS
        and previous is not None
        and params.get(k) != prev_params.get(k)
    )
    result = _result(record)
    requests = result.get("inputRequests")
    returned = result.get("requestState")
    sent = params.get("requestState")
    change = RoundChange(
        record=record,
        previous=previous,
        new_id=previous is None or record.request.get("id") != previous.request.get("id"),
        answered={str(k): _answer_summary(v) for k, v in answers.items()},
        unasked=tuple(str(k) for k in answers if previous is not None and k not in asked_keys),
        unanswered=tuple(k for k in asked_keys if k not in answers),
        state_sent=_state_sent(sent, before.get("requestState") if previous else None),
        params_changed=changed,
        result_type=_result_type(record),
        asks=tuple(requests) if isinstance(requests, Mapping) else (),
        state_returned=None if returned is None else ("same" if returned == sent else "new"),
        notifications=len(getattr(record, "notifications", None) or []),
    )
    return _with_lines(change)


def _with_lines(c: RoundChange) -> RoundChange:
    """The change in words, one fact per line: what the round-diff view prints."""
    r, lines = c.record, []
    rid = r.request.get("id")
    if c.previous is None:
        params = r.request.get("params") or {}
        args = params.get("arguments")
        shown = f" · arguments: {', '.join(args)}" if isinstance(args, Mapping) and args else ""
        lines.append(f"id {rid} (first request){shown}")
    elif c.new_id:
        lines.append(
            f"id {rid} (new; round {c.previous.round} had id {c.previous.request.get('id')})"
        )
    else:
        lines.append(f"id {rid}: the same id as round {c.previous.round} (MRTR-C3 wants a new one)")
    for key, summary in c.answered.items():
        extra = " (not asked for)" if key in c.unasked else ""
        lines.append(f"+ inputResponses.{key}: {summary}{extra}")
    if c.unanswered:
        lines.append(f"no answer for: {', '.join(c.unanswered)} (MRTR-C1)")
    if c.params_changed:
        lines.append(f"changed since the last round: {', '.join(c.params_changed)} (MRTR-C5)")
    previous_round = c.previous.round if c.previous is not None else 0
    state_line = {
        STATE_NONE: None if c.previous is None else "requestState: none (none was returned)",
        STATE_ECHOED: f"requestState: echoed from round {previous_round}, unchanged",
        STATE_ALTERED: f"requestState: NOT the one round {previous_round} returned (MRTR-C2)",
        STATE_DROPPED: f"requestState: left out, though round {previous_round} returned one "
        "(MRTR-C2)",
        STATE_UNASKED: "requestState: sent, though none was returned (MRTR-C2)",
    }[c.state_sent]
    if state_line:
        lines.append(state_line)
    if c.notifications:
        lines.append(f"{c.notifications} notification(s) before the response")
    if c.result_type == "pending":
        answer = "← (no response yet)"
    elif c.result_type != "input_required":
        answer = f"← {outcome_label(r)}"
    else:
        answer = "← input_required"
        if c.asks:
            answer += f" · asks: {', '.join(c.asks)}"
        if c.state_returned is not None:
            token = _result(r).get("requestState")
            answer += f" · {c.state_returned} requestState {short_state(str(token))}"
    lines.append(answer)
    return replace(c, lines=tuple(lines))


def round_changes(records: Iterable[TraceLike]) -> list[RoundChange]:
    """For each record, what changed from the previous round of the same call."""
    last: dict[int, TraceLike] = {}
    changes = []
    for record in records:
        previous = last.get(record.call) if record.round > 1 else None
        changes.append(_change(record, previous))
        last[record.call] = record
    return changes


def round_diff_text(changes: Sequence[RoundChange]) -> str:
    if not changes:
        return "(no requests sent yet)"
    return "\n\n".join(
        "\n".join([f"── {c.title}", *(f"   {line}" for line in c.lines)]) for c in changes
    )


def round_block_html(change: RoundChange, *, hide_meta: bool = False) -> str:
    """One round: its title and change lines, the full request and response folded away."""
    r = change.record
    if r.response is not None:
        response = wire_json(r.response, hide_meta=hide_meta)
    else:
        response = f"(local failure: {r.error})" if r.error else "(no response yet)"
    items = "".join(f"<li{_LI}>{html.escape(line)}</li>" for line in change.lines)
    return (
        f'<div class="mrtr-round mrtr-round-{html.escape(change.result_type.split()[0])}">'
        f"<div><b>{html.escape(change.title)}</b></div>"
        f'<ul class="mrtr-round-changes"{_UL}>{items}</ul>'
        '<details class="mrtr-round-json"><summary>full JSON of this round</summary>'
        f"<div><code>{html.escape(_headers_line(r))}</code></div>"
        "<div><i>request</i></div><pre>"
        + html.escape(wire_json(r.request, hide_meta=hide_meta))
        + "</pre><div><i>response</i></div><pre>"
        + html.escape(response)
        + "</pre></details></div>"
    )


def round_diff_html(changes: Sequence[RoundChange], *, hide_meta: bool = False) -> str:
    if not changes:
        return "<p><i>(no requests sent yet)</i></p>"
    blocks = "".join(round_block_html(c, hide_meta=hide_meta) for c in changes)
    return f'<div class="mrtr-round-diff">{blocks}</div>'


class RoundDiff:
    """The trace as changes between rounds; each round's full JSON one click away."""

    def __init__(self, records: Iterable[TraceLike], *, hide_meta: bool = False) -> None:
        self.changes = round_changes(records)
        self.hide_meta = hide_meta

    def text(self) -> str:
        return round_diff_text(self.changes)

    def html(self) -> str:
        return round_diff_html(self.changes, hide_meta=self.hide_meta)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}
