"""The wire-trace view: readable rounds, requestState shortened with its length, a Mermaid
diagram of the rounds actually taken, result text for every kind of result, and the round-diff
view (what each round changed from the one before; its logic tested here without widgets)."""

from __future__ import annotations

import asyncio
import html

from mrtr_course.examples import booking
from mrtr_course.plain.trace_view import (
    STATE_ALTERED,
    STATE_DROPPED,
    STATE_ECHOED,
    STATE_NONE,
    STATE_UNASKED,
    Mermaid,
    RoundDiff,
    TraceView,
    diagram,
    outcome_label,
    result_text,
    round_block_html,
    round_changes,
    round_diff_html,
    round_diff_text,
    sequence_diagram,
    short_state,
    shorten_states,
    wire_json,
)
from mrtr_kit.client import McpClient, TraceRecord
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


# -- the round-diff view ----------------------------------------------------------------------


def record(call, rnd, rid, params=None, result=None, **kw):
    """A TraceRecord of tools/call ``t`` with ``params`` and a result (or ``response=``)."""
    request = {"jsonrpc": "2.0", "id": rid, "method": "tools/call"}
    request["params"] = {"name": "t", "arguments": {"x": 1}, **(params or {})}
    response = kw.pop("response", {"jsonrpc": "2.0", "id": rid, "result": result or {}})
    return TraceRecord(
        call=call,
        round=rnd,
        method="tools/call",
        request=request,
        headers={"Mcp-Method": "tools/call", "Mcp-Name": "t"},
        http_status=kw.pop("http_status", 200),
        response=response,
        **kw,
    )


def asking(*keys, state="S1"):
    result = {"resultType": "input_required"}
    result["inputRequests"] = {k: {"method": "elicitation/create", "params": {}} for k in keys}
    if state is not None:
        result["requestState"] = state
    return result


ACCEPT = {"action": "accept", "content": {"a": 1, "b": 2}}
COMPLETE = {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}


def test_round_changes_of_a_three_round_call_say_what_each_round_changed():
    """MRTR-C3 (new id each round), MRTR-C2 (state echoed), MRTR-C6 (only the latest keys)."""
    trace = booking_trace()
    changes = round_changes(trace)
    assert [(c.call, c.round) for c in changes] == [(1, 1), (1, 2), (1, 3)]
    assert [c.previous for c in changes] == [None, trace[0], trace[1]]
    assert [c.new_id for c in changes] == [True, True, True]
    assert [c.answered for c in changes] == [
        {},
        {"details": "accept (party, when)"},
        {"confirm": "accept (ok)"},
    ]
    assert [c.state_sent for c in changes] == [STATE_NONE, STATE_ECHOED, STATE_ECHOED]
    assert [c.state_returned for c in changes] == ["new", "new", None]
    assert [c.result_type for c in changes] == ["input_required", "input_required", "complete"]
    assert [c.asks for c in changes] == [("details",), ("confirm",), ()]
    assert all(c.params_changed == () and c.unasked == () for c in changes)
    assert all(c.unanswered == () for c in changes)
    state1 = trace[0].response["result"]["requestState"]
    assert changes[1].lines == (
        "id 2 (new; round 1 had id 1)",
        "+ inputResponses.details: accept (party, when)",
        "requestState: echoed from round 1, unchanged",
        "← input_required · asks: confirm · new requestState "
        + short_state(trace[1].response["result"]["requestState"]),
    )
    assert changes[0].lines == (
        "id 1 (first request) · arguments: restaurant",
        f"← input_required · asks: details · new requestState {short_state(state1)}",
    )
    assert changes[2].lines[-1] == "← complete"
    assert changes[2].title == "call 1 · round 3 · tools/call book_table → HTTP 200 · complete"


