"""A minimal ``text/event-stream`` decoder: lines in, event data out. No I/O.

A request's SSE response carries one JSON-RPC message per event (HTTP-21..23): any
notifications first, the response last. Comment lines (``:`` keep-alives) are skipped;
``event:``, ``id:`` and ``retry:`` fields carry nothing in 2026-07-28 and are ignored.
"""

from __future__ import annotations


class SseDecoder:
    """Feed lines (without their line endings); get each event's data when it completes."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        """One line in; the finished event's data out when ``line`` is the blank separator."""
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment, e.g. a keep-alive (HTTP-23)
        field, _, value = line.partition(":")
        if field == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None

    def close(self) -> str | None:
        """End of stream: an event still missing its blank line is delivered, not lost."""
        return self._dispatch()

    def _dispatch(self) -> str | None:
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        return data


def sse_events(text: str) -> list[str]:
    """All event data in a complete SSE body (handy in tests and notebooks)."""
    decoder = SseDecoder()
    events = [e for line in text.splitlines() if (e := decoder.feed(line)) is not None]
    tail = decoder.close()
    return [*events, tail] if tail is not None else events
