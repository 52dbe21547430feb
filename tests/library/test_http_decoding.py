"""Decoding a request body at the edge (docs/architecture.md §6, CORE-1): what the HTTP adapter
refuses, and that a reply or an SSE event that cannot be encoded never becomes a 500 or a cut
stream.

Every refusal of the decoder is one JSON-RPC error, -32700 with HTTP 400 and no ``id`` (the
body never decoded, so its id is unreadable, §2.1). The limits are those of
``mrtr_kit.protocol.wire_json``.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mrtr_kit.protocol.errors import McpError
from mrtr_kit.protocol.jsonvalues import MAX_JSON_DEPTH
from mrtr_kit.protocol.wire_json import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    Unencodable,
    decode_body,
    encode_message,
    nesting_depth,
)
from mrtr_kit.server import McpServer
from mrtr_kit.server.http import HTTP_STATUS, create_app
from mrtr_kit.server.loopback import LoopbackServer
from tests.helpers import headers, meta


def build() -> McpServer:
    s = McpServer("decoding-server", state_key=b"d" * 32)

    @s.tool(description="Echoes its arguments as text.")
    def echo(ctx):
        return json.dumps(ctx.arguments, sort_keys=True)

    @s.tool(description="Reports progress, then answers.")
    async def steps(ctx):
        await ctx.progress(1, 2)
        return "done"

    @s.tool(description="A buggy tool: its progress message cannot be encoded in UTF-8.")
    async def bad_progress(ctx):
        await ctx.progress(1, 2, message="half\ud800way")
        return "done"

    @s.tool(description="A buggy tool: reports progress, then raises.")
    async def raises_late(ctx):
        await ctx.progress(1, 2)
        raise RuntimeError("boom")

    @s.tool(description="A buggy tool: reports progress, then answers with NaN.")
    async def progress_then_nan(ctx):
        await ctx.progress(1, 2)
        return {"content": [{"type": "text", "text": "x"}], "score": math.inf}

    @s.tool(description="A buggy tool: its answer holds NaN, which JSON cannot carry.")
    def nan_result(ctx):
        return {"content": [{"type": "text", "text": "x"}], "score": math.nan}

    @s.tool(description="A buggy tool: its answer holds a lone surrogate.")
    def surrogate_result(ctx):
        return "bad \udc80 text"

    return s


APP = create_app(build())


def call_body(name: str, arguments: Any = None, rid: Any = 1, **meta_kw: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"_meta": meta(**meta_kw), "name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def raw(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def post(content: bytes, headers: dict[str, str]) -> httpx.Response:
    """POST in process; an exception escaping the app shows up as the 500 uvicorn would send."""

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(APP, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/mcp", content=content, headers=headers)

    return asyncio.run(go())


def strict_json(text: str | bytes) -> Any:
    """json.loads, but NaN / Infinity are errors (they are not JSON, RFC 8259 §6)."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def assert_parse_error(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 400, (resp.status_code, resp.text[:200])
    body = strict_json(resp.content)
    assert body["jsonrpc"] == "2.0" and "id" not in body
    assert body["error"]["code"] == -32700, body
    return body["error"]


def tools_call(name: str, payload: bytes) -> httpx.Response:
    return post(payload, headers("tools/call", name))


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# --- CORE-1: UTF-8 only --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda s: s.encode("utf-16"), id="utf-16 with BOM"),
        pytest.param(lambda s: s.encode("utf-16-le"), id="utf-16-le"),
        pytest.param(lambda s: s.encode("utf-32"), id="utf-32"),
        pytest.param(lambda s: b"\xef\xbb\xbf" + s.encode(), id="utf-8 BOM"),
        pytest.param(lambda s: s.encode().replace(b"echo", b"ech\xff", 1), id="invalid utf-8"),
        pytest.param(
            lambda s: s.encode().replace(b'"hi"', b'"\xed\xa0\x80"'), id="encoded surrogate"
        ),
    ],
)
def test_core_1_body_must_be_utf8(encode):
    """CORE-1: a JSON-RPC body is UTF-8. UTF-16/32, a byte-order mark, invalid UTF-8 and
    UTF-8-encoded surrogates are -32700 (a UTF-16 body was answered 200 before)."""
    text = json.dumps(call_body("echo", {"word": "hi"}))
    assert_parse_error(tools_call("echo", encode(text)))


