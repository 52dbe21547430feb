"""The instructors' answer key: for each exercise, the wrong answers the checkpoint tests try and
what the checkpoint says to each, word for word (issue 21).

    .venv/bin/python tools/answer_key.py            # write instructors/answer-key.md
    .venv/bin/python tools/answer_key.py --check    # exit 1, with a diff, if it is out of step

Generated, never written by hand: it runs the lessons' test files (tests/course/test_lesson_*.py
and test_review_findings*.py, browser tests left out) under pytest with
``tests/answer_key_plugin.py``, which records every checkpoint verdict those tests cause, the
test that caused it and the wrong answer it tried.
Each exercise is found in the lessons themselves (its ``### Exercise N · …`` heading and the
``check_*`` call of its checkpoint cell), so a new exercise shows up here with the wrong answers
its tests try, and a changed checkpoint message changes the key: ``tests/course/
test_answer_key.py`` runs ``--check``.

Lesson 04's capstone is checked by its gate (``await capstone.gate(build_server)``), not a
``check_*`` function: its entry lists every gate report ``tests/course/test_lesson_04.py``
provokes (its slow fleet half-ports included), item by item, with what each half-port is (the
test's docstring) and the fix (a diff from the half-port to the worked solution). A checkpoint
with no ``### Exercise`` heading above it (05's Inspector task) is named by its section.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import nbformat

ROOT = Path(__file__).resolve().parent.parent
KEY = ROOT / "instructors" / "answer-key.md"
LESSON_GLOB = "[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb"
EXERCISE = re.compile(r"^### (Exercise \d+ · .*?)\s*\(\d+ min\)", re.M)
SECTION = re.compile(r"^## (\d+)\. (.+)$", re.M)
# A checkpoint cell: one call of a ``check_*`` function, or of the capstone's gate.
CHECK_CALL = re.compile(r"^(?:await\s+)?(?:\w+\.)?(check_\w+|gate)\(")
LOAD = re.compile(r"^# %load (\S+)", re.M)
GATE = "gate"  # the capstone's checkpoint, as tests/answer_key_plugin.py records it
CAPSTONE_TESTS = "test_lesson_04.py"
LONG_DIFF = 80  # lines: a longer fix is the whole port, better read in the solution file


class Exercise(NamedTuple):
    lesson: str  # the lesson's title
    heading: str  # "Exercise N · …", or the section of a checkpoint with no exercise heading
    solution: str  # the %load-able solution, from the repository's root ("" if none)
    call: str  # the checkpoint cell, as the learner runs it


def exercises(notebooks: Path) -> dict[str, Exercise]:
    """Checkpoint name (``check_*``, or ``gate``) -> its exercise, from the lessons' cells."""
    found: dict[str, Exercise] = {}
    for path in sorted(notebooks.glob(LESSON_GLOB)):
        nb = nbformat.read(path, as_version=4)
        title = nb.cells[0].source.splitlines()[0].lstrip("# ").strip()
        heading = section = None
        solution = ""
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                if m := EXERCISE.search(cell.source):
                    heading, solution = m[1], ""
                elif m := SECTION.search(cell.source):
                    section = f"§{m[1]} · {m[2].strip()}"
            elif cell.cell_type == "code":
                if load := LOAD.search(cell.source):
                    solution = _from_root(path.parent / load[1], notebooks)
                if c := CHECK_CALL.search(cell.source.strip()):
                    where = heading or section or "the lesson's checkpoint"
                    found.setdefault(c[1], Exercise(title, where, solution, cell.source.strip()))
                    heading, solution = None, ""
    return found


def _from_root(path: Path, notebooks: Path) -> str:
    """``path`` as the instructor finds it: from the repository (the lessons' parent)."""
    try:
        return path.resolve().relative_to(notebooks.resolve().parent).as_posix()
    except ValueError:
        return path.as_posix()


