"""The official Python SDK 1.x client (``mcp<2``, protocol 2025-11-25) against a kit server
with ``eras="both"``: ``python sdk1_legacy_client.py URL SCENARIO`` over Streamable HTTP, or
``python sdk1_legacy_client.py stdio SCENARIO '{"command": ..., "args": [...], "env": {...},
"cwd": ...}'`` over stdio (the SDK's ``stdio_client`` starts the server as its child).

Run by ``test_era2025_http.py`` with the interpreter of a separate venv (never the project's,
which has ``mcp`` 2.x). It answers pushed requests with the SDK's own callbacks
(``elicitation_callback``, ``sampling_callback``, ``list_roots_callback``) and prints one JSON
line: the negotiated version, the tool result's text and ``isError``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamablehttp_client


async def elicit_accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    schema = json.dumps(params.requestedSchema)
    if "login" in schema:
        return types.ElicitResult(action="accept", content={"login": "ann"})
    if '"name"' in schema:
        return types.ElicitResult(action="accept", content={"name": "Bea"})
    if '"ok"' in schema:
        return types.ElicitResult(action="accept", content={"ok": True})
    return types.ElicitResult(action="accept", content={"city": "Lyon", "nights": 3})


async def elicit_decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


async def sample(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    text = types.TextContent(type="text", text="Lyon in spring")
    return types.CreateMessageResult(role="assistant", content=text, model="stand-in")


async def roots(context: Any) -> types.ListRootsResult:
    root = types.Root(uri="file:///home/ann/trips", name="trips")  # type: ignore[arg-type]
    return types.ListRootsResult(roots=[root])


def transport(url: str, spawn: str | None) -> Any:
    """The SDK's Streamable HTTP client for a URL; its stdio client for ``stdio``."""
    if url == "stdio":
        assert spawn is not None
        return stdio_client(StdioServerParameters(**json.loads(spawn)))
    return streamablehttp_client(url, headers={"Authorization": "Bearer token-ann"})


async def main(url: str, scenario: str, spawn: str | None = None) -> None:
    tool, arguments = (
        ("plan_trip", {}) if scenario == "three_rounds" else ("get_weather", {"city": "Oslo"})
    )
    callback = {"decline": elicit_decline, "no_elicitation": None}.get(scenario, elicit_accept)
    async with (
        transport(url, spawn) as streams,
        ClientSession(
            streams[0],
            streams[1],
            elicitation_callback=callback,
            sampling_callback=sample,
            list_roots_callback=roots,
        ) as session,
    ):
        init = await session.initialize()
        if scenario == "prompt_and_resource":
            prompt = await session.get_prompt("greeting", {})
            note = await session.read_resource("secret://note")  # type: ignore[arg-type]
            text = f"{prompt.messages[0].content.text} / {note.contents[0].text}"  # type: ignore[union-attr]
            is_error = False
        else:
            result = await session.call_tool(tool, arguments)
            text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
            is_error = bool(result.isError)
    print(json.dumps({"protocolVersion": init.protocolVersion, "text": text, "isError": is_error}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
