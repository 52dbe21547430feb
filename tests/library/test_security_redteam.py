"""Red team: every way we could think of to get a forged or replayed requestState accepted.

Each test builds genuine tokens, breaks them, and asserts that **0 forgeries are accepted**:
``verify`` must raise ``InvalidState`` for every one (any other exception fails the test too,
since the core turns only ``InvalidState`` into the fixed -32602). Attacks covered:

* byte level: every single-character change, every bit flip of every decoded field, every
  truncation, extension and re-encoding of a valid token (MRTR-S4, MRTR-S4a, SEC-2);
* claims level: another principal, request, audience; expired; sealed with a rotated-out key
  or an unknown one; a downgrade to a weaker codec (MRTR-S5a, MRTR-S5b, MRTR-S5c);
* property-based (hypothesis): random strings, random field bytes, random envelopes sealed
  with the wrong key or with the right key but the wrong bindings;
* the wire: every rejection is the same -32602 error; the reason is only in the log.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrtr_kit.server import McpServer
from mrtr_kit.server.codecs import (
    AeadStateCodec,
    HmacStateCodec,
    InvalidState,
    PlainStateCodec,
    b64url,
    canonical_json,
    make_codec,
    unb64url,
)
from mrtr_kit.server.context import elicit_form
from mrtr_kit.server.http import http_status
from mrtr_kit.server.keyring import KeyRing, StateKey
from mrtr_kit.server.state import StateBinding, StateIssuer, invalid_state_error, request_digest
from tests.helpers import error, request, result, with_bad_tag

K1 = StateKey("k1", bytes(range(32)))
K2 = StateKey("k2", bytes(range(50, 82)))
ATTACKER_K1 = StateKey("k1", bytes(range(200, 232)))  # right key id, wrong secret
RING = KeyRing([K1, K2])  # k1 seals, k2 opens too
KEYED = ["hmac", "aead"]
T0 = 1_800_000_000.0
ARGS = {"order_id": "A-1001"}
DIGEST = request_digest("tools/call", "request_refund", ARGS)
ALICE = StateBinding("alice", DIGEST)
DATA = {"order": "A-1001", "approved_cents": 12450, "admin": False}
# Every printable ASCII character, controls, and look-alikes of the characters tokens use.
REPLACEMENTS = string.printable + "\x00\x7f" + "é\u2024\uff0e\uff41\u0430\U0001f600"
B64_CHARS = string.ascii_letters + string.digits + "-_"


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


def issuer(kind: str, *, keys: KeyRing = RING, audience: str = "refunds", clock=None):
    return StateIssuer(make_codec(kind, keys), audience=audience, now=clock or Clock())


def accepted(states: StateIssuer, tokens, binding: StateBinding = ALICE) -> list[str]:
    """The tokens ``verify`` accepts. Anything but InvalidState propagates and fails the test."""
    let_through = []
    for token in tokens:
        try:
            states.verify(token, binding)
        except InvalidState:
            continue
        let_through.append(token)
    return let_through


@pytest.fixture(params=KEYED)
def kind(request) -> str:
    return request.param


@pytest.fixture
def states(kind) -> StateIssuer:
    return issuer(kind)


@pytest.fixture
def token(states) -> str:
    genuine = states.mint(ALICE, ["confirm"], DATA)
    assert states.verify(genuine, ALICE)["data"] == DATA  # the baseline is accepted
    return genuine


# --- byte level ----------------------------------------------------------------------------------


def test_every_single_character_change_is_rejected(states, token):
    """MRTR-S4a: each position replaced by each of ~110 characters: 0 accepted."""
    forged = [
        token[:i] + ch + token[i + 1 :]
        for i in range(len(token))
        for ch in REPLACEMENTS
        if ch != token[i]
    ]
    assert len(forged) > 20_000
    assert accepted(states, forged) == []


def test_every_bit_flip_of_every_decoded_field_is_rejected(states, token):
    """MRTR-S4a: payload/nonce, ciphertext and tag bytes flipped bit by bit and re-encoded
    canonically, so the change reaches the MAC rather than the base64 check: 0 accepted."""
    fields = token.split(".")
    forged = []
    for index in (2, 3):
        raw = unb64url(fields[index])
        for byte in range(len(raw)):
            for bit in range(8):
                flipped = bytearray(raw)
                flipped[byte] ^= 1 << bit
                copy = list(fields)
                copy[index] = b64url(bytes(flipped))
                forged.append(".".join(copy))
    assert len(forged) > 2_000
    assert accepted(states, forged) == []


def test_every_truncation_is_rejected(states, token):
    """Every prefix, every suffix and every one-character deletion: 0 accepted."""
    forged = [token[:i] for i in range(len(token))]
    forged += [token[i:] for i in range(1, len(token))]
    forged += [token[:i] + token[i + 1 :] for i in range(len(token))]
    assert accepted(states, forged) == []


def test_every_extension_is_rejected(states, token):
    """Appended and prepended characters, extra fields, doubled tokens: 0 accepted."""
    fields = token.split(".")
    forged = [token + ch for ch in REPLACEMENTS]
    forged += [ch + token for ch in REPLACEMENTS]
    forged += [token + "." + f for f in fields] + [token + ".", "." + token, token + token]
    forged += [".".join([*fields[:3], fields[2], fields[3]]), ".".join([*fields, fields[3]])]
    forged += [token + "-TAMPERED", token + "A" * 4, token + "=="]  # the conformance edit
    assert accepted(states, forged) == []


def _spellings(text: str) -> list[str]:
    """Other spellings of the same base64url bytes: padded, standard alphabet, and the
    non-canonical trailing characters that decode to the same bytes."""
    raw = unb64url(text)
    out = [text + "=" * (-len(text) % 4) or text + "====", base64.b64encode(raw).decode()]
    if len(text) % 4:
        for ch in B64_CHARS:
            candidate = text[:-1] + ch
            try:
                same = base64.urlsafe_b64decode(candidate + "=" * (-len(candidate) % 4)) == raw
            except ValueError:
                same = False
            if same and candidate != text:
                out.append(candidate)
    return [s for s in out if s != text]


def test_every_re_encoding_is_rejected(kind, states, token):
    """Strict base64url and an exact format: the same bytes spelled differently, the header
    in other letter cases, whitespace and URL escapes around the dots: 0 accepted."""
    fields = token.split(".")
    forged = []
    for index in (2, 3):
        for spelling in _spellings(fields[index]):
            copy = list(fields)
            copy[index] = spelling
            forged.append(".".join(copy))
    forged += [token.upper(), token.lower(), fields[0].upper() + token[len(fields[0]) :]]
    forged += [
        f" {token}",
        f"{token} ",
        f"{token}\n",
        token.replace(".", "%2E"),
        token.replace(".", ". "),
    ]
    forged += [token.encode().hex(), b64url(token.encode()), json.dumps(token)]
    assert len(forged) >= 12
    assert accepted(states, forged) == []


def test_hmac_payload_re_serialised_with_the_same_claims_is_rejected():
    """The tag covers the exact payload text: other JSON spellings of the same claims fail."""
    states = issuer("hmac")
    fields = states.mint(ALICE, ["confirm"], DATA).split(".")
    claims = json.loads(unb64url(fields[2]))
    spellings = [
        json.dumps(claims),
        json.dumps(claims, indent=1),
        json.dumps(claims, sort_keys=True),
        json.dumps(dict(reversed(list(claims.items()))), separators=(",", ":")),
        json.dumps(claims, separators=(",", ":"), sort_keys=True, ensure_ascii=True) + " ",
    ]
    forged = [".".join([*fields[:2], b64url(s.encode()), fields[3]]) for s in spellings]
    assert accepted(states, forged) == []


def test_the_key_id_is_bound_under_the_tag(states, token):
    """Pointing a token at another key of the ring (k2 opens too) breaks it: 0 accepted."""
    fields = token.split(".")
    forged = [".".join([fields[0], kid, *fields[2:]]) for kid in ("k2", "k0", "K1", "k1k1", "")]
    assert accepted(states, forged) == []


def test_no_downgrade_to_a_weaker_codec(kind, states):
    """A keyed server never opens plain1 tokens, nor the other keyed codec's."""
    claims = states.codec.open(states.mint(ALICE, ["confirm"], DATA))
    other = "aead" if kind == "hmac" else "hmac"
    forged = [
        PlainStateCodec().seal(claims),
        make_codec(other, RING).seal(claims),
        "hmac1." + PlainStateCodec().seal(claims).split(".", 1)[1],
        "aead1.k1." + PlainStateCodec().seal(claims).split(".", 1)[1],
    ]
    assert accepted(states, forged) == []


