"""Lessons 00, 01 and 01b: the solutions pass their checkpoints, the stubs and typical mistakes
do not, and the notebooks keep the kit's teaching conventions and run in a fresh kernel; the
short optional lesson 05 (tests/course/test_lesson_05.py) keeps the same conventions here.

The loop exercise of 01 (``call_with_mrtr``) has its own file, test_lesson_01_loop.py."""

from __future__ import annotations

import asyncio
import copy
import itertools
import logging
import re
import runpy
import sys
from pathlib import Path

import lesson01b_checkpoints as checkpoints_01b
import nbformat
import pytest

from mrtr_course import messages
from tests.lesson_files import LESSONS as LESSON_DIR
from tests.lesson_files import run_cell

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = LESSON_DIR
WHY = NOTEBOOKS / "00-why-mrtr" / "00-why-mrtr.ipynb"
NOTEBOOK = NOTEBOOKS / "01-the-basic-flow" / "01-the-basic-flow.ipynb"
OPTIONAL = NOTEBOOKS / "01b-more-ways-to-ask-OPTIONAL" / "01b-more-ways-to-ask-OPTIONAL.ipynb"
HOST = NOTEBOOKS / "05-a-real-host-OPTIONAL" / "05-a-real-host-OPTIONAL.ipynb"
LESSONS = (WHY, NOTEBOOK, OPTIONAL, HOST)
# Lessons whose header times this file checks against benchmarks/reading_time.py.
TIMED = (
    *LESSONS,
    NOTEBOOKS / "02-securing-request-state" / "02-securing-request-state.ipynb",
    NOTEBOOKS / "03-migrating-from-server-requests" / "03-migrating-from-server-requests.ipynb",
    HOST,
)


def solution(name: str, symbol: str):
    """A solution file of lesson 01 or 01b (``01_…`` / ``01b_…``), from its lesson's folder."""
    lesson = OPTIONAL if name.startswith("01b_") else NOTEBOOK
    return runpy.run_path(str(lesson.parent / "solutions" / f"{name}.py"))[symbol]


def stub(*args):
    raise NotImplementedError


# -- exercise 1: the retry by hand -------------------------------------------------------------


def test_exercise_1_solution_passes():
    check = asyncio.run(checkpoints_01b.check_retry(solution("01b_make_retry", "make_retry")))
    assert check.passed, check


def test_exercise_1_stub_is_not_done():
    check = asyncio.run(checkpoints_01b.check_retry(stub))
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
    check = asyncio.run(checkpoints_01b.check_retry(attempt))
    assert check.status == "not yet" and message in check.message


# -- exercise 2: a tool that asks --------------------------------------------------------------


def test_exercise_2_solution_passes():
    check = asyncio.run(
        checkpoints_01b.check_colour_tool(solution("01b_colour_tool", "favourite_colour"))
    )
    assert check.passed, check


def test_exercise_2_stub_is_not_done():
    assert asyncio.run(checkpoints_01b.check_colour_tool(stub)).status == "not done"


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
    solved = solution("01b_colour_tool", "favourite_colour")
    if answer is None:
        return solved(ctx)
    return answer.content["shade"]


def _asks_again_on_any_refusal(ctx):
    """Issue 19: this used to pass; decline and cancel each get asked again."""
    answer = ctx.elicitation("colour")
    solved = solution("01b_colour_tool", "favourite_colour")
    if answer is not None and answer.action != "accept":
        return solved(ctx.__class__(**{**ctx.__dict__, "input_responses": {}}))
    return solved(ctx)


def _asks_again_on_cancel(ctx):
    answer = ctx.elicitation("colour")
    solved = solution("01b_colour_tool", "favourite_colour")
    if answer is not None and answer.action == "cancel":
        return solved(ctx.__class__(**{**ctx.__dict__, "input_responses": {}}))
    return solved(ctx)


@pytest.mark.parametrize(
    ("attempt", "message"),
    [
        (_never_asks, "must return input_required"),
        (_asks_with_text, "needs a choice 'colour'"),
        (_crashes_on_retry, "raised KeyError"),
        # ELIC-6: decline is an explicit no, cancel a dismissal; neither re-asks.
        (_asks_again_on_any_refusal, "after 'decline' your tool asked again; a decline is"),
        (_asks_again_on_cancel, "after 'cancel' your tool asked again; a cancel means"),
    ],
)
def test_exercise_2_mistakes_are_named(attempt, message):
    check = asyncio.run(checkpoints_01b.check_colour_tool(attempt))
    assert check.status == "not yet" and message in check.message, check


