"""Envelope, _meta, versions, discovery, results and caching on the sans-IO core (digest §2, §8)."""

from __future__ import annotations

import asyncio

import pytest
from helpers import error, meta, request, result, run

from mrtr_kit.protocol import constants as c
from mrtr_kit.server import McpServer
from mrtr_kit.server.context import elicit_form


@pytest.fixture
def server() -> McpServer:
    s = McpServer("proto-server", "2.0", state_key=b"p" * 32)

    @s.tool(description="Says hi.")
    def hi(ctx):
        return "hi"

    @s.tool(description="Logs at two levels.")
    async def chatty(ctx):
        await ctx.log("debug", "low")
        await ctx.log("error", "high")
        await ctx.progress(1, 2)
        return "done"

    @s.prompt(description="A prompt.", arguments=[{"name": "topic", "required": True}])
    def topic(ctx):
        return f"Talk about {ctx.arguments['topic']}"

    @s.resource("docs://a", name="a", ttl_ms=5000, cache_scope="public")
    def a(ctx):
        return "A"

    @s.resource("docs://gated", name="gated", ttl_ms=5000, cache_scope="public")
    def gated(ctx):
        if ctx.elicitation("ok") is None:
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            return ctx.input_required({"ok": elicit_form("OK?", schema)})
        return "opened"

    return s


def test_core_11_missing_meta_keys_are_400_invalid_params(server):
    """CORE-11 / HTTP-18: missing _meta, protocolVersion or clientCapabilities -> -32602, 400."""
    full = meta()
    variants = [
        {},
        {"_meta": {k: v for k, v in full.items() if k != c.META_PROTOCOL_VERSION}},
        {"_meta": {k: v for k, v in full.items() if k != c.META_CLIENT_CAPABILITIES}},
        {"_meta": "not an object"},
    ]
    for params in variants:
        reply = run(
            server, {"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": params}
        )
        assert reply.http_status == 400 and error(reply)["code"] == -32602, params
        assert reply.body["id"] == 5


def test_core_7_missing_params_is_missing_meta(server):
    """CORE-7: every request has params because _meta is required."""
    reply = run(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert reply.http_status == 400 and error(reply)["code"] == -32602


def test_core_12_client_info_is_optional(server):
    """CORE-12: clientInfo SHOULD be sent but a request without it succeeds."""
    m = meta()
    del m[c.META_CLIENT_INFO]
    reply = run(
        server, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": m}}
    )
    assert reply.http_status == 200 and result(reply)["supportedVersions"] == ["2026-07-28"]


@pytest.mark.parametrize(
    "message",
    [
        [],
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}],
        "text",
        {"id": 1, "method": "tools/list"},
        {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": None, "method": "tools/list", "params": {"_meta": meta()}},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list", "params": {"_meta": meta()}},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list", "params": {"_meta": meta()}},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": 1},
    ],
)
def test_core_1_2_malformed_envelopes_are_invalid_request(server, message):
    """CORE-1 / CORE-2: not a JSON-RPC 2.0 request (batches, null or float ids) -> -32600."""
    reply = run(server, message)
    assert reply.http_status == 400 and error(reply)["code"] == -32600


def test_core_6_clients_do_not_send_responses(server):
    """CORE-6: a JSON-RPC response from a client (as 2025-11-25 clients sent) is refused."""
    reply = run(server, {"jsonrpc": "2.0", "id": 3, "result": {"action": "accept"}})
    assert error(reply)["code"] == -32600 and "responses" in error(reply)["message"]


def test_non_object_params_are_invalid_params(server):
    """CORE-7: params must be an object (it must hold _meta) -> -32602, 400."""
    reply = run(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]})
    assert reply.http_status == 400 and error(reply)["code"] == -32602


