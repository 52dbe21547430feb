"""Lesson 03b (serving both eras): the notebook's shape, its exercise and checkpoint, and the
lab code its cells call. nbval runs the notebook itself."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import re
import runpy
from pathlib import Path
from typing import Any

import lesson03b_checkpoints as checkpoints
import lesson03b_lab as lesson
import lesson03b_quiz
import pytest
from httpx import ASGITransport

from mrtr_course.examples.trip_planner import HotelDesk, build_server
from mrtr_course.fleet import start_fleet
from mrtr_kit.protocol.models import ElicitResult
from mrtr_kit.server.http import create_app
from mrtr_kit.server.loopback import LoopbackServer
from tests.lesson_files import LESSONS, SOLUTION_HINT, cell_source, cell_tags, notebook_cells

ROOT = Path(__file__).resolve().parents[2]
URL = "http://localhost/mcp"  # an app in this process: the host its Host check allows
NOTEBOOK = LESSONS / "03b-serving-both-eras" / "03b-serving-both-eras.ipynb"
SOLUTION_FILE = NOTEBOOK.parent / "solutions" / "03b_answer_form.py"
SOLUTION = SOLUTION_HINT


def cells() -> list[dict[str, Any]]:
    return notebook_cells(NOTEBOOK)


source = cell_source
tags = cell_tags


def flat(text: str) -> str:
    return " ".join(text.split())


def prose() -> str:
    return "\n".join(source(c) for c in cells() if c["cell_type"] == "markdown")


# -- the exercise and its checkpoint -------------------------------------------------------------


def check(callback: Any) -> Any:
    return asyncio.run(checkpoints.check_answer_form(callback))


def test_the_solution_passes_its_checkpoint():
    result = check(runpy.run_path(str(SOLUTION_FILE))["answer_form"])
    assert result.passed, result


def test_the_stub_runs_and_is_not_done():
    [stub] = [c for c in cells() if "exercise-stub" in tags(c)]
    namespace: dict[str, Any] = {}
    exec(source(stub), namespace)
    result = check(namespace["answer_form"])
    assert result.status == "not done", result


def keeps_the_envelope(params: Any, ctx: Any) -> Any:
    """The 2025-11-25 handler's shape kept: a JSON-RPC response by id."""
    answer = lesson.user.ask(params.message, params.requested_schema)
    result = {"action": "accept", "content": answer.values}
    return {"jsonrpc": "2.0", "id": ctx.key, "result": result}


def no_is_none(params: Any, ctx: Any) -> Any:
    """A "no" treated as nothing to send, as if declining were failing."""
    answer = lesson.user.ask(params.message, params.requested_schema)
    if not answer.submitted:
        return None
    return ElicitResult(action="accept", content=answer.values)


def no_raises(params: Any, ctx: Any) -> Any:
    answer = lesson.user.ask(params.message, params.requested_schema)
    if not answer.submitted:
        raise RuntimeError("the user declined")
    return ElicitResult(action="accept", content=answer.values)


def closed_is_decline(params: Any, ctx: Any) -> Any:
    """Both refusals collapsed into one: the port loses the difference the original made."""
    answer = lesson.user.ask(params.message, params.requested_schema)
    if not answer.submitted:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=answer.values)


def reads_a_message(message: Any, ctx: Any) -> Any:
    """The old handler's first lines kept: it reads a JSON-RPC message."""
    params = message["params"]
    answer = lesson.user.ask(params["message"], params["requestedSchema"])
    return {"action": "accept", "content": answer.values}


def always_accepts(params: Any, ctx: Any) -> Any:
    """Sends what the user typed, whatever the user did with the form."""
    answer = lesson.user.ask(params.message, params.requested_schema)
    return ElicitResult(action="accept", content=answer.values or {})


def never_asks(params: Any, ctx: Any) -> Any:
    """Answers from what it expects the form to be, without the user."""
    fields = params.requested_schema["properties"]
    values = {"start": "2026-09-01", "nights": 3} if "nights" in fields else {"room": "double"}
    return ElicitResult(action="accept", content=values)


async def awaits_the_user(params: Any, ctx: Any) -> Any:
    """An async port is a port too: the loop awaits it."""
    await asyncio.sleep(0)
    answer = lesson.user.ask(params.message, params.requested_schema)
    if answer.closed:
        return ElicitResult(action="cancel")
    if not answer.submitted:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=answer.values)