def test_a_token_sealed_with_an_unknown_secret_is_rejected(kind, states):
    """The attacker knows the format and the key id but not the secret."""
    attacker = issuer(kind, keys=KeyRing([ATTACKER_K1]))
    forged = [attacker.mint(ALICE, ["confirm"], dict(DATA, approved_cents=99_999_00))]
    forged += [make_codec(kind, KeyRing.single(b"\x00" * 32, "k1")).seal({"data": DATA})]
    assert accepted(states, forged) == []


# --- claims level ----------------------------------------------------------------------------


def test_cross_principal_replay_is_rejected(states, token):
    """MRTR-S5a: the same genuine token, presented by anyone but alice: 0 accepted."""
    for principal in ("mallory", None, "Alice", "alice ", "", "alice\x00"):
        assert accepted(states, [token], StateBinding(principal, DIGEST)) == [], principal


@pytest.mark.parametrize(
    ("method", "target", "arguments"),
    [
        ("tools/call", "request_refund", {"order_id": "A-1002"}),
        ("tools/call", "request_refund", {"order_id": "A-1001", "extra": 1}),
        ("tools/call", "request_refund", {}),
        ("tools/call", "export_orders", ARGS),
        ("prompts/get", "request_refund", ARGS),
        ("resources/read", "request_refund", {}),
    ],
)
def test_cross_request_replay_is_rejected(states, token, method, target, arguments):
    """MRTR-S5c: another method, tool or argument: 0 accepted."""
    binding = StateBinding("alice", request_digest(method, target, arguments))
    assert accepted(states, [token], binding) == []


