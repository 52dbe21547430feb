"""The replays of lesson 02a (02a-replays.ipynb), as an attacker would write them.

The notebook imports this file (``from lesson02a_attacks import ...``): it sits beside the
notebook, so the kernel finds it, and you can open it from JupyterLab's file browser. Edit it
and restart the kernel to try a replay of your own.

Each replay is one short function. None edits the state: each sends a genuine state, sealed by
the server, where it was not meant to go. Its docstring says what it sends, which check must
refuse it and the rule it cites. Rule IDs are explained in docs/spec-map.md; an ID marked (KIT)
is this kit's own convention, not the spec's. At the end, ``ATTACKS_02A`` and ``SERVERS_02A``:
the lesson's scoreboard, every replay against every server configuration of the lesson.

The tools the replays use, shared with lessons 02 and 02b, are in
``course/mrtr_course/refund_lab/attacks.py`` (``redeem``, which returns an ``Attempt``: the
request as it went over the wire, the server's answer and its log; ``scoreboard``). The lab
they run in (``RefundLab``) is ``course/mrtr_course/refund_lab/lab.py``; the exercise's
checkpoint is ``lesson02a_checkpoints.py``, beside this file. The checks that refuse the
replays are the library's own, in ``mrtr_kit/server/state.py``.
"""

from __future__ import annotations

from mrtr_course.refund_lab.attacks import SERVERS, Attack, Verdict, redeem
from mrtr_course.refund_lab.lab import ORDER, RefundLab

# -- the replays: each returns what happened to its round 2 ------------------------------------
# "Refused by" names the check that must stop it; the scoreboard shows which servers have it.


async def other_user(lab: RefundLab) -> Verdict:
    """Section 2a. Changes nothing in the state: mallory sends alice's approval as her own
    round 2. Refused by: ``StateIssuer.verify``, "issued to another principal". Rule:
    MRTR-S5a."""
    approval = await lab.approval("alice", ORDER)
    return (await redeem(lab, approval, user="mallory")).outcome


async def other_request(lab: RefundLab) -> Verdict:
    """Section 2b. Changes nothing in the state: alice sends her approval for A-1001 with a
    refund request for A-1002. Refused by: ``StateIssuer.verify``, "issued for another
    request". Rule: MRTR-S5c."""
    approval = await lab.approval("alice", ORDER)
    return (await redeem(lab, approval, order="A-1002")).outcome


async def expired(lab: RefundLab) -> Verdict:
    """Section 2c. Changes nothing: alice sends her approval two hours later. Refused by:
    ``StateIssuer.verify``, "expired". Rule: MRTR-S5b; the 15-minute lifetime is the kit's
    (KIT)."""
    approval = await lab.approval("alice", ORDER)
    lab.clock.advance(2 * 60 * 60)
    return (await redeem(lab, approval)).outcome


async def other_server(lab: RefundLab) -> Verdict:
    """Section 2d. Changes nothing: sends an approval issued by refunds-staging, which shares
    the production key. Refused by: ``StateIssuer.verify``, "wrong audience". Rule: none in
    the spec; the audience claim is the kit's (KIT)."""
    kind = lab.server.states.codec.format.removesuffix("1")
    keys = None if kind == "plain" else lab.keys  # staging shares the production key
    staging = RefundLab.build(kind, keys=keys, name="refunds-staging", clock=lab.clock)
    try:
        approval = await staging.approval("alice", ORDER)
    finally:
        await staging.aclose()
    return (await redeem(lab, approval)).outcome


ATTACKS_02A: dict[str, Attack] = {
    "alice's state, sent by mallory (2a)": other_user,
    "for another order (2b)": other_request,
    "two hours later (2c)": expired,
    "issued by staging, same key (2d)": other_server,
}

# -- the scoreboard: every replay against every server of this lesson ---------------------------

# The weak server checks the tag only; the other two check every claim. No ledger yet: single
# use is lesson 02b's. No plain server: a client rewrites its claims (lesson 02), so a claim it
# checks protects nothing.
SERVERS_02A = {name: SERVERS[name] for name in ("hmac, tag only", "hmac", "aead")}
