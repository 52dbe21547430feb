"""The front a public fleet needs: the kit's nginx configuration and a way to run it.

``nginx.conf`` beside this file is the configuration itself, a file so that the deployment
guide (docs/deploy.md) shows exactly what the tests run; the flood defences and why each is
set are commented in it. ``nginx_config`` fills in its ``@NAME@`` placeholders; ``Nginx`` runs
a real nginx (the Debian package) with it as a child process, in a temporary folder with
``daemon off``, stopped by PID. ``BALANCING`` names how requests are spread over the servers:
a request with an ``Mcp-Session-Id`` (a 2025-11-25 session, which lives in one process) goes to
the instance holding that session, the others are spread as the value says.
"""

from __future__ import annotations

import atexit
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

import httpx

from .loopback import free_port, responds, stop_process


class Balancing(NamedTuple):
    """What fills ``nginx.conf``'s ``@BALANCING@``, and whether sessions are routed."""

    directive: str  # mcp_fleet's method, for requests without a session
    routed: bool  # each 2025-11-25 session's requests to the instance that holds it


BALANCING = {
    # nginx's default for modern requests, each to the next server; sessions to their own.
    "round-robin": Balancing("", True),
    # The name session routing had when it was not the default; now the same as round-robin.
    "sticky": Balancing("", True),
    # One client address, one instance, for modern requests too; sessions to their own.
    "ip-hash": Balancing("ip_hash;", True),
    # Every request round robin, sessions included: a fleet without session routing, where a
    # 2025-11-25 session breaks (the course and tests show it; never for a deployment).
    "ignore-sessions": Balancing("", False),
}

NGINX_TEMPLATE = Path(__file__).with_name("nginx.conf")


class NginxError(RuntimeError):
    """nginx did not start; the message holds what it printed."""


def nginx_config(
    upstreams: Sequence[str], *, port: int, prefix: str, balancing: str = "round-robin"
) -> str:
    """``NGINX_TEMPLATE`` (``mrtr_kit/server/nginx.conf``) with its placeholders filled in:
    nginx on 127.0.0.1:``port`` balancing ``upstreams`` (``http://127.0.0.1:P/mcp``) at
    ``/mcp``, everything it writes under ``prefix``.

    ``proxy_buffering off`` lets each SSE event through at once; ``Host`` is passed on, since
    the servers check it. The file's flood defences are what keeps a connection flood off the
    servers (``benchmarks/flood.py``; ``README.md`` has the figures). With
    ``proxy_request_buffering on`` (nginx's default, stated) a request goes to a server only
    once nginx has read its body whole, so a slow body holds no server connection or task.
    ``balancing`` is a key of ``BALANCING``: every value but ``ignore-sessions`` sends a
    request with an ``Mcp-Session-Id`` to the instance holding that session (nginx writes the
    instance into the id it hands the client).
    """
    chosen = BALANCING[balancing]
    addresses = [f"{httpx.URL(url).host}:{httpx.URL(url).port}" for url in upstreams]
    homes = [f'"~^{re.escape(a)}~" {a}' for a in addresses] if chosen.routed else ['"" ""']
    filled = {
        "@PREFIX@": prefix,
        "@LISTEN@": f"127.0.0.1:{port}",
        "@BALANCING@": chosen.directive,
        "@SESSION_ID@": (
            '"$mcp_answered~$upstream_http_mcp_session_id"'
            if chosen.routed
            else "$upstream_http_mcp_session_id"
        ),
        "@HOMES@": ";\n        ".join(homes),  # the file has the last ";"
        "@SERVERS@": "\n        ".join(f"server {a};" for a in addresses),
    }
    lines = NGINX_TEMPLATE.read_text(encoding="utf-8").splitlines(keepends=True)
    for placeholder, value in filled.items():  # comments, which name them, stay as they are
        lines = [x if x.lstrip().startswith("#") else x.replace(placeholder, value) for x in lines]
    config = "".join(lines)
    # As root, nginx would run its worker as "nobody", which cannot use our temp directory.
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return ("user root;\n" if as_root else "") + config


_running: set[Nginx] = set()  # held until stopped, so none is forgotten at exit


@atexit.register
def _stop_forgotten() -> None:
    for started in list(_running):
        started.stop()


@dataclass(eq=False)  # compared and hashed by identity: one object, one nginx process
class Nginx:
    """nginx in front of ``upstreams``; ``start()`` runs it as a child, ``stop()`` by PID."""

    upstreams: Sequence[str]
    balancing: str = "round-robin"
    binary: str = "/usr/sbin/nginx"
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    _workdir: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)
    _stderr: IO[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """The MCP endpoint behind nginx: ``http://127.0.0.1:PORT/mcp``."""
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def prefix(self) -> Path:
        """The temporary folder nginx runs in: its configuration, logs and pid file."""
        if self._workdir is None:
            raise RuntimeError("nginx is not started")
        return Path(self._workdir.name)

    def error_log(self) -> str:
        """What nginx wrote to its error log so far ("" before it wrote any)."""
        path = self.prefix / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self, timeout: float = 60.0) -> Nginx:
        """Write the configuration, start nginx as a child process, and return once it
        answers HTTP; ``NginxError`` with what it printed if it exits or ``timeout`` passes."""
        if self.balancing not in BALANCING:
            raise ValueError(f"balancing must be one of {sorted(BALANCING)}")
        self._workdir = tempfile.TemporaryDirectory(prefix="mrtr-nginx-")
        self.port = self.port or free_port()
        config = self.prefix / "nginx.conf"
        config.write_text(
            nginx_config(
                self.upstreams, port=self.port, prefix=str(self.prefix), balancing=self.balancing
            )
        )
        command = [self.binary, "-p", str(self.prefix), "-c", str(config), "-e", "stderr"]
        self._stderr = (self.prefix / "stderr.log").open("wb")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self._stderr)
        _running.add(self)
        deadline = time.monotonic() + timeout
        while not responds(self.url):
            if self.process.poll() is not None or time.monotonic() > deadline:
                errors = (self.prefix / "stderr.log").read_text(errors="replace")
                errors += self.error_log()  # read before stop() removes the folder
                self.stop()
                raise NginxError(f"nginx did not start: {errors}")
            time.sleep(0.05)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM to nginx's master PID (a fast shutdown), SIGKILL if it lingers."""
        if self.process is not None:
            stop_process(self.process, timeout)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None
        _running.discard(self)

    def __enter__(self) -> Nginx:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
