"""The attacks of lesson 02 (02-securing-request-state.ipynb), as an attacker would write them.

The notebook imports this file (``from lesson02_attacks import ...``): it sits beside the
notebook, so the kernel finds it, and you can open it from JupyterLab's file browser. Edit it
and restart the kernel to try an attack of your own.

Each attack is one short function. Its docstring says what the attacker changes, the request
it sends, which check must refuse it and the rule it cites. Rule IDs are explained in
docs/spec-map.md; an ID marked (KIT) is this kit's own convention, not the spec's. At the end,
``ATTACKS_02`` and ``SERVERS_02``: the lesson's scoreboard, every attack against every server
configuration of the lesson. The replays of a genuine state are lesson 02a's
(``lesson02a_attacks.py``, beside its notebook).

The tools the attacks use, shared with lesson 02b, are in
``course/mrtr_course/refund_lab/attacks.py``: reading and editing a state (``read_payload``,
``tamper``, ``cut_tag``, ...), sending it (``redeem``, which returns an ``Attempt``: the
request as it went over the wire, the server's answer and its log), ``show_check`` (the lines
of the library that refused it) and ``scoreboard``. The lab they run in (``RefundLab``: the
refund server, its users, its clock, its log) is ``course/mrtr_course/refund_lab/lab.py``; the
exercises' checkpoints are ``lesson02_checkpoints.py``, beside this file. The checks that
refuse the attacks are the library's own, in ``mrtr_kit/server/codecs.py``, ``state.py`` and
``core.py``.
"""

from __future__ import annotations

from mrtr_course.refund_lab.attacks import (
    SERVERS,
    Attack,
    Verdict,
    cut_tag,
    edit,
    read_payload,
    redeem,
    reseal,
    tamper,
)
from mrtr_course.refund_lab.lab import ORDER, RefundLab
from mrtr_kit.server.codecs import MAX_TOKEN_BYTES
from mrtr_kit.server.keyring import KeyRing

# -- the attacks: each returns what happened to its last round 2 -------------------------------
# "Refused by" names the check that must stop it; the scoreboard shows which servers have it.


async def edit_the_amount(lab: RefundLab) -> Verdict:
    """Section 2. Changes: ``approved_cents`` in alice's approval, tag kept (aead1: one
    ciphertext character). Sends: alice's round 2 with it. Refused by: the codec's tag check,
    ``HmacStateCodec.open`` / ``AeadStateCodec.open``, "bad tag". Rule: MRTR-S4a."""
    approval = await lab.approval("alice", ORDER)
    return (await redeem(lab, edit(approval))).outcome


async def seal_with_own_key(lab: RefundLab) -> Verdict:
    """Section 3. Changes: the amount, then seals the claims with a key of the attacker's own,
    under the server's key id (k1), from a copy of the server the attacker runs. Sends:
    alice's round 2 with it. Refused by: the tag check, "bad tag". Rule: MRTR-S4a."""
    kind = lab.server.states.codec.format.removesuffix("1")  # plain, hmac or aead
    rogue = RefundLab.build(kind, keys=KeyRing.generate("k1"), clock=lab.clock)
    try:
        token = await rogue.approval("alice", ORDER)
        forged = reseal(rogue.server.states.codec, token, approved_cents=99_999_00)
    finally:
        await rogue.aclose()
    return (await redeem(lab, forged)).outcome


async def edit_and_cut_the_tag(lab: RefundLab) -> Verdict:
    """Section 3. Changes: the amount, then cuts the tag off. Sends: alice's round 2 with it.
    Refused by: the tag check; ``hmac.compare_digest`` is False for tags of different lengths,
    "bad tag". Rule: MRTR-S4a."""
    approval = await lab.approval("alice", ORDER)
    return (await redeem(lab, cut_tag(edit(approval)))).outcome


async def downgrade_to_plain(lab: RefundLab) -> Verdict:
    """Section 3. Changes: the amount in a plain1 state, issued by a plain copy of the server.
    Sends: alice's round 2 with it, to this server. Refused by: ``split_token``, which opens
    only the server's own format, "not a hmac1 token". Rule: MRTR-S4a."""
    plain = RefundLab.build("plain", clock=lab.clock)
    try:
        forged = tamper(await plain.approval("alice", ORDER), approved_cents=99_999_00)
    finally:
        await plain.aclose()
    return (await redeem(lab, forged)).outcome


async def send_oversized(lab: RefundLab) -> Verdict:
    """Section 3. Changes: everything; a token of the server's format, over 16 KiB. Sends:
    alice's round 2 with it. Refused by: ``split_token``'s size cap, before any hashing,
    "missing or oversized token". Rule: MRTR-S4a; the 16 KiB cap is the kit's (KIT)."""
    fmt = lab.server.states.codec.format
    return (await redeem(lab, f"{fmt}.k1.{'A' * MAX_TOKEN_BYTES}.AAAA")).outcome


async def read_the_note(lab: RefundLab) -> Verdict:
    """Section 4. Changes nothing and sends nothing: reads the internal risk note in alice's
    approval. Stopped by: encryption (aead1) only; a tag hides nothing. Rule: SEC-8."""
    try:
        note = read_payload(await lab.approval("alice", ORDER))["data"]["note"]
    except ValueError:
        return True, "ciphertext only"
    return False, f"read: {note!r}"


ATTACKS_02: dict[str, Attack] = {
    "edit the amount (section 2)": edit_the_amount,
    "edit it, seal it with your own key": seal_with_own_key,
    "edit it, cut the tag off": edit_and_cut_the_tag,
    "edit a plain1 state, send it here": downgrade_to_plain,
    "send a 16 KiB state": send_oversized,
    "read the internal note (section 4)": read_the_note,
}

# -- the scoreboard: every attack against every server of this lesson ---------------------------

# The three codecs, each checking every claim. The server that checks only the tag is lesson
# 02a's (replays), and single use (a ledger) lesson 02b's.
SERVERS_02 = {name: SERVERS[name] for name in ("plain", "hmac", "aead")}