def test_core_5_notifications_get_no_answer(server):
    """CORE-5 / HTTP-5: a notification is accepted (202) and never answered."""
    reply = run(server, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    assert reply.body is None and reply.http_status == 202


def test_ver_1_unsupported_version(server):
    """VER-1 / ERR-1: -32022 with data.supported and data.requested, HTTP 400."""
    reply = run(
        server, request("tools/list", {"_meta": {**meta(), c.META_PROTOCOL_VERSION: "2025-11-25"}})
    )
    assert reply.http_status == 400
    assert error(reply) == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"},
    }


def test_disc_3_discover_is_version_checked_too(server):
    """DISC-3: server/discover with an unsupported version -> -32022."""
    reply = run(
        server, request("server/discover", {"_meta": {**meta(), c.META_PROTOCOL_VERSION: "v999"}})
    )
    assert error(reply)["code"] == -32022 and error(reply)["data"]["requested"] == "v999"


@pytest.mark.parametrize(
    "method", [*sorted(c.REMOVED_METHODS), "unknown/method", "subscriptions/listen"]
)
def test_http_17_unknown_and_removed_methods_are_404(server, method):
    """HTTP-17 / §12: unknown and removed methods -> -32601 with HTTP 404."""
    reply = run(server, request(method))
    assert reply.http_status == 404 and error(reply)["code"] == -32601


def test_ver_5_removed_initialize_names_supported_versions(server):
    """VER-5: a legacy initialize learns which versions this server speaks."""
    err = error(run(server, request("initialize")))
    assert err["data"]["supported"] == ["2026-07-28"]


def test_disc_1_2_5_discover_result(server):
    """DISC-1/2/5 / CORE-16: supportedVersions, capabilities for what is served, cache hints,
    serverInfo in result _meta and no top-level serverInfo."""
    res = result(run(server, request("server/discover")))
    assert res["supportedVersions"] == ["2026-07-28"]
    assert res["capabilities"] == {"tools": {}, "prompts": {}, "resources": {}}
    assert res["ttlMs"] >= 0 and res["cacheScope"] in ("public", "private")
    assert res["_meta"][c.META_SERVER_INFO] == {"name": "proto-server", "version": "2.0"}
    assert "serverInfo" not in res


def test_disc_5_undeclared_features_are_method_not_found():
    """DISC-5 / §2.6: a method whose server capability is not advertised -> -32601."""
    bare = McpServer("bare", state_key=b"b" * 32)
    assert result(run(bare, request("server/discover")))["capabilities"] == {}
    for method in ("tools/list", "prompts/list", "resources/list", "tools/call"):
        assert run(bare, request(method)).http_status == 404


def test_rt_1_core_16_every_result_has_result_type_and_server_info(server):
    """RT-1 / CORE-16: every result carries resultType and serverInfo."""
    calls = [
        request("server/discover"),
        request("tools/list"),
        request("prompts/list"),
        request("resources/list"),
        request("resources/templates/list"),
        request("tools/call", {"name": "hi"}),
        request("prompts/get", {"name": "topic", "arguments": {"topic": "x"}}),
        request("resources/read", {"uri": "docs://a"}),
        request("resources/read", {"uri": "docs://gated"}, capabilities={"elicitation": {}}),
    ]
    for msg in calls:
        res = result(run(server, msg))
        assert res["resultType"] in ("complete", "input_required"), msg["method"]
        assert res["_meta"][c.META_SERVER_INFO]["name"] == "proto-server"


def test_cache_1_cacheable_results_carry_hints(server):
    """CACHE-1: lists, discover and resources/read carry ttlMs >= 0 and cacheScope."""
    for method, params in [
        ("server/discover", {}),
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "docs://a"}),
    ]:
        res = result(run(server, request(method, params)))
        assert isinstance(res["ttlMs"], int) and res["ttlMs"] >= 0, method
        assert res["cacheScope"] in ("public", "private"), method
    assert result(run(server, request("resources/read", {"uri": "docs://a"})))["ttlMs"] == 5000


