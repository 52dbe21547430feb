"""The core's one pipeline (``McpServer.handle``, steps in ``server/core.py``'s docstring), the
adapter's one table from an error's reason to its HTTP status, and explicit construction: the
state keys, token ids and clock a server is given, never made up."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mrtr_kit.protocol.constants import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
)
from mrtr_kit.protocol.errors import McpError, Reason
from mrtr_kit.server import KeyRing, McpServer, Reply
from mrtr_kit.server.context import elicit_form
from mrtr_kit.server.http import HTTP_STATUS, http_status
from mrtr_kit.server.state import StateBinding, request_digest
from tests.helpers import error, request, result

KEY = b"p" * 32
FORM = {"elicitation": {"form": {}}}


def build(**kw: Any) -> McpServer:
    s = McpServer("pipeline", state_key=KEY, **kw)

    @s.tool(
        description="Regional greeting.",
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    )
    def regional(ctx):
        return f"hello {ctx.arguments.get('region')}"

    @s.tool(description="Needs a capability it raises for itself.")
    def picky(ctx):
        raise McpError(-32021, "needs forms", {"requiredCapabilities": {"elicitation": {}}})

    @s.tool(description="Asks once, with state.")
    def ask(ctx):
        if ctx.elicitation("ok") is None:
            schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
            return ctx.input_required({"ok": elicit_form("OK?", schema)}, state={"n": 1})
        return "done"

    return s


def handle(s: McpServer, message: Any, headers: dict[str, str] | None = None) -> Reply:
    return asyncio.run(s.handle(message, headers=headers))


def std(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    h = {HEADER_PROTOCOL_VERSION: PROTOCOL_VERSION, HEADER_METHOD: method}
    if name is not None:
        h[HEADER_NAME] = name
    return {**h, **extra}


def code(reply: Reply) -> int:
    return error(reply)["code"]


# --- the order of the steps (KIT-HTTP-B) ----------------------------------------------------


def test_kit_http_b_header_presence_comes_before_meta_and_meta_before_header_values():
    """KIT-HTTP-B: step 4 (headers present, HTTP-15) precedes step 5 (_meta, CORE-11), which
    precedes step 6 (header values, HTTP-7); each answers with its own reason."""
    s = build()
    no_meta = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    missing_headers = handle(s, no_meta, headers={})
    assert code(missing_headers) == -32020 and missing_headers.reason is Reason.HEADER_MISMATCH
    bad_meta = handle(s, no_meta, headers=std("tools/list"))
    assert code(bad_meta) == -32602 and bad_meta.reason is Reason.MALFORMED_PARAMS
    wrong_method = handle(s, no_meta, headers=std("tools/call"))
    assert code(wrong_method) == -32602  # _meta is checked before the values are compared


def test_http_7_a_header_mismatch_is_found_before_the_version_check():
    """HTTP-7 / VER-1: with a version the server lacks in _meta and another in the header, the
    mismatch (step 6) answers, not -32022 (step 7); with both equal, -32022."""
    s = build()
    old = request("tools/list", **{META_PROTOCOL_VERSION: "2025-11-25"})
    assert code(handle(s, old, headers=std("tools/list"))) == -32020
    same = std("tools/list", **{HEADER_PROTOCOL_VERSION: "2025-11-25"})
    reply = handle(s, old, headers=same)
    assert code(reply) == -32022 and reply.reason is Reason.UNSUPPORTED_VERSION


def test_http_14_param_headers_are_checked_by_the_core():
    """HTTP-14 / HTTP-10: ``Mcp-Param-*`` against the annotated argument, decoded, in the core;
    without ``headers`` (not over HTTP) no header step runs."""
    s = build()
    call = request("tools/call", {"name": "regional", "arguments": {"region": "eu"}})
    ok = handle(s, call, headers=std("tools/call", "regional", **{"Mcp-Param-Region": "eu"}))
    assert result(ok)["content"][0]["text"] == "hello eu"
    assert code(handle(s, call, headers=std("tools/call", "regional"))) == -32020
    wrong = std("tools/call", "regional", **{"Mcp-Param-Region": "us"})
    assert code(handle(s, call, headers=wrong)) == -32020
    assert result(handle(s, call))["content"][0]["text"] == "hello eu"


def test_http_8_header_names_in_any_case_values_exactly():
    """HTTP-8: a plain dict of headers is read case-insensitively by name; values are not."""
    s = build()
    call = request("tools/call", {"name": "regional", "arguments": {"region": "eu"}})
    lower = {k.lower(): v for k, v in std("tools/call", "regional").items()}
    lower["MCP-PARAM-REGION"] = "eu"
    assert result(handle(s, call, headers=lower))["content"][0]["text"] == "hello eu"
    upper_name = std("tools/call", "REGIONAL", **{"Mcp-Param-Region": "eu"})
    assert code(handle(s, call, headers=upper_name)) == -32020


# --- HTTP statuses: one table in the adapter (§2.6) ------------------------------------------


def test_kit_http_b_every_reason_has_one_http_status():
    """§2.6 / HTTP-5 / HTTP-15..18 / KIT-HTTP-B: every reason maps to a status; the MUSTs hold."""
    assert set(HTTP_STATUS) == set(Reason)
    assert HTTP_STATUS[Reason.METHOD_NOT_FOUND] == 404  # HTTP-17
    musts = (Reason.MALFORMED_PARAMS, Reason.HEADER_MISMATCH, Reason.MISSING_CAPABILITY)
    assert {HTTP_STATUS[r] for r in (*musts, Reason.UNSUPPORTED_VERSION)} == {400}
    assert HTTP_STATUS[Reason.INVALID_PARAMS] == HTTP_STATUS[Reason.INTERNAL_ERROR] == 200
    assert http_status(Reply(None)) == 202  # HTTP-5
    assert http_status(Reply({"jsonrpc": "2.0", "id": 1, "result": {}})) == 200


def test_http_18_a_handler_raising_32021_itself_gets_400():
    """HTTP-18 / CAP-2: a bare ``McpError(-32021, ...)`` from a handler takes the reason of its
    code, so it goes out with 400 like the core's own; an unknown tool stays 200 (KIT)."""
    s = build()
    reply = handle(s, request("tools/call", {"name": "picky"}))
    assert code(reply) == -32021 and http_status(reply) == 400
    unknown = handle(s, request("tools/call", {"name": "nope"}))
    assert code(unknown) == -32602 and http_status(unknown) == 200
    assert McpError(-32099, "app").reason is Reason.APPLICATION


