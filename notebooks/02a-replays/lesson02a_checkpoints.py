"""The checkpoint of lesson 02a (02a-replays.ipynb): it puts your code into a real refund server
and replays genuine states at it, as the lesson did.

* ``check_verify_claims`` (exercise 1) wraps the server's ``StateIssuer.verify`` (the kit checks
  the tag, your code the claims) and sends it genuine states, each as a real round 2: the ones
  in time must pay; stolen, misplaced, late and foreign ones must be refused.

It needs no hook in ``mrtr_kit/server``. The lab it builds is
``course/mrtr_course/refund_lab/lab.py``; ``redeem`` is in ``refund_lab/attacks.py``, and what
the lab's checkpoints share in ``refund_lab/grading.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.refund_lab.attacks import verdict
from mrtr_course.refund_lab.grading import (
    NotYet,
    described,
    not_done,
    quiet_server_errors,
    redeem_answer,
)
from mrtr_course.refund_lab.lab import ORDER, LessonClock, RefundLab
from mrtr_kit.server.codecs import InvalidState
from mrtr_kit.server.state import StateBinding, StateChecks

# -- exercise 1: your claim checks, inside a real server ----------------------------------------

VerifyClaims = Callable[[dict[str, Any], "str | None", str, str, float], Any]


def _with_claim_checks(lab: RefundLab, verify_claims: VerifyClaims, calls: list[Any]) -> None:
    """Make ``lab``'s server check claims with ``verify_claims``: its own issuer checks the tag
    and the structure only (the lab is built ``integrity_only``), then hands the claims on.
    Each outcome (None, a returned value, or the exception) is appended to ``calls``."""
    issuer = lab.server.states
    kit_verify = issuer.verify

    def verify(token: str, binding: StateBinding) -> dict[str, Any]:
        claims = kit_verify(token, binding)  # the tag and the claims' types: the kit's
        try:
            returned = verify_claims(
                dict(claims), binding.principal, binding.digest, issuer.audience, issuer.now()
            )
        except Exception as exc:
            calls.append(exc)
            raise
        calls.append(returned)
        if returned is not None:
            raise InvalidState("verify_claims returned a value instead of raising")
        return claims

    issuer.verify = verify  # type: ignore[method-assign]


async def check_verify_claims(verify_claims: VerifyClaims) -> Checkpoint:
    """Exercise 1: put ``verify_claims`` in a real kit server and replay genuine states at it,
    each as a real round 2: the right ones must pay, every misplaced one must be refused."""
    lab = RefundLab.build("hmac", checks=StateChecks.integrity_only(), label="your checks")
    calls: list[Any] = []
    _with_claim_checks(lab, verify_claims, calls)
    report: list[str] = []

    async def case(what: str, token: str, must_pay: bool, **redeem: Any) -> None:
        before = len(calls)
        answer, _reason = await redeem_answer(lab, token, **redeem)
        if len(calls) == before:
            raise RuntimeError("the server did not call verify_claims")  # the kit's bug
        got = calls[-1]
        if isinstance(got, NotImplementedError):
            raise got
        if isinstance(got, Exception) and not isinstance(got, InvalidState):
            raise NotYet(
                f"{what}: verify_claims raised {described(got)}, and the server answered "
                f"{answer.text}. Raise InvalidState for a state that must be refused."
            )
        refused = isinstance(got, InvalidState)
        if got is not None and not refused:
            raise NotYet(
                f"{what}: verify_claims returned {got!r}. Return nothing when the claims are "
                "right and raise InvalidState when they are not: a returned False is not a "
                "refusal."
            )
        outcome = verdict(answer, got.reason if refused else None)[1]
        if must_pay and refused:
            raise NotYet(f"{what}: your checks refused it ({got}), but it must be accepted.")
        if not must_pay and not refused:
            raise NotYet(f"{what}: your checks let it through, and the server {outcome}.")
        report.append(f"✔ {what}: {outcome}")

    async def staging_state(name: str, offset: float = 0.0) -> str:
        other = RefundLab.build(
            "hmac", keys=lab.keys, name=name, clock=LessonClock(lab.clock() + offset)
        )
        try:
            return await other.approval("alice", ORDER)
        finally:
            await other.aclose()

    try:
        with quiet_server_errors():
            await _claim_cases(lab, case, staging_state)
    except NotImplementedError:
        return not_done("verify_claims")
    except NotYet as failure:
        return Checkpoint("not yet", failure.message)
    finally:
        await lab.aclose()
    lines = "\n".join(f"  {line}" for line in report)
    return Checkpoint(
        "passed",
        f"your claim checks, inside a real kit server, paid the right states and refused every "
        f"replay:\n{lines}",
    )


async def _claim_cases(
    lab: RefundLab,
    case: Callable[..., Awaitable[None]],
    staging_state: Callable[..., Awaitable[str]],
) -> None:
    skew, ttl = lab.server.states.skew_s, lab.server.states.ttl_s
    await case("alice's own state, at once", await lab.approval("alice", ORDER), True)
    late = await lab.approval("alice", ORDER)
    lab.clock.advance(ttl + skew - 10)
    await case(
        f"alice's state, {skew - 10} s past its expiry (within the {skew} s of clock skew)",
        late,
        True,
    )
    await case(
        "alice's state, sent by mallory (MRTR-S5a)",
        await lab.approval("alice", ORDER),
        False,
        user="mallory",
    )
    await case(
        "alice's state for A-1001, sent with A-1002 (MRTR-S5c)",
        await lab.approval("alice", ORDER),
        False,
        order="A-1002",
    )
    old = await lab.approval("alice", ORDER)
    lab.clock.advance(ttl + skew + 10)
    await case(
        f"alice's state, {skew + 10} s past its expiry (beyond the skew, MRTR-S5b)", old, False
    )
    two_hours = await lab.approval("alice", ORDER)
    lab.clock.advance(2 * 60 * 60)
    await case("alice's state, two hours later (MRTR-S5b)", two_hours, False)
    await case(
        f"a state from an instance whose clock is {skew - 10} s fast (within the skew)",
        await staging_state("refunds", offset=skew - 10),
        True,
    )
    await case(
        "a state from an instance whose clock is 1 hour fast (KIT)",
        await staging_state("refunds", offset=60 * 60),
        False,
    )
    await case(
        "a state issued by refunds-staging, which shares the key (KIT)",
        await staging_state("refunds-staging"),
        False,
    )