WRONG_PORTS = [
    (keeps_the_envelope, ("returned a JSON-RPC message", "MIG-6 step")),
    (no_is_none, ("when the user says no", "returned None", "MRTR-C8")),
    (no_raises, ("when the user says no", "RuntimeError", "MRTR-C8")),
    (closed_is_decline, ("when the user closes the form", "'decline'", "ELIC-6")),
    (reads_a_message, ("not subscriptable", "params.message", "MIG-6 step")),
    (never_asks, ("the user was shown nothing", "ELIC-15 MUST")),
    (always_accepts, ("when the user says no", "answered 'accept'", "ELIC-6")),
]


@pytest.mark.parametrize(
    ("callback", "words"), WRONG_PORTS, ids=[callback.__name__ for callback, _ in WRONG_PORTS]
)
def test_wrong_ports_fail_naming_the_rule_they_break(callback: Any, words: tuple[str, ...]):
    result = check(callback)
    assert result.status == "not yet", result
    for word in words:
        assert word in result.message, (word, result.message)


def test_an_async_port_passes():
    assert check(awaits_the_user).passed


def test_the_exercise_has_one_layout_task_stub_hint_and_checkpoint():
    all_cells = cells()
    [start] = [i for i, c in enumerate(all_cells) if source(c).startswith("### Exercise ")]
    task, stub, hint, checkpoint = all_cells[start : start + 4]
    assert re.match(r"### Exercise 1 · Port the client's handler \(\d+ min\)\n", source(task))
    # The legacy handler shown in the task is the code the lab defines.
    code = inspect.getsource(lesson.on_server_request).rstrip()
    assert f"```python\n{code}\n```" in source(task)
    assert "exercise-stub" in tags(stub)
    assert source(stub).splitlines()[0] == "# %load solutions/03b_answer_form.py"
    assert source(hint).startswith("<details><summary>Hint</summary>")
    assert source(hint).rstrip().endswith(SOLUTION)
    assert source(checkpoint) == "await check_answer_form(answer_form)"


def test_the_legacy_handler_the_exercise_ports_answers_as_its_docstring_says():
    lesson.user.reset(answers={"room": "suite"})
    ask = {"message": "Which room?", "requestedSchema": {"properties": {"room": {}}}}
    pushed = {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": ask}
    assert lesson.on_server_request(pushed)["result"] == {
        "action": "accept",
        "content": {"room": "suite"},
    }
    lesson.user.reset(closes=True)
    assert lesson.on_server_request(pushed)["result"] == {"action": "cancel"}
    lesson.user.reset(says_no=True)
    assert lesson.on_server_request(pushed) == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"action": "decline"},
    }
    ping = {"jsonrpc": "2.0", "id": 8, "method": "roots/list"}
    assert lesson.on_server_request(ping)["error"]["code"] == -32601
    assert lesson.user.shown == [("Which room?", ["room"])]  # since the last reset


# -- the notebook's shape ------------------------------------------------------------------------


def test_the_notebook_opens_with_goals_needs_time_spec_links_and_a_sequence_diagram():
    first = source(cells()[0])
    assert first.startswith("# 03b · Serving both eras")
    parts = (
        "**What you will learn**",
        "**What you need**: notebook 03",
        "**How long**: About ",
        "minutes to read and try, plus about ",
        "**Teaching it**: about ",
        "**Spec**",
        "(https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)",
        "(https://modelcontextprotocol.io/seps/2322-MRTR)",
        "Rule IDs like `MRTR-S4a` are explained in [docs/spec-map.md](../../docs/spec-map.md)",
        "```mermaid\nsequenceDiagram",
    )
    at = [first.find(part) for part in parts]
    assert -1 not in at, [p for p, i in zip(parts, at, strict=True) if i < 0]
    assert at == sorted(at)


def test_the_notebook_closes_with_key_points_practice_the_cheatsheet_and_a_link_to_04():
    last = source(cells()[-1])
    assert last.index("## Key points") < last.index("## In practice") < last.index("**Next**")
    assert "[docs/cheatsheet.md](../../docs/cheatsheet.md)" in last
    target = last.split("**Next**", 1)[1].split(".ipynb)", 1)[0].rsplit("(", 1)[1] + ".ipynb"
    assert target == "../04-port-your-own-server/04-port-your-own-server.ipynb"
    assert (NOTEBOOK.parent / target).exists()


