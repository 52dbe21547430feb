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
