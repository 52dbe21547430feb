"""Bodies and connections are bounded (docs/architecture.md §6): the size cap is checked before
reading, a streamed body is read only up to the cap, a body that never arrives times out (408), an
idle kept-alive connection is closed (uvicorn's documented settings), and, behind the kit's nginx
(the kit alone has neither), a request head has a deadline and a size cap.

The body tests call the ASGI app directly with a ``receive`` that counts what it hands out,
so "did not read past the cap" is exact, not a memory estimate. The connection tests run
uvicorn with the kit's own settings (``uvicorn_config``) on loopback, alone or behind a real
nginx with the kit's configuration (``fleet.nginx_config``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from mrtr_kit.protocol.constants import HEADER_METHOD, HEADER_PROTOCOL_VERSION, PROTOCOL_VERSION
from mrtr_kit.server import McpServer
from mrtr_kit.server.http import (
    KEEP_ALIVE_S,
    MAX_BODY_BYTES,
    MAX_CONCURRENCY,
    MAX_HEAD_BYTES,
    bind_tcp,
    create_app,
    uvicorn_config,
)
from mrtr_kit.server.nginx import Nginx, nginx_config
from tests.conftest import system_binary
from tests.helpers import nginx_client_side, nginx_upstream_block, request

CHUNK = 64 * 1024


def build() -> McpServer:
    s = McpServer("limits-server", state_key=b"l" * 32)

    @s.tool(description="Answers.")
    def ok(ctx):
        return "ok"

    return s


class Client:
    """Drives one HTTP request through an ASGI app: counts body chunks the app pulls."""

    def __init__(self, body_chunks: Iterator[bytes] | None, *, never_send: bool = False):
        self.chunks = body_chunks
        self.never_send = never_send
        self.pulled = 0
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.body = b""

    async def receive(self) -> dict[str, Any]:
        if self.never_send:
            await asyncio.sleep(3600)  # a body that was declared and never sent
        assert self.chunks is not None
        self.pulled += 1
        chunk = next(self.chunks, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            self.body += message.get("body", b"")

    def error(self) -> dict[str, Any]:
        return json.loads(self.body)["error"]


def scope(extra_headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (HEADER_PROTOCOL_VERSION.lower().encode(), PROTOCOL_VERSION.encode()),
        (HEADER_METHOD.lower().encode(), b"server/discover"),
        *extra_headers,
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


def endless(total: int) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        sent += CHUNK
        yield b"x" * CHUNK


# A cap, not a speed claim: a request that hangs fails the test instead of hanging the run.
HANG_S = 60.0


def run_app(app: Any, client: Client, headers: list[tuple[bytes, bytes]]) -> Client:
    asyncio.run(asyncio.wait_for(app(scope(headers), client.receive, client.send), HANG_S))
    return client


def test_declared_oversized_body_is_413_without_reading_it():
    """KIT (docs/architecture.md §6): Content-Length over the cap -> 413 and a JSON-RPC error, and
    not one body chunk is read (before: the whole body was read, then refused)."""
    app = create_app(build())
    client = run_app(app, Client(endless(100_000_000)), [(b"content-length", b"100000000")])
    assert client.status == 413 and client.error()["code"] == -32600
    assert client.pulled == 0


def test_streamed_body_reading_stops_at_the_cap():
    """KIT (docs/architecture.md §6): a chunked body with no Content-Length is read only up to the
    cap: 100 MB offered, about 1 MB pulled (before: all 1,526 chunks were pulled into memory)."""
    app = create_app(build())
    client = run_app(app, Client(endless(100_000_000)), [])
    assert client.status == 413 and client.error()["code"] == -32600
    assert client.pulled <= MAX_BODY_BYTES // CHUNK + 2


def test_content_length_that_lies_low_is_still_capped():
    """A Content-Length under the cap does not switch the cap off: the bytes are counted."""
    app = create_app(build())
    client = run_app(app, Client(endless(100_000_000)), [(b"content-length", b"10")])
    assert client.status == 413
    assert client.pulled <= MAX_BODY_BYTES // CHUNK + 2


@pytest.mark.parametrize("value", [b"abc", b"-1", b"1e3", b" 12", b"99999999999999999999999"])
def test_malformed_content_length_is_400(value):
    """A Content-Length that is not a plain decimal is refused before reading: 400, -32600."""
    app = create_app(build())
    client = run_app(app, Client(endless(10)), [(b"content-length", value)])
    assert client.status in (400, 413) and client.error()["code"] == -32600
    assert client.pulled == 0


def test_body_declared_but_never_sent_times_out_with_408():
    """KIT (docs/architecture.md §6): a body that does not arrive within the body timeout -> 408
    with a JSON-RPC error and Connection: close (before: the request waited forever)."""
    app = create_app(build(), body_timeout_s=0.2)
    # Without the body timeout the request would wait for HANG_S and fail; no upper bound on
    # the time taken here (a busy machine may take a while; only the 408 says it timed out).
    client = run_app(app, Client(None, never_send=True), [(b"content-length", b"500")])
    assert client.status == 408 and client.error()["code"] == -32600
    assert client.headers.get("connection") == "close"


def test_a_cancelled_body_read_is_cancelled_not_408():
    """KIT (docs/architecture.md §6): the body timer tells its own cancellation from anyone else's:
    a request task cancelled from outside (a server shutting down) while it waits for its body stays
    cancelled, and is not answered 408 as if the body had timed out."""
    app = create_app(build(), body_timeout_s=10)
    client = Client(None, never_send=True)

    async def cancel_while_reading() -> None:
        task = asyncio.ensure_future(
            app(scope([(b"content-length", b"500")]), client.receive, client.send)
        )
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_reading())
    assert client.status is None


def test_a_normal_body_still_works():
    app = create_app(build())
    body = json.dumps(request("server/discover")).encode()
    client = run_app(app, Client(iter([body])), [(b"content-length", str(len(body)).encode())])
    assert client.status == 200 and "result" in json.loads(client.body)


# --- connections: the kit alone (uvicorn's documented settings) --------------------------------


def test_uvicorn_config_uses_only_documented_settings():
    """KIT (docs/architecture.md §6): the kit configures uvicorn by its documented settings alone
    (no protocol subclass): the httptools parser named as a string, an idle keep-alive connection
    closed after KEEP_ALIVE_S, 503 past MAX_CONCURRENCY, and h11's head cap should h11 be
    chosen. What these leave open (a request head's time and size) is nginx's job, below."""
    config = uvicorn_config(create_app(build()), log_level="warning")
    assert config.http == "httptools"
    assert config.timeout_keep_alive == KEEP_ALIVE_S <= 10
    assert config.limit_concurrency == MAX_CONCURRENCY
    assert config.h11_max_incomplete_event_size == MAX_HEAD_BYTES
    assert config.ws == "none" and config.proxy_headers is False
    assert uvicorn_config(create_app(build()), http="h11").http == "h11"  # an override wins


# Keep-alive deadlines: a short one where the test waits for the server to close a
# connection, and a longer one where requests on one connection must be answered first. No
# test measures how fast the close comes: it only has to come before CLOSE_WAIT_S, a cap on a
# test that would otherwise hang.
SHORT_KEEP_ALIVE_S = 1
PAUSE_S = 0.5  # between requests on a busy connection: half the keep-alive deadline
CLOSE_WAIT_S = 30.0
PARSERS = ["httptools", "h11"]


@contextlib.contextmanager
def _serve(parser: str, keep_alive_s: float = KEEP_ALIVE_S) -> Iterator[int]:
    """uvicorn with the kit's settings on a free loopback port, with one of uvicorn's HTTP
    parsers and an idle keep-alive deadline of ``keep_alive_s``."""
    sock = bind_tcp("127.0.0.1", 0)
    config = uvicorn_config(
        create_app(build()), log_level="warning", http=parser, timeout_keep_alive=keep_alive_s
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60  # a readiness cap; it starts in well under a second
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(params=PARSERS)
def serving_port(request) -> Iterator[int]:
    """A kit server with a short keep-alive deadline, each parser (httptools is the kit's)."""
    with _serve(request.param, SHORT_KEEP_ALIVE_S) as port:
        yield port


def _closed_within(port: int, payload: bytes, seconds: float = CLOSE_WAIT_S) -> tuple[bool, bytes]:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(seconds)
        s.sendall(payload)
        received = b""
        try:
            while chunk := s.recv(4096):
                received += chunk
        except TimeoutError:
            return False, received
        except ConnectionResetError:  # nginx resets a timed-out connection (by design)
            return True, received
        return True, received


def _discover_request() -> bytes:
    """One whole HTTP/1.1 request: server/discover, with its Content-Length."""
    body = json.dumps(request("server/discover")).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"{HEADER_PROTOCOL_VERSION}: {PROTOCOL_VERSION}\r\n{HEADER_METHOD}: server/discover"
        f"\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


def _large_head_request(kib: int, *, host: str = "127.0.0.1") -> bytes:
    """server/discover with ``kib`` header lines of 1 KiB each, and Connection: close."""
    body = json.dumps(request("server/discover")).encode()
    filler = b"".join(b"X-Filler-%d: %s\r\n" % (n, b"a" * 1000) for n in range(kib))
    head = (
        (
            f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"{HEADER_PROTOCOL_VERSION}: {PROTOCOL_VERSION}\r\n"
            f"{HEADER_METHOD}: server/discover\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n"
        ).encode()
        + filler
        + b"\r\n"
    )
    return head + body


@pytest.mark.slow
def test_keep_alive_connection_serves_requests_then_closes_when_idle(serving_port):
    """KIT (docs/architecture.md §6): a full request gets its answer on a kept-alive connection, and
    the connection is closed once idle for uvicorn's keep-alive deadline."""
    closed, received = _closed_within(serving_port, _discover_request())
    assert received.startswith(b"HTTP/1.1 200") and b"supportedVersions" in received
    assert closed


def _one_response(s: socket.socket) -> bytes:
    """One whole response with a Content-Length, read off a keep-alive connection."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = s.recv(65536)
        assert chunk, f"closed before a whole response: {received[:80]!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        chunk = s.recv(65536)
        assert chunk, f"closed in the middle of a response: {received[:80]!r}"
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.mark.slow
def test_a_busy_keep_alive_connection_outlives_the_keep_alive_deadline(serving_port):
    """KIT (docs/architecture.md §6): the keep-alive deadline counts from the last response, not
    from the connection's start: requests on one connection, each PAUSE_S after the last answer, for
    3 x the deadline, are all answered; once idle, the connection is closed."""
    with socket.create_connection(("127.0.0.1", serving_port)) as s:
        s.settimeout(CLOSE_WAIT_S)
        opened = time.monotonic()
        answered = 0
        while time.monotonic() - opened < 3 * SHORT_KEEP_ALIVE_S:
            s.sendall(_discover_request())
            answer = _one_response(s)
            assert answer.startswith(b"HTTP/1.1 200") and b"supportedVersions" in answer
            answered += 1
            time.sleep(PAUSE_S)
        assert answered >= 2
        assert s.recv(4096) == b""  # closed by the server once idle


@pytest.mark.slow
def test_a_request_head_within_the_cap_is_served(serving_port):
    """KIT (docs/architecture.md §6): a 12 KB head with a body after it is answered as usual, by
    either parser (h11 caps a head at MAX_HEAD_BYTES, 16 KiB)."""
    _, received = _closed_within(serving_port, _large_head_request(12))
    assert received.startswith(b"HTTP/1.1 200") and b"supportedVersions" in received


@pytest.mark.slow
def test_under_h11_a_request_head_over_the_cap_is_refused():
    """KIT (docs/architecture.md §6): with ``http="h11"``, uvicorn's documented
    ``h11_max_incomplete_event_size`` refuses a head over MAX_HEAD_BYTES with 400 and closes
    the connection, before any app code. (httptools has no such cap: nginx's, below.)"""
    filler = b"X-Filler: " + b"a" * 1000 + b"\r\n"
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + filler * 20  # ~20 KB, never ends
    with _serve("h11") as port:
        closed, received = _closed_within(port, head)
    assert closed and received.startswith(b"HTTP/1.1 400"), received[:40]


# --- behind the kit's nginx: a request head's deadline and size cap ------------------------------


def _directive(config: str, name: str) -> str:
    found = re.findall(rf"^\s*{name} ([^;]+);", config, re.M)
    assert len(found) == 1, f"{name} should be set once: {found}"
    return str(found[0])


def _size(value: str) -> int:
    units = {"k": 1024, "m": 1024 * 1024}
    return int(value[:-1]) * units[value[-1]] if value[-1] in units else int(value)


def test_the_nginx_config_bounds_a_request_head_in_time_and_size():
    """KIT (docs/architecture.md §6): the kit's nginx gives a request head at most 10 s, whether the
    connection sends nothing or dribbles it (``client_header_timeout``), and caps it at the
    kit's MAX_HEAD_BYTES (``large_client_header_buffers`` n x size; nginx's default is 4 x 8k)
    and a body's pauses, a slow reader's and an idle kept-alive client's time."""
    config = nginx_config(["http://127.0.0.1:9001/mcp"], port=8080, prefix="/tmp/x")
    assert float(_directive(config, "client_header_timeout").removesuffix("s")) <= 10
    assert float(_directive(config, "client_body_timeout").removesuffix("s")) <= 10
    assert float(_directive(config, "send_timeout").removesuffix("s")) <= 10
    assert float(_directive(nginx_client_side(config), "keepalive_timeout").rstrip("s")) <= 10
    number, size = _directive(config, "large_client_header_buffers").split()
    assert int(number) * _size(size) == MAX_HEAD_BYTES
    assert _size(_directive(config, "client_max_body_size")) <= MAX_BODY_BYTES * 1.1


@pytest.fixture(scope="module")
def nginx_port() -> Iterator[int]:
    """The kit's nginx configuration in front of one kit server (the kit's own settings)."""
    binary = system_binary("nginx", paths=("/usr/sbin/nginx",))
    with _serve("httptools") as port, Nginx([f"http://127.0.0.1:{port}/mcp"], binary=binary) as n:
        yield n.port


@pytest.mark.slow
@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="idle connection"),
        pytest.param(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", id="half a request head"),
    ],
)
def test_behind_nginx_a_connection_without_a_request_head_is_closed(nginx_port, payload):
    """KIT (docs/architecture.md §6): a connection that sends nothing, or only part of its request
    head (slowloris), is closed by nginx after ``client_header_timeout``; the kit alone would keep
    it open (uvicorn has no head deadline)."""
    closed, _ = _closed_within(nginx_port, payload)
    assert closed


@pytest.mark.slow
def test_behind_nginx_a_request_head_over_the_cap_is_refused(nginx_port):
    """KIT (docs/architecture.md §6): a request head over nginx's cap (20 x 1 KiB lines) is refused,
    400, and its connection closed, however fast it arrives; the kit alone under httptools would
    read it whole."""
    closed, received = _closed_within(nginx_port, _large_head_request(20))
    assert closed and received.startswith(b"HTTP/1.1 400"), received[:40]


@pytest.mark.slow
def test_behind_nginx_a_request_head_within_the_cap_is_served(nginx_port):
    """KIT (docs/architecture.md §6): the cap is the head's: a 12 KB head is passed on and
    answered."""
    _, received = _closed_within(nginx_port, _large_head_request(12))
    assert received.startswith(b"HTTP/1.1 200") and b"supportedVersions" in received


def test_nginx_drops_an_idle_instance_connection_before_the_instance_does():
    """KIT: nginx keeps up to 16 idle connections to the instances. Were they kept longer than
    an instance keeps them (KEEP_ALIVE_S), nginx could send a request on one the instance is
    closing that moment, and answer that POST 502, since it never sends one twice."""
    config = nginx_config(["http://127.0.0.1:9001/mcp"], port=8080, prefix="/tmp/x")
    upstream = nginx_upstream_block(config)
    assert float(_directive(upstream, "keepalive_timeout").removesuffix("s")) < KEEP_ALIVE_S
