"""Lesson 02 (securing requestState): the solutions pass their checkpoints, the stubs and
typical wrong answers do not, the lab shows each attack working against the weak server and
failing against the hardened one, and the notebook keeps the lesson conventions
(docs/architecture.md §4). The replays and the claim checks (once 02's section 5) are lesson
02a's: tests/course/test_lesson_02a.py.

The notebook itself runs under nbval strict with ``python3 tools/kit.py test``.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import binascii
import hashlib
import hmac
import itertools
import json
import re
import runpy
from hmac import compare_digest
from pathlib import Path

import lesson02_attacks as attacks
import lesson02_checkpoints as checkpoints
import nbformat
import pytest

import mrtr_course.refund_lab.views as views
from mrtr_course.examples.refunds import Payout
from mrtr_course.refund_lab import attacks as toolkit
from mrtr_course.refund_lab.lab import YES, RefundLab, server_log
from mrtr_kit.server.codecs import MAX_TOKEN_BYTES, InvalidState
from tests.lesson_files import LESSONS, follow_the_solution_sentence

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = LESSONS / "02-securing-request-state" / "02-securing-request-state.ipynb"
SOLUTIONS = NOTEBOOK.parent / "solutions"


def solution(name: str, function: str):
    """A solution of lesson 02 (solutions/02_name.py, beside the notebook)."""
    return runpy.run_path(str(SOLUTIONS / f"02_{name}.py"))[function]


def stub(*args):
    raise NotImplementedError("your code here")


# --- exercises: solutions pass, stubs are "not done", wrong answers are "not yet" ----------------


def test_exercise_1_solution_forges_the_admin_flag():
    check = asyncio.run(checkpoints.check_forge_admin(solution("forge_admin", "forge_admin")))
    assert check.passed, check
    assert "alice, bob, mallory" in check.message


def test_exercise_2_solution_unseals_and_stops_every_attack_in_a_real_server():
    """MRTR-S4a: the learner's unseal, inside a kit server, rejects every state that fails
    verification; constant-time comparison is the kit's rule (KIT, SEC-2)."""
    check = asyncio.run(checkpoints.check_unseal(solution("unseal", "unseal")))
    assert check.passed, check
    lines = check.message.splitlines()
    assert lines[0] == "your unseal, inside a real kit server, stopped every attack on the tag:"
    assert "  ✔ alice's genuine state: paid $124.50, as it must" in lines
    assert "  ✔ a state whose amount was edited (tag kept): rejected (bad tag)" in lines
    assert "  ✔ an edited state with a 1-byte tag: all 256 guesses rejected" in lines
    assert "  ✔ timing: tags compared with hmac.compare_digest (a spy saw the call)" in lines
    assert any(line.startswith("  · alice's genuine state, a second time: paid") for line in lines)
    assert any("ledger's job (lesson 02b)" in line for line in lines)


