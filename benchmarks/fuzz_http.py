"""Fuzz a real server process over HTTP: never a 500, never a dropped connection
(docs/architecture.md §6).

Starts ``python -m mrtr_kit serve --example conformance --port 0`` (it prints its URL, which
is awaited), and sends it, over raw sockets to 127.0.0.1 only:

* the big bodies first, while the server's memory is fresh: 100 MB chunked with no
  Content-Length, 100 MB with a true Content-Length, and a Content-Length of 100 MB with only
  1 KB sent (the lie); the server's RSS is sampled meanwhile (``/proc/PID/status``);
* a slow drip (a 200-byte body at one byte every 0.5 s), an idle connection and half a
  request head, in the background, each against the server's timeouts;
* ``--cases`` (10,000) requests built valid and then broken by a seeded generator: byte flips,
  truncation, hostile values (NaN, 1e400, 5,000-digit integers, lone surrogates, deep nesting)
  in id / params / _meta / inputResponses / requestState / arguments, wrong types there,
  UTF-16/32 and BOMs, duplicate keys, oversized bodies, missing, wrong and malformed headers,
  foreign Host and Origin.

It prints the counts per status class, 5xx, dropped connections (closed or reset before a
complete response), the JSON-RPC error codes, -32603s against handler failures in the server
log, and the server's peak RSS. It exits 1 if any 5xx, drop, unexplained -32603 or status
that does not fit its code was seen. Every mutation comes from ``random.Random(seed)``.

    .venv/bin/python benchmarks/fuzz_http.py [--cases 10000] [--seed 8] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h11

from mrtr_kit.protocol.constants import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MRTR_METHODS,
    PROTOCOL_VERSION,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the fuzzers' shared vocabulary lives with the tests
import hostile_http as hostile  # noqa: E402

HOST = "127.0.0.1"  # the only address this script ever connects to
MB = 1_000_000
CASE_TIMEOUT_S = 30.0

# -- the server ---------------------------------------------------------------------------------


@dataclass
class Server:
    proc: subprocess.Popen[str]
    port: int
    log_path: Path

    def status(self) -> dict[str, int]:
        """VmRSS / VmHWM (peak RSS) of the server process, in kB."""
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        return {k: int(v) for k, v in re.findall(r"^(VmRSS|VmHWM):\s+(\d+) kB", text, re.M)}

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_server(log_path: Path) -> Server:
    command = [sys.executable, "-m", "mrtr_kit", "serve", "--example", "conformance"]
    command += ["--host", HOST, "--port", "0", "--log-level", "warning"]
    log = log_path.open("w")
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "Serving example 'conformance' at http://127.0.0.1:PORT/mcp"
    found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
    if not found:
        proc.kill()
        raise SystemExit(f"server did not start: {line!r}\n{log_path.read_text()}")
    return Server(proc, int(found.group(1)), log_path)


# -- one exchange over a raw socket --------------------------------------------------------------


@dataclass
class Outcome:
    status: int | None = None  # None: no complete response (a drop)
    content_type: str = ""
    body: bytes = b""
    error: str = ""
    seconds: float = 0.0
    sent: int = 0  # bytes of the request written to the socket


async def exchange(
    port: int,
    head: bytes,
    body_parts: list[bytes] | None = None,
    *,
    drip_s: float = 0.0,
    timeout: float = CASE_TIMEOUT_S,
    send_everything: bool = False,
) -> Outcome:
    """Send ``head`` and the body parts (``drip_s`` apart), and read one full response.

    The response may come before the body is all sent (a 413 does); with ``send_everything``
    the rest is still sent afterwards, so the server really receives all of it.
    """
    started = time.monotonic()
    out = Outcome()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), 10)
    except OSError as exc:
        return Outcome(error=f"connect: {exc!r}")
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="POST", target="/mcp", headers=[("Host", HOST)]))
    client.send(h11.EndOfMessage())  # only moves h11 to "reading the response"

    async def send_all() -> None:
        writer.write(head)
        out.sent += len(head)
        for part in body_parts or []:
            if drip_s:
                await asyncio.sleep(drip_s)
            writer.write(part)
            await writer.drain()
            out.sent += len(part)

    sender = asyncio.create_task(send_all())
    try:
        async with asyncio.timeout(timeout):
            while True:
                event = client.next_event()
                if event is h11.NEED_DATA:
                    data = await reader.read(65536)
                    client.receive_data(data)  # b"" is end of stream
                    continue
                if isinstance(event, h11.Response):
                    out.status = event.status_code
                    out.content_type = dict(event.headers).get(b"content-type", b"").decode()
                elif isinstance(event, h11.Data):
                    out.body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    if send_everything:
                        await sender
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    out.status, out.error = None, "closed before a complete response"
                    break
    except TimeoutError:
        out.status, out.error = None, f"no complete response within {timeout:g} s"
    except (OSError, h11.RemoteProtocolError) as exc:
        out.status, out.error = None, repr(exc)
    finally:
        sender.cancel()
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    out.seconds = time.monotonic() - started
    return out


def request_head(
    lines: list[tuple[bytes, bytes]],
    content_length: int | None,
    *,
    chunked: bool = False,
    close: bool = True,
) -> bytes:
    head = [b"POST /mcp HTTP/1.1"]
    head += [name + b": " + value for name, value in lines]
    if chunked:
        head.append(b"Transfer-Encoding: chunked")
    elif content_length is not None:
        head.append(b"Content-Length: " + str(content_length).encode())
    if close:
        head.append(b"Connection: close")
    return b"\r\n".join(head) + b"\r\n\r\n"


# -- building and breaking requests ---------------------------------------------------------------

WRONG_TYPES: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], [1, 2], {}, {"a": {"b": []}}]
BAD_HOSTS = [
    b"evil.example.com",
    b"127.0.0.1:80.evil.com",
    b"[::1].evil.com",
    b"127.0.0.1:evil.com",
    b"127.0.0.1:0",
    b"127.0.0.1:99999",
    b"localhost.",
    b"user@127.0.0.1",
    b"[::1",
]
BAD_ORIGINS = [
    b"http://evil.example.com",
    b"http://127.0.0.1:80.evil.com",
    b"http://127.0.0.1:abc",
    b"http://[",
    b"null",
    b"http://127.0.0.1/",
    b"file://127.0.0.1",
    b"http://user@127.0.0.1",
]


@dataclass
class Case:
    kind: str
    body: bytes
    lines: list[tuple[bytes, bytes]]
    content_length: int | None = None


class Generator:
    """Seeded: case i is the same on every run with the same seed."""

    def __init__(self, seed: int, tools: list[str], port: int) -> None:
        self.rng = random.Random(seed)
        self.tools = tools
        self.host = f"{HOST}:{port}".encode()

    def valid(self) -> tuple[dict[str, Any], list[tuple[bytes, bytes]]]:
        rng = self.rng
        method = rng.choice(hostile.METHODS)
        meta: dict[str, Any] = {
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: rng.choice(
                [{}, {"elicitation": {}}, {"elicitation": {}, "sampling": {}, "roots": {}}]
            ),
        }
        if rng.random() < 0.3:
            meta["progressToken"] = rng.choice(["p-1", 7])
        params: dict[str, Any] = {"_meta": meta}
        name = rng.choice(self.tools)
        if method == "tools/call":
            params["name"] = name
            if rng.random() < 0.5:
                params["arguments"] = rng.choice([{}, {"a": 1}, {"city": "Paris"}, {"x": [1]}])
        elif method == "prompts/get":
            params["name"] = rng.choice(["test_simple_prompt", "test_prompt_with_arguments"])
        elif method == "resources/read":
            params["uri"] = rng.choice(["test://static-text", "test://template/1/data", "x:"])
        message = {"jsonrpc": "2.0", "id": rng.randrange(1, 10**6), "method": method}
        message["params"] = params
        lines = [
            (b"Host", self.host),
            (b"Content-Type", b"application/json"),
            (b"Accept", b"application/json, text/event-stream"),
            (HEADER_PROTOCOL_VERSION.encode(), PROTOCOL_VERSION.encode()),
            (HEADER_METHOD.encode(), method.encode()),
        ]
        if method in MRTR_METHODS:
            target = params.get("uri" if method == "resources/read" else "name", "")
            lines.append((HEADER_NAME.encode(), str(target).encode()))
        return message, lines

    def case(self) -> Case:
        rng = self.rng
        message, lines = self.valid()
        kind = rng.choice(MUTATIONS)
        case = Case(kind, b"", lines)
        body = MUTATORS[kind](self, message, case)
        case.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        if case.content_length is None:
            case.content_length = len(case.body)
        return case

    # each mutator returns the message (to be JSON-encoded) or the body bytes

    def m_none(self, message: dict[str, Any], case: Case) -> Any:
        return message

    def m_flip(self, message: dict[str, Any], case: Case) -> bytes:
        data = json.dumps(message).encode()
        for _ in range(self.rng.randint(1, 3)):
            at = self.rng.randrange(len(data))
            data = hostile.damage(data, "flip", at, bit=self.rng.randrange(8))
        return data

    def m_truncate(self, message: dict[str, Any], case: Case) -> bytes:
        data = json.dumps(message).encode()
        return hostile.damage(data, "truncate", self.rng.randrange(len(data)))

    def m_insert(self, message: dict[str, Any], case: Case) -> bytes:
        data = json.dumps(message).encode()
        at = self.rng.randrange(len(data) + 1)
        return hostile.damage(data, "insert", at, insert=self.rng.choice(hostile.HOSTILE_VALUES))

    def _slot(self, message: dict[str, Any], value: Any) -> dict[str, Any]:
        params = message["params"]
        slot = self.rng.choice(
            ["id", "params", "_meta", "version", "caps", "token", "arguments", "answers", "state"]
        )
        if slot == "id":
            message["id"] = value
        elif slot == "params":
            message["params"] = value
        elif slot == "_meta":
            params["_meta"] = value
        elif slot == "version":
            params["_meta"][META_PROTOCOL_VERSION] = value
        elif slot == "caps":
            params["_meta"][META_CLIENT_CAPABILITIES] = value
        elif slot == "token":
            params["_meta"]["progressToken"] = value
        elif slot == "arguments":
            params["arguments"] = value if self.rng.random() < 0.5 else {"x": value}
        elif slot == "answers":
            params["inputResponses"] = self.rng.choice(
                [value, {"k": value}, {"k": {"action": "accept", "content": {"n": value}}}]
            )
        else:
            params["requestState"] = value
        return message

    def m_hostile_value(self, message: dict[str, Any], case: Case) -> bytes:
        data = json.dumps(self._slot(message, hostile.PLACEHOLDER)).encode()
        return hostile.with_hostile(data, self.rng.choice(hostile.HOSTILE_VALUES))

    def m_wrong_type(self, message: dict[str, Any], case: Case) -> Any:
        return self._slot(message, self.rng.choice(WRONG_TYPES))

    def m_encoding(self, message: dict[str, Any], case: Case) -> bytes:
        text = json.dumps(message, ensure_ascii=False)
        return self.rng.choice(
            [
                lambda: text.encode("utf-16"),
                lambda: text.encode("utf-16-be"),
                lambda: text.encode("utf-32"),
                lambda: b"\xef\xbb\xbf" + text.encode(),
                lambda: text.encode("latin-1", "replace") + b"\xe9\xff",
            ]
        )()

    def m_duplicate_key(self, message: dict[str, Any], case: Case) -> bytes:
        data = json.dumps(message).encode()
        return data.replace(b'"jsonrpc": "2.0"', b'"jsonrpc": "2.0", "jsonrpc": "2.0"', 1)

    def m_shape(self, message: dict[str, Any], case: Case) -> Any:
        choice = self.rng.randrange(7)
        if choice == 0:
            return [message]  # a batch
        if choice == 1:
            del message["id"]  # a notification: 202
            return message
        if choice == 2:
            message["jsonrpc"] = "1.0"
            return message
        if choice == 3:
            message["result"] = {}
            del message["method"]
            return message
        if choice == 4:
            return self.rng.choice([b"", b"null", b"1", b'"x"', b"{}", b"[]", b"\n"])
        if choice == 5:  # a 2025-11-25 initialize, as a legacy client sends it (VER-5)
            version = self.rng.choice(["2025-11-25", "2025-06-18", "2024-11-05"])
            init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "x"}}
            case.lines = [(n, v) for n, v in case.lines if not n.lower().startswith(b"mcp")]
            return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}
        message["method"] = message["method"].upper()  # choice 6
        return message

    def m_deep(self, message: dict[str, Any], case: Case) -> bytes:
        depth = self.rng.choice([65, 100, 1000, 100_000])
        return b"[" * depth + b"]" * (depth if self.rng.random() < 0.5 else 0)

    def m_oversized(self, message: dict[str, Any], case: Case) -> Any:
        message["params"]["pad"] = "x" * (MB + self.rng.randrange(1000))
        return message

    def m_header(self, message: dict[str, Any], case: Case) -> Any:
        rng = self.rng
        lines = case.lines
        names = [n for n, _ in lines if n != b"Host"]
        victim = rng.choice(names)
        choice = rng.randrange(6)
        if choice == 0:
            case.lines = [(n, v) for n, v in lines if n != victim]
        elif choice == 1:
            case.lines = [(n, b"wrong/" + v if n == victim else v) for n, v in lines]
        elif choice == 2:
            bad = bytes([rng.choice([0x80, 0xE9, 0xFF, 0x01, 0x7F, 0x00])])
            case.lines = [(n, v + bad if n == victim else v) for n, v in lines]
        elif choice == 3:
            case.lines = [(n.lower() if n == victim else n, v) for n, v in lines]
        elif choice == 4:
            case.lines = [*lines, (b"Mcp-Param-Region", b"=?base64?!!?=")]
        else:
            case.lines = [*lines, (victim, b"second value")]
        return message

    def m_host(self, message: dict[str, Any], case: Case) -> Any:
        rng = self.rng
        if rng.random() < 0.5:
            bad = rng.choice(BAD_HOSTS)
            case.lines = [(n, bad if n == b"Host" else v) for n, v in case.lines]
        else:
            case.lines = [*case.lines, (b"Origin", rng.choice(BAD_ORIGINS))]
        return message

    def m_content_length_low(self, message: dict[str, Any], case: Case) -> Any:
        data = json.dumps(message).encode()
        case.content_length = self.rng.randrange(len(data))  # a lie: all of data is sent
        return data


MUTATORS = {
    "valid": Generator.m_none,
    "byte flip": Generator.m_flip,
    "truncated": Generator.m_truncate,
    "hostile bytes inserted": Generator.m_insert,
    "hostile value in a field": Generator.m_hostile_value,
    "wrong type in a field": Generator.m_wrong_type,
    "not UTF-8": Generator.m_encoding,
    "duplicate key": Generator.m_duplicate_key,
    "not a JSON-RPC request": Generator.m_shape,
    "deep nesting": Generator.m_deep,
    "header broken": Generator.m_header,
    "foreign Host/Origin": Generator.m_host,
    "Content-Length too low": Generator.m_content_length_low,
    "oversized": Generator.m_oversized,
}
# Each kind equally often, except oversized bodies (1 MB each): one eighth as often.
MUTATIONS = [k for k in MUTATORS for _ in range(1 if k == "oversized" else 8)]


# -- judging a response -----------------------------------------------------------------------


@dataclass
class Tally:
    cases: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    codes: collections.Counter[str] = field(default_factory=collections.Counter)
    kinds: collections.Counter[str] = field(default_factory=collections.Counter)
    drops: list[str] = field(default_factory=list)
    misfits: list[str] = field(default_factory=list)
    not_jsonrpc: collections.Counter[str] = field(default_factory=collections.Counter)
    codes_on_streams: collections.Counter[str] = field(default_factory=collections.Counter)


def judge(tally: Tally, label: str, out: Outcome) -> None:
    tally.cases += 1
    if out.status is None:
        tally.drops.append(f"{label}: {out.error}")
        return
    tally.statuses[out.status] += 1
    if out.status == 202 and out.body == b"":
        tally.codes["(202 notification)"] += 1
        return
    try:
        if out.content_type.startswith("text/event-stream"):
            events = [
                hostile.strict_json(line[5:])
                for line in out.body.splitlines()
                if line.startswith(b"data:")
            ]
            message = events[-1]
        elif out.content_type.startswith("application/json"):
            message = hostile.strict_json(out.body)
        else:
            # Requests the HTTP parser (h11) refuses before the app: control bytes in a
            # header, say. uvicorn answers those itself in plain text.
            tally.not_jsonrpc[f"{out.status} {out.content_type} {out.body[:40]!r}"] += 1
            return
        assert message.get("jsonrpc") == "2.0" and ("result" in message) != ("error" in message)
    except (ValueError, AssertionError, IndexError, AttributeError) as exc:
        tally.misfits.append(f"{label}: {out.status} not a JSON-RPC response ({exc!r})")
        return
    if "result" in message:
        tally.codes["(result)"] += 1
        if out.status != 200:
            tally.misfits.append(f"{label}: result with HTTP {out.status}")
        return
    code = message["error"].get("code")
    tally.codes[str(code)] += 1
    if out.content_type.startswith("text/event-stream"):
        # Once a stream has started its status is 200, whatever the final answer says.
        tally.codes_on_streams[str(code)] += 1
        if out.status != 200:
            tally.misfits.append(f"{label}: SSE stream with HTTP {out.status}")
    elif out.status not in hostile.STATUS_OF_CODE.get(code, {200}):
        tally.misfits.append(f"{label}: code {code} with HTTP {out.status}")


# -- the runs -----------------------------------------------------------------------------------


class RssSampler:
    """Samples the server's VmRSS every 5 ms in a thread; ``peak_kb`` is the largest seen."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.peak_kb = max(self.peak_kb, self.server.status()["VmRSS"])

    def __enter__(self) -> RssSampler:
        self.peak_kb = self.server.status()["VmRSS"]
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def big_bodies(server: Server, tally: Tally) -> list[str]:
    """The three 100 MB cases, one after another, with the server's memory watched."""
    lines = [
        (b"Host", f"{HOST}:{server.port}".encode()),
        (HEADER_PROTOCOL_VERSION.encode(), PROTOCOL_VERSION.encode()),
        (HEADER_METHOD.encode(), b"tools/list"),
    ]
    chunk = b"x" * 65536
    parts = [chunk] * (100 * MB // len(chunk))
    framed = [b"%x\r\n%s\r\n" % (len(p), p) for p in parts] + [b"0\r\n\r\n"]
    report = []
    for label, head, body in [
        # Kept alive, as HTTP/1.1 clients are: the server answers 413 early, then reads and
        # drops the rest, so a client that sends everything before reading still gets it.
        ("100 MB chunked", request_head(lines, None, chunked=True, close=False), framed),
        (
            "100 MB with Content-Length",
            request_head(lines, len(chunk) * len(parts), close=False),
            parts,
        ),
        ("Content-Length 100 MB, 1 KB sent", request_head(lines, 100 * MB), [b"{" * 1000]),
    ]:
        before = server.status()
        with RssSampler(server) as sampler:
            out = await exchange(server.port, head, body, timeout=60, send_everything=True)
        after = server.status()
        judge(tally, label, out)
        report.append(
            f"  {label:33} -> HTTP {out.status}, {out.sent / MB:.1f} MB sent in "
            f"{out.seconds:.2f} s; server RSS {before['VmRSS'] / 1024:.1f} MiB before, peak "
            f"{sampler.peak_kb / 1024:.1f} MiB (+{(sampler.peak_kb - before['VmRSS']) / 1024:.1f}"
            f"), VmHWM +{(after['VmHWM'] - before['VmHWM']) / 1024:.1f} MiB"
        )
    return report


async def slow_connections(server: Server, tally: Tally) -> list[str]:
    """A slow drip, an idle connection and half a head, against the server's timeouts."""
    lines = [
        (b"Host", f"{HOST}:{server.port}".encode()),
        (HEADER_PROTOCOL_VERSION.encode(), PROTOCOL_VERSION.encode()),
        (HEADER_METHOD.encode(), b"tools/list"),
    ]
    drip = exchange(server.port, request_head(lines, 200), [b" "] * 200, drip_s=0.5, timeout=30)
    idle = closed_after(server.port, b"")
    half = closed_after(server.port, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    drip_out, idle_s, half_s = await asyncio.gather(drip, idle, half)
    judge(tally, "slow drip", drip_out)
    code = hostile.strict_json(drip_out.body)["error"]["code"] if drip_out.status else None
    return [
        f"  slow drip (1 byte / 0.5 s)         -> HTTP {drip_out.status} ({code}) after "
        f"{drip_out.seconds:.1f} s",
        f"  idle connection                    -> closed by the server after {idle_s}",
        f"  half a request head                -> closed by the server after {half_s}",
    ]


async def closed_after(port: int, payload: bytes, limit: float = 30) -> str:
    started = time.monotonic()
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(payload)
    try:
        async with asyncio.timeout(limit):
            while await reader.read(4096):
                pass
        return f"{time.monotonic() - started:.1f} s"
    except TimeoutError:
        return f"NOT closed within {limit:g} s"
    finally:
        writer.close()


async def fuzz(server: Server, gen: Generator, cases: int, concurrency: int, tally: Tally) -> None:
    todo = [gen.case() for _ in range(cases)]  # all drawn up front: order-independent results
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int, case: Case) -> None:
        async with gate:
            head = request_head(case.lines, case.content_length)
            out = await exchange(server.port, head, [case.body])
        tally.kinds[case.kind] += 1
        judge(tally, f"case {i} ({case.kind})", out)

    await asyncio.gather(*(one(i, case) for i, case in enumerate(todo)))


async def tool_names(port: int) -> list[str]:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {
                "_meta": {
                    META_PROTOCOL_VERSION: PROTOCOL_VERSION,
                    META_CLIENT_CAPABILITIES: {},
                }
            },
        }
    ).encode()
    lines = [
        (b"Host", f"{HOST}:{port}".encode()),
        (HEADER_PROTOCOL_VERSION.encode(), PROTOCOL_VERSION.encode()),
        (HEADER_METHOD.encode(), b"tools/list"),
    ]
    out = await exchange(port, request_head(lines, len(body)), [body])
    return [t["name"] for t in json.loads(out.body)["result"]["tools"]]