# -- exercise 3: a form inside the subset ----------------------------------------------------


def test_exercise_3_solution_passes():
    check = checkpoints_01b.check_booking_form(solution("01b_booking_form", "BOOKING_FORM"))
    assert check.passed, check


def test_exercise_3_stub_is_not_done():
    assert checkpoints_01b.check_booking_form(None).status == "not done"


def _variant(**changes):
    schema = copy.deepcopy(solution("01b_booking_form", "BOOKING_FORM"))
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
    check = checkpoints_01b.check_booking_form(schema)
    assert check.status == "not yet" and message in check.message, check


# -- helpers of the lesson ----------------------------------------------------------------------


def test_meta_carries_version_and_capabilities(capsys):
    m = messages.meta({"elicitation": {"form": {}}})
    assert m["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert m["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {"form": {}}}
    messages.show({"params": {"_meta": m, "requestState": "s" * 40}}, hide_meta=True)
    printed = capsys.readouterr().out
    assert '"_meta": "…"' in printed and "…(40 chars)" in printed


# -- the notebooks --------------------------------------------------------------------------------


def cells(path=NOTEBOOK):
    return nbformat.read(path, as_version=4).cells


def text_of(kind, path=NOTEBOOK):
    return "\n".join(c.source for c in cells(path) if c.cell_type == kind)


SOLUTION = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)
SPEC_LINKS = (
    "(https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)",
    "(https://modelcontextprotocol.io/seps/2322-MRTR)",
)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_notebook_opens_with_objectives_needs_timings_spec_links_and_a_diagram(path):
    """The header of every notebook (docs/architecture.md §4): the same items in the same order."""
    opening = cells(path)[0].source
    parts = (
        "**What you will learn**",
        "**What you need**",
        "**How long**: About ",
        "minutes to read and try",
        "**Teaching it**: about ",
        "**Spec**",
        *SPEC_LINKS,
        "Rule IDs like `MRTR-S4a` are explained in [docs/spec-map.md](../../docs/spec-map.md)",
        "IDs tagged\n(KIT) are this kit's own conventions, not the specification's.",
        "```mermaid",
    )
    at = [opening.find(part) for part in parts]
    assert -1 not in at, [p for p, i in zip(parts, at, strict=True) if i < 0]
    assert at == sorted(at)


def _figures(path):
    """The header's minutes: (to read and try, for the exercises or 0, to teach)."""
    opening = cells(path)[0].source
    read = int(re.search(r"About (\d+) minutes to read and try", opening)[1])
    ex = re.search(r"plus about (\d+) minutes for the exercises?", opening)
    teach = int(re.search(r"\*\*Teaching it\*\*: about (\d+) minutes", opening)[1])
    return read, int(ex[1]) if ex else 0, teach


@pytest.mark.parametrize(
    ("path", "next_links"),
    [
        (WHY, ["(../01-the-basic-flow/01-the-basic-flow.ipynb)"]),
        (
            NOTEBOOK,
            [
                "(../02-securing-request-state/02-securing-request-state.ipynb)",
                "(../01b-more-ways-to-ask-OPTIONAL/01b-more-ways-to-ask-OPTIONAL.ipynb)",
            ],
        ),
        (OPTIONAL, ["(../02-securing-request-state/02-securing-request-state.ipynb)"]),
        (
            HOST,
            [
                "(../02-securing-request-state/02-securing-request-state.ipynb)",
                "(../04-port-your-own-server/04-port-your-own-server.ipynb)",
            ],
        ),
    ],
    ids=lambda v: getattr(v, "stem", "links"),
)
def test_notebook_closes_with_key_points_caveats_the_cheatsheet_and_the_next_lesson(
    path, next_links
):
    closing = cells(path)[-1].source
    assert closing.index("## Key points") < closing.index("## In practice")
    assert closing.index("## In practice") < closing.index("**Next**")
    assert "[docs/cheatsheet.md](../../docs/cheatsheet.md)" in closing
    for link in next_links:
        assert link in closing.split("**Next**", 1)[1]


