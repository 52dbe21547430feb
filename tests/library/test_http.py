"""The Streamable HTTP adapter (digest §3): status codes, headers, JSON vs SSE, origin checks.

Most tests go through ``httpx.ASGITransport`` (the same app, no socket); the streaming and
cancellation tests run the app under a real uvicorn server on loopback.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator

import httpx
import pytest

from mrtr_kit.protocol.constants import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_PROTOCOL_VERSION,
)
from mrtr_kit.server import McpServer
from mrtr_kit.server.context import elicit_form
from mrtr_kit.server.http import create_app
from mrtr_kit.server.ledger import LedgerUnavailable
from mrtr_kit.server.loopback import LoopbackServer
from tests.helpers import headers, meta

cancelled = threading.Event()


def build() -> McpServer:
    s = McpServer("http-server", state_key=b"h" * 32)

    @s.tool(description="Greets.")
    def greet(ctx):
        if ctx.elicitation("name") is None:
            schema = {"type": "object", "properties": {"n": {"type": "string"}}}
            return ctx.input_required({"name": elicit_form("Name?", schema)}, state={})
        return "hello"

    @s.tool(
        description="Mirrors a region argument into Mcp-Param-Region.",
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
            },
        },
    )
    def regional(ctx):
        return f"region={ctx.arguments.get('region')}"

    @s.tool(description="Needs a ledger that is down.")
    async def ledger_down(ctx):
        raise LedgerUnavailable("the test's ledger is down")

    @s.tool(description="Streams progress.")
    async def slow(ctx):
        for step in (0, 50, 100):
            await ctx.progress(step, 100)
            await asyncio.sleep(0.02)
        return "finished"

    @s.tool(description="Streams once, then works for a long time.")
    async def forever(ctx):
        await ctx.progress(1, 100)
        try:
            await asyncio.sleep(3600)  # only a cancellation ends it in a test's time
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    return s


APP_SERVER = build()
APP = create_app(APP_SERVER)


def body(method: str, params: dict | None = None, rid: int = 1, **meta_kw) -> dict:
    p = dict(params or {})
    p.setdefault("_meta", meta(**meta_kw))
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}


def post(payload, hdrs, *, host: str = "127.0.0.1:8000") -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(APP)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as client:
            content = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            return await client.post("/mcp", content=content, headers=hdrs)

    return asyncio.run(go())


def call_tool(name: str, arguments: dict | None = None, **extra: str) -> httpx.Response:
    params = {"name": name, "arguments": arguments or {}}
    payload = body("tools/call", params, capabilities={"elicitation": {}})
    return post(payload, headers("tools/call", name, **extra))


def jsonrpc_error(resp: httpx.Response) -> dict:
    return resp.json()["error"]


# --- endpoint, methods, bodies -----------------------------------------------------------------


def test_http_1_6_post_answers_single_line_json():
    """HTTP-1 / HTTP-6: one POST endpoint; a JSON answer is application/json on one line."""
    resp = post(body("server/discover"), headers("server/discover"))
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    assert "\n" not in resp.text.strip()
    assert resp.json()["result"]["supportedVersions"] == ["2026-07-28"]


@pytest.mark.parametrize("verb", ["GET", "DELETE"])
def test_http_20_legacy_get_and_delete_are_405(verb):
    """HTTP-20: the legacy GET stream and session DELETE -> 405."""

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(APP), base_url="http://127.0.0.1"
        ) as client:
            return await client.request(verb, "/mcp", headers={"Mcp-Session-Id": "abc"})

    resp = asyncio.run(go())
    assert resp.status_code == 405 and "mcp-session-id" not in resp.headers


def test_http_5_notification_is_202_with_empty_body():
    """HTTP-5: an accepted notification -> 202, empty body."""
    payload = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
    resp = post(payload, {"Content-Type": "application/json"})
    assert resp.status_code == 202 and resp.content == b""


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe", -32700),
        (b"[]", -32600),
        (b'{"jsonrpc":"2.0"}', -32600),
    ],
)
def test_parse_and_shape_errors_are_400(payload, code):
    """§2.6 (KIT): unparsable JSON -> -32700, not JSON-RPC -> -32600, both HTTP 400, no id."""
    resp = post(payload, headers("tools/list"))
    assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == code
    assert "id" not in resp.json()


def test_oversized_body_is_413():
    """A body over the cap is refused before it is parsed."""
    big = body("tools/list", {"pad": "x" * 1_100_000})
    resp = post(big, headers("tools/list"))
    assert resp.status_code == 413 and jsonrpc_error(resp)["code"] == -32600


# --- standard headers --------------------------------------------------------------------------


@pytest.mark.parametrize("missing", [HEADER_PROTOCOL_VERSION, HEADER_METHOD, HEADER_NAME])
def test_http_15_missing_standard_header_is_400_header_mismatch(missing):
    """HTTP-15: a missing MCP-Protocol-Version, Mcp-Method or Mcp-Name -> 400, -32020,
    with the request id echoed."""
    h = headers("tools/call", "greet")
    del h[missing]
    resp = post(body("tools/call", {"name": "greet"}, rid=77), h)
    assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == -32020
    assert resp.json()["id"] == 77


def test_http_7_version_header_must_equal_meta():
    """HTTP-7: MCP-Protocol-Version differs from _meta -> 400, -32020 (before -32022)."""
    payload = body("server/discover")
    payload["params"]["_meta"] = {**meta(), META_PROTOCOL_VERSION: "v999.0.0"}
    resp = post(payload, headers("server/discover"))
    assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == -32020


def test_http_16_unsupported_version_is_400():
    """HTTP-16: header and _meta agree on an unsupported version -> 400, -32022."""
    payload = body("server/discover")
    payload["params"]["_meta"][META_PROTOCOL_VERSION] = "v999.0.0"
    resp = post(payload, headers("server/discover", **{HEADER_PROTOCOL_VERSION: "v999.0.0"}))
    assert resp.status_code == 400
    assert jsonrpc_error(resp)["data"] == {"supported": ["2026-07-28"], "requested": "v999.0.0"}


def test_http_8_names_case_insensitive_values_case_sensitive():
    """HTTP-8: `mcp-method` is the same header; `TOOLS/LIST` is not the same value."""
    h = headers("tools/list")
    del h[HEADER_METHOD]
    ok = post(body("tools/list"), {**h, "mcp-method": "tools/list"})
    assert ok.status_code == 200 and "result" in ok.json()
    bad = post(body("tools/list"), {**h, "MCP-METHOD": "TOOLS/LIST"})
    assert bad.status_code == 400 and jsonrpc_error(bad)["code"] == -32020


def test_http_10_sentinel_encoded_name_is_decoded_and_whitespace_trimmed():
    """HTTP-9 / HTTP-10: `=?base64?…?=` is decoded before comparing; surrounding OWS trimmed."""
    assert call_tool("greet", **{HEADER_NAME: "=?base64?Z3JlZXQ=?="}).status_code == 200
    assert call_tool("greet", **{HEADER_NAME: "  greet "}).status_code == 200
    wrong = call_tool("greet", **{HEADER_NAME: "regional"})
    assert wrong.status_code == 400 and jsonrpc_error(wrong)["code"] == -32020


@pytest.mark.parametrize("value", ["=?base64?Z3JlZXQ?=", "=?base64?Z3!!ZXQ=?="])
def test_http_9_invalid_base64_sentinel_is_rejected(value):
    """HTTP-9 / HTTP-15: bad padding or characters inside the sentinel -> 400, -32020."""
    resp = call_tool("greet", **{HEADER_NAME: value})
    assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == -32020


def test_http_11_a_retry_needs_the_same_headers():
    """HTTP-11: the MRTR retry is an ordinary tools/call and needs Mcp-Name too."""
    first = call_tool("greet").json()["result"]
    params = {
        "name": "greet",
        "arguments": {},
        "inputResponses": {"name": {"action": "accept", "content": {"n": "x"}}},
        "requestState": first["requestState"],
    }
    h = headers("tools/call")
    caps = {"elicitation": {}}
    resp = post(body("tools/call", params, rid=2, capabilities=caps), h)
    assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == -32020
    resp = post(
        body("tools/call", params, rid=3, capabilities=caps), headers("tools/call", "greet")
    )
    assert resp.json()["result"]["content"][0]["text"] == "hello"


def test_http_14_param_headers_mirror_annotated_arguments():
    """HTTP-14: Mcp-Param-* must be present and equal for annotated arguments; numbers
    compare numerically; a plain literal that merely starts like a sentinel is a literal."""
    assert call_tool("regional", {"region": "eu"}, **{"Mcp-Param-Region": "eu"}).status_code == 200
    assert call_tool("regional", {"count": 42}, **{"Mcp-Param-Count": "42.0"}).status_code == 200
    literal = "=?base64?SGVsbG8="
    assert (
        call_tool("regional", {"region": literal}, **{"Mcp-Param-Region": literal}).status_code
        == 200
    )
    enc = call_tool("regional", {"region": "Hello"}, **{"Mcp-Param-Region": "=?base64?SGVsbG8=?="})
    assert enc.status_code == 200
    for args, extra in [
        ({"region": "eu"}, {}),
        ({"region": "eu"}, {"Mcp-Param-Region": "us"}),
        ({"count": 42}, {"Mcp-Param-Count": "41"}),
        ({}, {"Mcp-Param-Region": "eu"}),
    ]:
        resp = call_tool("regional", args, **extra)
        assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == -32020, (args, extra)


def test_http_9_non_ascii_header_value_is_rejected():
    """HTTP-9: raw non-ASCII bytes in a header value -> 400, -32020."""

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(APP), base_url="http://127.0.0.1"
        ) as client:
            h = headers("tools/call")
            h[HEADER_NAME] = "caf\u00e9".encode()  # type: ignore[assignment]
            payload = json.dumps(body("tools/call", {"name": "café"})).encode()
            return await client.post("/mcp", content=payload, headers=h)

    resp = asyncio.run(go())
    assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == -32020


# --- statuses from the core ---------------------------------------------------------------------


def test_http_17_18_core_statuses_reach_the_wire():
    """HTTP-17 / HTTP-18: unknown method 404/-32601; missing _meta 400/-32602; missing
    capability 400/-32021; a handler-level error (unknown tool) 200 (KIT-HTTP-B)."""
    resp = post(body("ping"), headers("ping"))
    assert resp.status_code == 404 and jsonrpc_error(resp)["code"] == -32601
    no_meta = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    resp = post(no_meta, headers("tools/list"))
    assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == -32602
    resp = post(
        body("tools/call", {"name": "greet"}, capabilities={}), headers("tools/call", "greet")
    )
    assert resp.status_code == 400 and jsonrpc_error(resp)["code"] == -32021
    resp = call_tool("nope")
    assert resp.status_code == 200 and jsonrpc_error(resp)["code"] == -32602


def test_http_22_input_required_is_a_plain_json_body():
    """HTTP-22: an InputRequiredResult is just the JSON answer of its request."""
    resp = call_tool("greet")
    assert resp.headers["content-type"].startswith("application/json")
    assert resp.json()["result"]["resultType"] == "input_required"


# --- DNS rebinding ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        ("127.0.0.1:8000", None, 200),
        ("localhost:9", "http://localhost:9", 200),
        ("[::1]:8000", "http://[::1]:8000", 200),
        ("evil.example.com", "http://evil.example.com", 403),
        ("127.0.0.1:8000", "http://evil.example.com", 403),
        ("evil.example.com", None, 403),
        ("127.0.0.1:8000", "null", 403),
    ],
)
def test_http_27_29_host_and_origin_checked(host, origin, status):
    """HTTP-27 / HTTP-29: a foreign Origin or Host -> 403 before anything else is read."""
    h = headers("server/discover")
    if origin:
        h["Origin"] = origin
    resp = post(body("server/discover"), h, host=host)
    assert resp.status_code == status


# --- SSE and cancellation over a real socket ----------------------------------------------------


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    site = LoopbackServer.start(lambda base: APP)
    yield site.url + "/mcp"
    site.stop()


def test_http_21_23_progress_streams_as_sse_before_the_answer(live_url):
    """HTTP-21 / HTTP-23: with a progressToken, notifications come as SSE events before the
    final response, which ends the stream; X-Accel-Buffering: no."""
    m = meta(progressToken="p-1")
    payload = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"_meta": m, "name": "slow"},
    }
    resp = httpx.post(live_url, json=payload, headers=headers("tools/call", "slow"), timeout=60)
    assert resp.headers["content-type"].startswith("text/event-stream")
    assert resp.headers["x-accel-buffering"] == "no"
    events = [json.loads(line[5:]) for line in resp.text.splitlines() if line.startswith("data:")]
    assert [e.get("method") for e in events] == ["notifications/progress"] * 3 + [None]
    assert [e["params"]["progress"] for e in events[:3]] == [0, 50, 100]
    assert events[-1]["id"] == 9 and events[-1]["result"]["content"][0]["text"] == "finished"


def test_http_25_closing_the_stream_cancels_the_handler(live_url):
    """HTTP-25: closing a request's SSE stream is its cancellation: the handler is cancelled."""
    cancelled.clear()
    m = meta(progressToken="p-2")
    payload = {
        "jsonrpc": "2.0",
        "id": 10,
        "method": "tools/call",
        "params": {"_meta": m, "name": "forever"},
    }
    with (
        httpx.Client(timeout=60) as client,
        client.stream(
            "POST", live_url, json=payload, headers=headers("tools/call", "forever")
        ) as resp,
    ):
        for line in resp.iter_lines():
            if line.startswith("data:"):
                break  # got the first progress event; now hang up
    # A cap, not a speed claim: the cancellation comes at once, or (a bug) never.
    assert cancelled.wait(60), "the handler was not cancelled when the client closed the stream"


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "number", "x-mcp-header": "N"},
        {"type": "object", "x-mcp-header": "O"},
        {"type": "string", "x-mcp-header": ""},
        {"type": "string", "x-mcp-header": "Bad Name"},
    ],
)
def test_http_13_server_refuses_tools_every_client_would_drop(prop):
    """HTTP-13: an invalid x-mcp-header annotation is refused when the tool is registered."""
    s = McpServer("strict", state_key=b"s" * 32)
    with pytest.raises(ValueError, match="x-mcp-header"):
        s.tool(description="d", input_schema={"type": "object", "properties": {"p": prop}})(
            lambda ctx: "x"
        )


