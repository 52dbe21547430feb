"""Demo servers for the lessons, and the conformance server.

Each module has ``build_server(state_keys=None, **options) -> McpServer`` (a fresh key for
one process unless given; ``options`` go to ``McpServer``); ``EXAMPLES`` maps the names that
``python -m mrtr_kit serve --example NAME`` accepts to those builders:

* ``lessons`` — all lesson examples on one server (the one the notebooks start);
* ``weather`` — a tool that needs your login through a form (form elicitation);
* ``booking`` — a three-round tool that carries earlier answers in ``requestState``;
* ``travel-guide`` — a prompt and a resource template that ask for input;
* ``deprecated-inputs`` — a sampling tool and a roots tool (both deprecated in 2026-07-28);
* ``url-login`` — a tool that needs a sign-in on a web page (URL-mode elicitation, lesson 01);
* ``refunds`` — a refund whose approved amount travels in ``requestState``, paid once (lesson 02);
* ``trip-planner`` — a two-question tool ported from 2025-11-25 (lesson 03); its original is in
  ``LEGACY_EXAMPLES`` (``serve --example trip-planner --legacy``);
* ``conformance`` (``conformance_server.py``) — every tool, prompt and resource the official
  conformance suite expects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mrtr_course.examples import (
    booking,
    conformance_server,
    deprecated_inputs,
    lessons,
    refunds,
    travel_guide,
    trip_planner,
    url_login,
    weather,
)
from mrtr_kit.server import McpServer

if TYPE_CHECKING:
    from mrtr_course.legacy import LegacyServer

EXAMPLES: dict[str, Callable[..., McpServer]] = {
    "lessons": lessons.build_server,
    "weather": weather.build_server,
    "booking": booking.build_server,
    "travel-guide": travel_guide.build_server,
    "deprecated-inputs": deprecated_inputs.build_server,
    "url-login": url_login.build_server,
    "refunds": refunds.build_server,
    "trip-planner": trip_planner.build_server,
    "conformance": conformance_server.build_server,
}

# 2025-11-25 originals, for the migration lesson: builders taking shared_sessions and
# answer_timeout_s (see ``trip_planner.build_legacy_server``).
LEGACY_EXAMPLES: dict[str, Callable[..., LegacyServer]] = {
    "trip-planner": trip_planner.build_legacy_server,
}

__all__ = ["EXAMPLES", "LEGACY_EXAMPLES"]
