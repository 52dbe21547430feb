"""The official Python SDK 1.x client (``mcp<2``, protocol 2025-11-25) against a kit server
with ``eras="both"``: ``python sdk1_legacy_client.py URL SCENARIO``.

Run by ``test_legacy_era.py`` with the interpreter of a separate venv (never the project's,
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
from mcp.client.streamable_http import streamablehttp_client


async def elicit_accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    if "login" in json.dumps(params.requestedSchema):
        return types.ElicitResult(action="accept", content={"login": "ann"})
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


async def main(url: str, scenario: str) -> None:
    headers = {"Authorization": "Bearer token-ann"}
    tool, arguments = (
        ("plan_trip", {}) if scenario == "three_rounds" else ("get_weather", {"city": "Oslo"})
    )
    async with (
        streamablehttp_client(url, headers=headers) as (read, write, _),
        ClientSession(
            read,
            write,
            elicitation_callback=elicit_decline if scenario == "decline" else elicit_accept,
            sampling_callback=sample,
            list_roots_callback=roots,
        ) as session,
    ):
        init = await session.initialize()
        result = await session.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    print(
        json.dumps(
            {"protocolVersion": init.protocolVersion, "text": text, "isError": bool(result.isError)}
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
