"""A 2025-11-25 server built with the official Python SDK 1.x's FastMCP (``mcp<2``):
``python sdk1_fastmcp_server.py PORT`` serves Streamable HTTP at ``http://127.0.0.1:PORT/mcp``.

Run by ``test_client_fallback.py`` with the interpreter of the ``.sdk1`` venv (never the
project's, which has ``mcp`` 2.x). Its tools ask the push way, awaiting in the middle of the
call: ``get_weather`` a login form (``await ctx.elicit(...)``), ``plan_trip`` a form and then a
sampling request (``ctx.session.create_message(..., related_request_id=...)``, on the call's
own stream) and the roots (``ctx.session.list_roots()``, which the SDK 1.x sends on the
session's standalone GET stream).
"""

from __future__ import annotations

import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel

mcp = FastMCP("sdk1-fastmcp", host="127.0.0.1", port=int(sys.argv[1]))


class Login(BaseModel):
    login: str


class Trip(BaseModel):
    city: str
    nights: int


@mcp.tool()
async def get_weather(city: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """A greeting for a signed-in user."""
    answer = await ctx.elicit(f"Sign in for the weather in {city}", schema=Login)
    if answer.action != "accept":
        return f"No personal forecast for {city}."
    return f"Hello {answer.data.login}! Sunny in {city}."


@mcp.tool()
async def plan_trip(ctx: Context) -> str:  # type: ignore[type-arg]
    """A form, a sampling request, then the roots."""
    trip = await ctx.elicit("Where to, and for how many nights?", schema=Trip)
    if trip.action != "accept":
        return "No trip planned."
    prompt = f"A title for {trip.data.nights} nights in {trip.data.city}"
    message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
    sampled = await ctx.session.create_message(
        [message], max_tokens=20, related_request_id=ctx.request_id
    )
    title = getattr(sampled.content, "text", "untitled")
    roots = await ctx.session.list_roots()  # no related request: the session's GET stream
    where = str(roots.roots[0].uri) if roots.roots else "nowhere"
    return f"{title}: {trip.data.nights} nights in {trip.data.city}, saved under {where}"


if __name__ == "__main__":
    mcp.run(transport="streamable-http")
