"""The stdio transport (``mrtr_kit/server/stdio.py``, ``python -m mrtr_kit serve --stdio``).

* in this process (fast): the line splitter's cap, and ``StdioSession`` on scripted input:
  bad lines answered and the next one served, blank lines ignored, notifications unanswered,
  concurrent requests, ``notifications/cancelled`` (STDIO-2), end of input with work pending;
  and ``serve_stdio`` on a real pipe pair;
* ``serve --stdio`` in a child process (slow): the official SDK's stdio client (``mcp`` 2.3)
  through the weather login flow, ``server/discover`` (STDIO-3), and bad input on stdin; every
  line of stdout must parse, and stderr must hold no traceback (STDIO-1).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mrtr_kit.protocol.constants import PROTOCOL_VERSION
from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.stdio import LineSplitter, LineTooLong, StdioSession, serve_stdio
from tests.helpers import request

ROOT = Path(__file__).resolve().parents[2]
CAP = 1000  # a small line cap for the in-process tests


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_kit_stdio_a_splitter_refuses_a_long_line_once_and_drops_the_rest():
    """KIT-STDIO-A: past the cap, one LineTooLong; the rest of that line is never kept, and
    the next line comes out whole."""
    split = LineSplitter(max_line_bytes=10)
    out = split.feed(b"short\n" + b"x" * 8)
    out += split.feed(b"x" * 50)  # over the cap in the middle of a read
    out += split.feed(b"x" * 5000)
    assert len(split._buffer) == 0  # nothing of the refused line is held
    out += split.feed(b"xx\nnext\nta")
    assert out[0] == b"short" and isinstance(out[1], LineTooLong) and out[2:] == [b"next"]
    assert split.end() == b"ta"  # input that ends without a newline still ends a line


def test_kit_stdio_a_splitter_cap_is_inclusive():
    """KIT-STDIO-A: a line of exactly the cap is served; one byte more is refused."""
    split = LineSplitter(max_line_bytes=4)
    assert split.feed(b"abcd\nabcde\n")[0] == b"abcd"
    assert isinstance(LineSplitter(max_line_bytes=4).feed(b"abcde\n")[0], LineTooLong)


# -- StdioSession on scripted input -------------------------------------------------------------


def demo_server() -> tuple[McpServer, asyncio.Event]:
    """A tool that asks a form, and one that waits until the returned event is set."""
    server = McpServer("stdio-tests", state_keys=KeyRing.generate())
    release = asyncio.Event()

    @server.tool(description="asks for a name, then greets")
    def hello(ctx: RequestContext) -> Any:
        answer = ctx.input_responses.get("name")
        if answer is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            return ctx.input_required(
                {
                    "name": {
                        "method": "elicitation/create",
                        "params": {"mode": "form", "message": "Name?", "requestedSchema": schema},
                    }
                },
                state={"asked": True},
            )
        return f"Hello {answer['content']['name']}"

    @server.tool(description="waits for the test to release it")
    async def wait(ctx: RequestContext) -> Any:
        await release.wait()
        return "released"

    @server.tool(description="reports progress twice, then answers")
    async def count(ctx: RequestContext) -> Any:
        for step in (1, 2):
            await ctx.progress(step, 2)
        return "counted"

    return server, release


async def session_run(
    server: McpServer, chunks: list[bytes], *, eof_grace_s: float = 1.0, pause: bool = False
) -> list[dict[str, Any]]:
    """Feed ``chunks`` to a session, then end of input; every line written, parsed."""
    written = bytearray()

    async def write(data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1  # STDIO-1: one line, whole
        written.extend(data)

    feed = iter(chunks)

    async def read() -> bytes:
        if pause:
            await asyncio.sleep(0.01)  # let tasks started by the last chunk run
        return next(feed, b"")

    session = StdioSession(server, write, max_line_bytes=CAP, eof_grace_s=eof_grace_s)
    await asyncio.wait_for(session.run(read), 10)
    return [json.loads(x) for x in written.splitlines()]


def call(name: str, **params: Any) -> dict[str, Any]:
    return request(
        "tools/call",
        {"name": name, "arguments": {}, **params},
        capabilities={"elicitation": {"form": {}}},
    )


def test_stdio_1_a_non_json_line_is_32700_and_the_next_line_is_served():
    """STDIO-1 / CORE-1: -32700 without an id, as over HTTP; the session goes on."""
    discover = request("server/discover")
    out = asyncio.run(session_run(demo_server()[0], [b"this is not json\n", line(discover)]))
    assert out[0] == {
        "jsonrpc": "2.0",
        "error": {"code": -32700, "message": "Parse error: Expecting value at line 1 column 1"},
    }
    assert out[1]["id"] == discover["id"] and "supportedVersions" in out[1]["result"]


def test_kit_stdio_a_a_line_over_the_cap_is_32600_and_the_next_line_is_served():
    """KIT-STDIO-A: the HTTP body cap's -32600, once, no id; the rest of the line dropped."""
    discover = request("server/discover")
    big = b'{"jsonrpc":"2.0","id":7,"method":"' + b"x" * (3 * CAP)
    out = asyncio.run(
        session_run(demo_server()[0], [big[:CAP], big[CAP:] + b'"}\n', line(discover)])
    )
    assert len(out) == 2
    assert out[0]["error"]["code"] == -32600 and "id" not in out[0]
    assert f"longer than {CAP} bytes" in out[0]["error"]["message"]
    assert out[1]["id"] == discover["id"] and "result" in out[1]


