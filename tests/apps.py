"""Servers for the library's tests, built on the library alone (``serve --app tests.apps:NAME``
from the repository's root), so that ``tests/library`` needs no course installed.

* ``weather`` — ``get_weather`` asks for a login through a form (MRTR-E4) and greets it:
  ``Hello <login>! …``; a decline or a cancel ends the call (ELIC-6).
"""

from __future__ import annotations

from typing import Any

from mrtr_kit.server import McpServer, RequestContext

LOGIN_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"login": {"type": "string", "minLength": 3}, "units": {"type": "string"}},
    "required": ["login"],
}


def get_weather(ctx: RequestContext) -> Any:
    login = ctx.form("login", f"Sign in for the weather in {ctx.arguments['city']}", LOGIN_FORM)
    if login.needs_asking:
        return login.ask()
    if login.declined or login.cancelled:
        return f"No personal forecast for {ctx.arguments['city']}."
    return f"Hello {login.content['login']}! Sunny in {ctx.arguments['city']}."


def weather(**state: Any) -> McpServer:
    """A factory ``serve --app`` calls with its keys, codec and ledger."""
    server = McpServer(name="test-weather", **state)
    server.tool("get_weather", description="A greeting for a signed-in user.")(get_weather)
    return server
