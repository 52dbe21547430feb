"""Lesson 03 (migrating from server-initiated requests): the notebook's shape, its exercises and
checkpoints, and the helpers its cells call. nbval runs the notebook itself."""

from __future__ import annotations

import asyncio
import itertools
import json
import runpy
from pathlib import Path
from typing import Any

import pytest

from mrtr_kit.examples.trip_planner import make_plan_trip, make_plan_trip_legacy
from mrtr_kit.lessons import migration as lesson

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "03-migrating-from-server-requests.ipynb"
SOLUTIONS = ROOT / "notebooks" / "solutions"

CHECKPOINTS = {
    "pick_seat": (lesson.check_pick_seat, "03_pick_seat.py"),
    "rent_bike": (lesson.check_rent_bike, "03_rent_bike.py"),
    "open_ticket": (lesson.check_open_ticket, "03_open_ticket.py"),
}


def cells() -> list[dict[str, Any]]:
    return json.loads(NOTEBOOK.read_text())["cells"]


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def tags(cell: dict[str, Any]) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


# -- exercises -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_each_solution_passes_its_checkpoint(name: str):
    check, filename = CHECKPOINTS[name]
    handler = runpy.run_path(str(SOLUTIONS / filename))[name]
    result = asyncio.run(check(handler))
    assert result.passed, result


def stubs() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for cell in cells():
        if "exercise-stub" in tags(cell):
            namespace: dict[str, Any] = {}
            exec(source(cell), namespace)
            found.update({k: v for k, v in namespace.items() if k in CHECKPOINTS})
    return found


def test_every_exercise_has_a_stub_a_checkpoint_cell_a_hint_and_a_solution():
    text = [source(c) for c in cells()]
    assert sorted(stubs()) == sorted(CHECKPOINTS)
    for name, (check, filename) in CHECKPOINTS.items():
        assert any(f"await lesson.{check.__name__}({name})" in t for t in text), name
        assert any(f"%load solutions/{filename}" in t for t in text), filename
        assert (SOLUTIONS / filename).exists()
    assert sum("<details>" in t and "<summary>Hint</summary>" in t for t in text) == 3


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_the_stubs_run_and_do_not_pass(name: str):
    check, _ = CHECKPOINTS[name]
    result = asyncio.run(check(stubs()[name]))
    assert not result.passed
    assert result.status in ("not done", "not yet")


def wrong_seat(ctx: Any) -> Any:
    answer = ctx.elicitation("choice")  # the wrong key
    if answer is None:
        return ctx.input_required({"choice": lesson.ask_seat(ctx.arguments["flight"])})
    return "whatever"


def seat_without_decline(ctx: Any) -> Any:
    answer = ctx.elicitation("seat")
    if answer is None:
        return ctx.input_required({"seat": lesson.ask_seat(ctx.arguments["flight"])})
    return lesson.seat_text(ctx.arguments["flight"], (answer.content or {}).get("seat", "aisle"))


def ticket_without_decline_check(ctx: Any, tracker: lesson.Tracker) -> Any:
    answer = ctx.elicitation("severity")
    if answer is None:
        return ctx.input_required({"severity": lesson.ask_severity(ctx.arguments["title"])})
    return f"Filed {tracker.file(ctx.arguments['title'], 'low')}: {ctx.arguments['title']}."


@pytest.mark.parametrize(
    ("check", "handler", "complaint"),
    [
        (lesson.check_pick_seat, wrong_seat, "not ['seat']"),
        (lesson.check_pick_seat, seat_without_decline, "answer 'decline'"),
        (lesson.check_pick_seat, lambda ctx: 1 / 0, "raised ZeroDivisionError"),
        (lesson.check_open_ticket, ticket_without_decline_check, "one high ticket"),
    ],
)
def test_checkpoints_say_what_is_wrong(check: Any, handler: Any, complaint: str):
    result = asyncio.run(check(handler))
    assert not result.passed
    assert complaint in result.message, result


# -- the notebook's shape (DESIGN §4) --------------------------------------------------------------


