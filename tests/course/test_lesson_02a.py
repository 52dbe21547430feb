"""Lesson 02a (integrity is not enough: replays), once lesson 02's section 5: the solution
passes its checkpoint, the stub and typical wrong claim checks do not, each replay works
against the server that checks only the tag and fails against the one that checks every claim,
and the notebook keeps the lesson conventions (docs/architecture.md §4).

The notebook itself runs under nbval strict with ``python3 tools/kit.py test``.
"""

from __future__ import annotations

import ast
import asyncio
import itertools
import json
import re
import runpy
from pathlib import Path

import lesson02a_attacks as attacks
import lesson02a_checkpoints as checkpoints
import lesson02a_quiz
import nbformat
import pytest

from mrtr_course.refund_lab import attacks as toolkit
from mrtr_course.refund_lab.lab import RefundLab, ServerAnswer, server_log
from mrtr_kit.server.codecs import InvalidState
from mrtr_kit.server.state import StateChecks
from tests.course.lesson_quizzes import QUIZZES
from tests.lesson_files import LESSONS, follow_the_solution_sentence

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = LESSONS / "02a-replays" / "02a-replays.ipynb"
SOLUTIONS = NOTEBOOK.parent / "solutions"


def solution(name: str, function: str):
    """A solution of lesson 02a (solutions/02a_name.py, beside the notebook)."""
    return runpy.run_path(str(SOLUTIONS / f"02a_{name}.py"))[function]


def stub(*args):
    raise NotImplementedError("your code here")


# --- the exercise: the solution passes, the stub is "not done", wrong answers are "not yet" ------


def test_the_stub_is_reported_as_not_done_without_raising():
    """The notebook's stub cell must run: the checkpoint reports, it does not raise."""
    check = asyncio.run(checkpoints.check_verify_claims(stub))
    assert check.status == "not done" and not check.passed
    assert repr(check).startswith("… Not done yet:") and "NotImplementedError" in check.message


def test_exercise_1_solution_checks_every_claim_in_a_real_server():
    """MRTR-S5a-c: the learner's claim checks, inside a kit server, pay the states in time
    (within the kit's 30 s of clock skew, KIT) and refuse every replay."""
    check = asyncio.run(checkpoints.check_verify_claims(solution("verify_claims", "verify_claims")))
    assert check.passed, check
    lines = check.message.splitlines()
    assert "  ✔ alice's own state, at once: paid $124.50" in lines
    assert (
        "  ✔ alice's state, sent by mallory (MRTR-S5a): rejected (issued to another principal)"
        in lines
    )
    assert (
        "  ✔ a state issued by refunds-staging, which shares the key (KIT): rejected (wrong "
        "audience)" in lines
    )
    assert len(lines) == 10  # the title and nine cases


def _claims_ok(claims, principal, digest, audience, now, *, skip=(), skew=30):
    checks = {
        "aud": claims["aud"] != audience,
        "sub": claims["sub"] != principal,
        "req": claims["req"] != digest,
        "exp": now > claims["exp"] + skew,
        "iat": claims["iat"] > now + skew,
    }
    for name, failed in checks.items():
        if failed and name not in skip:
            raise InvalidState(name)


def _claims_wrong(**options):
    return lambda c, p, d, a, n: _claims_ok(c, p, d, a, n, **options)


def claims_returns_a_verdict(claims, principal, digest, audience, now):
    return claims["sub"] == principal and claims["req"] == digest


