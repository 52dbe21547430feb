"""Real services for the ledger tests: a ``redis-server`` and ``python -m mrtr_kit serve``
processes on free loopback ports. Each test starts what it needs and stops it by its PID.

``redis-server`` comes from the Debian package; without it the test is skipped on a
learner's machine and fails under CI (``conftest.system_binary``).
"""

from __future__ import annotations

import asyncio
import select
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from mrtr_kit.server.loopback import free_port
from tests.conftest import system_binary
from tests.helpers import discover_over_http

TESTS = Path(__file__).resolve().parent  # tests/apps.py, the library-only servers
STARTUP_TIMEOUT_S = 60.0  # a cap; a busy machine can be slow to start a Python process


def stop(proc: subprocess.Popen[str]) -> None:
    """Stop one process we started, by its PID: SIGTERM, then SIGKILL if it lingers."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


# -- redis-server -------------------------------------------------------------------------------


@dataclass
class RedisServer:
    proc: subprocess.Popen[str]
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


def _redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_redis(folder: Path, *, persistent: bool = True, port: int | None = None) -> RedisServer:
    """A redis-server on loopback, its files in ``folder``: with an append-only file, as a
    ledger needs, unless ``persistent=False`` (it then forgets everything when it restarts).
    ``port``: the same port again, to restart a stopped one."""
    binary = system_binary(
        "redis-server", paths=("/usr/bin/redis-server", "/usr/sbin/redis-server")
    )
    port = port or free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    command += ["--appendonly", "yes" if persistent else "no", "--dir", str(folder)]
    log = (folder / f"redis-{port}.log").open("a")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not _redis_answers(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError(f"redis-server did not start: {(folder / log.name).read_text()}")
        time.sleep(0.05)
    return RedisServer(proc, port)


# -- MCP server processes -----------------------------------------------------------------------


@dataclass
class ServerProcess:
    proc: subprocess.Popen[str]
    url: str


def _first_line(proc: subprocess.Popen[str], deadline: float) -> str:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            return proc.stdout.readline()
        if proc.poll() is not None:
            break
    raise RuntimeError("the server printed no URL")


def _discover(url: str, headers: dict[str, str]) -> bool:
    try:
        return discover_over_http(url, headers).status_code == 200
    except httpx.HTTPError:
        return False


def start_server(
    args: list[str], env: dict[str, str], log: Path, headers: dict[str, str]
) -> ServerProcess:
    """``python -m mrtr_kit serve --port 0 ARGS``; returns once it answers server/discover."""
    command = [sys.executable, "-m", "mrtr_kit", "serve", "--port", "0", "--log-level", "warning"]
    proc = subprocess.Popen(
        [*command, *args], stdout=subprocess.PIPE, stderr=log.open("w"), text=True, env=env
    )
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        line = _first_line(proc, deadline)
        url = line.strip().rsplit(" ", 1)[-1]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), line
        while not _discover(url, headers):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer: {log.read_text()}")
            time.sleep(0.05)
    except BaseException:
        stop(proc)
        raise
    return ServerProcess(proc, url)


# -- many processes spending in one ledger --------------------------------------------------------


def spend_all(ledger_spec: str, token_ids: list[str]) -> list[str]:
    """Run in a child process: spend every id in the shared ledger; return the ones won."""
    from mrtr_kit.server.ledger import open_ledger

    async def run() -> list[str]:
        ledger = open_ledger(ledger_spec)
        won = await asyncio.gather(*(ledger.spend(t, time.time() + 600) for t in token_ids))
        await ledger.aclose()
        return [t for t, ok in zip(token_ids, won, strict=True) if ok]

    return asyncio.run(run())