def test_stdio_1_invalid_utf8_is_32700():
    """CORE-1: UTF-8 only, checked by the same decoder as an HTTP body."""
    out = asyncio.run(session_run(demo_server()[0], [b'{"a":"\xff\xfe"}\n']))
    assert out[0]["error"]["code"] == -32700 and "UTF-8" in out[0]["error"]["message"]


def test_kit_stdio_a_blank_lines_and_notifications_get_no_answer():
    """KIT-STDIO-A: a line of whitespace holds no message; CORE-5: nor is a notification
    answered. Only the request after them is."""
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    discover = request("server/discover")
    out = asyncio.run(session_run(demo_server()[0], [b"\n  \t\r\n", line(note), line(discover)]))
    assert [m["id"] for m in out] == [discover["id"]]


def test_stdio_1_no_http_headers_needed_over_stdio_mrtr_flow():
    """STDIO-1: no header layer, all in _meta: a tools/call with no Mcp-* headers is served,
    and its two rounds complete (requestState echoed, inputResponses answered)."""
    server, _ = demo_server()
    [round1] = asyncio.run(session_run(server, [line(call("hello"))]))
    result = round1["result"]
    assert result["resultType"] == "input_required" and list(result["inputRequests"]) == ["name"]
    answer = {"name": {"action": "accept", "content": {"name": "Ada"}}}
    retry = call("hello", inputResponses=answer, requestState=result["requestState"])
    [round2] = asyncio.run(session_run(server, [line(retry)]))
    assert round2["result"]["content"][0]["text"] == "Hello Ada"


def test_stdio_1_progress_notifications_are_lines_before_the_answer():
    """STDIO-1: a handler's notifications go out as lines of their own (notifications are
    allowed; only requests are not), before its answer, with the request's progressToken."""
    counting = request("tools/call", {"name": "count", "arguments": {}}, progressToken="count-1")
    out = asyncio.run(session_run(demo_server()[0], [line(counting)]))
    assert [m.get("method") for m in out] == [
        "notifications/progress",
        "notifications/progress",
        None,
    ]
    assert [m["params"]["progressToken"] for m in out[:2]] == ["count-1", "count-1"]
    assert out[2]["id"] == counting["id"] and out[2]["result"]["content"][0]["text"] == "counted"


def test_stdio_requests_run_concurrently_a_waiting_handler_blocks_nothing():
    """KIT-STDIO-A: a handler that awaits does not hold up the next line: the later request
    is answered first; the waiting one when released."""
    server, release = demo_server()
    waiting, quick = call("wait"), request("server/discover")

    async def go() -> list[dict[str, Any]]:
        async def release_soon() -> None:
            await asyncio.sleep(0.2)
            release.set()

        releaser = asyncio.create_task(release_soon())
        out = await session_run(server, [line(waiting), line(quick)], pause=True)
        await releaser
        return out

    out = asyncio.run(go())
    assert [m["id"] for m in out] == [quick["id"], waiting["id"]]


def test_stdio_2_notifications_cancelled_cancels_that_request_without_an_answer():
    """STDIO-2: the named request's task is cancelled, and it is never answered."""
    waiting, after = call("wait"), request("server/discover")
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": waiting["id"], "reason": "user"},
    }
    chunks = [line(waiting), line(cancel), line(after)]
    out = asyncio.run(session_run(demo_server()[0], chunks, eof_grace_s=5, pause=True))
    assert [m["id"] for m in out] == [after["id"]]  # and the run ended well before 5 s


