"""``plan_trip`` in the official SDK, 2026-07-28 style: return ``InputRequiredResult``.

The tool runs once per round. It reads the answers of the last round from
``ctx.input_responses`` and what earlier rounds learned from ``ctx.request_state``: the
plaintext it wrote itself. The SDK seals every outgoing state (AES-256-GCM, bound to this
tool, these arguments and an expiry) and verifies every incoming one before the tool runs.
Instances of a fleet must share the key (``RequestStateSecurity(keys=[...])``), here taken
from ``MRTR_KIT_STATE_KEY(S)`` like the kit's own servers.

What the SDK does **not** do is know which questions the tool asked. The kit's core seals the
asked keys into every state and drops any other answer; with the SDK the tool does it:

* the state records the one key this round asks (``"asked"``), as the kit's core does for every
  state (SEC-6 (KIT)); on the retry the tool reads only the answer under that key, and only
  with a state it issued. An answer nobody asked for (sent
  early, or with no ``requestState`` at all) is ignored (MRTR-E3 SHOULD), so a first
  ``tools/call`` carrying both answers is asked the first question;
* an accepted answer is validated against its model (ELIC-14 SHOULD); one that does not fit is
  asked again, saying what was wrong (MRTR-E4 SHOULD); an ``accept`` with no content is one
  that does not fit;
* capabilities are checked where the tool is about to ask (CAP-2 MUST): a final retry that
  needs no more input is never refused;
* the reservation happens after the last answer, once (MIG-3): round 2 seals a random nonce
  into the state, and a final retry that arrives twice (HTTP-26) gets the reservation made
  under it back.
"""

from __future__ import annotations

import json
import secrets
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

from mrtr_course.examples.trip_planner import HotelDesk, dates_question, ended_text
from mrtr_course.sdk_port.trip_forms import Dates, Room, room_message
from mrtr_kit.server.keyring import KeyRing


def ask_form(message: str, model: type[BaseModel]) -> ElicitRequest:
    schema = render_elicitation_schema(model)
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def problem(answer: ElicitResult, model: type[BaseModel]) -> str | None:
    """What is wrong with an accepted answer, checked against the form's model (ELIC-14), or
    None when it fits. An ``accept`` with no content does not fit: defaults are the form's
    suggestion to the user, not an answer."""
    if not answer.content:
        return "the answer had no content."
    try:
        model.model_validate(answer.content or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the answer"
        return f"{where}: {first['msg']}."
    return None


def answer_to(ctx: Context, state: dict[str, Any], key: str) -> ElicitResult | None:
    """The answer to ``key``, only if this round's state says ``key`` was asked (MRTR-E3): an
    answer sent early or with no state is ignored, as if it had not come. So is a reply of
    another kind under the key (a roots or sampling result): it answers no form."""
    if state.get("asked") != key:
        return None
    answer = (ctx.input_responses or {}).get(key)  # the SDK has parsed each reply by its shape
    return answer if isinstance(answer, ElicitResult) else None


def ask(
    ctx: Context, state: dict[str, Any], key: str, message: str, model: type[BaseModel]
) -> InputRequiredResult:
    """Ask the form question ``key``, recording in the state that it was asked (MRTR-E3).

    Capabilities are this request's, checked here, where the tool asks (MIG-4, CAP-2): a final
    retry that needs no more input is never refused."""
    caps = ctx.client_capabilities
    forms = caps.elicitation if caps is not None else None
    # An empty `elicitation: {}` means form mode; `{"url": {}}` alone does not.
    if forms is None or (forms.form is None and forms.url is not None):
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="plan_trip needs form elicitation",
            data={"requiredCapabilities": {"elicitation": {"form": {}}}},
        )
    carried = {**state, "asked": key}  # the SDK seals it: the retry proves what was asked
    return InputRequiredResult(
        input_requests={key: ask_form(message, model)}, request_state=json.dumps(carried)
    )


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
        state = json.loads(ctx.request_state) if ctx.request_state else {}  # MIG-2, verified
        if "nights" not in state:
            dates = answer_to(ctx, state, "dates")
            if dates is None:  # round 1, or an answer nobody asked for (MRTR-E3)
                return ask(ctx, state, "dates", dates_question(city), Dates)
            if dates.action != "accept":  # the kit does not ask again after a no (KIT)
                return ended_text(city, dates.action)
            if wrong := problem(dates, Dates):  # ELIC-14: ask again, saying why (MRTR-E4)
                return ask(ctx, state, "dates", f"{wrong} {dates_question(city)}", Dates)
            when = Dates.model_validate(dates.content or {})
            state = {
                "start": when.start.isoformat(),
                "nights": when.nights,
                "nonce": secrets.token_urlsafe(16),  # this trip's booking key (MIG-3)
            }
        message = room_message(city, state["start"], state["nights"])
        room = answer_to(ctx, state, "room")
        if room is None:  # the dates ride along in request_state (MIG-2)
            return ask(ctx, state, "room", message, Room)
        if room.action != "accept":
            return ended_text(city, room.action)
        if wrong := problem(room, Room):
            return ask(ctx, state, "room", f"{wrong} {message}", Room)
        choice = Room.model_validate(room.content or {})
        # MIG-3: after the last answer, once: a repeated final retry gets this nonce's booking
        return desk.reserve(
            city, state["start"], state["nights"], choice.room, key=state["nonce"]
        ).summary()

    return mcp
