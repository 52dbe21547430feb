"""``run_announced`` prints a server's line only once uvicorn accepts connections (KIT).

Every kit process (``serve``, the capstone's ``lesson04_gate.py``, the SDK port) prints its URL
this way, and tests, fleets and learners wait for that line, then connect or press Ctrl-C.
Printed before uvicorn runs, a Ctrl-C sent as soon as it shows could land while ``asyncio.run``
was still starting: a traceback and a "coroutine 'Server.serve' was never awaited" warning
instead of one line (a CI run saw it). Here start-up is held open by the app's lifespan, so
a line printed too early is seen every time, not by chance.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import httpx

from mrtr_kit.server.http import bind_tcp, run_announced, uvicorn_config

LINE = "Serving the held app"
WAIT_S = 60.0  # a cap for a slow shared runner; each step takes milliseconds


class HeldStartup:
    """An ASGI app whose start-up waits until ``release`` is set; every request gets 204."""

    def __init__(self) -> None:
        self.starting = threading.Event()
        self.release = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()  # lifespan.startup
            self.starting.set()
            await asyncio.to_thread(self.release.wait, WAIT_S)
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
            await send({"type": "lifespan.shutdown.complete"})
            return
        await receive()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def test_the_line_shows_only_after_start_up(capfd):
    app = HeldStartup()
    sock = bind_tcp("127.0.0.1", 0)
    # One request and uvicorn exits: the test stops the server without reaching inside it.
    config = uvicorn_config(app, log_level="warning", lifespan="on", limit_max_requests=1)
    config.limit_max_requests_jitter = 0  # uvicorn >= 0.37 adds a random 0..jitter
    thread = threading.Thread(target=run_announced, args=(config, sock, LINE), daemon=True)
    thread.start()
    try:
        assert app.starting.wait(WAIT_S), "uvicorn never began its start-up"
        assert LINE not in capfd.readouterr().out, "the line showed while start-up was running"
        app.release.set()
        deadline = time.monotonic() + WAIT_S
        out = ""
        while LINE not in out:
            assert time.monotonic() < deadline, "the line never showed"
            time.sleep(0.01)
            out += capfd.readouterr().out
        assert out.count(LINE) == 1
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
        assert httpx.get(url, timeout=WAIT_S).status_code == 204  # it serves once the line shows
    finally:
        app.release.set()
        thread.join(WAIT_S)
    assert not thread.is_alive()


def test_a_failed_start_prints_no_line(capfd):
    """A start-up that fails (here: the lifespan reports failure) exits without the line, so
    nobody waits on a URL that never serves."""

    async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "lifespan"
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no"})

    sock = bind_tcp("127.0.0.1", 0)
    config = uvicorn_config(failing, log_level="critical", lifespan="on")
    exits: list[object] = []

    def run() -> None:
        try:
            run_announced(config, sock, LINE)
        except SystemExit as stop:  # uvicorn's way out of a failed start
            exits.append(stop.code)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT_S)
    assert not thread.is_alive()
    assert exits == [3]  # uvicorn's STARTUP_FAILURE
    assert LINE not in capfd.readouterr().out