def record(notebooks: Path) -> list[dict[str, Any]]:
    """Run the lesson tests with the recording plugin; every checkpoint verdict they caused."""
    # The lessons' own tests, and the review findings' (they provoke checkpoints too, e.g. the
    # official-SDK port's in lesson 03).
    course = ROOT / "tests" / "course"
    tests = sorted(
        str(p.relative_to(ROOT))
        for pattern in ("test_lesson_0*.py", "test_review_findings*.py")
        for p in course.glob(pattern)
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "records.json"
        env = {
            **os.environ,
            "MRTR_KIT_ANSWER_KEY": str(out),
            "MRTR_KIT_LESSONS": str(notebooks),
            "PYTHONPATH": os.pathsep.join(
                [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]
            ),
        }
        # The CI flag makes a missing optional tool a failure; the key needs none of them.
        env.pop("CI", None)
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        command += ["-p", "answer_key_plugin"]
        records: list[dict[str, Any]] = []
        # The fast lesson tests, then 04's slow ones: its fleet half-ports start processes.
        for marks, files in (
            ("not browser and not slow", tests),
            ("slow and not browser", [t for t in tests if Path(t).name == CAPSTONE_TESTS]),
        ):
            run = subprocess.run(
                [*command, "-m", marks, *files], cwd=ROOT, env=env, capture_output=True, text=True
            )
            if run.returncode not in (0, 5):  # 5: no test selected
                raise SystemExit(f"the lesson tests failed; fix them first:\n{run.stdout[-3000:]}")
            if out.exists():
                records += json.loads(out.read_text(encoding="utf-8"))
                out.unlink()
        return records


def wrong_answers(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The "not yet" verdicts, by checkpoint, once each (same answer, same message)."""
    by_check: dict[str, list[dict[str, Any]]] = {}
    seen = set()
    for r in records:
        if r["status"] != "not yet":
            continue
        # A string parameter that the message contains is the test's expectation, not the answer;
        # a check_* function passed as a parameter is the checkpoint itself (the review's C6).
        attempt = {
            k: v
            for k, v in r["attempt"].items()
            if not _expectation(v, r["message"]) and not _checkpoint_source(v)
        }
        key = (r["checkpoint"], r["message"], json.dumps(attempt, sort_keys=True))
        if key in seen:
            continue
        seen.add(key)
        by_check.setdefault(r["checkpoint"], []).append({**r, "attempt": attempt})
    return by_check


def _checkpoint_source(value: dict[str, str]) -> bool:
    return value["kind"] == "code" and bool(re.match(r"(?:async )?def check_", value["text"]))


def _expectation(value: dict[str, str], message: str) -> bool:
    if value["kind"] != "value":
        return False
    loaded = json.loads(value["text"])
    return isinstance(loaded, str) and loaded in message


def render(notebooks: Path, records: list[dict[str, Any]]) -> str:
    where = exercises(notebooks)
    found = wrong_answers(records)
    lines = [
        "# Answer key: what each checkpoint says to the wrong answers it knows",
        "",
        "For instructors. Generated by `tools/answer_key.py` from the checkpoint tests (do not",
        "edit: `tests/course/test_answer_key.py` fails when this page and the tests disagree).",
        "For each exercise: the wrong answers its tests try, as code or as the value given, and",
        "the checkpoint's verdict word for word, which is what a learner sees. When a learner is",
        "stuck, find their message here; the answer above it is usually close to what they wrote.",
        "The capstone (04) is checked by its gate: its entry goes item by item, with each",
        "half-port's fix as a diff against the worked solution.",
        "",
    ]
    order = sorted(where.items(), key=lambda kv: (kv[1].lesson, kv[1].heading))
    unknown = sorted(set(found) - set(where))
    lines.append("## Contents")
    lines.append("")
    for check, ex in order:
        lines.append(
            f"- {ex.lesson}: {ex.heading} (`{check}`): {len(found.get(check, []))} wrong answers"
        )
    for check in unknown:
        lines.append(f"- other checkpoint `{check}`: {len(found[check])} wrong answers")
    lines.append("")
    for check, ex in order:
        lines += [f"## {ex.lesson} · {ex.heading}", ""]
        lines += [
            f"Checkpoint: `{ex.call}`" + (f". Solution: `{ex.solution}`." if ex.solution else ".")
        ]
        lines.append("")
        if check == GATE:
            lines += _gate_entries(found.get(check, []), notebooks, ex)
        else:
            lines += _entries(found.get(check, []))
    for check in unknown:
        lines += [f"## Other checkpoint: `{check}`", ""]
        lines += _entries(found[check])
    return "\n".join(lines).rstrip() + "\n"


def _entries(entries: list[dict[str, Any]]) -> list[str]:
    if not entries:
        return ["No wrong answer is tested yet.", ""]
    lines = []
    for n, e in enumerate(entries, 1):
        test = e["test"].split("::")[-1]
        lines.append(f"### {n}. From `{test}`")
        lines.append("")
        for name, value in e["attempt"].items():
            lang = "python" if value["kind"] == "code" else "json"
            lines += [f"`{name}`:", "", f"```{lang}", value["text"], "```", ""]
        if not e["attempt"]:
            lines += ["(The wrong answer is built inside the test; see its name.)", ""]
        lines += ["The checkpoint says:", "", "```text", e["message"], "```", ""]
    return lines


GATE_ITEM = re.compile(r"^(\d+)\. (.+?)(?=^\d+\. |\n\n|\Z)", re.M | re.S)


def gate_items(doc: str) -> list[tuple[str, str]]:
    """The gate's numbered checklist, from its module docstring: (number, what it checks)."""
    return [(m[1], " ".join(m[2].split()).replace("``", "`")) for m in GATE_ITEM.finditer(doc)]


def _gate_entries(entries: list[dict[str, Any]], notebooks: Path, ex: Exercise) -> list[str]:
    if not entries:
        return ["No wrong answer is tested yet.", ""]
    solution_path = notebooks.parent / ex.solution if ex.solution else None
    solution = solution_path.read_text(encoding="utf-8") if solution_path else ""
    lines = ["What the gate checks, item by item (from its docstring):", ""]
    lines += [f"{n}. {what}" for n, what in gate_items(entries[0].get("gate_doc", ""))]
    lines += [
        "",
        "The ✘ lines the tests provoke, item by item, and the entry that explains each:",
        "",
    ]
    by_item: dict[str, list[tuple[str, int]]] = {}
    for n, e in enumerate(entries, 1):
        for title, status, why in e.get("items", []):
            if status == "fail":
                by_item.setdefault(title, []).append((why, n))
    # In the gate's own order (its reports list every item), whatever the titles look like.
    order = {title: n for e in entries for n, (title, _, _) in enumerate(e.get("items", []))}
    for title in sorted(by_item, key=lambda t: order.get(t, len(order))):
        lines.append(f"- **{title}**")
        seen: dict[str, list[str]] = {}
        for why, n in by_item[title]:
            seen.setdefault(why, []).append(str(n))
        for why, ns in seen.items():
            lines.append(f"  - `{why}` (entry {', '.join(ns)})")
    lines.append("")
    for n, e in enumerate(entries, 1):
        test = e["test"].split("::")[-1]
        lines += [f"### {n}. From `{test}`", ""]
        what = e.get("doc") or test.removeprefix("test_").replace("_", " ").capitalize() + "."
        lines += [f"What it is: {what.replace('``', '`')}", ""]
        lines += ["The gate says:", "", "```text", e["message"], "```", ""]
        lines += _fix(e.get("source", ""), solution, ex.solution)
    return lines


def _fix(wrong: str, solution: str, name: str) -> list[str]:
    """The fix: what the worked solution has where the half-port differs."""
    if not wrong or not solution:
        return []
    diff = list(
        difflib.unified_diff(
            wrong.splitlines(), solution.splitlines(), "the port", name, n=1, lineterm=""
        )
    )
    if not diff:
        return []
    added = sum(line.startswith("+") and not line.startswith("+++") for line in diff)
    if len(diff) > LONG_DIFF or added > len(solution.splitlines()) // 2:
        return [
            f"The fix: the whole port ({len(diff)} lines of difference): compare with `{name}`.",
            "",
        ]
    return ["The fix (the port against the worked solution):", "", "```diff", *diff, "```", ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--out", type=Path, default=KEY)
    args = parser.parse_args(argv)
    notebooks = Path(os.environ.get("MRTR_KIT_LESSONS") or ROOT / "notebooks")
    records = record(notebooks)
    text = render(notebooks, records)
    if args.check:
        old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if old != text:
            diff = difflib.unified_diff(
                old.splitlines(), text.splitlines(), str(args.out), "generated", lineterm=""
            )
            print("\n".join(list(diff)[:200]))
            print(f"{args.out} is out of step: run tools/answer_key.py")
            return 1
        print(f"{args.out} is in step")
        return 0
    args.out.write_text(text, encoding="utf-8")
    where = exercises(notebooks)
    for check, entries in sorted(wrong_answers(records).items()):
        ex = where.get(check, Exercise("other", check, "", ""))
        print(f"{len(entries):3} wrong answers  {ex.lesson.split(' ')[0]} {ex.heading}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
