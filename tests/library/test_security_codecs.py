"""The requestState codecs, key ring and claims, one property at a time (digest §7, SEC-*).

The attacks live in ``test_security_redteam.py``; this module checks that each codec does
what its docstring promises when nobody attacks it, and (last section) that a server checks
a state's claims - lifetime, clock tolerance, shape - through ``McpServer.handle``.
"""

from __future__ import annotations

import base64
import json
import math
from types import MappingProxyType
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mrtr_kit.protocol.constants import RESULT_INPUT_REQUIRED
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
from tests.helpers import T0, call, error, request, result, run, stateful

SECRET_1 = bytes(range(32))
SECRET_2 = bytes(range(100, 132))
CLAIMS = {"aud": "s", "sub": "alice", "data": {"amount": 12450, "note": "internal"}}
SECRET = SECRET_1
KINDS = ["plain", "hmac", "aead"]
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


@pytest.mark.parametrize("keys", [None, KeyRing.single(SECRET)], ids=["no-keys", "keys"])
def test_sec_2_an_empty_codec_name_is_refused_not_read_as_aead(keys):
    """SEC-2: the codec protecting requestState is chosen on purpose. An empty name (an unset
    setting, ``--state-codec ""``) is refused as unknown, never quietly taken for one of the
    kinds.

    Kills: "plain" emptied in CODEC_KINDS (the empty name would then pass as a known kind).
    """
    with pytest.raises(ValueError, match="unknown requestState codec"):
        make_codec("", keys)


@pytest.mark.parametrize("kind", KINDS)
def test_kit_every_codec_seals_any_mapping_of_claims(kind):
    """KIT: ``StateCodec.seal`` takes any ``Mapping``, such as a read-only view of a handler's
    claims, for every codec alike.

    Kills: the AEAD codec passing the mapping to the JSON encoder without ``dict(...)``.
    """
    codec = make_codec(kind, KeyRing.single(SECRET))
    claims = MappingProxyType({"sub": "alice", "data": {"n": 1}})
    assert codec.open(codec.seal(claims)) == dict(claims)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_sec_1_a_state_that_could_never_be_opened_is_never_sealed(kind, number):
    """SEC-1: the opening side refuses NaN and Infinity (they are not JSON), so sealing them
    fails at once, in the handler that put them there - not later, on the client's retry.

    Kills: ``allow_nan=False`` turned into ``True`` in the claims' JSON.
    """
    codec = make_codec(kind, KeyRing.single(SECRET))
    with pytest.raises(ValueError):
        codec.seal({"data": {"amount": number}})


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


# The 16 KiB size cap is the kit's choice (KIT), not a spec number.
CAP = 16 * 1024  # KIT: the documented size cap, written out so the test does not follow it


