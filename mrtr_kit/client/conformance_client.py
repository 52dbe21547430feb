"""Client entry point for the official conformance suite's client scenarios (docs/conformance.md
§7).

The harness runs ``<command> <mock URL>`` with ``MCP_CONFORMANCE_SCENARIO`` naming the
scenario; each scenario below is a few lines on top of the ordinary ``McpClient``::

    conformance client --command "python -m mrtr_kit.client.conformance_client" \\
        --scenario sep-2322-client-request-state --spec-version 2026-07-28 -o results

Exit status: 0 when the scenario's requests all went through, 1 when the client failed,
2 for a usage error (no URL, unknown scenario).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from ..protocol.constants import PROTOCOL_VERSION
from ..protocol.models import (
    CreateMessageRequestParams,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    ListRootsResult,
)
from .answers import AnswerContext
from .errors import McpClientError
from .session import McpClient

log = logging.getLogger("mrtr_kit.conformance")
Scenario = Callable[[str], Coroutine[Any, Any, None]]


# --- answer handlers for unattended runs ------------------------------------------------------


def _sample_value(prop: dict[str, Any]) -> Any:
    """A plausible value for one schema property: its default, else something of its type."""
    if "default" in prop:
        return prop["default"]
    if prop.get("enum"):
        return prop["enum"][0]
    if prop.get("oneOf"):
        return prop["oneOf"][0]["const"]
    kind = prop.get("type")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return prop.get("minimum", 1)
    if kind == "array":
        items = prop.get("items", {})
        options = items.get("enum") or [o["const"] for o in items.get("anyOf", [])]
        return options[:1]
    return "conformance"


def accept_form(params: ElicitRequestFormParams, ctx: AnswerContext) -> ElicitResult:
    """Accept every form, filling each field with a plausible value."""
    props = params.requested_schema.get("properties", {})
    content = {name: _sample_value(prop) for name, prop in props.items()}
    return ElicitResult(action="accept", content=content)


def decline_url(params: ElicitRequestURLParams, ctx: AnswerContext) -> ElicitResult:
    """Never open a URL unattended (ELIC-13): declining is still an answer (MRTR-C8)."""
    return ElicitResult(action="decline")


def refuse_sampling(params: CreateMessageRequestParams, ctx: AnswerContext) -> None:
    """No model here: refuse, so the call ends locally without a retry (MRTR-C8)."""
    return None


def no_roots(params: dict[str, Any], ctx: AnswerContext) -> ListRootsResult:
    """A roots handler that answers with an empty list of roots."""
    return ListRootsResult(roots=[])


def _sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties", {})
    return {name: _sample_value(props.get(name, {})) for name in schema.get("required", [])}


# --- scenarios ----------------------------------------------------------------------------------


async def request_state(url: str) -> None:
    """``sep-2322-client-request-state`` (§7.2), in the reference order."""
    async with McpClient(url, elicitation=accept_form) as client:
        await client.list_tools()
        # Round 1 of echo_state only: it answers input_required with a requestState.
        echo = await client.begin_tool_call("test_mrtr_echo_state", {})
        if echo.input_required is None:
            raise McpClientError("test_mrtr_echo_state did not ask for input")
        # A separate call while echo_state waits: it must carry none of echo_state's
        # inputResponses or requestState (MRTR-C4).
        await client.call_tool("test_mrtr_unrelated", {})
        # Now finish echo_state: new id (MRTR-C3), the state echoed untouched (MRTR-C2).
        await client.complete_call(echo)
        # No requestState in its result, so none on the retry (MRTR-C2).
        await client.call_tool("test_mrtr_no_state", {})
        # No resultType: complete (RT-2), never retried.
        await client.call_tool("test_mrtr_no_result_type", {})


async def request_metadata(url: str) -> None:
    """``request-metadata`` (§7.3): full ``_meta`` and headers on every POST; the first POST
    is refused with -32022 and resent with a version from ``data.supported`` (VER-2)."""
    async with McpClient(
        url,
        elicitation=accept_form,
        url_elicitation=decline_url,
        sampling=refuse_sampling,
        roots=no_roots,
    ) as client:
        await client.discover()
        await client.list_tools()


async def tools_call(url: str) -> None:
    """``tools_call`` (§7.4)."""
    async with McpClient(url) as client:
        await client.list_tools()
        await client.call_tool("add_numbers", {"a": 5, "b": 3})


async def standard_headers(url: str) -> None:
    """``http-standard-headers`` (§7.4): every method, so every Mcp-Method/Mcp-Name is seen."""
    async with McpClient(url) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool["name"], {})
        for resource in await client.list_resources():
            await client.read_resource(resource["uri"])
        for prompt in await client.list_prompts():
            await client.get_prompt(prompt["name"])


async def custom_headers(url: str) -> None:
    """``http-custom-headers`` (§7.4): the calls named in MCP_CONFORMANCE_CONTEXT, with their
    exact arguments; the session mirrors annotated ones into Mcp-Param-* (HTTP-12)."""
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))
    async with McpClient(url) as client:
        await client.list_tools()
        for call in context.get("toolCalls", []):
            await client.call_tool(call["name"], call.get("arguments", {}))


async def invalid_tool_headers(url: str) -> None:
    """``http-invalid-tool-headers`` (§7.4): tools with invalid x-mcp-header are dropped by
    ``list_tools`` (HTTP-13); every tool that is left gets called."""
    async with McpClient(url) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool["name"], _sample_arguments(tool.get("inputSchema", {})))


async def ref_no_deref(url: str) -> None:
    """``json-schema-ref-no-deref`` (§7.4): list tools; never fetch a ``$ref`` URL."""
    async with McpClient(url) as client:
        await client.list_tools()


async def schema_preservation(url: str) -> None:
    """``json-schema-2020-12-preservation`` (§7.4): echo a 2020-12 schema back untouched."""
    async with McpClient(url) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        schema = tools["json_schema_2020_12_tool"]["inputSchema"]
        await client.call_tool("json_schema_echo", {"schema": schema})


SCENARIOS: dict[str, Scenario] = {
    "sep-2322-client-request-state": request_state,
    "request-metadata": request_metadata,
    "tools_call": tools_call,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": ref_no_deref,
    "json-schema-2020-12-preservation": schema_preservation,
}


def main(argv: list[str] | None = None) -> int:
    """``argv[-1]`` is the mock server URL; the scenario comes from the environment."""
    argv = sys.argv if argv is None else argv
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per POST is just noise
    if len(argv) < 2:
        print("usage: python -m mrtr_kit.client.conformance_client SERVER_URL", file=sys.stderr)
        return 2
    url = argv[-1]
    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    scenario = SCENARIOS.get(name)
    if scenario is None:
        known = ", ".join(sorted(SCENARIOS))
        print(f"unknown scenario {name!r}; this client runs: {known}", file=sys.stderr)
        return 2
    wire = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", PROTOCOL_VERSION)
    if wire != PROTOCOL_VERSION:
        log.warning("harness asked for %s; this client speaks only %s", wire, PROTOCOL_VERSION)
    try:
        asyncio.run(scenario(url))
    except McpClientError as exc:
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