def test_every_code_cell_is_led_in_by_a_markdown_cell_and_none_fails():
    for before, cell in itertools.pairwise(cells()):
        if cell["cell_type"] == "code":
            assert before["cell_type"] == "markdown", source(cell)
            assert not [o for o in cell.get("outputs", []) if o["output_type"] == "error"]


def test_processes_and_servers_started_in_the_notebook_are_stopped_in_it():
    code = "\n".join(source(c) for c in cells() if c["cell_type"] == "code")
    for started in ("fleet", "both", "modern_only"):
        assert f"{started}.stop()" in code


def test_the_fleet_is_routed_in_python_and_the_text_points_to_the_librarys_nginx_conf():
    text = flat(prose())
    assert "Binder has no nginx" in text
    assert "mrtr_kit/server/nginx.conf" in text


def test_the_stored_wires_show_pushed_requests_on_one_side_and_rounds_on_the_other():
    """The lesson's point, in its stored output: one tools/call with two pushed questions on
    2025-11-25; three tools/call, two of them echoing a requestState, on 2026-07-28."""
    [cell] = [c for c in cells() if "lesson.side_by_side" in source(c)]
    text = "".join(cell["outputs"][0]["data"]["text/plain"])
    legacy, modern = text.split("\n\n2026-07-28 client")
    assert legacy.count('"method": "tools/call"') == 1
    assert legacy.count('< event {"id": ') == 3  # two questions and the result
    assert legacy.count('"method": "elicitation/create"') == 2
    assert modern.count('"method": "tools/call"') == 3
    assert modern.count('"resultType": "input_required"') == 2
    assert "Mcp-Session-Id" in legacy and "Mcp-Session-Id" not in modern


def test_section_3_covers_url_mode_still_waiting_and_tasks_with_the_open_issue():
    texts = [source(c) for c in cells()]
    start = next(i for i, t in enumerate(texts) if t.startswith("## 3. "))
    end = next(i for i, t in enumerate(texts) if t.startswith("## 4. "))
    text = flat("\n".join(texts[start:end]))
    for words in (
        "`elicitationId`",
        "`notifications/elicitation/complete`",
        "`-32042`",
        "ELIC-11 note",
        "MIG-7 step",
        "MRTR-S3 MAY",
        "modelcontextprotocol#2920",
        "still open",
        "MIG-8 step",
        "io.modelcontextprotocol/tasks",
    ):
        assert words in text, words


def test_the_quiz_is_the_lessons_and_its_first_answer_is_what_the_crash_shows():
    [quiz] = lesson03b_quiz.QUIZZES
    assert quiz.key == "03b" and 2 <= len(quiz.questions) <= 3
    assert [c for c in cells() if source(c) == 'show_quiz("03b")']
    first = quiz.questions[0].options[quiz.questions[0].answer].text
    assert "404" in first and "instance 2" in first


# -- the lab: both wires of one server, in this process ------------------------------------------


def test_brief_drops_jsonrpc_elides_the_repeated_parts_and_shortens_states():
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"_meta": {"x": 1}, "requestState": "a" * 40, "inputRequests": {"k": {}}},
    }
    assert lesson.brief(message) == (
        '{"id": 1, "result": {"_meta": "…", "requestState": "aaaaaaaaaaaaaaaa…(40 chars)", '
        '"inputRequests": {"k": {}}}}'
    )
    initialize = {"method": "initialize", "params": {"capabilities": {}, "clientInfo": {}}}
    assert lesson.brief(initialize) == (
        '{"method": "initialize", "params": {"capabilities": {}, "clientInfo": "…"}}'
    )
    assert lesson.brief({"result": {"capabilities": {"tools": {}}}}) == (
        '{"result": {"capabilities": "…"}}'
    )


async def _one_call_each(url: str, inner: Any = None) -> tuple[Any, Any]:
    """``legacy_call`` and ``modern_call`` on one server (``inner``: an app in this process)."""
    legacy = await lesson.legacy_call(url, inner=inner)
    return legacy, await lesson.modern_call(url, city="Oslo", inner=inner)


