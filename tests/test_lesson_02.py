"""Lesson 02 (securing requestState): the solutions pass their checkpoints, the stubs and
typical wrong answers do not, the lab shows each attack working against the weak server and
failing against the hardened one, and the notebook keeps the lesson conventions (DESIGN §4).

The notebook itself runs under nbval strict with ``python3 tools/kit.py test``.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
import runpy
from pathlib import Path

import nbformat
import pytest

from mrtr_kit.lessons import security
from mrtr_kit.server.keyring import KeyRing
from mrtr_kit.server.state import StateChecks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "02-securing-request-state.ipynb"
SOLUTIONS = ROOT / "notebooks" / "solutions"


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
    expected = "10 × paid" if paid == 10 else "9 × error -32602 Invalid requestState, 1 × paid"
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


def test_notebook_opens_with_objectives_needs_time_and_a_sequence_diagram(notebook):
    first = notebook.cells[0]
    assert first.cell_type == "markdown"
    for part in ("What you will learn", "What you need", "Time:", "```mermaid", "sequenceDiagram"):
        assert part in first.source, part


def test_notebook_closes_with_key_points_practice_and_the_next_lesson(notebook):
    tail = "\n".join(c.source for c in notebook.cells[-3:] if c.cell_type == "markdown")
    for part in ("## Key points", "## In practice", "03-migrating-from-server-requests.ipynb"):
        assert part in tail, part


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
    assert sum(bool(c.outputs) for c in code) >= len(code) - 2


def test_each_exercise_has_a_stub_a_hint_a_solution_and_a_checkpoint(notebook):
    text = "\n".join(c.source for c in notebook.cells)
    for name, check in [
        ("forge_admin", "check_forge_admin"),
        ("peek", "check_peek"),
        ("rotation_plan", "check_rotation_plan"),
    ]:
        assert (SOLUTIONS / f"02_{name}.py").exists()
        assert f"%load solutions/02_{name}.py" in text
        stub_cells = [c for c in notebook.cells if f"def {name}(" in c.source]
        assert len(stub_cells) == 1 and "raise NotImplementedError" in stub_cells[0].source
        assert f"security.{check}({name})" in stub_cells[0].source
    assert text.count("<summary>Hint</summary>") == 3


def test_no_cell_holds_logic_the_kit_does_not(notebook):
    """DESIGN §2: cells call mrtr_kit; the only functions defined in cells are the stubs."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            defined = re.findall(r"^(?:async )?def (\w+)", cell.source, flags=re.M)
            assert set(defined) <= {"forge_admin", "peek", "rotation_plan"}, defined
            assert "class " not in cell.source
