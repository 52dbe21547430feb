"""The requestState codecs, key ring and claims, one property at a time (digest §7, SEC-*).

The attacks live in ``test_security_redteam.py``; this module checks that each codec does
what its docstring promises when nobody attacks it.
"""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from helpers import T0, call, error, result, stateful

from mrtr_kit.server import McpServer
from mrtr_kit.server.codecs import (
    MAX_TOKEN_BYTES,
    AeadStateCodec,
    HmacStateCodec,
    InvalidState,
    PlainStateCodec,
    b64url,
    canonical_json,
    make_codec,
    parse_claims,
    unb64url,
)
from mrtr_kit.server.keyring import (
    ENV_KEY,
    ENV_KEYS,
    SINGLE_KEY_ID,
    KeyRing,
    StateKey,
    decode_secret,
    derive_key,
)
from mrtr_kit.server.state import StateBinding, StateChecks, StateIssuer, request_digest

SECRET_1 = bytes(range(32))
SECRET_2 = bytes(range(100, 132))
CLAIMS = {"aud": "s", "sub": "alice", "data": {"amount": 12450, "note": "internal"}}
KEY = b"s" * 32
INVALID_STATE = {"reason": "invalid_request_state"}


def ring(*kids: str) -> KeyRing:
    return KeyRing(StateKey(kid, bytes([i]) * 32) for i, kid in enumerate(kids, 1))


# --- token formats -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["plain", "hmac", "aead"])
def test_every_codec_round_trips_claims(kind):
    codec = make_codec(kind, ring("k1"))
    token = codec.seal(CLAIMS)
    assert token.isascii() and " " not in token
    assert codec.open(token) == CLAIMS


def test_token_formats_name_the_codec_and_the_key():
    """KIT: a versioned format; keyed formats carry the key id that sealed them."""
    keys = ring("k1")
    assert PlainStateCodec().seal(CLAIMS).split(".")[0] == "plain1"
    hmac_fields = HmacStateCodec(keys).seal(CLAIMS).split(".")
    assert hmac_fields[:2] == ["hmac1", "k1"] and len(hmac_fields) == 4
    assert len(unb64url(hmac_fields[3])) == 32  # a full SHA-256 tag, never truncated
    aead_fields = AeadStateCodec(keys).seal(CLAIMS).split(".")
    assert aead_fields[:2] == ["aead1", "k1"] and len(aead_fields) == 4
    assert len(unb64url(aead_fields[2])) == 12  # 96-bit GCM nonce


def test_plain_codec_is_labelled_unsafe_and_the_keyed_ones_are_not():
    assert PlainStateCodec.unsafe is True
    assert "UNSAFE" in (PlainStateCodec.__doc__ or "")
    assert HmacStateCodec.unsafe is False and AeadStateCodec.unsafe is False


def test_hmac_payload_is_readable_by_anyone_sec8():
    """SEC-8: HMAC gives integrity only; the client can decode every claim."""
    token = HmacStateCodec(ring("k1")).seal(CLAIMS)
    assert json.loads(unb64url(token.split(".")[2])) == CLAIMS


def test_aead_hides_the_payload_sec8():
    """SEC-8: with AES-256-GCM no claim shows in the token, in any field, decoded or not."""
    token = AeadStateCodec(ring("k1")).seal(CLAIMS)
    assert "internal" not in token and "alice" not in token
    for text in token.split(".")[1:]:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        assert b"internal" not in raw and b"alice" not in raw and b"12450" not in raw


def test_aead_uses_a_fresh_nonce_every_time():
    codec = AeadStateCodec(ring("k1"))
    nonces = {codec.seal(CLAIMS).split(".")[2] for _ in range(200)}
    assert len(nonces) == 200