def hmac_token_of_length(length: int) -> tuple[object, str]:
    """A genuine hmac token exactly ``length`` characters long (payload and key id sizes are
    tuned until it is; base64url cannot hit every length with the payload alone)."""
    for kid_length in range(1, 5):
        codec = make_codec("hmac", KeyRing([StateKey("k" * kid_length, SECRET)]))
        for n in range(length * 3 // 4 - 120, length * 3 // 4):
            token = codec.seal({"data": "x" * n})
            if len(token) == length:
                return codec, token
    raise AssertionError(f"no token of length {length}")


def test_sec_1_kit_a_16_kib_state_opens_and_one_character_more_is_refused():
    """SEC-1: a state is hostile input, so its size is capped before anything is decoded; the
    cap is 16 KiB (KIT), and a handler may use all of it.

    Kills: MAX_TOKEN_BYTES = 17 * 1024 and 16 * 1025; ``len(token) > cap`` turned into ``>=``.
    """
    codec, token = hmac_token_of_length(CAP)
    assert codec.open(token)["data"].startswith("x")
    codec, token = hmac_token_of_length(CAP + 1)
    with pytest.raises(InvalidState, match="oversized"):
        codec.open(token)


@pytest.mark.parametrize("kind", KINDS)
def test_sec_1_kit_non_ascii_state_costs_its_utf8_size_under_the_cap(kind):
    """SEC-1 (KIT cap): claims are UTF-8 JSON, so 5,000 accented letters (10 kB) fit in a
    state and come back intact; escaped as ``\\u00e9`` they would not fit.

    Kills: ``ensure_ascii=False`` turned into ``True`` in the claims' JSON.
    """
    codec = make_codec(kind, KeyRing.single(SECRET))
    text = "é" * 5000
    assert codec.open(codec.seal({"data": text})) == {"data": text}


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
        self.t = T0  # 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def issuer(clock: Clock, **kw) -> StateIssuer:
    return StateIssuer(HmacStateCodec(ring("k1")), audience="refunds", now=clock, **kw)


def test_minted_claims_hold_every_binding():
    """MRTR-S5a-c, SEC-6: principal, issued-at, expiry, request, audience, asked, token id,
    and the call's flow id (KIT): the one given, or a new one."""
    clock = Clock()
    states = issuer(clock, ttl_s=600)
    digest = request_digest("tools/call", "request_refund", {"order_id": "A-1001"})
    token = states.mint(StateBinding("alice", digest), ["confirm"], {"n": 1}, "f" * 22)
    claims = states.codec.open(token)
    assert claims == {
        "aud": "refunds",
        "sub": "alice",
        "iat": 1_800_000_000,
        "exp": 1_800_000_600,
        "req": digest,
        "asked": ["confirm"],
        "jti": claims["jti"],
        "flow": "f" * 22,
        "data": {"n": 1},
    }
    assert len(claims["jti"]) == 16
    fresh = [states.codec.open(states.mint(StateBinding("alice", digest), [], {})) for _ in "ab"]
    assert fresh[0]["flow"] != fresh[1]["flow"] and len(fresh[0]["flow"]) == 22
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
# The 15-minute lifetime and the 30-second clock tolerance are the kit's documented defaults
# (SEC-4 is a SHOULD without a number; the numbers are KIT), not spec values.


def server(clock: Clock, **kw: Any) -> McpServer:
    s = McpServer("state-tests", state_key=None if "state_codec" in kw else KEY, now=clock, **kw)

    @s.tool(description="Two rounds: a state-only 'call me again', then done.")
    def two_rounds(ctx):
        if ctx.state is None:
            return ctx.input_required(state={"step": 1})
        return f"done at step {ctx.state['step']}"

    return s


def first_round(s: McpServer) -> str:
    res = result(run(s, request("tools/call", {"name": "two_rounds", "arguments": {}})))
    assert res["resultType"] == RESULT_INPUT_REQUIRED
    return res["requestState"]


def retry(s: McpServer, state: str) -> dict[str, Any]:
    params = {"name": "two_rounds", "arguments": {}, "requestState": state}
    reply = run(s, request("tools/call", params))
    assert reply.body is not None
    return reply.body


def accepted(body: dict[str, Any]) -> bool:
    if "result" in body:
        assert body["result"]["content"][0]["text"] == "done at step 1"
        return True
    assert body["error"]["code"] == -32602 and body["error"]["data"] == INVALID_STATE, body
    return False


def test_mrtr_s5b_state_expires():
    """MRTR-S5b: a state presented after its expiry (plus the allowed clock skew) is rejected."""
    clock = Clock()
    s = server(clock)
    state = first_round(s)
    clock.t += s.states.ttl_s + 60
    assert not accepted(retry(s, state))


def test_sec_4_mrtr_s5b_a_state_lives_15_minutes_plus_30_s_of_clock_skew():
    """SEC-4 / MRTR-S5b (KIT numbers): by default a state is good for 15 minutes, and another
    instance whose clock is up to 30 s off still accepts it.

    Kills: DEFAULT_TTL_S = 16 * 60 and 15 * 61; CLOCK_SKEW_S = 31.
    """
    clock = Clock()
    s = server(clock)
    state = first_round(s)
    clock.t = T0 + 15 * 60 + 30
    assert accepted(retry(s, state))
    state = first_round(server(Clock()))  # minted at T0 by an instance with the same key
    clock.t = T0 + 15 * 60 + 31
    assert not accepted(retry(s, state))


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


@pytest.mark.parametrize("skew", [0, 5, 120])
def test_mrtr_s5b_a_servers_clock_skew_setting_bounds_the_lifetime_to_the_second(skew):
    """MRTR-S5b, SEC-4 (KIT): ``McpServer(clock_skew_s=...)`` replaces the default 30 s. With
    a 60 s lifetime a state is accepted at exactly 60 + skew seconds and refused one second
    later, and half a second later too; another instance whose clock runs ``skew`` behind
    still accepts it, one second more behind does not."""
    clock = Clock()
    s = server(clock, state_ttl_s=60, clock_skew_s=skew)
    state = first_round(s)
    clock.t = T0 + 60 + skew
    assert accepted(retry(s, state))
    for late in (0.5, 1):
        state = first_round(server(Clock(), state_ttl_s=60, clock_skew_s=skew))  # minted at T0
        clock.t = T0 + 60 + skew + late
        assert not accepted(retry(s, state))
    ahead = first_round(server(Clock(), state_ttl_s=60, clock_skew_s=skew))  # minted at T0
    clock.t = T0 - skew
    assert accepted(retry(s, ahead))
    clock.t = T0 - skew - 1
    assert not accepted(retry(s, first_round(server(Clock(), clock_skew_s=skew))))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "30"])
