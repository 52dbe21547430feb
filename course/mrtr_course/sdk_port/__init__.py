"""The lesson-03 port in the official MCP Python SDK (``mcp`` 2.3 on PyPI), for SDK users.

The same ``plan_trip`` as ``mrtr_course.examples.trip_planner``, written with the SDK's
``MCPServer``:

* ``trip_v1``   — the pre-2026 style: ``await ctx.elicit(message, Model)`` in the middle of the
  tool. It only works on a 2025-11-25 session; on a 2026-07-28 request the SDK has no channel
  to send the request on and the call fails (``NoBackChannelError``).
* ``trip_mrtr`` — the 2026-07-28 form: the tool reads ``ctx.input_responses`` and
  ``ctx.request_state`` and returns an ``InputRequiredResult``; the SDK seals the state. The
  SDK does not know which questions the tool asked, so the tool records the asked key in its
  state and reads only that answer (MRTR-E3), validates it (ELIC-14), and reserves once under a
  sealed nonce (MIG-3): the model to copy.
* ``trip_resolve`` — the SDK's resolvers (``Resolve``/``Elicit``): the SDK asks in whichever
  way the request's protocol version wants, so one tool serves both eras during a migration.

``python -m mrtr_course.sdk_port --style v1|mrtr|resolve --port 0`` serves one over Streamable
HTTP.

Only these modules import ``mcp``, and nothing imports them when ``mrtr_kit`` loads, so the
kit works without it; ``pip install "mrtr-kit[lab]"`` (or ``[test]``) brings it in.
"""

from __future__ import annotations

import sys


def serve_command(style: str, instance: str) -> list[str]:
    """The command that serves one instance on a free port (for ``fleet.start_processes``)."""
    return [
        sys.executable,
        "-m",
        "mrtr_course.sdk_port",
        "--style",
        style,
        "--port",
        "0",
        "--instance-name",
        instance,
    ]
