"""The conformance server: every tool, prompt and resource the official suite expects.

The suite is ``@modelcontextprotocol/conformance@0.2.0-alpha.12``, run with
``--spec-version 2026-07-28``.

Names and behaviours follow ``docs/conformance.md``; the section is cited next to each group.
Run it with ``python -m mrtr_kit serve --example conformance --port 3001`` and point the suite
at ``http://127.0.0.1:3001/mcp`` (``tools/run_conformance.py`` does all of that).

Registration order is the listing order, and two scenarios depend on it: the first tool must
succeed with ``{}`` arguments (``http-header-validation``) and the first resource must be
readable (``caching``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mrtr_course.examples.deprecated_inputs import sampled_text
from mrtr_course.examples.media import b64, tiny_png, tiny_wav
from mrtr_kit.protocol import errors
from mrtr_kit.protocol.models import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ReadResourceResult,
    TextContent,
    TextResourceContents,
)
from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.context import create_message, elicit_form, list_roots

NAME_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
COLOR_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"color": {"type": "string"}},
    "required": ["color"],
}
CONFIRM_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
CONTEXT_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"context": {"type": "string"}},
    "required": ["context"],
}

# The suite's json-schema-2020-12 fixture, keyword for keyword (§6.1).
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

EMBEDDED_TEXT = "This is an embedded resource content."


def text_resource(uri: str, text: str) -> TextResourceContents:
    return TextResourceContents(uri=uri, mime_type="text/plain", text=text)


def png_block() -> ImageContent:
    return ImageContent(data=b64(tiny_png()), mime_type="image/png")


NAME_QUESTION = "What is your name?"


def ask_name() -> ElicitRequest:
    """The exact round-1 request the basic elicitation scenario expects (§4)."""
    return elicit_form(NAME_QUESTION, NAME_FORM)


def accepted(ctx: RequestContext, key: str, question: ElicitRequest) -> dict[str, Any] | None:
    """The checked content of an accepted answer under ``key`` to the form ``question``
    (ELIC-14); None when there is nothing usable (absent, declined, cancelled, or content that
    does not fit). The caller then asks ``question`` again word for word, as the suite expects
    (``answer.ask()`` would first say what was wrong). A malformed answer (not an ElicitResult
    at all) raises -32602 inside ``ctx.form`` (MRTR-E1)."""
    params = question.params
    if not isinstance(params, ElicitRequestFormParams):
        raise TypeError(f"{key!r} must be a form-mode question")
    answer = ctx.form(key, params.message, params.requested_schema)
    return answer.content if answer.accepted else None


# -- carry-forward feature tools (§6) ----------------------------------------------------------


def register_content_tools(server: McpServer) -> None:
    # First in tools/list: http-header-validation calls the first tool with {} (§6.1).
    @server.tool("test_simple_text", description="Returns one simple text block.")
    def simple_text(ctx: RequestContext) -> str:
        return "This is a simple text response for testing."

    @server.tool("test_image_content", description="Returns a small PNG image block.")
    def image_content(ctx: RequestContext) -> list[Any]:
        return [png_block()]

    @server.tool("test_audio_content", description="Returns a short WAV audio block.")
    def audio_content(ctx: RequestContext) -> list[Any]:
        return [AudioContent(data=b64(tiny_wav()), mime_type="audio/wav")]

    @server.tool("test_embedded_resource", description="Returns an embedded text resource.")
    def embedded_resource(ctx: RequestContext) -> list[Any]:
        return [EmbeddedResource(resource=text_resource("test://embedded-resource", EMBEDDED_TEXT))]

    @server.tool(
        "test_multiple_content_types", description="Returns text, image and resource blocks."
    )
    def multiple_content_types(ctx: RequestContext) -> list[Any]:
        return [
            TextContent(text="Multiple content types test:"),
            png_block(),
            EmbeddedResource(
                resource=text_resource("test://mixed-content-resource", "Mixed content resource.")
            ),
        ]

    @server.tool("test_error_handling", description="Fails in business terms (isError: true).")
    def error_handling(ctx: RequestContext) -> CallToolResult:
        # A tool failure is a *result* the model can read, not a JSON-RPC error (docs/conformance.md
        # §6, its table).
        return CallToolResult(
            content=[TextContent(text="This tool intentionally returns an error for testing")],
            is_error=True,
        )

    @server.tool(
        "test_tool_with_progress",
        description="Reports progress 0, 50, 100 (send _meta.progressToken to see it).",
    )
    async def tool_with_progress(ctx: RequestContext) -> str:
        # With a progressToken the adapter streams these as SSE events before the result
        # (HTTP-21); without one, ctx.progress sends nothing.
        for step in (0, 50, 100):
            await ctx.progress(step, 100, f"step {step} of 100")
            if step < 100:
                await asyncio.sleep(0.05)
        return "Progress test completed."

    @server.tool(
        "test_x_mcp_header",
        description="Echoes a region that is mirrored into the Mcp-Param-Region header.",
        input_schema={
            "type": "object",
            "properties": {
                "region": {
                    "type": "string",
                    "description": "Sent as the Mcp-Param-Region header too (HTTP-12).",
                    "x-mcp-header": "Region",
                }
            },
            "required": ["region"],
        },
    )
    def x_mcp_header(ctx: RequestContext) -> str:
        # The adapter has already checked the header against this value (HTTP-14).
        return f"Region: {ctx.arguments['region']}"

    @server.tool(
        "json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        input_schema=JSON_SCHEMA_2020_12,
    )
    def json_schema_tool(ctx: RequestContext) -> str:
        return "ok"


# -- server-stateless diagnostics (§5) ---------------------------------------------------------


def register_diagnostic_tools(server: McpServer) -> None:
    @server.tool(
        "test_missing_capability",
        description="Needs sampling; without it the core answers -32021 / HTTP 400.",
    )
    def missing_capability(ctx: RequestContext) -> Any:
        answer = ctx.sampling("reply")
        if answer is None:
            # If this request did not declare sampling, the core refuses to send this and
            # answers -32021 with requiredCapabilities {"sampling": {}} (MRTR-S7, CAP-2).
            return ctx.input_required({"reply": create_message("Say hello.", max_tokens=20)})
        return f"Sampled: {sampled_text(answer)}"

    @server.tool(
        "test_streaming_elicitation",
        description="Asks for input the 2026-07-28 way: an input_required result, never a request.",
    )
    async def streaming_elicitation(ctx: RequestContext) -> Any:
        await ctx.progress(0, 1, "about to ask")  # sent only if a progressToken was given
        question = elicit_form("Continue?", CONFIRM_FORM)
        if accepted(ctx, "confirm", question) is None:
            # HTTP-21/22, CORE-6: no elicitation/create request on the stream; the question
            # is the final response of this request.
            return ctx.input_required({"confirm": question})
        return "Confirmed."

    @server.tool(
        "test_logging_tool",
        description="Logs three messages, sent only when the request set _meta logLevel.",
    )
    async def logging_tool(ctx: RequestContext) -> str:
        # CORE-14: ctx.log sends nothing unless this request asked for a log level.
        for level in ("debug", "info", "warning"):
            await ctx.log(level, f"a {level} message from test_logging_tool", "conformance")
        return "Logging test completed."


# -- SEP-2322 MRTR tools (§4) ------------------------------------------------------------------


def register_mrtr_tools(server: McpServer) -> None:
    @server.tool(
        "test_input_required_result_elicitation",
        description="Asks your name (form elicitation), then greets you.",
        # The missing-input, extra-params and validate-input scenarios send inputResponses
        # with no requestState, and extra-params expects this tool to complete from them. The
        # core drops answers on such a request (nothing was asked yet, MRTR-E3) unless the
        # tool names the key: a greeting may act on a name nobody asked for.
        stateless_answers=("user_name",),
    )
    def elicitation(ctx: RequestContext) -> Any:
        answer = ctx.form("user_name", NAME_QUESTION, NAME_FORM)  # checked (ELIC-14)
        if answer.needs_asking:  # absent, wrong key, or e.g. {"name": 5}: ask again (MRTR-E4)
            return ctx.input_required({"user_name": ask_name()})  # word for word, as in round 1
        if not answer.accepted:
            return "Hello, stranger! (You chose not to give a name.)"
        return f"Hello, {answer.content['name']}!"

    @server.tool(
        "test_input_required_result_sampling",
        description="Asks your LLM a question (sampling, deprecated in 2026-07-28).",
    )
    def sampling(ctx: RequestContext) -> Any:
        answer = ctx.sampling("capital_question")
        if answer is None:
            question = create_message("What is the capital of France?", max_tokens=100)
            return ctx.input_required({"capital_question": question})
        return f"The model answered: {sampled_text(answer)}"

    @server.tool(
        "test_input_required_result_list_roots",
        description="Asks for your roots (roots/list, deprecated in 2026-07-28).",
    )
    def list_roots_tool(ctx: RequestContext) -> Any:
        answer = ctx.roots("client_roots")
        if answer is None:
            return ctx.input_required({"client_roots": list_roots()})
        return "Roots: " + (", ".join(r.uri for r in answer.roots) or "none")

    @server.tool(
        "test_input_required_result_request_state",
        description="Asks for confirmation and carries requestState between the rounds.",
    )
    def request_state(ctx: RequestContext) -> Any:
        # The core verified the state before this runs; ctx.state is its data (MRTR-S4).
        confirm = elicit_form("Please confirm", CONFIRM_FORM)
        if ctx.state is None or accepted(ctx, "confirm", confirm) is None:
            return ctx.input_required({"confirm": confirm}, state={"asked": "confirm"})
        return "state-ok: the requestState came back intact and the answer was read."

    @server.tool(
        "test_input_required_result_tampered_state",
        description="Issues a sealed requestState; a tampered one is rejected.",
    )
    def tampered_state(ctx: RequestContext) -> Any:
        # Every state the core mints is sealed (AEAD); a modified one never reaches this
        # handler: the core answers -32602 "Invalid requestState" (MRTR-S4a; one fixed error: KIT).
        confirm = elicit_form("Please confirm", CONFIRM_FORM)
        if ctx.state is None or accepted(ctx, "confirm", confirm) is None:
            return ctx.input_required({"confirm": confirm}, state={"asked": "confirm"})
        return "The requestState passed its integrity check."

    requests_by_key = {
        "user_name": ask_name,
        "greeting": lambda: create_message("Generate a greeting", max_tokens=50),
        "client_roots": list_roots,
    }

    @server.tool(
        "test_input_required_result_multiple_inputs",
        description="Asks for a name, an LLM greeting and your roots, all in one round.",
    )
    def multiple_inputs(ctx: RequestContext) -> Any:
        collected = dict(ctx.state or {})  # answers from earlier rounds, in the verified state
        name = accepted(ctx, "user_name", ask_name())
        if name is not None:
            collected["user_name"] = name["name"]
        greeting = ctx.sampling("greeting")
        if greeting is not None:
            collected["greeting"] = sampled_text(greeting)
        roots = ctx.roots("client_roots")
        if roots is not None:
            collected["client_roots"] = [r.uri for r in roots.roots]
        missing = {k: make() for k, make in requests_by_key.items() if k not in collected}
        if missing:  # ask only for what is still missing; keep the rest in the state
            return ctx.input_required(missing, state=collected)
        roots_text = ", ".join(collected["client_roots"]) or "none"
        return f"Hello, {collected['user_name']}! {collected['greeting']} Roots: {roots_text}"

    @server.tool(
        "test_input_required_result_multi_round",
        description="Three rounds: your name, then your favourite colour, then the result.",
    )
    def multi_round(ctx: RequestContext) -> Any:
        state = ctx.state or {"step": 1}  # the verified state drives the rounds
        if state["step"] == 1:
            step1 = elicit_form("Step 1: What is your name?", NAME_FORM)
            name = accepted(ctx, "step1", step1)
            if name is None:
                return ctx.input_required({"step1": step1}, state={"step": 1})
            state = {"step": 2, "name": name["name"]}  # a new state: S2 != S1
        step2 = elicit_form("Step 2: What is your favorite color?", COLOR_FORM)
        color = accepted(ctx, "step2", step2)
        if color is None:
            return ctx.input_required({"step2": step2}, state=state)
        return f"{state['name']}'s favorite color is {color['color']}."

    @server.tool(
        "test_input_required_result_capabilities",
        description="Asks with whichever input kind this request's capabilities allow.",
    )
    def capabilities(ctx: RequestContext) -> Any:
        name, reply, roots = accepted(ctx, "user_name", ask_name()), None, None
        if name is None:
            reply = ctx.sampling("capital_question")
        if name is None and reply is None:
            roots = ctx.roots("client_roots")
        if name is not None:
            return f"Got your name by elicitation: {name['name']}."
        if reply is not None:
            return f"Got a sampled answer: {sampled_text(reply)}"
        if roots is not None:
            return f"Got {len(roots.roots)} root(s)."
        # CAP-1/CAP-4: only this request's clientCapabilities count, never an earlier one's.
        caps = ctx.capabilities
        if caps.supports_elicitation("form"):
            return ctx.input_required({"user_name": ask_name()})
        if caps.supports_sampling():
            question = create_message("What is the capital of France?", max_tokens=100)
            return ctx.input_required({"capital_question": question})
        if caps.supports_roots():
            return ctx.input_required({"client_roots": list_roots()})
        raise errors.missing_capability({"elicitation": {"form": {}}})


# -- prompts (§6, §4 non-tool-request) ---------------------------------------------------------


def register_prompts(server: McpServer) -> None:
    @server.prompt("test_simple_prompt", description="A simple prompt without arguments.")
    def simple_prompt(ctx: RequestContext) -> str:
        return "This is a simple prompt for testing."

    @server.prompt(
        "test_prompt_with_arguments",
        description="A prompt with two required arguments.",
        arguments=[
            {"name": "arg1", "description": "First test argument", "required": True},
            {"name": "arg2", "description": "Second test argument", "required": True},
        ],
        completions={"arg1": ["testValue1", "test-alpha", "test-beta", "other"]},
    )
    def prompt_with_arguments(ctx: RequestContext) -> str:
        a = ctx.arguments
        return f"Prompt with arguments: arg1='{a['arg1']}', arg2='{a['arg2']}'"

    @server.prompt(
        "test_prompt_with_embedded_resource",
        description="A prompt that embeds a resource.",
        arguments=[{"name": "resourceUri", "description": "URI to embed", "required": True}],
    )
    def prompt_with_embedded_resource(ctx: RequestContext) -> list[PromptMessage]:
        uri = ctx.arguments["resourceUri"]
        resource = text_resource(uri, "Embedded resource content for testing.")
        return [
            PromptMessage(role="user", content=EmbeddedResource(resource=resource)),
            PromptMessage(role="user", content=TextContent(text="Please process the resource.")),
        ]

    @server.prompt("test_prompt_with_image", description="A prompt that includes an image.")
    def prompt_with_image(ctx: RequestContext) -> list[PromptMessage]:
        return [
            PromptMessage(role="user", content=png_block()),
            PromptMessage(role="user", content=TextContent(text="Please describe the image.")),
        ]

    @server.prompt(
        "test_input_required_result_prompt",
        description="A prompt that first asks which context to use (form elicitation).",
    )
    def input_required_prompt(ctx: RequestContext) -> Any:
        question = elicit_form("What context should the prompt use?", CONTEXT_FORM)
        answer = accepted(ctx, "user_context", question)
        if answer is None:
            return ctx.input_required({"user_context": question})
        return f"Answer using this context: {answer['context']}"


# -- resources (§6) ----------------------------------------------------------------------------


def register_resources(server: McpServer) -> None:
    # First in resources/list: the caching scenario reads the first listed resource.
    @server.resource(
        "test://static-text", name="static-text", description="A static text resource."
    )
    def static_text(ctx: RequestContext) -> ReadResourceResult:
        # An explicit result so mimeType is on the contents, where the suite looks for it.
        text = "This is the content of the static text resource."
        return ReadResourceResult(contents=[text_resource(ctx.target, text)])

    @server.resource(
        "test://static-binary",
        name="static-binary",
        description="A static binary resource (a PNG image).",
        mime_type="image/png",
    )
    def static_binary(ctx: RequestContext) -> ReadResourceResult:
        blob = BlobResourceContents(uri=ctx.target, mime_type="image/png", blob=b64(tiny_png()))
        return ReadResourceResult(contents=[blob])

    @server.resource_template(
        "test://template/{id}/data",
        name="template-data",
        description="A resource template with an id parameter.",
        mime_type="text/plain",
    )
    def template_data(ctx: RequestContext) -> ReadResourceResult:
        item = ctx.uri_params["id"]
        return ReadResourceResult(
            contents=[text_resource(ctx.target, f"Data for resource with id {item}.")]
        )


def build_server(state_keys: KeyRing | None = None, **options: Any) -> McpServer:
    """``state_keys`` seal its requestState: a fresh key for this process unless given
    (``serve`` passes the fleet's); ``options`` go to ``McpServer`` (codec, ledger, ...)."""
    server = McpServer(
        "mrtr-kit-conformance", state_keys=state_keys or KeyRing.generate(), **options
    )
    register_content_tools(server)
    register_diagnostic_tools(server)
    register_mrtr_tools(server)
    register_prompts(server)
    register_resources(server)
    return server
