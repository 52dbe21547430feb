"""The kit's ``get_weather`` (``mrtr_course.examples.weather``) in the official SDK, for
``bench_flows.py``: the same two-round flow, so both servers do the same protocol work.

Round 1 has no ``login`` answer: ``InputRequiredResult`` with the same login form. Round 2
carries the accepted answer: the forecast. No ``requestState`` on either side (the kit's
example needs none). Served like ``mrtr_course.sdk_port``: the SDK's Streamable HTTP app under
uvicorn's defaults, on loopback, printing its URL once bound.

    .venv/bin/python benchmarks/sdk_weather.py [--port 0]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

from mrtr_course.examples import fake_weather
from mrtr_course.examples.weather import CANCELLED, DECLINED, LOGIN_FORM
from mrtr_kit.server.http import bind_tcp


def ask_login(city: str, why: str | None = None) -> ElicitRequest:
    message = f"Sign in to see the weather for {city}: which login should I use?"
    text = f"{why} {message}" if why else message
    return ElicitRequest(params=ElicitRequestFormParams(message=text, requested_schema=LOGIN_FORM))


def build_server() -> MCPServer:
    mcp = MCPServer("weather-sdk", log_level="WARNING")

    @mcp.tool(description="Current weather for a city. Asks you to sign in first.")
    async def get_weather(city: str, ctx: Context) -> str | InputRequiredResult:
        answer: Any = (ctx.input_responses or {}).get("login")
        if not isinstance(answer, ElicitResult):
            return InputRequiredResult(input_requests={"login": ask_login(city)})
        if answer.action == "decline":  # ELIC-6: respect the "no", offer an alternative
            return DECLINED.format(city=city, public=fake_weather.describe(city, 0))
        if answer.action == "cancel":  # ELIC-6: dismissed; they may ask again later
            return CANCELLED.format(city=city)
        content = answer.content or {}
        login = content.get("login")
        if not isinstance(login, str) or not 3 <= len(login) <= 32:
            why = "Please check your answer: login must be 3 to 32 characters."
            return InputRequiredResult(input_requests={"login": ask_login(city, why)})
        units = str(content.get("units", "celsius"))
        return f"Hello {login}! Weather now in {fake_weather.describe(city, 0, units)}."

    return mcp


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    app = build_server().streamable_http_app(host="127.0.0.1")
    sock = bind_tcp("127.0.0.1", args.port)
    print(f"Serving the SDK's get_weather at http://127.0.0.1:{sock.getsockname()[1]}/mcp")
    sys.stdout.flush()
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