def test_stubs_are_reported_as_not_done_without_raising():
    """The notebook's stub cells must run: the checkpoint reports, it does not raise."""
    checks = [
        asyncio.run(checkpoints.check_forge_admin(stub)),
        asyncio.run(checkpoints.check_unseal(stub)),
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
    check = asyncio.run(checkpoints.check_forge_admin(wrong))
    assert check.status == "not yet" and says in check.message, check


# Plausible wrong unseals. Each is the solution with one mistake; the helpers are right.


def _b64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _tag(key, fmt, kid, payload):
    return hmac.new(key, f"{fmt}.{kid}.{payload}".encode(), hashlib.sha256).digest()


def _fields(token):
    if len(token) > MAX_TOKEN_BYTES:
        raise InvalidState("oversized")
    fields = token.split(".")
    if len(fields) != 4 or fields[0] != "hmac1":
        raise InvalidState("format")
    return fields


def _tag_of(text):
    try:
        return _b64(text)
    except (binascii.Error, ValueError):
        raise InvalidState("tag") from None


def no_tag_check(token, key):
    payload = _fields(token)[2]
    return json.loads(_b64(payload))


def tags_compared_with_equals(token, key):
    fmt, kid, payload, tag = _fields(token)
    if _tag_of(tag) != _tag(key, fmt, kid, payload):
        raise InvalidState("bad tag")
    return json.loads(_b64(payload))


def decodes_before_the_tag(token, key):
    fmt, kid, payload, tag = _fields(token)
    claims = json.loads(_b64(payload))
    if not hmac.compare_digest(_tag_of(tag), _tag(key, fmt, kid, payload)):
        raise InvalidState("bad tag")
    return claims


def accepts_a_truncated_tag(token, key):
    fmt, kid, payload, tag = _fields(token)
    expected, got = _tag(key, fmt, kid, payload), _tag_of(tag)
    if not hmac.compare_digest(expected[: len(got)], got):
        raise InvalidState("bad tag")
    return json.loads(_b64(payload))


def accepts_a_tag_prefix(token, key):
    fmt, kid, payload, tag = _fields(token)
    if not _tag(key, fmt, kid, payload).startswith(_tag_of(tag)):
        raise InvalidState("bad tag")
    return json.loads(_b64(payload))


def no_size_cap(token, key):
    fields = token.split(".")
    if len(fields) != 4 or fields[0] != "hmac1":
        raise InvalidState("format")
    fmt, kid, payload, tag = fields
    if not hmac.compare_digest(_tag_of(tag), _tag(key, fmt, kid, payload)):
        raise InvalidState("bad tag")
    return json.loads(_b64(payload))


def size_cap_after_the_tag(token, key):
    fields = token.split(".")
    if len(fields) != 4 or fields[0] != "hmac1":
        raise InvalidState("format")
    fmt, kid, payload, tag = fields
    if not hmac.compare_digest(_tag_of(tag), _tag(key, fmt, kid, payload)):
        raise InvalidState("bad tag")
    if len(token) > MAX_TOKEN_BYTES:
        raise InvalidState("oversized")
    return json.loads(_b64(payload))


def unpacks_without_checking_the_format(token, key):
    if len(token) > MAX_TOKEN_BYTES:
        raise InvalidState("oversized")
    fmt, kid, payload, tag = token.split(".")
    if not hmac.compare_digest(_tag_of(tag), _tag(key, fmt, kid, payload)):
        raise InvalidState("bad tag")
    return json.loads(_b64(payload))


def tag_not_decoded_safely(token, key):
    fmt, kid, payload, tag = _fields(token)
    if not hmac.compare_digest(_b64(tag), _tag(key, fmt, kid, payload)):
        raise InvalidState("bad tag")
    return json.loads(_b64(payload))


def returns_only_the_data(token, key):
    fmt, kid, payload, tag = _fields(token)
    if not hmac.compare_digest(_tag_of(tag), _tag(key, fmt, kid, payload)):
        raise InvalidState("bad tag")
    return json.loads(_b64(payload))["data"]


def refuses_everything(token, key):
    raise InvalidState("no")


@pytest.mark.parametrize(
    ("wrong", "says"),
    [
        (
            no_tag_check,
            "accepted a state whose amount was edited (tag kept), and the server paid $99,999.00",
        ),
        (
            tags_compared_with_equals,
            "without calling hmac.compare_digest (a spy on it saw no call)",
        ),
        (
            decodes_before_the_tag,
            "ran base64.urlsafe_b64decode of the payload before it checked the tag (a spy saw it)",
        ),
        (accepts_a_truncated_tag, "accepted an edited state with its tag cut off (empty tag)"),
        (accepts_a_tag_prefix, "accepted an edited state with its tag cut off (empty tag)"),
        (no_size_cap, "accepted a genuine state of 22,"),
        (
            size_cap_after_the_tag,
            "but only after hmac.compare_digest (a spy saw it): check the size first",
        ),
        (
            unpacks_without_checking_the_format,
            "an edited plain1 state (a downgrade) made your unseal raise ValueError",
        ),
        (tag_not_decoded_safely, "a 1-character tag made your unseal raise Error"),
        (returns_only_the_data, "return the token's claims, the whole decoded payload"),
        (refuses_everything, "refused alice's genuine state (no): it must accept it"),
    ],
)
def test_exercise_2_wrong_unseals_are_not_yet_with_the_mistake_named(wrong, says):
    """MRTR-S4a (a state that fails verification is rejected) and the kit's SEC-2 rule (KIT:
    tags compared in constant time): each plausible mistake gets its own message."""
    check = asyncio.run(checkpoints.check_unseal(wrong))
    assert check.status == "not yet" and says in check.message, check


def compares_by_an_imported_name(token, key):
    fmt, kid, payload, tag = _fields(token)
    if not compare_digest(_tag_of(tag), _tag(key, fmt, kid, payload)):
        raise InvalidState("bad tag")
    return json.loads(_b64(payload))


def test_exercise_2_spies_see_imported_names_and_are_removed_afterwards():
    """An unseal that did ``from hmac import compare_digest`` is watched too (the spy replaces
    the name in its module for the checkpoint); afterwards every original is back."""
    originals = (hmac.compare_digest, json.loads, base64.urlsafe_b64decode, base64.b64decode)
    check = asyncio.run(checkpoints.check_unseal(compares_by_an_imported_name))
    assert check.passed, check
    after = (hmac.compare_digest, json.loads, base64.urlsafe_b64decode, base64.b64decode)
    assert after == originals
    assert compare_digest is hmac.compare_digest  # this module's name is restored too


# --- the lab: each attack works on the weak server and fails on the hardened one -----------------


def test_forgery_pays_on_plain_and_is_rejected_on_hmac_and_aead():
    async def attack(codec: str) -> tuple[str, int]:
        lab = RefundLab.build(codec)
        approval = await lab.approval("alice", "A-1001")
        if codec == "aead":
            with pytest.raises(ValueError, match="encrypted"):
                toolkit.tamper(approval, approved_cents=1)
            fields = approval.split(".")  # edit the ciphertext blind instead
            fields[3] = fields[3][:-2] + ("AA" if fields[3][-2:] != "AA" else "BA")
            forged = ".".join(fields)
        else:
            forged = toolkit.tamper(approval, approved_cents=99_999_00)
        answer = await lab.redeem("alice", "A-1001", forged)
        paid = await lab.desk.paid_cents()
        await lab.aclose()
        return str(answer), paid

    plain = asyncio.run(attack("plain"))
    assert plain == (
        "complete: Refunded $99,999.00 to alice for order A-1001 (payout P-0001).",
        99_999_00,
    )
    for codec in ("hmac", "aead"):
        assert asyncio.run(attack(codec)) == ("error -32602 Invalid requestState", 0)


@pytest.mark.parametrize(("ledger", "paid"), [(None, 10), ("memory", 1), ("sqlite", 1)])
def test_concurrent_double_spend_with_and_without_a_ledger(ledger, paid):
    async def race() -> tuple[str, int]:
        lab = RefundLab.build("hmac", ledger=ledger)
        approval = await lab.approval("alice", "A-1001")
        answers = await asyncio.gather(
            *(lab.redeem("alice", "A-1001", approval) for _ in range(10))
        )
        payouts = await lab.desk.payouts()
        await lab.aclose()
        return views.tally(answers), len(payouts)

    tally, payouts = asyncio.run(race())
    assert payouts == paid
    expected = "10 × paid" if paid == 10 else "9 × error -32602 Invalid requestState\n1 × paid"
    assert tally == expected


def test_server_log_collects_only_inside_the_block():
    async def scenario() -> tuple[list[str], list[str]]:
        lab = RefundLab.build("hmac")
        await lab.redeem("alice", "A-1001", "hmac1.k1.x.y")  # outside: not collected
        with server_log() as log:
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
    "Rule IDs like `MRTR-S4a` are explained in\n[docs/spec-map.md](../../docs/spec-map.md); IDs "
    "tagged (KIT) are this kit's own conventions, not the\nspecification's."
)
SOLUTION_SENTENCE = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)
EXERCISES = [
    ("forge_admin", "await check_forge_admin(forge_admin)"),
    ("unseal", "await check_unseal(unseal)"),
]