def test_cache_2_3_input_required_and_retry_results_are_not_cacheable(server):
    """CACHE-2: no ttlMs/cacheScope on input_required. CACHE-3: a resources/read completed by
    a retry is marked ttlMs 0, private, whatever the resource's own hints."""
    caps = {"elicitation": {}}
    irr = result(run(server, request("resources/read", {"uri": "docs://gated"}, capabilities=caps)))
    assert irr["resultType"] == "input_required"
    assert "ttlMs" not in irr and "cacheScope" not in irr
    answers = {"ok": {"action": "accept", "content": {"ok": True}}}
    done = result(
        run(
            server,
            request(
                "resources/read",
                {"uri": "docs://gated", "inputResponses": answers},
                capabilities=caps,
            ),
        )
    )
    assert done["contents"][0]["text"] == "opened"
    assert done["ttlMs"] == 0 and done["cacheScope"] == "private"


def test_cache_6_tool_and_prompt_results_carry_no_cache_hints(server):
    """CACHE-6: tools/call and prompts/get results are never cacheable."""
    for msg in [
        request("tools/call", {"name": "hi"}),
        request("prompts/get", {"name": "topic", "arguments": {"topic": "x"}}),
    ]:
        res = result(run(server, msg))
        assert "ttlMs" not in res and "cacheScope" not in res


def test_unknown_tool_prompt_resource_are_invalid_params_200(server):
    """§2.6 / SEP-2164: unknown tool, prompt or resource -> -32602, HTTP 200; the resource
    error names the uri and never uses the removed -32002 (ERR-2)."""
    for msg in [
        request("tools/call", {"name": "nope"}),
        request("prompts/get", {"name": "nope"}),
        request("prompts/get", {"name": "topic"}),  # missing required argument
        request("tools/list", {"cursor": "bogus"}),
    ]:
        reply = run(server, msg)
        assert reply.http_status == 200 and error(reply)["code"] == -32602
    err = error(run(server, request("resources/read", {"uri": "docs://missing"})))
    assert err["code"] == -32602 and err["data"] == {"uri": "docs://missing"}


def test_core_14_no_log_notifications_without_log_level(server):
    """CORE-14: notifications/message only when the request set logLevel, and only at or
    above it; progress only with a progressToken."""
    sent: list[dict] = []

    async def emit(n: dict) -> None:
        sent.append(n)

    asyncio.run(server.handle(request("tools/call", {"name": "chatty"}), emit=emit))
    assert sent == []
    m = meta(**{c.META_LOG_LEVEL: "warning", "progressToken": "t1"})
    asyncio.run(server.handle(request("tools/call", {"name": "chatty", "_meta": m}), emit=emit))
    assert [n["method"] for n in sent] == ["notifications/message", "notifications/progress"]
    assert sent[0]["params"] == {"level": "error", "data": "high"}
    assert sent[1]["params"] == {"progressToken": "t1", "progress": 1, "total": 2}


def test_bad_client_capabilities_shape_is_400(server):
    """CORE-11: clientCapabilities that is not a capabilities object -> -32602, 400."""
    m = {**meta(), c.META_CLIENT_CAPABILITIES: {"elicitation": True}}
    reply = run(server, request("tools/list", {"_meta": m}))
    assert reply.http_status == 400 and error(reply)["code"] == -32602


def test_plain_resource_results_carry_their_registered_mime_type():
    """A resource handler returning str or bytes gets the uri and mimeType it registered."""
    s = McpServer("mime", state_key=b"m" * 32)

    @s.resource("docs://text", name="text", mime_type="text/markdown")
    def text(ctx):
        return "# hi"

    @s.resource("docs://blob", name="blob", mime_type="image/png")
    def blob(ctx):
        return b"\x89PNG"

    t = result(run(s, request("resources/read", {"uri": "docs://text"})))["contents"][0]
    assert t == {"uri": "docs://text", "text": "# hi", "mimeType": "text/markdown"}
    b = result(run(s, request("resources/read", {"uri": "docs://blob"})))["contents"][0]
    assert b == {"uri": "docs://blob", "blob": "iVBORw==", "mimeType": "image/png"}
