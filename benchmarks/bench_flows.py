"""Two-round MRTR flows over real HTTP on loopback: the kit's server next to the official SDK's.

Starts each server as its own process: ``python -m mrtr_kit serve --example weather`` (the
kit) and ``benchmarks/sdk_weather.py`` (the same ``get_weather`` in the official SDK, ``mcp``
2.3, under uvicorn's defaults). One client (the kit's ``McpClient``) then runs N flows of
``get_weather`` against each: round 1 answers input_required with the login form, round 2
carries the answer and completes. The servers take turns, a block of flows at a time, so load
on the machine hits them alike. Per server it prints flows/s, p50/p99 per flow and the
server process's CPU time per flow (utime + stime from /proc, Linux only), then the ratio of
the kit's CPU per flow to the SDK's. ``--kit-tree DIR`` adds the kit of another checkout (say,
the main branch before a change) as a third server; ``--floor`` adds a bare ASGI app with
canned answers under the kit's uvicorn settings (``floor_app.py``): HTTP and asyncio alone.

    .venv/bin/python benchmarks/bench_flows.py [--flows 2000] [--concurrency 8] [--block 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from mrtr_kit.client import ElicitResult, McpClient

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Server:
    label: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path = ROOT
    proc: subprocess.Popen[str] | None = None
    url: str = ""
    cpu: float = 0.0  # seconds of server CPU during the measured flows
    wall: float = 0.0
    durations: list[float] = field(default_factory=list)

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.command,
            cwd=self.cwd,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, **self.env},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "Serving ... at http://127.0.0.1:PORT/mcp"
        if "http://" not in line:
            self.stop()
            raise SystemExit(f"{self.label} did not start: {line!r}")
        self.url = line.rsplit(" at ", 1)[1].strip()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def kit_server(label: str, tree: Path) -> Server:
    command = [sys.executable, "-m", "mrtr_kit", "serve", "--example", "weather", "--port", "0"]
    # cwd too: ``python -m`` puts the working directory first on sys.path, ahead of PYTHONPATH
    return Server(label, [*command, "--log-level", "warning"], {"PYTHONPATH": str(tree)}, tree)


def sdk_server() -> Server:
    script = str(ROOT / "benchmarks" / "sdk_weather.py")
    return Server("official SDK (mcp 2.3)", [sys.executable, script, "--port", "0"])


def floor_server() -> Server:
    script = str(ROOT / "benchmarks" / "floor_app.py")
    return Server("floor: bare ASGI app, kit's uvicorn", [sys.executable, script, "--port", "0"])


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, from /proc (None where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def login(params: object, ctx: object) -> ElicitResult:
    return ElicitResult(action="accept", content={"login": "bench-user", "units": "celsius"})


async def run_flows(client: McpClient, flows: int, concurrency: int) -> list[float]:
    gate = asyncio.Semaphore(concurrency)
    durations: list[float] = []

    async def one() -> None:
        async with gate:
            t0 = time.perf_counter()
            result = await client.call_tool("get_weather", {"city": "Paris"})
            durations.append(time.perf_counter() - t0)
            assert result["content"][0]["text"].startswith("Hello bench-user"), result

    await asyncio.gather(*(one() for _ in range(flows)))
    client.clear_trace()  # keep memory flat: the trace records every round
    return durations


async def bench(servers: list[Server], flows: int, concurrency: int, block: int) -> None:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:
        clients = [McpClient(s.url, elicitation=login, http_client=http) for s in servers]
        for client in clients:
            await client.list_tools()  # learn the tools once, as a real client would
            await run_flows(client, 50, concurrency)  # warm-up: imports, caches, pools
        done = 0
        while done < flows:
            n = min(block, flows - done)
            for server, client in zip(servers, clients, strict=True):  # take turns
                assert server.proc is not None
                cpu0, t0 = cpu_seconds(server.proc.pid), time.perf_counter()
                server.durations += await run_flows(client, n, concurrency)
                server.wall += time.perf_counter() - t0
                cpu1 = cpu_seconds(server.proc.pid)
                if cpu0 is not None and cpu1 is not None:
                    server.cpu += cpu1 - cpu0
            done += n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=2000, help="per server")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--block", type=int, default=200, help="flows per turn")
    parser.add_argument(
        "--kit-tree", type=Path, action="append", default=[], help="also this checkout's kit"
    )
    parser.add_argument("--no-sdk", action="store_true", help="only the kit (no mcp needed)")
    parser.add_argument(
        "--floor", action="store_true", help="also a bare ASGI app (benchmarks/floor_app.py)"
    )
    args = parser.parse_args()

    servers = [kit_server("kit (this tree)", ROOT)]
    servers += [kit_server(f"kit ({tree})", tree.resolve()) for tree in args.kit_tree]
    if args.floor:
        servers.append(floor_server())
    if not args.no_sdk:
        servers.append(sdk_server())
    try:
        for server in servers:
            server.start()
        asyncio.run(bench(servers, args.flows, args.concurrency, args.block))
    finally:
        for server in servers:
            server.stop()

    print(
        f"{args.flows} two-round get_weather flows per server, concurrency {args.concurrency}, "
        f"servers taking turns every {args.block} flows, one client"
    )
    print(f"{'server':34} {'flows/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'CPU ms/flow':>12}")
    for s in servers:
        d = sorted(s.durations)
        p99 = d[min(len(d) - 1, int(len(d) * 0.99))]
        print(
            f"{s.label:34} {len(d) / s.wall:8.0f} {statistics.median(d) * 1000:8.2f} "
            f"{p99 * 1000:8.2f} {s.cpu / len(d) * 1000:12.3f}"
        )
    if not args.no_sdk and servers[-1].cpu > 0:
        sdk = servers[-1]
        for s in servers[:-1]:
            print(f"CPU per flow, {s.label} / official SDK: {s.cpu / sdk.cpu:.2f}x (aim <= 0.5x)")


if __name__ == "__main__":
    main()
