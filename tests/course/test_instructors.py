"""The instructors' material agrees with the lessons (issue "Workshop-ready", KIT convention).

``instructors/episodes.toml`` holds each lesson's episode metadata in one place: title,
questions, objectives, key points, minutes, exercises. These tests check every entry against its
notebook's own cells (the header's title, "What you will learn" bullets and time lines, the
exercise headings, the "## Key points" bullets), and every plan in ``instructors/`` against those
minutes: each row's minutes must be what its "From" column adds up to (the high end of each
range, issue 31), the clock must run on from row to row, and the total must be the plan's stated
length. Each plan's "Checks" table (issue 21) must put a check at least every 15 minutes of
teaching, each a quiz or an exercise's checkpoint of the lesson taught at that time, or a
sticky-note question, with what to do when half the room fails it. The full day (issue 32) has
no block over 90 minutes without a break, a lunch and two breaks of at least 15 minutes, minutes
for installing from the USB stick, 01b as an explicit option, and 03b after 03.
"""

from __future__ import annotations

import re
import sys
import tomllib
from itertools import pairwise
from pathlib import Path

import nbformat
import pytest

from tests.course.lesson_quizzes import QUIZZES
from tests.lesson_files import LESSONS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import reading_time

ROOT = Path(__file__).resolve().parents[2]
INSTRUCTORS = ROOT / "instructors"
NOTEBOOKS = LESSONS  # as committed, under tools/kit.py test (tests/lesson_files.py)
ALL_EPISODES = tomllib.loads((INSTRUCTORS / "episodes.toml").read_text(encoding="utf-8"))["episode"]
BY_ID = {e["id"]: e for e in ALL_EPISODES}
# A placeholder stands for a lesson being written elsewhere (03b): the plans may use its
# expected minutes, but it has no notebook to check yet.
EPISODES = [e for e in ALL_EPISODES if not e.get("placeholder")]
PLACEHOLDERS = [e for e in ALL_EPISODES if e.get("placeholder")]
PLANS = sorted(INSTRUCTORS.glob("plan-*.md"))
# What a plan may add on top of the lessons' own minutes; each such row says which it is.
STATED = {"welcome", "install", "break", "lunch", "discussion", "buffer", "open lab"}
EXERCISE = re.compile(r"^### Exercise (\d+) · (.*) \((\d+) min\)$", re.M)


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def bullets(block: str) -> list[str]:
    """The top-level bullets (``-`` or ``*``) of a markdown block, each on one line."""
    items: list[str] = []
    current: list[str] | None = None
    for line in block.splitlines():
        start = re.match(r"^[-*] (.*)", line)
        if start:
            if current is not None:
                items.append(flat(" ".join(current)))
            current = [start[1]]
        elif current is not None and line.strip():
            current.append(line.strip())
        elif current is not None:
            items.append(flat(" ".join(current)))
            current = None
    if current is not None:
        items.append(flat(" ".join(current)))
    return items


def cells(episode: dict) -> list:
    name = episode["notebook"]  # each lesson in its folder: notebooks/NN-name/NN-name.ipynb
    return nbformat.read(NOTEBOOKS / name.removesuffix(".ipynb") / name, as_version=4).cells


def header(episode: dict) -> str:
    return str(cells(episode)[0].source)


def span(pair: list[int] | tuple[int, int]) -> str:
    """``[30, 40]`` as the instructors' pages write it: ``30–40 min``."""
    return f"{pair[0]}–{pair[1]} min"


def ids(value: object) -> str:
    return value["id"] if isinstance(value, dict) else getattr(value, "stem", str(value))


def test_every_lesson_has_one_episode_entry_and_every_entry_a_lesson():
    lessons = sorted(p.name for p in NOTEBOOKS.glob("*/*.ipynb"))
    entries = [e["notebook"] for e in EPISODES]
    assert sorted(entries) == lessons
    assert len(BY_ID) == len(ALL_EPISODES)
    for e in ALL_EPISODES:
        assert e["notebook"].startswith(f"{e['id']}-")
        assert e["part"] == ("optional" if "OPTIONAL" in e["notebook"] else "core")


