"""How long each lesson takes to run top to bottom in a fresh kernel (target: well under 30 s).

    .venv/bin/python benchmarks/bench_notebooks.py [notebooks/NN-name.ipynb ...]

Runs each notebook with nbclient, as nbval and ``tools/kit.py store`` do, and prints the wall
time of the whole run and of its slowest cell. Nothing is written back.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


class TimedClient(NotebookClient):
    """An nbclient that remembers how long each cell took."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.cell_times: list[tuple[float, int]] = []

    async def async_execute_cell(self, cell, cell_index, *args, **kwargs):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return await super().async_execute_cell(cell, cell_index, *args, **kwargs)
        finally:
            self.cell_times.append((time.perf_counter() - started, cell_index))


def run(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = TimedClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    started = time.perf_counter()
    client.execute()
    total = time.perf_counter() - started
    slowest, index = max(client.cell_times)
    print(
        f"{path.name}: {total:.1f} s in all (kernel start included), "
        f"slowest cell #{index} {slowest:.2f} s"
    )


def main() -> None:
    paths = [Path(a) for a in sys.argv[1:]] or sorted((ROOT / "notebooks").glob("*/*.ipynb"))
    for path in paths:
        run(path)


if __name__ == "__main__":
    main()
