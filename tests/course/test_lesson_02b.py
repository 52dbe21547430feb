"""Lesson 02b (rotation and single use): the atomic-spend exercise's checkpoint names each
plausible wrong answer and forces the race a check-then-act spend loses, every time; the
notebook shows that race before the exercise, keeps the lesson conventions, and prints what
the lab really does about "once" (MRTR-S5d). The rotation exercise's checkpoint rolls real key
rings out to two instances of the refund lab (shared with lesson 02, and tested with it in
test_lesson_02.py), and the lesson's timeline, double spends and lost response are real runs.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import runpy

import lesson02b_attacks as attacks
import lesson02b_checkpoints as checkpoints
import lesson02b_lab
import lesson02b_spend as spend
import nbformat
import pytest

from mrtr_course.quizzes import quiz
from mrtr_course.refund_lab import attacks as toolkit
from mrtr_kit.server.keyring import KeyRing, StateKey
from tests.course.lesson_quizzes import QUIZZES
from tests.lesson_files import LESSONS, follow_the_solution_sentence

NOTEBOOK = LESSONS / "02b-rotation-and-single-use" / "02b-rotation-and-single-use.ipynb"
SOLUTIONS = NOTEBOOK.parent / "solutions"
SOLUTION_SENTENCE = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)
EXERCISES = [
    ("rotation_plan", "check_rotation_plan(rotation_plan)"),
    ("spend_once", "check_spend_once(spend_once)"),
]


def flat(text: str) -> str:
    return " ".join(text.split())


def outputs_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(NOTEBOOK, as_version=4)


def spend_once_solution():
    namespace: dict = {}
    exec((SOLUTIONS / "02b_spend_once.py").read_text(), namespace)
    return namespace["spend_once"]


def rotation_plan_solution():
    return runpy.run_path(str(SOLUTIONS / "02b_rotation_plan.py"))["rotation_plan"]


# --- exercise 1: the rotation plan, rolled out to two instances ----------------------------------


def test_exercise_3_solution_rotates_without_rejecting_anything():
    check = checkpoints.check_rotation_plan(rotation_plan_solution())
    assert check.passed, check
    assert repr(check).startswith("✔ Passed: 3 steps")


def test_the_rotation_stub_is_reported_as_not_done_without_raising():
    """The notebook's stub cell must run: the checkpoint reports, it does not raise."""

    def stub(*args):
        raise NotImplementedError("your code here")

    check = checkpoints.check_rotation_plan(stub)
    assert check.status == "not done" and not check.passed
    assert repr(check).startswith("… Not done yet:") and "NotImplementedError" in check.message


@pytest.mark.parametrize(
    ("plan", "says"),
    [
        (lambda cur, new: [KeyRing([new])], "was rejected by B (unknown key id 'k2')"),
        (lambda cur, new: [cur.add(new).promote(new.kid)], "was rejected by B"),
        (lambda cur, new: [cur.add(new), cur.add(new).promote(new.kid)], "still opens k1"),
        (lambda cur, new: [cur.add(new)], "still seals with k1"),
        (lambda cur, new: [], "non-empty list"),
        (lambda cur, new: [cur.retire(new.kid)], "KeyError"),
    ],
)
def test_exercise_3_wrong_plans_are_not_yet(plan, says):
    check = checkpoints.check_rotation_plan(plan)
    assert check.status == "not yet" and says in check.message, check


def test_rotation_timeline_three_phases_never_reject_and_the_naive_swap_does():
    k1, k2 = StateKey.generate("k1"), StateKey.generate("k2")
    added = KeyRing([k1]).add(k2)
    good = lesson02b_lab.rotation_timeline(
        KeyRing([k1]), [added, added.promote("k2"), KeyRing([k2])]
    )
    assert [row[0] for row in good.rows] == [
        "start",
        "1. add k2 → A",
        "1. add k2 → B",
        "2. promote k2 → A",
        "2. promote k2 → B",
        "wait 16 min: earlier states expire",
        "3. retire k1 → A",
        "3. retire k1 → B",
    ]
    assert all(row[-1] == "✔ yes" for row in good.rows)
    by_step = {row[0]: row for row in good.rows}
    assert by_step["1. add k2 → A"][1:5] == ["k1 / k1, k2", "k1 / k1", "A and B", "A"]
    assert by_step["3. retire k1 → B"][1:5] == ["k2 / k2", "k2 / k2", "neither", "A and B"]
    naive = lesson02b_lab.rotation_timeline(KeyRing([k1]), [KeyRing([k2])])
    assert naive.rows[-2][0] == "1. replace k1 by k2 → A"
    assert (
        naive.rows[-2][-1].startswith("✘ ") and "A's k2 state rejected by B" in naive.rows[-2][-1]
    )


