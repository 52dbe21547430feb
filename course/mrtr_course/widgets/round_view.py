"""The round-diff view as a widget: one block per round, saying what changed, JSON folded away.

``RoundDiffView(client.trace)`` shows ``trace_view.round_changes`` of the records: per round a
title (call, round, method and target, HTTP status, ``resultType``) and the changes from the
round before (a new id, ``+ inputResponses.<key>``, ``requestState`` echoed or not, what the
server asks next). Each round's full request and response sit in a ``<details>`` below it,
collapsed: one click opens them, in the browser, with no round trip to the kernel.

``refresh()`` redraws from the records (pass a live list such as ``client.trace`` and call it
after more rounds). The output bundle also carries the same view as ``text/html`` and
``text/plain``, which is what a stored notebook shows on GitHub. The diff logic itself is plain
Python in ``trace_view`` and is tested there without widgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ipywidgets as w

from mrtr_course.plain.trace_view import (
    RoundChange,
    TraceLike,
    round_block_html,
    round_changes,
    round_diff_html,
    round_diff_text,
)

EMPTY_HTML = "<p><i>(no requests sent yet)</i></p>"


class RoundDiffView:
    """Rounds as differences, newest last; ``rounds[i]`` is the HTML widget of round ``i``."""

    def __init__(self, records: Sequence[TraceLike], *, hide_meta: bool = False) -> None:
        self.records = records  # kept by reference: refresh() sees records appended later
        self.hide_meta = hide_meta
        self.changes: list[RoundChange] = []
        self.rounds: list[w.HTML] = []
        self.widget = w.VBox([])
        self.widget.add_class("mrtr-round-diff")
        self.refresh()

    def refresh(self) -> None:
        """Redraw from the records: blocks of rounds already shown are reused, new ones added."""
        self.changes = round_changes(self.records)
        values = [round_block_html(c, hide_meta=self.hide_meta) for c in self.changes]
        while len(self.rounds) < len(values):
            block = w.HTML("")
            block.add_class("mrtr-round-block")
            self.rounds.append(block)
        del self.rounds[len(values) :]
        for block, value in zip(self.rounds, values, strict=True):
            if block.value != value:
                block.value = value
        self.widget.children = tuple(self.rounds) if self.rounds else (w.HTML(EMPTY_HTML),)

    def text(self) -> str:
        return round_diff_text(self.changes)

    def html(self) -> str:
        return round_diff_html(self.changes, hide_meta=self.hide_meta)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.text()
        bundle["text/html"] = self.html()
        return bundle