def test_a_clock_skew_that_is_not_whole_seconds_from_zero_up_is_refused(bad):
    with pytest.raises(ValueError, match="clock_skew_s"):
        McpServer("s", state_key=KEY, clock_skew_s=bad)


def test_the_default_clock_skew_is_30_s_and_the_ledger_keeps_ids_for_twice_it():
    """KIT: the documented default; a spent id is kept until no instance would accept it."""
    assert McpServer("s", state_key=KEY).states.skew_s == 30
    s = McpServer("s", state_key=KEY, clock_skew_s=7, state_ttl_s=60)
    assert s.states.spent_until({"exp": 1000}) == 1000 + 14


def test_mrtr_s5b_a_state_from_a_clock_up_to_30_s_ahead_is_accepted_not_more():
    """MRTR-S5b (KIT tolerance): the instance that minted the state may run 30 s ahead of the
    one that checks it, no more ("issued in the future").

    Kills: ``claims["iat"] > now + skew`` turned into ``>=``.
    """
    ahead = Clock()
    state = first_round(server(ahead))  # minted at T0
    behind = Clock()
    behind.t = T0 - 30
    assert accepted(retry(server(behind), state))
    behind.t = T0 - 31
    assert not accepted(retry(server(behind), state))


def test_mrtr_s5b_with_expiry_checks_off_no_clock_check_applies():
    """MRTR-S5b: ``StateChecks(expiry=False)`` (the attack lab's switch) turns off *both* time
    checks, so the lesson can show what an expiry claim is for.

    Kills: the ``checks.expiry and`` guard dropped from the issued-in-the-future check.
    """
    ahead = Clock()
    ahead.t = T0 + 3600
    state = first_round(server(ahead))
    checker = server(Clock(), state_checks=StateChecks(expiry=False))
    assert accepted(retry(checker, state))


# A plain (unsigned) codec lets the client write any claims: the server must still refuse
# claims of the wrong shape with the one requestState error, even with every binding check
# switched off (the structure is always checked), and never fail with -32603.
MALFORMED = {
    "aud not a string": ("aud", 1),
    "sub a number": ("sub", 5),
    "iat a string": ("iat", str(int(T0))),
    "iat a boolean": ("iat", True),
    "exp a float": ("exp", T0 + 60.5),
    "exp a boolean": ("exp", True),
    "req not a string": ("req", 7),
    "jti not a string": ("jti", 1234567890123456),
    "jti too short": ("jti", "abc"),
    "jti with a dot": ("jti", "abcdefgh.ijklmno"),
    "asked a string": ("asked", "confirm"),
    "asked holding a number": ("asked", [1]),
    "data a list": ("data", ["step", 1]),
    "sub missing": ("sub", KeyError),
    "data missing": ("data", KeyError),  # data is null, not absent, when a handler keeps none
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_sec_1_mrtr_s4_malformed_claims_are_refused_even_when_nothing_is_bound(case):
    """SEC-1 / MRTR-S4: plaintext state is validated like any client data. With the unsafe
    plain codec and every binding check off, a state whose claims have the wrong shape still
    gets the fixed invalid-state error (-32602), never a handler run or an internal error.

    Kills: each condition of the claims' structure check dropped (aud, sub, iat, exp, req,
    jti, its pattern, asked and its items, data), ``_is_int`` letting booleans or non-ints
    through, and the jti pattern compiled from an empty string.
    """
    clock = Clock()
    s = server(clock, state_codec=PlainStateCodec(), state_checks=StateChecks.integrity_only())
    claims = PlainStateCodec().open(first_round(s))  # a client can read plain claims
    assert accepted(retry(s, PlainStateCodec().seal(claims)))  # re-sealed as is: still fine
    name, value = MALFORMED[case]
    if value is KeyError:
        del claims[name]
    else:
        claims[name] = value
    assert not accepted(retry(s, PlainStateCodec().seal(claims)))
