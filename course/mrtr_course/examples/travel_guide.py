"""Lesson: MRTR is not only for tools — a prompt and a resource that ask for input.

``prompts/get`` and ``resources/read`` may also return ``input_required`` (MRTR-R1); every
other method may not (MRTR-R2). This module serves:

* the prompt ``plan_trip`` — before it writes the prompt text it asks how you like to travel
  (a form with a single-select, a number and a multi-select). Declining is fine here: the
  prompt then uses the form's defaults: after a decline a server may finish anyway or ask
  again (MRTR-S8 MAY, MRTR-E4 SHOULD), and this one finishes;
* the resource template ``weather://forecast/{city}`` — reading it asks which units you want.
  A result reached through a retry depends on the answer, which is not part of any cache key,
  so the core marks it ``ttlMs: 0`` / ``cacheScope: "private"`` (CACHE-3);
* the static resource ``weather://cities`` — no input, cacheable by anyone (CACHE-1).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from mrtr_course.examples import fake_weather
from mrtr_kit.server import KeyRing, McpServer, RequestContext

STYLE_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pace": {
            "type": "string",
            "title": "Pace",
            "oneOf": [
                {"const": "relaxed", "title": "Relaxed"},
                {"const": "balanced", "title": "Balanced"},
                {"const": "packed", "title": "Packed"},
            ],
            "default": "balanced",
        },
        "days": {"type": "integer", "title": "Days", "minimum": 1, "maximum": 14, "default": 3},
        "interests": {
            "type": "array",
            "title": "Interests",
            "items": {"type": "string", "enum": ["food", "museums", "outdoors", "nightlife"]},
            "maxItems": 3,
            "default": ["food"],
        },
    },
    "required": ["pace", "days"],
}

UNITS_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "units": {"type": "string", "title": "Units", "enum": list(fake_weather.UNITS)},
    },
    "required": ["units"],
}


def form_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: p["default"] for k, p in schema["properties"].items() if "default" in p}


def plan_trip(ctx: RequestContext) -> Any:
    city = ctx.arguments["city"]
    question = f"Planning a trip to {city}: how do you like to travel?"
    answer = ctx.form("style", question, STYLE_FORM)  # checked against the form (ELIC-14)
    if answer.needs_asking:  # no answer yet, or one that does not fit: ask (MRTR-E4)
        return answer.ask()
    if answer.accepted:
        style = {**form_defaults(STYLE_FORM), **answer.content}
        note = ""
    else:  # declined or cancelled: the prompt is still useful with the defaults
        style = form_defaults(STYLE_FORM)
        note = " (The traveller skipped the questions, so these are defaults.)"
    interests = " and ".join(style.get("interests") or []) or "a bit of everything"
    today = fake_weather.describe(city)
    return (
        f"Plan a {style['days']}-day, {style['pace']} trip to {city} for someone who enjoys "
        f"{interests}. Today's weather in {today}.{note}"
    )


def read_forecast(ctx: RequestContext) -> Any:
    city = unquote(ctx.uri_params["city"])
    answer = ctx.form("units", f"Which units for the {city} forecast?", UNITS_FORM)
    if answer.needs_asking:  # no answer yet, or not one of the units: ask (MRTR-E4)
        return answer.ask()
    # Declined or cancelled: fall back to a sensible default.
    units = str(answer.content["units"]) if answer.accepted else "celsius"
    days = [fake_weather.describe(city, day, units) for day in range(7)]
    return "\n".join(f"Day {n}: {line}" for n, line in enumerate(days, start=1))


def list_cities(ctx: RequestContext) -> str:
    return "\n".join(fake_weather.CITIES)


def register(server: McpServer) -> None:
    server.prompt(
        "plan_trip",
        description="A trip-planning prompt. Asks how you like to travel (form elicitation).",
        arguments=[{"name": "city", "description": "Where to go", "required": True}],
        completions={"city": list(fake_weather.CITIES)},
    )(plan_trip)
    server.resource(
        "weather://cities",
        name="cities",
        description="Cities the pretend weather service knows well.",
        ttl_ms=3_600_000,
        cache_scope="public",
    )(list_cities)
    server.resource_template(
        "weather://forecast/{city}",
        name="forecast",
        description="A 7-day forecast. Asks which units you want (form elicitation).",
    )(read_forecast)


def build_server(state_keys: KeyRing | None = None, **options: Any) -> McpServer:
    """``state_keys`` seal its requestState: a fresh key for this process unless given
    (``serve`` passes the fleet's); ``options`` go to ``McpServer`` (codec, ledger, ...)."""
    server = McpServer(
        "travel-guide-example",
        instructions="Plan trips; read forecasts.",
        state_keys=state_keys or KeyRing.generate(),
        **options,
    )
    register(server)
    return server