# --- limits: depth, digits, numbers --------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"[" * 100_000, id="100k open brackets"),
        pytest.param(
            raw(call_body("echo", {"x": "PLACEHOLDER"})).replace(
                b'"PLACEHOLDER"', _nested(1000).encode()
            ),
            id="depth 1000 inside arguments",
        ),
        pytest.param(
            raw(call_body("echo", {"x": "PLACEHOLDER"})).replace(
                b'"PLACEHOLDER"', _nested(70).encode()
            ),
            id="depth 74 in all",
        ),
    ],
)
def test_nesting_beyond_the_limit_is_a_parse_error(payload):
    """KIT (docs/architecture.md §6): nesting deeper than the decoder's limit is -32700, never a
    RecursionError (which escaped json.loads as a 500 before)."""
    error = assert_parse_error(tools_call("echo", payload))
    assert "deep" in error["message"]


@pytest.mark.parametrize(
    ("body", "ok"),
    [
        pytest.param(_nested(MAX_DEPTH), True, id="exactly the limit"),
        pytest.param(_nested(MAX_DEPTH + 1), False, id="one past the limit"),
        pytest.param("[" + "[]," * (3 * MAX_DEPTH) + "[]]", True, id="many brackets, depth 2"),
        pytest.param('["' + "[" * (2 * MAX_DEPTH) + '"]', True, id="brackets in a string"),
    ],
)
def test_the_depth_limit_is_exact_with_many_or_few_brackets(body, ok):
    """KIT (docs/architecture.md §6): the depth check is exact whether a body has fewer brackets
    than the limit (no closer look needed) or more (then they are counted, strings skipped)."""
    if ok:
        assert decode_body(body.encode()) is not None
    else:
        with pytest.raises(McpError, match="deep"):
            decode_body(body.encode())


def test_nesting_inside_strings_does_not_count():
    """Brackets inside strings are text, not nesting: a string of 10,000 '[' is fine."""
    resp = tools_call("echo", raw(call_body("echo", {"x": "[" * 10_000 + '"\\"{'})))
    assert resp.status_code == 200, resp.text[:200]
    assert "[[[" in resp.json()["result"]["content"][0]["text"]


@pytest.mark.parametrize("where", ["id", "arguments"])
def test_integer_over_the_digit_limit_is_a_parse_error(where):
    """KIT: an integer literal of 5,000 digits is -32700 (Python's own 4,300-digit guard raised
    ValueError out of json.loads: a 500 before)."""
    huge = "9" * 5000
    if where == "id":
        payload = raw(call_body("echo", {}, rid=0)).replace(b'"id": 0', f'"id": {huge}'.encode())
    else:
        payload = raw(call_body("echo", {"n": 0})).replace(b'"n": 0', f'"n": {huge}'.encode())
    assert huge.encode() in payload
    assert_parse_error(tools_call("echo", payload))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_non_finite_numbers_are_parse_errors(literal):
    """RFC 8259 §6: NaN and Infinity are not JSON; 1e400 overflows a double to infinity.
    Each is -32700 (they reached the tool, or request_digest, before)."""
    payload = raw(call_body("echo", {"n": 0})).replace(b'"n": 0', f'"n": {literal}'.encode())
    assert_parse_error(tools_call("echo", payload))


def test_duplicate_keys_are_a_parse_error():
    """KIT (I-JSON, RFC 7493 §2.3): an object with a repeated key is -32700. Two parsers may
    pick different values (first or last), so a proxy and this server could disagree on the
    method; Python alone silently kept the last one before."""
    payload = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call",'
        b'"params":{"_meta":' + json.dumps(meta()).encode() + b',"name":"echo"}}'
    )
    assert_parse_error(tools_call("echo", payload))


# --- lone surrogates: cannot be echoed in UTF-8 ---------------------------------------------------


def _with_escape(message: dict[str, Any]) -> bytes:
    """The message with every "LONE" string replaced by the JSON escape \\ud800."""
    return raw(message).replace(b'"LONE"', b'"\\ud800"').replace(b'"LONE2"', b'"a\\udc00b"')


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(call_body("echo", {}, rid="LONE"), id="id"),
        pytest.param(call_body("echo", {"LONE": 1}), id="an arguments key"),
        pytest.param(call_body("echo", {"x": ["LONE2"]}), id="an arguments value"),
        pytest.param(call_body("steps", progressToken="LONE"), id="_meta.progressToken"),
        pytest.param(
            {
                **call_body("echo", {}),
                "params": {
                    **call_body("echo", {})["params"],
                    "inputResponses": {"k": {"action": "accept", "content": {"n": "LONE2"}}},
                },
            },
            id="inputResponses content",
        ),
    ],
)
def test_lone_surrogate_anywhere_is_a_parse_error(message):
    """KIT (I-JSON, RFC 7493 §2.1): a lone surrogate escape cannot be encoded in UTF-8, so the
    id, an error message or a progress event echoing it could not be sent: -32700 up front
    (before: a 500, or a 200 SSE stream cut half-way)."""
    payload = _with_escape(message)
    assert b"\\ud800" in payload or b"\\udc00" in payload
    name = message["params"]["name"]
    assert_parse_error(tools_call(name, payload))