def test_http_13_case_insensitive_duplicate_headers_refused():
    """HTTP-13: two annotations naming the same header, ignoring case, are refused."""
    s = McpServer("strict", state_key=b"s" * 32)
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "region"},
        },
    }
    with pytest.raises(ValueError, match="twice"):
        s.tool(description="d", input_schema=schema)(lambda ctx: "x")


def test_http_14_only_plain_decimals_match_numbers():
    """HTTP-14: 1e3, nan and inf are not numeric matches for an integer argument."""
    for text in ("1e3", "nan", "inf", "0x2a"):
        resp = call_tool("regional", {"count": 1000}, **{"Mcp-Param-Count": text})
        assert resp.status_code == 400, text


# --- Host and Origin: parsed strictly, checked before any routing -------------------------------


def raw_post(path: str, hdrs: list[tuple[str, str]], payload: bytes | None = None):
    """A POST with exactly these header lines (repeats allowed) and no Host added by httpx."""

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(APP, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport) as client:
            req = client.build_request(
                "POST",
                f"http://127.0.0.1{path}",
                content=payload or json.dumps(body("server/discover")).encode(),
            )
            req.headers = httpx.Headers([(k, v) for k, v in hdrs])
            return await client.send(req)

    return asyncio.run(go())


DISCOVER_HEADERS = list(headers("server/discover").items())


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:80.evil.com"),
        ("127.0.0.1:8000", "http://127.0.0.1:abc"),
        ("127.0.0.1:8000", "http://["),
        ("127.0.0.1:8000", "http://127.0.0.1:0"),
        ("127.0.0.1:8000", "http://127.0.0.1:65536"),
        ("127.0.0.1:8000", "http://user@127.0.0.1:8000"),
        ("127.0.0.1:8000", "http://evil.com@127.0.0.1"),
        ("127.0.0.1:8000", "http://127.0.0.1:8000/"),
        ("127.0.0.1:8000", "http://127.0.0.1/path"),
        ("127.0.0.1:8000", "http://127.0.0.1?q"),
        ("127.0.0.1:8000", "http://127.0.0.1#f"),
        ("127.0.0.1:8000", "http://::1"),
        ("127.0.0.1:8000", "file://127.0.0.1"),
        ("127.0.0.1:8000", "http://127.0.0.1 "),
        ("127.0.0.1:8000", ""),
        ("[::1].evil.com", None),
        ("127.0.0.1:evil.com", None),
        ("127.0.0.1:", None),
        ("127.0.0.1:99999", None),
        ("127.0.0.1:+80", None),
        ("localhost.:8000", None),
        ("user@localhost", None),
        ("[::1", None),
        ("::1", None),
        ("[::1%25eth0]", None),
        ("", None),
    ],
)
def test_http_27_29_host_and_origin_parsed_strictly(host, origin):
    """HTTP-27 / HTTP-29 (KIT Host check): a Host or Origin that is not exactly
    host[:port] (port 1-65535 in digits, IPv6 only in brackets, no userinfo, path, query or
    fragment) is refused with 403, whatever prefix it starts with (before: the prefix before
    the first colon was compared, so 127.0.0.1:80.evil.com passed)."""
    hdrs = [*DISCOVER_HEADERS, ("Host", host)]
    if origin is not None:
        hdrs.append(("Origin", origin))
    resp = raw_post("/mcp", hdrs)
    assert resp.status_code == 403, resp.text[:200]
    assert resp.json()["error"]["code"] == -32600 and "id" not in resp.json()


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("localhost", "http://localhost"),
        ("LOCALHOST:8000", "http://localhost:8000"),
        ("[::1]:65535", "https://[::1]:65535"),
        ("[0:0:0:0:0:0:0:1]:1", None),
    ],
)
def test_http_27_29_well_formed_loopback_host_and_origin_pass(host, origin):
    """HTTP-27 / HTTP-29: what a browser or client really sends for loopback is accepted."""
    hdrs = [*DISCOVER_HEADERS, ("Host", host)]
    if origin is not None:
        hdrs.append(("Origin", origin))
    assert raw_post("/mcp", hdrs).status_code == 200