def test_hmac_tag_is_hmac_sha256_of_the_header_and_payload_under_a_derived_key():
    """The tag covers ``hmac1.<kid>.<payload>``, keyed with the codec's HKDF subkey."""
    import hashlib
    import hmac

    token = HmacStateCodec(KeyRing.single(SECRET_1, "k1")).seal(CLAIMS)
    signed, tag = token.rsplit(".", 1)
    subkey = derive_key(SECRET_1, "hmac1")
    assert unb64url(tag) == hmac.new(subkey, signed.encode(), hashlib.sha256).digest()
    assert unb64url(tag) != hmac.new(SECRET_1, signed.encode(), hashlib.sha256).digest()


def test_derive_key_is_rfc5869_hkdf_sha256():
    """The stdlib HKDF equals the cryptography package's, and each purpose gets its own key."""
    reference = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=b"mrtr-kit requestState", info=b"aead1"
    ).derive(SECRET_1)
    assert derive_key(SECRET_1, "aead1") == reference
    assert derive_key(SECRET_1, "aead1") != derive_key(SECRET_1, "hmac1")


def test_hmac_and_aead_under_one_secret_never_open_each_others_tokens():
    keys = KeyRing.single(SECRET_1, "k1")
    hmac_codec, aead_codec = HmacStateCodec(keys), AeadStateCodec(keys)
    with pytest.raises(InvalidState):
        aead_codec.open(hmac_codec.seal(CLAIMS))
    with pytest.raises(InvalidState):
        hmac_codec.open(aead_codec.seal(CLAIMS))


def test_a_codec_accepts_a_bare_secret_as_a_one_key_ring():
    codec = HmacStateCodec(SECRET_1)
    assert codec.keys.kids == [SINGLE_KEY_ID]


def test_make_codec_refuses_unknown_kinds_and_keyless_keyed_codecs():
    with pytest.raises(ValueError, match="unknown"):
        make_codec("rot13", ring("k1"))
    with pytest.raises(ValueError, match="key ring"):
        make_codec("aead")


# --- strict parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["YQ==", "YQ=", "YR", "Y", "a+b/", "a b", "YQ\n", "ｙQ"],
    ids=["padded", "half-padded", "non-canonical-bits", "one-char", "std-alphabet", "space",
         "newline", "fullwidth"],
)  # fmt: skip
def test_unb64url_is_strict(text):
    with pytest.raises(InvalidState):
        unb64url(text)


def test_unb64url_accepts_canonical_text():
    assert unb64url("YQ") == b"a" and unb64url("") == b""


@pytest.mark.parametrize(
    "raw",
    [
        b"[1]",
        b'"x"',
        b"1",
        b'{"a":1,"a":2}',
        b'{"a":NaN}',
        b'{"a":Infinity}',
        b'{"a":1e999}',
        b'{"a":' + b"9" * 5000 + b"}",
        b"\xff",
        b"{",
        b"[" * 100_000,
    ],
    ids=["list", "string", "number", "duplicate-key", "nan", "infinity", "overflow",
         "huge-int", "bad-utf8", "truncated", "deep-nesting"],
)  # fmt: skip
def test_payload_must_be_a_strict_json_object(raw):
    with pytest.raises(InvalidState):
        parse_claims(raw)


def test_size_cap_is_checked_before_anything_is_decoded():
    codec = PlainStateCodec()
    big = "plain1." + b64url(canonical_json({"data": "x" * MAX_TOKEN_BYTES}))
    with pytest.raises(InvalidState, match="oversized"):
        codec.open(big)
    with pytest.raises(InvalidState):
        codec.open(None)  # type: ignore[arg-type]


# --- the key ring --------------------------------------------------------------------------------


def test_first_key_seals_every_key_opens():
    old, new = StateKey("k1", SECRET_1), StateKey("k2", SECRET_2)
    before = HmacStateCodec(KeyRing([old]))
    after = HmacStateCodec(KeyRing([new, old]))
    token = before.seal(CLAIMS)
    assert after.open(token) == CLAIMS  # the old key still opens
    assert after.seal(CLAIMS).split(".")[1] == "k2"  # the new key seals


