"""Envelope, _meta (CORE-11), versions (VER-5), discovery, results, caching (CACHE-2) and the
error code of each protocol problem (MRTR-E2) on the sans-IO core (digest §2, §8)."""

from __future__ import annotations

import asyncio

import pytest

from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    PROTOCOL_VERSION,
    REMOVED_METHODS,
)
from mrtr_kit.protocol.models import InputRequiredResult
from mrtr_kit.server import McpServer
from mrtr_kit.server.context import elicit_form
from mrtr_kit.server.http import http_status
from tests.helpers import answered, call, error, meta, request, result, run, stateful

KEY = b"c" * 32
FORM_CAPS = {"elicitation": {"form": {}}}


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
        {"_meta": {k: v for k, v in full.items() if k != META_PROTOCOL_VERSION}},
        {"_meta": {k: v for k, v in full.items() if k != META_CLIENT_CAPABILITIES}},
        {"_meta": "not an object"},
    ]
    for params in variants:
        reply = run(
            server, {"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": params}
        )
        assert http_status(reply) == 400 and error(reply)["code"] == -32602, params
        assert reply.body["id"] == 5


def test_core_11_a_bad_meta_value_inside_a_list_is_invalid_params_naming_where():
    """CORE-11: a malformed ``_meta`` (here an icon of ``clientInfo`` that is not an object)
    is -32602 with HTTP status 400, and the message says where: ``icons.0``.

    Kills: ``str(p)`` dropped when the location is joined (a list index would crash the
    message into -32603), or the location joined without dots.
    """
    s = McpServer("meta", state_key=KEY)
    message = request("tools/list")
    info = {"name": "n", "version": "1", "icons": [1]}
    message["params"]["_meta"][META_CLIENT_INFO] = info
    reply = run(s, message)
    assert http_status(reply) == 400 and reply.body["error"]["code"] == -32602
    assert "clientInfo.icons.0" in reply.body["error"]["message"]


def test_core_11_meta_helpers_still_build_valid_requests(server):
    """CORE-11: the shared request builder gives a _meta the pipeline accepts (a guard for
    every test that builds its requests with ``helpers.request``)."""
    assert meta()[META_PROTOCOL_VERSION] == PROTOCOL_VERSION
    assert "tools" in result(run(server, request("server/discover")))["capabilities"]


def test_core_11_a_methods_params_carry_the_meta_step_5_validated_not_a_second_copy():
    """CORE-11 is checked once, in step 5 (``check_request_meta``); the method's params model then
    takes that very ``RequestMeta`` (KIT: validating ``_meta`` a second time costs a pydantic
    pass per request and could only agree)."""
    from mrtr_kit.protocol.models import CallToolRequestParams, JSONRPCRequest
    from mrtr_kit.server.core import _parse, check_request_meta

    params = request("tools/call", {"name": "echo", "arguments": {}})["params"]
    checked = check_request_meta(JSONRPCRequest(id=1, method="tools/call", params=params))
    parsed = _parse(CallToolRequestParams, params, checked)
    assert parsed.meta is checked
    assert parsed.name == "echo" and params["_meta"] is not checked  # the caller's dict untouched


