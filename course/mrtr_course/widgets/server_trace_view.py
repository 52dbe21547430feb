"""The server's rounds as a widget: the ``plain.server_trace`` view with a "refresh" button.

``ServerTraceView(source)`` shows ``ServerTrace(source)`` (a live list of
``ServerRound``s, or a ``serve --trace`` file) in an HTML widget; the button, or ``refresh()``,
reads the source again. Nothing waits: rounds a host such as MCP Inspector sends while the
notebook sits idle appear on the next click. The output bundle also carries the view as
``text/html`` and ``text/plain``, which is what a stored notebook shows on GitHub.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from mrtr_course.plain.server_trace import Source, load, server_trace_html, server_trace_text


class ServerTraceView:
    """The server's rounds, newest last; ``refresh()`` (or the button) reads them again."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.button = w.Button(
            description="refresh", icon="refresh", tooltip="read the rounds again"
        )
        self.count = w.Label("")
        self.table = w.HTML("")
        self.button.on_click(lambda _: self.refresh())
        self.widget = w.VBox([w.HBox([self.button, self.count]), self.table])
        self.widget.add_class("mrtr-server-trace-view")
        self.refresh()

    def refresh(self) -> None:
        self.rounds = load(self.source)
        value = server_trace_html(self.rounds)
        if self.table.value != value:
            self.table.value = value
        self.count.value = f"{len(self.rounds)} request(s) answered so far"

    def text(self) -> str:
        return server_trace_text(self.rounds)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.text()
        bundle["text/html"] = server_trace_html(self.rounds)
        return bundle