def test_cross_audience_replay_is_rejected(kind):
    """A staging server sharing the production key: its states do not open in production."""
    staging = issuer(kind, audience="refunds-staging")
    production = issuer(kind, audience="refunds")
    assert accepted(production, [staging.mint(ALICE, ["confirm"], DATA)]) == []


def test_expired_and_future_tokens_are_rejected(kind):
    """MRTR-S5b with bounded skew: just past ``exp + skew``, or issued after ``now + skew``."""
    clock = Clock()
    states = issuer(kind, clock=clock)
    genuine = states.mint(ALICE, ["confirm"], DATA)
    clock.t = T0 + states.ttl_s + states.skew_s + 1
    assert accepted(states, [genuine]) == []
    clock.t = T0 - states.skew_s - 1
    assert accepted(states, [genuine]) == []


def test_rotated_out_tokens_are_rejected(kind):
    """Keyring phase 3: once k1 is retired, nothing sealed with it opens, however fresh."""
    states = issuer(kind, keys=KeyRing([K1]))
    old = states.mint(ALICE, ["confirm"], DATA)
    states.codec.keys = KeyRing([K1]).add(K2).promote("k2")  # phase 2: k1 still opens
    assert states.verify(old, ALICE)["data"] == DATA
    states.codec.keys = states.codec.keys.retire("k1")  # phase 3
    assert accepted(states, [old]) == []
    assert states.verify(states.mint(ALICE, [], {}), ALICE)["sub"] == "alice"


# --- property-based ----------------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
FIELD = st.from_regex(r"[A-Za-z0-9_-]{0,60}", fullmatch=True)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(text=st.text(max_size=400))
def test_random_text_is_never_accepted(text):
    for kind in KEYED:
        assert accepted(issuer(kind), [text]) == []


@FAST
@given(fmt=st.sampled_from(["hmac1", "aead1"]), kid=st.sampled_from(["k1", "k2"]), a=FIELD, b=FIELD)
def test_random_fields_under_a_valid_header_are_never_accepted(fmt, kid, a, b):
    token = f"{fmt}.{kid}.{a}.{b}"
    assert accepted(issuer(fmt[:-1]), [token]) == []


