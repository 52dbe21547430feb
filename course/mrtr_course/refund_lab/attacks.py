"""The attacker's toolkit of lessons 02, 02a and 02b: what any client can do to the ``requestState``
it holds, and how to see what the server did about it.

The attacks themselves belong to the lessons, beside their notebooks:
``notebooks/02-securing-request-state/lesson02_attacks.py`` (lesson 02's six edits and reads),
``notebooks/02a-replays/lesson02a_attacks.py`` (lesson 02a's four replays) and
``notebooks/02b-rotation-and-single-use/lesson02b_attacks.py`` (lesson 02b's two double
spends). Each is a short function that takes a ``RefundLab`` and returns a ``Verdict``; this
module holds what they use, top to bottom:

1. **Reading and editing a state** (``read_payload``, ``tamper``, ``cut_tag``, ...): what any
   client can do to the ``requestState`` it holds. None of it needs a key.
2. **Sending it** (``redeem``): round 2 of ``request_refund``, "yes" with the state you choose,
   built and sent by the lab's ``RawCaller``. The ``Attempt`` it returns keeps the request as it
   went over the wire, the server's answer and the server's log; ``verdict`` says what one
   round 2 did (paid, rejected and why, not paid); ``show_check`` prints the lines of the
   library that refused it.
3. **The scoreboard**: the attacks a lesson passes in, against server configurations
   (``SERVERS``), each on a fresh server.

The lab the attacks run in (``RefundLab``: the refund server, its users, its clock, its log) is
``lab.py`` beside this file; the checks that refuse the attacks are the library's own, in
``mrtr_kit/server/codecs.py``, ``state.py`` and ``core.py``. Nothing here imports the lessons'
files (the arrow goes notebook -> course -> library).
"""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mrtr_kit
from mrtr_course.refund_lab.lab import (
    ORDER,
    YES,
    RefundLab,
    ServerAnswer,
    logged_reason,
    server_log,
)
from mrtr_course.refund_lab.views import Table, code_lines, mark
from mrtr_kit.server.codecs import (
    GCM_TAG_BYTES,
    AeadStateCodec,
    HmacStateCodec,
    InvalidState,
    PlainStateCodec,
    StateCodec,
    b64url,
    canonical_json,
    unb64url,
)
from mrtr_kit.server.state import StateChecks

Verdict = tuple[bool, str]  # (did the server stop it?, what happened): one scoreboard cell
Attack = Callable[[RefundLab], Awaitable[Verdict]]  # one attack: what happened to its last round 2

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


_REFUNDED = re.compile(r"^Refunded (\$[\d,.]+)")


def verdict(answer: ServerAnswer, reason: str | None) -> Verdict:
    """(stopped, what happened) for one round 2: paid, rejected (and why), or not paid."""
    paid = _REFUNDED.match(answer.text) if answer.ok else None
    if paid:
        return False, f"paid {paid.group(1)}"
    if answer.kind == "error":
        return True, f"rejected ({reason})" if reason else f"error {answer.text}"
    if "refunded already" in answer.text:
        return True, "not paid: refunded already"
    return True, f"not paid: {answer}"


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


# -- 3. the scoreboard: attacks against servers ------------------------------------------------

SERVERS: dict[str, dict[str, Any]] = {  # RefundLab.build's arguments for each column
    "plain": {"codec": "plain"},
    "hmac, tag only": {"codec": "hmac", "checks": StateChecks.integrity_only()},
    "hmac": {"codec": "hmac"},
    "aead": {"codec": "aead"},
    "aead + ledger + one per order": {"codec": "aead", "ledger": "memory", "one_per_order": True},
}


async def scoreboard(servers: dict[str, dict[str, Any]], attacks: dict[str, Attack]) -> Table:
    """Run every attack against every server, each on a fresh server, and tabulate what
    happened: ✔ the server stopped it, ✘ it worked. Nothing in the table is written by hand.
    ``servers``: ``RefundLab.build``'s arguments by column name (``SERVERS``, or a lesson's
    choice of them); ``attacks``: a lesson's attacks by row name."""
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
