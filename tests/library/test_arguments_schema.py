"""A tool's inputSchema, compiled once at registration (``server.arguments``), and the fast
start it allows: the server imports no pure-Python JSON Schema machinery."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mrtr_kit.server import McpServer
from mrtr_kit.server.arguments import ArgumentsSchema, InvalidSchema

KEY = b"c" * 32
SCHEMA = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "items": {"type": "string"}},
        "n": {"type": "integer", "minimum": 1},
    },
    "required": ["n"],
}


def test_kit_the_shallowest_violation_is_reported_with_its_dotted_path():
    """KIT: of several violations, the one highest up in the arguments is named (as
    ``jsonschema.best_match`` did), with where it is: ``arguments`` for the object itself."""
    schema = ArgumentsSchema(SCHEMA)
    assert schema.problem({"n": 2, "tags": ["a"]}) is None
    assert schema.problem({"tags": [1]}) == 'arguments: "n" is a required property'
    assert schema.problem({"n": 0, "tags": ["a", 5]}) == "n: 0 is less than the minimum of 1"
    assert schema.problem({"n": 1, "tags": ["a", 5]}) == 'tags.1: 5 is not of type "string"'


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": 5},
        {"type": "object", "properties": {"a": {"type": "nope"}}},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}},
    ],
)
def test_kit_a_schema_that_cannot_be_compiled_is_refused_at_registration(schema):
    """KIT: a broken inputSchema (not a schema, a $ref to nowhere, a pattern that is no regex)
    fails when the tool is registered, never on a client's call."""
    s = McpServer("schemas", state_key=b"k" * 32)
    with pytest.raises(InvalidSchema, match="invalid inputSchema"):
        s.tool("t", description="t", input_schema=schema)(lambda ctx: "ok")


def test_kit_an_invalid_input_schema_is_refused_when_the_tool_is_registered():
    """KIT: a tool's input schema is checked once, at registration, not first found broken
    when a client calls the tool.

    Kills: the ``check_schema`` call removed.
    """
    s = McpServer("schemas", state_key=KEY)
    with pytest.raises(InvalidSchema):
        s.tool(description="t", input_schema={"type": "object", "properties": 5})(lambda ctx: "ok")


@pytest.mark.slow
def test_kit_importing_the_server_loads_no_pure_python_json_schema_machinery():
    """KIT (fast start): ``import mrtr_kit.server`` (and the CLI's parser) imports neither
    ``jsonschema`` nor its format checker's grammar (``rfc3987_syntax``, ~1 s at import in
    every server process of a fleet)."""
    code = (
        "import sys, mrtr_kit.server, mrtr_kit.server.http, mrtr_kit.__main__ as m\n"
        "m.build_parser()\n"
        "heavy = ('jsonschema', 'rfc3987_syntax', 'lark')\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stdout
