"""The attacks of lesson 02 (02-securing-request-state.ipynb), as an attacker would write them.

The notebook imports this file (``from lesson02_attacks import ...``): it sits beside the
notebook, so the kernel finds it, and you can open it from JupyterLab's file browser. Edit it
and restart the kernel to try an attack of your own.

How to read it, top to bottom:

1. **Reading and editing a state** (``read_payload``, ``tamper``, ``cut_tag``, ...): what any
   client can do to the ``requestState`` it holds. None of it needs a key.
2. **Sending it** (``redeem``): round 2 of ``request_refund``, "yes" with the state you choose,
   built and sent by the lab's ``RawCaller``. The ``Attempt`` it returns keeps the request as it
   went over the wire, the server's answer and the server's log; ``show_check`` prints the lines
   of the library that refused it.
3. **The attacks**, one short function each. The docstring says what the attacker changes, the
   request it sends, which check must refuse it and the rule it cites. Rule IDs are explained
   in docs/spec-map.md; an ID marked (KIT) is this kit's own convention, not the spec's.
4. **The scoreboard**: every attack against every server configuration of the lesson.

The lab the attacks run in (``RefundLab``: the refund server, its users, its clock, its log)
and the checkpoints are in ``course/mrtr_course/lessons/security.py``; the checks that refuse the
attacks are the library's own, in ``mrtr_kit/server/codecs.py``, ``state.py`` and ``core.py``.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mrtr_kit
from mrtr_course.lessons.security import (
    ORDER,
    YES,
    RefundLab,
    ServerAnswer,
    Table,
    code_lines,
    logged_reason,
    mark,
    server_log,
    verdict,
)
from mrtr_kit.server.codecs import (
    GCM_TAG_BYTES,
    MAX_TOKEN_BYTES,
    AeadStateCodec,
    HmacStateCodec,
    InvalidState,
    PlainStateCodec,
    StateCodec,
    b64url,
    canonical_json,
    unb64url,
)
from mrtr_kit.server.keyring import KeyRing
from mrtr_kit.server.state import StateChecks

Verdict = tuple[bool, str]  # (did the server stop it?, what happened): one scoreboard cell

# -- 1. reading and editing a state: what any client can do -----------------------------------


def payload_field(token: str) -> int:
    """Which dot-separated field of ``token`` holds the claims: plain1.<payload>,
    hmac1.<kid>.<payload>.<tag>. An aead1 token has only ciphertext."""
    fmt = token.split(".", 1)[0]
    if fmt == PlainStateCodec.format:
        return 1
    if fmt == HmacStateCodec.format:
        return 2
    if fmt == AeadStateCodec.format:
        raise ValueError("an aead1 token is encrypted: without the key there is no payload to read")
    raise ValueError(f"{fmt!r} is not a requestState format of this kit")


def read_payload(token: str) -> dict[str, Any]:
    """The claims inside a plain1 or hmac1 token, read with no key: base64url, then JSON."""
    fields = token.split(".")
    index = payload_field(token)
    if len(fields) <= index:
        raise ValueError(f"a {fields[0]} token has more fields: this one has {len(fields)}")
    try:
        claims = json.loads(unb64url(fields[index]))
    except InvalidState as exc:
        raise ValueError(f"the payload is not base64url: {exc.reason}") from None
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        raise ValueError(f"the payload is not JSON ({exc})") from None
    if not isinstance(claims, dict):
        raise ValueError(f"the payload is JSON but not an object: {type(claims).__name__}")
    return claims


def show_claims(token: str) -> None:
    """Print the claims as indented JSON, or, for a token that has none to read (encrypted,
    broken), one line saying why: what is wrong matters here, not a traceback."""
    try:
        claims = read_payload(token)
    except ValueError as exc:
        print(f"cannot read this state: {exc}")
        return
    print(json.dumps(claims, indent=2, ensure_ascii=False))


def tamper(token: str, **changes: Any) -> str:
    """``token`` with fields of its ``data`` changed; everything else, the tag too, kept."""
    claims = read_payload(token)
    claims["data"].update(changes)
    return set_field(token, payload_field(token), b64url(canonical_json(claims)))


def set_field(token: str, index: int, value: str) -> str:
    """``token`` with its dot-separated field ``index`` replaced by ``value``."""
    fields = token.split(".")
    fields[index] = value
    return ".".join(fields)


def edit(token: str) -> str:
    """Raise the amount: rewrite the claim (plain1, hmac1) or, where the claims are encrypted
    (aead1), change one character of the ciphertext blind."""
    if token.startswith(AeadStateCodec.format):
        sealed = token.split(".")[3]
        middle = len(sealed) // 2  # a middle character: the edit stays canonical base64url
        flipped = "A" if sealed[middle] != "A" else "B"
        return set_field(token, 3, sealed[:middle] + flipped + sealed[middle + 1 :])
    return tamper(token, approved_cents=99_999_00)


def cut_tag(token: str) -> str:
    """``token`` without its tag: hmac1's tag field emptied, aead1's 16 GCM tag bytes cut off
    the ciphertext. A plain1 token has no tag to cut."""
    if token.startswith(HmacStateCodec.format):
        return set_field(token, 3, "")
    if token.startswith(AeadStateCodec.format):
        return set_field(token, 3, b64url(unb64url(token.split(".")[3])[:-GCM_TAG_BYTES]))
    return token


def reseal(codec: StateCodec, token: str, **changes: Any) -> str:
    """Open ``token`` with ``codec`` (the attacker's own), change its data, seal it again."""
    claims = codec.open(token)
    claims["data"].update(changes)
    return codec.seal(claims)


# -- 2. sending it, and what the server did ---------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One round 2 the attacker's client sent: the request exactly as it went over the wire,
    the server's JSON-RPC answer, and the lines the server logged about it."""

    request: dict[str, Any]
    answer: ServerAnswer
    log: list[str]

    @property
    def outcome(self) -> Verdict:
        return verdict(self.answer, logged_reason(self.log))

    def show(self) -> None:
        print("request:", as_json(self.request))
        print("answer:", as_json(self.answer.response))
        for line in self.log:  # the reason is here only: the client gets one fixed error (KIT)
            print("server log:", line)


async def redeem(lab: RefundLab, token: str, user: str = "alice", order: str = ORDER) -> Attempt:
    """Round 2 of ``request_refund`` as ``user`` for ``order``: "yes", with ``token`` as the
    requestState. The request is built first and kept, so the Attempt holds what was sent."""
    caller = lab.caller(user)  # a client that sends any state it is given
    request = caller.tool_call(
        "request_refund", {"order_id": order}, request_state=token, input_responses=YES
    )
    with server_log() as log:
        answer = await caller.send(request)
    return Attempt(request, answer, log)


def as_json(message: dict[str, Any]) -> str:
    """A JSON-RPC message as JSON, one line per member of its params, result or error, so
    that it can be read; ``json.loads`` gives back the message exactly."""
    body = next((key for key in ("params", "result", "error") if key in message), None)
    if body is None:
        return json.dumps(message, ensure_ascii=False)
    head = json.dumps({k: v for k, v in message.items() if k != body}, ensure_ascii=False)
    members = ",\n".join(
        f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in message[body].items()
    )
    return f'{head[:-1]}, "{body}": {{\n{members}\n}}}}'


KIT_ROOT = Path(mrtr_kit.__file__).resolve().parent.parent


def show_check(function: Callable[..., Any], text: str) -> None:
    """Print the check in the library's ``function`` that refuses with ``text`` (the reason it
    logs): from its ``if`` to its ``raise``, read from the source the server runs, less its
    docstring (which may quote ``text`` too)."""
    lines = code_lines(function)
    at = next(i for i, line in enumerate(lines) if text in line)
    depth = len(lines[at]) - len(lines[at].lstrip())
    start = next(
        i
        for i in range(at, -1, -1)
        if lines[i].lstrip().startswith("if ") and len(lines[i]) - len(lines[i].lstrip()) < depth
    )
    end = next(i for i in range(at, len(lines)) if lines[i].lstrip().startswith("raise "))
    where = Path(inspect.getsourcefile(function) or "").resolve().relative_to(KIT_ROOT)
    print(f"refused by {function.__qualname__}, in {where}:")
    print(textwrap.indent(textwrap.dedent("".join(lines[start : end + 1])).rstrip(), "    "))


# -- 3. the attacks: each returns what happened to its last round 2 -----------------------------
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


async def other_user(lab: RefundLab) -> Verdict:
    """Section 5a. Changes nothing in the state: mallory sends alice's approval as her own
    round 2. Refused by: ``StateIssuer.verify``, "issued to another principal". Rule:
    MRTR-S5a."""
    approval = await lab.approval("alice", ORDER)
    return (await redeem(lab, approval, user="mallory")).outcome


async def other_request(lab: RefundLab) -> Verdict:
    """Section 5b. Changes nothing in the state: alice sends her approval for A-1001 with a
    refund request for A-1002. Refused by: ``StateIssuer.verify``, "issued for another
    request". Rule: MRTR-S5c."""
    approval = await lab.approval("alice", ORDER)
    return (await redeem(lab, approval, order="A-1002")).outcome


async def expired(lab: RefundLab) -> Verdict:
    """Section 5c. Changes nothing: alice sends her approval two hours later. Refused by:
    ``StateIssuer.verify``, "expired". Rule: MRTR-S5b; the 15-minute lifetime is the kit's
    (KIT)."""
    approval = await lab.approval("alice", ORDER)
    lab.clock.advance(2 * 60 * 60)
    return (await redeem(lab, approval)).outcome


async def other_server(lab: RefundLab) -> Verdict:
    """Section 5d. Changes nothing: sends an approval issued by refunds-staging, which shares
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


Attack = Callable[[RefundLab], Awaitable[Verdict]]

ATTACKS: dict[str, Attack] = {
    "edit the amount (section 2)": edit_the_amount,
    "edit it, seal it with your own key": seal_with_own_key,
    "edit it, cut the tag off": edit_and_cut_the_tag,
    "edit a plain1 state, send it here": downgrade_to_plain,
    "send a 16 KiB state": send_oversized,
    "read the internal note (section 4)": read_the_note,
    "alice's state, sent by mallory (5a)": other_user,
    "for another order (5b)": other_request,
    "two hours later (5c)": expired,
    "issued by staging, same key (5d)": other_server,
    "the same state twice (02b: 2)": twice,
    "a second approval, same order (02b: 2b)": second_approval,
}
DOUBLE_SPENDS = (twice, second_approval)  # lesson 02b's; the others are lesson 02's
ATTACKS_02 = {name: attack for name, attack in ATTACKS.items() if attack not in DOUBLE_SPENDS}
ATTACKS_02B = {name: attack for name, attack in ATTACKS.items() if attack in DOUBLE_SPENDS}

# -- 4. the scoreboard: every attack against every server ---------------------------------------

SERVERS: dict[str, dict[str, Any]] = {  # RefundLab.build's arguments for each column
    "plain": {"codec": "plain"},
    "hmac, tag only": {"codec": "hmac", "checks": StateChecks.integrity_only()},
    "hmac": {"codec": "hmac"},
    "aead": {"codec": "aead"},
    "aead + ledger + one per order": {"codec": "aead", "ledger": "memory", "one_per_order": True},
}
SERVERS_02 = {name: spec for name, spec in SERVERS.items() if "ledger" not in spec}
SERVERS_02B = {
    "hmac": {"codec": "hmac"},
    "hmac + ledger": {"codec": "hmac", "ledger": "memory"},
    "hmac + ledger + one per order": {"codec": "hmac", "ledger": "memory", "one_per_order": True},
}


async def scoreboard(
    servers: dict[str, dict[str, Any]] | None = None,
    attacks: dict[str, Attack] | None = None,
) -> Table:
    """Run every attack against every server, each on a fresh server, and tabulate what
    happened: ✔ the server stopped it, ✘ it worked. Nothing in the table is written by hand."""
    servers = servers or SERVERS
    attacks = attacks or ATTACKS
    rows = []
    for name, attack in attacks.items():
        row = [name]
        for spec in servers.values():
            lab = RefundLab.build(**spec)
            try:
                row.append(mark(*await attack(lab)))
            finally:
                await lab.aclose()
        rows.append(row)
    return Table("Attacks (rows) against servers (columns)", ["attack", *servers], rows)
