"""Slides from the lessons (issues 21 and 32): every cell of every lesson carries its slide mark,
the marks follow tools/slides.py's rules unless set by hand, a deck shows each slide's summary,
key code and key output (the rest in its speaker notes), its scripts come from the pinned npm
tarballs beside it, and each lesson's deck builds, asks no CDN and shows its key points and its
sequence diagram. In a browser, offline, at 1280×720: tests/course/test_slides_browser.py.

Lessons are discovered: a new or split lesson must be marked too (``tools/slides.py mark``)."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import re
import subprocess
import sys
import tarfile
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


def test_a_summary_is_the_heading_and_the_first_sentences_and_the_rest_goes_to_the_notes():
    cell = (
        "## 2. A section\n\nFirst sentence here. " + "Second one, longer. " * 30 + "\n\n"
        "More prose the slide does not show.\n\n```mermaid\nsequenceDiagram\n  A->>B: hi\n```"
    )
    summary = slides.summarize(cell)
    assert summary.heading == "## 2. A section"
    assert summary.text.startswith("First sentence here. Second one, longer.")
    assert summary.text.endswith(".") and len(summary.text) <= slides.SUMMARY_CHARS
    assert summary.diagrams == ["sequenceDiagram\n  A->>B: hi"]
    points = slides.summarize("## Key points\n\n- one\n- two\n\n## In practice\n\n- three")
    assert points.text == "- one\n- two"  # an opening list is the summary
    colon = slides.summarize("## 3. X\n\nIt asks one question:\n\n```python\nask()\n```\n\nMore.")
    assert colon.text == "It asks one question:\n\n```python\nask()\n```"  # what it announces
    opening = slides.summarize(
        "# 01 · T\n\nWhat.\n\n**What you will learn**\n\n- a\n- b", opening=True
    )
    assert opening.text == "What.\n\n**What you will learn**\n\n- a\n- b"


def small_lesson() -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    out = nbformat.v4.new_output
    nb = nbformat.v4.new_notebook()
    long_text = "".join(f"line {i} " + "x" * 200 + "\n" for i in range(40))
    nb.cells = [
        md("# 99 · A lesson\n\nWhat it is about. " + "Detail. " * 80),
        md("## 1. A section\n\nThe point of it.\n\nProse for the notes only."),
        code("import json\nfrom pathlib import Path"),
        code("print(json.dumps(big))", outputs=[out("stream", name="stdout", text=long_text)]),
        code("\n".join(f"step_{i}()" for i in range(20)), outputs=[out("stream", text="ok\n")]),
        code(
            "boom()", outputs=[out("error", ename="InvalidAnswers", evalue="login", traceback=[])]
        ),
    ]
    for cell, kind in zip(nb.cells, ["slide", "slide", "-", "-", "-", "-"], strict=True):
        cell.metadata["slideshow"] = {"slide_type": kind}
    return nb


def test_a_deck_shows_key_code_and_trimmed_output_on_slide_sized_pages():
    deck = slides.slide_notebook(small_lesson())
    kinds = [(c.cell_type, slides.slide_type(c)) for c in deck.cells]
    assert kinds.count(("markdown", "notes")) == 2  # each markdown cell, whole, in the notes
    notes = [c.source for c in deck.cells if slides.slide_type(c) == "notes"]
    assert notes[1].endswith("Prose for the notes only.")
    shown = [c for c in deck.cells if slides.slide_type(c) != "notes"]
    assert all("Prose for the notes" not in c.source for c in shown)
    assert all("import json" not in c.source for c in shown)  # an import cell is set-up
    outputs = [c.outputs[0].text for c in shown if c.cell_type == "code" and c.outputs]
    big = outputs[0].splitlines()
    assert 3 <= len(big) <= slides.OUTPUT_LINES
    assert big[-1] == f"… {40 - len(big) + 1} more lines in the notebook"
    assert all(len(line) <= slides.OUTPUT_COLUMNS for line in big)
    assert outputs[-1] == "InvalidAnswers: login\n"
    # 20 lines of code do not fit under the big output: a continuation subslide of their own.
    titles = [c.source for c in shown if slides.slide_type(c) == "subslide"]
    assert "### 1. A section (continued)" in titles
    steps = next(i for i, c in enumerate(deck.cells) if c.source.startswith("step_0"))
    assert slides.slide_type(deck.cells[steps - 1]) == "subslide"


def tarball_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_vendor_copies_only_the_pinned_tarballs_files_and_refuses_another(tmp_path, monkeypatch):
    data = tarball_of({"LICENSE": b"MIT", "dist/x.js": b"x()", "dist/unused.js": b"no"})
    pinned = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    asset = slides.Asset("x", "1.0.0", pinned, ("LICENSE", "dist/x.js"))
    monkeypatch.setattr(slides, "ASSETS", (asset,))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "x-1.0.0.tgz").write_bytes(data)
    copied = slides.vendor(tmp_path / "out", cache)
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in copied) == [
        "vendor/x/LICENSE",
        "vendor/x/dist/x.js",
    ]
    (cache / "x-1.0.0.tgz").write_bytes(tarball_of({"LICENSE": b"MIT", "dist/x.js": b"evil()"}))
    with pytest.raises(slides.VendorError, match="sha512"):
        slides.vendor(tmp_path / "out", cache)


def test_the_pinned_assets_are_what_the_decks_load():
    loaded = set(re.findall(r'<script src="vendor/([^"]+)"', slides.TEMPLATE))
    copied = {f"{a.package}/{f}" for a in slides.ASSETS for f in a.files if f.endswith(".js")}
    assert loaded == copied
    assert all(re.fullmatch(r"sha512-[A-Za-z0-9+/]{86}==", a.integrity) for a in slides.ASSETS)


def visible(deck: str) -> str:
    """A deck's text without its speaker notes."""
    return plain(re.sub(r'<aside class="notes">.*?</aside>', " ", deck, flags=re.S))


