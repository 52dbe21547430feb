"""Carry the lessons' modelled times into the instructors' pages, after the headers moved.

    .venv/bin/python tools/plan_times.py          # rewrite
    .venv/bin/python tools/plan_times.py --check  # exit 1 and name the pages that would change

``benchmarks/reading_time.py --write-headers`` rewrites each lesson header's time lines from the
model. This tool then brings the rest in step, from the same model:

* ``instructors/episodes.toml``: each lesson's minute ranges, its optional sections, and each
  exercise's heading minutes, range and optional flag (a placeholder entry is left alone);
* the figures line at the top of each ``instructors/notes/NN-*.md``;
* the rows of the lesson table in ``instructors/README.md``;
* each ``instructors/plan-*.md``: a row whose "From" names lessons gets the minutes they now add
  up to (the high end), the clock runs on from row to row, the total row follows, and each
  check keeps its place inside its row (scaled to the row's new length). The plan's
  ``**Length**`` is not touched: a plan that no longer fits it fails its test.

What it cannot decide is left to a person, and tests/course/test_instructors.py names it: a
plan that grew past its stated length, a block past 90 minutes, 15 minutes left without a
check. New
or removed exercises need their ``[[episode.exercises]]`` entry written by hand.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import reading_time  # noqa: E402

INSTRUCTORS = ROOT / "instructors"
NOTEBOOKS = ROOT / "notebooks"
LESSON_NAMES = {  # the guide's table names each lesson by its short title
    "00": "00 · Why MRTR",
    "01": "01 · The basic flow",
    "01b": "01b · More ways to ask",
    "02": "02 · Securing `requestState`",
    "02a": "02a · Replays",
    "02b": "02b · Rotation and single use",
    "03": "03 · Migrating from server requests",
    "03c": "03c · Porting practice",
    "04": "04 · Port your own server (capstone)",
    "05": "05 · A real host",
}


def span(pair: tuple[int, int] | list[int]) -> str:
    return f"{pair[0]}–{pair[1]} min"


def reading(notebook: str) -> reading_time.Reading:
    return reading_time.read(NOTEBOOKS / notebook.removesuffix(".ipynb") / notebook)


# -- episodes.toml ---------------------------------------------------------------------------------

MINUTE_KEYS = (
    "read_minutes",
    "exercise_minutes",
    "total_minutes",
    "teaching_minutes",
    "optional_sections",
    "optional_minutes",
    "optional_teaching_minutes",
)


def episode_block(block: str) -> str:
    """One ``[[episode]]`` block with its minutes (and its exercises') from the model."""
    if re.search(r"(?m)^placeholder = true$", block):
        return block
    r = reading(re.search(r'(?m)^notebook = "(.*)"$', block)[1])
    t = reading_time.model_times(r)
    lines = [
        f"read_minutes = [{t.read[0]}, {t.read[1]}]",
        f"exercise_minutes = [{t.exercises[0]}, {t.exercises[1]}]",
        f"total_minutes = [{t.total[0]}, {t.total[1]}]",
        f"teaching_minutes = [{t.teach[0]}, {t.teach[1]}]",
    ]
    if r.optional_sections:
        titles = ", ".join('"' + s.replace('"', '\\"') + '"' for s in r.optional_sections)
        lines += [
            f"optional_sections = [{titles}]",
            f"optional_minutes = [{t.optional[0]}, {t.optional[1]}]",
            f"optional_teaching_minutes = [{t.optional_teach[0]}, {t.optional_teach[1]}]",
        ]
    keys = "|".join(MINUTE_KEYS)
    at = re.search(rf"(?m)^(?:{keys}) = ", block)
    block = re.sub(rf"(?m)^(?:{keys}) = .*\n", "", block)
    block = block[: at.start()] + "\n".join(lines) + "\n" + block[at.start() :]
    optional = {x.title for x in r.extra.exercises}
    by_title = {x.title: x for x in r.exercises}

    def exercise(m: re.Match[str]) -> str:
        x = by_title.get(m[2])
        if x is None:
            return m[0]  # an exercise the notebook no longer has: test_instructors names it
        out = f'number = {m[1]}\ntitle = "{m[2]}"\nminutes = {x.stated}\n'
        out += f"range = [{x.minutes[0]}, {x.minutes[1]}]\n"
        return out + ("optional = true\n" if x.title in optional else "")

    entry = r'(?m)^number = (\d+)\ntitle = "(.*)"\nminutes = \d+\n'
    return re.sub(entry + r"(?:range = .*\n)?(?:optional = .*\n)?", exercise, block)


def episodes_text(text: str) -> str:
    blocks = re.split(r"(?m)^(?=\[\[episode\]\]\n)", text)
    return blocks[0] + "".join(episode_block(b) for b in blocks[1:])


# -- notes and the guide's table -------------------------------------------------------------------

FIGURES = re.compile(
    r"\*\*Teaching\*\*: \d+–\d+ min · \*\*Exercises\*\*: (?:none|\d+–\d+ min \([^)]*\)) · "
    r"\*\*Learner alone\*\*: \d+–\d+ min(?:, and the sections marked optional \d+–\d+ min more "
    r"\(\d+–\d+ min to teach\))?"
)


def figures(e: dict) -> str:
    core = [x for x in e.get("exercises", []) if not x.get("optional")]
    ex = "none"
    if core:
        each = ", ".join(f"{x['number']} · {x['range'][0]}–{x['range'][1]}" for x in core)
        ex = f"{span(e['exercise_minutes'])} ({each})"
    out = (
        f"**Teaching**: {span(e['teaching_minutes'])} · **Exercises**: {ex} · "
        f"**Learner alone**: {span(e['total_minutes'])}"
    )
    if e.get("optional_sections"):
        out += (
            f", and the sections marked optional {span(e['optional_minutes'])} more "
            f"({span(e['optional_teaching_minutes'])} to teach)"
        )
    return out


def table_row(e: dict) -> str:
    core = [x for x in e.get("exercises", []) if not x.get("optional")]
    ex = f"{span(e['exercise_minutes'])} ({len(core)})" if core else "none"
    n = len(e.get("optional_sections", []))
    extra = f"{span(e['optional_minutes'])} ({n})" if n else "none"
    name = LESSON_NAMES.get(e["id"], e["title"])
    return (
        f"| {name} | {e['part']} | {span(e['teaching_minutes'])} | {ex} | "
        f"{span(e['total_minutes'])} | {extra} |"
    )


def guide_text(text: str, episodes: list[dict]) -> str:
    for e in episodes:
        text = re.sub(
            rf"(?m)^\| {re.escape(e['id'])} · .*$", lambda _, e=e: table_row(e), text, count=1
        )
    return text


# -- plans -----------------------------------------------------------------------------------------

TABLE_HEAD = "| Start | Min | Block | From |"
CHECKS_HEAD = "| At | Check | Kind | If half the room fails |"


def clock(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def show(minutes: int, like: str) -> str:
    """A clock in the plan's own style: ``09:05`` for a day, ``1:05`` for a session."""
    hours = minutes // 60
    return (
        f"{hours:02d}:{minutes % 60:02d}"
        if len(like.split(":")[0]) == 2
        else (f"{hours}:{minutes % 60:02d}")
    )


def from_minutes(source: str, by_id: dict[str, dict]) -> int | None:
    """What a row's "From" adds up to at the high end; None for a stated row."""
    source = source.strip("`")
    if source.startswith("stated: "):
        return None
    total = 0
    for term in source.split(" + "):
        kind, _, ref = term.partition(" ")
        if kind == "teach":
            total += by_id[ref]["teaching_minutes"][1]
        elif kind == "exercises":
            total += by_id[ref]["exercise_minutes"][1]
        else:
            lesson, number = ref.split(".")
            found = [x for x in by_id[lesson].get("exercises", []) if x["number"] == int(number)]
            if len(found) != 1:  # the exercise moved (a lesson split): a person re-plans the row
                raise SystemExit(f"a plan row names `{term}`, which episodes.toml does not have")
            total += found[0]["range"][1]
    return total


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def plan_text(text: str, by_id: dict[str, dict]) -> str:
    head, rest = text.split(TABLE_HEAD + "\n", 1)
    table, after = rest.split("\n\n", 1)
    lines = table.splitlines()
    rows = [cells(line) for line in lines[1:-1]]
    like = rows[0][0]
    old = [(clock(r[0]), int(r[1])) for r in rows]
    at = clock(like)
    new = []
    out = [lines[0]]
    for r in rows:
        minutes = from_minutes(r[3], by_id)
        minutes = int(r[1]) if minutes is None else minutes
        new.append((at, minutes))
        out.append(f"| {show(at, like)} | {minutes} | {r[2]} | {r[3]} |")
        at += minutes
    total = at - clock(like)
    out.append(f"| {show(at, like)} | **{total}** | **Total** | |")
    text = head + TABLE_HEAD + "\n" + "\n".join(out) + "\n\n" + after
    if CHECKS_HEAD not in text:
        return text
    before, checks = text.split(CHECKS_HEAD + "\n", 1)
    check_table, tail = [*checks.split("\n\n", 1), ""][:2]
    check_lines = check_table.splitlines()
    moved = [check_lines[0]]
    for line in check_lines[1:]:
        c = cells(line)
        t = clock(c[0])
        # The row the check falls in, and its place inside it, scaled to the row's new length.
        i = next((i for i, (s, m) in enumerate(old) if s <= t < s + m), len(old) - 1)
        (s, m), (ns, nm) = old[i], new[i]
        nt = ns + round((t - s) * nm / m) if m else ns
        moved.append("| " + " | ".join([show(nt, like), *c[1:]]) + " |")
    text = before + CHECKS_HEAD + "\n" + "\n".join(moved) + ("\n\n" + tail if tail else "\n")
    return text


# -- all together ----------------------------------------------------------------------------------


def sync(check: bool) -> list[str]:
    """Bring every page in step; the pages that changed (or would, with ``check``)."""
    changed = []

    def put(path: Path, text: str) -> None:
        if path.read_text(encoding="utf-8") != text:
            changed.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_text(text, encoding="utf-8")

    path = INSTRUCTORS / "episodes.toml"
    text = episodes_text(path.read_text(encoding="utf-8"))
    put(path, text)
    episodes = tomllib.loads(text)["episode"]
    by_id = {e["id"]: e for e in episodes}
    real = [e for e in episodes if not e.get("placeholder")]
    for e in real:
        notes = INSTRUCTORS / "notes" / e["notebook"].replace(".ipynb", ".md")
        if notes.is_file():
            put(notes, FIGURES.sub(lambda _, e=e: figures(e), notes.read_text(encoding="utf-8")))
    guide = INSTRUCTORS / "README.md"
    put(guide, guide_text(guide.read_text(encoding="utf-8"), real))
    for plan in sorted(INSTRUCTORS.glob("plan-*.md")):
        put(plan, plan_text(plan.read_text(encoding="utf-8"), by_id))
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    changed = sync(args.check)
    for name in changed:
        print(f"{name}: {'out of step' if args.check else 'rewritten'}")
    if not changed:
        print("the instructors' pages are in step with the model")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