def test_the_optional_notebook_says_so_in_its_name_and_title():
    """docs/architecture.md §4: optional material says so in its name."""
    assert "OPTIONAL" in OPTIONAL.name
    opening = cells(OPTIONAL)[0].source
    assert opening.startswith("# 01b · More ways to ask (OPTIONAL)")
    assert "notebook 02 does not need it" in opening
    assert (
        "(../01b-more-ways-to-ask-OPTIONAL/01b-more-ways-to-ask-OPTIONAL.ipynb)"
        in cells(NOTEBOOK)[0].source
    )


def test_00_shows_the_failure_with_the_kits_fleet_and_lesson_03s_helpers():
    """Problem first: the push-style failure behind round robin, then MRTR on the same fleet,
    with the helpers notebook 03 uses (one code path: no logic only in a cell)."""
    code = [c.source for c in cells(WHY) if c.cell_type == "code"]
    joined = "\n".join(code)
    assert "from mrtr_course import trips as lesson" in joined
    assert "start_fleet(2, legacy=True" in joined and "RoundRobin(legacy.urls)" in joined
    assert "lesson.mrtr_trip(RoundRobin(mrtr.urls))" in joined
    assert not re.search(r"^(async )?def |^class ", joined, flags=re.M)
    outputs = {c.source: outputs_text(c) for c in cells(WHY) if c.cell_type == "code"}
    lost = outputs["await lesson.legacy_trip(RoundRobin(legacy.urls))"]
    assert "answer to request 0                legacy-2    202" in lost
    assert "failed: server error -32001 from legacy-1" in lost
    trip = next(v for k, v in outputs.items() if "mrtr_trip" in k)
    assert "round 2 -> instance-2" in trip and "complete: Reserved" in trip


def outputs_text(cell):
    parts = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            parts.append(o.get("text", ""))
        elif "data" in o:
            parts.append(o["data"].get("text/plain", ""))
    return "".join(parts)


EXERCISES = {
    # notebook: [(solution file, the checkpoint cell, the section heading it follows)]
    NOTEBOOK: [
        (
            "01_call_with_mrtr.py",
            "await check_call_with_mrtr(call_with_mrtr)",
            "## 5. The client's obligations",
        ),
    ],
    OPTIONAL: [
        ("01b_make_retry.py", "await check_retry(make_retry)", "## 1. The retry by hand"),
        ("01b_booking_form.py", "check_booking_form(BOOKING_FORM)", "## 2. What a form may ask"),
        (
            "01b_colour_tool.py",
            "await check_colour_tool(favourite_colour)",
            "## 5. Missing and extra answers",
        ),
    ],
}


@pytest.mark.parametrize("path", list(EXERCISES), ids=lambda p: p.stem)
def test_every_exercise_has_one_layout_and_sits_right_after_its_section(path):
    """docs/architecture.md §4: one layout in every notebook (task, stub, hint + solution sentence,
    checkpoint in its own cell), and each exercise right after the section it practises: the nearest
    section heading above it is that section's."""
    all_cells = cells(path)
    starts = [i for i, c in enumerate(all_cells) if c.source.startswith("### Exercise ")]
    assert len(starts) == len(EXERCISES[path])
    for n, (i, (filename, check, section)) in enumerate(
        zip(starts, EXERCISES[path], strict=True), 1
    ):
        task, stub_cell, hint, checkpoint = all_cells[i : i + 4]
        assert re.match(rf"### Exercise {n} · \S.* \(\d+ min\)\n", task.source), task.source
        assert stub_cell.cell_type == "code"
        assert stub_cell.source.splitlines()[0] == f"# %load solutions/{filename}"
        assert (path.parent / "solutions" / filename).exists()
        assert "raise NotImplementedError" in stub_cell.source or "= None" in stub_cell.source
        assert "check_" not in stub_cell.source
        assert hint.cell_type == "markdown"
        assert hint.source.startswith("<details><summary>Hint</summary>")
        assert hint.source.rstrip().endswith(SOLUTION)
        assert checkpoint.cell_type == "code" and checkpoint.source == check
        headings = [c.source for c in all_cells[:i] if c.source.startswith("## ")]
        assert headings[-1].startswith(section), (filename, headings[-1][:40])
    assert SOLUTION in all_cells[0].source  # the header explains the solution sentence once