def test_core_7_missing_params_is_missing_meta(server):
    """CORE-7: every request has params because _meta is required."""
    reply = run(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert http_status(reply) == 400 and error(reply)["code"] == -32602


def test_core_12_client_info_is_optional(server):
    """CORE-12: clientInfo SHOULD be sent but a request without it succeeds."""
    m = meta()
    del m[META_CLIENT_INFO]
    reply = run(
        server, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": m}}
    )
    assert http_status(reply) == 200 and result(reply)["supportedVersions"] == ["2026-07-28"]


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
    assert http_status(reply) == 400 and error(reply)["code"] == -32600


def test_core_2_core_4_a_string_id_is_answered_and_echoed_in_results_and_errors():
    """CORE-2 / CORE-4: an id may be a string; the result and an error both echo it.

    Kills: the lone-surrogate test dropped (every string id refused); string ids no longer
    counted as readable when an error is built.
    """
    s = McpServer("ids", state_key=KEY)
    s.tool(description="t")(lambda ctx: "ok")
    ok = request("tools/list")
    ok["id"] = "req-1"
    assert run(s, ok).body["id"] == "req-1"
    bad = request("tools/call", {"name": "missing"})
    bad["id"] = "req-2"
    body = run(s, bad).body
    assert body["id"] == "req-2" and body["error"]["code"] == -32602


def test_core_2_an_id_of_true_is_invalid_and_not_echoed():
    """CORE-2: a boolean is not a valid id; the -32600 error cannot echo it, so it has none.

    Kills: ``not isinstance(request_id, bool)`` dropped where the error decides to echo the id.
    """
    s = McpServer("ids", state_key=KEY)
    message = request("tools/list")
    message["id"] = True
    body = run(s, message).body
    assert body["error"]["code"] == -32600 and "id" not in body


def test_core_6_clients_do_not_send_responses(server):
    """CORE-6: a JSON-RPC response from a client (as 2025-11-25 clients sent) is refused."""
    reply = run(server, {"jsonrpc": "2.0", "id": 3, "result": {"action": "accept"}})
    assert error(reply)["code"] == -32600 and "responses" in error(reply)["message"]


def test_non_object_params_are_invalid_params(server):
    """CORE-7: params must be an object (it must hold _meta) -> -32602, 400."""
    reply = run(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]})
    assert http_status(reply) == 400 and error(reply)["code"] == -32602


def test_core_5_notifications_get_no_answer(server):
    """CORE-5 / HTTP-5: a notification is accepted (202) and never answered."""
    reply = run(server, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    assert reply.body is None and http_status(reply) == 202


def test_ver_1_unsupported_version(server):
    """VER-1 / ERR-1: -32022 with data.supported and data.requested, HTTP 400."""
    reply = run(
        server, request("tools/list", {"_meta": {**meta(), META_PROTOCOL_VERSION: "2025-11-25"}})
    )
    assert http_status(reply) == 400
    assert error(reply) == {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"},
    }


def test_disc_3_discover_is_version_checked_too(server):
    """DISC-3: server/discover with an unsupported version -> -32022."""
    reply = run(
        server, request("server/discover", {"_meta": {**meta(), META_PROTOCOL_VERSION: "v999"}})
    )
    assert error(reply)["code"] == -32022 and error(reply)["data"]["requested"] == "v999"


@pytest.mark.parametrize(
    "method", [*sorted(REMOVED_METHODS), "unknown/method", "subscriptions/listen"]
)
def test_http_17_unknown_and_removed_methods_are_404(server, method):
    """HTTP-17 / §12: unknown and removed methods -> -32601 with HTTP 404."""
    reply = run(server, request(method))
    assert http_status(reply) == 404 and error(reply)["code"] == -32601


def test_ver_5_removed_initialize_names_supported_versions(server):
    """VER-5: a legacy initialize learns which versions this server speaks."""
    err = error(run(server, request("initialize")))
    assert err["data"]["supported"] == ["2026-07-28"]


def test_ver_5_a_removed_method_names_the_versions_this_server_speaks():
    """VER-5: a legacy ``initialize`` learns where it was removed and what is supported.

    Kills: ``removedIn`` dropped or renamed in the method-not-found data.
    """
    s = McpServer("modern", state_key=KEY)
    err = error(call(s, "initialize", {"protocolVersion": "2025-11-25"}))
    assert err["code"] == -32601
    assert err["data"]["removedIn"] == PROTOCOL_VERSION
    assert PROTOCOL_VERSION in err["data"]["supported"]


def test_ver_5_legacy_initialize_without_headers_learns_the_supported_versions():
    """VER-1 / VER-5: a 2025-11-25 ``initialize`` (its version in params, no _meta) gets
    -32022 listing what is supported, with or without HTTP headers."""
    s = McpServer("modern", state_key=KEY)
    legacy = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
    }
    for headers in (None, {}):
        err = error(asyncio.run(s.handle(legacy, headers=headers)))
        assert err["code"] == -32022
        assert err["data"] == {"supported": [PROTOCOL_VERSION], "requested": "2025-11-25"}


