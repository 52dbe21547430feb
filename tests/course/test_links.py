"""Every relative link in a lesson's markdown opens a file in JupyterLab (issue 19).

``python3 tools/kit.py lab`` (and Binder) serve the repository as JupyterLab's root, with the
file browser on notebooks/, each lesson in its folder (notebooks/NN-name/NN-name.ipynb); a link
JupyterLab resolves to a path outside that root, or to a file
that is not there, does nothing when clicked. The lessons are discovered, so a link another
lesson adds is checked too. The real click is ``test_browser_links.py``.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import nbformat
import pytest

from tests.lesson_files import LESSONS, ROOT

NOTEBOOKS = sorted(LESSONS.glob("*/*.ipynb"))
# [text](target), <a href="target">, and reference definitions "[label]: target".
LINK = re.compile(
    r"\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)|href=[\"']([^\"']+)[\"']|^\[[^\]]+\]:\s*(\S+)", re.M
)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def relative_links(markdown: str) -> list[str]:
    """The relative targets in ``markdown`` (no URL with a scheme, no in-page #anchor), without
    their #fragment, %-decoded."""
    found = []
    for m in LINK.finditer(markdown):
        target = next(t for t in m.groups() if t)
        if SCHEME.match(target) or target.startswith("#"):
            continue
        found.append(urllib.parse.unquote(target.split("#", 1)[0]))
    return found


def broken(notebook: Path, root: Path) -> list[str]:
    """Each relative link of ``notebook`` that does not resolve to a file inside ``root``."""
    problems = []
    for i, cell in enumerate(nbformat.read(notebook, as_version=4).cells):
        if cell.cell_type != "markdown":
            continue
        for target in relative_links(cell.source):
            # The lab resolves a link against the notebook's folder, notebooks/NN-name/ of its root.
            where = (root / "notebooks" / notebook.parent.name / target).resolve()
            inside = where.is_relative_to(root.resolve())
            if target.startswith("/") or not inside or not where.is_file():
                problems.append(f"cell {i}: {target}")
    return problems


def test_lessons_are_found():
    assert len(NOTEBOOKS) >= 7


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_relative_link_opens_a_file_inside_the_lab_root(notebook):
    assert broken(notebook, ROOT) == [], f"{notebook.name}: links JupyterLab cannot open"


def test_the_check_catches_a_link_outside_the_root_and_a_missing_file(tmp_path):
    page = tmp_path / "99-fake.ipynb"
    cells = [
        nbformat.v4.new_markdown_cell("[up](../../../outside.md) · [gone](../docs/nothing.md)"),
        nbformat.v4.new_markdown_cell(
            "[ok](../../docs/cheatsheet.md#top) · [web](https://example.org) · [here](#key-points)"
        ),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), page)
    assert broken(page, ROOT) == ["cell 0: ../../../outside.md", "cell 0: ../docs/nothing.md"]


def test_the_lessons_link_the_cheat_sheet_and_the_spec_map():
    """The README says to keep the cheat-sheet at hand: lessons link it, and the spec map."""
    texts = {p.name: nbformat.read(p, as_version=4) for p in NOTEBOOKS}
    links = {
        name: {t for c in nb.cells if c.cell_type == "markdown" for t in relative_links(c.source)}
        for name, nb in texts.items()
    }
    assert "../../docs/cheatsheet.md" in links["01-the-basic-flow.ipynb"]
    for name, found in links.items():
        if name[:2].isdigit():
            assert "../../docs/spec-map.md" in found, name