@pytest.fixture
def kit_log():
    """The notebooks' setup cell quiets the kit's loggers for the whole process; lesson 02's
    tests read them, so the level is put back (setLevel also clears the loggers' caches)."""
    logger = logging.getLogger("mrtr_kit")
    level = logger.level
    yield logger
    logger.setLevel(level)


@pytest.mark.parametrize(
    ("path", "filename", "check"),
    [(p, f, c) for p, rows in EXERCISES.items() for f, c, _ in rows],
    ids=lambda v: getattr(v, "stem", v),
)
def test_following_the_solution_sentence_passes_the_checkpoint(path, filename, check, kit_log):
    """Do what the sentence says: run the stub cell (the checkpoint says not done), %load the
    solution (the cell becomes '# %load path' and the file), run it, run the checkpoint."""
    all_cells = cells(path)
    [i] = [
        k for k, c in enumerate(all_cells) if c.source.startswith(f"# %load solutions/{filename}")
    ]
    namespace: dict = {}
    setup = next(c.source for c in all_cells if c.cell_type == "code" and "import" in c.source)
    run_cell(setup, namespace)
    run_cell(all_cells[i].source, namespace)
    assert run_cell(all_cells[i + 2].source, namespace).status == "not done"
    loaded = f"# %load solutions/{filename}\n" + (path.parent / "solutions" / filename).read_text()
    run_cell(loaded, namespace)
    verdict = run_cell(all_cells[i + 2].source, namespace)
    assert verdict.passed, verdict


def test_the_learners_loop_runs_against_the_real_server_in_the_checkpoint():
    """The loop's checkpoint also runs it on the kit's server (test_lesson_01_loop.py), so no
    extra cell follows it: the stored stub's checkpoint says not done, with no traceback."""
    all_cells = cells()
    [i] = [
        k
        for k, c in enumerate(all_cells)
        if c.source == "await check_call_with_mrtr(call_with_mrtr)"
    ]
    assert "still raises NotImplementedError" in outputs_text(all_cells[i])
    assert not any("run_your_loop(" in c.source for c in all_cells)


# Issue 19: a self-check after each main section, where it sits (the quiz keys name the section).
SECTION_QUIZZES = {
    WHY: {"00.1": "## 1.", "00.2": "## 2."},
    NOTEBOOK: {"01.2": "## 2.", "01": "## 5."},
    OPTIONAL: {"01b.2": "## 2.", "01b.5": "## 5.", "01b.7": "## 7."},
}


@pytest.mark.parametrize("path", list(SECTION_QUIZZES), ids=lambda p: p.stem)
def test_a_self_check_follows_each_main_section(path):
    """Each quiz cell comes at the end of its section, led in by the same short line, and shows
    its text form (for GitHub) in the stored output."""
    all_cells = cells(path)
    for key, section in SECTION_QUIZZES[path].items():
        [i] = [k for k, c in enumerate(all_cells) if c.source == f'show_quiz("{key}")']
        assert all_cells[i - 1].source.startswith("**Self-check.** Click a letter")
        headings = [c.source for c in all_cells[:i] if c.source.startswith("## ")]
        assert headings[-1].startswith(section), (key, headings[-1][:30])
        rest = all_cells[i + 1 :]
        end = next((k for k, c in enumerate(rest) if c.source.startswith("## ")), len(rest))
        assert all(c.cell_type == "markdown" for c in rest[:end]), key  # the section's last cell
        assert "Self-check ·" in outputs_text(all_cells[i])


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
    text = text_of("markdown", OPTIONAL)
    assert '"the user agreed to go", not "it is done"' in text
    assert "**at once** retries" in text
    assert "**A test shortcut:**" in text and "A real client never sees the\npage" in text
    assert "(the manual retry a client should offer, ELIC-10 SHOULD)" in text
    assert "I went there" not in text and "I have finished" not in "\n".join(
        c.source for c in cells(OPTIONAL)
    )


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_code_cell_is_led_in_by_markdown_and_only_tagged_cells_fail(path):
    all_cells = cells(path)
    for before, cell in itertools.pairwise(all_cells):
        if cell.cell_type == "code":
            assert before.cell_type == "markdown", cell.source[:60]
            failing = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
            tagged = "raises-exception" in cell.metadata.get("tags", [])
            assert failing == tagged, cell.source[:60]
            if tagged:
                assert "meant* to fail" in before.source  # the cell before says what fails
    tagged = sum("raises-exception" in c.metadata.get("tags", []) for c in all_cells)
    assert tagged == (1 if path == NOTEBOOK else 0)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_notebook_is_stored_with_its_outputs(path):
    code_cells = [c for c in cells(path) if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code_cells)
    if path != WHY:
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


