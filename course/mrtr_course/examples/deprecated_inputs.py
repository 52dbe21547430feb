"""Lesson: the two other kinds of input request — sampling and roots (both DEPRECATED).

2026-07-28 deprecates ``sampling/createMessage`` and ``roots/list`` (SEP-2577): they still
work, but new servers should call an LLM provider themselves and take paths as arguments
(SEP-2577; the SAMP and ROOTS sections of docs/spec-map.md). They are shown here because they
travel exactly like elicitation under MRTR:

* ``summarize_forecast`` asks the client's LLM for a one-line summary (``sampling``);
* ``suggest_save_path`` asks for the client's roots and proposes a file path inside the first
  one (``roots``).

Neither handler checks capabilities itself: if this request did not declare ``sampling`` /
``roots``, the core refuses with ``-32021`` and ``data.requiredCapabilities`` (CAP-2, MRTR-S7)
instead of sending a request the client cannot answer. If the client will not answer, it just
does not retry (MRTR-C8, SAMP-6): the server holds nothing open waiting for it.
"""

from __future__ import annotations

from typing import Any

from mrtr_course.examples import fake_weather
from mrtr_kit.protocol.models import CallToolResult, CreateMessageResult, TextContent
from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.context import create_message, list_roots

DEPRECATED = "[Deprecated in 2026-07-28 (SEP-2577)]"

# A plain file name: starts with a letter or digit, so never "." or ".."; no separators.
FILENAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


def sampled_text(result: CreateMessageResult) -> str:
    """The text of a sampling answer, whose ``content`` is one block or a list (SAMP-1)."""
    blocks = result.content if isinstance(result.content, list) else [result.content]
    return " ".join(b.text for b in blocks if isinstance(b, TextContent)).strip()


def summarize_forecast(ctx: RequestContext) -> Any:
    city = ctx.arguments["city"]
    week = "; ".join(fake_weather.describe(city, day) for day in range(3))
    answer = ctx.sampling("summary")
    if answer is None:
        request = create_message(
            f"Summarise this forecast in one friendly sentence: {week}",
            max_tokens=60,
            system_prompt="You are a concise weather presenter.",
        )
        return ctx.input_required({"summary": request})
    text = sampled_text(answer)
    if not text:
        return CallToolResult(
            content=[TextContent(text="The model's answer held no text to show.")], is_error=True
        )
    return f"{text}\n(written by {answer.model}; sampling is deprecated in 2026-07-28)"


def suggest_save_path(ctx: RequestContext) -> Any:
    filename = ctx.arguments["filename"]
    answer = ctx.roots("roots")
    if answer is None:
        return ctx.input_required({"roots": list_roots()})
    if not answer.roots:
        return "No roots were shared. Pass a directory as a tool argument instead (SEP-2577)."
    # ROOTS-3: roots are not access control, but a server still stays inside them. The
    # filename pattern in the input schema keeps the path from climbing out ("..", "/").
    root = answer.roots[0]
    label = f" ({root.name})" if root.name else ""
    return f"Save it as {root.uri.rstrip('/')}/{filename}{label}."


def register(server: McpServer) -> None:
    server.tool(
        "summarize_forecast",
        description=f"{DEPRECATED} Summarises a city's forecast using your LLM (sampling).",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string", "minLength": 1}},
            "required": ["city"],
        },
        annotations={"readOnlyHint": True},
    )(summarize_forecast)
    server.tool(
        "suggest_save_path",
        description=f"{DEPRECATED} Suggests where to save a file, inside your roots (roots).",
        input_schema={
            "type": "object",
            "properties": {"filename": {"type": "string", "pattern": FILENAME_PATTERN}},
            "required": ["filename"],
        },
        annotations={"readOnlyHint": True},
    )(suggest_save_path)


def build_server(state_keys: KeyRing | None = None, **options: Any) -> McpServer:
    """``state_keys`` seal its requestState: a fresh key for this process unless given
    (``serve`` passes the fleet's); ``options`` go to ``McpServer`` (codec, ledger, ...)."""
    server = McpServer(
        "deprecated-inputs-example", state_keys=state_keys or KeyRing.generate(), **options
    )
    register(server)
    return server