def test_ver_5_legacy_initialize_with_some_other_meta_is_still_legacy():
    """VER-5: a 2025-11-25 ``initialize`` may carry a ``_meta`` of its own (a progress token);
    without a 2026-07-28 protocolVersion in it, it still learns the supported versions."""
    s = McpServer("modern", state_key=KEY)
    legacy = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "_meta": {"progressToken": 1}},
    }
    assert error(run(s, legacy))["data"]["supported"] == [PROTOCOL_VERSION]


def test_disc_1_2_5_discover_result(server):
    """DISC-1/2/5 / CORE-16: supportedVersions, capabilities for what is served, cache hints,
    serverInfo in result _meta and no top-level serverInfo."""
    res = result(run(server, request("server/discover")))
    assert res["supportedVersions"] == ["2026-07-28"]
    assert res["capabilities"] == {"tools": {}, "prompts": {}, "resources": {}}
    assert res["ttlMs"] >= 0 and res["cacheScope"] in ("public", "private")
    assert res["_meta"][META_SERVER_INFO] == {"name": "proto-server", "version": "2.0"}
    assert "serverInfo" not in res


def test_disc_5_undeclared_features_are_method_not_found():
    """DISC-5 / §2.6: a method whose server capability is not advertised -> -32601."""
    bare = McpServer("bare", state_key=b"b" * 32)
    assert result(run(bare, request("server/discover")))["capabilities"] == {}
    for method in ("tools/list", "prompts/list", "resources/list", "tools/call"):
        assert http_status(run(bare, request(method))) == 404


def test_disc_5_a_server_with_only_a_resource_template_declares_resources():
    """DISC-5: a server offering resources declares ``resources``, templates alone included.

    Kills: ``self._templates`` dropped from the capability check.
    """
    s = McpServer("templates-only", state_key=KEY)
    s.resource_template("notes://{id}", name="note")(lambda ctx: "n")
    assert result(call(s, "server/discover"))["capabilities"] == {"resources": {}}


def test_disc_5_methods_of_undeclared_capabilities_are_method_not_found():
    """DISC-5: with no resources or completions declared, resources/templates/list and
    completion/complete are unknown methods (-32601), not empty answers.

    Kills: the ``"resources" in caps`` / ``"completions" in caps`` guards dropped.
    """
    s = McpServer("tools-only", state_key=KEY)
    s.tool(description="t")(lambda ctx: "ok")
    assert error(call(s, "resources/templates/list"))["code"] == -32601
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}
    assert error(call(s, "completion/complete", params))["code"] == -32601


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
        assert res["_meta"][META_SERVER_INFO]["name"] == "proto-server"


def test_core_16_each_result_carries_its_own_server_info():
    """CORE-16: every result names the server in ``_meta``, complete and input_required alike.
    A caller of ``McpServer.handle`` gets plain dicts it may change; changing one reply's
    serverInfo must not change what the server says in the next one.

    Kills: the serverInfo dict shared between replies (in ``_stamp`` or ``_finish``).
    """
    s = McpServer("own-info", state_key=KEY)
    s.tool("asks", description="asks")(lambda ctx: ctx.input_required(state={"n": 1}))
    s.tool("done", description="done")(lambda ctx: "ok")
    for name in ("asks", "done", "asks", "done"):
        reply = result(call(s, "tools/call", {"name": name}))
        info = reply["_meta"][META_SERVER_INFO]
        assert info["name"] == "own-info", (name, info)
        info["name"] = "changed by the caller"


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


# The default lifetimes (60 s for lists, discovery and plain resources, 0 for templated
# resources) are the kit's choices (KIT), not spec numbers.


def test_cache_1_discovery_and_lists_carry_their_cache_hints():
    """CACHE-1 (KIT lifetime): server/discover and every list carry ``ttlMs`` (60,000 ms by
    default, or the server's ``list_ttl_ms``) and ``cacheScope: "public"``; discovery shows
    the server's instructions when it has some, and no ``instructions`` key when not.

    Kills: the 60,000 default changed; ttlMs or cacheScope dropped or renamed in discovery or
    in a list; the instructions test negated, or their assignment removed or renamed.
    """
    s = McpServer("cache", state_key=KEY, instructions="Ask me about trains.")
    s.tool(description="t")(lambda ctx: "ok")
    found = result(call(s, "server/discover"))
    assert (found["ttlMs"], found["cacheScope"]) == (60_000, "public")
    assert found["instructions"] == "Ask me about trains."
    listed = result(call(s, "tools/list"))
    assert (listed["ttlMs"], listed["cacheScope"]) == (60_000, "public")
    quiet = McpServer("quiet", state_key=KEY, list_ttl_ms=5_000)
    quiet.tool(description="t")(lambda ctx: "ok")
    assert "instructions" not in result(call(quiet, "server/discover"))
    assert result(call(quiet, "tools/list"))["ttlMs"] == 5_000


