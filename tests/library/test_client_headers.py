"""Client request headers (digest §3.2): value encoding (HTTP-9), the standard headers
(HTTP-4, HTTP-7, HTTP-11), Mcp-Param mirroring (HTTP-12) and the tools/list filter (HTTP-13).
"""

from __future__ import annotations

import base64
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mrtr_kit.client import HeaderValueError, MrtrCall, RequestFactory, request_headers
from mrtr_kit.client.headers import (
    InvalidHeaderAnnotation,
    encode_header_value,
    filter_tools,
    header_annotations,
    param_header_value,
)
from mrtr_kit.protocol.constants import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PARAM_PREFIX,
    HEADER_PROTOCOL_VERSION,
    META_PROTOCOL_VERSION,
)
from mrtr_kit.protocol.errors import McpError
from mrtr_kit.protocol.headers import decode_value


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


# --- HTTP-9: values --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "sent"),
    [
        ("us-west1", "us-west1"),
        ("us west 1", "us west 1"),  # internal spaces are plain ASCII
        ("", ""),  # an empty value is still a (present, empty) header
        ("Hello, 世界", b64("Hello, 世界")),
        (" padded ", b64(" padded ")),
        (" us-west1", b64(" us-west1")),
        ("us-west1 ", b64("us-west1 ")),
        ("line1\nline2", b64("line1\nline2")),
        ("a\r\nb", b64("a\r\nb")),
        ("\tindent", b64("\tindent")),
        ("bell\x07", b64("bell\x07")),
        ("=?base64?SGVsbG8=?=", b64("=?base64?SGVsbG8=?=")),  # looks encoded -> encode it
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # no closing marker: plain
    ],
)
def test_http_9_value_encoding(value, sent):
    """HTTP-9 / docs/conformance.md §7.4 table: plain safe ASCII verbatim, everything else
    base64."""
    assert encode_header_value(value) == sent


@pytest.mark.parametrize(
    ("value", "sent"),
    [(42, "42"), (-7, "-7"), (0, "0"), (True, "true"), (False, "false"), (42.0, "42")],
)
def test_http_9_param_type_conversion(value, sent):
    """HTTP-9: integers in decimal, booleans as true/false (never 1/0 or True/False)."""
    assert param_header_value(value) == sent


def test_http_12_null_means_no_header_and_bad_types_are_refused():
    """HTTP-12: null -> no header; HTTP-13: no floats, objects or huge integers."""
    assert param_header_value(None) is None
    for bad in (3.5, {"a": 1}, [1], 2**53):
        with pytest.raises(HeaderValueError):
            param_header_value(bad)


@given(st.text())
def test_http_10_server_decodes_what_the_client_encodes(text):
    """HTTP-9 / HTTP-10: the kit server's decoder recovers every value the client encodes."""
    assert decode_value("Mcp-Param-X", encode_header_value(text)) == text


@pytest.mark.parametrize("value", ["get_weather", "us west 1", "a\tb", "!~", ""])
def test_http_9_server_accepts_visible_ascii_space_and_tab(value):
    """HTTP-9: a received value of visible ASCII (0x21-0x7E), spaces and tabs is read as it is."""
    assert decode_value("Mcp-Name", value) == value


@pytest.mark.parametrize("bad", ["del\x7f", "nul\x00", "bell\x07", "caf\u00e9", "cr\rlf", "\x80"])
def test_http_9_server_refuses_other_characters(bad):
    """HTTP-9: any other character in a received value (DEL, controls, non-ASCII) is -32020."""
    with pytest.raises(McpError, match="outside visible ASCII") as refused:
        decode_value("Mcp-Name", bad)
    assert refused.value.code == -32020


# --- HTTP-4 / HTTP-7 / HTTP-11 / HTTP-12: the headers of a request ----------------------


def test_http_7_version_and_method_on_every_request():
    """HTTP-4 / HTTP-7: MCP-Protocol-Version equals _meta's version; Mcp-Method = method;
    no Mcp-Name on methods without a name."""
    req = RequestFactory(protocol_version="2026-07-28").request("tools/list")
    assert request_headers(req) == {
        HEADER_PROTOCOL_VERSION: req["params"]["_meta"][META_PROTOCOL_VERSION],
        HEADER_METHOD: "tools/list",
    }


def test_http_11_name_header_on_first_round_and_retry():
    """HTTP-11: Mcp-Name = params.name / params.uri, on the retry as on the first attempt."""
    f = RequestFactory()
    call = MrtrCall.resource(f, "file:///path/to/file%20name.txt")
    first = call.first_request()
    call.receive(
        {
            "jsonrpc": "2.0",
            "id": first["id"],
            "result": {"resultType": "input_required", "requestState": "s"},
        }
    )
    retry = call.retry_request()
    for req in (first, retry):
        assert request_headers(req)[HEADER_NAME] == "file:///path/to/file%20name.txt"
    prompt = f.request("prompts/get", {"name": "naïve"})
    assert request_headers(prompt)[HEADER_NAME] == b64("naïve")


