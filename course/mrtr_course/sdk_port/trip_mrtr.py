"""``plan_trip`` in the official SDK, 2026-07-28 style: return ``InputRequiredResult``.

The tool runs once per round. It reads the answers of the last round from
``ctx.input_responses`` and what earlier rounds learned from ``ctx.request_state`` — the
plaintext it wrote itself: the SDK seals every outgoing state (AES-256-GCM, bound to this
tool, these arguments and an expiry) and verifies every incoming one before the tool runs.
Instances of a fleet must share the key (``RequestStateSecurity(keys=[...])``), here taken
from ``MRTR_KIT_STATE_KEY(S)`` like the kit's own servers.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from pydantic import BaseModel, ValidationError

from mrtr_course.examples.trip_planner import HotelDesk, dates_question
from mrtr_course.sdk_port.trip_forms import Dates, Room, room_message
from mrtr_kit.server.keyring import KeyRing


def ask(message: str, model: type[BaseModel]) -> ElicitRequest:
    schema = render_elicitation_schema(model)
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def accepted(answer: Any, model: type[BaseModel]) -> Any:
    """The validated answer if the user accepted it, else None (declined, cancelled, invalid)."""
    if not isinstance(answer, ElicitResult) or answer.action != "accept":
        return None
    try:
        return model.model_validate(answer.content or {})
    except ValidationError:
        return None


def security_from_env() -> RequestStateSecurity:
    """The kit's key ring (``MRTR_KIT_STATE_KEYS`` / ``MRTR_KIT_STATE_KEY``; a random key if
    neither is set) as the SDK's: the first key seals, every key opens."""
    keys = KeyRing.from_env() or KeyRing.generate()
    return RequestStateSecurity(keys=[key.secret for key in keys])


def build_server(desk: HotelDesk | None = None) -> MCPServer:
    desk = desk or HotelDesk()
    mcp = MCPServer(
        "trip-planner-sdk-mrtr", log_level="WARNING", request_state_security=security_from_env()
    )

    @mcp.tool(description="Plan a trip: asks when and which room, then reserves a hotel room.")
    async def plan_trip(city: str, ctx: Context) -> str | InputRequiredResult:
        caps = ctx.client_capabilities  # MIG-4: this request's, on every round
        forms = caps.elicitation if caps is not None else None
        # An empty `elicitation: {}` means form mode; `{"url": {}}` alone does not (§2.9).
        if forms is None or (forms.form is None and forms.url is not None):
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="plan_trip needs form elicitation",
                data={"requiredCapabilities": {"elicitation": {"form": {}}}},
            )
        answers = ctx.input_responses or {}
        state = json.loads(ctx.request_state) if ctx.request_state else {}  # MIG-2
        if "nights" not in state:
            if "dates" not in answers:  # round 1: ask, carrying an (empty) state
                return InputRequiredResult(
                    input_requests={"dates": ask(dates_question(city), Dates)},
                    request_state=json.dumps(state),
                )
            dates = accepted(answers["dates"], Dates)
            if dates is None:
                return f"Trip to {city} cancelled. Nothing was reserved."
            state = {"start": dates.start.isoformat(), "nights": dates.nights}
        if "room" not in answers:  # MIG-2: the dates ride along in request_state
            message = room_message(city, state["start"], state["nights"])
            return InputRequiredResult(
                input_requests={"room": ask(message, Room)}, request_state=json.dumps(state)
            )
        room = accepted(answers["room"], Room)
        if room is None:
            return f"Trip to {city} cancelled. Nothing was reserved."
        # MIG-3: the only side effect, after the last answer.
        return desk.reserve(city, state["start"], state["nights"], room.room).summary()

    return mcp
