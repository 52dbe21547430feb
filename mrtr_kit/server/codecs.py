"""requestState codecs: how claims become the opaque string a client echoes, and back.

requestState travels through the client, so whatever comes back is attacker-controlled input
(MRTR-S4). Three codecs share one interface (``StateCodec``), from weakest to strongest:

============ ========================================= ============= =================
codec        token                                     integrity     confidentiality
============ ========================================= ============= =================
``plain``    ``plain1.<payload>``                      none          none
``hmac``     ``hmac1.<kid>.<payload>.<tag>``           HMAC-SHA256   none (SEC-8)
``aead``     ``aead1.<kid>.<nonce>.<ciphertext>``      AES-256-GCM   yes
============ ========================================= ============= =================

``plain`` is **unsafe** and exists only so a lesson can forge it: anyone can edit the claims
(MRTR-S4a forbids it wherever state affects authorisation, resources or business logic).
``hmac`` stops edits but the client can read every claim. ``aead`` stops both, and is the
default (``DEFAULT_CODEC``): ``McpServer`` and ``python -m mrtr_kit serve`` use it unless told
otherwise.

Rules every codec keeps:

* a size cap before any parsing (a client cannot make the server decode a huge blob);
* the first dot-separated field names the format; each codec opens only its own, so an
  attacker cannot downgrade an ``aead1`` server to ``plain1`` or ``hmac1``;
* strict base64url: URL-safe alphabet, no padding, canonical trailing bits;
* the header (format, key id, nonce) is under the tag: HMAC covers it, AES-GCM takes it as
  associated data, so swapping the key id or the format breaks the tag;
* tags compared in constant time (SEC-2);
* the payload is a JSON object with no duplicate keys and no NaN/Infinity.

A failure raises ``InvalidState`` with a reason for the server log; the wire gets one fixed
error (``state.invalid_state_error``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import os
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .keyring import KeyRing, derive_key

MAX_TOKEN_BYTES = 16 * 1024  # the size cap: never parse an arbitrarily large blob
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
NONCE_BYTES = 12  # AES-GCM's standard nonce size (NIST SP 800-38D)
GCM_TAG_BYTES = 16


class InvalidState(Exception):
    """requestState failed a check. ``reason`` is for the server log only, never the wire."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# -- encoding helpers ------------------------------------------------------------------------


def b64url(data: bytes) -> str:
    """``data`` as base64url text without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """Strict base64url: URL-safe alphabet only, no padding, canonical trailing bits."""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise InvalidState("not base64url")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidState("not base64url") from exc
    if b64url(raw) != text:  # two spellings of the same bytes: only the canonical one passes
        raise InvalidState("non-canonical base64url")
    return raw


# Built once: json.dumps with options builds a new encoder on every call.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(obj: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8; NaN and Infinity refused (they are not JSON)."""
    return _CANONICAL.encode(obj).encode()


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise InvalidState("duplicate key in payload")
    return result


def _no_special_floats(name: str) -> Any:
    raise InvalidState(f"{name} in payload")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # "1e999" overflows to inf without passing parse_constant
        raise InvalidState("number out of range in payload")
    return value


def parse_claims(raw: bytes) -> dict[str, Any]:
    """The payload bytes as a JSON object, strictly."""
    try:
        claims = json.loads(
            raw.decode("utf-8"),
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_special_floats,
            parse_float=_finite_float,
        )
    except (ValueError, RecursionError) as exc:  # bad UTF-8, bad JSON, an int too long
        raise InvalidState("payload is not JSON") from exc
    if not isinstance(claims, dict):
        raise InvalidState("payload is not an object")
    return claims


def split_token(token: Any, fmt: str, fields: int) -> list[str]:
    """Size cap, then ``fields`` dot-separated parts whose first one is exactly ``fmt``."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_BYTES:
        raise InvalidState("missing or oversized token")
    if not token.isascii():  # every field is base64url: one byte per character
        raise InvalidState("not ASCII")
    parts = token.split(".")
    if parts[0] != fmt:
        raise InvalidState(f"not a {fmt} token")
    if len(parts) != fields:
        raise InvalidState("wrong number of fields")
    return parts


# -- the interface ---------------------------------------------------------------------------


class StateCodec(Protocol):
    """Turns a claims dict into a token string and back; raises ``InvalidState`` on failure."""

    @property
    def format(self) -> str:
        """The token's first field, e.g. ``"hmac1"``."""
        ...

    def seal(self, claims: Mapping[str, Any]) -> str:
        """``claims`` as a token string starting with ``format``."""
        ...

    def open(self, token: str) -> dict[str, Any]:
        """The claims of ``token``; raises ``InvalidState`` if it is not genuine or malformed."""
        ...


class PlainStateCodec:
    """UNSAFE - teaching only. base64url JSON with no protection at all: a client can read and
    rewrite every claim. Use it to watch a forgery succeed; never in a server (MRTR-S4a)."""

    format: ClassVar[str] = "plain1"
    unsafe: ClassVar[bool] = True

    def seal(self, claims: Mapping[str, Any]) -> str:
        """``plain1.<base64url JSON>``: the claims readable and editable by anyone."""
        return f"{self.format}.{b64url(canonical_json(dict(claims)))}"

    def open(self, token: str) -> dict[str, Any]:
        """The claims of a ``plain1`` token; ``InvalidState`` if it is malformed (nothing else is
        checked)."""
        _, payload = split_token(token, self.format, 2)
        return parse_claims(unb64url(payload))


