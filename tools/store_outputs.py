"""Re-execute notebooks and store their outputs in place: the reference nbval compares against.

Usage, from the project root, with the kit's environment:
    .venv/bin/python tools/store_outputs.py notebooks/*.ipynb
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def _relative_paths(nb: Any) -> None:
    """A stored traceback names files relative to the clone (``mrtr_kit/...``), not under the
    folder this machine happens to use: the lessons are read on GitHub and in other clones."""
    prefix = str(ROOT) + "/"
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [line.replace(prefix, "") for line in output["traceback"]]


def store(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    # The kernel runs in the notebook's folder, as under nbval and JupyterLab. Only cells tagged
    # raises-exception may fail; any other error stops here with its traceback.
    # Widget state is not stored: JupyterLab does not render it on open, GitHub does not
    # either, and nbval never compares it; it would only make the file many times larger.
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    _relative_paths(nb)
    nbformat.write(nb, path)
    print("stored outputs:", path)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        store(Path(arg))