@pytest.mark.slow
@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_the_deck_builds_with_its_key_points_and_sequence_diagram(path, tmp_path):
    deck = slides.build(path, tmp_path).read_text("utf-8")
    assert "reveal" in deck.lower()
    sections = deck.count("<section")
    assert sections >= len(slides.titles(nbformat.read(path, as_version=4)))
    text = visible(deck)
    for point in EPISODES[path.name]["keypoints"]:
        assert plain(point) in text, (path.name, point)
    assert re.search(r"class=\"mermaid\">\s*sequenceDiagram", deck), path.name
    # Nothing from a CDN: every script and style sheet is a file beside the deck, or inline.
    outside = re.findall(r"<(?:script|link)\b[^>]*(?:src|href)=\"(?!vendor/)([^\"]+)\"", deck)
    assert outside == [], outside
    assert not re.search(r"(import\s[^;]*from\s*|@import\s*(url\()?)[\'\"]?https?:", deck)


def test_kit_slides_fetches_the_scripts_first_then_builds_with_the_same_out(monkeypatch, tmp_path):
    """``kit.py slides --out DIR``: ``vendor`` in the user's own environment (npm's cache),
    then ``build`` in the kit's isolated Jupyter one; a failed fetch builds nothing."""
    from tests.test_kit_tool import load_kit

    kit = load_kit(monkeypatch)
    runs: list[tuple[list[str], dict[str, str] | None]] = []
    status = iter([0, 0])

    def record(command, **kwargs):
        runs.append((command[2:], kwargs.get("env")))
        return subprocess.CompletedProcess(command, next(status))

    monkeypatch.setattr(kit.subprocess, "run", record)
    monkeypatch.setattr(kit, "isolated_jupyter_env", lambda: {"HOME": "isolated"})
    assert kit.build_slides(["--out", str(tmp_path)]) == 0
    assert runs == [
        (["vendor", "--out", str(tmp_path)], None),
        (["build", "--out", str(tmp_path)], {"HOME": "isolated"}),
    ]
    runs.clear()
    status = iter([1])
    assert kit.build_slides([]) == 1
    assert [command for command, _ in runs] == [["vendor"]]