# --- exercise 2: the atomic spend (MRTR-S5d) ----------------------------------------------------


def test_the_solution_spends_once_across_two_instances_in_every_race():
    """MRTR-S5d: one INSERT that the primary key refuses, and its row count: of two instances
    racing for one token id, exactly one wins, in all 20 forced races."""
    check = checkpoints.check_spend_once(spend_once_solution())
    assert check.passed, check
    assert "20 races of two instances on one file, 20 of them taken statement by statement" in (
        check.message
    )


def check_then_act(db, jti):
    if db.execute("SELECT 1 FROM spent WHERE jti = ?", (jti,)).fetchone():
        return False
    db.execute("INSERT OR IGNORE INTO spent (jti) VALUES (?)", (jti,))
    db.commit()
    return True


def check_then_act_with_a_cursor(db, jti):
    cursor = db.cursor()
    cursor.execute("SELECT count(*) FROM spent WHERE jti = ?", (jti,))
    if cursor.fetchone()[0]:
        return False
    cursor.execute("INSERT OR IGNORE INTO spent (jti) VALUES (?)", (jti,))
    db.commit()
    return True


def check_then_insert_that_raises(db, jti):
    if db.execute("SELECT 1 FROM spent WHERE jti = ?", (jti,)).fetchone():
        return False
    with db:
        db.execute("INSERT INTO spent (jti) VALUES (?)", (jti,))
    return True


def always_true(db, jti):
    db.execute("INSERT OR IGNORE INTO spent (jti) VALUES (?)", (jti,))
    db.commit()
    return True


def never_records(db, jti):
    return db.execute("SELECT 1 FROM spent WHERE jti = ?", (jti,)).fetchone() is None


SPENT_IN_MEMORY: set[str] = set()


def in_a_dict(db, jti):
    if jti in SPENT_IN_MEMORY:
        return False
    SPENT_IN_MEMORY.add(jti)
    return True


def never_commits(db, jti):
    return db.execute("INSERT OR IGNORE INTO spent (jti) VALUES (?)", (jti,)).rowcount == 1


RACE = "two calls both got True: paid twice"


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (check_then_act, [RACE, "A read None", "B read None", "Check and record in ONE statement"]),
        (check_then_act_with_a_cursor, [RACE, "A read (0,)", "B read (0,)"]),
        (check_then_insert_that_raises, ["B's spend raised IntegrityError", "not raise"]),
        (always_true, ["returned True, then True", "cursor.rowcount == 1"]),
        (never_records, ["recorded nothing", "INSERT it"]),
        (in_a_dict, ["you remember spent ids in Python (a dict or a set)"]),
        (never_commits, ["left its transaction open", "db.commit()"]),
    ],
)
def test_each_plausible_wrong_spend_is_not_yet_with_its_diagnosis(wrong, says):
    """MRTR-S5d: a check-then-act spend is caught by a forced race (the trace printed: who read
    what, who inserted, both True), and the other mistakes by name."""
    SPENT_IN_MEMORY.clear()
    check = checkpoints.check_spend_once(wrong)
    assert check.status == "not yet", check
    for part in says:
        assert part in check.message, (part, check.message)


def test_the_stub_is_not_done():
    def stub(db, jti):
        raise NotImplementedError("your code here")

    assert checkpoints.check_spend_once(stub).status == "not done"


def test_the_race_is_deterministic_check_then_act_pays_twice_every_time(tmp_path):
    """No chance in it: the turns force both SELECTs before either INSERT, so a check-then-act
    pays twice on every run, with the same trace; the atomic spend pays once on every run.
    (Run 200 times once, locally, for the report; 25 here.)"""
    traces = set()
    for n in range(25):
        (tmp_path / f"r{n}").mkdir()
        path = spend.new_ledger(tmp_path / f"r{n}")
        lost = spend.race(check_then_act, path, "j")
        assert lost.paid_twice and lost.forced and lost.rows == 1
        traces.add(tuple(lost.trace))
        won = spend.race(spend_once_solution(), path, "k")
        assert list(won.returned.values()).count(True) == 1 and won.rows == 1
    assert len(traces) == 1