def test_the_notebook_opens_with_goals_needs_time_and_a_sequence_diagram():
    first = source(cells()[0])
    assert first.startswith("# 03 · Migrating from server-initiated requests")
    for part in ("**What you will learn**", "**What you need:**", "**Time:**"):
        assert part in first
    assert "```mermaid\nsequenceDiagram" in first


def test_the_notebook_closes_with_key_points_caveats_and_a_link():
    last = source(cells()[-1])
    assert "## Key points" in last and "## In practice" in last and "## Next" in last
    target = last.split("## Next", 1)[1].split("](", 1)[1].split(")", 1)[0]
    assert (NOTEBOOK.parent / target).exists()


def test_the_cells_that_fail_on_purpose_are_tagged_and_say_so():
    all_cells = cells()
    for index, cell in enumerate(all_cells):
        if cell["cell_type"] != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o["output_type"] == "error"]
        assert bool(errors) == ("raises-exception" in tags(cell)), source(cell)
        if errors:
            lead_in = " ".join(source(all_cells[index - 1]).split())
            assert "fails, on purpose" in lead_in


def test_every_code_cell_is_led_in_by_a_markdown_cell():
    all_cells = cells()
    for before, cell in itertools.pairwise(all_cells):
        if cell["cell_type"] == "code":
            assert before["cell_type"] == "markdown", source(cell)


def test_processes_started_in_the_notebook_are_stopped_in_it():
    text = "\n".join(source(c) for c in cells() if c["cell_type"] == "code")
    for fleet in ("legacy", "mrtr", "sdk"):
        assert f"{fleet}.stop()" in text


# -- the helpers the cells call --------------------------------------------------------------------


def test_side_by_side_shows_both_handlers_as_text_and_escaped_html():
    view = lesson.side_by_side(make_plan_trip_legacy, make_plan_trip)
    text, page = repr(view), view._repr_html_()
    assert "await ctx.elicit(" in text and "ctx.input_required(" in text
    assert text.index("def make_plan_trip_legacy") < text.index("def make_plan_trip(")
    assert page.count("<pre") == 2 and "-&gt; Any" in page


@pytest.mark.parametrize(
    ("trap", "rounds", "outcome", "holds"),
    [
        ("plan_trip_hold_first", 3, "complete: Reserved", (3, 2)),
        ("plan_trip_forgetful", 10, "TooManyRounds", (0, 0)),
        ("plan_trip_counter_keys", 10, "TooManyRounds", (0, 0)),
        ("plan_trip", 3, "complete: Reserved", (0, 0)),
    ],
)
def test_each_trap_fails_the_way_the_lesson_says(
    trap: str, rounds: int, outcome: str, holds: tuple[int, int]
):
    run = asyncio.run(lesson.run_trap(trap))
    assert len(run.asked) == rounds
    assert run.outcome.startswith(outcome)
    assert (run.desk.holds_placed, len(run.desk.holds)) == holds
    if trap == "plan_trip_forgetful":
        assert run.asked[:4] == [["dates"], ["room"], ["dates"], ["room"]]
    if trap == "plan_trip_counter_keys":
        assert len({key for keys in run.asked for key in keys}) == 10  # never the same question


def test_the_correct_port_reserves_once_and_a_decline_reserves_nothing():
    from mrtr_kit.client import McpClient
    from mrtr_kit.examples.trip_planner import HotelDesk, build_server, traveller
    from mrtr_kit.server.http import create_app

    async def go(accept: bool) -> tuple[str, HotelDesk]:
        desk = HotelDesk()
        app = create_app(build_server(desk))
        async with McpClient.for_app(app, elicitation=traveller(accept=accept)) as client:
            result = await client.call_tool("plan_trip", {"city": "Rome"})
        return result["content"][0]["text"], desk

    text, desk = asyncio.run(go(accept=True))
    assert text == "Reserved a double room in Rome: 3 nights from 2026-09-01, 360 EUR."
    assert (desk.holds_placed, len(desk.reservations)) == (0, 1)
    text, desk = asyncio.run(go(accept=False))
    assert text == "Trip to Rome cancelled. Nothing was reserved."
    assert desk.reservations == []
