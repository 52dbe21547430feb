"""Where the tests read the lessons from.

``python3 tools/kit.py test`` sets ``MRTR_KIT_LESSONS`` to a copy of ``notebooks/`` as committed
(git HEAD), so the tests check the lessons, not a learner's copies that JupyterLab saved with
their own outputs and answers. Without it (plain ``pytest``), ``notebooks/`` as it is.
"""

from __future__ import annotations

import ast
import asyncio
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
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

    async def go() -> Any:
        pending = eval(compile(tree, "<cell>", "exec", flags=flags), namespace)
        if asyncio.iscoroutine(pending):
            await pending
        if last is None:
            return None
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval", flags=flags), namespace)
        return await value if asyncio.iscoroutine(value) else value

    return asyncio.run(go())
