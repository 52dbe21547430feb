"""The attacks of lesson 02b (02b-rotation-and-single-use.ipynb): the two double spends.

The notebook imports this file (``from lesson02b_attacks import ...``): it sits beside the
notebook, so the kernel finds it, and you can open it from JupyterLab's file browser. Edit it
and restart the kernel to try an attack of your own.

Both send a genuine approval, in time and by its owner: nothing in the state is wrong, so no
check of lesson 02 refuses them. One sends the same state twice, the other two approvals of one
order. At the end, ``ATTACKS_02B`` and ``SERVERS_02B``: the lesson's scoreboard, both attacks
against a server without a ledger, with one, and with the key on the order.

The tools they use (``redeem``, ``scoreboard``, ...) are shared with lesson 02's attacks, in
``course/mrtr_course/refund_lab/attacks.py``; the lab they run in (``RefundLab``) is
``course/mrtr_course/refund_lab/lab.py``.
"""

from __future__ import annotations

from typing import Any

from mrtr_course.refund_lab.attacks import Attack, Verdict, redeem
from mrtr_course.refund_lab.lab import ORDER, RefundLab

# -- the attacks: each returns what happened to its last round 2 -------------------------------


async def twice(lab: RefundLab) -> Verdict:
    """Lesson 02b, section 2. Changes nothing: alice sends her own approval a second time.
    Refused by: the ledger, which spends the state's ``jti`` in ``McpServer._call`` (the handler's
    ``redeem_once``), "already redeemed". Rule: MRTR-S5d."""
    approval = await lab.approval("alice", ORDER)
    await redeem(lab, approval)
    stopped, second = (await redeem(lab, approval)).outcome
    return stopped, f"paid, then {second}"


async def second_approval(lab: RefundLab) -> Verdict:
    """Lesson 02b, section 2b. Changes nothing: alice gets two approvals of one order, both
    before either is paid, and sends both. Each is a new state, so no state check sees it.
    Stopped by: the idempotency key on the order (``RefundDesk.pay_once``), the shop's own
    rule, no rule ID."""
    first, second_one = [await lab.approval("alice", ORDER) for _ in range(2)]
    await redeem(lab, first)
    stopped, second = (await redeem(lab, second_one)).outcome
    return stopped, f"paid, then {second}"


ATTACKS_02B: dict[str, Attack] = {
    "the same state twice (02b: 2)": twice,
    "a second approval, same order (02b: 2b)": second_approval,
}

# -- the scoreboard: both attacks against the servers of this lesson ----------------------------

SERVERS_02B: dict[str, dict[str, Any]] = {  # RefundLab.build's arguments for each column
    "hmac": {"codec": "hmac"},
    "hmac + ledger": {"codec": "hmac", "ledger": "memory"},
    "hmac + ledger + one per order": {"codec": "hmac", "ledger": "memory", "one_per_order": True},
}
