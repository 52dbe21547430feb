"""Where the tests read the lessons from.

``python3 tools/kit.py test`` sets ``MRTR_KIT_LESSONS`` to a copy of ``notebooks/`` as committed
(git HEAD), so the tests check the lessons, not a learner's copies that JupyterLab saved with
their own outputs and answers. Without it (plain ``pytest``), ``notebooks/`` as it is.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LESSONS = Path(os.environ.get("MRTR_KIT_LESSONS") or ROOT / "notebooks")
# Each lesson is a folder holding its notebook: notebooks/NN-name/NN-name.ipynb (01b-… too).
LESSON_GLOB = "[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb"


def run_cell(source: str, namespace: dict[str, Any]) -> Any:
    """Run one notebook cell's code as IPython would (top-level await allowed), and return
    the value of its last expression."""
    return asyncio.run(run_cell_in_loop(source, namespace))


async def run_cell_in_loop(source: str, namespace: dict[str, Any]) -> Any:
    """``run_cell`` inside the running event loop: consecutive cells share it, as a kernel's
    cells do (a client made in one cell is used in the next)."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    pending = eval(compile(tree, "<cell>", "exec", flags=flags), namespace)
    if asyncio.iscoroutine(pending):
        await pending
    if last is None:
        return None
    value = eval(compile(ast.Expression(last.value), "<cell>", "eval", flags=flags), namespace)
    return await value if asyncio.iscoroutine(value) else value


# What a lesson's test reads of a notebook, as plain JSON (no nbformat needed).
SOLUTION_HINT = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)


def notebook_cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["cells"]


def cell_source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def cell_tags(cell: dict[str, Any]) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def follow_the_solution_sentence(folder: Path, cells: list[Any], load: str, setup: str) -> Any:
    """Do what the hint's solution sentence says, in one namespace, as a kernel would: run
    ``setup``, the stub cell whose first line starts ``load`` (``# %load solutions/NN_name``)
    and the checkpoint two cells below it, which must not pass; then %load (the cell becomes
    '# %load path' and the file, from ``folder``), run it, and return the checkpoint's verdict.
    ``cells`` are nbformat cells."""
    [i] = [k for k, c in enumerate(cells) if c.source.startswith(load)]
    namespace: dict[str, Any] = {}
    run_cell(setup, namespace)
    run_cell(cells[i].source, namespace)
    assert not run_cell(cells[i + 2].source, namespace).passed  # the stub: not done yet
    path = cells[i].source.splitlines()[0].removeprefix("# %load ")
    run_cell(f"# %load {path}\n" + (folder / path).read_text(), namespace)
    return run_cell(cells[i + 2].source, namespace)


def exercise_stubs(cells: list[dict[str, Any]], names: Iterable[str]) -> dict[str, Any]:
    """The functions named ``names`` that the notebook's ``exercise-stub`` cells define."""
    wanted = set(names)
    found: dict[str, Any] = {}
    for cell in cells:
        if "exercise-stub" in cell_tags(cell):
            namespace: dict[str, Any] = {}
            exec(cell_source(cell), namespace)
            found.update({k: v for k, v in namespace.items() if k in wanted})
    return found


def assert_port_diagnosis(result: Any, diagnosis: str) -> None:
    """A port checkpoint failed a wrong port, saying ``diagnosis`` and citing its rules: an
    answer that does not fit the form is asked again, never used (ELIC-14, MRTR-E4); the
    final retry sent twice acts once (MIG-3, HTTP-26)."""
    assert not result.passed, result
    assert diagnosis in result.message, result
    rules = ("HTTP-26", "MIG-3") if "second" in diagnosis else ("ELIC-14", "MRTR-E4")
    for rule in rules:
        assert rule in result.message, (rule, result)
