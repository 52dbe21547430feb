"""``plan_trip`` in the official SDK, pre-2026 style: ``await ctx.elicit(...)`` mid-tool.

The SDK sends ``elicitation/create`` to the client on the session's stream and suspends the
tool until the answer comes back — to this process (see ``mrtr_course.legacy`` for the wire).
On a 2026-07-28 request there is no such stream: ``ctx.elicit`` raises ``NoBackChannelError``
and the client gets JSON-RPC error -32600 (HTTP 400).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

from mrtr_course.examples.trip_planner import HotelDesk, dates_question, ended_text
from mrtr_course.sdk_port.trip_forms import Dates, Room, room_message


def build_server(desk: HotelDesk | None = None) -> MCPServer:
    desk = desk or HotelDesk()
    mcp = MCPServer("trip-planner-sdk-v1", log_level="WARNING")

    @mcp.tool(description="Plan a trip: asks when and which room, then reserves a hotel room.")
    async def plan_trip(city: str, ctx: Context) -> str:
        hold = desk.hold(city)  # a side effect before the first question
        dates = await ctx.elicit(dates_question(city), Dates)  # waits in this process
        if dates.action != "accept":
            desk.release(hold)
            return ended_text(city, dates.action)
        start, nights = dates.data.start.isoformat(), dates.data.nights
        room = await ctx.elicit(room_message(city, start, nights), Room)  # waits again
        if room.action != "accept":
            desk.release(hold)
            return ended_text(city, room.action)
        return desk.reserve(city, start, nights, room.data.room, hold=hold).summary()

    return mcp