class _KeyedCodec:
    """Shared by the keyed codecs: a ``keys`` ring whose subkeys are derived once per ring."""

    format: ClassVar[str]
    unsafe: ClassVar[bool] = False

    def __init__(self, keys: KeyRing | bytes) -> None:
        self.keys = keys if isinstance(keys, KeyRing) else KeyRing.single(keys)

    @property
    def keys(self) -> KeyRing:
        return self._keys

    @keys.setter
    def keys(self, ring: KeyRing) -> None:
        """Swap the ring at run time (a rotation phase); the subkeys follow."""
        self._keys = ring
        # Domain separation: this codec's subkey, never the configured secret itself.
        self._load({k.kid: derive_key(k.secret, self.format) for k in ring})

    def _load(self, subkeys: dict[str, bytes]) -> None:
        self._subkeys = subkeys

    def _subkey(self, kid: str) -> bytes:
        subkey = self._subkeys.get(kid)
        if subkey is None:
            raise InvalidState(f"unknown key id {kid!r}")  # never issued here, or retired
        return subkey


class HmacStateCodec(_KeyedCodec):
    """Integrity without confidentiality: ``hmac1.<kid>.<payload>.<tag>``, where the tag is
    HMAC-SHA256 over ``hmac1.<kid>.<payload>``. Edits are caught; the payload is readable."""

    format: ClassVar[str] = "hmac1"

    def _tag(self, subkey: bytes, signed: str) -> bytes:
        return hmac.new(subkey, signed.encode("ascii"), hashlib.sha256).digest()

    def seal(self, claims: Mapping[str, Any]) -> str:
        """An ``hmac1`` token for ``claims``, tagged with the ring's primary key."""
        kid = self.keys.primary.kid
        signed = f"{self.format}.{kid}.{b64url(canonical_json(dict(claims)))}"
        return f"{signed}.{b64url(self._tag(self._subkey(kid), signed))}"

    def open(self, token: str) -> dict[str, Any]:
        """The claims of an ``hmac1`` token once its tag checks out (constant time, SEC-2).

        Raises ``InvalidState`` for a malformed token, an unknown key id or a bad tag."""
        _, kid, payload, tag = split_token(token, self.format, 4)
        expected = self._tag(self._subkey(kid), f"{self.format}.{kid}.{payload}")
        if not hmac.compare_digest(unb64url(tag), expected):  # constant time (SEC-2)
            raise InvalidState("bad tag")
        return parse_claims(unb64url(payload))  # parsed only after the tag checked out


class AeadStateCodec(_KeyedCodec):
    """Integrity and confidentiality: ``aead1.<kid>.<nonce>.<ciphertext>``, AES-256-GCM with
    a random 96-bit nonce and ``aead1.<kid>.<nonce>`` as associated data (SEC-8).

    Random nonces are safe for about 2**32 states per key (NIST SP 800-38D): rotate keys
    long before that.
    """

    format: ClassVar[str] = "aead1"

    def _load(self, subkeys: dict[str, bytes]) -> None:
        super()._load(subkeys)
        self._ciphers = {kid: AESGCM(subkey) for kid, subkey in subkeys.items()}

    def seal(self, claims: Mapping[str, Any]) -> str:
        """An ``aead1`` token: ``claims`` encrypted under the primary key, with a fresh nonce."""
        kid = self.keys.primary.kid
        nonce = os.urandom(NONCE_BYTES)  # fresh per state: never reuse a nonce under one key
        header = f"{self.format}.{kid}.{b64url(nonce)}"
        sealed = self._ciphers[kid].encrypt(nonce, canonical_json(dict(claims)), header.encode())
        return f"{header}.{b64url(sealed)}"

    def open(self, token: str) -> dict[str, Any]:
        """The decrypted claims of an ``aead1`` token (SEC-2).

        Raises ``InvalidState`` for a malformed token, an unknown key id, or a failed decryption."""
        _, kid, nonce_text, sealed_text = split_token(token, self.format, 4)
        cipher = self._ciphers.get(kid)
        if cipher is None:
            raise InvalidState(f"unknown key id {kid!r}")
        nonce, sealed = unb64url(nonce_text), unb64url(sealed_text)
        if len(nonce) != NONCE_BYTES or len(sealed) < GCM_TAG_BYTES:
            raise InvalidState("malformed nonce or ciphertext")
        header = f"{self.format}.{kid}.{nonce_text}".encode()
        try:
            # GCM checks the tag in constant time before releasing any plaintext (SEC-2).
            plaintext = cipher.decrypt(nonce, sealed, header)
        except InvalidTag:
            raise InvalidState("bad tag") from None
        return parse_claims(plaintext)


CODEC_KINDS = ("plain", "hmac", "aead")
# The codec a server gets when nobody chooses one: the client can neither edit nor read what
# a handler keeps in its state (SEC-8). "hmac" stays available by name for a lesson that shows
# what a tag alone leaves readable.
DEFAULT_CODEC = "aead"


def make_codec(kind: str, keys: KeyRing | None = None) -> StateCodec:
    """``"plain"`` (unsafe, lessons only), ``"hmac"`` or ``"aead"`` over ``keys``."""
    if kind == "plain":
        return PlainStateCodec()
    if kind not in CODEC_KINDS:
        raise ValueError(f"unknown requestState codec {kind!r}; choose from {CODEC_KINDS}")
    if keys is None:
        raise ValueError(f"the {kind} codec needs a key ring")
    return HmacStateCodec(keys) if kind == "hmac" else AeadStateCodec(keys)
