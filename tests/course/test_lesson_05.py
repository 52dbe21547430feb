"""Lesson 05 (optional), a real host: the server-side trace as text, HTML and a widget; the
checkpoint that reads a host's rounds from it (a proper flow passes, plausible wrong ones do
not); and the notebook's stored run (a real two-round trace, and an honest "not yet")."""

from __future__ import annotations

import asyncio
import json

import nbformat
import pytest
from lesson05_lab import NOTEBOOK_CLIENT, check_host_flow, tampered

from mrtr_course.examples import booking
from mrtr_course.plain.server_trace import (
    EMPTY,
    ServerTrace,
    read_trace,
    server_trace_html,
    server_trace_text,
)
from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
)
from mrtr_kit.server import KeyRing
from mrtr_kit.server.rounds import ServerRound
from tests.lesson_files import LESSONS

NOTEBOOK = LESSONS / "05-a-real-host-OPTIONAL" / "05-a-real-host-OPTIONAL.ipynb"
HOST = "inspector-client"


def rnd(id_, client=HOST, **kw) -> ServerRound:
    kw.setdefault("method", "tools/call")
    kw.setdefault("target", "book_table")
    return ServerRound(at=0.0, id=id_, client=client, **kw)


def asks(id_, key="details", client=HOST, **kw) -> ServerRound:
    return rnd(id_, client, outcome="input_required", asked=(key,), state_issued=True, **kw)


def host_flow(decline=True) -> list[ServerRound]:
    """Inspector's rounds: a booking accepted over three rounds, then one declined."""
    accept = {"details": "accept"}
    rounds = [
        rnd("d", method="server/discover", target=None),
        asks(1),
        asks(2, "confirm", answers=accept, state="verified"),
        rnd(3, answers={"confirm": "accept"}, state="verified"),
        asks(4),
    ]
    last = "decline" if decline else "accept"
    rounds.append(rnd(5, answers={"details": last}, state="verified"))
    return rounds


# -- the rendering -------------------------------------------------------------------------------


def test_each_round_says_who_which_id_the_answers_kinds_the_state_and_the_outcome():
    text = server_trace_text(host_flow())
    assert "── round 1 · tools/call book_table (id 1) · from inspector-client" in text
    assert "retry of round 1 (whose id was 1)" in text  # the new id is plain to see
    assert "answers: details (accept)" in text and "answers: details (decline)" in text
    assert "requestState: verified" in text
    assert "→ input_required · asks: confirm · new requestState issued" in text
    assert "(also answered: server/discover ×1)" in text


def test_a_refused_state_shows_the_operators_reason_and_what_the_client_was_told():
    refused = rnd(9, answers={"details": "accept"}, state="refused", state_problem="expired")
    refused = ServerRound(**{**refused.__dict__, "outcome": "error", "error_code": -32602})
    text = server_trace_text([asks(1), refused])
    assert 'REFUSED: expired (the client was told only "Invalid requestState", MRTR-S4a)' in text
    html = server_trace_html([asks(1), refused])
    assert "mrtr-server-refused" in html and "REFUSED: expired" in html


def test_client_text_is_escaped_in_html():
    html = server_trace_html([asks(1, client="<script>x</script>")])
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_nothing_yet_says_so():
    assert server_trace_text([]) == EMPTY
    assert EMPTY in server_trace_html([])


def test_a_trace_file_is_read_again_at_each_display_and_a_half_written_line_waits(tmp_path):
    path = tmp_path / "rounds.jsonl"
    trace = ServerTrace(path)
    assert trace.rounds == []  # no file yet: no rounds, no error
    path.write_text(json.dumps(asks(1).to_json()) + "\n[1, 2]\n" + '{"at": 0, "id"')
    assert [r.id for r in read_trace(path)] == [1]
    with path.open("a") as f:
        f.write(': 2, "method": "tools/call"}\n')
    assert "round 1" in trace._repr_mimebundle_()["text/plain"]
    assert [r.id for r in trace.rounds] == [1, 2]  # the line, now whole, is read next time


def test_a_live_list_from_an_in_kernel_observer_renders_the_same():
    rounds: list[ServerRound] = []
    server = booking.build_server(KeyRing.generate(), observer=rounds.append)
    meta = {
        META_PROTOCOL_VERSION: PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
        META_CLIENT_INFO: {"name": "notebook", "version": "1"},
    }
    params = {"_meta": meta, "name": "book_table", "arguments": {"restaurant": "Luigi's"}}
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    asyncio.run(server.handle(message))
    trace = ServerTrace(rounds)
    assert "round 1 · tools/call book_table (id 7) · from notebook" in trace.text()


def test_the_widget_refreshes_from_its_source():
    pytest.importorskip("ipywidgets")
    from mrtr_course.widgets.server_trace_view import ServerTraceView

    rounds = [asks(1)]
    view = ServerTraceView(rounds)
    assert "round 1" in view.table.value and "round 2" not in view.table.value
    rounds.append(rnd(2, answers={"details": "decline"}, state="verified"))
    view.button.click()
    assert "round 2" in view.table.value and view.count.value.startswith("2 request(s)")
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "retry of round 1" in bundle["text/plain"]