def test_cache_1_kit_resource_defaults_text_plain_public_60_s_templates_private_0():
    """CACHE-1 (KIT defaults): a resource registered without options is ``text/plain`` and
    cacheable publicly for 60 s; a templated one is ``text/plain``, private, ``ttlMs: 0``.

    Kills: the "text/plain" defaults emptied; 60,000 or 0 changed.
    """
    s = McpServer("resources", state_key=KEY)
    s.resource("file:///motd", name="motd")(lambda ctx: "hello")
    s.resource_template("notes://{id}", name="note")(lambda ctx: f"note {ctx.uri_params['id']}")
    (listed,) = result(call(s, "resources/list"))["resources"]
    assert listed["mimeType"] == "text/plain"
    (template,) = result(call(s, "resources/templates/list"))["resourceTemplates"]
    assert template["mimeType"] == "text/plain"
    plain = result(call(s, "resources/read", {"uri": "file:///motd"}))
    assert (plain["ttlMs"], plain["cacheScope"]) == (60_000, "public")
    assert plain["contents"][0]["mimeType"] == "text/plain"
    note = result(call(s, "resources/read", {"uri": "notes://7"}))
    assert (note["ttlMs"], note["cacheScope"]) == (0, "private")
    assert note["contents"][0] == {"uri": "notes://7", "text": "note 7", "mimeType": "text/plain"}


@pytest.mark.parametrize("ttl", [1.5, True, -1])
def test_cache_1_cache_5_a_resource_ttl_must_be_whole_milliseconds_at_least_0(ttl):
    """CACHE-1 / CACHE-5: ``ttlMs`` is an integer >= 0; a resource registered with anything
    else is refused at registration.

    Kills: ``not isinstance(ttl_ms, int)`` dropped from the check (a float would pass).
    """
    s = McpServer("resources", state_key=KEY)
    with pytest.raises(ValueError, match="whole number"):
        s.resource("file:///a", name="a", ttl_ms=ttl)(lambda ctx: "a")


def test_cache_2_3_input_required_and_retry_results_are_not_cacheable(server):
    """CACHE-2: no ttlMs/cacheScope on input_required. CACHE-3: a resources/read completed by
    a retry is marked ttlMs 0, private, whatever the resource's own hints."""
    caps = {"elicitation": {}}
    irr = result(run(server, request("resources/read", {"uri": "docs://gated"}, capabilities=caps)))
    assert irr["resultType"] == "input_required"
    assert "ttlMs" not in irr and "cacheScope" not in irr
    answers = {"ok": {"action": "accept", "content": {"ok": True}}}
    done = result(
        answered(server, "resources/read", {"uri": "docs://gated"}, answers, capabilities=caps)
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
        assert http_status(reply) == 200 and error(reply)["code"] == -32602
    err = error(run(server, request("resources/read", {"uri": "docs://missing"})))
    assert err["code"] == -32602 and err["data"] == {"uri": "docs://missing"}


def test_sep_2164_a_template_matches_whole_uris_only():
    """SEP-2164 / ERR-2: ``notes://{id}`` matches ``notes://7``, not ``notes://7/extra``;
    the longer URI is an unknown resource (-32602 with ``data.uri``).

    Kills: the ``$`` anchor dropped from the template's pattern.
    """
    s = McpServer("resources", state_key=KEY)
    s.resource_template("notes://{id}", name="note")(lambda ctx: "n")
    err = error(call(s, "resources/read", {"uri": "notes://7/extra"}))
    assert err["code"] == -32602 and err["data"] == {"uri": "notes://7/extra"}


def test_core_14_no_log_notifications_without_log_level(server):
    """CORE-14: notifications/message only when the request set logLevel, and only at or
    above it; progress only with a progressToken."""
    sent: list[dict] = []

    async def emit(n: dict) -> None:
        sent.append(n)

    asyncio.run(server.handle(request("tools/call", {"name": "chatty"}), emit=emit))
    assert sent == []
    m = meta(**{META_LOG_LEVEL: "warning", "progressToken": "t1"})
    asyncio.run(server.handle(request("tools/call", {"name": "chatty", "_meta": m}), emit=emit))
    assert [n["method"] for n in sent] == ["notifications/message", "notifications/progress"]
    assert sent[0]["params"] == {"level": "error", "data": "high"}
    assert sent[1]["params"] == {"progressToken": "t1", "progress": 1, "total": 2}


def test_bad_client_capabilities_shape_is_400(server):
    """CORE-11: clientCapabilities that is not a capabilities object -> -32602, 400."""
    m = {**meta(), META_CLIENT_CAPABILITIES: {"elicitation": True}}
    reply = run(server, request("tools/list", {"_meta": m}))
    assert http_status(reply) == 400 and error(reply)["code"] == -32602


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


# --- MRTR-E2: protocol problems get a JSON-RPC error with a fitting code ----------------------

ARGS_SCHEMA = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "items": {"type": "string"}},
        "n": {"type": "integer", "minimum": 1},
    },
    "required": ["n"],
}


