"""The checkpoints of lesson 02 (02-securing-request-state.ipynb): each puts your code into a
real refund server and attacks it, as the lesson did.

* ``check_forge_admin`` (exercise 1) sends your forged plain1 state to the plain server: does
  mallory get the admin's export?
* ``check_unseal`` (exercise 2) runs your ``unseal`` as the open of a real server's codec
  (``LearnerHmacCodec``: the kit's HMAC codec with your ``unseal`` as its ``open``) and sends it
  the lesson's attacks on the tag, each as a real round 2. Spies on ``hmac.compare_digest``,
  ``json.loads`` and base64's decoders see what your code does, and in which order.

The claim checks (``check_verify_claims``) are lesson 02a's, beside its notebook. Neither
checkpoint needs a hook in ``mrtr_kit/server``. The lab they build is
``course/mrtr_course/refund_lab/lab.py``; the state editors and ``redeem`` are
``course/mrtr_course/refund_lab/attacks.py``; what the lab's checkpoints share is
``course/mrtr_course/refund_lab/grading.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.refund_lab.attacks import set_field, tamper, verdict
from mrtr_course.refund_lab.grading import (
    NotYet,
    described,
    not_done,
    quiet_server_errors,
    redeem_answer,
)
from mrtr_course.refund_lab.lab import ORDER, YES, RefundLab
from mrtr_kit.server.codecs import (
    MAX_TOKEN_BYTES,
    HmacStateCodec,
    InvalidState,
    PlainStateCodec,
    b64url,
)
from mrtr_kit.server.keyring import KeyRing, derive_key
from mrtr_kit.server.state import StateBinding, request_digest

# -- shared by the two checkpoints ------------------------------------------------------------


def _raised(name: str, exc: Exception) -> Checkpoint:
    return Checkpoint("not yet", f"{name}() raised {type(exc).__name__}: {exc}")


# -- exercise 1: your forged state, sent to the plain server ----------------------------------


async def check_forge_admin(forge_admin: Callable[[str], str]) -> Checkpoint:
    """Exercise 1: does ``forge_admin`` turn mallory into an admin on the plain server?"""
    lab = RefundLab.build("plain")
    mallory = lab.caller("mallory")
    try:
        first = await mallory.call_tool("export_orders")
        assert first.request_state is not None
        try:
            forged = forge_admin(first.request_state)
        except NotImplementedError:
            return not_done("forge_admin")
        except Exception as exc:
            return _raised("forge_admin", exc)
        if not isinstance(forged, str):
            return Checkpoint("not yet", f"forge_admin() returned {type(forged).__name__}, not str")
        answer = await mallory.call_tool("export_orders", request_state=forged, input_responses=YES)
    finally:
        await lab.aclose()
    if not answer.ok:
        return Checkpoint(
            "not yet", f"the plain server did not accept it: {answer}{_why_unreadable(forged)}"
        )
    customers = sorted({o.customer for o in lab.desk.orders.values() if o.id in answer.text})
    if customers == ["mallory"]:
        return Checkpoint("not yet", "the export shows only mallory's orders: admin is still false")
    return Checkpoint(
        "passed",
        f"the plain server obeyed the forged flag: mallory exported the orders of "
        f"{', '.join(customers)}.",
    )


def _why_unreadable(forged: str) -> str:
    """Why the plain codec cannot read ``forged``, as a hint ("" when it can)."""
    payload = forged.partition(".")[2]
    if "=" in payload:
        return (
            ". The payload ends in '=' padding, and a state is base64url WITHOUT padding: "
            "strip it (urlsafe_b64encode(...).rstrip(b'='))"
        )
    if "+" in payload or "/" in payload:
        return (
            ". The payload has '+' or '/', which base64url never uses: encode it with "
            "base64.urlsafe_b64encode, not b64encode"
        )
    try:
        PlainStateCodec().open(forged)
    except InvalidState as exc:
        return f". The server could not read the state: {exc}"
    return ""


# -- exercise 2: your unseal, inside a real server ------------------------------------------------

Unseal = Callable[[str, bytes], Any]


@dataclass
class UnsealCall:
    """One call the server made to the learner's ``unseal``: the token, what the spies saw
    while it ran (``"hmac.compare_digest"``, or a decoder of the payload),
    and what it returned or raised."""

    token: str
    events: list[str] = field(default_factory=list)
    claims: Any = None
    error: Exception | None = None

    @property
    def refused(self) -> bool:
        return isinstance(self.error, InvalidState)

    @property
    def accepted(self) -> bool:
        return self.error is None

    def decoded_before_compare(self) -> str | None:
        """The first decoding of the payload that happened before any tag comparison."""
        for event in self.events:
            if event == "hmac.compare_digest":
                return None
            return event
        return None


_RECORDING: list[UnsealCall] = []  # the call now running, while the checkpoint's spies are on


def _spy(original: Callable[..., Any], event: Callable[..., str | None]) -> Callable[..., Any]:
    def spy(*args: Any, **kwargs: Any) -> Any:
        if _RECORDING:
            seen = event(_RECORDING[-1], *args)
            if seen:
                _RECORDING[-1].events.append(seen)
        return original(*args, **kwargs)

    return spy


def _payload_decode(name: str) -> Callable[..., str | None]:
    def event(call: UnsealCall, data: Any = b"", *rest: Any) -> str | None:
        fields = call.token.split(".")
        payload = fields[2] if len(fields) > 2 else ""
        text = data.decode("latin-1") if isinstance(data, bytes | bytearray) else str(data)
        return f"{name} of the payload" if payload and text.startswith(payload) else None

    return event


@contextmanager
def _spies(unseal: Unseal) -> Iterator[None]:
    """While the block runs, watch ``unseal``: replace hmac.compare_digest (and the same function
    under secrets), json.loads and base64's decoders, in their modules and wherever ``unseal``'s
    module imported them by name, with spies that note each call made during an unseal. The
    spies call the originals, so nothing else changes."""
    import base64
    import hmac
    import json as json_module
    import secrets

    watched: list[tuple[Any, str, Callable[..., str | None]]] = [
        (hmac, "compare_digest", lambda call, *a: "hmac.compare_digest"),
        (secrets, "compare_digest", lambda call, *a: "hmac.compare_digest"),
        (json_module, "loads", lambda call, *a: "json.loads"),
        (base64, "urlsafe_b64decode", _payload_decode("base64.urlsafe_b64decode")),
        (base64, "b64decode", _payload_decode("base64.b64decode")),
    ]
    namespace = getattr(unseal, "__globals__", {})
    undo: list[tuple[Any, str, Any]] = []
    spies: dict[int, Callable[..., Any]] = {}
    for module, name, event in watched:
        original = getattr(module, name)
        spy = spies.setdefault(id(original), _spy(original, event))
        undo.append((module, name, original))
        setattr(module, name, spy)
        for key, value in list(namespace.items()):
            if value is original:
                undo.append((namespace, key, original))
                namespace[key] = spy
    try:
        yield
    finally:
        for target, name, original in reversed(undo):
            if isinstance(target, dict):
                target[name] = original
            else:
                setattr(target, name, original)


class LearnerHmacCodec:
    """The kit's ``hmac1`` codec with the learner's ``unseal`` in place of its ``open``.

    Sealing stays the kit's (``HmacStateCodec``), and so does choosing the key: ``unseal`` gets
    the HMAC key of the key id the token names, derived as the kit derives it (or the sealing
    key's, if the token names no key of the ring: its tag then fails, as it must). Every state
    the server receives goes through ``unseal``; each call is kept in ``calls``.
    """

    format = HmacStateCodec.format
    unsafe = False

    def __init__(self, unseal: Unseal, keys: KeyRing) -> None:
        self.unseal = unseal
        self.keys = keys
        self._kit = HmacStateCodec(keys)
        self.calls: list[UnsealCall] = []

    def seal(self, claims: Mapping[str, Any]) -> str:
        return self._kit.seal(claims)

    def key_for(self, token: str) -> bytes:
        fields = token.split(".", 2) if isinstance(token, str) else []
        key = self.keys.get(fields[1]) if len(fields) > 1 else None
        return derive_key((key or self.keys.primary).secret, self.format)

    def open(self, token: str) -> dict[str, Any]:
        call = UnsealCall(token)
        self.calls.append(call)
        _RECORDING.append(call)
        try:
            call.claims = self.unseal(token, self.key_for(token))
        except Exception as exc:
            call.error = exc
            raise
        finally:
            _RECORDING.remove(call)
        if not isinstance(call.claims, dict):
            raise InvalidState(f"unseal returned {type(call.claims).__name__}")
        return call.claims


async def check_unseal(unseal: Unseal) -> Checkpoint:
    """Exercise 2: put ``unseal`` in a real kit server (``LearnerHmacCodec``) and run the
    notebook's attacks against it, each as a real round 2. Reports the first attack it let
    through, or every attack and what stopped it."""
    codec = LearnerHmacCodec(unseal, KeyRing.generate("k1"))
    lab = RefundLab.build(codec, label="your unseal")
    try:
        with _spies(unseal), quiet_server_errors():
            report = await _unseal_suite(lab, codec)
    except NotImplementedError:
        return not_done("unseal")
    except NotYet as failure:
        return Checkpoint("not yet", failure.message)
    finally:
        await lab.aclose()
    lines = "\n".join(f"  {line}" for line in report)
    return Checkpoint(
        "passed",
        f"your unseal, inside a real kit server, stopped every attack on the tag:\n{lines}",
    )


async def _unseal_suite(lab: RefundLab, codec: LearnerHmacCodec) -> list[str]:
    kit = HmacStateCodec(codec.keys)
    report: list[str] = []

    async def send(token: str, what: str, user: str = "alice") -> tuple[str, UnsealCall]:
        before = len(codec.calls)
        answer, reason = await redeem_answer(lab, token, user=user)
        if len(codec.calls) == before:
            raise RuntimeError("the server did not call unseal")  # the kit's bug, not yours
        call = codec.calls[-1]
        if call.error is not None and not call.refused:
            if isinstance(call.error, NotImplementedError):
                raise call.error
            raise NotYet(
                f"{what} made your unseal raise {described(call.error)}, and the server "
                f"answered {answer.text}. Raise InvalidState for every bad token: then the "
                "client gets -32602 and the server never fails."
            )
        return verdict(answer, reason)[1], call

    def must_refuse(call: UnsealCall, what: str, outcome: str, advice: str) -> str:
        if call.accepted:
            raise NotYet(f"your unseal accepted {what}, and the server {outcome}. {advice}")
        return f"✔ {what}: {outcome}"

    # 1. A genuine state opens, and unseal returns its claims.
    what = "alice's genuine state"
    genuine = await lab.approval("alice", ORDER)
    outcome, call = await send(genuine, what)
    if call.refused:
        raise NotYet(f"your unseal refused {what} ({call.error}): it must accept it")
    if call.claims != kit.open(genuine):
        raise NotYet(
            f"your unseal returned {call.claims!r:.80} for {what}: return the token's claims, "
            "the whole decoded payload"
        )
    report.append(f"✔ {what}: {outcome}, as it must")
    order_on_genuine = call.decoded_before_compare()

    # 2. Tampering: the payload edited, the tag kept.
    what = "a state whose amount was edited (tag kept)"
    forged = tamper(await lab.approval("alice", ORDER), approved_cents=99_999_00)
    outcome, forged_call = await send(forged, what)
    report.append(
        must_refuse(
            forged_call,
            what,
            outcome,
            "Compute the tag over hmac1.<kid>.<payload> with key and compare it with the "
            "token's tag before you trust anything in the payload.",
        )
    )

    # 3. Forgery with the attacker's own key.
    what = "a state sealed with another server's key"
    rogue_codec = HmacStateCodec(KeyRing.generate("k1"))
    rogue = rogue_codec.seal(
        {**kit.open(genuine), "data": {**kit.open(genuine)["data"], "approved_cents": 99_999_00}}
    )
    outcome, call = await send(rogue, what)
    report.append(
        must_refuse(call, what, outcome, "The tag must be computed with key, the server's.")
    )

    # 4. Truncation: no tag at all, then every 1-byte tag.
    what = "an edited state with its tag cut off (empty tag)"
    outcome, call = await send(set_field(forged, 3, ""), what)
    advice = (
        "Compare the whole tag: a shorter one can be guessed (hmac.compare_digest is False "
        "when the lengths differ)."
    )
    report.append(must_refuse(call, what, outcome, advice))
    what = "an edited state with a 1-byte tag"
    for guess in range(256):
        token = set_field(forged, 3, b64url(bytes([guess])))
        try:
            codec.open(token)
        except Exception:  # refused, or crashed: the send below says which
            if codec.calls[-1].refused:
                continue
        what = f"an edited state with a 1-byte tag, found in {guess + 1} guesses"
        outcome, call = await send(token, what)
        must_refuse(call, what, outcome, advice)
    report.append("✔ an edited state with a 1-byte tag: all 256 guesses rejected")

    # 5. The size cap: a genuine state, sealed by the server itself, but too big.
    claims = kit.open(genuine)
    binding = StateBinding(
        "alice", request_digest("tools/call", "request_refund", {"order_id": ORDER})
    )
    padded = {**claims["data"], "note": "x" * MAX_TOKEN_BYTES}
    big = lab.server.states.mint(binding, claims["asked"], padded)
    what = f"a genuine state of {len(big):,} characters"
    outcome, call = await send(big, what)
    report.append(
        must_refuse(
            call,
            what,
            outcome,
            f"Refuse any token longer than MAX_TOKEN_BYTES ({MAX_TOKEN_BYTES:,}) first: the cap "
            "keeps a client from making the server hash and decode whatever it sends.",
        )
    )
    if call.events:
        raise NotYet(
            f"your unseal refused {what}, but only after {call.events[0]} (a spy saw it): "
            "check the size first, before any other work"
        )

    # 6. Format: a downgrade to plain1, and malformed tokens.
    plain = PlainStateCodec()
    what = "an edited plain1 state (a downgrade)"
    edited = {**claims, "data": {**claims["data"], "approved_cents": 99_999_00}}
    outcome, call = await send(plain.seal(edited), what)
    report.append(
        must_refuse(call, what, outcome, "Open hmac1 tokens only: check the first field.")
    )
    payload = genuine.split(".")[2]
    malformed = {
        "hmac1.k1.<payload> (3 fields)": f"hmac1.k1.{payload}",
        "a genuine state + '.x' (5 fields)": f"{genuine}.x",
        "a 1-character tag": set_field(genuine, 3, "A"),
        "an empty string": "",
    }
    for label, token in malformed.items():
        what = f"the malformed state {label}"
        outcome, call = await send(token, what)
        must_refuse(
            call, what, outcome, "Check that a token has exactly 4 fields, the first hmac1."
        )
    report.append(f"✔ malformed states ({', '.join(malformed)}): all rejected")

    # 7. Timing and order, from the spies.
    if "hmac.compare_digest" not in forged_call.events:
        raise NotYet(
            "your unseal rejected the edited state without calling hmac.compare_digest (a spy "
            "on it saw no call): == stops at the first byte that differs, so the time a "
            "rejection takes tells an attacker how much of a guessed tag is right. Compare "
            "tags with hmac.compare_digest, which takes the same time wherever they differ."
        )
    report.append("✔ timing: tags compared with hmac.compare_digest (a spy saw the call)")
    early = forged_call.decoded_before_compare() or order_on_genuine
    if early:
        raise NotYet(
            f"your unseal ran {early} before it checked the tag (a spy saw it): until the "
            "tag checks out, the payload is the attacker's. Check the tag first, then decode."
        )
    report.append("✔ order: nothing decoded before the tag checked out")

    # 8. What is not unseal's job.
    what = "alice's genuine state, a second time"
    outcome, call = await send(genuine, what)
    if call.refused:
        raise NotYet(
            f"your unseal refused {what} ({call.error}): unseal checks the seal only, and a "
            "genuine state is genuine every time"
        )
    report.append(
        f"· {what}: {outcome}. Right for unseal, which only checks the seal: single use is "
        "the ledger's job (lesson 02b)"
    )
    what = "alice's genuine state, sent by mallory"
    outcome, call = await send(await lab.approval("alice", ORDER), what, user="mallory")
    report.append(f"· {what}: your unseal opened it; the claim checks then {outcome} (lesson 02a)")
    return report