def flat(text: str) -> str:
    """Markdown with its line breaks folded, so a test does not depend on where lines wrap."""
    return " ".join(text.split())


def test_notebook_opens_with_objectives_needs_time_spec_links_and_a_sequence_diagram(notebook):
    """The header of every lesson (LESSONS.md): learner's time and teaching time apart (their
    figures are the model's: test_lesson_sizes.py), the spec page and SEP-2322 linked, the spec
    map explained, the round trips drawn."""
    first = notebook.cells[0]
    assert first.cell_type == "markdown"
    text = flat(first.source)
    for part in (
        "What you will learn",
        "What you need",
        "**How long**: About ",
        "**Teaching it**: about ",
        "These times are estimates until a workshop has timed them.",
        f"({MRTR_PAGE})",
        f"({SEP_2322})",
        flat(SPEC_MAP_LINE),
        "```mermaid",
        "sequenceDiagram",
    ):
        assert part in text, part
    assert "to teach" not in text  # the old instructor-only time line
    assert "rotate" not in text and "single-use" not in text  # lesson 02b's


def test_notebook_closes_with_key_points_practice_the_cheatsheet_and_the_next_lesson(notebook):
    last = notebook.cells[-1].source
    for part in (
        "## Key points",
        "## In practice",
        "[docs/cheatsheet.md](../../docs/cheatsheet.md)",
        "**Next:** [02a · Integrity is not enough: replays](../02a-replays/02a-replays.ipynb)",
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
    # show_claims on an encrypted state says why in one line: no cell is meant to fail now.
    assert sum("raises-exception" in c.metadata.get("tags", []) for c in cells) == 0


def test_notebook_is_stored_with_outputs(notebook):
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)
    silent = [c.source.splitlines()[0] for c in code if not c.outputs]
    assert silent == ["from lesson02_attacks import ATTACKS_02, SERVERS_02"] + [
        f"# %load solutions/02_{n}.py" for n, _ in EXERCISES
    ]


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
    assert text.count(SOLUTION_SENTENCE) == 2  # once per exercise, in its hint
    assert text.count("<summary>Hint</summary>") == 2