def test_a_placeholder_stands_only_for_a_lesson_not_yet_written():
    """Once the lesson's notebook exists, its real entry replaces the placeholder (none is
    left today: the loop runs over whatever placeholders episodes.toml holds)."""
    for episode in PLACEHOLDERS:
        found = sorted(NOTEBOOKS.glob(f"{episode['id']}-*/{episode['id']}-*.ipynb"))
        assert not found, f"{found[0].name} exists: replace the placeholder entry by its real one"


@pytest.mark.parametrize("episode", EPISODES, ids=ids)
def test_the_title_is_the_notebooks_first_heading(episode):
    assert header(episode).splitlines()[0] == f"# {episode['title']}"


@pytest.mark.parametrize("episode", EPISODES, ids=ids)
def test_the_objectives_are_the_headers_what_you_will_learn_bullets(episode):
    learn = header(episode).split("**What you will learn**", 1)[1].split("**What you need", 1)[0]
    assert episode["objectives"] == bullets(learn)


@pytest.mark.parametrize("episode", EPISODES, ids=ids)
def test_the_keypoints_are_the_key_points_cells_bullets(episode):
    closing = [str(c.source) for c in cells(episode) if str(c.source).startswith("## Key points")]
    assert len(closing) == 1, "one cell opens with ## Key points"
    points = closing[0].split("## Key points", 1)[1].split("## In practice", 1)[0]
    assert episode["keypoints"] == bullets(points)


@pytest.mark.parametrize("episode", EPISODES, ids=ids)
def test_the_minutes_are_the_headers_time_lines(episode):
    t = reading_time.header_times(header(episode))
    figures = {
        "total_minutes": t.total,
        "read_minutes": t.read,
        "exercise_minutes": t.exercises,
        "teaching_minutes": t.teach,
        "optional_minutes": t.optional,
        "optional_teaching_minutes": t.optional_teach,
    }
    for key, value in figures.items():
        assert tuple(episode.get(key, (0, 0))) == value, key


@pytest.mark.parametrize("episode", EPISODES, ids=ids)
def test_the_optional_sections_are_the_notebooks(episode):
    name = episode["notebook"]
    r = reading_time.read(NOTEBOOKS / name.removesuffix(".ipynb") / name)
    assert episode.get("optional_sections", []) == r.optional_sections


@pytest.mark.parametrize("episode", EPISODES, ids=ids)
def test_the_exercises_are_the_notebooks_exercise_headings_and_add_up(episode):
    headings = [
        (int(m[1]), m[2], int(m[3]))
        for c in cells(episode)
        if c.cell_type == "markdown"
        for m in EXERCISE.finditer(str(c.source))
    ]
    listed = [(x["number"], x["title"], x["minutes"]) for x in episode.get("exercises", [])]
    assert listed == headings
    name = episode["notebook"]
    r = reading_time.read(NOTEBOOKS / name.removesuffix(".ipynb") / name)
    optional = {x.title for x in r.extra.exercises}
    for x, modelled in zip(episode.get("exercises", []), r.exercises, strict=True):
        assert tuple(x["range"]) == modelled.minutes, x["title"]
        assert x.get("optional", False) == (x["title"] in optional), x["title"]


@pytest.mark.parametrize("episode", EPISODES, ids=ids)
def test_each_episode_has_one_to_three_questions(episode):
    assert 1 <= len(episode["questions"]) <= 3
    assert all(q.endswith("?") for q in episode["questions"])


