"""Lesson: a tool that needs the user's login before it answers (form elicitation).

``get_weather`` cannot answer until it knows who is asking. Instead of sending the client a
request (the 2025-11-25 way), it *returns* ``input_required`` with a form; the client asks the
user and calls the tool again with the answer in ``inputResponses`` (MRTR-0, MIG-2).

What the handler does with the ``login`` answer on each call (digest §6.3 decision table):

============================================  ==============================================
the call carries for ``login``                the handler returns
============================================  ==============================================
nothing (first call, or the key is missing)   input_required: the login form (MRTR-E4)
``decline``                                   input_required again, saying why it needs it
``cancel``                                    a complete, polite result: nothing was done
``accept`` that does not fit the form         input_required again, naming the problems
``accept`` that fits                          the forecast
============================================  ==============================================

No ``requestState`` is needed: there is nothing to carry between rounds (MRTR-S3 is a MAY).
The question is a pure function of the arguments and the last answer, so the same request
always gets the same question (a client may show it again safely).
"""

from __future__ import annotations

from typing import Any

from ..protocol.elicitation import validate_content
from ..protocol.models import ElicitRequest
from ..server import KeyRing, McpServer, RequestContext
from ..server.context import elicit_form
from . import fake_weather
from .forms import explain

# ELIC-14: a form never asks for a secret. A *login name* is fine; a password or an API key
# would have to go through URL-mode elicitation instead.
LOGIN_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "login": {
            "type": "string",
            "title": "Your login",
            "description": "The user name you use with the weather service (no password).",
            "minLength": 3,
            "maxLength": 32,
        },
        "units": {
            "type": "string",
            "title": "Units",
            "oneOf": [
                {"const": "celsius", "title": "Celsius (°C)"},
                {"const": "fahrenheit", "title": "Fahrenheit (°F)"},
            ],
            "default": "celsius",
        },
    },
    "required": ["login"],
}

CITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "minLength": 1, "description": "e.g. Paris"}},
    "required": ["city"],
}


def ask_login(city: str, why: str | None = None) -> ElicitRequest:
    message = f"Sign in to see the weather for {city}: which login should I use?"
    return elicit_form(f"{why} {message}" if why else message, LOGIN_FORM)


def get_weather(ctx: RequestContext) -> Any:
    city = ctx.arguments["city"]
    answer = ctx.elicitation("login")  # None if absent; -32602 if malformed (MRTR-E1)
    if answer is None:
        return ctx.input_required({"login": ask_login(city)})
    if answer.action == "cancel":
        # The user dismissed the form: stop, politely. Not an error of the tool.
        return f"No forecast for {city}: sign-in was cancelled."
    if answer.action == "decline":
        why = "The weather service only answers signed-in users."
        return ctx.input_required({"login": ask_login(city, why)})
    problems = validate_content(LOGIN_FORM, answer.content)  # ELIC-14: server validates
    if problems:
        return ctx.input_required({"login": ask_login(city, explain(problems))})
    content = answer.content or {}
    # ELIC-16: a name typed into a form is not an identity. It only personalises the text;
    # anything that grants access must use the authenticated principal (ctx.principal).
    units = str(content.get("units", "celsius"))
    return f"Hello {content['login']}! Weather now in {fake_weather.describe(city, 0, units)}."


def register(server: McpServer) -> None:
    server.tool(
        "get_weather",
        description="Current weather for a city. Asks you to sign in first (form elicitation).",
        input_schema=CITY_SCHEMA,
        annotations={"readOnlyHint": True},
    )(get_weather)


def build_server(state_keys: KeyRing | None = None, **options: Any) -> McpServer:
    """``state_keys`` seal its requestState: a fresh key for this process unless given
    (``serve`` passes the fleet's); ``options`` go to ``McpServer`` (codec, ledger, ...)."""
    server = McpServer(
        "weather-example",
        instructions="Ask for the weather in any city.",
        state_keys=state_keys or KeyRing.generate(),
        **options,
    )
    register(server)
    return server
