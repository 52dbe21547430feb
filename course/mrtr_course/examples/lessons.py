"""The kit's lesson server: every example of this package on one ``McpServer``.

One server a notebook can start once and use throughout: the weather login form (a), the
three-round table booking (b), the trip prompt and forecast resource that ask for input (c),
and the deprecated sampling and roots tools (d).
"""

from __future__ import annotations

from typing import Any

from mrtr_course.examples import booking, deprecated_inputs, travel_guide, weather
from mrtr_kit.server import KeyRing, McpServer


def build_server(state_keys: KeyRing | None = None, **options: Any) -> McpServer:
    """``state_keys`` seal its requestState: a fresh key for this process unless given
    (``serve`` passes the fleet's); ``options`` go to ``McpServer`` (codec, ledger, ...)."""
    server = McpServer(
        "mrtr-kit-lessons",
        instructions="Weather, table bookings and trip planning: each may ask you questions.",
        state_keys=state_keys or KeyRing.generate(),
        **options,
    )
    weather.register(server)
    booking.register(server)
    travel_guide.register(server)
    deprecated_inputs.register(server)
    return server
