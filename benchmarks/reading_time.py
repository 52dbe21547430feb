"""How long each lesson takes a learner to read and try, and a teacher to present.

    .venv/bin/python benchmarks/reading_time.py [--run] [notebooks/NN-name.ipynb ...]

A scripted read-through of the stored notebooks. Per notebook it counts the cells, the words of
prose (markdown), the lines and words of code and the words of the stored outputs, and turns
them into minutes with the reading rates below. ``--run`` also executes each notebook in a fresh
kernel (as nbval does) and adds its run time; without it, the run time is left out and says so.

The exercises are not read through: each states its own time in its heading ("### Exercise 1 ·
… (5 min)"), and those are summed. Cells from an exercise heading to its checkpoint belong to
the exercise, not to the reading.

The rates (words per minute) are the assumptions of this estimate, kept here in one place:

* prose is read at 200 wpm, code at 100 wpm (read, not typed), outputs at 200 wpm (skimmed
  tables and traces, read JSON: the middle of 120-300);
* every code cell costs 25 s more: run it, look at what it did, scroll;
* teaching: prose spoken at 130 wpm, code and outputs as above, 30 s a code cell, exercises
  left out;
* a live form (a code cell whose stored output is a widget) costs 60 s more: the learner reads
  it, fills it in and clicks, which reading its stored text does not count;
* an exercise takes at least ``3 + lines / 3`` minutes, ``lines`` being the code lines of its
  solution file: 3 minutes to read the task and run the checkpoint, and a line written every
  20 s, thinking included. Its heading's minutes count when they say more.

These are estimates until a workshop has timed the lessons; the lesson headers say so.

A notebook whose name says OPTIONAL counts as an optional part; the others are core. The last
lines give the learner's first path: 00 and 01 (the core), and 01b (optional).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parent.parent
PROSE_WPM = 200
CODE_WPM = 100
OUTPUT_WPM = 200
SPOKEN_WPM = 130
SECONDS_PER_CELL = 25
TEACH_SECONDS_PER_CELL = 30
LIVE_FORM_SECONDS = 60
EXERCISE_BASE_MINUTES = 3
SOLUTION_LINES_PER_MINUTE = 3
LIMITS = {"code_cells": 45, "all_prose_words": 3000, "minutes": 60}  # per lesson (issue 19)
WIDGET = "application/vnd.jupyter.widget-view+json"
LOAD = re.compile(r"^#?\s*%load\s+(\S+)", re.M)
FIRST_PATH = ("00-", "01-")
EXERCISE = re.compile(r"^### Exercise \d+ · .*\((\d+) min\)", re.M)
CHECKPOINT = re.compile(r"(await )?[\w.]*check_\w+\(.*\)")
WORD = re.compile(r"[A-Za-z0-9_'’-]+")


def words(text: str) -> int:
    return len(WORD.findall(text))


def output_text(output: Any) -> str:
    """What a reader sees of one output: its text, or the text form of rich and widget data."""
    if output.get("output_type") == "stream":
        return str(output.get("text", ""))
    if output.get("output_type") == "error":
        return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    data = output.get("data", {})
    text = data.get("text/plain", "")
    return "".join(text) if isinstance(text, list) else str(text)


@dataclass
class Reading:
    name: str
    cells: int = 0
    code_cells: int = 0
    prose_words: int = 0
    code_lines: int = 0
    code_words: int = 0
    output_words: int = 0
    all_prose_words: int = 0  # every markdown cell, exercises included: the size limit's count
    live_forms: int = 0
    exercises: int = 0
    exercise_minutes: int = 0  # as the headings state them
    exercise_floor_minutes: int = 0  # the model's floor, exercise by exercise (max with heading)
    run_seconds: float | None = None

    @property
    def total_minutes(self) -> float:
        """Read and try, plus the exercises: what the size limit of 60 minutes counts."""
        return self.read_minutes + self.exercise_floor_minutes

    @property
    def optional(self) -> bool:
        return "OPTIONAL" in self.name

    @property
    def read_minutes(self) -> float:
        seconds = (
            60 * self.prose_words / PROSE_WPM
            + 60 * self.code_words / CODE_WPM
            + 60 * self.output_words / OUTPUT_WPM
            + SECONDS_PER_CELL * self.code_cells
            + LIVE_FORM_SECONDS * self.live_forms
            + (self.run_seconds or 0.0)
        )
        return seconds / 60

    @property
    def teach_minutes(self) -> float:
        seconds = (
            60 * self.prose_words / SPOKEN_WPM
            + 60 * self.code_words / CODE_WPM
            + 60 * self.output_words / OUTPUT_WPM
            + TEACH_SECONDS_PER_CELL * self.code_cells
            + (self.run_seconds or 0.0)
        )
        return seconds / 60


def solution_lines(notebook: Path, source: str) -> int:
    """Code lines of the solution an exercise's ``%load`` cell names (0 when it names none)."""
    found = LOAD.search(source)
    if not found:
        return 0
    path = notebook.parent / found[1]
    if not path.is_file():
        return 0
    lines = path.read_text(encoding="utf-8").splitlines()
    return len([line for line in lines if line.strip() and not line.lstrip().startswith("#")])


