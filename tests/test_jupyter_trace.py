"""The wire-trace view: readable rounds, requestState shortened with its length, a Mermaid
diagram of the rounds actually taken, and result text for every kind of result."""

from __future__ import annotations

import asyncio

from mrtr_kit.client import McpClient
from mrtr_kit.examples import booking
from mrtr_kit.jupyter.trace_view import (
    Mermaid,
    TraceView,
    diagram,
    outcome_label,
    result_text,
    sequence_diagram,
    short_state,
    shorten_states,
    wire_json,
)
from mrtr_kit.server.http import create_app

DETAILS = {"details": {"action": "accept", "content": {"party": 2, "when": "2026-09-01"}}}
CONFIRM = {"confirm": {"action": "accept", "content": {"ok": True}}}


def booking_trace():
    """The three rounds of book_table, as a client's trace."""

    async def run():
        async with McpClient.for_app(
            create_app(booking.build_server()), elicitation=lambda p, c: None
        ) as client:
            call = await client.begin_tool_call("book_table", {"restaurant": "Luigi's"})
            await client.continue_call(call, DETAILS)
            await client.continue_call(call, CONFIRM)
            return client.trace

    return asyncio.run(run())


def test_short_state_keeps_the_start_and_tells_the_length():
    token = "hmac1.k0." + "x" * 100
    assert short_state(token) == "hmac1.k0.xxxxxxx…(109 chars)"
    assert short_state("short") == "short"


def test_shorten_states_touches_only_request_state_strings():
    message = {
        "params": {"requestState": "a" * 40, "arguments": {"requestState": 3}},
        "items": [{"requestState": "b" * 40}],
    }
    shown = shorten_states(message)
    assert shown["params"]["requestState"] == "a" * 16 + "…(40 chars)"
    assert shown["params"]["arguments"]["requestState"] == 3
    assert shown["items"][0]["requestState"] == "b" * 16 + "…(40 chars)"
    assert message["params"]["requestState"] == "a" * 40  # the original is not changed


def test_wire_json_can_hide_meta():
    text = wire_json({"params": {"_meta": {"big": 1}, "name": "x"}}, hide_meta=True)
    assert '"_meta": "…"' in text and '"name": "x"' in text and "big" not in text


def test_trace_view_shows_every_round_with_headers_state_and_outcome():
    trace = booking_trace()
    view = TraceView(trace, hide_meta=True)
    text = view.text()
    titles = [line for line in text.splitlines() if line.startswith("── ")]
    assert titles == [
        "── call 1 · round 1 · tools/call book_table (id 1) → HTTP 200 · "
        "input_required: details + requestState",
        "── call 1 · round 2 · tools/call book_table (id 2) + inputResponses: details + "
        "requestState → HTTP 200 · input_required: confirm + requestState",
        "── call 1 · round 3 · tools/call book_table (id 3) + inputResponses: confirm + "
        "requestState → HTTP 200 · complete",
    ]
    assert "Mcp-Method: tools/call  Mcp-Name: book_table" in text
    state = trace[0].response["result"]["requestState"]
    assert state not in text and short_state(state) in text
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/html"].count("<details open>") == 3
    assert "&quot;name&quot;: &quot;book_table&quot;" in bundle["text/html"]  # escaped JSON
    assert TraceView([]).text() == "(no requests sent yet)"


def test_outcome_label_names_errors_and_local_failures():
    trace = booking_trace()
    record = trace[0]
    record.response = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Bad"}}
    assert outcome_label(record) == "error -32602: Bad"
    record.error = "TransportError: boom"
    assert outcome_label(record) == "failed: TransportError: boom"


def test_sequence_diagram_draws_the_rounds_taken():
    source = sequence_diagram(booking_trace())
    assert source.splitlines() == [
        "sequenceDiagram",
        "    participant C as Client",
        "    participant S as Server",
        "    C->>S: tools/call book_table (id 1)",
        "    S-->>C: input_required: details + requestState",
        "    Note over C: gathers details, retries with a new id",
        "    C->>S: tools/call book_table (id 2) + inputResponses: details + requestState",
        "    S-->>C: input_required: confirm + requestState",
        "    Note over C: gathers confirm, retries with a new id",
        "    C->>S: tools/call book_table (id 3) + inputResponses: confirm + requestState",
        "    S-->>C: complete",
    ]
    bundle = diagram(booking_trace())._repr_mimebundle_()
    assert bundle["text/markdown"].startswith("```mermaid\nsequenceDiagram")
    assert bundle["text/plain"].startswith("sequenceDiagram")
    assert Mermaid("a;b#c")._repr_mimebundle_()["text/plain"] == "a;b#c"


def test_result_text_reads_tools_prompts_and_resources():
    assert result_text({"content": [{"type": "text", "text": "a"}, {"type": "image"}]}) == "a"
    prompt = {"messages": [{"role": "user", "content": {"type": "text", "text": "p"}}]}
    assert result_text(prompt) == "p"
    assert result_text({"contents": [{"uri": "x", "text": "r"}, {"uri": "y", "blob": ""}]}) == "r"
    assert result_text(None) == ""
