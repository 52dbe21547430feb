"""Servers for the library's tests, built on the library alone (``serve --app tests.apps:NAME``
from the repository's root), so that ``tests/library`` needs no course installed.

* ``weather`` — ``get_weather`` asks for a login through a form (MRTR-E4) and greets it:
  ``Hello <login>! …``; a decline or a cancel ends the call (ELIC-6).
* ``both_eras`` — the same ``get_weather``, plus ``plan_trip`` (three rounds: a form, a
  sampling request, a roots request), ``link_account`` (URL mode, then "still waiting" rounds
  until ``LINKED`` holds the user), the prompt ``greeting`` (asks a form) and the resource
  ``secret://note`` (asks for a confirmation), and ``pay`` (a confirmation, then
  ``redeem_once()``, then ``PAID``): the handlers ``tests/library/test_era2025_http.py``
  serves to 2025-11-25 and 2026-07-28 clients alike.
"""

from __future__ import annotations

import json
from typing import Any

from mrtr_kit.server import McpServer, RequestContext
from mrtr_kit.server.context import create_message, elicit_url, list_roots

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


TRIP_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "nights": {"type": "integer", "minimum": 1}},
    "required": ["city", "nights"],
}
CONFIRM_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
LINKED: set[str] = set()  # who finished link_account's out-of-band step (its own store, ELIC-9)


def plan_trip(ctx: RequestContext) -> Any:
    """Three rounds, one of each kind: a form, a sampling request, the roots (MIG-2)."""
    state = dict(ctx.state or {})
    if "city" not in state:
        trip = ctx.form("trip", "Where to, and for how many nights?", TRIP_FORM)
        if trip.needs_asking:
            return trip.ask()
        if not trip.accepted:
            return "No trip planned."
        state.update(city=trip.content["city"], nights=trip.content["nights"])
    if "title" not in state:
        sampled = ctx.sampling("title")
        if sampled is None:
            prompt = f"A title for {state['nights']} nights in {state['city']}"
            return ctx.input_required({"title": create_message(prompt, max_tokens=20)}, state)
        content = sampled.content
        state["title"] = getattr(content, "text", "untitled")
    roots = ctx.roots("roots")
    if roots is None:
        return ctx.input_required({"roots": list_roots()}, state)
    where = roots.roots[0].uri if roots.roots else "nowhere"
    return f"{state['title']}: {state['nights']} nights in {state['city']}, saved under {where}"


def link_account(ctx: RequestContext) -> Any:
    """URL mode: send the user to a page, then wait (state-only rounds) until it is done."""
    user = ctx.arguments["user"]
    if ctx.state is None:
        url = f"https://accounts.example/link?session={user}"
        return ctx.input_required({"link": elicit_url("Link your account", url)}, {"went": False})
    went = ctx.state["went"]
    answer = ctx.elicitation("link")
    if answer is not None:
        if answer.action != "accept":
            return "Not linked."
        went = True
    if user in LINKED:
        return f"Linked {user}."
    return ctx.input_required(None, {"went": went})  # still waiting (MRTR-S3)


def greeting(ctx: RequestContext) -> Any:
    """A prompt that asks a form before it answers."""
    who = ctx.form(
        "who",
        "Who is this for?",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    if who.needs_asking:
        return who.ask()
    name = who.content["name"] if who.accepted else "friend"
    return f"Write a greeting for {name}."


def note(ctx: RequestContext) -> Any:
    """A resource that asks for a confirmation before it is read."""
    ok = ctx.form("confirm", "Show the secret note?", CONFIRM_FORM)
    if ok.needs_asking:
        return ok.ask()
    return "the note" if ok.accepted and ok.content["ok"] else "hidden"


PAID: list[str] = []  # pay's one-time step, done once per confirmation (MRTR-S5d)


async def pay(ctx: RequestContext) -> Any:
    """Asks for a confirmation, spends the round's state, then pays once; reports progress."""
    ok = ctx.form("confirm", "Pay 10 EUR?", CONFIRM_FORM)
    if ok.needs_asking:
        await ctx.progress(0, 2, "asking")
        return ok.ask()
    if not (ok.accepted and ok.content["ok"]):
        return "Not paid."
    await ctx.redeem_once()  # a replay of this round's state is refused
    PAID.append(ctx.principal or "anonymous")
    return "Paid."


def both_eras(**state: Any) -> McpServer:
    """The handlers served to both eras (``create_app(server, eras="both")``)."""
    server = McpServer(name="test-eras", **state)
    server.tool(
        "get_weather",
        description="A greeting for a signed-in user.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    )(get_weather)
    server.tool("plan_trip", description="Plans a trip in three rounds.")(plan_trip)
    server.tool(
        "link_account",
        description="Links an account through a web page.",
        input_schema={
            "type": "object",
            "properties": {"user": {"type": "string"}},
            "required": ["user"],
        },
    )(link_account)
    server.tool("pay", description="Pays once, after a confirmation.")(pay)
    server.prompt("greeting", description="A greeting, for someone the user names.")(greeting)
    server.resource("secret://note", name="secret note")(note)
    return server


NO_SESSION = "Bad Request: No valid session ID provided"


class LegacyOnly:
    """An ASGI app that serves 2025-11-25 clients only, as a server written before 2026-07-28
    does: ``create_app(server, eras="both")`` behind a front that refuses any POST without an
    ``Mcp-Session-Id`` other than ``initialize`` with 400 and the TypeScript SDK 1.x's error
    (-32000 "Bad Request: No valid session ID provided"), whatever its ``_meta`` says.
    ``refused`` counts those refusals (a client that cached the era sends none)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.refused = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        has_session = any(k == b"mcp-session-id" for k, _ in scope["headers"])
        if not has_session and b'"initialize"' not in body:
            self.refused += 1
            error = json.dumps(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": NO_SESSION}}
            ).encode()
            head = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 400, "headers": head})
            await send({"type": "http.response.body", "body": error})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
