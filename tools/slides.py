"""Slide decks from the lessons, for an instructor to talk over (issue 21).

    .venv/bin/python tools/slides.py build [--out slides] [notebooks/NN-name/NN-name.ipynb ...]
    .venv/bin/python tools/slides.py mark [notebooks/NN-name/NN-name.ipynb ...]
    .venv/bin/python tools/slides.py titles notebooks/NN-name/NN-name.ipynb

(``python3 tools/kit.py slides`` runs ``build`` with the kit's environment.)

Which cells are slides is marked in each notebook's cell metadata, ``"slideshow":
{"slide_type": ...}``: the field both nbconvert's reveal.js decks and RISE (live slides inside
JupyterLab, the ``jupyterlab-rise`` extension the lab extra installs, which needs no network)
read. Nothing is copied into another file: the deck is the lesson.

``mark`` writes those marks by the rules below into cells that have none (a mark set by hand is
kept), so a lesson's author runs it after adding cells; ``tests/course/test_slides.py`` fails
when a lesson has an unmarked cell. The rules follow the lessons' layout, one concept a cell:

* the header cell and every ``## `` section opens a slide;
* every other markdown cell (one concept) opens a subslide below it, and the code cells after it
  stay on that subslide (``-``);
* what a talk does not show is skipped: the set-up code, an exercise's own cells after its task
  (the learner's cell, the hint, the ``%load`` solution, the checkpoint).

``build`` writes one ``NN-name.slides.html`` per lesson with nbconvert's slides exporter (its
public API), stored outputs as they are: nothing is executed. The decks load reveal.js and
Mermaid from a CDN when opened; in a room without network, present with RISE instead.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LESSON_GLOB = "[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb"  # as tools/kit.py: 01-..., 01b-...-OPTIONAL
EXERCISE = re.compile(r"^### Exercise \d+ · ", re.M)
CHECKPOINT = re.compile(r"(await )?[\w.]*check_\w+\(.*\)")  # as benchmarks/reading_time.py
SECTION = re.compile(r"^## ", re.M)
SETUP = "## Setup"


def lessons(paths: list[str] | None = None) -> list[Path]:
    if paths:
        return [Path(p).resolve() for p in paths]
    return sorted(NOTEBOOKS.glob(LESSON_GLOB))


def slide_type(cell: Any) -> str | None:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


def planned_types(nb: Any) -> list[str]:
    """The slide type the rules give each cell of ``nb``, in order."""
    types: list[str] = []
    in_exercise = in_setup = False
    for i, cell in enumerate(nb.cells):
        source = cell.source
        if cell.cell_type == "markdown":
            in_setup = source.lstrip().startswith(SETUP)
            if in_setup:
                types.append("skip")
                continue
            if i == 0 or SECTION.match(source.lstrip()):
                in_exercise = False
                types.append("slide")
                continue
            if EXERCISE.search(source):
                in_exercise = True
                types.append("subslide")
                continue
            types.append("skip" if in_exercise else "subslide")
            continue
        if in_exercise:
            types.append("skip")
            if CHECKPOINT.fullmatch(source.strip()):
                in_exercise = False
            continue
        types.append("skip" if in_setup else "-")
    return types


def mark(path: Path) -> int:
    """Mark the cells of ``path`` that have no slide type; return how many were marked."""
    nb = nbformat.read(path, as_version=4)
    marked = 0
    for cell, planned in zip(nb.cells, planned_types(nb), strict=True):
        if slide_type(cell) is None:
            cell.metadata["slideshow"] = {"slide_type": planned}
            marked += 1
    if marked:
        nbformat.write(nb, path)
    return marked


def titles(nb: Any) -> list[str]:
    """The first line of every cell that opens a slide: what a deck's outline shows."""
    found = []
    for cell in nb.cells:
        if slide_type(cell) == "slide" and cell.cell_type == "markdown":
            first = next((line for line in cell.source.splitlines() if line.strip()), "")
            found.append(first.lstrip("#").strip())
    return found


def build(path: Path, out: Path) -> Path:
    from nbconvert import SlidesExporter  # heavy: only when a deck is built

    nb = nbformat.read(path, as_version=4)
    body, _ = SlidesExporter().from_notebook_node(
        nb, resources={"metadata": {"name": path.stem, "path": str(path.parent)}}
    )
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{path.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="one reveal.js deck per lesson")
    b.add_argument("--out", type=Path, default=ROOT / "slides")
    b.add_argument("notebooks", nargs="*")
    m = sub.add_parser("mark", help="mark unmarked cells by the rules")
    m.add_argument("notebooks", nargs="*")
    t = sub.add_parser("titles", help="the slide titles of one lesson")
    t.add_argument("notebook")
    args = parser.parse_args(argv)
    if args.command == "mark":
        for path in lessons(args.notebooks):
            print(f"{path.name}: {mark(path)} cells marked")
    elif args.command == "titles":
        for title in titles(nbformat.read(args.notebook, as_version=4)):
            print(title)
    else:
        for path in lessons(args.notebooks):
            deck = build(path, args.out)
            nb = nbformat.read(path, as_version=4)
            below = sum(slide_type(c) == "subslide" for c in nb.cells)
            where = deck.relative_to(ROOT) if deck.is_relative_to(ROOT) else deck
            print(f"{where}: {len(titles(nb))} slides, {below} subslides below them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
