"""``plan_trip`` in the official SDK with resolvers: one tool for both protocol eras.

Each question is a *resolver* returning ``Elicit(message, Model)``; the tool declares what it
needs with ``Annotated[Model, Resolve(resolver)]``. The SDK asks the way the request's protocol
version wants: a server-to-client ``elicitation/create`` on a 2025-11-25 session, an
``InputRequiredResult`` (state sealed by the SDK) on a 2026-07-28 request. The room resolver
depends on the dates resolver, so the questions come one after the other.

The tool body runs after every answer is in, once per final retry that arrives: a client whose
response was lost sends that retry again (HTTP-26), so a side effect that must happen once needs
a key the repeat can be recognised by (``trip_mrtr`` seals a nonce in its state; MIG-3).
Resolvers may run again on later rounds, so they must stay free of side effects. A declined
question ends the call with an error result (the unwrapped ``Model`` form).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve

from mrtr_course.examples.trip_planner import HotelDesk, dates_question
from mrtr_course.sdk_port.trip_forms import Dates, Room, room_message
from mrtr_course.sdk_port.trip_mrtr import security_from_env


def ask_dates(city: str) -> Elicit[Dates]:
    return Elicit(dates_question(city), Dates)


def ask_room(city: str, dates: Annotated[Dates, Resolve(ask_dates)]) -> Elicit[Room]:
    return Elicit(room_message(city, dates.start.isoformat(), dates.nights), Room)


def build_server(desk: HotelDesk | None = None) -> MCPServer:
    desk = desk or HotelDesk()
    mcp = MCPServer(
        "trip-planner-sdk-resolve", log_level="WARNING", request_state_security=security_from_env()
    )

    @mcp.tool(description="Plan a trip: asks when and which room, then reserves a hotel room.")
    async def plan_trip(
        city: str,
        dates: Annotated[Dates, Resolve(ask_dates)],
        room: Annotated[Room, Resolve(ask_room)],
    ) -> str:
        start = dates.start.isoformat()
        return desk.reserve(city, start, dates.nights, room.room).summary()

    return mcp