def test_mrtr_e2_protocol_problems_get_fitting_codes():
    """MRTR-E2: schema-invalid params -> -32602; an internal failure -> -32603 whose message
    reveals nothing of the exception."""
    s = McpServer("codes", state_key=KEY)

    @s.tool(
        description="Books a table.",
        input_schema={
            "type": "object",
            "properties": {"restaurant": {"type": "string"}},
            "required": ["restaurant"],
        },
    )
    def book(ctx):
        return "booked"

    @s.tool(description="Fails with a secret.")
    def explode(ctx):
        raise ValueError("secret internals")

    assert error(run(s, request("tools/call", {"arguments": {}})))["code"] == -32602
    bad_args = {"name": "book", "arguments": {"restaurant": 7}}
    err = error(run(s, request("tools/call", bad_args)))
    assert err["code"] == -32602 and "restaurant" in err["message"]
    err = error(run(s, request("tools/call", {"name": "explode"})))
    assert err == {"code": -32603, "message": "Internal error"}


def test_mrtr_e2_arguments_that_break_the_schema_are_invalid_params_naming_where():
    """MRTR-E2: -32602 "Invalid arguments: WHERE: WHAT" from the schema compiled once."""
    s = McpServer("schemas", state_key=b"k" * 32)
    s.tool("t", description="t", input_schema=ARGS_SCHEMA)(lambda ctx: "ok")
    err = error(run(s, request("tools/call", {"name": "t", "arguments": {"n": "x"}})))
    assert err["code"] == -32602
    assert err["message"] == 'Invalid arguments: n: "x" is not of type "integer"'


def test_mrtr_e2_a_bad_argument_inside_a_list_is_invalid_params_naming_where():
    """MRTR-E2: arguments that break the tool's schema inside an array are -32602, and the
    message says where: ``tags.0``.

    Kills: ``str(p)`` dropped when the schema error's path is joined (an index would crash
    the message into -32603), or the path joined without dots.
    """
    s = McpServer("arrays", state_key=KEY)
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
    }
    s.tool("tag", description="t", input_schema=schema)(lambda ctx: "ok")
    err = error(call(s, "tools/call", {"name": "tag", "arguments": {"tags": [1]}}))
    assert err["code"] == -32602 and "tags.0" in err["message"]


def test_mrtr_c2_mrtr_e2_a_null_request_state_is_invalid_params():
    """MRTR-C2 / MRTR-E2: a client omits ``requestState`` when it has none; ``null`` breaks
    the schema (``requestState`` is a string), so it is invalid params (-32602), not "no
    state".

    Kills: "requestState" emptied in the null check of ``_call``.
    """
    s, _ = stateful(state_key=KEY)
    err = error(call(s, "tools/call", {"name": "step", "requestState": None}))
    assert err["code"] == -32602