def test_kit_stdio_a_end_of_input_cancels_what_does_not_finish_in_time():
    """KIT-STDIO-A: at end of input a running request gets the grace period, then is
    cancelled unanswered; the session returns."""
    waiting = call("wait")
    out = asyncio.run(session_run(demo_server()[0], [line(waiting)], eof_grace_s=0.1))
    assert out == []


def test_kit_stdio_a_end_of_input_answers_what_finishes_in_time():
    """KIT-STDIO-A: a request that finishes within the grace period is still answered."""
    waiting, discover = call("wait"), request("server/discover")
    server, release = demo_server()

    async def go() -> list[dict[str, Any]]:
        asyncio.get_running_loop().call_later(0.1, release.set)
        return await session_run(server, [line(waiting) + line(discover)], eof_grace_s=5)

    assert sorted(m["id"] for m in asyncio.run(go())) == sorted([waiting["id"], discover["id"]])


def test_stdio_1_serve_stdio_on_a_real_pipe():
    """``serve_stdio`` on os.pipe() file descriptors (the loop's pipe reader, the thread
    writer), in this process: the lines in, one JSON line out per request."""
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    discover = request("server/discover")
    os.write(stdin_w, b"nope\n" + line(discover))
    os.close(stdin_w)
    try:
        asyncio.run(
            asyncio.wait_for(
                serve_stdio(demo_server()[0], stdin_fd=stdin_r, stdout_fd=stdout_w), 10
            )
        )
    finally:
        os.close(stdin_r)
        os.close(stdout_w)
    with os.fdopen(stdout_r, "rb") as f:
        out = [json.loads(x) for x in f.read().splitlines()]
    assert sorted(str(m.get("id")) for m in out) == sorted(["None", str(discover["id"])])


def test_stdio_1_serve_stdio_reads_a_regular_file_as_stdin(tmp_path: Path):
    """``serve --stdio < requests.jsonl``: a regular file is no pipe for the event loop, so it
    is read in a worker thread; the answers are the same."""
    discover = request("server/discover")
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"nope\n" + line(discover))
    stdout_r, stdout_w = os.pipe()
    with requests.open("rb") as stdin:
        try:
            run = serve_stdio(demo_server()[0], stdin_fd=stdin.fileno(), stdout_fd=stdout_w)
            asyncio.run(asyncio.wait_for(run, 10))
        finally:
            os.close(stdout_w)
    with os.fdopen(stdout_r, "rb") as f:
        out = [json.loads(x) for x in f.read().splitlines()]
    assert [m.get("id") for m in out] == [None, discover["id"]]


# -- serve --stdio in a child process -----------------------------------------------------------

