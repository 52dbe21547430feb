"""requestState claims: what the server seals into a state, and what it checks on receipt.

requestState travels through the client, so it is attacker-controlled input (MRTR-S4, SEC-1).
A codec (``codecs.py``) makes it tamper-proof; integrity alone still lets a client replay a
genuine state somewhere else. So every state carries claims, each checked on receipt:

======== ====================================================== ==========================
claim    holds                                                  rejects a state that is
======== ====================================================== ==========================
``aud``  the server's name                                      meant for another server
``sub``  the authenticated principal                            replayed by another user (S5a)
``iat``  issued at, epoch seconds                               issued in the future
``exp``  expiry, epoch seconds                                  too old (MRTR-S5b, SEC-4)
``req``  digest of method + tool/prompt/URI + arguments         replayed on another request (S5c)
``jti``  a token id, random by default                          spent already (with a ledger, S5d)
``flow`` the call's flow id: minted on its first round, copied    (none: it is what per-flow
         into every later state of the call, forks included       ledger entries are keyed by)
======== ====================================================== ==========================

plus ``asked`` (the input keys asked with this state, SEC-6, KIT) and ``data`` (the handler's own
state, or null when it keeps none: the core mints a state for every input_required, so the
retry's unasked answers are dropped, MRTR-E3). Clocks of several instances differ a little:
``skew_s`` (``McpServer(clock_skew_s=...)``, ``CLOCK_SKEW_S`` by default) bounds the tolerance,
so a state is accepted until ``exp + skew_s`` and refused after it, to the second.

Why ``flow``: single use (``jti``) covers one state, but a handler that does not spend a round's
state lets that round be replayed, and each replay mints a new state: the call forks (MIG-3: a
handler may run N times for one logical call). Every fork carries the same sealed ``flow``, so a
limit or a side effect kept in the ledger under it holds across forks (``ctx.attempt``,
``ctx.once``; KIT).

Every failure raises ``InvalidState`` with a reason for the server log; the wire always gets
``invalid_state_error()``, so a forger learns nothing from the answer (a kit convention, KIT;
the spec asks that a failed state be rejected, MRTR-S4a).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..protocol.errors import McpError, invalid_params
from .codecs import InvalidState, StateCodec, b64url, canonical_json

DEFAULT_TTL_S = 15 * 60  # SEC-4 (KIT): humans answer forms slowly
CLOCK_SKEW_S = 30  # default tolerated difference between instances' clocks (KIT)
_JTI = re.compile(r"[A-Za-z0-9_-]{16}")  # matched whole (fullmatch)
_FLOW = re.compile(r"[A-Za-z0-9_-]{22}")  # 16 random bytes (new_flow_id), matched whole

INVALID_STATE_MESSAGE = "Invalid requestState"
INVALID_STATE_DATA = {"reason": "invalid_request_state"}

__all__ = [
    "CLOCK_SKEW_S",
    "DEFAULT_TTL_S",
    "InvalidState",
    "StateBinding",
    "StateChecks",
    "StateIssuer",
    "StateRefused",
    "invalid_state_error",
    "new_flow_id",
    "new_token_id",
    "request_digest",
]


class StateRefused(McpError):
    """The wire error of a refused requestState, the same for every reason (KIT), holding
    the reason for the operator (``operator_reason``: the server log, ``rounds.ServerRound``);
    the reason never goes on the wire."""

    def __init__(self, operator_reason: str) -> None:
        wire = invalid_params(INVALID_STATE_MESSAGE, dict(INVALID_STATE_DATA))
        super().__init__(wire.code, wire.message, wire.data, reason=wire.reason)
        self.operator_reason = operator_reason


def invalid_state_error(operator_reason: str) -> StateRefused:
    """The one answer for every requestState rejection (KIT): a forger learns nothing.
    ``operator_reason`` is for the operator's eyes only (never sent)."""
    return StateRefused(operator_reason)


def new_token_id() -> str:
    """A fresh ``jti``: 12 random bytes, 16 base64url characters."""
    return secrets.token_urlsafe(12)


def new_flow_id() -> str:
    """A fresh flow id: 16 random bytes, 22 base64url characters, so no one can guess another
    call's. Not a secret: under the ``hmac`` codec the client reads it in its state."""
    return secrets.token_urlsafe(16)


def request_digest(method: str, target: str, arguments: Any) -> str:
    """SEC-5: what the state is bound to: method, tool/prompt name or resource URI, arguments."""
    key = {"method": method, "target": target, "arguments": arguments or {}}
    return b64url(hashlib.sha256(canonical_json(key)).digest())


@dataclass(frozen=True)
class StateBinding:
    """What a state must match on receipt: who asks, for which request."""

    principal: str | None
    digest: str