@pytest.mark.parametrize("episode", EPISODES, ids=ids)
def test_each_lesson_has_its_instructor_notes(episode):
    notes = INSTRUCTORS / "notes" / episode["notebook"].replace(".ipynb", ".md")
    text = notes.read_text(encoding="utf-8")
    assert text.startswith(f"# Teaching {episode['title']}\n")
    for part in ("## Live-code", "## Show", "## Where people get stuck", "## When you are late"):
        assert part in text, part
    exercises = episode.get("exercises", [])
    ex = span(episode["exercise_minutes"]) if exercises else "none"
    figures = (
        f"**Teaching**: {span(episode['teaching_minutes'])} · **Exercises**: {ex}",
        f"**Learner alone**: {span(episode['total_minutes'])}",
    )
    for figure in figures:
        assert figure in flat(text), figure
    for x in exercises:
        assert f"**{x['title']}** ({x['minutes']} min)" in flat(text), x


def test_the_guides_table_of_lessons_has_the_episode_minutes():
    text = (INSTRUCTORS / "README.md").read_text(encoding="utf-8")
    for e in EPISODES:
        [row] = [line for line in text.splitlines() if line.startswith(f"| {e['id']} · ")]
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        count = len([x for x in e.get("exercises", []) if not x.get("optional")])
        ex = f"{span(e['exercise_minutes'])} ({count})" if count else "none"
        sections = len(e.get("optional_sections", []))
        extra = f"{span(e['optional_minutes'])} ({sections})" if sections else "none"
        assert cells[1:] == [
            e["part"],
            span(e["teaching_minutes"]),
            ex,
            span(e["total_minutes"]),
            extra,
        ]


def clock(text: str) -> int:
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def from_column(text: str, stated_minutes: int) -> int:
    """What a plan row's "From" column adds up to, from the episode metadata."""
    if text.startswith("stated: "):
        assert text.removeprefix("stated: ") in STATED, text
        return stated_minutes
    total = 0
    for term in text.split(" + "):
        kind, _, ref = term.partition(" ")
        # The high end of each range: a plan must hold the slow room too (issue 31).
        if kind == "teach":
            total += BY_ID[ref]["teaching_minutes"][1]
        elif kind == "exercises":
            total += BY_ID[ref]["exercise_minutes"][1]
        elif kind == "exercise":
            lesson, number = ref.split(".")
            exercises = BY_ID[lesson]["exercises"]
            [minutes] = [x["range"][1] for x in exercises if x["number"] == int(number)]
            total += minutes
        else:
            raise AssertionError(f"unknown term {term!r}")
    return total


def schedule(path: Path) -> tuple[int, list[list[str]], list[str]]:
    """The plan's stated length, its rows and its total row."""
    return schedule_of(path.read_text(encoding="utf-8"))


def schedule_of(text: str) -> tuple[int, list[list[str]], list[str]]:
    length = int(re.search(r"^\*\*Length\*\*: (\d+) minutes", text, re.M)[1])
    table = text.split("| Start | Min | Block | From |", 1)[1].split("\n\n", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in table.strip().splitlines()[1:]  # the separator line first
    ]
    assert rows[-1][2] == "**Total**", "the table ends with its total"
    return length, rows[:-1], rows[-1]


def test_there_are_the_three_plans():
    assert [p.name for p in PLANS] == ["plan-90-minutes.md", "plan-full-day.md", "plan-half-day.md"]


@pytest.mark.parametrize("path", PLANS, ids=ids)
def test_each_plan_adds_up_from_the_episode_metadata_and_stated_overheads(path):
    length, rows, total = schedule(path)
    at = clock(rows[0][0])
    for start, minutes, block, source in rows:
        assert clock(start) == at, (block, start)
        source = source.strip("`")
        assert int(minutes) == from_column(source, int(minutes)), (block, minutes, source)
        at += int(minutes)
    assert int(total[1].strip("*")) == sum(int(r[1]) for r in rows) == length
    assert clock(total[0]) == at


# -- formative checks (issue 21): a marked check every 10 to 15 minutes of teaching -------------

