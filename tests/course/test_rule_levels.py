"""Every rule a lesson cites shows its level beside it, as docs/spec-map.md gives it (issue 31,
item 4): ``(MRTR-E3 SHOULD)``, ``CAP-2 MUST``, ``MRTR-C6 note``, ``MRTR-S8 MUST NOT / MAY``,
and ``MRTR-R3 (KIT)`` for a kit convention (a "—" in the map's Level column).

What is checked, and the choices made:

* Every lesson (``notebooks/*/NN*.ipynb``, found by glob), its Markdown cells only: quizzes and
  checkpoint messages are code, with their own tests.
* Prose only. An ID inside a fenced code block or an inline code span (``MRTR-S4a`` in
  backticks, a mermaid diagram) is shown as code, not cited as a rule, and needs no level;
  tests/test_spec_map.py still checks that it exists.
* A shorthand for several IDs (``MRTR-S5a–c``, ``MRTR-C1…C4``, ``CORE-10/11``) is followed by
  one level for the group: the members' keywords, each once, joined by `` / `` (their order is
  free). ``MRTR-S5a–c SHOULD``; ``MRTR-C1…C4 MUST / MAY / MUST NOT``.
* A level must be the map's: ``MRTR-E3 MUST`` fails as surely as ``MRTR-E3`` alone. One rule
  with a compound level may be cited by the part the sentence is about: ``ELIC-12 SHOULD`` for
  its HTTPS part, of a ``MUST / MUST NOT / SHOULD`` row; a keyword the row does not have fails.

``tools/rule_levels.py`` writes the missing levels; it is checked here to do so, and to change
nothing on a second run. This file parses the map and the lessons on its own, so a fault in the
tool cannot hide one in the lessons.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from tests.lesson_files import LESSON_GLOB, LESSONS, ROOT
from tests.test_spec_map import CITATION, _expand

SPEC_MAP = ROOT / "docs" / "spec-map.md"
ROW = re.compile(r"^\| \*\*(?P<id>[A-Za-z0-9-]+)\*\*(?P<kit> \(KIT\))? \| (?P<level>[^|]*)\|")
KEYWORD = r"(?:MUST NOT|MUST|SHOULD NOT|SHOULD|MAY|note|step)"
AFTER = re.compile(
    rf"[ \t]*(?:\n[ \t]*)?(\(KIT\)|{KEYWORD}(?:, where needed|\s*/\s*(?:{KEYWORD}|KIT))*)"
)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)


def levels() -> dict[str, str]:
    found = {}
    for line in SPEC_MAP.read_text().splitlines():
        if m := ROW.match(line):
            level = m["level"].strip()
            found[m["id"]] = "(KIT)" if m["kit"] or level == "—" else level
    return found


LEVELS = levels()


def parts(level: str) -> set[str]:
    """A level's keywords: "MUST / MAY" -> {MUST, MAY}; "(KIT)" -> {KIT}."""
    return {p.strip("() ") for p in re.split(r"\s*/\s*", level)}


def problems(markdown: str) -> list[str]:
    """Each citation in ``markdown``'s prose whose level is missing or not the map's."""
    found = []
    prose = CODE.sub(lambda m: " " * len(m[0]), markdown)  # same offsets, no code
    for m in CITATION.finditer(prose):
        ids = _expand(m["id"], m["range"], m["alts"] or "")
        if not ids <= LEVELS.keys():
            continue  # an unknown ID is tests/test_spec_map.py's failure
        want = set().union(*(parts(LEVELS[i]) for i in ids))
        after = AFTER.match(prose, m.end())
        written = after[1] if after else ""
        single = {LEVELS[i] for i in ids}
        if len(ids) == 1 and "(KIT)" not in (written, *single):
            # One rule may be cited by the part of its compound level the sentence is about.
            right = bool(written) and parts(written) <= want
        else:
            right = written in single if len(single) == 1 else parts(written) == want
        if not right:
            where = prose[max(0, m.start() - 50) : m.end() + 30].replace("\n", " ")
            said = f"{written!r}" if written else "no level"
            found.append(f"{m[0]}: {said}, the map says {' / '.join(sorted(want))} (…{where}…)")
    return found


