"""Lesson 02 (securing requestState): the solutions pass their checkpoints, the stubs and
typical wrong answers do not, the lab shows each attack working against the weak server and
failing against the hardened one, and the notebook keeps the lesson conventions (DESIGN §4).

The notebook itself runs under nbval strict with ``python3 tools/kit.py test``.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import itertools
import json
import re
import runpy
from pathlib import Path

import nbformat
import pytest
from lesson_files import LESSONS

from mrtr_kit.lessons import security
from mrtr_kit.server.keyring import KeyRing
from mrtr_kit.server.state import StateChecks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = LESSONS / "02-securing-request-state.ipynb"
SOLUTIONS = LESSONS / "solutions"


def solution(name: str, function: str):
    return runpy.run_path(str(SOLUTIONS / f"02_{name}.py"))[function]


def stub(*args):
    raise NotImplementedError("your code here")


# --- exercises: solutions pass, stubs are "not done", wrong answers are "not yet" ----------------


def test_exercise_1_solution_forges_the_admin_flag():
    check = asyncio.run(security.check_forge_admin(solution("forge_admin", "forge_admin")))
    assert check.passed, check
    assert "alice, bob, mallory" in check.message


def test_exercise_2_solution_peeks_at_every_claim():
    check = security.check_peek(solution("peek", "peek"))
    assert check.passed, check
    assert "2 refunds in 90 days" in check.message


def test_exercise_3_solution_rotates_without_rejecting_anything():
    check = security.check_rotation_plan(solution("rotation_plan", "rotation_plan"))
    assert check.passed, check
    assert repr(check).startswith("✔ Passed: 3 steps")


def test_stubs_are_reported_as_not_done_without_raising():
    """The notebook's stub cells must run: the checkpoint reports, it does not raise."""
    checks = [
        asyncio.run(security.check_forge_admin(stub)),
        security.check_peek(stub),
        security.check_rotation_plan(stub),
    ]
    for check in checks:
        assert check.status == "not done" and not check.passed
        assert repr(check).startswith("… Not done yet:") and "NotImplementedError" in check.message


def untouched(token: str) -> str:
    return token


def admin_in_the_wrong_place(token: str) -> str:
    fmt, payload = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["admin"] = True  # top level, not in data: the handler never looks there
    return f"{fmt}.{base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip('=')}"


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (untouched, "only mallory's orders"),
        (admin_in_the_wrong_place, "only mallory's orders"),
        (lambda token: token + "x", "did not accept it"),
        (lambda token: None, "not str"),
        (lambda token: token.split(".")[5], "IndexError"),
    ],
)
def test_exercise_1_wrong_answers_are_not_yet(wrong, says):
    check = asyncio.run(security.check_forge_admin(wrong))
    assert check.status == "not yet" and says in check.message, check


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (lambda token: security.read_payload(token)["data"], "only the data claim"),
        (lambda token: {}, "not the token's claims"),
        (lambda token: json.loads(token), "JSONDecodeError"),
    ],
)
def test_exercise_2_wrong_answers_are_not_yet(wrong, says):
    check = security.check_peek(wrong)
    assert check.status == "not yet" and says in check.message, check


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
    check = security.check_rotation_plan(plan)
    assert check.status == "not yet" and says in check.message, check


# --- the lab: each attack works on the weak server and fails on the hardened one -----------------


def test_forgery_pays_on_plain_and_is_rejected_on_hmac_and_aead():
    async def attack(codec: str) -> tuple[str, int]:
        lab = security.RefundLab.build(codec)
        approval = await lab.approval("alice", "A-1001")
        if codec == "aead":
            with pytest.raises(ValueError, match="encrypted"):
                security.tamper(approval, approved_cents=1)
            fields = approval.split(".")  # edit the ciphertext blind instead
            fields[3] = fields[3][:-2] + ("AA" if fields[3][-2:] != "AA" else "BA")
            forged = ".".join(fields)
        else:
            forged = security.tamper(approval, approved_cents=99_999_00)
        answer = await lab.redeem("alice", "A-1001", forged)
        await lab.aclose()
        return str(answer), lab.desk.paid_cents

    plain = asyncio.run(attack("plain"))
    assert plain == (
        "complete: Refunded $99,999.00 to alice for order A-1001 (payout P-0001).",
        99_999_00,
    )
    for codec in ("hmac", "aead"):
        assert asyncio.run(attack(codec)) == ("error -32602 Invalid requestState", 0)