# Rows that are not teaching time: the gap between two checks leaves them out. A buffer is
# teaching time (stragglers, questions), and so is an open lab.
NOT_TEACHING = {"welcome", "install", "break", "lunch", "discussion"}
MAX_GAP = 15  # minutes of teaching between two checks, and before the first and after the last
STICKY = "put up the red note if"


def plan_checks(text: str) -> list[list[str]]:
    """The rows of a plan's "## Checks" table: At, Check, Kind, If half the room fails."""
    section = text.split("\n## Checks\n", 1)[1]
    table = section.split("| At | Check | Kind | If half the room fails |", 1)[1]
    lines = table.strip().split("\n\n", 1)[0].splitlines()[1:]  # the separator line first
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]


def row_lessons(source: str) -> tuple[set[str], set[tuple[str, int]]]:
    """The lessons a plan row teaches, and the exercises it gives time to, from "From"."""
    lessons: set[str] = set()
    exercises: set[tuple[str, int]] = set()
    if source.startswith("stated: "):
        return lessons, exercises
    for term in source.split(" + "):
        kind, _, ref = term.partition(" ")
        lesson, _, number = ref.partition(".")
        lessons.add(lesson)
        if kind == "exercises":  # the core's exercises: an optional section's are not taught
            exercises |= {
                (lesson, x["number"])
                for x in BY_ID[lesson].get("exercises", [])
                if not x.get("optional")
            }
        elif kind == "exercise":
            exercises.add((lesson, int(number)))
    return lessons, exercises


def check_problems(text: str) -> list[str]:
    """What is wrong with a plan's checks; an empty list when they keep the pace and resolve."""
    _, rows, _ = schedule_of(text)
    spans = []  # (start, end, teaching, source)
    for start, minutes, _, source in rows:
        source = source.strip("`")
        teaching = source.removeprefix("stated: ") not in NOT_TEACHING
        spans.append((clock(start), clock(start) + int(minutes), teaching, source))

    def teaching_between(a: int, b: int) -> int:
        return sum(max(0, min(b, end) - max(a, start)) for start, end, on, _ in spans if on)

    checks = plan_checks(text)
    if not checks:
        return ["the plan has no checks"]
    problems = []
    times = [clock(at) for at, *_ in checks]
    if times != sorted(times) or len(set(times)) != len(times):
        problems.append(f"the checks are not in time order: {[c[0] for c in checks]}")
    taught = [s for s in spans if s[2]]
    marks = [taught[0][0], *times, taught[-1][1]]  # the teaching's start and end count too
    for a, b in pairwise(marks):
        if teaching_between(a, b) > MAX_GAP:
            gap = f"{a // 60}:{a % 60:02d} to {b // 60}:{b % 60:02d}"
            problems.append(f"{teaching_between(a, b)} minutes of teaching unchecked, {gap}")
    for (at, check, kind, action), minute in zip(checks, times, strict=True):
        [row] = [s for s in spans if s[0] <= minute < s[1]] or [None]
        if row is None or not row[2]:
            problems.append(f"{at}: not in a teaching row")
            continue
        lessons, exercises = row_lessons(row[3])
        kind = kind.strip("`")
        what, _, ref = kind.partition(" ")
        if what == "quiz":
            if ref not in QUIZZES:
                problems.append(f"{at}: no quiz {ref!r}")
            elif ref.split(".")[0] not in lessons:
                problems.append(f"{at}: quiz {ref} is not of the lesson taught then ({lessons})")
        elif what == "checkpoint":
            lesson, _, number = ref.partition(".")
            known = {x["number"] for x in BY_ID.get(lesson, {}).get("exercises", [])}
            if not number.isdigit() or int(number) not in known:
                problems.append(f"{at}: lesson {lesson!r} has no exercise {number!r}")
            elif (lesson, int(number)) not in exercises:
                problems.append(f"{at}: exercise {ref} is not done in the row at that time")
        elif kind == "sticky":
            if STICKY not in check.lower():
                problems.append(f"{at}: a sticky check says {STICKY!r}: {check!r}")
        else:
            problems.append(f"{at}: unknown kind {kind!r}")
        if len(action.split()) < 6:
            problems.append(f"{at}: say what to do when half the room fails: {action!r}")
    return problems