def test_the_reading_time_script_counts_prose_code_outputs_and_exercise_headings(tmp_path):
    """benchmarks/reading_time.py: prose is read at 150-130 words a minute, a code cell costs
    25-35 s plus its words at 100-80 wpm and its output at 200-160 wpm; an exercise's cells are
    not read, its heading's minutes are its base instead."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import reading_time

    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("x = 1")  # 2 words: x, 1
    code.outputs = [nbformat.v4.new_output("stream", text="word " * 200)]
    nb.cells = [
        nbformat.v4.new_markdown_cell("word " * 300),
        code,
        nbformat.v4.new_markdown_cell("### Exercise 1 · Something (7 min)\n\n" + "word " * 500),
        nbformat.v4.new_code_cell(
            "# %load solutions/x.py\ndef f():\n    raise NotImplementedError"
        ),
        nbformat.v4.new_markdown_cell("<details><summary>Hint</summary>" + "word " * 300),
        nbformat.v4.new_code_cell("await check_something(f)"),
        nbformat.v4.new_markdown_cell("word " * 100),
    ]
    path = tmp_path / "99-x-OPTIONAL.ipynb"
    nbformat.write(nb, path)
    r = reading_time.read(path)
    c = r.core
    counted = (r.cells, r.code_cells, c.prose_words, c.code_words, c.output_words)
    assert counted == (7, 1, 400, 2, 200)
    assert ([x.stated for x in r.exercises], r.optional) == ([7], True)
    assert c.read.low == pytest.approx(400 / 150 + 2 / 100 + 200 / 200 + 25 / 60)
    assert c.read.high == pytest.approx(400 / 130 + 2 / 80 + 200 / 160 + 35 / 60)


# -- issue 19: the errors a review found, each pinned where a test can see it ---------------------


def flat(text: str) -> str:
    return " ".join(text.split())


def code_cell(path, start):
    [cell] = [c for c in cells(path) if c.cell_type == "code" and c.source.startswith(start)]
    return cell


def test_error_2_the_weather_handler_shown_in_01_respects_decline_and_cancel():
    """ELIC-6: decline is an explicit no (respect it, offer an alternative), cancel a dismissal
    (ask again later); the handler the lesson prints asks again after neither."""
    shown = outputs_text(code_cell(NOTEBOOK, "print(inspect.getsource(weather.get_weather))"))
    declined = shown.split("if login.declined:", 1)[1].split("if login.cancelled:", 1)
    assert "return DECLINED" in declined[0] and "ask(" not in declined[0]
    assert "return CANCELLED" in declined[1].split("\n\n")[0]
    assert "only answers signed-in users" not in shown
    prose = flat(text_of("markdown"))
    assert (
        "a decline gets the public forecast instead, a cancel a note that you can ask again "
        "later (ELIC-6 note)"
    ) in prose


def test_error_3_lesson_00_says_once_what_fixes_the_push_style_and_that_mrtr_needs_none():
    prose = flat(text_of("markdown", WHY))
    assert "no shared session can hand it an answer" not in prose
    assert "even with shared sessions" not in prose
    assert (
        "Only sticky routing, or a shared store or message bus that forwards the answer to the "
        'waiting process (the spec\'s "shared storage layer"), would. MRTR needs neither.'
    ) in prose
    assert "A shared session does not fix that; sticky routing, or a shared store or bus" in prose
    from mrtr_course.quizzes import quiz

    fixes = quiz("00.1").questions[1]
    right = fixes.options[fixes.answer].text
    assert "shared store or message bus that forwards each answer" in right
    assert "With MRTR neither is needed" in right
    assert "needs sticky routing or a shared store" not in quiz("00.1").text()


def test_error_4_the_form_subset_is_the_specs_and_only_the_kits_check_is_kit():
    prose = flat(text_of("markdown", OPTIONAL))
    assert "inside a flat subset (ELIC-5 (KIT))" not in prose
    assert "stays inside the spec's flat subset, which the kit also checks (ELIC-5 (KIT))" in prose
    assert "That subset is the spec's; the kit's own check of it is KIT" in prose


def test_error_5_the_client_obligations_are_the_specs_four_and_refusing_extras_is_the_kits():
    opening = flat(cells()[0].source)
    assert "MRTR-C1…C7" not in opening
    assert "what the spec asks of a client (MRTR-C1…C4 MUST / MAY / MUST NOT)" in opening
    assert "the kit's round cap (MRTR-C7 (KIT))" in opening
    failed = code_cell(NOTEBOOK, "c1 = await client.begin_tool_call")
    [error] = [o for o in failed.outputs if o.output_type == "error"]
    assert (
        "must answer every requested key" in error.evalue and "(MRTR-C1, MRTR-C6)" in error.evalue
    )
    assert "exactly the requested keys" not in error.evalue
    prose = flat(text_of("markdown"))
    assert "answers must cover exactly the requested keys" not in prose
    assert "it also refuses one nobody asked for, the kit's choice (KIT)" in prose
    assert "servers ignore those (MRTR-E3 SHOULD)" in prose


def test_error_7_quiz_01_speaks_of_two_requested_keys_not_two_fields_of_one_form():
    from tests.course.lesson_quizzes import QUIZZES

    everything = "\n".join(qz.text() for key, qz in QUIZZES.items() if qz.lesson == "01")
    assert "`login` and `units`" not in everything
    assert "two keys in `inputRequests`, `details` and `confirm`" in everything


def test_error_9_01b_cites_the_right_rule_the_card_text_agrees_and_binder_opens_00():
    opening = flat(cells(OPTIONAL)[0].source)
    assert "which travel the same way (MRTR-C8)" not in opening
    assert "which a server asks for over MRTR too (MRTR-0 MUST)" in opening
    prose = flat(text_of("markdown", OPTIONAL))
    assert "the full link and the host it leads to. Press **Go to the page**" not in prose
    assert (
        "shows who asks, the full address as text and the host it leads to. Press **Go to the "
        "page**: the card sends `accept` at once and only then shows a link you can click"
    ) in prose
    readme = flat((ROOT / "README.md").read_text())
    assert "which opens lesson 01:" not in readme
    link = readme.split("It prints a link of this form, which opens lesson 00:", 1)[1]
    assert link.split("```", 2)[1].strip().endswith("notebooks/00-why-mrtr/00-why-mrtr.ipynb")


@pytest.mark.parametrize("path", [WHY, NOTEBOOK, OPTIONAL], ids=lambda p: p.stem)
def test_a_lesson_with_widgets_says_what_a_page_reload_does_to_them(path):
    """Issue 19 (browser): after a reload every widget shows 'model not found'; the header says
    so and what to do."""
    opening = flat(cells(path)[0].source)
    assert '"model not found"' in opening
    assert re.search(r"until you run (its cell|their cells) again", opening), opening[-300:]


def test_01b_shows_one_retry_on_the_wire_request_then_answer():
    """Issue 19: after 01, the retry stays visible in 01b as JSON, the request then the answer,
    with the state echoed when the server sent one (MRTR-C2)."""
    request = code_cell(OPTIONAL, "server = weather.build_server()")
    assert request.source.rstrip().endswith("show(retry(3, ada), hide_meta=True)")
    sent = outputs_text(request)
    assert '"method": "tools/call"' in sent and '"inputResponses"' in sent and '"id": 3' in sent
    answer = code_cell(OPTIONAL, "show((await server.handle(retry(3, ada))).body")
    assert '"resultType": "complete"' in outputs_text(answer)
    assert 'again["requestState"] = state' in request.source