def test_surrogate_pairs_are_fine():
    """A *pair* of surrogate escapes is one character (U+1F600) and is accepted and echoed."""
    payload = raw(call_body("echo", {"x": "PAIR"})).replace(b'"PAIR"', b'"\\ud83d\\ude00"')
    resp = tools_call("echo", payload)
    assert resp.status_code == 200
    assert "\U0001f600" in json.loads(resp.json()["result"]["content"][0]["text"])["x"]


# --- replies that cannot be encoded: a handler bug, -32603, never a 500 ---------------------------


@pytest.mark.parametrize("tool", ["nan_result", "surrogate_result"])
def test_unencodable_json_reply_is_internal_error_200(tool):
    """KIT-HTTP-B: a handler whose answer cannot be encoded as JSON in UTF-8 (NaN, a lone
    surrogate) is a server bug: -32603 with HTTP 200 and the request id, never a 500 and never
    invalid JSON (before: a 500, or a body holding the bare word NaN)."""
    resp = tools_call(tool, raw(call_body(tool, rid=41)))
    assert resp.status_code == 200, resp.text[:200]
    body = strict_json(resp.content)
    assert body == {
        "jsonrpc": "2.0",
        "id": 41,
        "error": {"code": -32603, "message": "Internal error"},
    }


def test_the_internal_error_itself_is_always_bytes_a_peer_can_read():
    """KIT-HTTP-B: even the -32603 fallback may hit an id JSON cannot carry (an in-process
    caller's 5000-digit id; the wire cannot send one, decode_body caps digits): then the
    reply leaves out the id rather than fail (never a 500, never a dropped stream)."""
    from mrtr_kit.server.core import encoded_internal_error

    assert strict_json(encoded_internal_error(7)) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32603, "message": "Internal error"},
    }
    assert strict_json(encoded_internal_error(10**5000)) == {
        "jsonrpc": "2.0",
        "error": {"code": -32603, "message": "Internal error"},
    }


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    site = LoopbackServer.start(lambda base: APP)
    yield site.url + "/mcp"
    site.stop()


def _sse_events(resp: httpx.Response) -> list[dict[str, Any]]:
    return [strict_json(line[5:]) for line in resp.text.splitlines() if line.startswith("data:")]


def test_http_21_sse_progress_token_surrogate_is_refused_not_cut(live_url):
    """HTTP-21: a progressToken holding a lone surrogate is refused before any stream starts
    (before: a 200 SSE stream cut when the first progress event failed to encode)."""
    payload = _with_escape(call_body("steps", rid=5, progressToken="LONE"))
    resp = httpx.post(live_url, content=payload, headers=headers("tools/call", "steps"))
    assert_parse_error(resp)


def test_http_21_sse_event_that_cannot_be_encoded_ends_with_an_error_event(live_url):
    """HTTP-21 / KIT: when a handler emits a notification that cannot be encoded, the SSE
    stream still ends properly, with a -32603 error event for this id (before: cut)."""
    payload = raw(call_body("bad_progress", rid=6, progressToken="p"))
    resp = httpx.post(
        live_url, content=payload, headers=headers("tools/call", "bad_progress"), timeout=60
    )
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event")
    events = _sse_events(resp)
    assert events[-1] == {
        "jsonrpc": "2.0",
        "id": 6,
        "error": {"code": -32603, "message": "Internal error"},
    }


def test_http_21_sse_answer_that_cannot_be_encoded_ends_with_an_error_event(live_url):
    """HTTP-21 / KIT: a final answer that cannot be encoded (infinity) after a progress event
    becomes a -32603 error event, never the bare word Infinity on the wire."""
    payload = raw(call_body("progress_then_nan", rid=8, progressToken="p"))
    resp = httpx.post(live_url, content=payload, headers=headers("tools/call", "progress_then_nan"))
    events = _sse_events(resp)
    assert events[0]["method"] == "notifications/progress"
    assert events[-1] == {
        "jsonrpc": "2.0",
        "id": 8,
        "error": {"code": -32603, "message": "Internal error"},
    }


