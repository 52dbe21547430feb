"""The sans-IO server core (server/core.py): behaviour a server's author or its clients rely
on that no other test pinned, found by the mutants ``tools/mutate.py`` saw survive. Each test
names the deliberate bug it catches. All through ``McpServer.handle`` on plain dicts.

The default cache lifetimes (60 s for lists, discovery and plain resources, 0 for templated
resources) are the kit's choices (KIT), not spec numbers.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import error, request, result, run

from mrtr_kit.protocol.constants import (
    META_CLIENT_INFO,
    META_SERVER_INFO,
    PROTOCOL_VERSION,
    RESULT_INPUT_REQUIRED,
)
from mrtr_kit.protocol.models import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    TextResourceContents,
)
from mrtr_kit.server import McpServer
from mrtr_kit.server.arguments import InvalidSchema
from mrtr_kit.server.codecs import HmacStateCodec
from mrtr_kit.server.http import http_status

KEY = b"c" * 32
T0 = 1_800_000_000.0
INVALID_STATE = {"reason": "invalid_request_state"}


def call(s: McpServer, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
    return run(s, request(method, params, **kw))


# --- discovery and lists (CACHE-1, DISC-5) ---------------------------------------------------


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


def test_ver_5_a_removed_method_names_the_versions_this_server_speaks():
    """VER-5: a legacy ``initialize`` learns where it was removed and what is supported.

    Kills: ``removedIn`` dropped or renamed in the method-not-found data.
    """
    s = McpServer("modern", state_key=KEY)
    err = error(call(s, "initialize", {"protocolVersion": "2025-11-25"}))
    assert err["code"] == -32601
    assert err["data"]["removedIn"] == PROTOCOL_VERSION
    assert PROTOCOL_VERSION in err["data"]["supported"]


# --- registration ---------------------------------------------------------------------------


def test_kit_registration_decorators_give_the_function_back():
    """KIT: ``@server.tool`` / ``prompt`` / ``resource`` / ``resource_template`` register the
    handler and return it unchanged, so it can still be called (and tested) directly.

    Kills: ``return fn`` turned into ``return None`` in each of the four decorators.
    """
    s = McpServer("decorators", state_key=KEY)

    def handler(ctx):
        return "ok"

    assert s.tool(description="t")(handler) is handler
    assert s.prompt(description="p")(handler) is handler
    assert s.resource("file:///a", name="a")(handler) is handler
    assert s.resource_template("notes://{id}", name="n")(handler) is handler


def test_kit_a_tool_is_listed_with_its_title_annotations_and_an_object_schema():
    """KIT (tools/list): a tool registered without a schema advertises an empty object schema
    (``inputSchema`` must have ``type: "object"``); its title and annotations are listed.

    Kills: ``type`` dropped or renamed in the default schema; ``title`` or ``annotations``
    dropped or renamed in the registered descriptor.
    """
    s = McpServer("listing", state_key=KEY)
    s.tool(description="d", title="Nice name", annotations={"readOnlyHint": True})(lambda ctx: "ok")
    (tool,) = result(call(s, "tools/list"))["tools"]
    assert tool["inputSchema"]["type"] == "object"
    assert tool["title"] == "Nice name"
    assert tool["annotations"] == {"readOnlyHint": True}


def test_kit_an_invalid_input_schema_is_refused_when_the_tool_is_registered():
    """KIT: a tool's input schema is checked once, at registration, not first found broken
    when a client calls the tool.

    Kills: the ``check_schema`` call removed.
    """
    s = McpServer("schemas", state_key=KEY)
    with pytest.raises(InvalidSchema):
        s.tool(description="t", input_schema={"type": "object", "properties": 5})(lambda ctx: "ok")


def test_kit_a_prompt_without_arguments_is_listed_without_an_arguments_key():
    """prompts/list: ``arguments`` is optional; a prompt that takes none omits it rather than
    sending an empty list.

    Kills: ``or None`` dropped after the prompt's argument list.
    """
    s = McpServer("prompts", state_key=KEY)
    s.prompt(description="p")(lambda ctx: "hi")
    (prompt,) = result(call(s, "prompts/list"))["prompts"]
    assert "arguments" not in prompt


def test_kit_optional_prompt_arguments_may_be_left_out_and_completion_needs_no_table():
    """prompts/get: only *required* prompt arguments must be present. completion/complete
    for a prompt registered without completions answers with no values, not an error.

    Kills: ``a.required and`` dropped from the missing-argument check; ``completions or {}``
    dropped at registration.
    """
    s = McpServer("prompts", state_key=KEY)
    args = [{"name": "topic", "required": True}, {"name": "tone", "required": False}]
    s.prompt("plain", description="p", arguments=args)(lambda ctx: "hi")
    s.prompt("done", description="p", completions={"tone": ["dry"]})(lambda ctx: "hi")
    got = result(call(s, "prompts/get", {"name": "plain", "arguments": {"topic": "x"}}))
    assert got["messages"][0]["content"]["text"] == "hi"
    params = {
        "ref": {"type": "ref/prompt", "name": "plain"},
        "argument": {"name": "t", "value": ""},
    }
    assert result(call(s, "completion/complete", params))["completion"]["values"] == []


@pytest.mark.parametrize(
    "ref",
    [{"type": "ref/prompt", "name": "nope"}, {"type": "ref/resource", "uri": "notes://{id}"}],
    ids=["unknown-prompt", "resource-ref"],
)
def test_kit_completion_for_what_has_no_table_is_empty_not_an_error(ref):
    """completion/complete: an unknown prompt, or a resource reference (this server completes
    prompt arguments only), gets no values - never an internal error.

    Kills: the ``isinstance(ref, PromptReference) and ref.name in self._prompts`` test with
    ``and`` made ``or``, or either half dropped.
    """
    s = McpServer("completions", state_key=KEY)
    s.prompt("p", description="p", completions={"a": ["x"]})(lambda ctx: "hi")
    params = {"ref": ref, "argument": {"name": "a", "value": ""}}
    assert result(call(s, "completion/complete", params))["completion"]["values"] == []


def test_kit_a_short_completion_reports_its_total_and_no_more():
    """completion/complete: with three matches, ``total`` is 3 and ``hasMore`` is false.

    Kills: ``total`` or ``hasMore`` dropped or renamed; ``hasMore: True``.
    """
    s = McpServer("completions", state_key=KEY)
    s.prompt("p", description="p", completions={"a": ["ab", "ac", "ad", "b"]})(lambda ctx: "hi")
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "a"}}
    completion = result(call(s, "completion/complete", params))["completion"]
    assert completion == {"values": ["ab", "ac", "ad"], "total": 3, "hasMore": False}


def test_kit_completion_sends_at_most_100_values():
    """completion/complete: ``values`` must not exceed 100 items (schema ``maxItems: 100``).

    Kills: the ``[:100]`` cut turned into ``[:101]``.
    """
    s = McpServer("completions", state_key=KEY)
    options = [f"opt{i:03}" for i in range(150)]
    s.prompt("p", description="p", completions={"a": options})(lambda ctx: "hi")
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "o"}}
    completion = result(call(s, "completion/complete", params))["completion"]
    assert completion["values"] == options[:100]


def test_kit_completion_says_when_more_values_exist():
    """completion/complete: ``total`` may exceed the values sent and ``hasMore`` says more
    exist (schema descriptions)."""
    s = McpServer("completions", state_key=KEY)
    s.prompt("p", description="p", completions={"a": [f"o{i}" for i in range(150)]})(
        lambda ctx: "hi"
    )
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "o"}}
    completion = result(call(s, "completion/complete", params))["completion"]
    assert (completion["total"], completion["hasMore"]) == (150, True)


# --- resources (CACHE-1, KIT defaults) -------------------------------------------------------


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


def test_sep_2164_a_template_matches_whole_uris_only():
    """SEP-2164 / ERR-2: ``notes://{id}`` matches ``notes://7``, not ``notes://7/extra``;
    the longer URI is an unknown resource (-32602 with ``data.uri``).

    Kills: the ``$`` anchor dropped from the template's pattern.
    """
    s = McpServer("resources", state_key=KEY)
    s.resource_template("notes://{id}", name="note")(lambda ctx: "n")
    err = error(call(s, "resources/read", {"uri": "notes://7/extra"}))
    assert err["code"] == -32602 and err["data"] == {"uri": "notes://7/extra"}


def test_kit_a_resource_handler_may_return_a_list_of_contents():
    """KIT: a resource handler returns text, bytes, or its contents blocks as a list.

    Kills: the list branch of ``_as_result`` answering None.
    """
    s = McpServer("resources", state_key=KEY)
    blocks = (TextResourceContents(uri="file:///a", text="one"),)
    s.resource("file:///a", name="a")(lambda ctx: iter(blocks))
    got = result(call(s, "resources/read", {"uri": "file:///a"}))
    assert [b["text"] for b in got["contents"]] == ["one"]


def test_kit_a_handler_may_return_the_same_dict_every_time():
    """KIT: a handler that returns a module-level result dict gets it back unchanged; the core
    stamps ``resultType`` and ``_meta`` on its own copy.

    Kills: ``dict(outcome)`` dropped, so the handler's dict would be written into.
    """
    answer = {"content": [{"type": "text", "text": "fixed"}]}
    s = McpServer("fixed", state_key=KEY)
    s.tool("fixed", description="t")(lambda ctx: answer)
    for _ in range(2):
        assert result(call(s, "tools/call", {"name": "fixed"}))["resultType"] == "complete"
    assert answer == {"content": [{"type": "text", "text": "fixed"}]}


# --- requestState and configuration ------------------------------------------------------------


def stateful(**kw: Any) -> tuple[McpServer, list[float]]:
    clock = [T0]
    s = McpServer("stateful", now=lambda: clock[0], **kw)

    @s.tool(description="state-only round, then done")
    def step(ctx):
        if ctx.state is None:
            return ctx.input_required(state={"n": 1})
        return "done"

    return s, clock


def test_mrtr_c2_mrtr_e1_a_null_request_state_is_invalid_params():
    """MRTR-C2 / MRTR-E1: a client omits ``requestState`` when it has none; ``null`` is a
    malformed value (-32602), not "no state".

    Kills: "requestState" emptied in the null check of ``_call``.
    """
    s, _ = stateful(state_key=KEY)
    err = error(call(s, "tools/call", {"name": "step", "requestState": None}))
    assert err["code"] == -32602


def test_sec_4_a_servers_state_ttl_setting_is_honoured():
    """SEC-4: the state lifetime is configurable; ``state_ttl_s=60`` means a state is refused
    after 60 s (plus the 30 s clock tolerance), not after the 15-minute default.

    Kills: ``ttl_s`` dropped or renamed where McpServer passes ``state_ttl_s`` on.
    """
    s, clock = stateful(state_key=KEY, state_ttl_s=60)
    state = result(call(s, "tools/call", {"name": "step"}))["requestState"]
    clock[0] = T0 + 91
    err = error(call(s, "tools/call", {"name": "step", "requestState": state}))
    assert err["data"] == INVALID_STATE


def test_kit_a_codec_object_and_a_key_ring_are_refused_together():
    """KIT: a codec object holds its own keys; passing ``state_keys`` as well is refused
    rather than silently ignored.

    Kills: ``state_keys is not None`` dropped from that check.
    """
    from mrtr_kit.server.keyring import KeyRing

    with pytest.raises(ValueError, match="holds its own keys"):
        McpServer("s", state_codec=HmacStateCodec(KEY), state_keys=KeyRing.single(KEY))


@pytest.mark.parametrize("ttl", [1.5, True, -1])
def test_cache_1_cache_5_a_resource_ttl_must_be_whole_milliseconds_at_least_0(ttl):
    """CACHE-1 / CACHE-5: ``ttlMs`` is an integer >= 0; a resource registered with anything
    else is refused at registration.

    Kills: ``not isinstance(ttl_ms, int)`` dropped from the check (a float would pass).
    """
    s = McpServer("resources", state_key=KEY)
    with pytest.raises(ValueError, match="whole number"):
        s.resource("file:///a", name="a", ttl_ms=ttl)(lambda ctx: "a")


# --- the envelope (CORE-2, CORE-4) and handler bugs ---------------------------------------------


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


def test_mrtr_e2_params_no_json_can_hold_are_invalid_params_with_status_400():
    """MRTR-E2: a message handed to the core with a value JSON cannot hold (NaN) in its
    params gets -32602 and HTTP status 400.

    Kills: the 400 of that error changed.
    """
    s = McpServer("json", state_key=KEY)
    reply = run(s, request("tools/call", {"name": "t", "arguments": {"x": float("nan")}}))
    assert http_status(reply) == 400 and reply.body["error"]["code"] == -32602


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


@pytest.mark.parametrize("bad", ["state-not-a-dict", "key-not-a-string"])
def test_mrtr_s2a_input_required_of_the_wrong_shape_is_a_handler_bug(bad):
    """MRTR-S2a (and the kit's state contract): a state that is not a dict, or an
    ``inputRequests`` key that is not a string, is the handler's bug: -32603 at once, never
    an input_required result that breaks on the client's retry.

    Kills: either HandlerBug raise removed.
    """
    from mrtr_kit.server.context import elicit_form

    s = McpServer("bugs", state_key=KEY)
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    @s.tool(description="asks wrongly")
    def ask(ctx):
        if bad == "state-not-a-dict":
            return ctx.input_required(state=["n", 1])  # type: ignore[arg-type]
        return ctx.input_required({1: elicit_form("Sure?", form)})  # type: ignore[dict-item]

    assert error(call(s, "tools/call", {"name": "ask"}))["code"] == -32603


# --- capability gate for sampling (SAMP-3, MRTR-S7) --------------------------------------------


def sampling_server(params: dict[str, Any]) -> McpServer:
    s = McpServer("sampler", state_key=KEY)
    base = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}

    @s.tool(description="asks for a completion")
    def ask(ctx):
        p = CreateMessageRequestParams.model_validate({**base, "maxTokens": 5, **params})
        return ctx.input_required({"s": CreateMessageRequest(params=p)})

    return s


def test_samp_3_mrtr_s7_tool_choice_alone_needs_sampling_tools():
    """SAMP-3 / MRTR-S7: a sampling request with ``toolChoice`` (even without ``tools``)
    needs ``sampling.tools``; with plain ``sampling`` declared it is -32021.

    Kills: ``p.tool_choice is not None`` dropped from what counts as using tools.
    """
    s = sampling_server({"toolChoice": {"mode": "auto"}})
    err = error(call(s, "tools/call", {"name": "ask"}, capabilities={"sampling": {}}))
    assert err["code"] == -32021


def test_samp_3_include_context_none_needs_no_context_capability():
    """SAMP-3: ``includeContext: "none"`` asks for no context, so plain ``sampling`` is enough.

    Kills: "none" emptied in the list of values that need ``sampling.context``.
    """
    s = sampling_server({"includeContext": "none"})
    res = result(call(s, "tools/call", {"name": "ask"}, capabilities={"sampling": {}}))
    assert res["resultType"] == RESULT_INPUT_REQUIRED


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
