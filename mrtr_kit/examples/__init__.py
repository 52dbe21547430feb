"""Demo servers for the lessons, and the conformance server.

Each module has ``build_server() -> McpServer``; ``EXAMPLES`` maps the names that
``python -m mrtr_kit serve --example NAME`` accepts to those builders:

* ``lessons`` — all lesson examples on one server (the one the notebooks start);
* ``weather`` — a tool that needs your login through a form (form elicitation);
* ``booking`` — a three-round tool that carries earlier answers in ``requestState``;
* ``travel-guide`` — a prompt and a resource template that ask for input;
* ``deprecated-inputs`` — a sampling tool and a roots tool (both deprecated in 2026-07-28);
* ``conformance`` — every tool, prompt and resource the official conformance suite expects.
"""

from __future__ import annotations

from collections.abc import Callable

from ..server import McpServer
from . import booking, conformance, deprecated_inputs, lessons, travel_guide, weather

EXAMPLES: dict[str, Callable[[], McpServer]] = {
    "lessons": lessons.build_server,
    "weather": weather.build_server,
    "booking": booking.build_server,
    "travel-guide": travel_guide.build_server,
    "deprecated-inputs": deprecated_inputs.build_server,
    "conformance": conformance.build_server,
}

__all__ = ["EXAMPLES"]
