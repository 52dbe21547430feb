"""What a server's author registers - tools, prompts, resources, completions - and what the
core makes of it: the decorators, the listings, prompts/get, completion/complete and the values a
handler may return. Mostly the kit's conventions (KIT) and the schema's own limits, checked
through ``McpServer.handle`` on plain dicts.
"""

from __future__ import annotations

import pytest

from mrtr_kit.protocol.models import TextResourceContents
from mrtr_kit.server import McpServer
from tests.helpers import call, result

KEY = b"c" * 32


# --- tools and prompts ------------------------------------------------------------------------


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


def test_schema_a_prompt_without_arguments_is_listed_without_an_arguments_key():
    """prompts/list, the 2026-07-28 schema's rule (no spec-map ID): ``Prompt.arguments`` is
    optional; a prompt that takes none omits it (the kit's choice) rather than sending an
    empty list.

    Kills: ``or None`` dropped after the prompt's argument list.
    """
    s = McpServer("prompts", state_key=KEY)
    s.prompt(description="p")(lambda ctx: "hi")
    (prompt,) = result(call(s, "prompts/list"))["prompts"]
    assert "arguments" not in prompt


def test_schema_optional_prompt_arguments_may_be_left_out_and_completion_needs_no_table():
    """prompts/get, the 2026-07-28 schema's rule (no spec-map ID): only *required* prompt
    arguments (``PromptArgument.required``) must be present. completion/complete for a prompt
    registered without completions answers with no values, not an error (KIT).

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


# --- completion/complete ----------------------------------------------------------------------


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


def test_schema_a_short_completion_reports_its_total_and_no_more():
    """completion/complete, the 2026-07-28 schema's rule (``total``, ``hasMore``; no spec-map
    ID): with three matches, ``total`` is 3 and ``hasMore`` is false.

    Kills: ``total`` or ``hasMore`` dropped or renamed; ``hasMore: True``.
    """
    s = McpServer("completions", state_key=KEY)
    s.prompt("p", description="p", completions={"a": ["ab", "ac", "ad", "b"]})(lambda ctx: "hi")
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "a"}}
    completion = result(call(s, "completion/complete", params))["completion"]
    assert completion == {"values": ["ab", "ac", "ad"], "total": 3, "hasMore": False}


def test_schema_completion_sends_at_most_100_values():
    """completion/complete, the 2026-07-28 schema's rule (no spec-map ID): ``values`` must
    not exceed 100 items (``maxItems: 100``).

    Kills: the ``[:100]`` cut turned into ``[:101]``.
    """
    s = McpServer("completions", state_key=KEY)
    options = [f"opt{i:03}" for i in range(150)]
    s.prompt("p", description="p", completions={"a": options})(lambda ctx: "hi")
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "o"}}
    completion = result(call(s, "completion/complete", params))["completion"]
    assert completion["values"] == options[:100]


def test_schema_completion_says_when_more_values_exist():
    """completion/complete, the 2026-07-28 schema's rule (its descriptions of ``total`` and
    ``hasMore``; no spec-map ID): ``total`` may exceed the values sent and ``hasMore`` says
    more exist."""
    s = McpServer("completions", state_key=KEY)
    s.prompt("p", description="p", completions={"a": [f"o{i}" for i in range(150)]})(
        lambda ctx: "hi"
    )
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "o"}}
    completion = result(call(s, "completion/complete", params))["completion"]
    assert (completion["total"], completion["hasMore"]) == (150, True)


# --- what a handler returns -------------------------------------------------------------------


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
