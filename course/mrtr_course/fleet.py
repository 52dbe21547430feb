"""Several server processes behind a load balancer, on loopback: the lesson's "production".

Three pieces, all stopped by PID (never by name):

* ``start_fleet(n, ...)`` — ``n`` separate ``python -m mrtr_kit serve ...`` processes on free
  ports, named ``instance-1`` .. ``instance-n`` (every response carries that name in
  ``X-Mcp-Instance``). They share one ``MRTR_KIT_STATE_KEY``, so a ``requestState`` minted by
  one instance verifies on all of them. ``start_processes`` runs any such commands and
  returns as soon as each has printed its URL (``serve`` prints it once it accepts
  connections), with no polling.
* ``RoundRobin`` — a load balancer inside the client: every HTTP request goes to the next
  instance (``sticky=True``: requests of one ``Mcp-Session-Id`` stay on one instance). Each
  client gets its own ``RoundRobin.transport()``; all share one rotation, as clients of one
  balancer do. ``FRONT_URL`` is the address clients use; the transport rewrites it.
* ``Nginx`` — a real nginx in front of the fleet: the library's (``mrtr_kit.server.nginx``),
  imported here so a lesson finds the whole fleet in one module.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from mrtr_kit.server.http import INSTANCE_HEADER
from mrtr_kit.server.loopback import stop_process

FRONT_URL = "http://fleet.invalid/mcp"  # ".invalid" never resolves: only a balancer can reach it
STATE_KEY_ENV = "MRTR_KIT_STATE_KEY"
_SERVING = re.compile(r"(http://127\.0\.0\.1:\d+/mcp)")


class FleetError(RuntimeError):
    """A process of the fleet (or nginx) did not start."""


# -- processes --------------------------------------------------------------------------------


@dataclass
class Instance:
    """One server process of the fleet."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    url: str = ""
    _watcher: _OutputWatcher | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def log(self) -> str:
        """Everything the process wrote to stdout and stderr so far."""
        return self.log_path.read_text(errors="replace")

    def log_lines(self, containing: str = "") -> list[str]:
        return [line for line in self.log().splitlines() if containing in line]

    def crash(self) -> None:
        """SIGKILL to this PID: the instance dies at once, as in a crash or a node loss."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM to this PID, then SIGKILL if it has not exited within ``timeout``."""
        stop_process(self.process, timeout)


_running: set[Fleet] = set()  # held until stopped, so none is forgotten at exit


@atexit.register
def _stop_forgotten() -> None:
    for started in list(_running):
        started.stop()


class Fleet:
    """Server processes started together; ``stop()`` (or ``with``) ends them all by PID."""

    def __init__(self, instances: list[Instance], workdir: tempfile.TemporaryDirectory[str]):
        self.instances = instances
        self._workdir = workdir
        _running.add(self)

    @property
    def urls(self) -> list[str]:
        return [i.url for i in self.instances]

    @property
    def names(self) -> list[str]:
        return [i.name for i in self.instances]

    def __getitem__(self, key: int | str) -> Instance:
        if isinstance(key, int):
            return self.instances[key]
        for instance in self.instances:
            if instance.name == key:
                return instance
        raise KeyError(key)

    def __len__(self) -> int:
        return len(self.instances)

    def __iter__(self) -> Iterator[Instance]:
        return iter(self.instances)

    def stop(self) -> None:
        for instance in self.instances:  # SIGTERM to all first: they shut down in parallel
            if instance.running:
                instance.process.terminate()
        for instance in self.instances:
            instance.stop()
        for instance in self.instances:  # their output ends with them
            if instance._watcher is not None:
                instance._watcher.join()
        _running.discard(self)
        self._workdir.cleanup()

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        running = sum(i.running for i in self.instances)
        return f"<Fleet {', '.join(self.names)}: {running} of {len(self)} running>"