@pytest.mark.parametrize("attack", ["user", "request", "expiry", "audience"])
def test_each_replay_works_on_the_weak_server_and_fails_on_the_hardened_one(attack):
    async def replay(checks: StateChecks | None) -> tuple[security.ServerAnswer, list[str]]:
        lab = security.RefundLab.build("hmac", checks=checks)
        source = lab
        if attack == "audience":
            source = security.RefundLab.build("hmac", keys=lab.keys, name="refunds-staging")
        approval = await source.approval("alice", "A-1001")
        user, order = {"user": ("mallory", "A-1001"), "request": ("alice", "A-1002")}.get(
            attack, ("alice", "A-1001")
        )
        if attack == "expiry":
            lab.clock.advance(2 * 3600)
        with security.server_log() as log:
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


@pytest.mark.parametrize(("ledger", "paid"), [(None, 10), ("memory", 1), ("sqlite", 1)])
def test_concurrent_double_spend_with_and_without_a_ledger(ledger, paid):
    async def race() -> tuple[str, int]:
        lab = security.RefundLab.build("hmac", ledger=ledger)
        approval = await lab.approval("alice", "A-1001")
        answers = await asyncio.gather(
            *(lab.redeem("alice", "A-1001", approval) for _ in range(10))
        )
        await lab.aclose()
        return security.tally(answers), len(lab.desk.payouts)

    tally, payouts = asyncio.run(race())
    assert payouts == paid
    expected = "10 × paid" if paid == 10 else "9 × error -32602 Invalid requestState\n1 × paid"
    assert tally == expected


def test_server_log_collects_only_inside_the_block():
    async def scenario() -> tuple[list[str], list[str]]:
        lab = security.RefundLab.build("hmac")
        await lab.redeem("alice", "A-1001", "hmac1.k1.x.y")  # outside: not collected
        with security.server_log() as log:
            await lab.redeem("alice", "A-1001", "plain1.e30")
        after = list(log)
        await lab.redeem("alice", "A-1001", "nope")
        await lab.aclose()
        return after, log

    inside, later = asyncio.run(scenario())
    expected = "rejected requestState (tools/call 'request_refund', principal 'alice'): "
    assert inside == later == [expected + "not a hmac1 token"]


# --- the notebook keeps the lesson conventions -------------------------------------------------


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(NOTEBOOK, as_version=4)


MRTR_PAGE = "https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr"
SEP_2322 = "https://modelcontextprotocol.io/seps/2322-MRTR"
SPEC_MAP_LINE = (
    "Rule IDs like `MRTR-S4a` are explained in\n[docs/spec-map.md](../docs/spec-map.md); IDs "
    "tagged (KIT) are this kit's own conventions, not the\nspecification's."
)
SOLUTION_SENTENCE = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)
EXERCISES = [
    ("forge_admin", "await security.check_forge_admin(forge_admin)"),
    ("peek", "security.check_peek(peek)"),
    ("rotation_plan", "security.check_rotation_plan(rotation_plan)"),
]


def flat(text: str) -> str:
    """Markdown with its line breaks folded, so a test does not depend on where lines wrap."""
    return " ".join(text.split())


def test_notebook_opens_with_objectives_needs_time_spec_links_and_a_sequence_diagram(notebook):
    """The header of every lesson (LESSONS.md): learner's time and teaching time apart, the
    spec page and SEP-2322 linked, the spec map explained, the round trips drawn."""
    first = notebook.cells[0]
    assert first.cell_type == "markdown"
    text = flat(first.source)
    for part in (
        "What you will learn",
        "What you need",
        "**How long:** About 40 minutes to read and try, plus about 30 minutes for the "
        "exercises. Teaching it: about 50 minutes",
        f"({MRTR_PAGE})",
        f"({SEP_2322})",
        flat(SPEC_MAP_LINE),
        "```mermaid",
        "sequenceDiagram",
    ):
        assert part in text, part
    assert "to teach" not in text  # the old instructor-only time line


def test_notebook_closes_with_key_points_practice_the_cheatsheet_and_the_next_lesson(notebook):
    last = notebook.cells[-1].source
    for part in (
        "## Key points",
        "## In practice",
        "[docs/cheatsheet.md](../docs/cheatsheet.md)",
        "(03-migrating-from-server-requests.ipynb)",
    ):
        assert part in last, part
    assert last.index("## Key points") < last.index("## In practice") < last.index("cheatsheet")


def test_every_code_cell_is_led_in_by_markdown_and_errors_are_tagged(notebook):
    cells = notebook.cells
    for before, cell in itertools.pairwise(cells):
        if cell.cell_type == "code":
            assert before.cell_type == "markdown", cell.source[:60]
            failing = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
            tagged = "raises-exception" in cell.metadata.get("tags", [])
            assert failing == tagged, cell.source[:60]
            if tagged:
                assert "meant to" in before.source and "fail" in before.source
    assert sum("raises-exception" in c.metadata.get("tags", []) for c in cells) == 1