@dataclass(frozen=True)
class StateChecks:
    """Which bindings ``verify`` enforces. All on by default; a lesson switches some off to
    show the replay each one stops. The structure of the claims is always checked."""

    audience: bool = True
    principal: bool = True  # MRTR-S5a
    expiry: bool = True  # MRTR-S5b
    request: bool = True  # MRTR-S5c

    @classmethod
    def integrity_only(cls) -> StateChecks:
        """No bindings at all: what a server that only signs its state gets."""
        return cls(audience=False, principal=False, expiry=False, request=False)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class StateIssuer:
    """Mints and verifies requestState claims on top of a codec (MRTR-S4, MRTR-S5a-c).

    No I/O; the clock and the token-id source are arguments. ``codec`` may be swapped at run
    time, and so may a keyed codec's ``keys`` (a rotation phase, see ``keyring.py``).
    ``token_ids`` must give 16 base64url characters, unique per state (``new_token_id``).
    """

    def __init__(
        self,
        codec: StateCodec,
        *,
        audience: str = "mrtr-kit",
        ttl_s: int = DEFAULT_TTL_S,
        skew_s: int = CLOCK_SKEW_S,
        checks: StateChecks | None = None,
        now: Callable[[], float] = time.time,
        token_ids: Callable[[], str] = new_token_id,
        flow_ids: Callable[[], str] = new_flow_id,
    ) -> None:
        """``audience`` goes into ``aud``; a state lives ``ttl_s`` seconds (``DEFAULT_TTL_S``: 15
        minutes, SEC-4, KIT), with ``skew_s`` of clock tolerance; ``checks`` picks the bindings
        ``verify`` enforces (all by default); ``now`` is the clock, ``token_ids`` the ``jti``
        source, ``flow_ids`` the ``flow`` source (``new_flow_id``)."""
        self.codec = codec
        self.audience = audience
        self.ttl_s = ttl_s
        self.skew_s = skew_s
        self.checks = checks or StateChecks()
        self.now = now
        self.token_ids = token_ids
        self.flow_ids = flow_ids

    def new_flow(self) -> str:
        """A flow id for a call's first round, from ``flow_ids``; raises ``ValueError`` if
        that source gives a malformed one (``verify`` would refuse every state carrying it)."""
        flow = self.flow_ids()
        if _FLOW.fullmatch(flow) is None:
            raise ValueError(f"flow id {flow!r} is not 22 base64url characters")
        return flow

    def mint(
        self,
        binding: StateBinding,
        asked: list[str],
        data: dict[str, Any] | None,
        flow: str | None = None,
    ) -> str:
        """A sealed requestState bound to ``binding``, recording the ``asked`` keys, the
        handler's ``data`` (``None`` when the handler keeps none: the core still records
        what it asked, MRTR-E3) and the call's ``flow`` (``None``: a new flow).

        It expires ``ttl_s`` after now (``DEFAULT_TTL_S``: 15 minutes, SEC-4, KIT). Raises
        ``ValueError`` if ``token_ids`` gives a malformed ``jti``."""
        now = int(self.now())
        jti = self.token_ids()
        if _JTI.fullmatch(jti) is None:
            # verify() would refuse the state: a broken source fails here, loudly.
            raise ValueError(f"token id {jti!r} is not 16 base64url characters")
        if flow is None:
            flow = self.new_flow()
        claims = {
            "aud": self.audience,
            "sub": binding.principal,
            "iat": now,
            "exp": now + self.ttl_s,
            "req": binding.digest,
            "asked": sorted(asked),
            "jti": jti,
            "flow": flow,
            "data": data,
        }
        return self.codec.seal(claims)

    def verify(self, token: str, binding: StateBinding) -> dict[str, Any]:
        """The claims of ``token`` if it is genuine and meant for ``binding``; else raises."""
        claims = self.codec.open(token)
        _check_structure(claims)  # SEC-1: even a plain codec's claims are validated
        now, checks = self.now(), self.checks
        if checks.audience and claims["aud"] != self.audience:
            raise InvalidState("wrong audience")
        if checks.principal and claims["sub"] != binding.principal:
            raise InvalidState("issued to another principal")
        if checks.expiry and now > claims["exp"] + self.skew_s:
            raise InvalidState("expired")
        if checks.expiry and claims["iat"] > now + self.skew_s:
            raise InvalidState("issued in the future")
        if checks.request and claims["req"] != binding.digest:
            raise InvalidState("issued for another request")
        return claims

    def spent_until(self, claims: dict[str, Any]) -> float:
        """How long a ledger must remember this state's ``jti``: until no instance would
        accept it anyway. Two instances' clocks may each be ``skew_s`` off, hence twice."""
        return float(claims["exp"] + 2 * self.skew_s)


def _check_structure(claims: dict[str, Any]) -> None:
    types_ok = (
        isinstance(claims.get("aud"), str)
        and "sub" in claims
        and (claims["sub"] is None or isinstance(claims["sub"], str))
        and _is_int(claims.get("iat"))
        and _is_int(claims.get("exp"))
        and isinstance(claims.get("req"), str)
        and isinstance(claims.get("jti"), str)
        and _JTI.fullmatch(claims["jti"]) is not None
        and isinstance(claims.get("flow"), str)
        and _FLOW.fullmatch(claims["flow"]) is not None
        and isinstance(claims.get("asked"), list)
        and all(isinstance(k, str) for k in claims["asked"])
        and "data" in claims
        and (claims["data"] is None or isinstance(claims["data"], dict))
    )
    if not types_ok:
        raise InvalidState("malformed claims")
