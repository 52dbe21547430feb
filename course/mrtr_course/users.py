"""Scripted users: answer handlers that fill in forms the way a checkpoint needs.

``scripted_user(**content)`` is shared by lesson 03's checkpoints and lesson 04's gate; the trip
planner's own scripted user is ``mrtr_course.examples.trip_planner.traveller``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mrtr_kit.protocol.models import ElicitRequestFormParams, ElicitResult


def scripted_user(**content: Any) -> Callable[[ElicitRequestFormParams, Any], ElicitResult]:
    """A scripted user for checkpoints: accepts each form with the fields it asks for (from
    ``content``), declines a form that asks for none of them."""

    def answer(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
        fields = params.requested_schema.get("properties", {})
        wanted = {k: v for k, v in content.items() if k in fields}
        return (
            ElicitResult(action="accept", content=wanted)
            if wanted
            else ElicitResult(action="decline")
        )

    return answer
