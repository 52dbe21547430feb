"""Lesson 01: the solutions pass their checkpoints, the stubs and typical mistakes do not, and
the notebook keeps the kit's teaching conventions and runs quickly in a fresh kernel."""

from __future__ import annotations

import asyncio
import copy
import re
import runpy
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from mrtr_kit.lessons import basics

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "01-the-basic-flow.ipynb"
SOLUTIONS = ROOT / "notebooks" / "solutions"


def solution(name: str, symbol: str):
    return runpy.run_path(str(SOLUTIONS / f"{name}.py"))[symbol]


def stub(*args):
    raise NotImplementedError


# -- exercise 1: the retry by hand -------------------------------------------------------------


def test_exercise_1_solution_passes():
    check = asyncio.run(basics.check_retry(solution("01_make_retry", "make_retry")))
    assert check.passed, check


def test_exercise_1_stub_is_not_done():
    check = asyncio.run(basics.check_retry(stub))
    assert check.status == "not done"
    assert repr(check) == "… Not done yet: make_retry() still raises NotImplementedError."


def _reusing_the_id(first, result, answers, new_id):
    retry = copy.deepcopy(first)
    retry["params"]["inputResponses"] = answers
    if "requestState" in result:
        retry["params"]["requestState"] = result["requestState"]
    return retry


def _dropping_state(first, result, answers, new_id):
    retry = copy.deepcopy(first)
    retry["id"] = new_id
    retry["params"]["inputResponses"] = answers
    return retry


def _state_always(first, result, answers, new_id):
    retry = _dropping_state(first, result, answers, new_id)
    retry["params"]["requestState"] = result.get("requestState")
    return retry


@pytest.mark.parametrize(
    ("attempt", "message"),
    [
        (_reusing_the_id, "MRTR-C3"),
        (_dropping_state, "echo requestState exactly as received (MRTR-C2)"),
        (_state_always, "must not send one (MRTR-C2)"),
        (lambda *a: "retry", "returned str, not a dict"),
    ],
)
def test_exercise_1_mistakes_are_named(attempt, message):
    check = asyncio.run(basics.check_retry(attempt))
    assert check.status == "not yet" and message in check.message


# -- exercise 2: a tool that asks --------------------------------------------------------------


def test_exercise_2_solution_passes():
    check = asyncio.run(basics.check_colour_tool(solution("01_colour_tool", "favourite_colour")))
    assert check.passed, check


def test_exercise_2_stub_is_not_done():
    assert asyncio.run(basics.check_colour_tool(stub)).status == "not done"


def _never_asks(ctx):
    return "green, probably"


def _asks_with_text(ctx):
    from mrtr_kit.server.context import elicit_form

    if ctx.elicitation("colour") is None:
        schema = {"type": "object", "properties": {"colour": {"type": "string"}}}
        return ctx.input_required({"colour": elicit_form("Colour?", schema)})
    return "ok"


def _crashes_on_retry(ctx):
    answer = ctx.elicitation("colour")
    solved = solution("01_colour_tool", "favourite_colour")
    if answer is None:
        return solved(ctx)
    return answer.content["shade"]


@pytest.mark.parametrize(
    ("attempt", "message"),
    [
        (_never_asks, "must return input_required"),
        (_asks_with_text, "needs a choice 'colour'"),
        (_crashes_on_retry, "raised KeyError"),
    ],
)
def test_exercise_2_mistakes_are_named(attempt, message):
    check = asyncio.run(basics.check_colour_tool(attempt))
    assert check.status == "not yet" and message in check.message, check


# -- exercise 3: a form inside the subset ----------------------------------------------------


def test_exercise_3_solution_passes():
    check = basics.check_booking_form(solution("01_booking_form", "BOOKING_FORM"))
    assert check.passed, check


def test_exercise_3_stub_is_not_done():
    assert basics.check_booking_form(None).status == "not done"


