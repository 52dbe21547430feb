"""A minimal official-SDK server for ``test_forms_for_other_clients.py``: it asks what a test
names and answers with exactly what the client sent back.

``echo_answer(kind)`` returns ``input_required`` with one request under the key ``"q"``: a
plain form, a form whose schema is outside the form subset (``nested``, ``pattern``), or a
URL-mode request (``url``); ``pair`` asks a ``nested`` and a ``plain`` form in one round. The
retry's ``ElicitResult`` comes back as the tool's text (JSON), so a test sees the action and
content that reached the server.

``python tests/sdk_forms_server.py`` serves it over Streamable HTTP on a free loopback port
and prints its URL; ``build_server()`` is the same server for in-process ``Client(server)``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    InputRequiredResult,
)

SCHEMAS = {
    "plain": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2},
            "tea": {"type": "boolean", "title": "Tea?", "default": False},
        },
        "required": ["name"],
    },
    # Outside the form subset (ELIC-5): an object inside the object, and a keyword it lacks.
    "nested": {
        "type": "object",
        "properties": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}},
    },
    "pattern": {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
    },
}
SIGN_IN_URL = "https://accounts.example.com/sign-in?session=abc"


def question(kind: str) -> ElicitRequest:
    if kind == "url":
        return ElicitRequest(
            params=ElicitRequestURLParams(message="Sign in on the page.", url=SIGN_IN_URL)
        )
    return ElicitRequest(
        params=ElicitRequestFormParams(message=f"A {kind} form.", requested_schema=SCHEMAS[kind])
    )


def build_server() -> MCPServer:
    mcp = MCPServer("echo-forms", log_level="WARNING")

    @mcp.tool(description="Ask one question; answer with the ElicitResult that came back.")
    async def echo_answer(kind: str, ctx: Context) -> str | InputRequiredResult:
        answers = ctx.input_responses or {}
        if "q" not in answers:
            if kind == "pair":  # two questions in one round, the first one unshowable
                requests = {"q": question("nested"), "r": question("plain")}
                return InputRequiredResult(input_requests=requests, request_state=kind)
            return InputRequiredResult(input_requests={"q": question(kind)}, request_state=kind)
        return json.dumps(answers["q"].model_dump(mode="json", exclude_none=True), sort_keys=True)

    return mcp


def main() -> None:
    import uvicorn

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from mrtr_kit.server.http import bind_tcp, run_announced

    sock = bind_tcp("127.0.0.1", 0)
    app = build_server().streamable_http_app(host="127.0.0.1")
    line = f"Serving echo-forms at http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    run_announced(uvicorn.Config(app, log_level="warning"), sock, line)


if __name__ == "__main__":
    main()
