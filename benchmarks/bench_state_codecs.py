"""What protecting requestState costs: seal + open of one state per codec, next to the raw
primitive on the same bytes, in one run.

* plain - base64url JSON (no protection); raw: ``json.dumps`` + base64 and back;
* hmac  - HMAC-SHA256 token; raw: ``hmac.new(...).digest()`` twice (seal, then verify) over
  the same signed bytes, plus ``compare_digest``;
* aead  - AES-256-GCM token; raw: ``AESGCM.encrypt`` + ``AESGCM.decrypt`` of the same
  plaintext and associated data.

Then the whole issuer (mint + verify with every claim checked) and one ledger spend, for
scale. Prints microseconds per operation, best of several repeats. No assertions: figures only.

    .venv/bin/python benchmarks/bench_state_codecs.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import platform
import sys
import tempfile
import timeit
from collections.abc import Callable
from pathlib import Path

import cryptography
from cryptography.hazmat.backends.openssl.backend import backend as openssl
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mrtr_kit.server.codecs import b64url, canonical_json, make_codec, unb64url
from mrtr_kit.server.keyring import KeyRing, StateKey, derive_key
from mrtr_kit.server.ledger import MemoryLedger
from mrtr_kit.server.ledger.sqlite import SqliteLedger
from mrtr_kit.server.state import StateBinding, StateIssuer, request_digest

RING = KeyRing([StateKey("k1", bytes(range(32)))])
BINDING = StateBinding("alice", request_digest("tools/call", "request_refund", {"order_id": "A-1"}))
DATA = {"order": "A-1001", "approved_cents": 12450, "note": "2 refunds in 90 days: watch"}


def per_op_us(fn: Callable[[], object], repeat: int) -> float:
    """Best-of-``repeat`` microseconds per call (timeit picks the loop count)."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def raw_plain(claims: dict[str, object]) -> Callable[[], object]:
    def run() -> object:
        text = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=")
        return json.loads(base64.urlsafe_b64decode(text + b"=" * (-len(text) % 4)))

    return run


def raw_hmac(token: str) -> Callable[[], object]:
    signed, tag_text = token.rsplit(".", 1)
    signed_bytes, key = signed.encode(), derive_key(RING.primary.secret, "hmac1")
    tag = unb64url(tag_text)

    def run() -> object:
        hmac.new(key, signed_bytes, hashlib.sha256).digest()  # seal
        return hmac.compare_digest(tag, hmac.new(key, signed_bytes, hashlib.sha256).digest())

    return run


def raw_aead(claims: dict[str, object]) -> Callable[[], object]:
    cipher = AESGCM(derive_key(RING.primary.secret, "aead1"))
    plaintext, nonce = canonical_json(claims), os.urandom(12)
    aad = f"aead1.k1.{b64url(nonce)}".encode()

    def run() -> object:
        return cipher.decrypt(nonce, cipher.encrypt(nonce, plaintext, aad), aad)

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args(argv).repeat

    print(
        f"Python {platform.python_version()}, cryptography {cryptography.__version__} "
        f"({openssl.openssl_version_text()}), {platform.machine()}"
    )
    issuers = {kind: StateIssuer(make_codec(kind, RING), audience="refunds") for kind in
               ("plain", "hmac", "aead")}  # fmt: skip
    sample_token = issuers["plain"].mint(BINDING, ["confirm"], DATA)
    claims = issuers["plain"].codec.open(sample_token)
    print(f"claims: {len(canonical_json(claims))} bytes of canonical JSON\n")

    raws = {
        "plain": ("json.dumps+b64 and back", raw_plain(claims)),
        "hmac": ("hmac.new x2 + compare_digest", raw_hmac(issuers["hmac"].codec.seal(claims))),
        "aead": ("AESGCM.encrypt+decrypt", raw_aead(claims)),
    }
    header = (
        f"{'codec':6} {'token':>6} {'seal+open':>10}   "
        f"{'raw primitive, same bytes':30} {'raw':>7} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for kind, states in issuers.items():
        codec = states.codec
        token = codec.seal(claims)
        codec_us = per_op_us(lambda codec=codec: codec.open(codec.seal(claims)), repeat)
        label, raw = raws[kind]
        raw_us = per_op_us(raw, repeat)
        print(
            f"{kind:6} {len(token):>5}B {codec_us:>8.2f}us   {label:30} {raw_us:>5.2f}us "
            f"{codec_us / raw_us:>5.1f}x"
        )

    print("\nthe whole issuer: mint + verify (claims built, sealed, opened, every binding checked)")
    for kind in ("hmac", "aead"):
        states = issuers[kind]
        us = per_op_us(
            lambda s=states: s.verify(s.mint(BINDING, ["confirm"], DATA), BINDING), repeat
        )
        print(f"  {kind:6} {us:8.2f}us")

    print("\none ledger spend (MRTR-S5d), for scale")
    memory = MemoryLedger()
    folder = Path(tempfile.mkdtemp(prefix="bench-ledger-"))
    sqlite = SqliteLedger(folder / "spent.sqlite3", create=True)
    for name, ledger, n in (("memory", memory, 2000), ("sqlite", sqlite, 300)):
        ids = [f"{name}-{i}-{os.urandom(4).hex()}" for i in range(n)]

        async def spends(ledger: MemoryLedger | SqliteLedger = ledger, ids: list[str] = ids):
            for token_id in ids:
                await ledger.spend(token_id, 4e9)

        start = timeit.default_timer()
        asyncio.run(spends())
        print(f"  {name:6} {(timeit.default_timer() - start) / n * 1e6:8.1f}us  ({n} spends)")
    asyncio.run(sqlite.aclose())
    return 0


if __name__ == "__main__":
    sys.exit(main())
