"""requestState claims as a server checks them (server/state.py), written to kill the mutants
``tools/mutate.py`` found surviving: each test checks what a server's user relies on, through
``McpServer.handle``, and says which deliberate bug it catches.

The 15-minute lifetime and the 30-second clock tolerance are the kit's documented defaults
(SEC-4 is KIT; the spec gives no number), not spec values.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import error, request, result, run

from mrtr_kit.protocol.constants import RESULT_INPUT_REQUIRED
from mrtr_kit.server import McpServer
from mrtr_kit.server.codecs import PlainStateCodec
from mrtr_kit.server.state import StateChecks

KEY = b"s" * 32
T0 = 1_800_000_000.0
INVALID_STATE = {"reason": "invalid_request_state"}


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


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


def test_sec_2_every_state_rejection_carries_the_same_data_even_if_a_reply_was_changed():
    """SEC-2 (KIT): every rejected state gets the same error, so a forger learns nothing.
    A caller that edits one reply (an adapter adding a field to ``error.data``) must not
    change the next one.

    Kills: ``invalid_state_error`` handing out its shared data dict instead of a copy.
    """
    s = server(Clock())
    first = error(run(s, request("tools/call", {"name": "two_rounds", "requestState": "x"})))
    assert first["data"] == INVALID_STATE
    first["data"]["hint"] = "added by a caller"
    second = error(run(s, request("tools/call", {"name": "two_rounds", "requestState": "y"})))
    assert second["data"] == INVALID_STATE