# --- issue 8: a dict handed to McpServer.handle directly is decoded by nobody -----------------
# The HTTP edge refuses NaN, Infinity and lone surrogates while decoding, but a notebook calls
# ``McpServer.handle(dict)`` itself, so the core must answer them on its own: -32602 for a bad
# value inside params, -32600 for an id or method it cannot echo; never -32603.

NOT_JSON = [float("nan"), float("inf"), float("-inf"), "\ud800", "ok \udfff", {"\ud800": 1}]


@pytest.mark.parametrize("bad", NOT_JSON, ids=repr)
def test_mrtr_e2_arguments_that_are_not_json_are_invalid_params(server, bad):
    """MRTR-E2: arguments holding NaN, +-Infinity (1e400 decodes to it) or a lone surrogate
    are schema-invalid params: -32602, not -32603 from the request digest."""
    for msg in [
        request("tools/call", {"name": "hi", "arguments": {"x": bad}}),
        request("tools/call", {"name": "hi", "arguments": {"deep": [{"x": bad}]}}),
        request("tools/call", {"name": "hi", "inputResponses": {"k": {"action": bad}}}),
        request("prompts/get", {"name": "topic", "arguments": {"topic": bad}}),
        request("resources/read", {"uri": "docs://a", "requestState": bad}),
        request("tools/list", {"cursor": bad}),
    ]:
        err = error(run(server, msg))
        assert err["code"] == -32602, (msg, err)
        # The message names where, but never echoes the value it could not encode.
        err["message"].encode("utf-8")


def test_mrtr_e2_meta_that_is_not_json_is_invalid_params(server):
    """MRTR-E2 / CORE-11: a progressToken or clientInfo the server could not echo is refused
    before any handler runs (a progress notification would carry it back)."""
    for extra in (
        {"progressToken": "\ud800"},
        {META_CLIENT_INFO: {"name": "\udfff", "version": "1"}},
        {"com.example/x": float("nan")},
    ):
        err = error(run(server, request("tools/call", {"name": "hi", "_meta": meta(**extra)})))
        assert err["code"] == -32602, extra


def test_core_2_an_id_or_method_that_cannot_be_echoed_is_invalid_request(server):
    """CORE-2 / §2.1: an id holding a lone surrogate cannot be echoed, so the error omits it;
    a method name holding one is not a method: both -32600, HTTP 400."""
    msg = request("tools/call", {"name": "hi"})
    for bad in (dict(msg, id="\ud800"), dict(msg, method="tools/\udfff")):
        reply = run(server, bad)
        assert http_status(reply) == 400 and error(reply)["code"] == -32600, bad
        assert "id" not in reply.body or reply.body["id"] == msg["id"]


def test_mrtr_e2_values_python_can_hold_but_json_cannot_are_invalid_params(server):
    """MRTR-E2: a notebook may pass Python objects JSON has no word for; they are bad params."""
    for bad in ({1: "int key"}, b"bytes", {1, 2}, object()):
        err = error(run(server, request("tools/call", {"name": "hi", "arguments": {"x": bad}})))
        assert err["code"] == -32602, bad


def test_mrtr_e2_params_no_json_can_hold_are_invalid_params_with_status_400():
    """MRTR-E2: a message handed to the core with a value JSON cannot hold (NaN) in its
    params gets -32602 and HTTP status 400.

    Kills: the 400 of that error changed.
    """
    s = McpServer("json", state_key=KEY)
    reply = run(s, request("tools/call", {"name": "t", "arguments": {"x": float("nan")}}))
    assert http_status(reply) == 400 and reply.body["error"]["code"] == -32602


def test_mrtr_e2_nesting_beyond_the_limit_is_invalid_params_not_a_crash(server):
    """MRTR-E2: arguments nested far deeper than any real request (and than Python's
    recursion limit) are refused with -32602 instead of raising RecursionError."""
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    err = error(run(server, request("tools/call", {"name": "hi", "arguments": {"x": deep}})))
    assert err["code"] == -32602 and "deep" in err["message"]


