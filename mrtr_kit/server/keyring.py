"""The keys that seal and open requestState, and how to rotate them without dropping a round.

A ``KeyRing`` is an ordered list of ``StateKey`` s. The **first** key seals every new state;
**every** key opens one (the token names its key id, so the right one is found at once).
Several instances that serve one fleet must hold the same ring: a retry may reach any of them
(CORE-8, CORE-9: every request stands alone). Give it to every instance from configuration
(``KeyRing.from_env``; ``python -m mrtr_kit serve`` reads it)::

    MRTR_KIT_STATE_KEYS="k2:<64 hex digits>,k1:<64 hex digits>"   # first one seals
    MRTR_KIT_STATE_KEY="<64 hex digits>"                           # one key, id "k0"

Rotation is three phases, each rolled out to *every* instance before the next begins:

1. **add**     ``ring.add(new)``      - the new key opens but does not seal yet. Until every
   instance knows it, no instance may seal with it, or the others reject its states.
2. **promote** ``ring.promote(kid)``  - the new key seals; the old one still opens the states
   issued before, which stay valid until they expire.
3. **retire**  ``ring.retire(old)``   - once the longest state lifetime (TTL + clock skew) has
   passed since the last instance promoted, the old key goes. A leaked old key is now useless.

Secrets are at least 32 random bytes. Each codec derives its own subkey from a secret with
HKDF-SHA256 (RFC 5869), so one configured secret never serves as both an HMAC key and an AES key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

MIN_SECRET_BYTES = 32
KID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,32}$")  # goes into tokens: base64url-safe, short
ENV_KEYS = "MRTR_KIT_STATE_KEYS"
ENV_KEY = "MRTR_KIT_STATE_KEY"
SINGLE_KEY_ID = "k0"  # MRTR_KIT_STATE_KEY=<secret> is MRTR_KIT_STATE_KEYS=k0:<secret>
_HKDF_SALT = b"mrtr-kit requestState"


def derive_key(secret: bytes, purpose: str) -> bytes:
    """HKDF-SHA256 (RFC 5869) with one 32-byte output block: a subkey for one ``purpose``."""
    prk = hmac.new(_HKDF_SALT, secret, hashlib.sha256).digest()  # extract
    return hmac.new(prk, purpose.encode() + b"\x01", hashlib.sha256).digest()  # expand, T(1)


def decode_secret(text: str) -> bytes:
    """A secret written as hex (64+ digits) or unpadded base64url (43+ characters)."""
    text = text.strip()
    try:
        return bytes.fromhex(text)
    except ValueError:
        pass
    if not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        raise ValueError("a state key secret must be hex or base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ValueError("a state key secret must be hex or base64url") from exc


@dataclass(frozen=True)
class StateKey:
    """One secret and the id that tokens sealed with it carry."""

    kid: str
    secret: bytes = field(repr=False)  # never printed, logged or shown in a notebook

    def __post_init__(self) -> None:
        if not KID_PATTERN.match(self.kid):
            raise ValueError(f"key id {self.kid!r} must be 1-32 characters of [A-Za-z0-9_-]")
        if len(self.secret) < MIN_SECRET_BYTES:
            raise ValueError(f"key {self.kid!r} needs at least {MIN_SECRET_BYTES} bytes of secret")

    @classmethod
    def generate(cls, kid: str) -> StateKey:
        """A fresh key ``kid`` with a random secret of ``MIN_SECRET_BYTES`` bytes."""
        return cls(kid, secrets.token_bytes(MIN_SECRET_BYTES))

    def to_spec(self) -> str:
        """``kid:hex``, the form ``KeyRing.parse`` and ``MRTR_KIT_STATE_KEYS`` read."""
        return f"{self.kid}:{self.secret.hex()}"


class KeyRing:
    """Ordered keys: ``keys[0]`` seals, every key opens. Immutable: a phase returns a new ring."""

    def __init__(self, keys: Iterable[StateKey]) -> None:
        self._keys = tuple(keys)
        if not self._keys:
            raise ValueError("a key ring needs at least one key")
        kids = [k.kid for k in self._keys]
        if len(set(kids)) != len(kids):
            raise ValueError(f"key ids must be unique: {kids}")
        self._by_kid: Mapping[str, StateKey] = {k.kid: k for k in self._keys}

    # -- reading -------------------------------------------------------------------------------

    @property
    def primary(self) -> StateKey:
        """The key that seals new states."""
        return self._keys[0]

    @property
    def kids(self) -> list[str]:
        """The key ids, the sealing (primary) one first."""
        return [k.kid for k in self._keys]

    def get(self, kid: str) -> StateKey | None:
        """The key ``kid``, or None."""
        return self._by_kid.get(kid)

    def __iter__(self) -> Iterator[StateKey]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyRing) and self._keys == other._keys

    def __hash__(self) -> int:
        return hash(self._keys)

    def __repr__(self) -> str:
        return f"KeyRing({self.kids})"  # ids only: secrets stay out of logs and notebooks

    # -- the three rotation phases -------------------------------------------------------------

    def add(self, key: StateKey) -> KeyRing:
        """Phase 1: ``key`` opens states but does not seal yet (it goes last)."""
        return KeyRing([*self._keys, key])

    def promote(self, kid: str) -> KeyRing:
        """Phase 2: ``kid`` seals from now on; the others keep opening."""
        key = self._require(kid)
        return KeyRing([key, *(k for k in self._keys if k.kid != kid)])

    def retire(self, kid: str) -> KeyRing:
        """Phase 3: ``kid`` opens nothing any more. The sealing key cannot be retired."""
        if self._require(kid) is self.primary:
            raise ValueError(f"{kid!r} seals new states: promote another key before retiring it")
        return KeyRing(k for k in self._keys if k.kid != kid)

    def _require(self, kid: str) -> StateKey:
        key = self._by_kid.get(kid)
        if key is None:
            raise KeyError(f"no key {kid!r} in {self!r}")
        return key

    # -- building rings ------------------------------------------------------------------------

    @classmethod
    def single(cls, secret: bytes, kid: str = SINGLE_KEY_ID) -> KeyRing:
        """A ring of one key: ``secret`` under ``kid``."""
        return cls([StateKey(kid, secret)])

    @classmethod
    def generate(cls, kid: str = SINGLE_KEY_ID) -> KeyRing:
        """A fresh random key: fine for one process, but its states die with the process."""
        return cls([StateKey.generate(kid)])

    @classmethod
    def parse(cls, spec: str) -> KeyRing:
        """``"k2:<secret>,k1:<secret>"`` (hex or base64url secrets); the first one seals."""
        keys = []
        for item in spec.split(","):
            kid, sep, secret = item.strip().partition(":")
            if not sep:
                raise ValueError("each key is written kid:secret, separated by commas")
            keys.append(StateKey(kid, decode_secret(secret)))
        return cls(keys)

    def to_spec(self) -> str:
        """``kid:hex,...``, primary first: the form ``parse`` and ``MRTR_KIT_STATE_KEYS`` read."""
        return ",".join(k.to_spec() for k in self._keys)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> KeyRing | None:
        """``MRTR_KIT_STATE_KEYS``, else ``MRTR_KIT_STATE_KEY``, else None (neither is set).

        The one place the kit reads its state keys from the environment. Every instance of a
        fleet must be given the same ring, or a retry that lands on another instance is
        rejected; a single process may say ``KeyRing.from_env() or KeyRing.generate()``.
        """
        env = os.environ if environ is None else environ
        if env.get(ENV_KEYS, "").strip():
            return cls.parse(env[ENV_KEYS])
        if env.get(ENV_KEY, "").strip():
            return cls.single(decode_secret(env[ENV_KEY]))
        return None
