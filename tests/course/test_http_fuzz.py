"""Fuzzing the HTTP edge in process (docs/architecture.md §6: never a 500): hypothesis builds
requests to the conformance example server, valid ones and broken ones, and every answer must be a
well-formed JSON-RPC response with a status that matches its code.

Deterministic: ``derandomize=True`` draws the same examples on every run, so a failure here
fails every time. ``benchmarks/fuzz_http.py`` does the same at scale against a real process.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrtr_course.examples import conformance_server as conformance
from mrtr_kit.protocol.constants import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    MRTR_METHODS,
    PROTOCOL_VERSION,
)
from mrtr_kit.server.hosts import parse_host
from mrtr_kit.server.http import LOOPBACK_HOSTS, create_app
from tests.helpers import request
from tests.hostile_http import (
    HOSTILE_VALUES,
    METHODS,
    PLACEHOLDER,
    STATUS_OF_CODE,
    damage,
    strict_json,
    with_hostile,
)

SERVER = conformance.build_server()
APP = create_app(SERVER)
FUZZ = settings(
    derandomize=True,
    database=None,
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

HOSTILE = [
    b"NaN",
    b"-Infinity",
    b"1e400",
    b"9" * 5000,
    b'"\\ud800"',
    b'"a\\udc00"',
    b"[" * 300,
    b"{" * 70,
    b'"\\u0000"',
    b"\xff\xfe",
    b"\xed\xa0\x80",
    b"null",
    b"",
]

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=2),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)


def tool_names() -> list[str]:
    listed = asyncio.run(SERVER.handle(request("tools/list")))
    assert listed.body is not None
    return [t["name"] for t in listed.body["result"]["tools"]]


TOOLS = tool_names()


@st.composite
def requests(draw: st.DrawFn) -> tuple[bytes, dict[str, str]]:
    """A request body and headers: built valid, then maybe broken in one or two places."""
    method = draw(st.sampled_from(METHODS))
    meta: dict[str, Any] = {
        META_PROTOCOL_VERSION: PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES: draw(
            st.sampled_from([{}, {"elicitation": {}}, {"sampling": {}, "roots": {}}])
        ),
    }
    if draw(st.booleans()):
        meta["progressToken"] = draw(st.one_of(st.text(max_size=5), st.integers(), json_value))
    if draw(st.integers(0, 4)) == 0:
        meta[draw(st.sampled_from(list(meta)))] = draw(json_value)
    params: dict[str, Any] = {"_meta": meta}
    name = draw(st.sampled_from(TOOLS) | st.text(max_size=10))
    if method in ("tools/call", "prompts/get"):
        params["name"] = name
        if draw(st.booleans()):
            params["arguments"] = draw(json_value)
    if method == "resources/read":
        params["uri"] = draw(st.sampled_from(["test://static-text", "test://x"]) | st.text())
    if method in MRTR_METHODS and draw(st.booleans()):
        params["inputResponses"] = draw(json_value)
    if method in MRTR_METHODS and draw(st.booleans()):
        params["requestState"] = draw(st.text(max_size=30) | json_value)
    if method == "initialize" and draw(st.booleans()):
        params = {"protocolVersion": draw(st.text(max_size=12)), "capabilities": {}}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    rid = draw(st.one_of(st.integers(), st.text(max_size=8), json_value))
    if draw(st.integers(0, 9)):
        message["id"] = rid
    if draw(st.integers(0, 9)) == 0:
        message[draw(st.sampled_from(["jsonrpc", "method", "params"]))] = draw(json_value)
    if draw(st.integers(0, 2)) == 0:  # a hostile value in a valid place of valid JSON
        slot = draw(st.sampled_from(["id", "token", "argument", "answer", "state"]))
        if slot == "id":
            message["id"] = PLACEHOLDER
        elif slot == "token":
            meta["progressToken"] = PLACEHOLDER
        elif slot == "argument":
            params["arguments"] = {"x": PLACEHOLDER}
        elif slot == "answer":
            params["inputResponses"] = {"k": {"action": "accept", "content": {"n": PLACEHOLDER}}}
        else:
            params["requestState"] = PLACEHOLDER
    body = with_hostile(json.dumps(message).encode(), draw(st.sampled_from(HOSTILE_VALUES)))

    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):  # byte-level damage, drawn places
        at = draw(st.integers(0, len(body)))
        kind = draw(st.sampled_from(["flip", "truncate", "insert"]))
        if kind == "flip":
            body = damage(body, "flip", at, bit=draw(st.integers(0, 7)))
        elif kind == "truncate":
            body = damage(body, "truncate", at)
        else:
            body = damage(body, "insert", at, insert=draw(st.sampled_from(HOSTILE)))
    if draw(st.integers(0, 19)) == 0:
        body = json.dumps(message).encode("utf-16")

    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        HEADER_PROTOCOL_VERSION: PROTOCOL_VERSION,
        HEADER_METHOD: method,
    }
    if method in MRTR_METHODS:
        headers[HEADER_NAME] = str(params.get("uri" if method == "resources/read" else "name"))
    if draw(st.integers(0, 3)) == 0:
        victim = draw(st.sampled_from(sorted(headers)))
        if draw(st.booleans()):
            del headers[victim]
        else:
            headers[victim] = draw(st.text(st.characters(min_codepoint=32, max_codepoint=126)))
    return body, headers


def _header_safe(headers: dict[str, str]) -> dict[str, str]:
    # httpx refuses header values with non-ASCII or control characters; so would a browser.
    return {k: v for k, v in headers.items() if v.isascii() and v.isprintable() and v == v.strip()}


async def _post(content: bytes, headers: dict[str, str] | list[tuple[str, str]]) -> httpx.Response:
    transport = httpx.ASGITransport(APP, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport) as client:
        request = client.build_request("POST", "http://127.0.0.1:8000/mcp", content=content)
        if isinstance(headers, list):
            request.headers = httpx.Headers([*headers, ("Content-Length", str(len(content)))])
        else:
            request.headers.update(headers)
        return await client.send(request)


def check_message(message: Any) -> None:
    """One JSON-RPC response or notification, shaped as CORE-4 / §2.1 say."""
    assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", message
    if "method" in message:  # a notification on an SSE stream (HTTP-21)
        assert message["method"].startswith("notifications/") and "id" not in message
        return
    assert ("result" in message) != ("error" in message), message
    if "id" in message:
        assert isinstance(message["id"], str | int) and not isinstance(message["id"], bool)
    if "result" in message:
        assert isinstance(message["result"], dict) and "resultType" in message["result"]
    else:
        error = message["error"]
        assert isinstance(error["code"], int) and isinstance(error["message"], str), error
        assert error["code"] != -32603, f"internal error for a client's input: {message}"


def check_response(resp: httpx.Response) -> None:
    assert resp.status_code < 500, (resp.status_code, resp.text[:300])
    if resp.status_code == 202:
        assert resp.content == b""
        return
    kind = resp.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        assert resp.status_code == 200
        events = [strict_json(x[5:]) for x in resp.text.splitlines() if x.startswith("data:")]
        assert events, resp.text[:300]
        for event in events:
            check_message(event)
        assert "method" not in events[-1], "the stream must end with the response"
        return
    assert kind.startswith("application/json"), (resp.status_code, kind, resp.text[:200])
    message = strict_json(resp.text)
    check_message(message)
    if "error" in message:
        code = message["error"]["code"]
        assert resp.status_code in STATUS_OF_CODE.get(code, {200}), (resp.status_code, message)
    else:
        assert resp.status_code == 200


@FUZZ
@given(requests())
def test_fuzzed_requests_never_get_a_500_and_always_a_jsonrpc_answer(case):
    """KIT (docs/architecture.md §6, issue 8): built-then-broken requests (wrong types in id,
    params, _meta, inputResponses, requestState; flipped bytes, truncation, NaN, 1e400, 5000-digit
    integers, lone surrogates, deep nesting, UTF-16; missing or wrong headers) never get a 5xx;
    every answer is a JSON-RPC message whose status fits its code, and none is -32603."""
    body, headers = case
    resp = asyncio.run(_post(body, _header_safe(headers)))
    check_response(resp)


@FUZZ
@given(st.binary(max_size=300))
def test_fuzzed_raw_bytes_are_parse_errors_or_answers(data):
    """CORE-1 / KIT: arbitrary bytes as a body: a JSON-RPC error (mostly -32700), never a 5xx."""
    headers = {HEADER_PROTOCOL_VERSION: PROTOCOL_VERSION, HEADER_METHOD: "tools/list"}
    check_response(asyncio.run(_post(data, headers)))


host_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
loopbackish = st.sampled_from(
    ["127.0.0.1", "localhost", "[::1]", "127.0.0.1:8000", "[::1]:1", "localhost:65535"]
)


@FUZZ
@given(
    host=loopbackish | st.builds(lambda a, b: a + b, loopbackish, host_text) | host_text,
    origin=st.none()
    | st.builds(lambda s, h: s + h, st.sampled_from(["http://", "https://", ""]), loopbackish)
    | st.builds(lambda s, h: s + h, st.sampled_from(["http://", "https://"]), host_text),
)
def test_fuzzed_host_and_origin_are_403_unless_exactly_an_allowed_host(host, origin):
    """HTTP-27 / HTTP-29: the request passes only if Host (and Origin, when sent) parse as
    exactly an allowed host; anything else is 403 with an id-less JSON-RPC error."""
    lines = [
        (HEADER_PROTOCOL_VERSION, PROTOCOL_VERSION),
        (HEADER_METHOD, "server/discover"),
        ("Host", host),
    ]
    if origin is not None:
        lines.append(("Origin", origin))
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {
                "_meta": {
                    META_PROTOCOL_VERSION: PROTOCOL_VERSION,
                    META_CLIENT_CAPABILITIES: {},
                }
            },
        }
    ).encode()
    resp = asyncio.run(_post(body, lines))
    allowed = set(LOOPBACK_HOSTS)
    origin_ok = origin is None or (
        origin.startswith(("http://", "https://"))
        and parse_host(origin.split("://", 1)[1]) in allowed
    )
    expected = 200 if parse_host(host) in allowed and origin_ok else 403
    assert resp.status_code == expected, (host, origin, resp.status_code)
    check_response(resp)