# --- construction: explicit keys, token ids, clock ------------------------------------------


def test_kit_a_keyed_codec_without_keys_is_refused():
    """KIT: no silent random key: an hmac or aead server must be told where its key comes
    from; the unsafe plain codec needs none; a key ring and a secret together are refused."""
    for codec in ("hmac", "aead"):
        with pytest.raises(ValueError, match="needs keys"):
            McpServer("keyless", state_codec=codec)
    assert McpServer("lesson", state_codec="plain").states.codec.format == "plain1"
    with pytest.raises(ValueError, match="not both"):
        McpServer("both", state_keys=KeyRing.single(KEY), state_key=KEY)
    ring = KeyRing.generate()
    assert McpServer("ring", state_keys=ring).states.codec.keys == ring  # type: ignore[attr-defined]


def test_kit_token_ids_and_clock_are_arguments():
    """KIT: the ``jti`` of each state comes from ``token_ids`` and its ``iat`` from ``now``;
    a source that gives what ``verify`` would refuse fails at once (-32603, logged)."""
    ids = iter(["A" * 16, "B" * 16])
    s = build(token_ids=lambda: next(ids), now=lambda: 1_785_240_000.0)
    first = request("tools/call", {"name": "ask"}, capabilities=FORM)
    state = result(handle(s, first))["requestState"]
    binding = StateBinding(None, request_digest("tools/call", "ask", {}))
    claims = s.states.verify(state, binding)
    assert (claims["jti"], claims["iat"]) == ("A" * 16, 1_785_240_000)
    broken = build(token_ids=lambda: "short")
    reply = handle(broken, request("tools/call", {"name": "ask"}, capabilities=FORM))
    assert code(reply) == -32603


def test_http_14_a_tool_name_that_is_no_string_is_invalid_params_over_http_too():
    """HTTP-14 / CORE-1: a tools/call whose ``name`` is not a string reaches the method's own
    check (-32602, HTTP 200, KIT-HTTP-B), never an internal error, with headers or without."""
    s = build()
    for name in (["regional"], 7, None):
        call = request("tools/call", {"name": name, "arguments": {"region": "eu"}})
        sent = std("tools/call", "regional", **{"Mcp-Param-Region": "eu"})
        for headers in (sent, None):
            reply = handle(s, call, headers=headers)
            assert code(reply) == -32602 and http_status(reply) == 200, (name, headers)


def test_parse_message_walks_a_dict_built_in_python_unless_told_it_came_from_decode_body():
    """A message built in Python (a notebook, a test, the 2025-11-25 adapter) may hold what JSON
    cannot: ``parse_message`` refuses it (-32602) by default. ``decoded=True`` is only for what
    ``wire_json.decode_body`` returned, which refused those values already."""
    from mrtr_kit.server.core import parse_message

    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": float("nan")}}
    with pytest.raises(McpError) as refused:
        parse_message(message)
    assert refused.value.code == -32602 and "not a JSON number" in str(refused.value)
    assert parse_message(message, decoded=True).method == "tools/list"