@pytest.mark.parametrize(
    "lines",
    [
        [("Host", "127.0.0.1:8000"), ("Host", "evil.example.com")],
        [("Host", "evil.example.com"), ("Host", "127.0.0.1:8000")],
        [
            ("Host", "127.0.0.1:8000"),
            ("Origin", "http://127.0.0.1:8000"),
            ("Origin", "http://evil.example.com"),
        ],
    ],
    ids=["Host good then evil", "Host evil then good", "Origin twice"],
)
def test_http_27_29_repeated_host_or_origin_is_refused(lines):
    """HTTP-27 / HTTP-29: two Host (or Origin) lines are ambiguous (which one would a proxy
    use?): 403, whichever of them is good (before: only the first was looked at)."""
    assert raw_post("/mcp", [*DISCOVER_HEADERS, *lines]).status_code == 403


def test_http_27_29_host_check_runs_before_the_trailing_slash_redirect():
    """HTTP-27 / HTTP-29: POST /mcp/ with a foreign Host is 403 (before: Starlette answered a
    307 redirect to http://evil.example.com/mcp, a URL built from the attacker's Host)."""
    resp = raw_post("/mcp/", [*DISCOVER_HEADERS, ("Host", "evil.example.com")])
    assert resp.status_code == 403 and "location" not in resp.headers


