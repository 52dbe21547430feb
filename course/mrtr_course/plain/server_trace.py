"""The server's side of the rounds: what the kit's server received and answered, per request.

The client-side trace (``trace_view``) shows what one client sent. This view shows what the
*server* saw, from every client that called it (the notebook's own, MCP Inspector, ...): one
``mrtr_kit.server.rounds.ServerRound`` per answered request. Where they come from:

* a server in the kernel: ``rounds = []; server.observer = rounds.append``, then
  ``ServerTrace(rounds)`` (the list is read again at each display or ``refresh``);
* a server in a subprocess: ``python -m mrtr_kit serve ... --trace PATH``, then
  ``ServerTrace(PATH)``: the file is read again each time, so a cell re-run shows the rounds
  that arrived since.

Each MRTR round (tools/call, prompts/get, resources/read) is one short block: who called and
with which id, which answers it carried (their kind only: accept, decline, cancel), what became
of its ``requestState`` (verified, or refused and why: the operator's words, which the client
never sees, MRTR-S4a; the single wire error is a kit convention, KIT) and what the server
answered. A retry names the round it answers, so a new id each round is plain to see. Other
requests (``server/discover``, ``tools/list``) are counted in one line.

No widgets here (``widgets/server_trace_view.py`` adds a refresh button): ``ServerTrace`` is a
rich-display object with ``text/plain`` and ``text/html`` forms.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mrtr_kit.protocol.constants import MRTR_METHODS
from mrtr_kit.server.rounds import ServerRound

Source = str | Path | Sequence[ServerRound]
EMPTY = "(the server has answered no MRTR request yet)"


def read_trace(path: str | Path) -> list[ServerRound]:
    """The rounds in a ``serve --trace`` file so far (none if it does not exist yet). A last
    line still being written is left for the next read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    rounds = []
    for line in text.splitlines():
        try:
            rounds.append(ServerRound.from_json(json.loads(line)))
        except (ValueError, TypeError, AttributeError):  # not a record: skipped
            continue
    return rounds


def load(source: Source) -> list[ServerRound]:
    if isinstance(source, str | Path):
        return read_trace(source)
    return list(source)


@dataclass(frozen=True)
class ServerStep:
    """One MRTR round as the server saw it, numbered, with the round it retries (if any)."""

    number: int
    round: ServerRound
    retries: ServerStep | None  # the earlier input_required round this one answers

    @property
    def title(self) -> str:
        r = self.round
        who = f" · from {r.client}" if r.client else ""
        return f"round {self.number} · {r.method} {r.target or ''} (id {r.id}){who}"

    @property
    def lines(self) -> list[str]:
        r, out = self.round, []
        if self.retries is not None:
            out.append(
                f"retry of round {self.retries.number} (whose id was {self.retries.round.id})"
            )
        answers = ", ".join(f"{k} ({v})" for k, v in r.answers.items())
        out.append(f"answers: {answers or 'none'}")
        out.append("requestState: " + state_words(r))
        out.append("→ " + outcome_words(r))
        return out


def state_words(r: ServerRound) -> str:
    if r.state == "refused":
        return (
            f"REFUSED: {r.state_problem} (the client was told only "
            '"Invalid requestState", MRTR-S4a)'
        )
    return {
        "absent": "none",
        "verified": "verified (sealed by this server, for this request, in time)",
        "unchecked": "sent, not checked (the request failed first)",
    }[r.state]


def outcome_words(r: ServerRound) -> str:
    if r.outcome == "error":
        return f"error {r.error_code}: {r.error_message}"
    if r.outcome == "input_required":
        asks = ", ".join(r.asked) or "nothing (state only)"
        issued = " · new requestState issued" if r.state_issued else ""
        return f"input_required · asks: {asks}{issued}"
    return "complete"


def server_steps(rounds: Iterable[ServerRound]) -> tuple[list[ServerStep], Counter[str]]:
    """The MRTR rounds as numbered steps, and a count of the other requests by method."""
    steps: list[ServerStep] = []
    others: Counter[str] = Counter()
    open_calls: dict[tuple[str | None, str | None, str | None], ServerStep] = {}
    for r in rounds:
        if r.method not in MRTR_METHODS:
            others[str(r.method)] += 1
            continue
        call = (r.client, r.method, r.target)
        retry = r.state != "absent" or bool(r.answers)
        step = ServerStep(len(steps) + 1, r, open_calls.get(call) if retry else None)
        steps.append(step)
        if r.outcome == "input_required":
            open_calls[call] = step
        else:
            open_calls.pop(call, None)
    return steps, others


def _others_line(others: Counter[str]) -> str:
    if not others:
        return ""
    listed = ", ".join(f"{m} ×{n}" for m, n in sorted(others.items()))
    return f"(also answered: {listed})"


def server_trace_text(rounds: Iterable[ServerRound]) -> str:
    steps, others = server_steps(rounds)
    blocks = ["\n".join([f"── {s.title}", *(f"   {line}" for line in s.lines)]) for s in steps] or [
        EMPTY
    ]
    if others:
        blocks.append(_others_line(others))
    return "\n\n".join(blocks)


def server_trace_html(rounds: Iterable[ServerRound]) -> str:
    steps, others = server_steps(rounds)
    if not steps:
        body = f"<p><i>{html.escape(EMPTY)}</i></p>"
    else:
        body = "".join(
            f'<div class="mrtr-server-round mrtr-server-{html.escape(s.round.outcome)}'
            + (" mrtr-server-refused" if s.round.state == "refused" else "")
            + f'"><div><b>{html.escape(s.title)}</b></div>'
            + '<ul style="margin:0.2em 0 0.4em 0;padding-left:1.4em">'
            + "".join(f'<li style="margin:0">{html.escape(x)}</li>' for x in s.lines)
            + "</ul></div>"
            for s in steps
        )
    if others:
        body += f"<p><i>{html.escape(_others_line(others))}</i></p>"
    return f'<div class="mrtr-server-trace">{body}</div>'


class ServerTrace:
    """The server's rounds from a live list or a ``--trace`` file, read at each display."""

    def __init__(self, source: Source) -> None:
        self.source = source

    @property
    def rounds(self) -> list[ServerRound]:
        return load(self.source)

    def text(self) -> str:
        return server_trace_text(self.rounds)

    def html(self) -> str:
        return server_trace_html(self.rounds)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        rounds = self.rounds
        return {"text/plain": server_trace_text(rounds), "text/html": server_trace_html(rounds)}