def exercise_floor(lines: int) -> int:
    return EXERCISE_BASE_MINUTES + -(-lines // SOLUTION_LINES_PER_MINUTE)


def read(path: Path) -> Reading:
    nb = nbformat.read(path, as_version=4)
    r = Reading(path.name, cells=len(nb.cells))
    in_exercise = False
    stated = lines = 0
    for cell in nb.cells:
        source = cell.source
        if cell.cell_type == "markdown":
            r.all_prose_words += words(source)
        elif any(WIDGET in o.get("data", {}) for o in cell.get("outputs", [])):
            r.live_forms += not in_exercise
        heading = EXERCISE.search(source) if cell.cell_type == "markdown" else None
        if heading:
            in_exercise = True
            r.exercises += 1
            stated = int(heading[1])
            r.exercise_minutes += stated
            lines = 0
        if in_exercise:
            if cell.cell_type == "code":
                lines = max(lines, solution_lines(path, source))
            # The checkpoint cell (one line, check_…) is the exercise's last cell.
            if cell.cell_type == "code" and CHECKPOINT.fullmatch(source.strip()):
                in_exercise = False
                r.exercise_floor_minutes += max(stated, exercise_floor(lines))
            continue
        if cell.cell_type == "markdown":
            r.prose_words += words(re.sub(r"```mermaid.*?```", "", source, flags=re.S))
            # A Mermaid diagram is read as a picture: a few seconds a line, counted as words.
            r.prose_words += 3 * sum(
                len(block.splitlines()) for block in re.findall(r"```mermaid(.*?)```", source, re.S)
            )
        elif cell.cell_type == "code":
            r.code_cells += 1
            r.code_lines += len([line for line in source.splitlines() if line.strip()])
            r.code_words += words(source)
            r.output_words += sum(words(output_text(o)) for o in cell.get("outputs", []))
    if in_exercise:  # an exercise with no checkpoint cell (lesson 04's port) runs to the end
        r.exercise_floor_minutes += max(stated, exercise_floor(lines))
    return r


def run_seconds(path: Path) -> float:
    """Run the notebook in a fresh kernel, as nbval does; nothing is written back."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_notebooks import TimedClient  # the same client as the run-time benchmark

    nb = nbformat.read(path, as_version=4)
    client = TimedClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    return sum(seconds for seconds, _ in client.cell_times)


def table(readings: list[Reading]) -> str:
    head = (
        f"{'notebook':42} {'part':8} {'cells':>5} {'code':>4} {'prose w':>7} {'code ln':>7} "
        f"{'code w':>6} {'out w':>6} {'forms':>5} {'run s':>6} {'read':>5} {'ex':>4} "
        f"{'ex*':>4} {'total':>5} {'teach':>5}"
    )
    lines = [head, "-" * len(head)]
    for r in readings:
        run = "-" if r.run_seconds is None else f"{r.run_seconds:.0f}"
        lines.append(
            f"{r.name:42} {'optional' if r.optional else 'core':8} {r.cells:>5} "
            f"{r.code_cells:>4} {r.prose_words:>7} {r.code_lines:>7} {r.code_words:>6} "
            f"{r.output_words:>6} {r.live_forms:>5} {run:>6} {r.read_minutes:>5.0f} "
            f"{r.exercise_minutes:>4} {r.exercise_floor_minutes:>4} {r.total_minutes:>5.0f} "
            f"{r.teach_minutes:>5.0f}"
        )
    return "\n".join(lines)


def first_path(readings: list[Reading]) -> list[str]:
    core = [r for r in readings if r.name.startswith(FIRST_PATH) and not r.optional]
    optional = [r for r in readings if r.name.startswith("01") and r.optional]
    out = []
    if core:
        read_min = sum(r.read_minutes for r in core)
        ex = sum(r.exercise_floor_minutes for r in core)
        names = " + ".join(r.name.split("-")[0] for r in core)
        teach = sum(r.teach_minutes for r in core)
        out.append(
            f"first path, core ({names}): {read_min:.0f} min to read and try + {ex} min of "
            f"exercises = {read_min + ex:.0f} min; teaching {teach:.0f} min"
        )
    for r in optional:
        out.append(
            f"optional ({r.name.split('-')[0]}): {r.read_minutes:.0f} min to read and try + "
            f"{r.exercise_floor_minutes} min of exercises"
        )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="store_true", help="also run each notebook, timed")
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*/*.ipynb"))
    readings = []
    for path in paths:
        r = read(path)
        if args.run:
            r.run_seconds = run_seconds(path)
        readings.append(r)
    print(table(readings))
    print(
        f"rates: prose {PROSE_WPM} wpm, code {CODE_WPM} wpm, outputs {OUTPUT_WPM} wpm, "
        f"{SECONDS_PER_CELL} s a code cell; teaching: prose {SPOKEN_WPM} wpm, "
        f"{TEACH_SECONDS_PER_CELL} s a code cell, no exercises. Minutes: read, ex(ercises) as "
        "headed, ex* as modelled, total (read + ex*), teach."
        + ("" if args.run else " Run time not included (use --run).")
    )
    for line in first_path(readings):
        print(line)


if __name__ == "__main__":
    main()