@FAST
@given(raw_a=st.binary(max_size=300), raw_b=st.binary(max_size=48))
def test_random_field_bytes_are_never_accepted(raw_a, raw_b):
    for kind, fmt in (("hmac", "hmac1"), ("aead", "aead1")):
        token = f"{fmt}.k1.{b64url(raw_a)}.{b64url(raw_b)}"
        assert accepted(issuer(kind), [token]) == []


@FAST
@given(raw=st.binary(max_size=400) | JSON.map(lambda value: canonical_json(value)))
def test_even_the_plain_codec_fails_cleanly_on_any_payload(raw):
    """SEC-1: unprotected state is still validated like client data: any payload at all is
    rejected with InvalidState (never another exception, never accepted)."""
    assert accepted(issuer("plain"), ["plain1." + b64url(raw)]) == []


@FAST
@given(
    claims=st.dictionaries(st.text(max_size=8), JSON, max_size=8),
    kind=st.sampled_from(KEYED),
)
def test_random_envelopes_sealed_with_the_wrong_key_or_no_key_are_never_accepted(claims, kind):
    """The attacker writes any envelope at all - even a perfectly shaped one - but cannot
    seal it with the server's key."""
    shaped = dict(claims, aud="refunds", sub="alice", iat=int(T0), exp=int(T0) + 60)
    shaped.update(req=DIGEST, asked=["confirm"], jti="A" * 16, data=DATA)
    forged = []
    for envelope in (claims, shaped):
        forged.append(make_codec(kind, KeyRing([ATTACKER_K1])).seal(envelope))
        forged.append(PlainStateCodec().seal(envelope))
    assert accepted(issuer(kind), forged) == []


ENVELOPE = st.fixed_dictionaries(
    {},
    optional={
        "aud": st.sampled_from(["refunds", "other"]) | JSON,
        "sub": st.sampled_from(["alice", "mallory", None]) | JSON,
        "iat": st.integers(int(T0) - 2000, int(T0) + 2000) | JSON,
        "exp": st.integers(int(T0) - 2000, int(T0) + 2000) | JSON,
        "req": st.sampled_from([DIGEST, request_digest("tools/call", "x", {})]) | JSON,
        "asked": st.lists(st.text(max_size=5), max_size=3) | JSON,
        "jti": st.sampled_from(["A" * 16, "short"]) | JSON,
        "data": st.dictionaries(st.text(max_size=5), JSON, max_size=3) | JSON,
    },
)


@FAST
@given(envelope=ENVELOPE, kind=st.sampled_from(KEYED))
def test_the_issuer_accepts_an_envelope_only_if_every_claim_checks_out(envelope, kind):
    """Even with the server's own key sealing it (an insider, or a bug that signs client
    data), an envelope passes only with the right audience, principal, request, fresh times
    and a well-formed shape."""
    states = issuer(kind)
    try:
        claims = states.verify(states.codec.seal(envelope), ALICE)
    except InvalidState:
        return
    assert claims["aud"] == "refunds" and claims["sub"] == "alice" and claims["req"] == DIGEST
    assert claims["exp"] + states.skew_s >= T0 and claims["iat"] - states.skew_s <= T0
    assert isinstance(claims["data"], dict) and isinstance(claims["asked"], list)


@FAST
@given(data=st.data())
def test_random_mutations_of_a_genuine_token_are_never_accepted(data):
    kind = data.draw(st.sampled_from(KEYED))
    states = issuer(kind)
    genuine = states.mint(ALICE, ["confirm"], DATA)
    start = data.draw(st.integers(0, len(genuine)))
    end = data.draw(st.integers(start, min(len(genuine), start + 8)))
    insert = data.draw(st.text(alphabet=B64_CHARS + ".=", max_size=8))
    mutated = genuine[:start] + insert + genuine[end:]
    if mutated != genuine:
        assert accepted(states, [mutated]) == []


@FAST
@given(payload=st.dictionaries(st.text(max_size=10), JSON, max_size=6), kind=st.sampled_from(KEYED))
def test_genuine_states_round_trip(payload, kind):
    """The other half of correctness: every state the server issues, it accepts back."""
    states = issuer(kind)
    assert states.verify(states.mint(ALICE, ["k"], payload), ALICE)["data"] == payload


# --- the wire: one answer for every rejection ----------------------------------------------------

