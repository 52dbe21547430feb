"""The two questions of ``plan_trip`` as pydantic models, the way SDK tools describe forms.

The SDK renders a model to a form-mode ``requestedSchema`` (flat, primitive fields only) and
validates an accepted answer against it.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

from mrtr_course.examples.trip_planner import ROOM_PRICES


class Dates(BaseModel):
    start: dt.date = Field(title="Arrival")
    nights: int = Field(default=3, ge=1, le=14, title="Nights")


class Room(BaseModel):
    room: Literal["single", "double", "suite"] = Field(default="double", title="Room")


def room_message(city: str, start: str, nights: int) -> str:
    prices = ", ".join(f"{room} {price * nights} EUR" for room, price in ROOM_PRICES.items())
    return f"{nights} nights in {city} from {start}: which room? ({prices})"