def test_a_spend_that_locks_first_is_atomic_and_the_turns_give_way(tmp_path):
    """A spend that takes the write lock before it reads (BEGIN IMMEDIATE) is atomic: the other
    instance waits inside SQLite, so the turns cannot be held; they stop instead of deadlocking,
    and the spend passes."""

    def begin_immediate(db, jti):
        db.isolation_level = None
        try:
            db.execute("BEGIN IMMEDIATE")
            found = db.execute("SELECT 1 FROM spent WHERE jti = ?", (jti,)).fetchone()
            if not found:
                db.execute("INSERT INTO spent (jti) VALUES (?)", (jti,))
            db.execute("COMMIT")
        finally:
            db.isolation_level = ""
        return found is None

    check = checkpoints.check_spend_once(begin_immediate, rounds=3)
    assert check.passed, check


def test_the_lesson_race_prints_who_read_what_and_paid_twice(notebook):
    """The problem before the solution: the check-then-act spend is shown, then raced, and the
    stored trace is a fresh run's."""
    cells = notebook.cells
    [i] = [k for k, c in enumerate(cells) if c.source == "print(spend.race(spend.check_then_act))"]
    [ex] = [k for k, c in enumerate(cells) if c.source.startswith("### Exercise 2 · ")]
    assert i < ex
    out = outputs_of(cells[i])
    assert out == str(spend.race(spend.check_then_act)) + "\n"
    assert out.rstrip().endswith(RACE)
    assert "A read None" in out and "B read None" in out


def test_a_sqlite_file_is_shared_by_two_connections_but_a_dict_is_not(tmp_path):
    """What the exercise rests on: the row one connection commits, another sees."""
    path = spend.new_ledger(tmp_path)
    a, b = spend.connect(path), spend.connect(path)
    solution = spend_once_solution()
    assert [solution(a, "x"), solution(b, "x"), solution(a, "y")] == [True, False, True]
    a.close()
    b.close()


# --- error 8: the quiz's right answer is the atomic spend -----------------------------------------


def test_no_quiz_answers_check_then_act_for_single_use():
    """Error 8: Quiz 02 Q3 taught "a record of spent states, checked before paying", which the
    lesson's own race shows paying twice. It is now a wrong option that explains the race; the
    right one is an atomic spend (MRTR-S5d)."""
    for qz in QUIZZES.values():
        for question in qz.questions:
            right = question.options[question.answer]
            assert "checked before paying" not in right.text, qz.key
    [double] = [q for q in quiz("02b.2").questions if "double click" in q.ask]
    assert "one atomic step" in double.options[double.answer].text
    wrong = next(o for o in double.options if "checked before paying" in o.text)
    assert not wrong.right and "race" in wrong.why and "MRTR-S5d" in wrong.why


# --- the notebook -------------------------------------------------------------------------------


def test_the_header_says_what_it_needs_from_02_and_how_long(notebook):
    text = flat(notebook.cells[0].source)
    assert text.startswith("# 02b · Rotation and single use")
    for part in (
        "**What you will learn**",
        "**What you need:** lesson [02]"
        "(../02-securing-request-state/02-securing-request-state.ipynb). From it:",
        "`RefundLab`",
        "-32602 Invalid requestState",
        "**How long**: About ",
        "These times are estimates until a workshop has timed them.",
        "```mermaid",
    ):
        assert part in text, part
    assert notebook.cells[1].source.startswith("## Setup")
    assert notebook.cells[2].cell_type == "code" and "import" in notebook.cells[2].source


def test_the_lesson_ends_with_key_points_and_points_at_03(notebook):
    last = notebook.cells[-1].source
    assert last.startswith("## Key points") and "## In practice" in last
    assert (
        "**Next:** [03 · Migrating from server requests]"
        "(../03-migrating-from-server-requests/03-migrating-from-server-requests.ipynb)" in last
    )