def test_notebook_is_stored_with_outputs(notebook):
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    silent = [c.source.splitlines()[0] for c in code if not c.outputs]
    assert silent == ["import asyncio"] + [f"# %load solutions/02_{n}.py" for n, _ in EXERCISES]


def test_each_exercise_has_the_one_layout_heading_stub_hint_and_checkpoint_cell(notebook):
    """LESSONS.md: heading with minutes; the stub, whose first line is the commented-out
    ``%load``; the hint and the solution sentence word for word; the checkpoint alone in the
    next cell. The old layout kept the checkpoint in the stub's cell, so re-running the cell
    after loading the solution brought the stub back (issue 9, item 10)."""
    cells = notebook.cells
    for number, (name, check) in enumerate(EXERCISES, 1):
        [i] = [
            k for k, c in enumerate(cells) if c.source.startswith(f"# %load solutions/02_{name}")
        ]
        heading, stub, hint, checkpoint = cells[i - 1], cells[i], cells[i + 1], cells[i + 2]
        assert heading.cell_type == "markdown"
        assert re.match(rf"### Exercise {number} · [^\n]+ \(\d+ min\)\n", heading.source)
        assert stub.source.splitlines()[0] == f"# %load solutions/02_{name}.py"
        assert (SOLUTIONS / f"02_{name}.py").exists()
        assert f"def {name}(" in stub.source and "raise NotImplementedError" in stub.source
        assert "check_" not in stub.source
        assert hint.cell_type == "markdown"
        assert hint.source.startswith("<details><summary>Hint</summary>")
        assert hint.source.rstrip().endswith(SOLUTION_SENTENCE)
        assert checkpoint.cell_type == "code" and checkpoint.source == check
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    assert text.count(SOLUTION_SENTENCE) == 4  # once per exercise, once in the introduction
    assert text.count("<summary>Hint</summary>") == 3


def run_cell(source: str, namespace: dict) -> object:
    """Run one notebook cell's code as IPython would (top-level await allowed), and return
    the value of its last expression."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

    async def go():
        body = compile(tree, "<cell>", "exec", flags=flags)
        pending = eval(body, namespace)
        if asyncio.iscoroutine(pending):
            await pending
        if last is None:
            return None
        value = eval(compile(ast.Expression(last.value), "<cell>", "eval", flags=flags), namespace)
        return await value if asyncio.iscoroutine(value) else value

    return asyncio.run(go())


@pytest.mark.parametrize(("name", "check"), EXERCISES)
def test_following_the_solution_sentence_passes_the_checkpoint(notebook, name, check):
    """Do what the sentence says: run the stub cell, then %load (which replaces the cell with
    '# %load path' and the file), run it again, then the checkpoint cell below it."""
    cells = notebook.cells
    [i] = [k for k, c in enumerate(cells) if c.source.startswith(f"# %load solutions/02_{name}")]
    namespace: dict = {}
    run_cell(
        "\n".join(
            c.source
            for c in cells[:i]
            if c.cell_type == "code" and "await" not in c.source and "import" in c.source
        ),
        namespace,
    )
    run_cell(cells[i].source, namespace)
    assert not run_cell(cells[i + 2].source, namespace).passed  # the stub: not done yet
    path = cells[i].source.splitlines()[0].removeprefix("# %load ")
    loaded = f"# %load {path}\n" + (NOTEBOOK.parent / path).read_text()
    run_cell(loaded, namespace)
    verdict = run_cell(cells[i + 2].source, namespace)
    assert verdict.passed, verdict


def test_no_cell_holds_logic_the_kit_does_not(notebook):
    """DESIGN §2: cells call mrtr_kit; the only functions defined in cells are the stubs."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            defined = re.findall(r"^(?:async )?def (\w+)", cell.source, flags=re.M)
            assert set(defined) <= {"forge_admin", "peek", "rotation_plan"}, defined
            assert "class " not in cell.source


# --- section 7: what the lesson prints about "once" is true ---------------------------------------


def outputs_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


def test_every_race_starts_on_a_fresh_server_so_its_totals_count_only_itself(notebook):
    """Issue 9, item 13: the ten-at-once cell printed "1 × paid" above "2 payout(s)", because
    the total included an earlier cell's payout. Each race now builds its own server, and the
    payouts it prints are the ones its tally says it paid."""
    races = [c for c in notebook.cells if c.cell_type == "code" and "asyncio.gather" in c.source]
    assert len(races) == 3
    for cell in races:
        assert cell.source.startswith("lab = security.RefundLab.build("), cell.source
        out = outputs_of(cell)
        paid = sum(int(n) for n in re.findall(r"^(\d+) × paid$", out, flags=re.M))
        assert re.search(rf"^{paid} payout\(s\)", out, flags=re.M), out