def claims_raise_value_error(claims, principal, digest, audience, now):
    if claims["sub"] != principal:
        raise ValueError("not yours")


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (
            lambda *args: None,
            "sent by mallory (MRTR-S5a): your checks let it through, and the server paid $124.50",
        ),
        (_claims_wrong(skip=("sub",)), "sent by mallory (MRTR-S5a): your checks let it through"),
        (_claims_wrong(skip=("req",)), "sent with A-1002 (MRTR-S5c): your checks let it through"),
        (
            _claims_wrong(skip=("exp",)),
            "40 s past its expiry (beyond the skew, MRTR-S5b): your checks let it through",
        ),
        (_claims_wrong(skip=("iat",)), "1 hour fast (KIT): your checks let it through"),
        (
            _claims_wrong(skip=("aud",)),
            "refunds-staging, which shares the key (KIT): your checks let it through",
        ),
        (
            _claims_wrong(skew=0),
            "20 s past its expiry (within the 30 s of clock skew): your "
            "checks refused it (exp), but it must be accepted",
        ),
        (claims_returns_a_verdict, "verify_claims returned True. Return nothing"),
        (
            claims_raise_value_error,
            "verify_claims raised ValueError: not yours, and the server "
            "answered -32603 Internal error",
        ),
    ],
)
def test_exercise_1_wrong_claim_checks_are_not_yet_with_the_case_named(wrong, says):
    check = asyncio.run(checkpoints.check_verify_claims(wrong))
    assert check.status == "not yet" and says in check.message, check


def test_exercise_1_a_strict_clock_on_iat_refuses_an_honest_instance_20_s_fast():
    """The skew works both ways (KIT): an instance whose clock is 20 s fast is honest."""

    def strict_iat(claims, principal, digest, audience, now):
        _claims_ok(claims, principal, digest, audience, now, skip=("iat",))
        if claims["iat"] > now:
            raise InvalidState("iat")

    check = asyncio.run(checkpoints.check_verify_claims(strict_iat))
    assert check.status == "not yet", check
    assert "clock is 20 s fast (within the skew): your checks refused it (iat)" in check.message


# --- the lab: each replay works on the weak server and fails on the hardened one --------------


@pytest.mark.parametrize("attack", ["user", "request", "expiry", "audience"])
def test_each_replay_works_on_the_weak_server_and_fails_on_the_hardened_one(attack):
    async def replay(checks: StateChecks | None) -> tuple[ServerAnswer, list[str]]:
        lab = RefundLab.build("hmac", checks=checks)
        source = lab
        if attack == "audience":
            source = RefundLab.build("hmac", keys=lab.keys, name="refunds-staging")
        approval = await source.approval("alice", "A-1001")
        user, order = {"user": ("mallory", "A-1001"), "request": ("alice", "A-1002")}.get(
            attack, ("alice", "A-1001")
        )
        if attack == "expiry":
            lab.clock.advance(2 * 3600)
        with server_log() as log:
            answer = await lab.redeem(user, order, approval)
        await lab.aclose()
        return answer, log

    weak, weak_log = asyncio.run(replay(StateChecks.integrity_only()))
    hardened, hardened_log = asyncio.run(replay(None))
    assert weak.ok and "Refunded $124.50" in weak.text and weak_log == []
    assert str(hardened) == "error -32602 Invalid requestState"
    reason = {
        "user": "issued to another principal",
        "request": "issued for another request",
        "expiry": "expired",
        "audience": "wrong audience",
    }[attack]
    assert len(hardened_log) == 1 and hardened_log[0].endswith(reason)