def test_round_changes_flag_a_reused_id_and_a_state_that_is_not_the_echo():
    """The view shows client mistakes: the same id (MRTR-C3), an edited, a dropped or an unasked
    requestState (MRTR-C2)."""
    first = record(1, 1, 7, result=asking("k"))
    same_id = record(1, 2, 7, {"inputResponses": {"k": ACCEPT}, "requestState": "S1"})
    altered = record(1, 2, 8, {"inputResponses": {"k": ACCEPT}, "requestState": "S1x"})
    dropped = record(1, 2, 8, {"inputResponses": {"k": ACCEPT}})
    c = round_changes([first, same_id])[1]
    assert not c.new_id and c.state_sent == STATE_ECHOED
    assert c.lines[0] == "id 7: the same id as round 1 (MRTR-C3 wants a new one)"
    c = round_changes([first, altered])[1]
    assert c.new_id and c.state_sent == STATE_ALTERED
    assert "requestState: NOT the one round 1 returned (MRTR-C2)" in c.lines
    c = round_changes([first, dropped])[1]
    assert c.state_sent == STATE_DROPPED
    assert "requestState: left out, though round 1 returned one (MRTR-C2)" in c.lines
    stateless = record(2, 1, 9, result=asking("k", state=None))
    unasked = record(2, 2, 10, {"inputResponses": {"k": ACCEPT}, "requestState": "S1"})
    none_sent = record(2, 2, 10, {"inputResponses": {"k": ACCEPT}})
    assert round_changes([stateless, unasked])[1].state_sent == STATE_UNASKED
    assert "requestState: sent, though none was returned (MRTR-C2)" in (
        round_changes([stateless, unasked])[1].lines
    )
    c = round_changes([stateless, none_sent])[1]
    assert c.state_sent == STATE_NONE and "requestState: none (none was returned)" in c.lines
    # Round 1 that sends a state nobody issued is flagged too.
    assert round_changes([record(3, 1, 1, {"requestState": "S"})])[0].state_sent == STATE_UNASKED


def test_round_changes_flag_missing_and_extra_answers_and_changed_arguments():
    """MRTR-C1/C6: every asked key answered; MRTR-E3: extra keys; MRTR-C5: same arguments."""
    first = record(1, 1, 1, result=asking("a", "b"))
    retry = record(
        1,
        2,
        2,
        {
            "arguments": {"x": 2},
            "inputResponses": {"a": {"action": "decline"}, "z": {"roots": [{"uri": "file:///"}]}},
            "requestState": "S1",
        },
        result=COMPLETE,
    )
    c = round_changes([first, retry])[1]
    assert c.answered == {"a": "decline", "z": "1 root(s)"}
    assert c.unasked == ("z",) and c.unanswered == ("b",)
    assert c.params_changed == ("arguments",)
    assert c.lines == (
        "id 2 (new; round 1 had id 1)",
        "+ inputResponses.a: decline",
        "+ inputResponses.z: 1 root(s) (not asked for)",
        "no answer for: b (MRTR-C1)",
        "changed since the last round: arguments (MRTR-C5)",
        "requestState: echoed from round 1, unchanged",
        "← complete",
    )


def test_round_changes_pair_rounds_by_call_when_calls_interleave():
    a1 = record(1, 1, 1, result=asking("k", state="A"))
    b1 = record(2, 1, 2, result=asking("k", state="B"))
    a2 = record(1, 2, 3, {"inputResponses": {"k": ACCEPT}, "requestState": "A"}, result=COMPLETE)
    b2 = record(2, 2, 4, {"inputResponses": {"k": ACCEPT}, "requestState": "A"}, result=COMPLETE)
    changes = round_changes([a1, b1, a2, b2])
    assert [c.previous for c in changes] == [None, None, a1, b1]
    assert changes[2].state_sent == STATE_ECHOED
    assert changes[3].state_sent == STATE_ALTERED  # call 2 sent call 1's state (MRTR-C4)


def test_round_changes_name_errors_failures_other_answers_and_notifications():
    first = record(1, 1, 1, result=asking("s", "r"))
    sampled = {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m1"}
    error = record(
        1,
        2,
        2,
        {"inputResponses": {"s": sampled, "r": "oops"}, "requestState": "S1"},
        response={"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Bad"}},
        notifications=[{"method": "notifications/progress"}] * 2,
    )
    c = round_changes([first, error])[1]
    assert c.result_type == "error -32602"
    assert c.answered == {"s": "sampling reply (m1)", "r": "not an object"}
    assert c.notifications == 2 and "2 notification(s) before the response" in c.lines
    assert c.lines[-1] == "← error -32602: Bad"
    failed = record(4, 1, 5, response=None, http_status=None, error="TransportError: boom")
    c = round_changes([failed])[0]
    assert c.result_type == "failed" and c.lines[-1] == "← failed: TransportError: boom"
    assert c.title.endswith("→ HTTP — · failed")
    legacy = record(5, 1, 6, result={"content": []})  # no resultType: complete (RT-2)
    assert round_changes([legacy])[0].result_type == "complete"
    same = record(6, 2, 8, {"inputResponses": {"k": ACCEPT}, "requestState": "S1"})
    same.response = {"jsonrpc": "2.0", "id": 8, "result": asking(state="S1")}
    c = round_changes([record(6, 1, 7, result=asking("k")), same])[1]
    assert c.state_returned == "same" and "same requestState S1" in c.lines[-1]


