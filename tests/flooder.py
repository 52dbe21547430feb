"""A connection flood on one loopback port: idle TCP connections and slowloris request heads.

``Flood(port, idle=2000, slow=200)`` holds ``idle`` connections that never send a byte and
``slow`` connections that send the start of a request head (``POST /mcp HTTP/1.1`` and a Host
line) and then one more header line every ``drip_s`` seconds, never ending the head. Whatever
the server closes is opened again, after ``reopen_s`` (so a server that refuses at once is not
hammered in a loop). ``ready`` is set once every connection has been tried once.

``tests/library/test_flood.py`` runs it in its own event loop; ``benchmarks/flood.py`` runs it as a
separate process (``python tests/flooder.py --port P ...``), which prints ``ready`` and then
one ``stats`` line of JSON a second. Only 127.0.0.1 is ever connected to; ``seed`` makes the
drip timings repeatable.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import resource
import signal
import sys
from dataclasses import asdict, dataclass

HOST = "127.0.0.1"  # the only address this flood ever connects to


def raise_open_files_limit(needed: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE towards its hard limit; return the new soft.

    A child started afterwards (nginx, a server) inherits it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard == resource.RLIM_INFINITY else min(hard, max(soft, needed))
    if target == resource.RLIM_INFINITY:
        target = max(soft, needed)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


@dataclass
class FloodStats:
    idle_open: int = 0  # connected now
    slow_open: int = 0
    opened: int = 0  # connections made in all
    closed_by_server: int = 0  # ended by the server (EOF or reset)
    connect_failures: int = 0  # refused, reset or timed out while connecting


class Flood:
    """``idle`` + ``slow`` connections to ``HOST:port``, reopened while ``run()`` runs."""

    def __init__(
        self,
        port: int,
        *,
        idle: int = 2000,
        slow: int = 200,
        drip_s: float = 1.0,
        reopen_s: float = 0.2,
        seed: int = 7,
        connect_concurrency: int = 200,
    ) -> None:
        self.port = port
        self.idle = idle
        self.slow = slow
        self.drip_s = drip_s
        self.reopen_s = reopen_s
        self.stats = FloodStats()
        self.ready = asyncio.Event()
        self._random = random.Random(seed)
        self._connecting = asyncio.Semaphore(connect_concurrency)
        self._tried = 0

    async def run(self) -> None:
        """Hold the flood until cancelled."""
        tasks = [asyncio.create_task(self._idle()) for _ in range(self.idle)]
        tasks += [asyncio.create_task(self._slowloris(n)) for n in range(self.slow)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _first_try_done(self) -> None:
        self._tried += 1
        if self._tried == self.idle + self.slow:
            self.ready.set()

    async def _connect(
        self, first: bool
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        try:
            async with self._connecting:
                return await asyncio.wait_for(asyncio.open_connection(HOST, self.port), 10)
        except (OSError, TimeoutError):
            self.stats.connect_failures += 1
            return None
        finally:
            if first:
                self._first_try_done()

    async def _idle(self) -> None:
        first = True
        while True:
            streams = await self._connect(first)
            first = False
            if streams is not None:
                reader, writer = streams
                self.stats.opened += 1
                self.stats.idle_open += 1
                try:
                    with contextlib.suppress(OSError):
                        while await reader.read(4096):  # anything the server says; EOF ends it
                            pass
                    self.stats.closed_by_server += 1
                finally:
                    self.stats.idle_open -= 1
                    writer.close()
            await asyncio.sleep(self.reopen_s)

    async def _slowloris(self, n: int) -> None:
        first = True
        while True:
            streams = await self._connect(first)
            first = False
            if streams is not None:
                reader, writer = streams
                self.stats.opened += 1
                self.stats.slow_open += 1
                closed = asyncio.create_task(reader.read(4096))  # EOF or any answer: done
                try:
                    part = f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{self.port}\r\n".encode()
                    line = 0
                    while not closed.done():
                        writer.write(part)
                        await writer.drain()
                        line += 1
                        value = "a" * self._random.randint(1, 20)
                        part = f"X-Slow-{n}-{line}: {value}\r\n".encode()
                        jitter = self._random.uniform(0.5, 1.5)
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(asyncio.shield(closed), self.drip_s * jitter)
                except OSError:
                    pass
                finally:
                    closed.cancel()
                    with contextlib.suppress(BaseException):
                        await closed
                    self.stats.closed_by_server += 1
                    self.stats.slow_open -= 1
                    writer.close()
            await asyncio.sleep(self.reopen_s)


async def _serve_flood(args: argparse.Namespace) -> None:
    flood = Flood(args.port, idle=args.idle, slow=args.slow, drip_s=args.drip, seed=args.seed)
    runner = asyncio.create_task(flood.run())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    await flood.ready.wait()
    print("ready", flush=True)
    while not stop.is_set():
        print("stats", json.dumps(asdict(flood.stats)), flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)
    runner.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await runner
    print("stats", json.dumps(asdict(flood.stats)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--idle", type=int, default=2000)
    parser.add_argument("--slow", type=int, default=200)
    parser.add_argument("--drip", type=float, default=1.0, help="seconds between head lines")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    limit = raise_open_files_limit(args.idle + args.slow + 64)
    if limit < args.idle + args.slow + 64:
        sys.exit(f"RLIMIT_NOFILE {limit} is too low for {args.idle + args.slow} connections")
    asyncio.run(_serve_flood(args))


if __name__ == "__main__":
    main()