def _variant(**changes):
    schema = copy.deepcopy(solution("01_booking_form", "BOOKING_FORM"))
    for name, prop in changes.items():
        if prop is None:
            del schema["properties"][name]
        else:
            schema["properties"][name] = prop
    return schema


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (_variant(party={"type": "integer", "minimum": 1, "default": 2}), "{'party': '9'}"),
        (_variant(party={"type": "number", "minimum": 1, "maximum": 8}), "type integer"),
        (_variant(date={"type": "string"}), '"format": "date"'),
        (_variant(diet=None), "the fields are party, date, diet"),
        (_variant(diet={"type": "array", "items": {"type": "object"}}), "outside the form-mode"),
    ],
)
def test_exercise_3_mistakes_are_named(schema, message):
    check = basics.check_booking_form(schema)
    assert check.status == "not yet" and message in check.message, check


# -- helpers of the lesson ----------------------------------------------------------------------


def test_meta_carries_version_and_capabilities(capsys):
    m = basics.meta({"elicitation": {"form": {}}})
    assert m["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert m["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {"form": {}}}
    basics.show({"params": {"_meta": m, "requestState": "s" * 40}}, hide_meta=True)
    printed = capsys.readouterr().out
    assert '"_meta": "…"' in printed and "…(40 chars)" in printed


def test_loopback_server_starts_on_a_free_port_and_stops():
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    seen = []

    def make_app(base_url):
        seen.append(base_url)
        return Starlette(routes=[Route("/", lambda r: PlainTextResponse(base_url))])

    site = basics.LoopbackServer.start(make_app)
    try:
        import httpx

        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", site.url)
        assert httpx.get(site.url + "/", timeout=5).text == site.url == seen[0]
    finally:
        site.stop()
    assert "stopped" in repr(site)


# -- the notebook ---------------------------------------------------------------------------------


def cells():
    return nbformat.read(NOTEBOOK, as_version=4).cells


def text_of(kind):
    return "\n".join(c.source for c in cells() if c.cell_type == kind)


def test_notebook_opens_with_objectives_needs_timings_and_a_diagram():
    opening = cells()[0].source
    for part in ("**What you will learn**", "**What you need**", "**Time**", "```mermaid"):
        assert part in opening


def test_notebook_closes_with_key_points_caveats_and_the_next_lesson():
    closing = cells()[-1].source
    assert "## Key points" in closing and "## In practice" in closing
    assert "(02-securing-request-state.ipynb)" in closing


def test_each_exercise_has_a_stub_a_hint_a_loadable_solution_and_a_checkpoint():
    source = [c.source for c in cells()]
    loads = [s for s in source if s.startswith("# %load solutions/01_")]
    assert len(loads) == 3
    for stub_cell in loads:
        path = NOTEBOOK.parent / stub_cell.splitlines()[0].removeprefix("# %load ")
        assert path.exists(), path
    assert text_of("markdown").count("<details><summary>Hint</summary>") == 3
    code = text_of("code")
    for checkpoint in ("check_retry(", "check_colour_tool(", "check_booking_form("):
        assert checkpoint in code


def test_intentional_errors_are_tagged_and_announced():
    all_cells = cells()
    tagged = [
        i for i, c in enumerate(all_cells) if "raises-exception" in c.metadata.get("tags", [])
    ]
    assert tagged
    for i in tagged:
        assert "meant* to fail" in all_cells[i - 1].source  # the cell before says what fails


def test_notebook_is_stored_with_its_outputs():
    code_cells = [c for c in cells() if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code_cells)
    assert any("widget-view" in str(o) for c in code_cells for o in c.outputs)


@pytest.mark.slow
def test_notebook_runs_in_a_fresh_kernel_with_only_the_intended_error():
    """Its run time is measured by benchmarks/bench_notebooks.py, not asserted here."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert [e.ename for e in errors] == ["InvalidAnswers"]  # only the tagged MRTR-C1 cell