@pytest.mark.parametrize("path", PLANS, ids=ids)
def test_each_plan_has_a_check_every_15_minutes_of_teaching_that_resolves(path):
    assert check_problems(path.read_text(encoding="utf-8")) == []


def test_a_check_dropped_or_moved_is_caught():
    """The full day without a sticky note in 04's long exercise leaves a gap; a quiz moved
    into the next lesson's row, or a checkpoint of an exercise shown as a demo, do not resolve."""
    full = (INSTRUCTORS / "plan-full-day.md").read_text(encoding="utf-8")
    [dropped] = [line for line in full.splitlines() if line.startswith("| 16:15 |")]
    assert "unchecked" in " ".join(check_problems(full.replace(dropped + "\n", "")))
    moved = full.replace("| 09:48 | 00's second", "| 10:01 | 00's second")
    assert any("not of the lesson" in p for p in check_problems(moved))
    demo = full.replace("`quiz 02.2`", "`checkpoint 02.1`")
    assert any("not done in the row" in p for p in check_problems(demo))
    half = (INSTRUCTORS / "plan-half-day.md").read_text(encoding="utf-8")
    unknown = half.replace("`quiz 02a.2`", "`quiz 02a.9`")
    assert any("no quiz" in p for p in check_problems(unknown))


# -- the full day's shape (issue 32): breaks, lunch, the install, 01b an option, 03b after 03 ----

MAX_BLOCK = 90  # minutes in a row without a break or lunch
BREAKS = {"break", "lunch"}


def day_problems(text: str) -> list[str]:
    """What is wrong with a full day's shape; an empty list when it is a day a room can keep."""
    _, rows, _ = schedule_of(text)
    problems = []
    kinds = [(r[3].strip("`").removeprefix("stated: "), int(r[1]), r) for r in rows]
    block, since = 0, rows[0][0]
    for kind, minutes, row in kinds:
        if kind in BREAKS:
            block, since = 0, None
            continue
        since = since or row[0]
        block += minutes
        if block > MAX_BLOCK:
            problems.append(f"{block} minutes from {since} without a break ({row[2][:40]})")
    long_breaks = [m for kind, m, _ in kinds if kind == "break" and m >= 15]
    if len(long_breaks) < 2:
        problems.append(f"two breaks of at least 15 minutes, not {long_breaks}")
    if not [m for kind, m, _ in kinds if kind == "lunch" and m >= 30]:
        problems.append("no lunch of at least 30 minutes")
    installs = [row for kind, m, row in kinds if kind == "install" and m >= 10]
    if not installs or "USB" not in installs[0][2]:
        problems.append("no row of at least 10 minutes for installing from the USB stick")
    taught = [row_lessons(r[3].strip("`"))[0] for r in rows]
    order = [lesson for lessons in taught for lesson in sorted(lessons)]
    if "01b" in order:
        problems.append("01b is in the day: it is an option (homework or a cut), said as such")
    elif not re.search(r"01b[^.]*\*\*homework\*\*|01b[^.]*\bcut\b", flat(text)):
        problems.append("the plan does not say what becomes of 01b (homework or a cut)")
    for before, after in (("03", "03b"), ("03b", "04")):
        if before not in order or after not in order:
            problems.append(f"{before} and {after} are not both in the day")
        elif order.index(before) > order.index(after):
            problems.append(f"{after} comes before {before}")
    return problems


def test_the_full_day_has_breaks_lunch_the_install_and_01b_as_an_option():
    assert day_problems((INSTRUCTORS / "plan-full-day.md").read_text(encoding="utf-8")) == []


