"""Throughput and latency of complete two-round MRTR flows over real HTTP on loopback.

Starts ``python -m mrtr_kit serve --example weather`` as a separate process (uvicorn), then
from this process runs N flows of ``get_weather``: round 1 answers input_required with the
login form, round 2 carries the answer and completes. Prints flows/s, p50/p99 per flow and the
server's CPU time per flow (from /proc, Linux only).

    .venv/bin/python benchmarks/bench_flows.py [--flows 2000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from mrtr_kit.client import ElicitResult, McpClient

ROOT = Path(__file__).resolve().parent.parent


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mrtr_kit",
            "serve",
            "--example",
            "weather",
            "--port",
            "0",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "Serving example 'weather' at http://127.0.0.1:PORT/mcp"
    if "http://" not in line:
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}")
    return proc, line.split(" at ", 1)[1].strip()


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process, from /proc (None where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def login(params: object, ctx: object) -> ElicitResult:
    return ElicitResult(action="accept", content={"login": "bench-user", "units": "celsius"})


async def run_flows(url: str, flows: int, concurrency: int) -> list[float]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:
        client = McpClient(url, elicitation=login, http_client=http)
        await client.list_tools()  # learn the tools once, as a real client would
        gate = asyncio.Semaphore(concurrency)
        durations: list[float] = []

        async def one() -> None:
            async with gate:
                t0 = time.perf_counter()
                result = await client.call_tool("get_weather", {"city": "Paris"})
                durations.append(time.perf_counter() - t0)
                assert result["content"][0]["text"].startswith("Hello bench-user")

        for start in range(0, flows, 500):
            await asyncio.gather(*(one() for _ in range(min(500, flows - start))))
            client.clear_trace()  # keep memory flat: the trace records every round
        return durations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    proc, url = start_server()
    try:
        asyncio.run(run_flows(url, 50, args.concurrency))  # warm-up
        cpu0 = cpu_seconds(proc.pid)
        t0 = time.perf_counter()
        durations = asyncio.run(run_flows(url, args.flows, args.concurrency))
        wall = time.perf_counter() - t0
        cpu1 = cpu_seconds(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    durations.sort()
    p99 = durations[min(len(durations) - 1, int(len(durations) * 0.99))]
    print(f"flows: {args.flows} two-round flows, concurrency {args.concurrency}, {url}")
    print(f"throughput: {args.flows / wall:.0f} flows/s ({2 * args.flows / wall:.0f} requests/s)")
    print(
        f"latency per flow: p50 {statistics.median(durations) * 1000:.2f} ms, "
        f"p99 {p99 * 1000:.2f} ms"
    )
    if cpu0 is not None and cpu1 is not None:
        print(f"server CPU per flow: {(cpu1 - cpu0) / args.flows * 1000:.3f} ms")


if __name__ == "__main__":
    main()