YES = {"confirm": {"action": "accept", "content": {"ok": True}}}
FORM = {"elicitation": {"form": {}}}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def wire_server(kind: str, clock: Clock, *, name: str = "refunds", keys=RING) -> McpServer:
    server = McpServer(name, state_codec=make_codec(kind, keys), now=clock)

    @server.tool(
        "request_refund",
        description="Pays the amount in the state, once.",
        input_schema={"type": "object", "properties": {"order_id": {"type": "string"}}},
    )
    async def request_refund(ctx):
        if ctx.state is None:
            ask = elicit_form("Refund?", CONFIRM)
            return ctx.input_required({"confirm": ask}, {"approved_cents": 12450})
        await ctx.redeem_once()
        return f"paid {ctx.state['approved_cents']}"

    return server


def call(server, principal, arguments=ARGS, **extra):
    params = {"name": "request_refund", "arguments": arguments, **extra}
    return asyncio.run(
        server.handle(request("tools/call", params, capabilities=FORM), principal=principal)
    )


def test_every_rejection_is_the_same_error_on_the_wire_and_the_reason_only_in_the_log(kind, caplog):
    """MRTR-S4a (a failed state is rejected), and beyond it a kit convention (KIT): forged,
    cross-principal, cross-request, cross-audience, rotated-out, expired and spent states all
    get byte-identical -32602 errors, HTTP 200; the log says why."""
    clock = Clock()
    server = wire_server(kind, clock)
    genuine = result(call(server, "alice"))["requestState"]
    unspent = result(call(server, "alice"))["requestState"]
    staging = result(call(wire_server(kind, clock, name="staging"), "alice"))["requestState"]
    attempts = {
        "bad tag": ("alice", ARGS, with_bad_tag(genuine)),
        "another principal": ("mallory", ARGS, genuine),
        "another request": ("alice", {"order_id": "A-1002"}, genuine),
        "wrong audience": ("alice", ARGS, staging),
        "not a hmac1 token" if kind == "hmac" else "not a aead1 token": (
            "alice",
            ARGS,
            PlainStateCodec().seal({"data": {"approved_cents": 1}}),
        ),
    }
    bodies = []
    with caplog.at_level(logging.WARNING, logger="mrtr_kit.state"):
        for reason, (who, arguments, state) in attempts.items():
            caplog.clear()
            reply = call(server, who, arguments, requestState=state, inputResponses=YES)
            assert http_status(reply) == 200
            bodies.append(error(reply))
            assert reason in caplog.text, (reason, caplog.text)
        assert result(call(server, "alice", requestState=genuine, inputResponses=YES))["content"]
        caplog.clear()
        bodies.append(error(call(server, "alice", requestState=genuine, inputResponses=YES)))
        assert "already redeemed" in caplog.text
        server.states.codec.keys = KeyRing([K2])  # k1, which sealed `unspent`, retired
        bodies.append(error(call(server, "alice", requestState=unspent, inputResponses=YES)))
        assert "unknown key id" in caplog.text
        expiring = result(call(server, "alice"))["requestState"]  # sealed with k2
        clock.t += 3600
        caplog.clear()
        bodies.append(error(call(server, "alice", requestState=expiring, inputResponses=YES)))
        assert "expired" in caplog.text
    assert bodies == [invalid_state_error("any reason").to_error_object()] * len(bodies)
    for body in bodies:  # nothing about the reason leaks into the answer
        text = json.dumps(body)
        assert not any(word in text for word in ("tag", "principal", "expired", "key", "audience"))


def test_aead_token_reveals_nothing_over_the_wire():
    """SEC-8 on the wire: the approved amount a handler keeps in AEAD state never shows."""
    server = wire_server("aead", Clock())
    token = result(call(server, "alice"))["requestState"]
    assert token.startswith("aead1.k1.")
    # Look for the plaintext in the decoded bytes, not in a hex dump: five given hex digits turn
    # up in ~430 random ones about once in 2,400 runs, the same five bytes about never.
    for field in token.split(".")[2:]:
        raw = unb64url(field)
        assert b"12450" not in raw and b"approved_cents" not in raw
    assert isinstance(AeadStateCodec(RING).open(token), dict)
    assert HmacStateCodec(RING).seal({}).startswith("hmac1.k1.")
    assert canonical_json({"b": 1, "a": 2}) == b'{"a":2,"b":1}'