@pytest.mark.parametrize(("name", "check"), EXERCISES)
def test_following_the_solution_sentence_passes_the_checkpoint(notebook, name, check):
    """Do what the sentence says: run the stub cell, then %load (which replaces the cell with
    '# %load path' and the file), run it again, then the checkpoint cell below it."""
    cells = notebook.cells
    load = f"# %load solutions/02_{name}"
    stub = next(k for k, c in enumerate(cells) if c.source.startswith(load))
    setup = "\n".join(  # the imports of the cells above it
        c.source
        for c in cells[:stub]
        if c.cell_type == "code" and "await" not in c.source and "import" in c.source
    )
    verdict = follow_the_solution_sentence(NOTEBOOK.parent, cells, load, setup)
    assert verdict.passed, verdict


def test_no_cell_holds_logic_the_kit_does_not(notebook):
    """docs/architecture.md §2: cells call mrtr_kit; the only functions defined in cells are the
    stubs."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            defined = re.findall(r"^(?:async )?def (\w+)", cell.source, flags=re.M)
            assert set(defined) <= {"forge_admin", "unseal"}, defined
            assert "class " not in cell.source


def outputs_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


def test_mrtr_s4b_is_taught_where_plain_state_is_forged(notebook):
    cells = notebook.cells
    forge = next(i for i, c in enumerate(cells) if "tamper(approval" in c.source)
    after = flat(cells[forge + 1].source)
    assert "MRTR-S4b" in after and "can at worst make the request fail" in after


def test_citations_say_what_the_rule_says(notebook):
    """Issue 9, item 4: the uniform rejection error is the kit's convention, not SEC-2; moving
    between instances is statelessness (CORE-8/9), not MRTR-S8 (which is about the client not
    answering): lesson 02b checks CORE-8/9. SEC-2 appears only for what it does say: tags
    compared in constant time (the pedagogy review's M5)."""
    text = flat("\n".join(c.source for c in notebook.cells if c.cell_type == "markdown"))
    assert "MRTR-S8" not in text and "SEC-4" not in text
    for sentence in re.split(r"(?<=[.:;])\s", text):
        if "SEC-2" in sentence:
            assert "constant time" in sentence, sentence
    for sentence in re.split(r"(?<=[.:])\s", text):
        if "same error" in sentence or "One answer on the wire" in sentence:
            nxt = text[text.index(sentence) : text.index(sentence) + 400]
            assert "(KIT)" in nxt, sentence


# --- the lab helpers behind section 7 ----------------------------------------------------------


def test_lab_with_one_refund_per_order_pays_once_for_ten_approvals_at_once():
    async def race() -> tuple[str, int]:
        lab = RefundLab.build("hmac", ledger="memory", one_per_order=True)
        approvals = [await lab.approval("alice", "A-1001") for _ in range(10)]
        answers = await asyncio.gather(*(lab.redeem("alice", "A-1001", a) for a in approvals))
        payouts = await lab.desk.payouts()
        await lab.aclose()
        return views.tally(answers), len(payouts)

    tally, payouts = asyncio.run(race())
    assert payouts == 1
    assert tally.splitlines() == [
        "9 × complete: Order A-1001 was refunded already ($124.50, payout P-0001). "
        "Nothing more was paid.",
        "1 × paid",
    ]


def shop(shared: bool = True) -> tuple[RefundLab, RefundLab]:
    """Two instances of the refund server with one key ring, one refund per order on, and
    either one SQLite ledger file (``shared``: B opens A's file) or a file each."""
    a = RefundLab.build("hmac", ledger="sqlite", one_per_order=True, label="A")
    b = RefundLab.build(
        "hmac",
        keys=a.keys,
        ledger=a.ledger_file if shared else "sqlite",
        one_per_order=True,
        label="B",
    )
    assert a.desk is not b.desk and a.server.ledger is not b.server.ledger
    return a, b


async def race_on_two_instances(a, b, order="A-1001", n=10):
    """``n`` approvals of one order, all from A before any is paid, redeemed at the same
    instant, alternately on A and B. The tally, and the payouts each desk then reads."""
    approvals = [await a.approval("alice", order) for _ in range(n)]
    answers = await asyncio.gather(
        *(lab.redeem("alice", order, s) for lab, s in zip(itertools.cycle((a, b)), approvals))
    )
    seen = [await lab.desk.payouts() for lab in (a, b)]
    for lab in (a, b):
        await lab.aclose()
    return views.tally(answers), seen


def test_one_refund_per_order_holds_across_two_instances_sharing_a_ledger_file():
    """MRTR-S5d spends each approval once, on the fleet, but the second approval is a new
    state. One refund per order is the shop's rule, kept by ``pay_once``'s idempotency key in
    the ledger the instances share: the second approval, redeemed on B, finds A's payout. A
    desk that kept its payouts per instance would pay it again on B."""

    async def scenario():
        a, b = shop()
        first = await a.approval("alice", "A-1002")
        second = await a.approval("alice", "A-1002")
        on_a = await a.redeem("alice", "A-1002", first)
        on_b = await b.redeem("alice", "A-1002", second)
        again = await b.caller("alice").call_tool("request_refund", {"order_id": "A-1002"})
        seen = [await lab.desk.payouts() for lab in (a, b)]
        for lab in (a, b):
            await lab.aclose()
        return on_a, on_b, again, seen

    on_a, on_b, again, (by_a, by_b) = asyncio.run(scenario())
    assert str(on_a) == "complete: Refunded $19.90 to alice for order A-1002 (payout P-0001)."
    refunded = (
        "complete: Order A-1002 was refunded already ($19.90, payout P-0001). "
        "Nothing more was paid."
    )
    assert str(on_b) == str(again) == refunded  # round 2 on B, then round 1 on B
    assert by_a == by_b == [Payout("P-0001", "alice", "A-1002", 1990)]


def test_one_refund_per_order_holds_for_a_race_split_across_two_instances():
    """Ten approvals of one order redeemed at the same instant, half on A and half on B: the
    shared ledger records the order's key once (``record_once`` is atomic in the file), so
    exactly one pays, whichever instance it reaches; both desks read that one payout."""
    tally, (by_a, by_b) = asyncio.run(race_on_two_instances(*shop()))
    assert tally.splitlines() == [
        "9 × complete: Order A-1001 was refunded already ($124.50, payout P-0001). "
        "Nothing more was paid.",
        "1 × paid",
    ]
    assert by_a == by_b == [Payout("P-0001", "alice", "A-1001", 12450)]


def test_two_instances_with_a_ledger_file_each_pay_an_order_twice():
    """What section 7a says happens without the shared store: each instance checks the
    order's key in its own file, so each pays once, and both number their payout P-0001."""
    tally, (by_a, by_b) = asyncio.run(race_on_two_instances(*shop(shared=False)))
    assert tally.splitlines()[-1] == "2 × paid"
    assert by_a == [Payout("P-0001", "alice", "A-1001", 12450)] == by_b


def test_lab_ledger_file_is_only_a_sqlite_ledgers_and_must_exist(tmp_path):
    with pytest.raises(TypeError, match="MemoryLedger"):
        _ = RefundLab.build("hmac", ledger="memory").ledger_file
    with pytest.raises(FileNotFoundError):
        RefundLab.build("hmac", ledger=tmp_path / "typo.sqlite3")
    assert not (tmp_path / "typo.sqlite3").exists()


def test_lab_ledger_alone_pays_a_second_approval_mrtr_s5d():
    async def twice() -> int:
        lab = RefundLab.build("hmac", ledger="memory")
        for _ in range(2):
            assert (await lab.redeem("alice", "A-1001", await lab.approval("alice", "A-1001"))).ok
        payouts = await lab.desk.payouts()
        await lab.aclose()
        return len(payouts)

    assert asyncio.run(twice()) == 2


# --- the scoreboard: real runs, stored as HTML and text ----------------------------------------


def test_scoreboard_cells_are_real_outcomes():
    """Every cell comes from running the attack (MRTR-S4a): break a protection and its cells
    change. (Lesson 02a's replays and 02b's double spends, against the same servers:
    test_lesson_02a.py and test_lesson_02b.py.)"""
    board = asyncio.run(toolkit.scoreboard(toolkit.SERVERS, attacks.ATTACKS_02))
    rows = {row[0]: dict(zip(board.header[1:], row[1:], strict=True)) for row in board.rows}
    assert rows["edit the amount (section 2)"] == {
        "plain": "✘ paid $99,999.00",
        "hmac, tag only": "✔ rejected (bad tag)",
        "hmac": "✔ rejected (bad tag)",
        "aead": "✔ rejected (bad tag)",
        "aead + ledger + one per order": "✔ rejected (bad tag)",
    }
    assert rows["edit a plain1 state, send it here"]["hmac"] == "✔ rejected (not a hmac1 token)"
    assert rows["read the internal note (section 4)"]["aead"] == "✔ ciphertext only"
    assert all(cell[0] in "✔✘" for row in board.rows for cell in row[1:])


def stored(cell, mime):
    return "".join(o.get("data", {}).get(mime, "") for o in cell.get("outputs", []))


def test_notebook_stores_the_scoreboard_and_timeline_as_html_and_text_from_a_fresh_run(notebook):
    """GitHub shows text/html; the stored tables are what a fresh run gives (nothing random in
    them, nothing typed in)."""
    [board] = [c for c in notebook.cells if c.source == "await scoreboard(SERVERS_02, ATTACKS_02)"]
    fresh = asyncio.run(toolkit.scoreboard(attacks.SERVERS_02, attacks.ATTACKS_02))
    assert stored(board, "text/plain") == repr(fresh)
    assert stored(board, "text/html") == fresh._repr_html_()
    assert "02b" not in repr(fresh)  # the double spends are lesson 02b's table
    assert "tag only" not in repr(fresh)  # the weak server of the replays is lesson 02a's
    assert list(attacks.SERVERS_02) == ["plain", "hmac", "aead"]


def test_notebook_has_a_quiz_after_each_main_section_then_the_key_points(notebook):
    """Issue 19: a quiz after sections 2 (forgery) and 4 (HMAC and AEAD), each led in by a
    line of markdown (the replays' quiz is lesson 02a's); the lesson closes with the key
    points."""
    cells = notebook.cells
    quizzes = [k for k, c in enumerate(cells) if c.source.startswith("show_quiz(")]
    assert [cells[k].source for k in quizzes] == [
        'show_quiz("02.2")',
        'show_quiz("02.4")',
    ]
    headings = [k for k, c in enumerate(cells) if c.source.startswith("## ")]
    for k, key in zip(quizzes, ("## 3.", "## 5."), strict=True):
        assert "Self-check" in stored(cells[k], "text/html")
        assert cells[k - 1].source.startswith("**Self-check**")
        assert cells[next(h for h in headings if h > k)].source.startswith(key)
    assert cells[-1].source.startswith("## Key points")


# --- the attacks are code the learner opens, and the cells show them on the wire -----------------


def test_the_attacks_sit_beside_the_notebook_and_the_course_never_imports_them(notebook):
    """Issue "Library and course", item 2: the lesson's attack code is a file the learner opens
    from JupyterLab's file browser (beside the notebook, in its folder), and the arrow goes
    notebook -> course -> library: nothing in mrtr_kit, nor in the course package (which holds
    the attacks' toolkit, shared with lesson 02b), imports a lesson's files."""
    folder = NOTEBOOK.parent.resolve()
    assert Path(attacks.__file__).resolve() == folder / "lesson02_attacks.py"
    assert Path(checkpoints.__file__).resolve() == folder / "lesson02_checkpoints.py"
    course = ROOT / "course" / "mrtr_course"
    assert Path(toolkit.__file__).resolve() == course / "refund_lab" / "attacks.py"
    lesson_modules = {path.stem for path in LESSONS.glob("*/*.py")}
    assert {"lesson02_attacks", "lesson02_checkpoints", "lesson02b_attacks"} <= lesson_modules
    for path in [*(ROOT / "mrtr_kit").rglob("*.py"), *course.rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [
            name
            for node in ast.walk(tree)
            for name in (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
        ]
        assert not [n for n in imported if n.split(".")[0] in lesson_modules], path
    setup = flat(notebook.cells[1].source)
    assert "`lesson02_attacks.py`, beside this notebook" in setup
    assert "from lesson02_attacks import" in notebook.cells[2].source


def test_as_json_is_the_message_itself():
    async def one() -> toolkit.Attempt:
        lab = RefundLab.build("hmac")
        attempt = await toolkit.redeem(lab, toolkit.cut_tag(await lab.approval("alice", "A-1001")))
        await lab.aclose()
        return attempt

    attempt = asyncio.run(one())
    assert json.loads(toolkit.as_json(attempt.request)) == attempt.request
    assert json.loads(toolkit.as_json(attempt.answer.response)) == attempt.answer.response
    assert attempt.request["params"]["requestState"].endswith(".")  # what was sent: no tag
    assert attempt.outcome == (True, "rejected (bad tag)")


@pytest.mark.parametrize(
    ("first_line", "requests", "refused_by"),
    [
        ('lab = RefundLab.build("hmac")', 1, ["HmacStateCodec.open"]),
    ],
)
def test_the_main_attacks_print_their_request_answer_and_refusing_check(
    notebook, first_line, requests, refused_by
):
    """Edit, cut tag, downgrade, another user, expired, twice: the cell prints the tools/call
    the attacker's client sent (built by the same ``redeem`` the attacks use), the server's
    JSON-RPC answer, and the library lines that refused it."""
    [cell] = [
        c
        for c in notebook.cells
        if c.cell_type == "code" and first_line in c.source and ".show()" in c.source
    ]
    out = outputs_of(cell)
    assert out.count('request: {"jsonrpc": "2.0", "id": ') == requests
    assert out.count('"method": "tools/call"') == requests
    assert out.count('"requestState": "') == requests
    assert out.count('answer: {"jsonrpc": "2.0", "id": ') == requests
    assert out.count('"message": "Invalid requestState"') == requests
    for name in refused_by:
        assert f"refused by {name}, in mrtr_kit/server/" in out


def test_section_2_shows_the_forged_retry_and_the_paying_answer_on_the_wire(notebook):
    """Issue 19: where the attack is the point, the wire is shown. The forged round 2 goes out
    as JSON with the edited plain1 state in it (MRTR-S4a: nothing refuses it), then the
    server's JSON answer: it paid $99,999.00."""
    [cell] = [c for c in notebook.cells if c.source.startswith("approval = await lab.approval")]
    assert notebook.cells.index(cell) < next(
        k for k, c in enumerate(notebook.cells) if c.source.startswith("## 3.")
    )
    out = outputs_of(cell)
    request = out.split("request: ", 1)[1].split("\nanswer: ", 1)[0]
    answer = out.split("\nanswer: ", 1)[1].split("\n", 1)[0]
    sent = json.loads(request)["params"]
    assert sent["requestState"].startswith("plain1.")
    assert toolkit.read_payload(sent["requestState"])["data"]["approved_cents"] == 99_999_00
    assert sent["inputResponses"] == YES
    assert answer.startswith('{"jsonrpc": "2.0", "id": ')
    assert "Refunded $99,999.00 to alice" in out.split("\nanswer: ", 1)[1]


@pytest.mark.parametrize(
    "token",
    [
        "plain1.eyJub3QganNvbg",  # base64url of '{"not json'
        "plain1.WzEsMl0",  # [1,2]: JSON, not an object
        "hmac1.k1",  # too few fields
        "aead1.k1.bm9uY2U.Y2lwaGVy",
    ],
)
def test_show_claims_says_what_is_wrong_in_one_line(token, capsys):
    """A browser report: show_claims on a state whose JSON is broken printed a 60-line
    JSONDecodeError traceback. It prints one line saying what is wrong."""
    toolkit.show_claims(token)
    out = capsys.readouterr().out
    assert out.startswith("cannot read this state: ") and out.count("\n") == 1, out
    assert "Traceback" not in out


def test_show_claims_names_broken_json():
    with pytest.raises(ValueError, match="the payload is not JSON"):
        toolkit.read_payload("plain1.eyJub3QganNvbg")
