"""Slides from the lessons (issue 21): every cell of every lesson carries its slide mark, the
marks follow tools/slides.py's rules unless set by hand, and each lesson's deck builds and holds
its key points and its sequence diagram.

Lessons are discovered: a new or split lesson must be marked too (``tools/slides.py mark``)."""

from __future__ import annotations

import html
import re
import sys
import tomllib

import nbformat
import pytest

from tests.lesson_files import LESSONS as LESSON_DIR
from tests.lesson_files import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import slides

LESSONS = sorted(LESSON_DIR.glob(slides.LESSON_GLOB))
EPISODES = {
    e["notebook"]: e
    for e in tomllib.loads((ROOT / "instructors" / "episodes.toml").read_text("utf-8"))["episode"]
}
TYPES = {"slide", "subslide", "fragment", "-", "skip", "notes"}


def plain(text: str) -> str:
    """Text a reader sees, from markdown or HTML: tags, emphasis and code marks dropped."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S | re.I)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    text = " ".join(re.sub(r"[*`]", "", text).split())
    return re.sub(r"\( | (?=[,.;:)])", lambda m: m[0].strip(), text)  # a tag's edge left a space


def test_lessons_are_found():
    assert len(LESSONS) >= 7


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_every_cell_is_marked(path):
    nb = nbformat.read(path, as_version=4)
    unmarked = [i for i, c in enumerate(nb.cells) if slides.slide_type(c) is None]
    assert not unmarked, f"{path.name}: cells {unmarked} have no slide mark: tools/slides.py mark"
    assert {slides.slide_type(c) for c in nb.cells} <= TYPES
    assert slides.slide_type(nb.cells[0]) == "slide"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_sections_open_slides_and_exercise_answers_are_not_shown(path):
    """Every ``## `` section but the set-up opens a slide; no solution or checkpoint is shown."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        kind = slides.slide_type(cell)
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("## "):
            expected = "skip" if cell.source.lstrip().startswith(slides.SETUP) else "slide"
            assert kind == expected, (path.name, i, cell.source[:40])
        if cell.cell_type == "code" and "%load" in cell.source:
            assert kind == "skip", (path.name, i)


def test_the_rules_mark_a_small_lesson(tmp_path):
    nb = nbformat.v4.new_notebook()
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb.cells = [
        md("# 99 · A lesson"),
        md("## Setup"),
        code("import x"),
        md("## 1. A section"),
        md("A concept."),
        code("show()"),
        md("### Exercise 1 · Try it (5 min)"),
        code("def f(): ..."),
        md("<details><summary>Hint</summary>h</details>"),
        code("# %load solutions/99_f.py"),
        code("await check_f(f)"),
        md("After the exercise."),
        code("more()"),
    ]
    nb.cells[4].metadata["slideshow"] = {"slide_type": "fragment"}  # set by hand: kept
    path = tmp_path / "99-a.ipynb"
    nbformat.write(nb, path)
    assert slides.mark(path) == len(nb.cells) - 1
    marked = [slides.slide_type(c) for c in nbformat.read(path, as_version=4).cells]
    assert marked == [
        "slide", "skip", "skip", "slide", "fragment", "-",
        "subslide", "skip", "skip", "skip", "skip", "subslide", "-",
    ]  # fmt: skip
    assert slides.mark(path) == 0  # nothing left to mark
    assert slides.titles(nbformat.read(path, as_version=4)) == ["99 · A lesson", "1. A section"]


@pytest.mark.slow
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_the_deck_builds_with_its_key_points_and_sequence_diagram(path, tmp_path):
    deck = slides.build(path, tmp_path).read_text("utf-8")
    assert "reveal" in deck.lower()
    sections = deck.count("<section")
    assert sections >= len(slides.titles(nbformat.read(path, as_version=4)))
    text = plain(deck)
    for point in EPISODES[path.name]["keypoints"]:
        assert plain(point) in text, (path.name, point)
    assert re.search(r"class=\"mermaid\">\s*sequenceDiagram", deck), path.name