def test_the_replays_sit_beside_the_notebook_and_the_course_never_imports_them(notebook):
    """The lesson's replays and checkpoint are files the learner opens beside the notebook, and
    the arrow goes notebook -> course -> library: nothing in mrtr_kit or the course package
    imports them. The code moved out of lesson 02's files rather than being copied."""
    folder = NOTEBOOK.parent.resolve()
    assert Path(attacks.__file__).resolve() == folder / "lesson02a_attacks.py"
    assert Path(checkpoints.__file__).resolve() == folder / "lesson02a_checkpoints.py"
    course = ROOT / "course" / "mrtr_course"
    lesson_modules = {path.stem for path in LESSONS.glob("*/*.py")}
    assert {"lesson02a_attacks", "lesson02a_checkpoints", "lesson02a_quiz"} <= lesson_modules
    for path in [*(ROOT / "mrtr_kit").rglob("*.py"), *course.rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [
            node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        ] + [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
        assert not [n for n in imported if n.split(".")[0] in lesson_modules], path
    lesson02 = LESSONS / "02-securing-request-state"
    for name in ("lesson02_attacks.py", "lesson02_checkpoints.py", "lesson02_quiz.py"):
        text = (lesson02 / name).read_text(encoding="utf-8")
        for moved in (
            "def other_user",
            "def check_verify_claims",
            "REPLAY_RETRY",
            "def _claim_cases",
        ):
            assert moved not in text, (name, moved)
    assert not (lesson02 / "solutions" / "02_verify_claims.py").exists()
    setup = flat(notebook.cells[1].source)
    assert "`lesson02a_attacks.py`, beside this notebook" in setup
    assert "from lesson02a_attacks import" in notebook.cells[2].source


# --- the notebook keeps the lesson conventions -------------------------------------------------


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(NOTEBOOK, as_version=4)


MRTR_PAGE = "https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr"
SEP_2322 = "https://modelcontextprotocol.io/seps/2322-MRTR"
SPEC_MAP_LINE = (
    "Rule IDs like `MRTR-S5a` are explained in [docs/spec-map.md](../../docs/spec-map.md); IDs "
    "tagged (KIT) are this kit's own conventions, not the specification's."
)
SOLUTION_SENTENCE = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)
EXERCISES = [("verify_claims", "await check_verify_claims(verify_claims)")]


def flat(text: str) -> str:
    """Markdown with its line breaks folded, so a test does not depend on where lines wrap."""
    return " ".join(text.split())


def test_notebook_opens_with_objectives_needs_time_spec_links_and_a_sequence_diagram(notebook):
    """The header of every lesson (LESSONS.md), and lesson 02 as what it needs."""
    first = notebook.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.startswith("# 02a · Integrity is not enough: replays\n")
    text = flat(first.source)
    for part in (
        "What you will learn",
        "**What you need:** lesson [02](../02-securing-request-state/"
        "02-securing-request-state.ipynb)",
        "**How long**: About ",
        "**Teaching it**: about ",
        "These times are estimates until a workshop has timed them.",
        f"({MRTR_PAGE})",
        f"({SEP_2322})",
        SPEC_MAP_LINE,
        "```mermaid",
        "sequenceDiagram",
    ):
        assert part in text, part


def test_notebook_closes_with_key_points_practice_the_cheatsheet_and_the_next_lesson(notebook):
    """02 -> 02a -> 02b: lesson 02 ends by sending the learner here, and this lesson on."""
    last = notebook.cells[-1].source
    for part in (
        "## Key points",
        "## In practice",
        "[docs/cheatsheet.md](../../docs/cheatsheet.md)",
        "**Next:** [02b · Rotation and single use]"
        "(../02b-rotation-and-single-use/02b-rotation-and-single-use.ipynb)",
    ):
        assert part in last, part
    assert last.index("## Key points") < last.index("## In practice") < last.index("cheatsheet")
    lesson02 = nbformat.read(
        LESSONS / "02-securing-request-state" / "02-securing-request-state.ipynb", as_version=4
    )
    assert (
        "**Next:** [02a · Integrity is not enough: replays](../02a-replays/02a-replays.ipynb)"
        in (lesson02.cells[-1].source)
    )


def test_every_code_cell_is_led_in_by_markdown_and_no_cell_fails(notebook):
    for before, cell in itertools.pairwise(notebook.cells):
        if cell.cell_type == "code":
            assert before.cell_type == "markdown", cell.source[:60]
            assert not any(o.get("output_type") == "error" for o in cell.get("outputs", []))
            assert "raises-exception" not in cell.metadata.get("tags", [])


def test_notebook_is_stored_with_outputs(notebook):
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    silent = [c.source.splitlines()[0] for c in code if not c.outputs]
    assert silent == ["from lesson02a_attacks import ATTACKS_02A, SERVERS_02A"] + [
        f"# %load solutions/02a_{n}.py" for n, _ in EXERCISES
    ]


def test_the_exercise_has_the_one_layout_heading_stub_hint_and_checkpoint_cell(notebook):
    """LESSONS.md: heading with minutes; the stub, whose first line is the commented-out
    ``%load``; the hint and the solution sentence word for word; the checkpoint alone in the
    next cell."""
    cells = notebook.cells
    for number, (name, check) in enumerate(EXERCISES, 1):
        [i] = [
            k for k, c in enumerate(cells) if c.source.startswith(f"# %load solutions/02a_{name}")
        ]
        heading, stub, hint, checkpoint = cells[i - 1], cells[i], cells[i + 1], cells[i + 2]
        assert re.match(rf"### Exercise {number} · [^\n]+ \(\d+ min\)\n", heading.source)
        assert stub.source.splitlines()[0] == f"# %load solutions/02a_{name}.py"
        assert (SOLUTIONS / f"02a_{name}.py").exists()
        assert f"def {name}(" in stub.source and "raise NotImplementedError" in stub.source
        assert "check_" not in stub.source
        assert hint.source.startswith("<details><summary>Hint</summary>")
        assert hint.source.rstrip().endswith(SOLUTION_SENTENCE)
        assert checkpoint.cell_type == "code" and checkpoint.source == check


@pytest.mark.parametrize(("name", "check"), EXERCISES)
def test_following_the_solution_sentence_passes_the_checkpoint(notebook, name, check):
    """Run the stub cell, then %load (the cell becomes '# %load path' and the file), run it
    again, then the checkpoint cell below it."""
    cells = notebook.cells
    load = f"# %load solutions/02a_{name}"
    setup = cells[2].source  # the setup cell
    verdict = follow_the_solution_sentence(NOTEBOOK.parent, cells, load, setup)
    assert verdict.passed, verdict


def test_no_cell_holds_logic_the_kit_does_not(notebook):
    """docs/architecture.md §2: the only function defined in a cell is the stub."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            defined = re.findall(r"^(?:async )?def (\w+)", cell.source, flags=re.M)
            assert set(defined) <= {"verify_claims"}, defined
            assert "class " not in cell.source


def outputs_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


def stored(cell, mime):
    return "".join(o.get("data", {}).get(mime, "") for o in cell.get("outputs", []))


def test_section_2a_shows_the_replayed_state_on_the_wire_and_the_refusing_check(notebook):
    """The stolen state goes out byte for byte, as mallory's round 2, and the hardened server
    refuses it in StateIssuer.verify (MRTR-S5a)."""
    [cell] = [c for c in notebook.cells if "stolen = await" in c.source]
    out = outputs_of(cell)
    assert out.startswith("weak: complete: Refunded $124.50 to mallory")
    sent = json.loads(out.split("request: ", 1)[1].split("\nanswer: ", 1)[0])["params"]
    assert toolkit.read_payload(sent["requestState"])["sub"] == "alice"
    assert '"message": "Invalid requestState"' in out.split("\nanswer: ", 1)[1]
    assert "refused by StateIssuer.verify, in mrtr_kit/server/" in out


def test_each_replay_cell_pays_on_the_weak_server_and_is_refused_by_the_hardened_one(notebook):
    """Sections 2a-2c, as stored: weak pays, hardened answers -32602 (MRTR-S5a-c); 2d, the
    staging server's state, is refused for its audience (KIT)."""
    loops = [c for c in notebook.cells if c.source.startswith("for server in (weak, hardened)")]
    assert len(loops) == 3
    for cell in loops:
        out = outputs_of(cell)
        assert "weak: complete: Refunded $124.50" in out, out[:200]
        assert "hardened: error -32602 Invalid requestState" in out, out[:200]
    [staging] = [c for c in notebook.cells if c.source.startswith("staging = ")]
    assert outputs_of(staging).rstrip().endswith("wrong audience")


def test_notebook_has_its_quiz_after_section_2_then_the_optional_scoreboard(notebook):
    """The replays' quiz (once 02.5) follows the exercise, led in by a line of markdown; the
    optional scoreboard follows; the lesson closes with the key points."""
    cells = notebook.cells
    [k] = [k for k, c in enumerate(cells) if c.source.startswith("show_quiz(")]
    assert cells[k].source == 'show_quiz("02a.2")'
    assert cells[k - 1].source.startswith("**Self-check** on section 2")
    assert "Self-check" in stored(cells[k], "text/html")
    assert cells[k + 1].source.startswith("## 3. Every replay against every server (optional)")
    assert cells[-1].source.startswith("## Key points")


def test_notebook_stores_the_scoreboard_as_html_and_text_from_a_fresh_run(notebook):
    [board] = [
        c for c in notebook.cells if c.source == "await scoreboard(SERVERS_02A, ATTACKS_02A)"
    ]
    fresh = asyncio.run(toolkit.scoreboard(attacks.SERVERS_02A, attacks.ATTACKS_02A))
    assert stored(board, "text/plain") == repr(fresh)
    assert stored(board, "text/html") == fresh._repr_html_()
    assert list(attacks.SERVERS_02A) == ["hmac, tag only", "hmac", "aead"]


def test_scoreboard_cells_are_real_outcomes():
    """Every cell comes from running the replay (MRTR-S5a-c): the HMAC server without claim
    checks pays every replay, the ones with them refuse each for its claim."""
    board = asyncio.run(toolkit.scoreboard(toolkit.SERVERS, attacks.ATTACKS_02A))
    rows = {row[0]: dict(zip(board.header[1:], row[1:], strict=True)) for row in board.rows}
    assert rows["alice's state, sent by mallory (2a)"]["hmac, tag only"] == "✘ paid $124.50"
    assert rows["alice's state, sent by mallory (2a)"]["hmac"] == (
        "✔ rejected (issued to another principal)"
    )
    assert rows["for another order (2b)"]["aead"] == "✔ rejected (issued for another request)"
    assert rows["two hours later (2c)"]["aead + ledger + one per order"] == "✔ rejected (expired)"
    assert rows["issued by staging, same key (2d)"]["hmac"] == "✔ rejected (wrong audience)"
    # The plain server checks its claims too; a client rewrites them (lesson 02), so 02a's
    # scoreboard leaves it out.
    assert rows["two hours later (2c)"]["plain"] == "✔ rejected (expired)"
    assert all(cell[0] in "✔✘" for row in board.rows for cell in row[1:])


def test_scoreboard_follows_the_servers_it_is_given():
    """Not a fixed table: an AEAD server that binds no claims shows the replays working."""
    servers = {
        "weak aead": {"codec": "aead", "checks": StateChecks.integrity_only()},
        "aead": {"codec": "aead"},
    }
    chosen = {k: attacks.ATTACKS_02A[k] for k in ("two hours later (2c)",)}
    board = asyncio.run(toolkit.scoreboard(servers, chosen))
    assert board.rows == [["two hours later (2c)", "✘ paid $124.50", "✔ rejected (expired)"]]


def test_citations_say_what_the_rule_says(notebook):
    """Each replay names the rule that stops it with its level: the principal MRTR-S5a, the
    request MRTR-S5c, the expiry MRTR-S5b (SHOULD); the audience claim and the 15 minutes are
    the kit's (KIT); integrity still does not mean single use (MRTR-S5d MUST)."""
    text = flat("\n".join(c.source for c in notebook.cells if c.cell_type == "markdown"))
    for rule in ("MRTR-S5a SHOULD", "MRTR-S5b SHOULD", "MRTR-S5c SHOULD", "MRTR-S5d MUST"):
        assert rule in text, rule
    assert "the 15 minutes are the kit's choice (KIT)" in text
    assert "another server issued it (KIT)" in text
    assert "SEC-2" not in text and "MRTR-S8" not in text


# --- the quiz, once 02.5 -------------------------------------------------------------------------


def test_m3_quiz_02a_2_q2_retry_carries_meta_so_its_one_bug_is_the_argument():
    """Pedagogy review M3 (quiz 02.5 before the split). CORE-10/CORE-11: a retry without
    ``_meta`` is itself invalid, so the spot-the-bug retry must carry one; its only bug is
    A-1002 (MRTR-S5c)."""
    assert "02.5" not in QUIZZES
    [question] = [q for q in QUIZZES["02a.2"].questions if q.code == lesson02a_quiz.REPLAY_RETRY]
    assert '"_meta"' in question.code
    assert "MRTR-S5c" in question.options[question.answer].why
