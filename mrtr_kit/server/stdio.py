"""stdio transport (2026-07-28): newline-delimited JSON-RPC around the sans-IO core.

What the adapter does with each line of input, in order (STDIO-1, KIT-STDIO-A):

1. a line longer than ``max_line_bytes`` (the message cap,     -> -32600, no id
   ``wire_json.MAX_MESSAGE_BYTES``): answered once, the rest of the
   line discarded as it arrives, never held
2. a line of only whitespace: no message, ignored              -> nothing
3. decode: UTF-8, depth, digits, NaN, surrogates, dup keys     -> -32700, no id  (CORE-1)
   (``protocol.wire_json.decode_body``, as over HTTP)
4. one call: ``McpServer.handle(message, principal=..., headers=None)``: every protocol step
   of the core's pipeline. ``headers=None`` is the core's "not over HTTP": its header steps
   (HTTP-15, HTTP-7/10/14) are skipped, because stdio has no header layer and all metadata is
   in ``_meta`` (STDIO-1); the Host/Origin and bearer-token checks belong to the HTTP edge
5. the reply as one line: ``wire_json.encode_message`` (single-line JSON) and ``\\n``; a
   notification gets nothing (CORE-5). A handler's own notifications (``ctx.progress``,
   ``ctx.log``) are lines of their own before its answer, as they are events of its SSE
   stream over HTTP (HTTP-21)

stdout carries those lines and nothing else; on 2026-07-28 the server never writes a request
(STDIO-1).

**Both eras** (``eras="both"``; the default ``"modern"`` answers a 2025-11-25 ``initialize``
-32022, VER-5): the first request decides the connection's era, as in the official SDKs. A
2025-11-25 ``initialize`` opens the process's one legacy session (``era2025.py``, the rules
HTTP's sessions follow too: the same rebuilt requests through the core, pushed questions,
bounds and bad-answer checks). From then on every line is that session's: a call's
``elicitation/create``, ``sampling/createMessage`` and ``roots/list`` are written to stdout as
JSON-RPC requests (2025-11-25 stdio allows them), the client's responses are read from stdin
and handed to the call that waits; a response ``legacy.take_answer`` refuses is logged (a
response gets no answer, JSON-RPC), its question still pending. Anything else first (a modern
request) makes the connection 2026-07-28 for good. HTTP's session bounds do not apply: the
session lives as long as the pipe, and it is the only one.
Logs go to the ``logging`` module, which ``python -m mrtr_kit serve --stdio`` points at
stderr (``mrtr_kit/__main__.py``, which also points ``sys.stdout`` there, so that a stray
``print`` in a handler cannot corrupt the stream).

Requests run concurrently: each in its own task, so a handler that awaits does not hold up
the next line; one lock serializes the writes, so two answers never interleave. At most
``max_in_flight`` requests run at once: beyond that, reading waits (the pipe pushes back).
``notifications/cancelled`` with a ``requestId`` cancels that request's task, and the
cancelled request gets no answer (STDIO-2). At end of input, requests still running get
``EOF_GRACE_S`` to finish and be answered, then are cancelled; ``serve_stdio`` returns and
the process exits 0.

Who is asking: nobody the transport can name. A stdio server is a child process of its one
client, and no credential crosses the pipe; ``principal`` (None by default) is what
requestState is bound to (MRTR-S5a), the same for every request of the process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from ..protocol import errors
from ..protocol.constants import MRTR_METHODS
from ..protocol.errors import McpError
from ..protocol.wire_json import MAX_MESSAGE_BYTES, Unencodable, decode_body, encode_message
from .core import McpServer, Reply, encoded_internal_error, error_reply
from .era2025 import (
    LegacyLimits,
    LegacyRounds,
    LegacySession,
    Refused,
    error_body,
    is_legacy_initialize,
    valid_id,
)

log = logging.getLogger("mrtr_kit.stdio")

ReadChunk = Callable[[], Awaitable[bytes]]  # b"" at end of input
WriteBytes = Callable[[bytes], Awaitable[None]]

CHUNK_BYTES = 64 * 1024
# A message on stdio is what a request body is over HTTP: the same cap (docs/architecture.md §6).
MAX_LINE_BYTES = MAX_MESSAGE_BYTES
# The SDK's stdio client closes stdin and waits 2 s before it terminates the server
# (mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT): in-flight work gets 1 s to be answered,
# so the server has exited on its own before then.
EOF_GRACE_S = 1.0
MAX_IN_FLIGHT = 64


class LineTooLong:
    """What ``LineSplitter`` yields for a line over the cap (once per such line)."""

    def __init__(self, size: int) -> None:
        """``size``: how many bytes of the line had arrived when it was refused."""
        self.size = size  # how many bytes had arrived when the line was refused


class LineSplitter:
    """Bytes in, complete lines out, never holding more than ``max_line_bytes`` of one line.

    Sans-IO: ``feed`` takes whatever a read returned and gives back the lines it completed
    (without their ``\\n``), and a ``LineTooLong`` for a line that passed the cap; the rest of
    that line is dropped as it arrives, up to its ``\\n``. ``end`` gives back what an input
    that stops without a final ``\\n`` left over.
    """

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> list[bytes | LineTooLong]:
        """The lines ``chunk`` completed (without their newline), and a ``LineTooLong`` for each
        line over the cap."""
        out: list[bytes | LineTooLong] = []
        start = 0
        while start < len(chunk):
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            if not self._discarding:
                self._buffer += chunk[start:end]
                if len(self._buffer) > self.max_line_bytes:
                    out.append(LineTooLong(len(self._buffer)))
                    self._buffer.clear()  # the line is refused: its bytes are not kept
                    self._discarding = True
            if newline < 0:
                break
            if self._discarding:
                self._discarding = False  # the refused line ends here
            else:
                out.append(bytes(self._buffer))
                self._buffer.clear()
            start = newline + 1
        return out

    def end(self) -> bytes | None:
        """The unterminated last line, if any (never one that was refused)."""
        if self._discarding or not self._buffer:
            return None
        line = bytes(self._buffer)
        self._buffer.clear()
        return line


def _line_too_long(max_line_bytes: int) -> McpError:
    # -32600 as over HTTP (413 "Request body too large"): the message is refused unread, so
    # there is no id to answer with.
    return errors.invalid_request(f"a message line is longer than {max_line_bytes} bytes")


def _is_blank(line: bytes) -> bool:
    # JSON's own whitespace (RFC 8259 §2): a line of nothing else holds no message.
    return not line.strip(b" \t\r")


class StdioSession:
    """One stdio connection: reads lines, runs requests, writes answers (module docstring)."""

    def __init__(
        self,
        server: McpServer,
        write: WriteBytes,
        *,
        principal: str | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        max_in_flight: int = MAX_IN_FLIGHT,
        eof_grace_s: float = EOF_GRACE_S,
        eras: Literal["modern", "both"] = "modern",
        legacy_limits: LegacyLimits | None = None,
    ) -> None:
        """Serve ``server``, writing answers with ``write``.

        ``principal`` is the principal of every request (stdio carries no credential);
        ``max_line_bytes`` caps one message; ``max_in_flight`` caps concurrent requests;
        ``eof_grace_s`` is how long in-flight requests may run after end of input;
        ``eras="both"`` also serves a 2025-11-25 client, within ``legacy_limits``."""
        if eras not in ("modern", "both"):
            raise ValueError(f"eras must be 'modern' or 'both', not {eras!r}")
        self.server = server
        self._write = write
        self.principal = principal
        self.max_line_bytes = max_line_bytes
        self.eof_grace_s = eof_grace_s
        self._write_lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(max_in_flight)
        # In-flight requests by id, for notifications/cancelled (STDIO-2). A client that
        # reuses the id of a pending request (JSON-RPC says it must not) can cancel only the
        # later one.
        self._pending: dict[str | int, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False  # stdout gone: answers are dropped, input is still read to its end
        self._ended = False  # end of input: nobody can answer a pushed request any more
        # The era, once the first request has decided it (module docstring).
        self._rounds = LegacyRounds(server, limits=legacy_limits) if eras == "both" else None
        self._era: Literal["modern", "legacy"] | None = None
        self._legacy: LegacySession | None = None

    @property
    def hung_up(self) -> bool:
        """Whether the client can no longer answer (stdout closed or input ended): a legacy
        call is then cancelled without an answer (``legacy.Pusher``)."""
        return self._closed or self._ended

    async def event(self, data: bytes) -> None:
        """A legacy call's pushed request or notification: a line of its own."""
        await self._write_line(data)

    async def emit(self, notification: dict[str, Any]) -> None:
        """A legacy handler's notification: as a modern one's (``_notify``)."""
        await self._notify(notification)

    async def run(self, read: ReadChunk) -> None:
        """Serve until end of input, then let in-flight requests finish (or cancel them)."""
        lines = LineSplitter(self.max_line_bytes)
        try:
            while chunk := await _read_or_end(read):
                for line in lines.feed(chunk):
                    await self._take(line)
            last = lines.end()
            if last is not None:  # input ended without a final newline: still a message
                await self._take(last)
        finally:
            self._ended = True
            await self._drain()

    async def _take(self, line: bytes | LineTooLong) -> None:
        if isinstance(line, LineTooLong):
            log.warning("refused a message line of more than %d bytes", self.max_line_bytes)
            await self._send(error_reply(None, _line_too_long(self.max_line_bytes)))
            return
        if _is_blank(line):
            return
        try:
            message = decode_body(line)
        except McpError as exc:
            await self._send(error_reply(None, exc))
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        if self._era is None and request_id is not None and "method" in message:
            legacy = self._rounds is not None and is_legacy_initialize(message)
            self._era = "legacy" if legacy else "modern"
        if self._era == "legacy":
            await self._legacy_take(message)
            return
        if request_id is None or "method" not in message:
            # A notification, or something the core will refuse at once: nothing to await,
            # so handled in order, here (a cancellation must not wait behind requests).
            await self._handle(message)
            return
        await self._slots.acquire()  # released when the request's task ends
        task = asyncio.create_task(self._handle(message))
        self._tasks.add(task)
        key = _id_key(request_id)
        if key is not None:
            self._pending[key] = task
        task.add_done_callback(lambda t: self._done(t, key))

    async def _legacy_take(self, message: Any) -> None:
        """A line of the legacy session; the requests that may take time run in tasks."""
        rounds, session = self._rounds, self._legacy
        assert rounds is not None
        if session is None:  # the initialize that decided the era
            try:
                self._legacy = rounds.open_session("stdio", message, self.principal)
            except Refused as refused:
                self._era = None  # not a session yet: the next request decides again
                await self._write_body(refused.body)
                return
            await self._write_body(rounds.initialize_result(self._legacy, message["id"]))
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            await self._write_body(error_body(None, -32600, "not a JSON-RPC 2.0 message"))
        elif "method" not in message:
            try:
                rounds.take_answer(session, message)
            except Refused as refused:  # a response gets no answer: said on stderr
                log.warning("refused a response: %s", refused.body["error"]["message"])
        elif not isinstance(message["method"], str):
            await self._write_body(error_body(None, -32600, '"method" must be a string'))
        elif "id" not in message:
            rounds.notification(session, message)
        elif not valid_id(message["id"]):
            await self._write_body(error_body(None, -32600, '"id" must be a string or integer'))
        elif message["method"] == "initialize":
            problem = "Session already initialized"
            await self._write_body(error_body(message["id"], -32600, problem))
        elif message["method"] == "ping":
            await self._write_body({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        else:
            await self._slots.acquire()  # released when the request's task ends
            task = asyncio.create_task(self._legacy_request(rounds, session, message))
            self._tasks.add(task)
            task.add_done_callback(lambda t: self._done(t, None))

    async def _legacy_request(
        self, rounds: LegacyRounds, session: LegacySession, message: dict[str, Any]
    ) -> None:
        body: dict[str, Any] | None
        try:
            if message["method"] in MRTR_METHODS:
                body = await rounds.call(session, message, self)
            else:
                body = await rounds.one_shot(session, message)
        except Refused as refused:
            body = refused.body
        except Exception:  # the core answers every failure itself: this is a bug here
            log.exception("legacy request %r failed outside the core", message["id"])
            body = error_body(message["id"], -32603, "Internal error")
        if body is not None:  # None: cancelled, or the client went away
            await self._write_body(body)

    async def _write_body(self, body: dict[str, Any]) -> None:
        await self._send(Reply(body=body))

    def _done(self, task: asyncio.Task[None], key: str | int | None) -> None:
        self._tasks.discard(task)
        self._slots.release()
        if key is not None and self._pending.get(key) is task:
            del self._pending[key]

    async def _handle(self, message: Any) -> None:
        request_id = message.get("id") if isinstance(message, dict) else None
        try:
            reply = await self.server.handle(
                message, principal=self.principal, headers=None, emit=self._notify, decoded=True
            )
        except asyncio.CancelledError:
            # STDIO-2 or end of input: the request gets no answer.
            log.info("request %r cancelled", request_id)
            raise
        except Exception:  # handle answers every failure itself: this is a core bug
            log.exception("request %r failed outside the core's pipeline", request_id)
            reply = error_reply(request_id, errors.internal_error())
        if reply.body is None:
            self._notified(message)
            return
        await self._send(reply)

    def _notified(self, message: dict[str, Any]) -> None:
        """A notification the core accepted; ``notifications/cancelled`` is this transport's
        to act on (STDIO-2): it cancels the task of the request it names, if still running."""
        if message.get("method") != "notifications/cancelled":
            return
        params = message.get("params")
        key = _id_key(params.get("requestId")) if isinstance(params, dict) else None
        task = self._pending.get(key) if key is not None else None
        if task is not None:
            log.info("cancelling request %r (notifications/cancelled)", key)
            task.cancel()

    async def _notify(self, notification: dict[str, Any]) -> None:
        """A handler's notification (progress, log): a line of its own, before its request's
        answer. stdio has no stream per request: the progressToken says which one it is."""
        try:
            data = encode_message(notification)
        except Unencodable as exc:  # a server bug; the request still gets its answer
            log.error("a notification cannot be encoded (%s): not sent", exc)
            return
        await self._write_line(data)

    async def _send(self, reply: Reply) -> None:
        assert reply.body is not None
        try:
            data = encode_message(reply.body)
        except Unencodable as exc:
            request_id = reply.body.get("id")
            log.error("the reply to request %r cannot be encoded (%s)", request_id, exc)
            data = encoded_internal_error(request_id)
        await self._write_line(data)

    async def _write_line(self, data: bytes) -> None:
        async with self._write_lock:  # one whole line at a time
            if self._closed:
                return
            try:
                await self._write(data + b"\n")
            except OSError as exc:  # BrokenPipeError: the client closed our stdout
                self._closed = True
                log.info("stdout is closed (%s): no more answers", exc)

    async def _drain(self) -> None:
        """End of input: what still runs gets ``eof_grace_s`` to answer, then is cancelled."""
        if not self._tasks:
            return
        _, late = await asyncio.wait(set(self._tasks), timeout=self.eof_grace_s)
        for task in late:
            task.cancel()
        if late:
            log.warning("end of input: cancelled %d unfinished request(s)", len(late))
            # Bounded too: a handler that swallows its cancellation must not keep the process.
            await asyncio.wait(late, timeout=self.eof_grace_s)


async def _read_or_end(read: ReadChunk) -> bytes:
    """The next chunk; a read that fails (stdin closed under us, not readable) ends the input
    like end of file does, logged, never a traceback."""
    try:
        return await read()
    except OSError as exc:
        log.error("reading the input failed (%s): treated as end of input", exc)
        return b""


def _id_key(request_id: Any) -> str | int | None:
    """A request id as a key of ``_pending``: a string or an integer, never a bool (which
    Python would take for 1 or 0, and the core refuses anyway, CORE-2)."""
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


# -- the process's own stdin and stdout ---------------------------------------------------------


async def _fd_reader(fd: int) -> ReadChunk:
    """Reads of ``fd`` that do not block the loop: a pipe through the event loop; anything
    else (a regular file given as stdin) in a worker thread."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK_BYTES)
    try:
        pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    except ValueError:  # not a pipe, socket or character device
        return lambda: asyncio.to_thread(os.read, fd, CHUNK_BYTES)
    return lambda: reader.read(CHUNK_BYTES)


def _fd_writer(fd: int) -> WriteBytes:
    """Writes of whole lines to ``fd``, in a worker thread: a client slow to read stdout
    holds up that write, not the loop."""

    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                # stdin and stdout may share one file description (a terminal, a socket),
                # which reading through the loop made non-blocking: wait until writable.
                select.select([], [fd], [])

    async def write(data: bytes) -> None:
        await asyncio.to_thread(write_all, data)

    return write


async def serve_stdio(
    server: McpServer,
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
    principal: str | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    eras: Literal["modern", "both"] = "modern",
    legacy_limits: LegacyLimits | None = None,
) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin ends.

    ``stdin_fd`` / ``stdout_fd`` default to the process's own (0 and 1, taken from
    ``sys.__stdin__`` / ``sys.__stdout__``); ``eras="both"`` also serves a 2025-11-25 client
    (``StdioSession``)."""
    in_fd = stdin_fd if stdin_fd is not None else _fileno(sys.__stdin__, 0)
    out_fd = stdout_fd if stdout_fd is not None else _fileno(sys.__stdout__, 1)
    session = StdioSession(
        server,
        _fd_writer(out_fd),
        principal=principal,
        max_line_bytes=max_line_bytes,
        eras=eras,
        legacy_limits=legacy_limits,
    )
    was_blocking = os.get_blocking(in_fd)
    try:
        await session.run(await _fd_reader(in_fd))
    finally:
        # The loop's pipe reader made stdin non-blocking; a terminal shared with the shell
        # that started us must get it back as it was.
        os.set_blocking(in_fd, was_blocking)


def _fileno(stream: Any, default: int) -> int:
    try:
        return int(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return default