@pytest.mark.parametrize(
    "params",
    [
        {"ref": {"type": "ref/prompt", "name": ["topic"]}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/prompt", "name": {"x": 1}}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/prompt", "name": "topic"}, "argument": {"name": ["a"], "value": ""}},
        {"ref": {"type": "ref/prompt", "name": "topic"}, "argument": {"name": "a", "value": 5}},
        {"ref": {"type": "ref/nothing"}, "argument": {"name": "a", "value": ""}},
        {"ref": "topic", "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/resource", "uri": 7}, "argument": {"name": "a", "value": ""}},
    ],
)
def test_mrtr_e2_completion_with_malformed_ref_or_argument_is_invalid_params(params):
    """MRTR-E2: completion/complete params that do not match the schema (a non-string
    ref.name, an unknown ref type, a non-string argument) -> -32602, not -32603."""
    s = McpServer("completer", state_key=b"c" * 32)

    @s.prompt(description="p", arguments=[{"name": "a"}], completions={"a": ["alpha"]})
    def p(ctx):
        return "p"

    err = error(run(s, request("completion/complete", {**params})))
    assert err["code"] == -32602, params
    ok = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "al"}}
    assert result(run(s, request("completion/complete", ok)))["completion"]["values"] == ["alpha"]


# --- CACHE-3, CACHE-5, CACHE-7 on the server ------------------------------------------------


def test_cache_5_server_never_sends_a_negative_ttl():
    """CACHE-5: a server MUST send ttlMs >= 0. A negative TTL is refused where it is
    configured (server, resource, template), and a handler returning one is a bug (-32603)."""
    with pytest.raises(ValueError, match="ttl"):
        McpServer("neg", state_key=b"n" * 32, list_ttl_ms=-1)
    s = McpServer("neg", state_key=b"n" * 32)
    with pytest.raises(ValueError, match="ttl"):
        s.resource("docs://x", name="x", ttl_ms=-5)(lambda ctx: "x")
    with pytest.raises(ValueError, match="ttl"):
        s.resource_template("docs://{id}", name="t", ttl_ms=-1)(lambda ctx: "t")
    with pytest.raises(ValueError, match="cache_scope"):
        s.resource("docs://y", name="y", cache_scope="shared")(lambda ctx: "y")

    @s.resource("docs://handler-says", name="h")
    def handler_says(ctx):
        return {"contents": [{"uri": "docs://handler-says", "text": "h"}], "ttlMs": -1000}

    @s.resource("docs://bool-ttl", name="b")
    def bool_ttl(ctx):
        return {"contents": [{"uri": "docs://bool-ttl", "text": "b"}], "ttlMs": True}

    @s.resource("docs://bad-scope", name="s")
    def bad_scope(ctx):
        return {"contents": [{"uri": "docs://bad-scope", "text": "s"}], "cacheScope": "world"}

    for uri in ("docs://handler-says", "docs://bool-ttl", "docs://bad-scope"):
        err = error(run(s, request("resources/read", {"uri": uri})))
        assert err == {"code": -32603, "message": "Internal error"}, uri


def test_cache_3_a_retried_read_is_uncacheable_even_if_the_handler_says_otherwise():
    """CACHE-3 (KIT): a resources/read completed by a retry gets ttlMs 0 / private, even when
    its handler returned its own long-lived public hints."""
    s = McpServer("retry-cache", state_key=b"r" * 32)

    @s.resource("docs://r", name="r", ttl_ms=5000, cache_scope="public")
    def r(ctx):
        if ctx.elicitation("ok") is None:
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            return ctx.input_required({"ok": elicit_form("OK?", schema)})
        contents = [{"uri": "docs://r", "text": "r"}]
        return {"contents": contents, "ttlMs": 600_000, "cacheScope": "public"}

    answers = {"ok": {"action": "accept", "content": {"ok": True}}}
    done = result(
        answered(s, "resources/read", {"uri": "docs://r"}, answers, capabilities=FORM_CAPS)
    )
    assert (done["ttlMs"], done["cacheScope"]) == (0, "private")