def test_http_21_handler_raising_after_a_notification_ends_the_stream_with_32603(live_url):
    """HTTP-21: a handler that raises after a progress event: the stream ends with -32603."""
    payload = raw(call_body("raises_late", rid=7, progressToken="p"))
    resp = httpx.post(
        live_url, content=payload, headers=headers("tools/call", "raises_late"), timeout=60
    )
    events = _sse_events(resp)
    assert events[0]["method"] == "notifications/progress"
    assert events[-1]["id"] == 7 and events[-1]["error"]["code"] == -32603


# --- the decoder's limits, exactly at the boundary -----------------------------------------------


def _refused(data: bytes) -> str:
    with pytest.raises(McpError) as info:
        decode_body(data)
    assert info.value.code == -32700 and HTTP_STATUS[info.value.reason] == 400
    return info.value.message


def test_depth_limit_is_exact():
    """KIT: MAX_DEPTH levels decode; one more is refused; objects and arrays both count."""
    assert decode_body(_nested(MAX_DEPTH).encode()) is not None
    assert "deep" in _refused(_nested(MAX_DEPTH + 1).encode())
    deep_objects = '{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)
    assert "deep" in _refused(deep_objects.encode())


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ('{"a":"[[[\\"{{"}', 1),  # brackets and an escaped quote inside a string
        ('[[["]"]]]', 3),
        ('["\\\\", [[]]]', 3),  # an escaped backslash ends before the closing quote
        ('"[[[[', 0),  # unterminated string: no brackets outside strings
    ],
)
def test_nesting_depth_ignores_strings(text, depth):
    assert nesting_depth(text.encode()) == depth


def test_integer_digit_limit_is_exact():
    """KIT: MAX_INT_DIGITS digits decode (the sign is not a digit); one more is refused."""
    assert decode_body(("-" + "9" * MAX_INT_DIGITS).encode()) == -int("9" * MAX_INT_DIGITS)
    assert "digits" in _refused(("9" * (MAX_INT_DIGITS + 1)).encode())


def test_floats_underflow_but_never_overflow():
    assert decode_body(b"[1e-400, 1.5e308, 0.1]") == [0.0, 1.5e308, 0.1]
    _refused(b"[1.8e308]")


def test_a_long_float_literal_is_fine():
    """Only integers have a digit limit: float() reads a long literal in linear time."""
    assert decode_body(("0." + "1" * 5000).encode()) == pytest.approx(1 / 9)


def test_error_messages_do_not_echo_raw_input():
    """A refusal's message is short and always encodable, whatever the input held."""
    key = "\ud800" * 3 + "x" * 1000
    payload = json.dumps({key: 1, "y": 2}).replace('"y"', json.dumps(key)).encode()
    message = _refused(payload)
    assert len(message) < 200
    encode_message({"message": message})  # would raise on a lone surrogate


@pytest.mark.parametrize(
    "value",
    [math.nan, math.inf, "\ud800", {"k": {1, 2}}, b"bytes", 10**5000],
    ids=["nan", "inf", "lone surrogate", "a set", "bytes", "a 5000-digit int"],
)
def test_encode_message_refuses_what_a_peer_could_not_read(value):
    with pytest.raises(Unencodable):
        encode_message({"jsonrpc": "2.0", "id": 1, "result": {"v": value}})


def test_encode_message_is_single_line_utf8():
    data = encode_message({"text": "caf\u00e9\nline \U0001f600"})
    assert data == '{"text":"café\\nline 😀"}'.encode()


def test_mrtr_e2_the_decoder_refuses_all_that_the_core_walk_looks_for():
    """MRTR-E2: the HTTP and stdio adapters call ``McpServer.handle(..., decoded=True)``, so
    step 1 does not walk the params for values no JSON text can hold (``json_problem``): a
    second walk of what ``decode_body`` checked. Safe only while the decoder refuses all of it
    first: each such value written as JSON text is -32700 here, and the decoder's depth limit
    is the stricter one. (bytes, sets and non-string keys cannot come out of JSON text.)"""
    assert MAX_DEPTH <= MAX_JSON_DEPTH
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    for value in ("NaN", "Infinity", "-Infinity", "1e400", '"\\ud800"', '"a\\udfffb"', deep):
        with pytest.raises(McpError) as refused:
            decode_body(f'{{"params": {{"x": {value}}}}}'.encode())
        assert refused.value.code == -32700, value