def test_each_exercise_has_the_one_layout_heading_stub_hint_and_checkpoint_cell(notebook):
    cells = notebook.cells
    for number, (name, check) in enumerate(EXERCISES, 1):
        [i] = [
            k for k, c in enumerate(cells) if c.source.startswith(f"# %load solutions/02b_{name}")
        ]
        heading, stub, hint, checkpoint = cells[i - 1], cells[i], cells[i + 1], cells[i + 2]
        assert re.match(rf"### Exercise {number} · [^\n]+ \(\d+ min\)\n", heading.source)
        assert stub.source.splitlines()[0] == f"# %load solutions/02b_{name}.py"
        assert f"def {name}(" in stub.source and "raise NotImplementedError" in stub.source
        assert hint.source.startswith("<details><summary>Hint</summary>")
        assert hint.source.rstrip().endswith(SOLUTION_SENTENCE)
        assert checkpoint.cell_type == "code" and checkpoint.source == check


@pytest.mark.parametrize(("name", "check"), EXERCISES)
def test_following_the_solution_sentence_passes_the_checkpoint(notebook, name, check):
    cells = notebook.cells
    load = f"# %load solutions/02b_{name}"
    setup = cells[2].source.replace("import asyncio\n", "")
    verdict = follow_the_solution_sentence(NOTEBOOK.parent, cells, load, setup)
    assert verdict.passed, verdict


def test_every_code_cell_is_led_in_by_markdown_and_stored_with_outputs(notebook):
    for before, cell in itertools.pairwise(notebook.cells):
        if cell.cell_type == "code":
            assert before.cell_type == "markdown", cell.source[:60]
            assert cell.execution_count is not None
            assert not any(o.get("output_type") == "error" for o in cell.get("outputs", []))


def test_quizzes_follow_sections_1_and_2(notebook):
    calls = [c.source for c in notebook.cells if c.source.startswith("show_quiz(")]
    assert calls == ['show_quiz("02b.1")', 'show_quiz("02b.2")', 'show_quiz("02b")']


def test_citations_name_statelessness_for_moving_between_instances(notebook):
    """Moving between instances is statelessness (CORE-8/9), not MRTR-S8."""
    text = flat("\n".join(c.source for c in notebook.cells if c.cell_type == "markdown"))
    assert (
        "(CORE-8 MUST NOT)" in text
        and "(CORE-9 MUST / SHOULD NOT)" in text
        and "MRTR-S8" not in text
    )


# --- what the lesson prints about "once" is true (moved from test_lesson_02.py) -----------------


def test_every_race_starts_on_a_fresh_server_so_its_totals_count_only_itself(notebook):
    """Issue 9, item 13: the ten-at-once cell printed "1 × paid" above "2 payout(s)", because
    the total included an earlier cell's payout. Each race now builds its own server, and the
    payouts it prints are the ones its tally says it paid."""
    races = [c for c in notebook.cells if c.cell_type == "code" and "asyncio.gather" in c.source]
    assert len(races) == 3
    for cell in races:
        assert cell.source.startswith(("lab = RefundLab.build(", "a = RefundLab.build(")), (
            cell.source
        )
        out = outputs_of(cell)
        paid = sum(int(n) for n in re.findall(r"^(\d+) × paid$", out, flags=re.M))
        totals = re.findall(r"^(?:\w+'s desk: )?(\d+) payout\(s\)", out, flags=re.M)
        assert totals and all(int(n) == paid for n in totals), out


def test_the_lesson_shows_the_ledger_paying_a_second_approval_then_the_fix(notebook):
    """Issue 9, item 1: the ledger stops one state being spent twice, not a second approval;
    the idempotency key on the order makes it one refund per order."""
    text = flat("\n".join(c.source for c in notebook.cells if c.cell_type == "markdown"))
    assert "exactly once (MRTR-S5d)" not in text and "pays it exactly once" not in text
    assert 'Single use is not "one refund per order"' in text
    code = {c.source.splitlines()[0]: outputs_of(c) for c in notebook.cells if c.get("outputs")}
    second = code['second = await lab.approval("alice", "A-1001")']
    assert "(payout P-0002)" in second and "2 payout(s), $249.00 in total" in second
    [fixed] = [
        c for c in notebook.cells if "asyncio.gather" in c.source and "instances" in c.source
    ]
    out = outputs_of(fixed)
    assert "9 × complete: Order A-1001 was refunded already" in out and "1 × paid" in out
    assert "A's desk: 1 payout(s), $124.50 in total" in out
    assert "B's desk: 1 payout(s), $124.50 in total" in out


