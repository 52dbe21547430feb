"""Bodies and connections are bounded (DESIGN §6): the size cap is checked before reading, a
streamed body is read only up to the cap, a body that never arrives times out (408), and a
connection that never sends a complete request head is closed.

The body tests call the ASGI app directly with a ``receive`` that counts what it hands out,
so "did not read past the cap" is exact, not a memory estimate. The connection tests run
uvicorn with the kit's own settings (``uvicorn_config``) on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from helpers import request

from mrtr_kit.protocol.constants import HEADER_METHOD, HEADER_PROTOCOL_VERSION, PROTOCOL_VERSION
from mrtr_kit.server import McpServer
from mrtr_kit.server.http import MAX_BODY_BYTES, bind_tcp, create_app, uvicorn_config

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
    """KIT (DESIGN §6): Content-Length over the cap -> 413 and a JSON-RPC error, and not one
    body chunk is read (before: the whole body was read, then refused)."""
    app = create_app(build())
    client = run_app(app, Client(endless(100_000_000)), [(b"content-length", b"100000000")])
    assert client.status == 413 and client.error()["code"] == -32600
    assert client.pulled == 0


def test_streamed_body_reading_stops_at_the_cap():
    """KIT (DESIGN §6): a chunked body with no Content-Length is read only up to the cap:
    100 MB offered, about 1 MB pulled (before: all 1,526 chunks were pulled into memory)."""
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
    """KIT (DESIGN §6): a body that does not arrive within the body timeout -> 408 with a
    JSON-RPC error and Connection: close (before: the request waited forever)."""
    app = create_app(build(), body_timeout_s=0.2)
    # Without the body timeout the request would wait for HANG_S and fail; no upper bound on
    # the time taken here (a busy machine may take a while; only the 408 says it timed out).
    client = run_app(app, Client(None, never_send=True), [(b"content-length", b"500")])
    assert client.status == 408 and client.error()["code"] == -32600
    assert client.headers.get("connection") == "close"


def test_a_cancelled_body_read_is_cancelled_not_408():
    """KIT (DESIGN §6): the body timer tells its own cancellation from anyone else's: a request
    task cancelled from outside (a server shutting down) while it waits for its body stays
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


# --- connections that never finish their request head (slowloris) -------------------------------


# Head deadlines: a short one where the test waits for the server to close a connection, and
# one a busy machine cannot run out where the server must serve whole requests first (the
# deadline runs from a connection's start and each response: a stalled server thread or test
# thread must not make a request look late). No test measures how fast the close comes: it
# only has to come before CLOSE_WAIT_S, a cap on a test that would otherwise hang.
SHORT_HEAD_S = 0.5
SERVING_HEAD_S = 3.0
PAUSE_S = 0.5  # between requests on a busy connection: a sixth of SERVING_HEAD_S
CLOSE_WAIT_S = 30.0
PARSERS = ["httptools", "h11"]


@contextlib.contextmanager
def _serve(parser: str, head_timeout_s: float) -> Iterator[int]:
    """uvicorn with the kit's settings and the head deadline ``head_timeout_s`` on a free
    loopback port, with one of the HTTP parsers ``uvicorn_config`` offers."""
    sock = bind_tcp("127.0.0.1", 0)
    config = uvicorn_config(
        create_app(build()), log_level="warning", head_timeout_s=head_timeout_s, parser=parser
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
def live_port(request) -> Iterator[int]:
    """A server with the short head deadline, each parser (httptools is the default)."""
    with _serve(request.param, SHORT_HEAD_S) as port:
        yield port


@pytest.fixture(params=PARSERS)
def serving_port(request) -> Iterator[int]:
    """A server whose head deadline a request sent at once cannot miss, each parser."""
    with _serve(request.param, SERVING_HEAD_S) as port:
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
        return True, received


@pytest.mark.slow
@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="idle connection"),
        pytest.param(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n", id="half a request head"),
    ],
)
def test_connection_without_a_request_head_is_closed(live_port, payload):
    """KIT (DESIGN §6): uvicorn never times out a connection that sends nothing, or only part
    of its request head (slowloris); the kit's protocol closes it after the head deadline
    (before: still open after 8 s)."""
    closed, _ = _closed_within(live_port, payload)
    assert closed


def _discover_request() -> bytes:
    """One whole HTTP/1.1 request: server/discover, with its Content-Length."""
    body = json.dumps(request("server/discover")).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"{HEADER_PROTOCOL_VERSION}: {PROTOCOL_VERSION}\r\n{HEADER_METHOD}: server/discover"
        f"\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


@pytest.mark.slow
def test_keep_alive_connection_serves_requests_then_closes_when_idle(serving_port):
    """The head deadline does not cut a request being answered: a full request gets its
    answer on the same connection, and the connection closes once idle."""
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
def test_a_busy_keep_alive_connection_outlives_the_head_deadline(serving_port):
    """KIT (DESIGN §6): the head deadline counts from the last response, not from the
    connection's start: requests on one connection, each PAUSE_S after the last answer, for
    1.5 x the deadline, are all answered; once idle, the connection is closed. (The pauses
    make the connection idle most of the time, so a deadline counted from its start would
    find it idle and close it; each pause leaves most of a deadline to spare.)"""
    with socket.create_connection(("127.0.0.1", serving_port)) as s:
        s.settimeout(CLOSE_WAIT_S)
        opened = time.monotonic()
        answered = 0
        while time.monotonic() - opened < 1.5 * SERVING_HEAD_S:
            s.sendall(_discover_request())
            answer = _one_response(s)
            assert answer.startswith(b"HTTP/1.1 200") and b"supportedVersions" in answer
            answered += 1
            time.sleep(PAUSE_S)
        assert answered >= 2
        assert s.recv(4096) == b""  # closed by the server once idle


@pytest.mark.slow
def test_a_request_head_over_the_cap_is_refused_and_the_connection_closed(live_port):
    """KIT (DESIGN §6): a request head (request line + headers) may be 16 KiB; a longer one
    is refused (httptools: 431, h11: 400) and its connection closed, before any app code,
    however fast it arrives. llhttp has no such cap of its own: the kit's protocol counts."""
    filler = b"X-Filler: " + b"a" * 1000 + b"\r\n"
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + filler * 20  # ~20 KB, never ends
    closed, received = _closed_within(live_port, head)
    assert closed
    assert received.startswith((b"HTTP/1.1 431", b"HTTP/1.1 400")), received[:40]


@pytest.mark.slow
def test_a_request_head_within_the_cap_is_served(serving_port):
    """The cap is the head's: a 12 KB head with a body after it is answered as usual."""
    body = json.dumps(request("server/discover")).encode()
    filler = b"".join(b"X-Filler-%d: %s\r\n" % (n, b"a" * 1000) for n in range(12))
    head = (
        (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"{HEADER_PROTOCOL_VERSION}: {PROTOCOL_VERSION}\r\n"
            f"{HEADER_METHOD}: server/discover\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n"
        ).encode()
        + filler
        + b"\r\n"
    )
    _, received = _closed_within(serving_port, head + body)
    assert received.startswith(b"HTTP/1.1 200") and b"supportedVersions" in received
