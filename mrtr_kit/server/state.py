"""Protecting requestState: it travels through the client, so it is attacker-controlled input
(MRTR-S4, SEC-1).

The kit's first line of defence is an HMAC-SHA256 token over a versioned envelope::

    v1.<base64url(canonical JSON claims)>.<base64url(HMAC-SHA256(key, "v1." + payload))>

The claims carry what the server needs to trust the state again on a later round:

* ``sub``   the principal it was issued to (MRTR-S5a),
* ``iat`` / ``exp``  issued-at and expiry, seconds since the epoch (MRTR-S5b),
* ``req``   a digest of method + tool/prompt name or resource URI + arguments (MRTR-S5c),
* ``asked`` the input-request keys the server asked for with this state (SEC-6),
* ``jti``   a random token id, so two states are never equal and a ledger can spend it once,
* ``data``  the handler's own state (what it carries forward between rounds).

HMAC gives integrity, not confidentiality: the client can read ``data`` (SEC-8).
Every failure raises ``InvalidState`` with a reason for the server log; the wire always gets one
fixed error (see ``core``), so a forger learns nothing from the answer.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..protocol.errors import McpError, invalid_params

TOKEN_VERSION = "v1"
MAX_TOKEN_BYTES = 16 * 1024  # a size cap: never parse an arbitrarily large blob
DEFAULT_TTL_S = 15 * 60  # SEC-4 (KIT): humans answer forms slowly
CLOCK_SKEW_S = 30  # tolerated difference between instances' clocks
_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")


INVALID_STATE_MESSAGE = "Invalid requestState"
INVALID_STATE_DATA = {"reason": "invalid_request_state"}


def invalid_state_error() -> McpError:
    """The one answer for every requestState rejection (SEC-2, KIT): a forger learns nothing."""
    return invalid_params(INVALID_STATE_MESSAGE, dict(INVALID_STATE_DATA))


class InvalidState(Exception):
    """requestState failed a check. ``reason`` is for the server log only, never the wire."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """Strict base64url: URL-safe alphabet only, no padding, canonical trailing bits."""
    if not _B64URL.match(text) or len(text) % 4 == 1:
        raise InvalidState("not base64url")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidState("not base64url") from exc
    if b64url(raw) != text:  # reject non-canonical encodings of the same bytes
        raise InvalidState("non-canonical base64url")
    return raw


def canonical_json(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def request_digest(method: str, target: str, arguments: Any) -> str:
    """SEC-5: what the state is bound to: method, tool/prompt name or resource URI, arguments."""
    key = {"method": method, "target": target, "arguments": arguments or {}}
    return b64url(hashlib.sha256(canonical_json(key)).digest())


class HmacStateCodec:
    """Seals and opens claims as an HMAC-SHA256 token. No I/O; the clock is injectable."""

    def __init__(self, key: bytes, *, now: Callable[[], float] = time.time) -> None:
        if len(key) < 32:
            raise ValueError("the requestState key must be at least 32 bytes")
        self._key = key
        self.now = now

    def _tag(self, signed: bytes) -> bytes:
        return hmac.new(self._key, signed, hashlib.sha256).digest()

    def seal(self, claims: dict[str, Any]) -> str:
        payload = b64url(canonical_json(claims))
        signed = f"{TOKEN_VERSION}.{payload}"
        return f"{signed}.{b64url(self._tag(signed.encode()))}"

    def open(self, token: str) -> dict[str, Any]:
        """Verify the tag and return the claims; checks of the claims are ``check_claims``."""
        if not isinstance(token, str) or len(token.encode("utf-8", "replace")) > MAX_TOKEN_BYTES:
            raise InvalidState("missing or oversized token")
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != TOKEN_VERSION:
            raise InvalidState("unknown token format")
        _, payload, tag = parts
        given = unb64url(tag)
        expected = self._tag(f"{TOKEN_VERSION}.{payload}".encode())
        if not hmac.compare_digest(given, expected):  # constant time (SEC-2)
            raise InvalidState("bad signature")
        try:
            claims = json.loads(unb64url(payload))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidState("payload is not JSON") from exc
        if not isinstance(claims, dict):
            raise InvalidState("payload is not an object")
        return claims


@dataclass(frozen=True)
class StateBinding:
    """What a state must match on receipt: who asks, for which request."""

    principal: str | None
    digest: str


class StateIssuer:
    """Mints and verifies requestState claims on top of a codec (MRTR-S4, MRTR-S5a-c)."""

    def __init__(
        self,
        codec: HmacStateCodec,
        *,
        ttl_s: int = DEFAULT_TTL_S,
        audience: str = "mrtr-kit",
    ) -> None:
        self.codec = codec
        self.ttl_s = ttl_s
        self.audience = audience

    def mint(self, binding: StateBinding, asked: list[str], data: dict[str, Any]) -> str:
        now = int(self.codec.now())
        claims = {
            "aud": self.audience,
            "sub": binding.principal,
            "iat": now,
            "exp": now + self.ttl_s,
            "req": binding.digest,
            "asked": sorted(asked),
            "jti": secrets.token_urlsafe(12),
            "data": data,
        }
        return self.codec.seal(claims)

    def verify(self, token: str, binding: StateBinding) -> dict[str, Any]:
        claims = self.codec.open(token)
        now = self.codec.now()
        if claims.get("aud") != self.audience:
            raise InvalidState("wrong audience")
        if claims.get("sub") != binding.principal:
            raise InvalidState("issued to another principal")
        exp, iat = claims.get("exp"), claims.get("iat")
        if not isinstance(exp, int) or not isinstance(iat, int):
            raise InvalidState("missing expiry")
        if now > exp + CLOCK_SKEW_S:
            raise InvalidState("expired")
        if iat > now + CLOCK_SKEW_S:
            raise InvalidState("issued in the future")
        if claims.get("req") != binding.digest:
            raise InvalidState("issued for another request")
        if not isinstance(claims.get("asked"), list) or not isinstance(claims.get("data"), dict):
            raise InvalidState("malformed claims")
        return claims


def key_from_env(var: str = "MRTR_KIT_STATE_KEY") -> bytes:
    """A shared key from the environment (hex or base64url), else a fresh per-process key.

    Several instances serving one fleet must share the key (set the variable); a single
    process on a laptop can use a random one, at the cost of states dying with the process.
    """
    value = os.environ.get(var, "").strip()
    if not value:
        return secrets.token_bytes(32)
    try:
        key = bytes.fromhex(value)
    except ValueError:
        key = unb64url(value)
    if len(key) < 32:
        raise ValueError(f"{var} must hold at least 32 bytes (64 hex digits)")
    return key
