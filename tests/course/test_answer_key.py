"""The instructors' answer key (issue 21, issue 32) is in step with the checkpoint tests:
regenerating it from them (tools/answer_key.py, which runs tests/course/test_lesson_0*.py with a
recording plugin) gives the committed page, and every exercise of every lesson has wrong answers
in it, the capstone's gate (lesson 04) included."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import nbformat
import pytest

from tests.lesson_files import LESSONS as LESSON_DIR
from tests.lesson_files import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import answer_key

KEY = ROOT / "instructors" / "answer-key.md"
HEADING = re.compile(r"^### (Exercise \d+ · [^\n(]*?)\s*\(\d+ min\)", re.M)


def contents() -> str:
    text = KEY.read_text(encoding="utf-8")
    return text[text.index("## Contents") : text.index("\n## ", text.index("## Contents") + 1)]


def notebook_exercises() -> list[tuple[str, str]]:
    """Every ``### Exercise N · …`` heading of every lesson, read here, not by the tool."""
    found = []
    for path in sorted(LESSON_DIR.glob("[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        title = nb.cells[0].source.splitlines()[0].lstrip("# ").strip()
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                found += [(title, m[1]) for m in HEADING.finditer(cell.source)]
    return found


def test_the_contents_list_every_exercise_heading_of_the_notebooks():
    """Each exercise heading is in the contents, 04's capstone too (issue 32: it was left out
    because its checkpoint is ``capstone.gate(...)``, not a ``check_*`` call)."""
    found = notebook_exercises()
    assert len(found) >= 14
    assert ("04 · Port your own server (capstone)", "Exercise 1 · Port the pizzeria") in found
    listed = contents()
    for lesson, heading in found:
        assert f"- {lesson}: {heading} (`" in listed, f"{lesson}, {heading}: not in {KEY.name}"


def test_every_checkpoint_cell_of_the_notebooks_is_in_the_contents():
    """A checkpoint cell is a lone call of a ``check_*`` function or of the gate; each one's
    exercise is in the contents with at least two wrong answers."""
    calls = set()
    for path in sorted(LESSON_DIR.glob("[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            source = cell.source.strip()
            m = re.match(r"(?:await\s+)?(?:\w+\.)?(check_\w+|gate)\(", source)
            if cell.cell_type == "code" and "\n" not in source and m:
                calls.add(m[1])
    assert {"gate", "check_call_with_mrtr", "check_host_flow"} <= calls
    assert calls == set(answer_key.exercises(LESSON_DIR))
    listed = contents()
    for check in calls:
        line = re.search(rf"^- .*\(`{check}`\): (\d+) wrong answers$", listed, re.M)
        assert line, f"`{check}`: not in the contents of {KEY.name}"
        assert int(line[1]) >= 2, f"`{check}`: fewer than 2 wrong answers are tested"


def test_the_capstone_entry_goes_item_by_item_with_the_fix():
    """04's entry: the gate's items, each ✘ message a test provokes, and a fix for each."""
    text = KEY.read_text(encoding="utf-8")
    start = text.index("## 04 · Port your own server (capstone) · Exercise 1 · Port the pizzeria")
    entry = text[start : text.index("\n## ", start + 1)]
    assert "Checkpoint: `await capstone.gate(build_server, fleet=False)`" in entry
    assert "solutions/04_pizzeria.py" in entry
    for n in range(1, 9):
        assert re.search(rf"^{n}\. ", entry, re.M), f"gate item {n} is not described"
    for item in ("1. a 2026-07-28 server", "6. the kit's MRTR checks", "7. the fleet"):
        assert f"- **{item}" in entry, item
    for message in ("returns a LegacyServer", "must ask again (MRTR-E4)", "(CORE-8, CORE-9)"):
        assert message in entry, message
    assert entry.count("What it is: ") == entry.count("The gate says:") >= 6
    assert "```diff" in entry


def test_no_entry_shows_a_checkpoints_own_source_as_the_wrong_answer():
    """The review's C6: 03's entries showed the check_* function (a test parameter) as the
    learner's wrong answer."""
    text = KEY.read_text(encoding="utf-8")
    assert not re.search(r"^(?:async )?def check_", text, re.M)


def _gate_record(test: str, why: str, source: str) -> dict:
    items = [
        ["1. a 2026-07-28 server", "pass", "ok"],
        ["6. the kit's MRTR checks", "fail", why],
        ["the final retry, twice", "fail", "booked 2 tables"],  # a title with no number
    ]
    message = "Gate for x.py\n" + "\n".join(f"{t}: {w}" for t, _, w in items)
    return {
        "test": f"tests/course/test_lesson_04.py::{test}",
        "checkpoint": answer_key.GATE,
        "status": "not yet",
        "message": message,
        "attempt": {},
        "doc": "",
        "source": source,
        "items": items,
        "gate_doc": "Items:\n\n1. a server;\n6. the checks.\n",
    }


def test_a_gate_record_renders_as_an_item_with_its_message_and_its_fix():
    """Rendering alone, on made-up records: a new gate item or half-port (another helper adds a
    final-retry replay item) shows up with its message and a diff to the solution."""
    solution = (LESSON_DIR / "04-port-your-own-server" / "solutions" / "04_pizzeria.py").read_text()
    twice = solution.replace("return answer.ask()", "return answer.ask()  # twice", 1)
    records = [_gate_record("test_books_twice", "the final retry booked twice (MIG-3)", twice)]
    text = answer_key.render(LESSON_DIR, records)
    start = text.index("## 04 · ")
    entry = text[start : text.index("\n## ", start + 1)]
    assert "1. a server;" in entry and "6. the checks." in entry
    assert "- **6. the kit's MRTR checks**" in entry
    assert "  - `the final retry booked twice (MIG-3)` (entry 1)" in entry
    assert entry.index("- **6. the kit's MRTR checks**") < entry.index(
        "- **the final retry, twice**"
    )
    assert "### 1. From `test_books_twice`" in entry and "What it is: Books twice." in entry
    assert "-    if answer.needs_asking:" not in entry
    assert "-        return answer.ask()  # twice\n+        return answer.ask()" in entry


@pytest.mark.slow
def test_the_key_is_what_the_checkpoint_tests_say_today():
    env = {**os.environ, "MRTR_KIT_LESSONS": str(LESSON_DIR)}
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "answer_key.py"), "--check"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