def test_a_modern_only_server_refuses_the_old_client_at_initialize_and_serves_the_new():
    """In this process (an SSE push needs a real server: the slow test below)."""
    desk = HotelDesk()
    app = create_app(build_server(desk))
    legacy, modern = asyncio.run(_one_call_each(URL, ASGITransport(app)))
    assert legacy.result == "failed: HTTP 400 on initialize"
    assert '"code": -32022' in legacy.lines[-1].text
    assert '"supported": ["2026-07-28"]' in legacy.lines[-1].text
    assert modern.count('"method": "tools/call"') == 3
    assert modern.count('"requestState": "') == 4  # two results, two retries echoing them
    assert '"resultType": "complete"' in modern.lines[-1].text
    assert [r.city for r in desk.reservations] == ["Oslo"]
    both = lesson.side_by_side(legacy, modern)
    assert repr(both) == f"{legacy.text()}\n\n{modern.text()}"
    assert "<table" in both._repr_html_() and "&quot;" in both._repr_html_()


def test_a_session_without_forms_meets_the_same_gate_as_a_2025_tool_error():
    """The rules hold on the old wire: no form capability at initialize, no question pushed;
    a tool result with isError (no SSE needed, so in this process)."""
    app = create_app(build_server(), eras="both")
    log = asyncio.run(lesson.legacy_call(URL, inner=ASGITransport(app), forms=False))
    assert '"capabilities": {}' in log.lines[0].text
    assert log.count("elicitation/create") == 0
    assert '"isError": true' in log.lines[-1].text
    assert "elicitation.form" in log.result


@pytest.mark.slow
def test_one_server_serves_both_eras_from_one_handler_and_the_log_records_each_wire():
    desk = HotelDesk()
    server = build_server(desk)
    both = LoopbackServer.start(lambda url: create_app(server, eras="both"))
    try:
        legacy, modern = asyncio.run(_one_call_each(both.url + "/mcp"))
    finally:
        both.stop()
    assert [r.city for r in desk.reservations] == ["Lisbon", "Oslo"]
    assert legacy.count('"method": "initialize"') == 1
    assert legacy.count('"method": "tools/call"') == 1
    assert legacy.count('event {"id": 1, "method": "elicitation/create"') == 1
    assert legacy.count('event {"id": 2, "method": "elicitation/create"') == 1
    assert legacy.count("[202]") == 3  # notifications/initialized and the two answers
    assert "resultType" not in legacy.lines[-1].text  # the 2025-11-25 result shape
    assert "[Mcp-Session-Id]" in legacy.lines[0].text
    assert modern.count('"method": "tools/call"') == 3
    assert not modern.count("Mcp-Session-Id")


# -- the lab on a real fleet -----------------------------------------------------------------------


@pytest.mark.slow
def test_the_fleet_figures_and_a_crash_mid_call_come_out_as_the_lesson_says():
    """Legacy: 404 on its second request without stickiness, whole with it, and lost (404,
    then a new session, the first question asked again) when its instance dies. Modern: whole
    round robin, and through the death of the instance that served round 1."""
    with start_fleet(2) as fleet:
        figures = asyncio.run(lesson.fleet_figures(fleet, n=4))
        report = asyncio.run(lesson.crash_mid_call(fleet, "instance-1"))
    rows = {label: outcomes for label, _, outcomes in figures.rows}
    assert rows["2025-11-25, round robin"] == {"HTTP 404 on notifications/initialized": 4}
    assert rows["2025-11-25, sticky (by Mcp-Session-Id)"] == {"completed": 4}
    assert rows["2026-07-28, round robin"] == {"completed": 4}
    assert "0 of 4 completed; HTTP 404 on notifications/initialized x4" in repr(figures)
    assert report.asked == {"legacy": 3, "modern": 2}
    legacy = "\n".join(report.legacy)
    assert re.search(r"answer to request 1 +instance-2 +404", legacy)
    assert legacy.count("POST initialize") == 2
    assert report.legacy_result == report.modern.text
    assert report.modern.text.startswith("Reserved a double room in Lisbon")
    assert report.modern.instances == ["instance-1", "instance-2", "instance-2"]
