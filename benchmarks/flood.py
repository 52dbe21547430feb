"""Honest two-round flows under a connection flood, with the kit's server alone or behind nginx.

For each front (``--front none``: clients connect to ``python -m mrtr_kit serve --example
weather`` itself; ``--front nginx``: to a real nginx from the repository's own
``mrtr_course.fleet.nginx_config`` in front of that server; ``--front both``: one after the
other, each with fresh processes) it runs three phases of honest ``get_weather`` flows (round
1 answers input_required with the login form, round 2 carries the answer and completes):

* before: ``--before`` seconds with no flood;
* during: ``--during`` seconds while ``tests/flooder.py`` runs as its own process and holds
  ``--idle`` (2,000) idle TCP connections and ``--slow`` (200) slowloris heads (a head that
  gets one more header line every second or so, never ending), reopening whatever is closed;
  the phase starts once every flood connection has been tried once;
* after: ``--after`` seconds once the flooder is stopped.

Honest flows run ``--concurrency`` at a time, each request on a new TCP connection (no
keep-alive: the hardest case under a flood), each flow bounded by ``--flow-timeout``. A flow
is served if it completes with the expected text. Per phase it prints flows attempted, the
share served, p50 and p99 of the served flows' durations, the errors of the others, and the
peak RSS (``/proc/PID/status`` VmRSS, sampled every 0.5 s) of the server process and of all
nginx processes (master and workers). The flooder's counters follow the during row.

Every process it starts is stopped by PID; the flood's timings come from ``--seed``; only
127.0.0.1 is connected to. The soft RLIMIT_NOFILE is raised to the hard limit first, so the
server and nginx (which inherit it) can hold the flood.

    .venv/bin/python benchmarks/flood.py [--front both] [--during 30] [--idle 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
# This tree's kit (nginx_config above all), not whichever one the interpreter has installed;
# and the flooder, shared with tests/library/test_flood.py.
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from flooder import raise_open_files_limit  # noqa: E402

from mrtr_course.fleet import Fleet, serve_command, start_processes  # noqa: E402
from mrtr_kit.client import ElicitResult, McpClient  # noqa: E402
from mrtr_kit.server.loopback import stop_process  # noqa: E402
from mrtr_kit.server.nginx import Nginx  # noqa: E402

FLOODER = ROOT / "tests" / "flooder.py"
EXPECTED = "Hello flood-user"


def login(params: object, ctx: object) -> ElicitResult:
    return ElicitResult(action="accept", content={"login": "flood-user", "units": "celsius"})


# -- memory --------------------------------------------------------------------------------------


def rss_kb(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmRSS:\s+(\d+) kB", text, re.M)
    return int(found.group(1)) if found else 0


def children(pid: int) -> list[int]:
    """The PIDs whose parent is ``pid`` (nginx's workers), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@dataclass
class Memory:
    """Peak RSS (kB) of the server and of nginx (master + workers) over a phase."""

    server_pid: int
    nginx_pid: int | None
    server_kb: int = 0
    nginx_kb: int = 0

    def sample(self) -> None:
        self.server_kb = max(self.server_kb, rss_kb(self.server_pid))
        if self.nginx_pid is not None:
            pids = [self.nginx_pid, *children(self.nginx_pid)]
            self.nginx_kb = max(self.nginx_kb, sum(rss_kb(p) for p in pids))

    def reset(self) -> None:
        self.server_kb = self.nginx_kb = 0


# -- honest flows --------------------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    durations: list[float] = field(default_factory=list)  # of served flows, seconds
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    server_kb: int = 0
    nginx_kb: int = 0
    flood: dict[str, int] = field(default_factory=dict)

    @property
    def attempted(self) -> int:
        return len(self.durations) + sum(self.errors.values())

    @property
    def served_pct(self) -> float:
        return 100.0 * len(self.durations) / self.attempted if self.attempted else 0.0

    def percentile(self, q: float) -> float | None:
        if not self.durations:
            return None
        ordered = sorted(self.durations)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def describe(exc: BaseException) -> str:
    status = getattr(exc, "http_status", None)
    return f"{type(exc).__name__}" + (f" HTTP {status}" if status else "")


async def honest_phase(
    client: McpClient, phase: Phase, memory: Memory, seconds: float, args: argparse.Namespace
) -> None:
    deadline = time.monotonic() + seconds
    memory.reset()

    async def worker() -> None:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                async with asyncio.timeout(args.flow_timeout):
                    result = await client.call_tool("get_weather", {"city": "Paris"})
            except TimeoutError:
                phase.errors["flow timeout"] += 1
                continue
            except Exception as exc:  # any way a flow fails counts, by its kind
                phase.errors[describe(exc)] += 1
                await asyncio.sleep(0.05)  # an honest client does not retry in a hot loop
                continue
            if result["content"][0]["text"].startswith(EXPECTED):
                phase.durations.append(time.perf_counter() - started)
            else:
                phase.errors["wrong result"] += 1
            if len(client.trace) > 1000:
                client.clear_trace()

    async def sampler() -> None:
        while True:
            memory.sample()
            await asyncio.sleep(0.5)

    sampling = asyncio.create_task(sampler())
    await asyncio.gather(*(worker() for _ in range(args.concurrency)))
    sampling.cancel()
    memory.sample()
    phase.server_kb, phase.nginx_kb = memory.server_kb, memory.nginx_kb


# -- the flooder process -------------------------------------------------------------------------


class Flooder:
    """``tests/flooder.py`` as a child process; ``start()`` returns once its flood is up."""

    def __init__(self, port: int, args: argparse.Namespace) -> None:
        command = [sys.executable, str(FLOODER), "--port", str(port), "--seed", str(args.seed)]
        command += ["--idle", str(args.idle), "--slow", str(args.slow)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        self.ready = threading.Event()
        self.stats: dict[str, int] = {}
        self.peak_open = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("ready"):
                self.ready.set()
            elif line.startswith("stats "):
                self.stats = json.loads(line[6:])
                open_now = self.stats["idle_open"] + self.stats["slow_open"]
                self.peak_open = max(self.peak_open, open_now)
        self.ready.set()  # the output ended: started or not, stop waiting

    def wait_ready(self, timeout: float = 120.0) -> None:
        if not self.ready.wait(timeout) or self.process.poll() is not None:
            self.stop()
            raise SystemExit("the flooder did not start")

    def stop(self) -> None:
        stop_process(self.process, timeout=10)
        self._thread.join(5)


# -- one front -----------------------------------------------------------------------------------


async def measure(front: str, target: str, memory: Memory, args: argparse.Namespace) -> list[Phase]:
    limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=0)
    port = httpx.URL(target).port
    assert port is not None
    phases = [Phase("before"), Phase("during"), Phase("after")]
    async with httpx.AsyncClient(limits=limits, timeout=args.flow_timeout) as http:
        client = McpClient(target, elicitation=login, http_client=http)
        await client.list_tools()
        await honest_phase(client, Phase("warm-up"), memory, 2.0, args)
        await honest_phase(client, phases[0], memory, args.before, args)
        flooder = Flooder(port, args)
        try:
            await asyncio.to_thread(flooder.wait_ready)
            await honest_phase(client, phases[1], memory, args.during, args)
            phases[1].flood = {**flooder.stats, "peak_open": flooder.peak_open}
        finally:
            await asyncio.to_thread(flooder.stop)
        await honest_phase(client, phases[2], memory, args.after, args)
    return phases


def run_front(front: str, args: argparse.Namespace) -> list[Phase]:
    env = {"PYTHONPATH": str(ROOT)}  # the server imports this tree's kit
    command = serve_command("weather", f"flood-{front}")
    fleet: Fleet = start_processes({"server": command}, env=env)
    nginx: Nginx | None = None
    try:
        target = fleet.urls[0]
        if front == "nginx":
            nginx = Nginx(fleet.urls).start()
            target = nginx.url
        memory = Memory(fleet[0].pid, nginx.process.pid if nginx and nginx.process else None)
        return asyncio.run(measure(front, target, memory, args))
    finally:
        if nginx is not None:
            nginx.stop()
        fleet.stop()


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def report(results: dict[str, list[Phase]], args: argparse.Namespace) -> None:
    print(
        f"honest get_weather flows (2 rounds, a new connection per request), concurrency "
        f"{args.concurrency}, flow timeout {args.flow_timeout:.0f} s; flood: {args.idle} idle "
        f"connections + {args.slow} slowloris heads, reopened when closed; seed {args.seed}"
    )
    header = (
        f"{'front':6} {'phase':7} {'flows':>6} {'served':>8} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'server RSS':>11} {'nginx RSS':>10}  errors"
    )
    print(header)
    for front, phases in results.items():
        for p in phases:
            nginx = f"{p.nginx_kb / 1024:8.1f}MB" if front == "nginx" else f"{'-':>10}"
            errors = ", ".join(f"{kind} x{n}" for kind, n in p.errors.most_common()) or "-"
            print(
                f"{front:6} {p.name:7} {p.attempted:6} {p.served_pct:7.1f}% "
                f"{ms(p.percentile(0.5)):>7} {ms(p.percentile(0.99)):>7} "
                f"{p.server_kb / 1024:9.1f}MB {nginx}  {errors}"
            )
        flood = phases[1].flood
        if flood:
            print(
                f"{'':6} flood: {flood['peak_open']} connections open at most, "
                f"{flood['opened']} opened, {flood['closed_by_server']} closed by the "
                f"front, {flood['connect_failures']} connects failed"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--front", choices=["none", "nginx", "both"], default="both")
    parser.add_argument("--before", type=float, default=10.0, help="seconds")
    parser.add_argument("--during", type=float, default=30.0, help="seconds")
    parser.add_argument("--after", type=float, default=10.0, help="seconds")
    parser.add_argument("--idle", type=int, default=2000, help="idle flood connections")
    parser.add_argument("--slow", type=int, default=200, help="slowloris flood connections")
    parser.add_argument("--concurrency", type=int, default=4, help="honest flows at a time")
    parser.add_argument("--flow-timeout", type=float, default=10.0, help="seconds per flow")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    limit = raise_open_files_limit(2 * (args.idle + args.slow) + 1024)
    print(f"RLIMIT_NOFILE (soft) for the server and nginx: {limit}; pid {os.getpid()}")
    fronts = ["none", "nginx"] if args.front == "both" else [args.front]
    results = {front: run_front(front, args) for front in fronts}
    report(results, args)


if __name__ == "__main__":
    main()
