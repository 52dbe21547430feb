"""Lesson 03c (porting practice, optional): the notebook's shape, its two exercises (moved from
lesson 03's section 5) and their checkpoints. nbval runs the notebook itself."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import re
import runpy
from pathlib import Path
from typing import Any

import lesson03c_checkpoints as checkpoints
import lesson03c_lab as lesson
import pytest

from tests.lesson_files import (
    LESSONS,
    SOLUTION_HINT,
    assert_port_diagnosis,
    cell_source,
    cell_tags,
    exercise_stubs,
    notebook_cells,
)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = LESSONS / "03c-porting-practice-OPTIONAL" / "03c-porting-practice-OPTIONAL.ipynb"
SOLUTIONS = NOTEBOOK.parent / "solutions"
LESSON_03 = "../03-migrating-from-server-requests/03-migrating-from-server-requests.ipynb"
LESSON_04 = "../04-port-your-own-server/04-port-your-own-server.ipynb"

CHECKPOINTS = {
    "rent_bike": (checkpoints.check_rent_bike, "03c_rent_bike.py"),
    "open_ticket": (checkpoints.check_open_ticket, "03c_open_ticket.py"),
}
LEGACY = {"rent_bike": lesson.rent_bike_legacy, "open_ticket": lesson.open_ticket_legacy}
SOLUTION = SOLUTION_HINT


def cells() -> list[dict[str, Any]]:
    return notebook_cells(NOTEBOOK)


source = cell_source
tags = cell_tags


# -- the notebook's shape --------------------------------------------------------------------------


def test_the_notebook_opens_with_goals_needs_time_spec_links_and_a_sequence_diagram():
    """The header of every notebook (notes/LESSONS.md), and it says it is optional."""
    first = source(cells()[0])
    assert first.startswith("# 03c · Porting practice (OPTIONAL)\n\n*Optional*: notebook 04")
    parts = (
        f"[notebook 03]({LESSON_03})",
        "**What you will learn**",
        "**What you need**: notebook 03",
        "**How long**: About ",
        "minutes to read and try, plus about ",
        "**Teaching it**: about ",
        "**Spec**",
        "(https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)",
        "Rule IDs like `MRTR-S4a` are explained in [docs/spec-map.md](../../docs/spec-map.md)",
        "```mermaid\nsequenceDiagram",
        SOLUTION,
    )
    at = [first.find(part) for part in parts]
    assert -1 not in at, [p for p, i in zip(parts, at, strict=True) if i < 0]
    assert at == sorted(at)


def test_the_setup_imports_this_lessons_own_files_only():
    """The kernel's working directory is this folder: nothing from 03's folder is imported."""
    setup = next(source(c) for c in cells() if c["cell_type"] == "code")
    assert "from lesson03c_checkpoints import check_open_ticket, check_rent_bike" in setup
    code = "\n".join(source(c) for c in cells() if c["cell_type"] == "code")
    assert not re.search(r"\blesson03_", code)


def test_every_exercise_has_one_layout_task_stub_hint_and_solution_then_checkpoint():
    """notes/LESSONS.md: one layout in every notebook; the legacy tool in the task is the code
    that runs."""
    all_cells = cells()
    starts = [i for i, c in enumerate(all_cells) if source(c).startswith("### Exercise ")]
    assert len(starts) == 2
    for n, (i, name) in enumerate(zip(starts, ("rent_bike", "open_ticket"), strict=True), 1):
        check, filename = CHECKPOINTS[name]
        task, stub_cell, hint, checkpoint = all_cells[i : i + 4]
        assert re.match(rf"### Exercise {n} · \S.* \(\d+ min\)\n", source(task))
        assert source(all_cells[i - 1]).startswith(f"## {n}. "), "the concept comes first"
        code = inspect.getsource(LEGACY[name]).rstrip()
        assert f"```python\n{code}\n```" in source(task), name
        assert stub_cell["cell_type"] == "code" and "exercise-stub" in tags(stub_cell)
        assert source(stub_cell).splitlines()[0] == f"# %load solutions/{filename}"
        assert (SOLUTIONS / filename).exists()
        assert source(hint).startswith("<details><summary>Hint</summary>")
        assert source(hint).rstrip().endswith(SOLUTION)
        assert checkpoint["cell_type"] == "code"
        assert source(checkpoint) == f"await {check.__name__}({name})"


def test_every_code_cell_is_led_in_by_a_markdown_cell():
    for before, cell in itertools.pairwise(cells()):
        if cell["cell_type"] == "code":
            assert before["cell_type"] == "markdown", source(cell)


def test_the_stored_checkpoints_show_the_stubs_not_yet_passing():
    """The notebook is stored with the stubs: each checkpoint's output is a "not yet" that
    names what the stub does wrong."""
    outputs = {
        source(c): "".join("".join(o.get("data", {}).get("text/plain", "")) for o in c["outputs"])
        for c in cells()
        if source(c).startswith("await check_")
    }
    assert (
        "The day answered in round 2 is gone by round 3"
        in outputs["await check_rent_bike(rent_bike)"]
    )
    assert (
        "the code before the question runs on every round"
        in outputs["await check_open_ticket(open_ticket)"]
    )


def test_the_notebook_closes_with_key_points_in_practice_and_links_back_to_03_and_on_to_04():
    last = source(cells()[-1])
    assert last.index("## Key points") < last.index("## In practice") < last.index("**Back**")
    assert last.index("**Back**") < last.index("**Next**")
    assert f"]({LESSON_03})" in last and f"]({LESSON_04})" in last
    assert "[docs/cheatsheet.md](../../docs/cheatsheet.md)" in last
    for target in (LESSON_03, LESSON_04):
        assert (NOTEBOOK.parent / target).exists()


def test_the_closing_quiz_comes_before_the_key_points():
    texts = [source(c) for c in cells()]
    assert [t for t in texts if "show_quiz(" in t] == ['show_quiz("03c")']
    assert texts.index('show_quiz("03c")') < next(
        i for i, t in enumerate(texts) if t.startswith("## Key points")
    )


# -- exercises -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_each_solution_passes_its_checkpoint(name: str):
    check, filename = CHECKPOINTS[name]
    handler = runpy.run_path(str(SOLUTIONS / filename))[name]
    result = asyncio.run(check(handler))
    assert result.passed, result


def stubs() -> dict[str, Any]:
    return exercise_stubs(cells(), CHECKPOINTS)


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_the_stubs_run_and_do_not_pass(name: str):
    check, _ = CHECKPOINTS[name]
    result = asyncio.run(check(stubs()[name]))
    assert not result.passed
    assert result.status in ("not done", "not yet")


def bike_reading_content_first(ctx: Any) -> Any:
    solved = runpy.run_path(str(SOLUTIONS / "03c_rent_bike.py"))["rent_bike"]
    day = ctx.elicitation("day")
    if day is not None and not (ctx.state or {}):
        _ = day.content["day"]  # the mistake: content read before the action
    return solved(ctx)


def ticket_without_decline_check(ctx: Any, tracker: lesson.Tracker) -> Any:
    answer = ctx.elicitation("severity")
    if answer is None:
        return ctx.input_required({"severity": lesson.ask_severity(ctx.arguments["title"])})
    return f"Filed {tracker.file(ctx.arguments['title'], 'low')}: {ctx.arguments['title']}."


@pytest.mark.parametrize(
    ("check", "handler", "complaint"),
    [
        (checkpoints.check_rent_bike, bike_reading_content_first, "with a declined answer"),
        (checkpoints.check_open_ticket, ticket_without_decline_check, "one high ticket"),
    ],
)
def test_checkpoints_say_what_is_wrong(check: Any, handler: Any, complaint: str):
    result = asyncio.run(check(handler))
    assert not result.passed
    assert complaint in result.message, result


# -- Error 1 (issue 19): the rent_bike checkpoint runs every round on a fresh instance ---------

DAYS: dict[str, str] = {}  # the wrong answer's memory: one process's, not the call's


def bike_with_a_module_dict(ctx: Any) -> Any:
    """A plausible wrong answer (issue 19, error 1): the day kept in a module-level dict."""
    shop = ctx.arguments["shop"]
    day = ctx.elicitation("day")
    if day is not None:
        if day.action != "accept":
            return "No bike booked."
        DAYS[shop] = day.content["day"]
    if shop not in DAYS:
        return ctx.input_required({"day": lesson.ask_day(shop)})
    hours = ctx.elicitation("hours")
    if hours is None:
        return ctx.input_required({"hours": lesson.ask_hours(shop, DAYS[shop])})
    if hours.action != "accept":
        return "No bike booked."
    return lesson.bike_text(shop, DAYS[shop], hours.content["hours"])


def bike_with_a_closure() -> Any:
    """The same memory, hidden in a closure the fresh instance cannot empty: the state check
    catches it."""
    memory: dict[str, str] = {}

    def rent_bike(ctx: Any) -> Any:
        shop = ctx.arguments["shop"]
        day = ctx.elicitation("day")
        if day is not None:
            if day.action != "accept":
                return "No bike booked."
            memory[shop] = day.content["day"]
        if shop not in memory:
            return ctx.input_required({"day": lesson.ask_day(shop)})
        hours = ctx.elicitation("hours")
        if hours is None:
            return ctx.input_required({"hours": lesson.ask_hours(shop, memory[shop])}, {})
        if hours.action != "accept":
            return "No bike booked."
        return lesson.bike_text(shop, memory[shop], hours.content["hours"])

    return rent_bike


@pytest.mark.parametrize("handler", [bike_with_a_module_dict, bike_with_a_closure()])
def test_a_day_kept_in_memory_fails_exercise_1_and_is_named(handler: Any):
    """Error 1: such a port passed with "the day rode along in the state" (it did not).
    MIG-2: what earlier rounds gathered travels in requestState, not in one process."""
    DAYS.clear()
    result = asyncio.run(checkpoints.check_rent_bike(handler))
    assert not result.passed, result
    assert "the day was kept in this process's memory" in result.message
    assert "not in requestState" in result.message
    if handler is bike_with_a_module_dict:
        assert "(DAYS)" in result.message


def test_a_fresh_instance_restores_the_learners_containers_and_names_the_changed_ones():
    DAYS.clear()
    instances = checkpoints.FreshInstances(bike_with_a_module_dict)
    assert list(instances.snapshot) == ["DAYS"]  # not the lesson's imported forms
    run = instances.new()
    assert run.__globals__["DAYS"] == {} and run.__globals__["DAYS"] is not DAYS
    assert run.__globals__["lesson"] is lesson and instances.memory == []
    run.__globals__["DAYS"]["Velo"] = "2026-09-02"  # what a round would do
    assert instances.memory == ["DAYS"] and DAYS == {}
    assert instances.new().__globals__["DAYS"] == {}


# -- Exercises 1 and 2: ports that use answers unchecked, or file twice (issue 31, S2 and S3) -----


def rent_bike_unchecked(ctx: Any) -> Any:
    shop = ctx.arguments["shop"]
    state = ctx.state or {}
    if "day" not in state:
        day = ctx.elicitation("day")
        if day is None:
            return ctx.input_required({"day": lesson.ask_day(shop)}, state)
        if day.action != "accept":
            return "No bike booked."
        state = {"day": day.content["day"]}  # "next friday" taken as a day
    hours = ctx.elicitation("hours")
    if hours is None:
        return ctx.input_required({"hours": lesson.ask_hours(shop, state["day"])}, state)
    if hours.action != "accept":
        return "No bike booked."
    return lesson.bike_text(shop, state["day"], hours.content["hours"])


def open_ticket_unchecked(ctx: Any, tracker: Any) -> Any:
    title = ctx.arguments["title"]
    answer = ctx.elicitation("severity")
    if answer is None:
        return ctx.input_required({"severity": lesson.ask_severity(title)})
    if answer.action != "accept":
        return "No ticket filed."
    return f"Filed {tracker.file(title, answer.content['severity'])}: {title}."


def open_ticket_files_every_retry(ctx: Any, tracker: Any) -> Any:
    title = ctx.arguments["title"]
    severity = ctx.form("severity", f"How bad is {title!r}?", lesson.SEVERITY_FORM)
    if severity.needs_asking:
        return severity.ask()
    if not severity.accepted:
        return "No ticket filed."
    return f"Filed {tracker.file(title, severity.content['severity'])}: {title}."  # no key


@pytest.mark.parametrize(
    ("name", "port", "diagnosis"),
    [
        ("rent_bike", rent_bike_unchecked, "with the day 'next friday' (not a date) under 'day'"),
        (
            "open_ticket",
            open_ticket_unchecked,
            "with the severity 'critical' (not a choice) under 'severity'",
        ),
        ("open_ticket", open_ticket_files_every_retry, "filed a second ticket"),
    ],
)
def test_the_port_checkpoints_diagnose_unchecked_answers_and_a_second_side_effect(
    name: str, port: Any, diagnosis: str
):
    """ELIC-14, MRTR-E4: an answer that does not fit the form is asked again, never used; MIG-3,
    HTTP-26: the final retry sent twice files one ticket."""
    check, _ = CHECKPOINTS[name]
    assert_port_diagnosis(asyncio.run(check(port)), diagnosis)