def serve_command(
    example: str, instance: str, *, legacy: bool = False, options: Sequence[str] = ()
) -> list[str]:
    """``python -m mrtr_kit serve`` for one instance, on a free port (``--port 0``); a
    ``legacy`` one is the course's own command, ``python -m mrtr_course serve --legacy``."""
    program = "mrtr_course" if legacy else "mrtr_kit"
    command = [sys.executable, "-m", program, "serve", "--example", example]
    command += ["--port", "0", "--instance-name", instance, "--log-level", "warning"]
    if legacy:
        command.append("--legacy")
    return [*command, *options]


class _OutputWatcher:
    """Copies a process's output into its log file, line by line, and tells when the first
    line naming a URL arrives (``url``), or when the output ended without one."""

    def __init__(self, process: subprocess.Popen[bytes], log_path: Path) -> None:
        self.url = ""
        self.done = threading.Event()  # a URL was printed, or the process closed its output
        self._process = process
        self._log_path = log_path
        self._thread = threading.Thread(target=self._copy, daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        assert self._process.stdout is not None
        with self._log_path.open("ab") as log:
            for line in self._process.stdout:  # until the process exits
                log.write(line)
                log.flush()  # Instance.log() reads the file while the process runs
                if not self.url:
                    found = _SERVING.search(line.decode(errors="replace"))
                    if found:
                        self.url = found.group(1)
                        self.done.set()
        self._process.stdout.close()
        self.done.set()

    def join(self, timeout: float = 30.0) -> None:
        """Wait for the output to end (at once when the process has exited; ``timeout``
        caps the wait on a busy machine)."""
        self._thread.join(timeout)


def start_processes(
    commands: Mapping[str, Sequence[str]],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 120.0,
) -> Fleet:
    """Start one process per ``{name: command}``, all at once; return when every one serves.

    Each command must print its ``http://127.0.0.1:PORT/mcp`` URL once it accepts connections
    (as ``serve`` does); this waits for that line, not for a fixed time. A process that exits
    before printing it is a ``FleetError`` with its output; ``timeout`` (seconds for the
    whole fleet, None for no limit) only guards against one that hangs.
    """
    workdir = tempfile.TemporaryDirectory(prefix="mrtr-fleet-")
    child_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    instances: list[Instance] = []
    fleet = Fleet(instances, workdir)
    try:
        for name, command in commands.items():
            log_path = Path(workdir.name) / f"{name}.log"
            log_path.touch()
            process = subprocess.Popen(
                list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=child_env
            )
            watcher = _OutputWatcher(process, log_path)
            instances.append(Instance(name, process, log_path, _watcher=watcher))
        deadline = None if timeout is None else time.monotonic() + timeout
        for instance in instances:
            assert instance._watcher is not None
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not instance._watcher.done.wait(left):
                raise FleetError(f"{instance.name} printed no URL within {timeout} s")
            if not instance._watcher.url:
                instance.process.wait()
                instance._watcher.join()
                raise FleetError(f"{instance.name} exited:\n{instance.log()}")
            instance.url = instance._watcher.url
    except BaseException:
        fleet.stop()
        raise
    return fleet


def start_fleet(
    size: int,
    *,
    example: str = "trip-planner",
    legacy: bool = False,
    options: Sequence[str] = (),
    state_key: str | None = None,
    prefix: str = "instance",
    timeout: float | None = 120.0,
) -> Fleet:
    """``size`` instances of one example, named ``<prefix>-1`` .. ``<prefix>-<size>``.

    They share ``state_key`` (hex; a fresh random one by default) through the environment:
    MRTR instances verify each other's ``requestState``; legacy ones each other's sessions.
    """
    names = [f"{prefix}-{n}" for n in range(1, size + 1)]
    commands = {
        name: serve_command(example, name, legacy=legacy, options=options) for name in names
    }
    key = state_key or secrets.token_hex(32)
    return start_processes(commands, env={STATE_KEY_ENV: key}, timeout=timeout)


# -- a round-robin load balancer in the client --------------------------------------------------


@dataclass(frozen=True)
class Hit:
    """One HTTP request as the balancer routed it."""

    number: int  # order of arrival at the balancer
    upstream: int  # index of the instance it was sent to
    instance: str | None  # the X-Mcp-Instance header of the response
    message: str  # the JSON-RPC method, or "response" for a client's answer
    status: int


def _message_label(request: httpx.Request) -> str:
    method = request.headers.get("mcp-method")
    if method:
        return method
    try:
        body = json.loads(request.content)
    except (ValueError, httpx.RequestNotRead):
        return "?"
    if isinstance(body, dict):
        return str(body.get("method", "response"))
    return "?"


class RoundRobin:
    """Sends each request to the next instance in turn, as ``nginx`` does by default.

    With ``sticky=True`` it keeps sessions together (session affinity): a request carrying an
    ``Mcp-Session-Id`` goes to the instance whose response handed out that id, or else to the
    instance the session's first request went to.
    """

    def __init__(self, urls: Sequence[str], *, sticky: bool = False) -> None:
        if not urls:
            raise ValueError("a balancer needs at least one instance")
        self.urls = list(urls)
        self.sticky = sticky
        self.hits: list[Hit] = []
        self._next = 0
        self._pinned: dict[str, int] = {}
        self._ssl: ssl.SSLContext | None = None

    @property
    def ssl_context(self) -> ssl.SSLContext:
        """One TLS context for all its transports: building one costs ~15 ms per client."""
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl

    def pick(self, request: httpx.Request, *, avoid: int | None = None) -> int:
        session = request.headers.get("mcp-session-id") if self.sticky else None
        if session is not None and session in self._pinned and self._pinned[session] != avoid:
            return self._pinned[session]
        index = self._next % len(self.urls)
        self._next += 1
        if session is not None:
            self._pinned[session] = index
        return index

    def pin(self, session: str, index: int) -> None:
        """Send every later request of ``session`` to instance ``index``."""
        self._pinned[session] = index

    def transport(self) -> BalancedTransport:
        """An httpx transport for one client, routed by this balancer."""
        return BalancedTransport(self)

    def counts(self) -> Counter[str]:
        """Requests served per instance, by the ``X-Mcp-Instance`` header."""
        return Counter(hit.instance or "?" for hit in self.hits)


class BalancedTransport(httpx.AsyncBaseTransport):
    """Rewrites each request to the instance the balancer picks; records where it went."""

    def __init__(self, balancer: RoundRobin) -> None:
        self.balancer = balancer
        self.hits: list[Hit] = []
        self._inner = httpx.AsyncHTTPTransport(verify=balancer.ssl_context)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        balancer, failed = self.balancer, None
        for _ in balancer.urls:
            index = balancer.pick(request, avoid=failed)
            upstream = httpx.URL(balancer.urls[index])
            request.url = request.url.copy_with(
                scheme=upstream.scheme, host=upstream.host, port=upstream.port
            )
            request.headers["Host"] = f"{upstream.host}:{upstream.port}"
            try:
                response = await self._inner.handle_async_request(request)
            except httpx.ConnectError:
                failed = index  # never reached the instance: try the next (nginx does too)
                continue
            session = response.headers.get("mcp-session-id")
            if balancer.sticky and session:
                balancer.pin(session, index)
            hit = Hit(
                len(balancer.hits) + 1,
                index,
                response.headers.get(INSTANCE_HEADER),
                _message_label(request),
                response.status_code,
            )
            self.hits.append(hit)
            balancer.hits.append(hit)
            return response
        raise httpx.ConnectError(
            "no instance of the fleet accepted the connection", request=request
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def format_hits(hits: Sequence[Hit]) -> str:
    return "\n".join(
        f"{hit.number:>3} {hit.message:<28} -> {hit.instance or '?':<11} {hit.status}"
        for hit in hits
    )