def test_the_lesson_shows_the_ledger_paying_a_second_approval_then_the_fix(notebook):
    """Issue 9, item 1: the ledger stops one state being spent twice, not a second approval;
    the idempotency key on the order makes it one refund per order."""
    text = flat("\n".join(c.source for c in notebook.cells if c.cell_type == "markdown"))
    assert "exactly once (MRTR-S5d)" not in text and "pays it exactly once" not in text
    assert 'Single use is not "one refund per order"' in text
    code = {c.source.splitlines()[0]: outputs_of(c) for c in notebook.cells if c.get("outputs")}
    second = code['second = await lab.approval("alice", "A-1001")']
    assert "(payout P-0002)" in second and "2 payout(s), $249.00 in total" in second
    fixed = code['lab = security.RefundLab.build("hmac", ledger="sqlite", one_per_order=True)']
    assert "9 × complete: Order A-1001 was refunded already" in fixed
    assert "1 × paid" in fixed and "1 payout(s), $124.50 in total" in fixed


def test_the_lesson_compares_single_use_and_idempotent_on_a_lost_response(notebook):
    [cell] = [c for c in notebook.cells if "lose_the_final_response" in c.source]
    out = outputs_of(cell)
    assert out.count("bookings made: 1") == 2
    assert "the same request again:   error -32602 Invalid requestState" in out
    assert "the same request again:   complete: Booked Luigi's" in out


def test_mrtr_s4b_is_taught_where_plain_state_is_forged(notebook):
    cells = notebook.cells
    forge = next(i for i, c in enumerate(cells) if "security.tamper(approval" in c.source)
    after = flat(cells[forge + 1].source)
    assert "MRTR-S4b" in after and "nothing worse than the request failing" in after


def test_citations_say_what_the_rule_says(notebook):
    """Issue 9, item 4: the uniform rejection error is the kit's convention, not SEC-2; moving
    between instances is statelessness (CORE-8/9), not MRTR-S8 (which is about the client not
    answering)."""
    text = flat("\n".join(c.source for c in notebook.cells if c.cell_type == "markdown"))
    assert "SEC-2" not in text and "MRTR-S8" not in text and "SEC-4" not in text
    for sentence in re.split(r"(?<=[.:])\s", text):
        if "same error" in sentence or "One answer on the wire" in sentence:
            nxt = text[text.index(sentence) : text.index(sentence) + 400]
            assert "(KIT)" in nxt, sentence
    assert "(CORE-8)" in text and "(CORE-9)" in text


# --- the lab helpers behind section 7 ----------------------------------------------------------


def test_lab_with_one_refund_per_order_pays_once_for_ten_approvals_at_once():
    async def race() -> tuple[str, int]:
        lab = security.RefundLab.build("hmac", ledger="memory", one_per_order=True)
        approvals = [await lab.approval("alice", "A-1001") for _ in range(10)]
        answers = await asyncio.gather(*(lab.redeem("alice", "A-1001", a) for a in approvals))
        await lab.aclose()
        return security.tally(answers), len(lab.desk.payouts)

    tally, payouts = asyncio.run(race())
    assert payouts == 1
    assert tally.splitlines() == [
        "9 × complete: Order A-1001 was refunded already ($124.50, payout P-0001). "
        "Nothing more was paid.",
        "1 × paid",
    ]


def test_lab_ledger_alone_pays_a_second_approval_mrtr_s5d():
    async def twice() -> int:
        lab = security.RefundLab.build("hmac", ledger="memory")
        for _ in range(2):
            assert (await lab.redeem("alice", "A-1001", await lab.approval("alice", "A-1001"))).ok
        await lab.aclose()
        return len(lab.desk.payouts)

    assert asyncio.run(twice()) == 2


def test_lose_the_final_response_single_use_refuses_idempotent_answers_again():
    single = asyncio.run(security.lose_the_final_response("single use"))
    idem = asyncio.run(security.lose_the_final_response("idempotent"))
    booked = "complete: Booked Luigi's for 4 on 2026-09-01 (reference BK-0001)."
    assert str(single.first) == str(idem.first) == booked
    assert str(single.again) == "error -32602 Invalid requestState"
    assert str(idem.again) == booked
    assert single.bookings == idem.bookings == 1
    with pytest.raises(ValueError):
        asyncio.run(security.lose_the_final_response("both"))