def test_a_full_day_without_its_breaks_or_install_is_caught():
    """Each requirement can fail: a break turned into teaching makes a block over 90 minutes
    and leaves one long break; no install row; 01b back in the day; 03b before 03."""
    full = (INSTRUCTORS / "plan-full-day.md").read_text(encoding="utf-8")
    no_break = full.replace(
        "| 10:57 | 15 | Break | `stated: break` |", "| 10:57 | 15 | Q&A | `stated: buffer` |"
    )
    problems = " ".join(day_problems(no_break))
    assert "without a break" in problems and "two breaks" in problems
    no_install = full.replace("`stated: install`", "`stated: welcome`")
    assert any("USB" in p for p in day_problems(no_install))
    three_b = "`teach 03b + exercise 03b.1`"
    with_01b = full.replace(three_b, "`teach 03b + exercise 03b.1 + exercise 01b.1`")
    assert any("01b is in the day" in p for p in day_problems(with_01b))
    three = "`teach 03 + exercise 03.1 + exercise 03.2`"
    swapped = full.replace(three, "X").replace(three_b, three).replace("X", three_b)
    assert any("03b comes before 03" in p for p in day_problems(swapped))
    assert any("not both" in p for p in day_problems(full.replace(three_b, "`teach 02`")))


@pytest.mark.parametrize("path", PLANS, ids=ids)
def test_each_plan_says_how_its_minutes_were_measured(path):
    text = path.read_text(encoding="utf-8")
    assert "benchmarks/reading_time.py" in text
    assert "not a timed run-through" in text


@pytest.mark.parametrize("path", sorted(INSTRUCTORS.rglob("*.md")), ids=lambda p: p.stem)
def test_every_relative_link_of_the_instructors_pages_resolves(path):
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # an address on the web
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), target
        if anchor and linked.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", linked.read_text(encoding="utf-8"), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            assert anchor in slugs, target


# -- sections the instructors' pages name -------------------------------------------------------

# "section 3, "Over HTTP, as a real form"" or "section 3 ("...")": a number and the heading's
# words in double quotes (backticks after a section number quote code, as in the notes' "Section
# 4, `book_table`'s rounds"). The lesson is the last one named before it (00, 01b, 04's,
# `01-the-basic-flow.ipynb`), or, in a lesson's notes, that lesson.
SECTION_REF = re.compile(r"\bsection (\d+)(?:, | \()[\"“]([^\"”]+)[\"”]", re.I)
LESSON_ID = re.compile(r"(?<![\d.:/-])(0\d)(b?)(?=[-'’ ,.;)]|$)")
PAGES = sorted(INSTRUCTORS.glob("*.md")) + sorted((INSTRUCTORS / "notes").glob("*.md"))
# Pages for people setting up or checking a room: every section they name carries its title, so
# a section that moves cannot leave a stale number behind (issue 19: setup.md and checklist.md).
TITLED_ONLY = ["setup.md", "checklist.md"]


def section_headings(lesson: str) -> dict[str, str]:
    """``{"3": "Over HTTP, as a real form", ...}``: a lesson's numbered ``## N. Title``s."""
    [path] = [p for p in NOTEBOOKS.glob(f"{lesson}-*/{lesson}-*.ipynb")]
    found = {}
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            for n, title in re.findall(r"^## (\d+)\. (.+?)\s*$", cell.source, flags=re.M):
                # A section marked optional keeps its name (reading_time.OPTIONAL_MARK).
                found[n] = title.removesuffix(" " + reading_time.OPTIONAL_MARK)
    return found