def test_section_2b_shows_one_refund_per_order_on_two_instances_sharing_a_ledger(notebook):
    """Issue: one refund per order was shown in one process only, where a payout list in
    memory passes too. Section 7a now builds instance B on instance A's SQLite file (and key
    ring) and nothing else, and redeems one approval on each: B finds A's payout. Every request
    stands alone (CORE-8), so the per-order key must live where every instance looks."""
    cells = notebook.cells
    [i] = [
        i
        for i, c in enumerate(cells)
        if c.cell_type == "code"
        and c.source.startswith("a = RefundLab.build(")
        and "asyncio.gather" not in c.source
    ]
    source = cells[i].source
    assert "ledger=a.ledger_file" in source and "keys=a.keys" in source
    assert "desk=" not in source  # B's desk is its own: it shares the payouts through the file
    refunded = "Order A-1002 was refunded already ($19.90, payout P-0001). Nothing more was paid."
    assert outputs_of(cells[i]).splitlines() == [
        "round 2 on A: complete: Refunded $19.90 to alice for order A-1002 (payout P-0001).",
        f"round 2 on B: complete: {refunded}",
        f"round 1 on B: complete: {refunded}",
    ]
    prose = flat(cells[i - 1].source)
    assert "(`ledger=a.ledger_file`); nothing else" in prose
    race = next(c for c in cells[i:] if "asyncio.gather" in c.source)
    assert "ledger=a.ledger_file" in race.source and "[a, b] * 5" in race.source


def test_the_lesson_compares_single_use_and_idempotent_on_a_lost_response(notebook):
    """The final retry lands on the other instance (HTTP-26: sent again under a new id): single
    use refuses it; the idempotent booking answers it with the one booking made on A."""
    [cell] = [c for c in notebook.cells if "await lose_the_final_response(" in c.source]
    out = outputs_of(cell)
    assert out.count("bookings made: 1") == 2
    assert "the same request again on B:   error -32602 Invalid requestState" in out
    assert "the same request again on B:   complete: Booked Luigi's" in out
    assert out.count("round 3 on A, lost on the way: complete: Booked Luigi's") == 2


def test_lose_the_final_response_single_use_refuses_idempotent_answers_again():
    single = asyncio.run(lesson02b_lab.lose_the_final_response("single use"))
    idem = asyncio.run(lesson02b_lab.lose_the_final_response("idempotent"))
    booked = "complete: Booked Luigi's for 4 on 2026-09-01 (reference BK-0001)."
    assert str(single.first) == str(idem.first) == booked
    assert str(single.again) == "error -32602 Invalid requestState"
    assert str(idem.again) == booked
    assert single.bookings == idem.bookings == 1
    with pytest.raises(ValueError):
        asyncio.run(lesson02b_lab.lose_the_final_response("both"))


# --- the double spends: real runs against the lessons' servers ----------------------------------


def test_double_spend_scoreboard_cells_are_real_outcomes():
    """Every cell comes from running the attack (MRTR-S5d, and the key on the order): against
    lesson 02's servers, an AEAD server with neither pays twice; with a ledger and the key on
    the order, both double spends are stopped. (Lesson 02's attacks: test_lesson_02.py.)"""
    board = asyncio.run(toolkit.scoreboard(toolkit.SERVERS, attacks.ATTACKS_02B))
    rows = {row[0]: dict(zip(board.header[1:], row[1:], strict=True)) for row in board.rows}
    assert rows["the same state twice (02b: 2)"]["aead"] == "✘ paid, then paid $124.50"
    last = "aead + ledger + one per order"
    assert rows["the same state twice (02b: 2)"][last] == (
        "✔ paid, then rejected (already redeemed)"
    )
    assert rows["a second approval, same order (02b: 2b)"][last] == (
        "✔ paid, then not paid: refunded already"
    )
    assert all(cell[0] in "✔✘" for row in board.rows for cell in row[1:])