async def main_async(args: argparse.Namespace, server: Server) -> int:
    tally = Tally()
    gen = Generator(args.seed, await tool_names(server.port), server.port)
    for _ in range(20):  # warm up: imports and caches settle before memory is measured
        await exchange(server.port, *_warm(gen))
    print(f"server pid {server.proc.pid} at http://{HOST}:{server.port}/mcp, seed {args.seed}")
    print("big bodies:")
    for line in await big_bodies(server, tally):
        print(line)
    started = time.monotonic()
    slow = asyncio.create_task(slow_connections(server, tally))
    await fuzz(server, gen, args.cases, args.concurrency, tally)
    fuzz_s = time.monotonic() - started
    print("slow connections:")
    for line in await slow:
        print(line)

    log = server.log()
    handler_failures = len(re.findall(r"handler for \S+ failed|cannot be encoded", log))
    five = sum(n for s, n in tally.statuses.items() if s >= 500)
    classes = collections.Counter(f"{s // 100}xx" for s in tally.statuses.elements())
    print(f"\n{tally.cases} exchanges ({args.cases} fuzz cases in {fuzz_s:.1f} s)")
    print("status classes: " + ", ".join(f"{k} {v}" for k, v in sorted(classes.items())))
    print("statuses:       " + ", ".join(f"{k}: {v}" for k, v in sorted(tally.statuses.items())))
    print(f"HTTP 5xx:       {five}")
    print(f"dropped connections: {len(tally.drops)}")
    for drop in tally.drops[:10]:
        print(f"  {drop}")
    print("JSON-RPC codes: " + ", ".join(f"{k}: {v}" for k, v in tally.codes.most_common()))
    print(
        f"-32603: {tally.codes.get('-32603', 0)}; handler failures in the server log: "
        f"{handler_failures}"
    )
    print("plain-text answers of the HTTP parser (h11), before the app:")
    for what, n in tally.not_jsonrpc.most_common():
        print(f"  {n:5} x {what}")
    print(f"status does not fit the code / not JSON-RPC: {len(tally.misfits)}")
    for misfit in tally.misfits[:10]:
        print(f"  {misfit}")
    print("mutations: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.kinds.items())))
    status = server.status()
    print(
        f"server RSS now {status['VmRSS'] // 1024} MiB, peak (VmHWM) {status['VmHWM'] // 1024} MiB"
    )
    bad_logs = re.findall(r"Exception in ASGI application|Traceback", log)
    print(f"tracebacks in the server log: {len(bad_logs)}")
    ok = (
        five == 0
        and not tally.drops
        and not tally.misfits
        and tally.codes.get("-32603", 0) == handler_failures
    )
    print("RESULT: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


def _warm(gen: Generator) -> tuple[bytes, list[bytes]]:
    message, lines = gen.valid()
    body = json.dumps(message).encode()
    return request_head(lines, len(body)), [body]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mrtr-fuzz-") as tmp:
        server = start_server(Path(tmp) / "server.log")
        try:
            return asyncio.run(main_async(args, server))
        finally:
            server.proc.terminate()
            try:
                server.proc.wait(10)
            except subprocess.TimeoutExpired:
                server.proc.kill()


if __name__ == "__main__":
    sys.exit(main())