def test_cache_6_cache_hints_on_a_tool_result_are_a_handler_bug():
    """CACHE-6 / CACHE-2: tools/call and prompts/get results are never cacheable, so a handler
    putting ttlMs or cacheScope on one is a bug (-32603), not something to pass on."""
    s = McpServer("tool-cache", state_key=b"t" * 32)

    @s.tool(description="t")
    def t(ctx):
        return {"content": [{"type": "text", "text": "t"}], "ttlMs": 1000}

    @s.prompt(description="p")
    def p(ctx):
        return {"messages": [], "cacheScope": "public"}

    assert error(run(s, request("tools/call", {"name": "t"})))["code"] == -32603
    assert error(run(s, request("prompts/get", {"name": "p"})))["code"] == -32603


def test_cache_7_every_list_is_one_page_with_one_scope_that_no_access_control_relies_on(server):
    """CACHE-7: every page of one list has the same cacheScope. The kit serves each list in
    one page (a cursor is -32602), and what it lists does not depend on who asks, so
    ``public`` is truthful and nothing relies on the scope for access control."""
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        pages = [result(run(server, request(method), principal=p)) for p in (None, "a", "b")]
        assert all(page["cacheScope"] == "public" for page in pages), method
        assert all("nextCursor" not in page for page in pages), method
        bodies = [{k: v for k, v in page.items() if k != "_meta"} for page in pages]
        assert bodies[0] == bodies[1] == bodies[2], method
        err = error(run(server, request(method, {"cursor": "page-2"})))
        assert err["code"] == -32602, method


def test_cache_2_a_raw_input_required_resource_result_never_carries_cache_hints():
    """CACHE-2: resources/read is cacheable, so a raw input_required result there would pick
    up ttlMs/cacheScope; the core refuses it instead."""
    s = McpServer("raw-resource", state_key=KEY)

    @s.resource("docs://raw", name="raw", ttl_ms=5000, cache_scope="public")
    def raw(ctx):
        ask = elicit_form("OK?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        return InputRequiredResult(input_requests={"ok": ask})

    reply = run(s, request("resources/read", {"uri": "docs://raw"}, capabilities=FORM_CAPS))
    assert error(reply)["code"] == -32603


# --- HTTP-13 / HTTP-14: x-mcp-header annotations at tool registration ------------------------


def _tool_with(schema):
    s = McpServer("headers", state_key=b"h" * 32)
    return s, s.tool("t", description="t", input_schema=schema)(lambda ctx: "t")


@pytest.mark.parametrize(
    "schema",
    [
        # nested under properties: valid for clients (HTTP-13), so they would send the header,
        # but the server's header check compares top-level arguments only (HTTP-14)
        {
            "type": "object",
            "properties": {
                "target": {
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                }
            },
        },
        # not reachable through properties alone: every client drops the tool (HTTP-13)
        {
            "type": "object",
            "properties": {
                "regions": {
                    "type": "array",
                    "items": {"type": "string", "x-mcp-header": "Region"},
                }
            },
        },
        {
            "type": "object",
            "properties": {"r": {"anyOf": [{"type": "string", "x-mcp-header": "Region"}]}},
        },
        {
            "type": "object",
            "$defs": {"r": {"type": "string", "x-mcp-header": "Region"}},
            "properties": {"r": {"$ref": "#/$defs/r"}},
        },
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Zone"},
                "b": {
                    "type": "object",
                    "properties": {"c": {"type": "string", "x-mcp-header": "zone"}},
                },
            },
        },
        {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}},
        {"type": "object", "properties": {"n": {"type": "string", "x-mcp-header": "a b"}}},
    ],
)
def test_http_13_14_annotations_the_server_cannot_enforce_are_refused_at_registration(schema):
    """HTTP-13 / HTTP-14: every x-mcp-header annotation a tool registers is one the server
    validates against its header. Annotations a client must drop (under items/anyOf/$ref,
    duplicate names at any depth, a number type, a non-token name) and nested ones the
    adapter cannot compare are refused when the tool is registered, never served unchecked."""
    with pytest.raises(ValueError, match="x-mcp-header"):
        _tool_with(schema)


def test_http_14_top_level_annotations_are_reported_for_the_header_check():
    """HTTP-14: the adapter learns each annotated argument and its type from the core."""
    s, _ = _tool_with(
        {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "Count"},
                "plain": {"type": "string"},
            },
        }
    )
    assert s.tool_header_params("t") == {"Region": ("region", "string"), "Count": ("n", "integer")}