def test_http_1_trailing_slash_is_not_the_endpoint():
    """HTTP-1 (KIT): there is one endpoint path. /mcp/ with a good Host is 404 with a JSON-RPC
    error naming nothing from the request, never a redirect (before: 307 to a Host-built URL)."""
    resp = raw_post("/mcp/", [*DISCOVER_HEADERS, ("Host", "127.0.0.1:8000")])
    assert resp.status_code == 404 and "location" not in resp.headers
    assert resp.json()["error"]["code"] == -32600 and "id" not in resp.json()


# --- VER-5: a 2025-11-25 client learns which versions this server speaks ------------------------


def test_ver_5_legacy_initialize_learns_the_supported_versions():
    """VER-1 / VER-5: a 2025-11-25 `initialize`, as a legacy client sends it (no MCP headers,
    no _meta, the version in params.protocolVersion), gets 400 / -32022 with data.supported
    (the server's own list) and data.requested (before: -32020 "Missing required
    MCP-Protocol-Version header", which names no version)."""
    legacy = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "legacy-client", "version": "1.0"},
        },
    }
    hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    resp = post(legacy, hdrs)
    assert resp.status_code == 400
    assert resp.json() == {
        "jsonrpc": "2.0",
        "id": 0,
        "error": {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": list(APP_SERVER.supported_versions), "requested": "2025-11-25"},
        },
    }


def test_ver_5_modern_initialize_is_still_404_from_the_core():
    """HTTP-17 / VER-5: `initialize` sent the 2026-07-28 way (headers, _meta) is the core's
    404 / -32601, whose data names the supported versions too (docs/conformance.md §3 row 6)."""
    resp = post(body("initialize"), headers("initialize"))
    assert resp.status_code == 404
    assert resp.json()["error"]["data"]["supported"] == list(APP_SERVER.supported_versions)


def test_a_ledger_outage_is_503_with_retry_after_and_a_retryable_error_kit_err_a():
    """KIT-ERR-A: the JSON-RPC error names the reason and the wait; HTTP says it too."""
    response = call_tool("ledger_down")
    assert (response.status_code, response.headers["retry-after"]) == (503, "2")
    assert response.json()["error"] == {
        "code": -31000,
        "message": "Temporarily unavailable: try again later",
        "data": {"reason": "ledger_unavailable", "retryAfterMs": 2000},
    }
