"""Servers on this machine: a kit app on ``127.0.0.1`` from a thread, a free port, a process
stopped by its PID. What a test, a notebook or a local try-out needs before a real deployment;
the course's fleets and ``server/nginx.py`` build on it.

* ``LoopbackServer.start(make_app)`` — uvicorn on loopback (HTTP-28) in a daemon thread, with
  the kit's connection limits (``http.uvicorn_config``); ``stop()`` ends it;
* ``free_port()`` — a TCP port on 127.0.0.1 nobody listens on right now;
* ``stop_process(process)`` — SIGTERM to that PID, then SIGKILL if it lingers (never by name);
* ``responds(url)`` — does anything answer HTTP there yet.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import uvicorn

from .http import bind_tcp, uvicorn_config


class LoopbackServer:
    """An ASGI app served by uvicorn on ``127.0.0.1`` from a daemon thread (HTTP-28).

    ``LoopbackServer.start(make_app)`` binds a free port first, so ``make_app`` gets the base
    URL its links must use; ``stop()`` ends it. The caller's own event loop is not involved.
    """

    def __init__(self, server: uvicorn.Server, thread: threading.Thread, url: str) -> None:
        """Use ``start``; this only holds what it started."""
        self._server = server
        self._thread = thread
        self.url = url

    @classmethod
    def start(cls, make_app: Callable[[str], Any], *, timeout: float = 60.0) -> LoopbackServer:
        """Bind a free loopback port, build the app with its base URL, serve it, and return
        once uvicorn accepts connections (``timeout`` caps the wait on a busy machine)."""
        sock = bind_tcp("127.0.0.1", 0)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        # The same connection limits as every kit server (server.http.uvicorn_config).
        config = uvicorn_config(make_app(url), log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                raise RuntimeError(f"the loopback server at {url} did not start")
            time.sleep(0.02)
        return cls(server, thread, url)

    def stop(self, timeout: float = 30.0) -> None:
        """Ask uvicorn to exit and wait for its thread (it ends within about 2 s: the graceful
        shutdown timeout; ``timeout`` only caps the wait on a slow or busy machine)."""
        self._server.should_exit = True
        self._thread.join(timeout)

    def __repr__(self) -> str:
        state = "running" if self._thread.is_alive() else "stopped"
        return f"<LoopbackServer {self.url} {state}>"


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on at this moment."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(process: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """Stop one process by its PID: SIGTERM, then SIGKILL if it outlives ``timeout``."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def responds(url: str) -> bool:
    """Any HTTP answer (a 405 to GET is fine) means the server is accepting connections."""
    try:
        httpx.get(url, timeout=1.0)
    except httpx.TransportError:
        return False
    return True