LESSON_PATHS = sorted(LESSONS.glob(LESSON_GLOB))


def markdown_cells(path: Path) -> list[str]:
    notebook = json.loads(path.read_text())
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("path", LESSON_PATHS, ids=lambda p: p.parent.name)
def test_every_rule_a_lesson_cites_shows_the_level_the_spec_map_gives_it(path):
    found = [p for cell in markdown_cells(path) for p in problems(cell)]
    assert found == [], (
        f"{len(found)} citation(s) in {path.name} without the spec map's level "
        "(tools/rule_levels.py writes them):\n" + "\n".join(found)
    )


def test_the_lessons_are_all_found():
    names = {p.parent.name[:3].rstrip("-") for p in LESSON_PATHS}
    assert {"00", "01", "01b", "02", "02b", "03", "04", "05"} <= names


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("servers ignore those (MRTR-E3 SHOULD).", True),
        ("servers ignore those (MRTR-E3).", False),  # missing
        ("servers ignore those (MRTR-E3 MUST).", False),  # wrong
        ("servers ignore those (MRTR-E3 SHOULD NOT).", False),  # wrong, sharing a prefix
        ("a note (MRTR-C6 note).", True),
        ("the round cap (MRTR-C7 (KIT)).", True),
        ("the round cap (MRTR-C7 MUST).", False),  # a KIT row written as a MUST
        ("bound claims (MRTR-S5a–c SHOULD).", True),
        ("bound claims (MRTR-S5a–c).", False),
        ("the client (MRTR-C1…C4 MUST NOT / MAY / MUST).", True),  # order is free
        ("the client (MRTR-C1…C4 MUST).", False),  # a group's level names every member's
        ("keeps asking (MRTR-S8 MUST NOT / MAY).", True),
        ("in code: `MRTR-S4a` and\n```\nMRTR-E3\n```\n", True),  # code is not a citation
    ],
)
def test_the_check_itself_catches_missing_and_wrong_levels(text, ok):
    assert (problems(text) == []) is ok, problems(text)


def _tool():
    spec = importlib.util.spec_from_file_location("rule_levels", ROOT / "tools" / "rule_levels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rule_levels"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_tool_writes_every_missing_level_and_a_second_run_changes_nothing(tmp_path):
    """tools/rule_levels.py on a lesson with the levels taken out (and one wrong): afterwards
    this file's check passes, and running it again leaves the file byte for byte the same."""
    tool = _tool()
    lesson = next(p for p in LESSON_PATHS if p.parent.name.startswith("02-"))
    notebook = json.loads(lesson.read_text())
    stripped = 0
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            text, n = re.subn(rf"(?<=[0-9a-c]) (?:{KEYWORD}(?: / {KEYWORD})*)(?=[),;:.])", "", text)
            stripped += n
            cell["source"] = text.replace("(MRTR-S4b)", "(MRTR-S4b MUST)").splitlines(True)
    assert stripped >= 10
    copy = tmp_path / lesson.name
    copy.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
    assert [p for c in markdown_cells(copy) for p in problems(c)]
    assert tool.main(["--check", str(copy)]) == 1
    assert tool.main([str(copy)]) == 0
    assert [p for c in markdown_cells(copy) for p in problems(c)] == []
    once = copy.read_text()
    assert tool.main([str(copy)]) == 0 and copy.read_text() == once
    assert tool.main(["--check", str(copy)]) == 0


def test_the_tool_and_this_check_read_the_same_levels_from_the_map():
    assert _tool().spec_levels() == LEVELS
    assert LEVELS["MRTR-E3"] == "SHOULD" and LEVELS["MRTR-C6"] == "note"
    assert LEVELS["MRTR-R3"] == "(KIT)" and LEVELS["MRTR-S8"] == "MUST NOT / MAY"
