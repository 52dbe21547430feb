"""How fast a kit server starts, next to the official SDK's import, in one run.

Every sample is a fresh interpreter (``python -c ...`` or ``python -m mrtr_kit serve``), and the
rows take turns (sample 1 of every row, then sample 2, ...) so that load on the machine hits
them alike. Prints the median and spread of each row, then the ratios the kit aims for:

* ``import mrtr_kit.server`` <= 0.5x the official SDK's ``import mcp.server.mcpserver``;
* ``serve`` answering its first request <= 1.5x the time the kit's dependencies (its
  ``pyproject.toml`` runtime requirements) take to import, i.e. the kit's own modules, building
  the example server and starting uvicorn cost at most half of what its libraries cost.

"serve answering" is wall time from starting ``python -m mrtr_kit serve --example NAME
--port 0`` to the answer of a ``server/discover`` POSTed as soon as the URL line appears.
``--kit-tree DIR`` adds the same ``serve`` row for another checkout (a worktree of the commit
before a change), interleaved with the others, and the ratio of this tree's start-up to it.
Figures, not a test: nothing here asserts a time.

    .venv/bin/python benchmarks/bench_startup.py [--samples 9] [--example conformance]
        [--kit-tree DIR ...]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

# The kit's runtime dependencies (pyproject.toml), as the modules the kit imports from them.
DEPENDENCIES = (
    "pydantic.main",
    "starlette.applications",
    "starlette.responses",
    "httpx",
    "uvicorn",
    "uvicorn.protocols.http.httptools_impl",
    "cryptography.hazmat.primitives.ciphers.aead",
    "jsonschema_rs",
)

DISCOVER = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
            }
        },
    }
).encode()


Sample = Callable[[], tuple[float, float]]  # (wall seconds, CPU seconds of the child)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_of(pid: int) -> float:
    """utime + stime of a running process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_import(modules: str) -> Sample:
    def sample() -> tuple[float, float]:
        cpu0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([PY, "-c", f"import {modules}"], cwd=ROOT, check=True)
        return time.perf_counter() - t0, _children_cpu() - cpu0

    return sample


def serve_answering(example: str, tree: Path = ROOT) -> Sample:
    """Start ``serve``, read its URL line, POST server/discover: seconds until the answer.
    ``tree``: the checkout whose kit and course serve (another one than this: its folders
    first on PYTHONPATH, and as the working directory, which ``python -m`` puts first)."""
    env = None
    if tree != ROOT:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "course")])}

    def sample() -> tuple[float, float]:
        command = [PY, "-m", "mrtr_kit", "serve", "--example", example, "--port", "0"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [*command, "--log-level", "warning"],
            cwd=tree,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()  # "Serving example 'NAME' at http://HOST:PORT/mcp"
            if "http://" not in line:
                raise SystemExit(f"serve did not print its URL: {line!r}")
            port = int(line.rsplit(":", 1)[1].split("/", 1)[0])
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request(
                "POST",
                "/mcp",
                DISCOVER,
                {
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    "Mcp-Protocol-Version": "2026-07-28",
                    "Mcp-Method": "server/discover",
                },
            )
            answer = conn.getresponse()
            body = answer.read()
            elapsed, cpu = time.perf_counter() - t0, _cpu_of(proc.pid)
            if answer.status != 200 or b"supportedVersions" not in body:
                raise SystemExit(f"unexpected answer {answer.status}: {body[:200]!r}")
            conn.close()
            return elapsed, cpu
        finally:
            proc.terminate()
            proc.wait(10)

    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=9)
    parser.add_argument("--example", default="conformance", help="the example serve runs")
    parser.add_argument(
        "--kit-tree",
        type=Path,
        action="append",
        default=[],
        help="also serve from this checkout (say, a worktree of the commit before a change)",
    )
    args = parser.parse_args()

    rows: dict[str, Sample] = {
        "python -c pass (the interpreter alone)": timed_import("sys"),
        "the kit's dependencies (pyproject)": timed_import(", ".join(DEPENDENCIES)),
        "import mrtr_kit.server": timed_import("mrtr_kit.server"),
        "import mcp.server.mcpserver (official SDK)": timed_import("mcp.server.mcpserver"),
        f"serve --example {args.example}: first answer": serve_answering(args.example),
    }
    others = {
        f"serve, {tree}": serve_answering(args.example, tree.resolve()) for tree in args.kit_tree
    }
    rows.update(others)
    walls: dict[str, list[float]] = {name: [] for name in rows}
    cpus: dict[str, list[float]] = {name: [] for name in rows}
    for sample in rows.values():  # one warm-up each: the disk cache, .pyc files
        sample()
    for _ in range(args.samples):
        for name, sample in rows.items():
            wall, cpu = sample()
            walls[name].append(wall)
            cpus[name].append(cpu)

    print(f"{args.samples} samples each, a fresh interpreter per sample, rows interleaved")
    print(f"{'':46} {'wall median':>11} {'(min-max)':>13} {'CPU median':>11}")
    wall_med = {name: statistics.median(v) for name, v in walls.items()}
    cpu_med = {name: statistics.median(v) for name, v in cpus.items()}
    for name in rows:
        low, high = min(walls[name]) * 1000, max(walls[name]) * 1000
        print(
            f"{name:46} {wall_med[name] * 1000:8.0f} ms {f'({low:.0f}-{high:.0f})':>13} "
            f"{cpu_med[name] * 1000:8.0f} ms"
        )
    _, deps, kit, sdk, serve = list(rows)[:5]
    print()
    for label, med in (("wall", wall_med), ("CPU", cpu_med)):
        print(
            f"{label:>4}: import mrtr_kit.server / import mcp.server.mcpserver = "
            f"{med[kit] / med[sdk]:.2f}x (aim <= 0.5x); "
            f"serve answering / dependencies' import = {med[serve] / med[deps]:.2f}x "
            "(aim <= 1.5x)"
        )

    for other in others:
        print(
            f"serve, this tree / {other.removeprefix('serve, ')}: wall "
            f"{wall_med[serve] / wall_med[other]:.2f}x, CPU {cpu_med[serve] / cpu_med[other]:.2f}x "
            "(aim <= 1.0x: no slower than before)"
        )


if __name__ == "__main__":
    main()
