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
from lesson_files import LESSONS

from mrtr_kit.lessons import basics

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = LESSONS / "01-the-basic-flow.ipynb"
SOLUTIONS = LESSONS / "solutions"


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


SOLUTION = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)
SPEC_LINKS = (
    "(https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)",
    "(https://modelcontextprotocol.io/seps/2322-MRTR)",
)


def test_notebook_opens_with_objectives_needs_timings_spec_links_and_a_diagram():
    """The header of every notebook (notes/LESSONS.md): the same items in the same order."""
    opening = cells()[0].source
    parts = (
        "**What you will learn**",
        "**What you need**",
        "**How long**: About ",
        "minutes to read and try, plus about ",
        "**Teaching it**: about ",
        "**Spec**",
        *SPEC_LINKS,
        "Rule IDs like `MRTR-S4a` are explained in [docs/spec-map.md](../docs/spec-map.md)",
        "IDs tagged\n(KIT) are this kit's own conventions, not the specification's.",
        "```mermaid",
    )
    at = [opening.find(part) for part in parts]
    assert -1 not in at, [p for p, i in zip(parts, at, strict=True) if i < 0]
    assert at == sorted(at)


def test_notebook_closes_with_key_points_caveats_the_cheatsheet_and_the_next_lesson():
    closing = cells()[-1].source
    assert closing.index("## Key points") < closing.index("## In practice")
    assert "[docs/cheatsheet.md](../docs/cheatsheet.md)" in closing
    assert "(02-securing-request-state.ipynb)" in closing


def test_every_exercise_has_one_layout_task_stub_hint_and_solution_then_checkpoint():
    """notes/LESSONS.md: one layout in every notebook (issue 9, item 10)."""
    all_cells = cells()
    starts = [i for i, c in enumerate(all_cells) if c.source.startswith("### Exercise ")]
    assert len(starts) == 3
    for n, i in enumerate(starts, 1):
        task, stub_cell, hint, check = all_cells[i : i + 4]
        assert re.match(rf"### Exercise {n} · \S.* \(\d+ min\)\n", task.source), task.source
        assert stub_cell.cell_type == "code"
        first = stub_cell.source.splitlines()[0]
        assert first.startswith("# %load solutions/01_")
        assert (NOTEBOOK.parent / first.removeprefix("# %load ")).exists()
        assert hint.cell_type == "markdown"
        assert hint.source.startswith("<details><summary>Hint</summary>")
        assert hint.source.rstrip().endswith(SOLUTION)
        assert check.cell_type == "code" and len(check.source.splitlines()) == 1
        assert re.fullmatch(r"(await )?check_\w+\(\w+\)", check.source)
    intro = next(c.source for c in all_cells if c.source.startswith("## Exercises"))
    assert SOLUTION in intro


def test_the_first_form_says_it_becomes_live_when_the_cell_runs():
    """Issue 9, item 11: a stored form reads as text until its cell runs."""
    all_cells = cells()
    first_form = next(
        i
        for i, c in enumerate(all_cells)
        if c.cell_type == "code" and "start_tool_call(" in c.source
    )
    lead_in = all_cells[first_form - 1].source
    assert "`[Accept] [Decline] [Cancel]`" in lead_in and "live form" in lead_in


def test_the_url_mode_section_follows_the_spec_flow_and_names_the_test_shortcut():
    """Issue 9, item 3: consent, open, retry at once; accept = "the user agreed to go"."""
    text = text_of("markdown")
    assert '"the user agreed to go", not "it is done"' in text
    assert "**at once** retries" in text
    assert "**A test shortcut:**" in text and "A real client never sees the\npage" in text
    assert "(the manual retry a client should offer, ELIC-10)" in text
    assert "I went there" not in text and "I have finished" not in "\n".join(
        c.source for c in cells()
    )


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


def test_the_only_error_stored_is_the_intended_one():
    """The stored run has one error: ``InvalidAnswers`` (MRTR-C1), in the cell tagged for it.

    nbval strict, in the README's test command, runs the notebook in a fresh kernel, fails any
    untagged cell that raises and compares every output with the stored one, an error's
    ``ename`` and ``evalue`` included: so the live run has only this error too, and the
    notebook need not run a second time here. (Its run time: benchmarks/bench_notebooks.py.)"""
    code_cells = [c for c in cells() if c.cell_type == "code"]
    errors = [(c, o) for c in code_cells for o in c.outputs if o.output_type == "error"]
    assert [o.ename for _, o in errors] == ["InvalidAnswers"]
    assert all("raises-exception" in c.metadata.get("tags", []) for c, _ in errors)
