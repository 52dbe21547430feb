"""Work a request does once, not twice (benchmarks/bench_flows.py measures what it costs).

Each test counts calls of one step over a two-round form flow, so a change that brings the
second run of a step back fails here instead of only in a benchmark.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import mrtr_kit.server.context as context_module
import mrtr_kit.server.core as core_module
from mrtr_kit.server import McpServer
from mrtr_kit.server.http import create_app
from tests.helpers import answered, headers, request, result

FORM = {"elicitation": {"form": {}}}
LOGIN = {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]}
ACCEPT = {"login": {"action": "accept", "content": {"login": "ada"}}}


def build() -> McpServer:
    server = McpServer("work-per-request", state_key=b"w" * 32)

    @server.tool(description="Asks a login, then greets.")
    def greet(ctx):
        login = ctx.form("login", "Your login?", LOGIN)
        if login.needs_asking:
            return login.ask()
        return f"Hello {login.content['login']}"

    return server


def counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Replace ``module.name`` by a wrapper that counts its calls; the count is ``[n]``."""
    calls = [0]
    real: Callable[..., Any] = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_elic_5_a_form_is_checked_where_it_is_asked_not_where_its_answer_is_read(monkeypatch):
    """ELIC-5 (KIT): the form-subset check runs in ``ctx.form`` (a bad form fails at that
    line) and in the core where the form leaves the server, on the round that asks it; the
    round that reads the accepted answer checks nothing again (a third check per flow
    before)."""
    in_form = counting(monkeypatch, context_module, "check_requested_schema")
    in_core = counting(monkeypatch, core_module, "check_requested_schema")
    server = build()
    reply = answered(server, "tools/call", {"name": "greet"}, ACCEPT, capabilities=FORM)
    assert result(reply)["content"][0]["text"] == "Hello ada"
    assert (in_form[0], in_core[0]) == (1, 1)


async def _flow_over_http(server: McpServer) -> str:
    transport = httpx.ASGITransport(app=create_app(server, allowed_hosts=["testserver"]))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        sent = headers("tools/call", "greet")
        first = request("tools/call", {"name": "greet"}, capabilities=FORM)
        asked = (await http.post("/mcp", json=first, headers=sent)).json()["result"]
        params = {"name": "greet", "inputResponses": ACCEPT, "requestState": asked["requestState"]}
        retry = request("tools/call", params, capabilities=FORM)
        done = (await http.post("/mcp", json=retry, headers=sent)).json()
        return str(done["result"]["content"][0]["text"])


def test_mrtr_e2_a_decoded_body_is_not_walked_again_for_non_json_values(monkeypatch):
    """MRTR-E2: ``decode_body`` refuses every value no JSON text can hold, so the HTTP adapter
    tells the core (``handle(..., decoded=True)``) and step 1 skips its own walk
    (``json_problem``); a dict handed to ``McpServer.handle`` is still walked."""
    walks = counting(monkeypatch, core_module, "json_problem")
    server = build()
    assert asyncio.run(_flow_over_http(server)) == "Hello ada"
    assert walks[0] == 0
    answered(server, "tools/call", {"name": "greet"}, ACCEPT, capabilities=FORM)
    assert walks[0] == 2  # one per round of the flow handed over as dicts


def test_a_tool_answer_in_text_is_the_result_a_model_would_give():
    """RT-1 / CORE-16: a tool's plain text answer, written as its wire form without building a
    ``CallToolResult``, is exactly what the model gives, stamped like any complete result."""
    server = build()
    reply = answered(server, "tools/call", {"name": "greet"}, ACCEPT, capabilities=FORM)
    expected = core_module.CallToolResult.model_validate(
        {"content": [core_module.TextContent(text="Hello ada")]}
    ).to_wire()
    got = result(reply)
    got.pop("_meta")
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)