def section_refs(path: Path) -> list[tuple[str, str, str]]:
    """(lesson, number, quoted title) for each section ``path`` names with its title."""
    text = flat(path.read_text(encoding="utf-8"))
    own = re.match(r"(0\db?)-", path.name) if path.parent.name == "notes" else None
    refs = []
    for m in SECTION_REF.finditer(text):
        named = LESSON_ID.findall(text[max(0, m.start() - 300) : m.start()])
        lesson = "".join(named[-1]) if named else (own[1] if own else None)
        assert lesson, f"{path.name}: no lesson named before {m[0]!r}"
        refs.append((lesson, m[1], m[2]))
    return refs


@pytest.mark.parametrize("path", PAGES, ids=ids)
def test_every_section_the_instructors_name_with_its_title_exists_in_that_lesson(path):
    for lesson, number, title in section_refs(path):
        headings = section_headings(lesson)
        assert headings.get(number) == title, (
            f"{path.name}: {lesson}'s section {number} is {headings.get(number)!r}, "
            f"not {title!r}; its sections: {headings}"
        )


@pytest.mark.parametrize("name", TITLED_ONLY)
def test_the_setup_pages_give_every_section_they_name_its_title(name):
    text = flat((INSTRUCTORS / name).read_text(encoding="utf-8"))
    bare = [
        m.group(0)
        for m in re.finditer(r"\bsection \d+\b.{0,4}", text, flags=re.I)
        if not SECTION_REF.match(text, m.start())
    ]
    assert bare == [], f"{name}: name the section's title in quotes: {bare}"
    assert section_refs(INSTRUCTORS / name), name


def test_a_section_reference_that_moved_is_caught(tmp_path):
    """01's form is in section 3: the old "section 4 of 01" words, titled, would fail."""
    page = tmp_path / "page.md"
    page.write_text('Fill one form by hand (01\'s section 4, "Over HTTP, as a real form").\n')
    [(lesson, number, title)] = section_refs(page)
    assert lesson == "01" and section_headings(lesson).get(number) != title


# -- tools/plan_times.py carries the model's times into these pages -------------------------------


def _plan_times():
    sys.path.insert(0, str(ROOT / "tools"))
    import plan_times

    return plan_times


def test_the_instructors_pages_are_in_step_with_the_model():
    """What ``tools/plan_times.py --check`` checks: rerun it after ``reading_time.py
    --write-headers`` and it changes nothing."""
    assert _plan_times().sync(check=True) == []


def test_a_lesson_that_grew_moves_the_plans_clock_and_its_checks():
    """02 taught 5 minutes longer: 02's row grows by 5, every later row and check starts 5
    minutes later, a check inside 02 keeps its place in the row, and the total row grows by 5
    past the plan's stated length (for a person to resolve)."""
    plan_times = _plan_times()
    text = (INSTRUCTORS / "plan-full-day.md").read_text(encoding="utf-8")
    grown = {k: dict(v) for k, v in BY_ID.items()}
    low, high = grown["02"]["teaching_minutes"]
    grown["02"]["teaching_minutes"] = [low, high + 5]
    moved = plan_times.plan_text(text, grown)
    length, rows, total = schedule_of(moved)
    old_length, old_rows, _ = schedule_of(text)
    # The stated length stays: the plan no longer fits it, and its own test says so.
    assert length == old_length and int(total[1].strip("*")) == old_length + 5
    [start_02] = [clock(r[0]) for r in old_rows if "teach 02 " in r[3]]  # 02's own row stays
    for old, new in zip(old_rows, rows, strict=True):
        late = clock(old[0]) > start_02
        assert clock(new[0]) == clock(old[0]) + (5 if late else 0), (old, new)
    at = {c[1]: clock(c[0]) for c in plan_checks(text)}
    new_at = {c[1]: clock(c[0]) for c in plan_checks(moved)}
    gate = "The gate with `fleet=False` passes items 1 to 6"
    assert new_at[gate] == at[gate] + 5
    assert (
        new_at["The `unseal` checkpoint says passed"] >= at["The `unseal` checkpoint says passed"]
    )
    assert plan_times.plan_text(text, BY_ID) == text