def test_rotation_phases_add_promote_retire():
    k1, k2 = StateKey("k1", SECRET_1), StateKey("k2", SECRET_2)
    start = KeyRing([k1])
    added = start.add(k2)
    assert added.kids == ["k1", "k2"] and added.primary is k1  # phase 1: opens, does not seal
    promoted = added.promote("k2")
    assert promoted.kids == ["k2", "k1"]  # phase 2: seals
    retired = promoted.retire("k1")
    assert retired.kids == ["k2"]  # phase 3: gone
    assert start.kids == ["k1"]  # rings are immutable
    with pytest.raises(ValueError, match="promote another key"):
        promoted.retire("k2")
    with pytest.raises(KeyError):
        start.promote("k9")


def test_swapping_a_codecs_ring_takes_effect_at_once():
    codec = HmacStateCodec(KeyRing([StateKey("k1", SECRET_1)]))
    token = codec.seal(CLAIMS)
    codec.keys = KeyRing([StateKey("k2", SECRET_2)])
    with pytest.raises(InvalidState, match="unknown key id"):
        codec.open(token)


@pytest.mark.parametrize(
    ("kid", "secret"),
    [("", SECRET_1), ("a.b", SECRET_1), ("k" * 33, SECRET_1), ("k1", b"short")],
)
def test_state_keys_are_validated(kid, secret):
    with pytest.raises(ValueError):
        StateKey(kid, secret)


def test_key_ids_are_unique_and_rings_are_not_empty():
    with pytest.raises(ValueError, match="unique"):
        KeyRing([StateKey("k1", SECRET_1), StateKey("k1", SECRET_2)])
    with pytest.raises(ValueError, match="at least one"):
        KeyRing([])


def test_secrets_never_show_in_reprs():
    key = StateKey("k1", SECRET_1)
    keys = KeyRing([key])
    for text in (repr(key), repr(keys), str(keys)):
        assert SECRET_1.hex() not in text and str(SECRET_1) not in text
    assert repr(keys) == "KeyRing(['k1'])"


def test_ring_from_configuration_text_and_environment():
    """Keys from configuration, so that several instances share them: hex or base64url."""
    spec = f"k2:{SECRET_2.hex()}, k1:{b64url(SECRET_1)}"
    parsed = KeyRing.parse(spec)
    assert parsed.kids == ["k2", "k1"] and parsed.get("k1").secret == SECRET_1
    assert KeyRing.parse(parsed.to_spec()) == parsed
    assert KeyRing.from_env({ENV_KEYS: spec}) == parsed
    single = KeyRing.from_env({ENV_KEY: SECRET_1.hex()})
    assert single.kids == [SINGLE_KEY_ID] and single.primary.secret == SECRET_1
    assert KeyRing.from_env({}) is None  # no key made up: the caller says what it wants
    random_a, random_b = KeyRing.generate(), KeyRing.generate()
    assert random_a.primary.secret != random_b.primary.secret
    with pytest.raises(ValueError):
        KeyRing.parse("k1")
    with pytest.raises(ValueError):
        decode_secret("not a secret!")


def test_two_servers_from_one_environment_open_each_others_states(monkeypatch):
    """CORE-8 / CORE-9: the fleet shares the ring from the environment, so any instance
    serves a retry."""
    monkeypatch.setenv(ENV_KEYS, f"k2:{SECRET_2.hex()},k1:{SECRET_1.hex()}")
    a, b = (McpServer("fleet", state_keys=KeyRing.from_env()) for _ in range(2))
    binding = StateBinding("alice", "digest")
    assert b.states.verify(a.states.mint(binding, [], {"x": 1}), binding)["data"] == {"x": 1}


def test_a_codec_object_and_separate_keys_are_refused():
    with pytest.raises(ValueError, match="holds its own keys"):
        McpServer("s", state_codec=HmacStateCodec(SECRET_1), state_key=SECRET_2)


def test_kit_a_codec_object_and_a_key_ring_are_refused_together():
    """KIT: a codec object holds its own keys; passing ``state_keys`` as well is refused
    rather than silently ignored.

    Kills: ``state_keys is not None`` dropped from that check.
    """
    from mrtr_kit.server.keyring import KeyRing

    with pytest.raises(ValueError, match="holds its own keys"):
        McpServer("s", state_codec=HmacStateCodec(KEY), state_keys=KeyRing.single(KEY))