def test_round_diff_shows_changes_with_the_full_json_collapsed_in_html_and_text():
    trace = booking_trace()
    diff = RoundDiff(trace, hide_meta=True)
    text = diff.text()
    assert text.splitlines()[0] == (
        "── call 1 · round 1 · tools/call book_table → HTTP 200 · input_required"
    )
    assert "   + inputResponses.details: accept (party, when)" in text.splitlines()
    assert "{" not in text  # the plain form is the changes only, no JSON
    page = diff._repr_mimebundle_()["text/html"]
    assert page == round_diff_html(round_changes(trace), hide_meta=True)
    assert page.count('<details class="mrtr-round-json">') == 3  # one per round, closed
    assert "<details open" not in page
    assert page.count('<ul class="mrtr-round-changes"') == 3
    assert ">+ inputResponses.details: accept (party, when)</li>" in page
    body = page.split('<details class="mrtr-round-json">')[2]  # round 2's folded JSON
    assert "&quot;inputResponses&quot;: {" in body and "&quot;_meta&quot;: &quot;…&quot;" in body
    state = trace[0].response["result"]["requestState"]
    assert state not in page and html.escape(short_state(state)) in page
    assert "Mcp-Method: tools/call  Mcp-Name: book_table" in page
    assert "&quot;io.modelcontextprotocol/protocolVersion&quot;" in RoundDiff(trace).html()
    assert RoundDiff([]).text() == "(no requests sent yet)"
    assert "no requests sent yet" in RoundDiff([]).html()


def test_round_diff_view_widget_draws_one_block_per_round_and_refreshes():
    from mrtr_course.widgets.round_view import RoundDiffView

    trace = booking_trace()
    live = trace[:1]
    view = RoundDiffView(live)
    assert len(view.rounds) == 1 and view.widget.children == (view.rounds[0],)
    first = view.rounds[0]
    live.extend(trace[1:])
    view.refresh()
    assert len(view.rounds) == 3 and view.rounds[0] is first  # earlier blocks are kept
    changes = round_changes(trace)
    assert [b.value for b in view.rounds] == [round_block_html(c) for c in changes]
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == round_diff_text(changes)
    assert bundle["text/html"] == round_diff_html(changes)
    del live[1:]
    view.refresh()
    assert len(view.rounds) == 1 and len(view.widget.children) == 1
    empty = RoundDiffView([])
    assert "no requests sent yet" in empty.widget.children[0].value
    assert empty.text() == "(no requests sent yet)"


def test_a_round_still_waiting_for_its_response_is_pending_and_redrawn_when_it_arrives():
    from mrtr_course.widgets.round_view import RoundDiffView

    first = record(1, 1, 1, result=asking("k"))
    waiting = record(1, 2, 2, {"inputResponses": {"k": ACCEPT}, "requestState": "S1"})
    waiting.response = None
    c = round_changes([first, waiting])[1]
    assert c.result_type == "pending" and c.lines[-1] == "← (no response yet)"
    assert "<pre>(no response yet)</pre>" in round_block_html(c)
    view = RoundDiffView([first, waiting])
    block = view.rounds[1]
    waiting.response = {"jsonrpc": "2.0", "id": 2, "result": COMPLETE}
    view.refresh()
    assert view.rounds[1] is block and "← complete" in block.value
    failed = record(2, 1, 3, response=None, error="TransportError: boom")
    assert "<pre>(local failure: TransportError: boom)</pre>" in round_diff_html(
        round_changes([failed])
    )