SERVE = [sys.executable, "-m", "mrtr_kit", "serve", "--stdio", "--example", "weather"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def serve(stdin: bytes, *extra: str) -> subprocess.CompletedProcess[bytes]:
    """``serve --stdio`` fed ``stdin`` then end of input; checks STDIO-1 on what it wrote."""
    proc = subprocess.run(
        [*SERVE, *extra], input=stdin, capture_output=True, env=ENV, cwd=ROOT, timeout=120
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    assert proc.stdout == b"" or proc.stdout.endswith(b"\n")  # only whole lines
    for each in proc.stdout.splitlines():
        json.loads(each)  # every line a JSON-RPC message, nothing else (STDIO-1)
    return proc


def answers(proc: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    return [json.loads(x) for x in proc.stdout.splitlines()]


def weather_call(**params: Any) -> dict[str, Any]:
    return request(
        "tools/call",
        {"name": "get_weather", "arguments": {"city": "Paris"}, **params},
        capabilities={"elicitation": {"form": {}}},
    )


@pytest.mark.slow
def test_stdio_3_server_discover_over_stdio():
    """STDIO-3: a dual-era client probes with server/discover; over stdio it gets the same
    DiscoverResult as over HTTP."""
    probe = request("server/discover")
    proc = serve(line(probe))
    assert proc.returncode == 0
    [reply] = answers(proc)
    assert reply["id"] == probe["id"]
    assert reply["result"]["supportedVersions"] == [PROTOCOL_VERSION]
    assert reply["result"]["capabilities"] == {"tools": {}}


@pytest.mark.slow
def test_stdio_1_bad_input_then_eof_mid_flow_exits_0_with_only_json_on_stdout():
    """STDIO-1 / KIT-STDIO-A on the real process: a non-JSON line (-32700), a line over the
    1 MB cap (-32600), invalid UTF-8 (-32700), a blank line (nothing), then round 1 of the
    weather flow (input_required) and end of input before round 2: exit 0, every stdout line
    JSON, no traceback."""
    first = weather_call()
    huge = b'{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"x":"' + b"a" * 1_200_000
    stdin = b"{not json\n" + huge + b'"}}\n' + b'{"x":"\xc3\x28"}\n' + b"   \n" + line(first)
    proc = serve(stdin)
    assert proc.returncode == 0
    out = answers(proc)
    assert [m["error"]["code"] for m in out[:3]] == [-32700, -32600, -32700]
    assert all("id" not in m for m in out[:3])
    assert out[3]["id"] == first["id"] and out[3]["result"]["resultType"] == "input_required"
    assert len(out) == 4


@pytest.mark.slow
def test_kit_stdio_a_eof_with_a_request_pending_and_mid_line():
    """KIT-STDIO-A: end of input while a request still runs (the conformance example's
    progress tool sleeps 100 ms; stdin closes at once) and in the middle of an unterminated
    line: the request is answered, progress first; the half line is a -32700; exit 0."""
    slow = request(
        "tools/call", {"name": "test_tool_with_progress", "arguments": {}}, progressToken="p"
    )
    proc = serve(line(slow) + b'{"jsonrpc":"2.0","id":5,"meth', "--example", "conformance")
    assert proc.returncode == 0
    out = answers(proc)
    errors = [m for m in out if "error" in m]  # its place among the progress lines varies
    assert [(m["error"]["code"], "id" in m) for m in errors] == [(-32700, False)]
    rest = [m for m in out if "error" not in m]
    assert [m["params"]["progress"] for m in rest[:3]] == [0, 50, 100]
    assert rest[3]["id"] == slow["id"] and len(rest) == 4
    assert rest[3]["result"]["content"][0]["text"] == "Progress test completed."


@pytest.mark.slow
def test_stdio_1_round_two_over_raw_stdio_completes_the_flow(tmp_path: Path):
    """MRTR over stdio with raw lines: round 1 input_required, round 2 (a new id, the answer
    in inputResponses, round 1's requestState echoed) completes. Two processes sharing one
    key: the second opens the state the first sealed (it records the asked key, MRTR-E3)."""
    keys = tmp_path / "keys"
    keys.write_text("k1:" + "5a" * 32 + "\n")
    first = weather_call()
    [round1] = answers(serve(line(first), "--state-keys-file", str(keys)))
    assert list(round1["result"]["inputRequests"]) == ["login"]
    answer = {"login": {"action": "accept", "content": {"login": "ada", "units": "celsius"}}}
    retry = weather_call(inputResponses=answer, requestState=round1["result"]["requestState"])
    assert retry["id"] != first["id"]
    [round2] = answers(serve(line(retry), "--state-keys-file", str(keys)))
    assert round2["result"]["resultType"] == "complete"
    assert round2["result"]["content"][0]["text"].startswith("Hello ada!")


@pytest.mark.slow
@pytest.mark.parametrize("mode", [PROTOCOL_VERSION, "auto"])
def test_stdio_official_sdk_stdio_client_completes_the_weather_flow(mode: str, tmp_path: Path):
    """STDIO-1: the official SDK's stdio client (``mcp`` 2.3) starts ``serve --stdio`` and calls
    get_weather: round 1 input_required with the login form, its elicitation callback answers,
    round 2 completes. ``auto`` first probes with server/discover (STDIO-3)."""
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import ElicitResult

    asked: list[Any] = []

    async def answer(context: Any, params: Any) -> Any:
        asked.append(params)
        return ElicitResult(action="accept", content={"login": "ada", "units": "celsius"})

    params = StdioServerParameters(
        command=sys.executable, args=SERVE[1:], env={"PYTHONPATH": str(ROOT)}, cwd=ROOT
    )
    errlog = tmp_path / "server-stderr.txt"

    async def go() -> Any:
        with errlog.open("w") as err:  # the server's stderr (the SDK's default is ours)
            transport = stdio_client(params, errlog=err)
            async with Client(transport, mode=mode, elicitation_callback=answer) as client:
                return await client.call_tool("get_weather", {"city": "Paris"})

    result = asyncio.run(asyncio.wait_for(go(), 120))
    logs = errlog.read_text()
    assert "serving example 'weather' on stdio" in logs and "Traceback" not in logs  # STDIO-1
    assert not result.is_error
    assert result.content[0].text.startswith("Hello ada! Weather now in Paris")
    assert len(asked) == 1
    assert list(asked[0].requested_schema["properties"]) == ["login", "units"]
