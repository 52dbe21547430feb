"""Lesson: a tool that needs the user's login before it answers (form elicitation).

``get_weather`` cannot answer until it knows who is asking. Instead of sending the client a
request (the 2025-11-25 way), it *returns* ``input_required`` with a form; the client asks the
user and calls the tool again with the answer in ``inputResponses`` (MRTR-0, MIG-2).

What the handler does with the ``login`` answer on each call (MRTR-E1 to MRTR-E4, ELIC-6 and
ELIC-14 in docs/spec-map.md):

============================================  ==============================================
the call carries for ``login``                the handler returns
============================================  ==============================================
nothing (first call, or the key is missing)   input_required: the login form (MRTR-E4)
``decline``                                   the public forecast instead: the "no" is final
``cancel``                                    a polite result: dismissed, ask again later
``accept`` that does not fit the form         input_required again, naming the problems
``accept`` that fits                          the forecast
============================================  ==============================================

Decline and cancel follow the spec's elicitation page (ELIC-6): a decline is an explicit
"no", so the tool respects it and offers an alternative (the forecast without the personal
touch); a cancel means the form was dismissed without a choice, so the tool says nothing was
done and that the user can ask again later. Neither asks again within the same call, the kit's
choice (KIT): re-asking is allowed (MRTR-S8 MAY, MRTR-E4 SHOULD), but it would ignore the user's
answer.

``ctx.form`` reads the answer and checks it against the form; ``login.ask()`` returns the
``input_required`` (with the reason first, after a bad answer). The tool carries nothing of
its own between rounds. The key ``login`` and the form's fields stay the same on every run;
only the message changes.
"""

from __future__ import annotations

from typing import Any

from mrtr_course.examples import fake_weather
from mrtr_kit.server import KeyRing, McpServer, RequestContext

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

# What the tool says when the user declines or cancels; tests and lessons read these.
DECLINED = "You chose not to sign in, so no personal forecast for {city}. The public one: {public}."
CANCELLED = "No forecast for {city}: the sign-in was dismissed. Ask again when you want to sign in."

CITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string", "minLength": 1, "description": "e.g. Paris"}},
    "required": ["city"],
}


def get_weather(ctx: RequestContext) -> Any:
    city = ctx.arguments["city"]
    question = f"Sign in to see the weather for {city}: which login should I use?"
    login = ctx.form("login", question, LOGIN_FORM)  # checked against the form (ELIC-14)
    if login.needs_asking:  # no answer yet, or one that does not fit: ask (MRTR-E4)
        return login.ask()  # after a bad answer, the message says what was wrong
    if login.declined:  # an explicit no: respect it, offer an alternative (ELIC-6)
        return DECLINED.format(city=city, public=fake_weather.describe(city, 0))
    if login.cancelled:  # dismissed: nothing done, ask again later (ELIC-6)
        return CANCELLED.format(city=city)
    # ELIC-16: a typed name is not an identity; it only personalises the text.
    name, units = login.content["login"], login.content.get("units", "celsius")
    return f"Hello {name}! Weather now in {fake_weather.describe(city, 0, units)}."


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