# --- claims --------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def issuer(clock: Clock, **kw) -> StateIssuer:
    return StateIssuer(HmacStateCodec(ring("k1")), audience="refunds", now=clock, **kw)


def test_minted_claims_hold_every_binding():
    """MRTR-S5a-c, SEC-6: principal, issued-at, expiry, request, audience, asked, token id."""
    clock = Clock()
    states = issuer(clock, ttl_s=600)
    digest = request_digest("tools/call", "request_refund", {"order_id": "A-1001"})
    token = states.mint(StateBinding("alice", digest), ["confirm"], {"n": 1})
    claims = states.codec.open(token)
    assert claims == {
        "aud": "refunds",
        "sub": "alice",
        "iat": 1_800_000_000,
        "exp": 1_800_000_600,
        "req": digest,
        "asked": ["confirm"],
        "jti": claims["jti"],
        "data": {"n": 1},
    }
    assert len(claims["jti"]) == 16
    assert states.spent_until(claims) == 1_800_000_600 + 2 * states.skew_s


def test_request_digest_covers_method_target_and_arguments():
    """SEC-5: any change to method, name/URI or arguments changes the digest; key order not."""
    base = request_digest("tools/call", "t", {"a": 1, "b": [1, 2]})
    assert base == request_digest("tools/call", "t", {"b": [1, 2], "a": 1})
    assert base != request_digest("prompts/get", "t", {"a": 1, "b": [1, 2]})
    assert base != request_digest("tools/call", "u", {"a": 1, "b": [1, 2]})
    assert base != request_digest("tools/call", "t", {"a": 1, "b": [2, 1]})
    assert base != request_digest("tools/call", "t", {"a": "1", "b": [1, 2]})
    assert request_digest("tools/call", "t", None) == request_digest("tools/call", "t", {})


def test_clock_skew_is_bounded_both_ways():
    """MRTR-S5b: accepted up to ``exp + skew``; a state "issued" beyond ``now + skew`` is not."""
    clock = Clock()
    states = issuer(clock, ttl_s=600, skew_s=30)
    binding = StateBinding("alice", "d")
    token = states.mint(binding, [], {})
    clock.t += 600 + 30
    states.verify(token, binding)  # at the edge of the tolerance: still fine
    clock.t += 1
    with pytest.raises(InvalidState, match="expired"):
        states.verify(token, binding)
    clock.t = 1_800_000_000.0 - 31  # the verifier's clock runs behind the issuer's by > skew
    with pytest.raises(InvalidState, match="future"):
        states.verify(token, binding)


def test_integrity_only_checks_switch_every_binding_off():
    """The lesson's weak server: the tag is still checked, none of the claims."""
    clock = Clock()
    states = issuer(clock, checks=StateChecks.integrity_only())
    token = states.mint(StateBinding("alice", "d1"), [], {})
    clock.t += 10 * 3600
    assert states.verify(token, StateBinding("mallory", "d2"))["sub"] == "alice"
    with pytest.raises(InvalidState, match="bad tag"):
        states.verify(token[:-2] + ("AA" if token[-2:] != "AA" else "BA"), StateBinding(None, "d"))


# --- claims as a server checks them, through McpServer.handle ---------------------------------


def test_sec_4_a_servers_state_ttl_setting_is_honoured():
    """SEC-4: the state lifetime is configurable; ``state_ttl_s=60`` means a state is refused
    after 60 s (plus the 30 s clock tolerance), not after the 15-minute default.

    Kills: ``ttl_s`` dropped or renamed where McpServer passes ``state_ttl_s`` on.
    """
    s, clock = stateful(state_key=KEY, state_ttl_s=60)
    state = result(call(s, "tools/call", {"name": "step"}))["requestState"]
    clock[0] = T0 + 91
    err = error(call(s, "tools/call", {"name": "step", "requestState": state}))
    assert err["data"] == INVALID_STATE
