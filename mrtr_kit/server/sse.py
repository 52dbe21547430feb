"""One request's Server-Sent Events response, as both transports' eras write it (HTTP-21..25).

``SseResponse`` opens the response with its first event, so a request that never sends one can
still be answered with plain JSON, and from then on watches for the client's hang-up: a task
waits for ``http.disconnect`` and cancels the task writing the events (the handler, or a
2025-11-25 call), and sets ``hung_up``. What an event carries and how the stream ends are the
callers': ``http`` (a 2026-07-28 request's notifications, then its answer) and ``era2025_http``
(a 2025-11-25 call's pushed requests, then its answer).
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.types import Receive, Send


class SseResponse:
    """The ASGI side of one SSE response: ``event`` writes ``data: ...``, ``close`` stops the
    hang-up watcher once the response is done."""

    def __init__(self, send: Send, receive: Receive, headers: list[tuple[bytes, bytes]]) -> None:
        """``headers`` are sent with the 200 that the first event opens the response with."""
        self.send = send
        self.receive = receive
        self.headers = headers
        self.open = False
        self.hung_up = False
        self._watcher: asyncio.Task[None] | None = None

    async def event(self, data: bytes) -> None:
        """One event holding ``data`` (encoded JSON), opening the response if it is the first."""
        if not self.open:
            self.open = True
            await self.send({"type": "http.response.start", "status": 200, "headers": self.headers})
            self._watcher = asyncio.create_task(self._watch(asyncio.current_task()))
        event = b"data: " + data + b"\n\n"
        await self.send({"type": "http.response.body", "body": event, "more_body": True})

    def close(self) -> None:
        """Stop watching for a hang-up (the response is over)."""
        if self._watcher is not None:
            self._watcher.cancel()

    async def _watch(self, writer: asyncio.Task[Any] | None) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass
        self.hung_up = True
        if writer is not None:
            writer.cancel()
