"""requestState codecs (server/codecs.py): behaviour a server relies on that no other test
pinned, found by the mutants ``tools/mutate.py`` saw survive. Each test names the deliberate
bug it catches.

The 16 KiB size cap is the kit's choice (KIT), not a spec number.
"""

from __future__ import annotations

import math
from types import MappingProxyType

import pytest

from mrtr_kit.server.codecs import InvalidState, make_codec
from mrtr_kit.server.keyring import KeyRing, StateKey

SECRET = bytes(range(32))
CAP = 16 * 1024  # KIT: the documented size cap, written out so the test does not follow it
KINDS = ["plain", "hmac", "aead"]


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


@pytest.mark.parametrize("kind", KINDS)
def test_kit_every_codec_seals_any_mapping_of_claims(kind):
    """KIT: ``StateCodec.seal`` takes any ``Mapping``, such as a read-only view of a handler's
    claims, for every codec alike.

    Kills: the AEAD codec passing the mapping to the JSON encoder without ``dict(...)``.
    """
    codec = make_codec(kind, KeyRing.single(SECRET))
    claims = MappingProxyType({"sub": "alice", "data": {"n": 1}})
    assert codec.open(codec.seal(claims)) == dict(claims)


@pytest.mark.parametrize("keys", [None, KeyRing.single(SECRET)], ids=["no-keys", "keys"])
def test_sec_2_an_empty_codec_name_is_refused_not_read_as_aead(keys):
    """SEC-2: the codec protecting requestState is chosen on purpose. An empty name (an unset
    setting, ``--state-codec ""``) is refused as unknown, never quietly taken for one of the
    kinds.

    Kills: "plain" emptied in CODEC_KINDS (the empty name would then pass as a known kind).
    """
    with pytest.raises(ValueError, match="unknown requestState codec"):
        make_codec("", keys)