# -- the checkpoint ------------------------------------------------------------------------------


def test_a_host_that_answers_and_declines_passes():
    verdict = check_host_flow(host_flow())
    assert verdict.passed, verdict
    assert "inspector-client answered 3 round(s)" in verdict.message
    assert "round 5 declined" in verdict.message


def only_the_notebook():
    return [
        asks(1, client=NOTEBOOK_CLIENT),
        rnd(2, NOTEBOOK_CLIENT, answers={"details": "decline"}, state="verified"),
    ]


def host_flow_from(client):
    """The whole proper flow, from a client that is not a host: one that declares no name (a
    script posting JSON), or another of the kit's own clients (issue 19: any client not
    mrtr-kit-client counted as a host)."""
    return [ServerRound(**{**r.__dict__, "client": client}) for r in host_flow()]


def host_flow_on(tool):
    """The whole proper flow, on a tool the lesson did not ask for."""
    return [ServerRound(**{**r.__dict__, "target": tool}) for r in host_flow()]


def decline_only():
    """Declined at once: the host never submitted the form."""
    return [asks(1), rnd(2, answers={"details": "decline"}, state="verified")]


def same_id_retry():
    return [asks(1), rnd(1, answers={"details": "decline"}, state="verified")]


def key_not_answered():
    return [asks(1), rnd(2, answers={"other": "decline"}, state="verified")]


def state_dropped():
    return [asks(1), rnd(2, answers={"details": "decline"})]


def state_refused():
    return [
        asks(1),
        rnd(2, answers={"details": "decline"}, state="refused", state_problem="bad tag"),
    ]


@pytest.mark.parametrize(
    ("rounds", "message"),
    [
        ([], "no book_table rounds from a host yet"),
        (only_the_notebook(), "no book_table rounds from a host yet"),
        (host_flow_from(None), "no book_table rounds from a host yet"),
        (host_flow_from("mrtr-kit-legacy-client"), "no book_table rounds from a host yet"),
        (host_flow_on("order_pizza"), "no book_table rounds from a host yet"),
        (decline_only(), "has not submitted a form yet"),
        (host_flow(decline=False), "now call book_table again and press Decline"),
        (same_id_retry(), "no retry answered a form yet"),
        (key_not_answered(), "no retry answered a form yet"),
        (state_dropped(), "no retry answered a form yet"),
        (state_refused(), "had its requestState refused (bad tag)"),
    ],
    ids=[
        "nothing",
        "notebook only",
        "a script with no name",
        "another kit client",
        "another tool",
        "decline only",
        "no decline",
        "same id",
        "wrong key",
        "no state",
        "forged",
    ],
)
def test_plausible_wrong_flows_are_named(rounds, message):
    verdict = check_host_flow(rounds)
    assert verdict.status == "not yet" and message in verdict.message, verdict


def test_the_tampered_state_differs_in_its_payload_only():
    token = "hmac1.k1.eyJhYWFhIjoiYiJ9.AAAA"
    forged = tampered(token)
    assert forged != token and forged.split(".")[::3] == token.split(".")[::3]


# -- the notebook --------------------------------------------------------------------------------


def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


def output_of(source_start: str) -> str:
    [cell] = [c for c in cells() if c.cell_type == "code" and c.source.startswith(source_start)]
    out = []
    for o in cell.outputs:
        out.append(o.get("text", "") if o.output_type == "stream" else o.data["text/plain"])
    return "".join(out)


def test_the_lesson_is_short_and_dates_its_survey_of_hosts():
    code = [c for c in cells() if c.cell_type == "code"]
    assert len(code) <= 20
    survey = next(c.source for c in cells() if c.source.startswith("## 1. Which hosts"))
    assert "December 2026" in survey and "inspector#1719" in survey and "2026-07-18" in survey
    for host in ("MCPJam", "Claude Code", "VS Code", "Copilot CLI", "Goose"):
        assert host in survey
    assert "python3 tools/kit.py inspector --url" in output_of("print(server.inspector_command)")


def test_the_stored_run_shows_a_real_two_round_server_trace_with_the_state_verified():
    trace = output_of("view = ServerTraceView")
    assert "round 1 · tools/call book_table (id 1) · from mrtr-kit-client" in trace
    assert "new requestState issued" in trace
    assert "retry of round 1 (whose id was 1)" in trace and "details (decline)" in trace
    assert "requestState: verified" in trace and "round 3" not in trace
    forged = output_of("ServerTrace(server.trace)")
    assert "REFUSED: bad tag" in forged
    assert '"message": "Invalid requestState"' in output_of("show(send_tampered")


def test_the_stored_checkpoint_says_honestly_that_no_host_has_called_yet():
    verdict = output_of("check_host_flow(server.trace)")
    assert verdict.startswith("✘ Not yet: no book_table rounds from a host yet")