def test_http_12_annotated_arguments_are_mirrored():
    """HTTP-12: annotated arguments go into Mcp-Param-<Name>; absent or null ones do not;
    unannotated ones never; an empty string is still sent."""
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "empty": {"type": "string", "x-mcp-header": "EmptyVal"},
            "method_val": {"type": "string", "x-mcp-header": "Method"},
            "query": {"type": "string"},
            "target": {
                "type": "object",
                "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            },
        },
    }
    arguments = {
        "region": "us-west1",
        "priority": 42,
        "verbose": None,
        "empty": "",
        "method_val": "test-method",
        "query": "q",
        "target": {"zone": "b"},
    }
    req = RequestFactory().request("tools/call", {"name": "t", "arguments": arguments})
    headers = request_headers(req, header_annotations(schema))
    params = {k: v for k, v in headers.items() if k.startswith(HEADER_PARAM_PREFIX)}
    assert params == {
        "Mcp-Param-Region": "us-west1",
        "Mcp-Param-Priority": "42",
        "Mcp-Param-EmptyVal": "",
        "Mcp-Param-Method": "test-method",
        "Mcp-Param-Zone": "b",
    }
    assert headers[HEADER_METHOD] == "tools/call"  # Mcp-Param-Method is not Mcp-Method


# --- HTTP-13: the tools/list filter -----------------------------------------------------------


def tool(name: str, properties: dict, **schema) -> dict:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties, **schema}}


INVALID = {
    "empty": tool("empty", {"v": {"type": "string", "x-mcp-header": ""}}),
    "object": tool("object", {"v": {"type": "object", "x-mcp-header": "Data"}}),
    "array": tool("array", {"v": {"type": "array", "items": {}, "x-mcp-header": "Items"}}),
    "null": tool("null", {"v": {"type": "null", "x-mcp-header": "Nil"}}),
    "number": tool("number", {"v": {"type": "number", "x-mcp-header": "Score"}}),
    "untyped": tool("untyped", {"v": {"x-mcp-header": "Any"}}),
    "same_case": tool(
        "same_case",
        {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "Region"},
        },
    ),
    "diff_case": tool(
        "diff_case",
        {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"},
        },
    ),
    "space": tool("space", {"v": {"type": "string", "x-mcp-header": "My Region"}}),
    "colon": tool("colon", {"v": {"type": "string", "x-mcp-header": "Region:Primary"}}),
    "non_ascii": tool("non_ascii", {"v": {"type": "string", "x-mcp-header": "Région"}}),
    "control": tool("control", {"v": {"type": "string", "x-mcp-header": "Region\t1"}}),
    "crlf": tool("crlf", {"v": {"type": "string", "x-mcp-header": "A\r\nB"}}),
    "under_items": tool(
        "under_items",
        {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}},
    ),
    "under_anyof": tool(
        "under_anyof", {"v": {"anyOf": [{"type": "string", "x-mcp-header": "Choice"}]}}
    ),
    "under_defs": tool(
        "under_defs",
        {"v": {"$ref": "#/$defs/r"}},
        **{"$defs": {"r": {"type": "string", "x-mcp-header": "Ref"}}},
    ),
    "at_root": {"name": "at_root", "inputSchema": {"type": "object", "x-mcp-header": "Root"}},
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_http_13_invalid_annotations_drop_the_tool(name, caplog):
    """HTTP-13: invalid x-mcp-header (empty, not a token, duplicate, non-primitive or number,
    not reachable through properties alone) -> the tool is dropped, with a warning that names
    the tool and the reason."""
    valid = tool("valid_tool", {"region": {"type": "string", "x-mcp-header": "Region"}})
    with caplog.at_level(logging.WARNING, logger="mrtr_kit.client"):
        kept, rejected = filter_tools([valid, INVALID[name]])
    assert [t["name"] for t in kept] == ["valid_tool"]
    assert [r.name for r in rejected] == [name] and rejected[0].reason
    assert name in caplog.text and rejected[0].reason in caplog.text


def test_http_13_valid_annotations_are_kept():
    """HTTP-13: string/integer/boolean properties, nested through properties only, are fine;
    x-mcp-header inside data (a default) or as a property name is not an annotation."""
    schema = {
        "type": "object",
        "properties": {
            "x-mcp-header": {"type": "string"},
            "cfg": {"type": "object", "default": {"x-mcp-header": "not an annotation"}},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "outer": {
                "type": "object",
                "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"}},
            },
        },
    }
    assert header_annotations(schema) == {("n",): "N", ("outer", "flag"): "Flag"}
    kept, rejected = filter_tools([{"name": "t", "inputSchema": schema}])
    assert len(kept) == 1 and rejected == []


def test_http_13_reasons_say_what_is_wrong():
    """HTTP-13 (SHOULD log a reason): the reason names the rule that failed."""
    with pytest.raises(InvalidHeaderAnnotation, match="number"):
        header_annotations(INVALID["number"]["inputSchema"])
    with pytest.raises(InvalidHeaderAnnotation, match="case-insensitive"):
        header_annotations(INVALID["diff_case"]["inputSchema"])
    with pytest.raises(InvalidHeaderAnnotation, match="token"):
        header_annotations(INVALID["colon"]["inputSchema"])


def test_http_9_a_value_with_no_utf8_form_is_a_clear_client_error():
    """HTTP-9: a header value is sent as base64 of its UTF-8 bytes; a string holding a lone
    surrogate has none, so the client says so instead of raising UnicodeEncodeError."""
    with pytest.raises(HeaderValueError, match="surrogate"):
        encode_header_value("tool-\ud800")
    with pytest.raises(HeaderValueError, match="surrogate"):
        param_header_value("x\udfff")
