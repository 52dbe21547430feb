"""Once per flow (KIT): what holds across the forks of one call, on the sans-IO core.

A handler may run N times for one logical call (MIG-3). Single use (MRTR-S5d) covers one
*state*: a round whose state the handler does not spend can be replayed, and each replay
mints a fresh state, so the call forks. The core mints one flow id per call and seals it into
every state of the call, forks included (``ctx.flow_id``); the ledger's per-flow counters and
marks (``ctx.attempt``, ``ctx.once``) hold across forks.

The scenario is the one-time code of a deploy: round 1 asks to confirm, round 2 "sends" a
code and asks for it (its state is not spent: the documented pattern spends before the
one-time step only), round 3 and later check the code, at most 3 tries per flow.
``before=True`` is the pattern without flows (the tries kept in the state, ``redeem_once``
before deploying); the tests show what it lets through, and that the flow pattern does not.

And KIT-ERR-A: after -31000 the same retry is still good, even when the ledger failed on the
round's second write (``_RoundWrites`` undoes the first).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest

from mrtr_kit.server import McpServer
from mrtr_kit.server.codecs import InvalidState, PlainStateCodec
from mrtr_kit.server.context import RequestContext, elicit_form
from mrtr_kit.server.keyring import KeyRing
from mrtr_kit.server.ledger import Ledger, LedgerUnavailable, MemoryLedger
from mrtr_kit.server.ledger.sqlite import SqliteLedger
from mrtr_kit.server.state import StateBinding, StateIssuer
from tests.helpers import request

CAPS = {"elicitation": {"form": {}}}
CONFIRM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}
OTP = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}
CODE = "424242"
WRONG = "000000"
MAX_TRIES = 3
INVALID_STATE = {"reason": "invalid_request_state"}
TRY_AGAIN = -31000


@dataclass
class Tally:
    """What the deploy tool did, per flow id: codes it evaluated, deploys it made."""

    evaluated: Counter[str] = field(default_factory=Counter)
    deployed: Counter[str] = field(default_factory=Counter)
    flows: list[str] = field(default_factory=list)  # ctx.flow_id of every round, in order


def deploy_server(ledger: Ledger, *, before: bool = False) -> tuple[McpServer, Tally]:
    server = McpServer("deploys", state_keys=KeyRing.generate(), ledger=ledger)
    tally = Tally()

    @server.tool(description="Deploys after a confirmation and a one-time code.")
    async def deploy(ctx: RequestContext) -> Any:
        tally.flows.append(ctx.flow_id)
        if ctx.state is None:
            return ctx.input_required({"confirm": elicit_form("Deploy?", CONFIRM)}, {"at": "ok"})
        if ctx.state["at"] == "ok":
            confirm = ctx.form("confirm", "Deploy?", CONFIRM, state=ctx.state)
            if confirm.needs_asking:
                return confirm.ask()
            # The code is "sent" here; this round's state is not spent (the replayable round).
            return ctx.input_required({"otp": elicit_form("Code?", OTP)}, {"at": "otp", "tries": 0})
        code = ctx.form("otp", "Code?", OTP, state=ctx.state)
        if code.needs_asking:
            return code.ask()
        tries = ctx.state["tries"] + 1
        if before:
            if tries > MAX_TRIES:  # the limit kept in the state: it resets in every fork
                return "Too many tries."
        elif await ctx.attempt("otp") > MAX_TRIES:  # the limit kept per flow
            return "Too many tries."
        tally.evaluated[ctx.flow_id] += 1
        if code.content["code"] != CODE:
            return ctx.input_required(
                {"otp": code.request("Wrong code.")}, {"at": "otp", "tries": tries}
            )
        if before:
            await ctx.redeem_once()  # spends this fork's state only
        elif not await ctx.once("deploy"):
            return "Deployed already."
        tally.deployed[ctx.flow_id] += 1
        return "Deployed."

    return server, tally


def send(server: McpServer, state: str | None = None, **answers: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "deploy"}
    if state is not None:
        params["requestState"] = state
    if answers:
        params["inputResponses"] = {
            key: {"action": "accept", "content": content} for key, content in answers.items()
        }
    reply = LOOP.run(server.handle(request("tools/call", params, capabilities=CAPS)))
    assert reply.body is not None
    return reply.body


def state_of(body: dict[str, Any]) -> str:
    assert body["result"]["resultType"] == "input_required", body
    return str(body["result"]["requestState"])


def text_of(body: dict[str, Any]) -> str:
    assert body["result"]["resultType"] == "complete", body
    return str(body["result"]["content"][0]["text"])


def otp_forks(server: McpServer, forks: int) -> list[str]:
    """Round 1, then round 2 sent ``forks`` times with round 1's state: one OTP state each."""
    round_1 = state_of(send(server))
    return [state_of(send(server, round_1, confirm={"confirm": True})) for _ in range(forks)]


def guess_wrong_in_every_fork(server: McpServer, forks: int, guesses: int = 5) -> None:
    """Replay round 2 ``forks - 1`` times, then try ``guesses`` wrong codes in every fork."""
    for state in otp_forks(server, forks):
        for _ in range(guesses):
            body = send(server, state, otp={"code": WRONG})
            if body["result"]["resultType"] == "complete":
                assert text_of(body) == "Too many tries."
                break
            state = state_of(body)


class _Loop:
    """One event loop for a whole test: a Redis connection belongs to the loop that made it."""

    runner: asyncio.Runner | None = None

    def run(self, coroutine: Any) -> Any:
        assert self.runner is not None
        return self.runner.run(coroutine)


LOOP = _Loop()


@pytest.fixture(autouse=True)
def one_loop():
    with asyncio.Runner() as runner:
        LOOP.runner = runner
        yield
        LOOP.runner = None


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.slow)])
def ledger(request, tmp_path, one_loop):
    """The deploy's ledger, of each kind; the Redis one on a real ``redis-server``."""
    if request.param == "memory":
        yield MemoryLedger()
        return
    if request.param == "sqlite":
        yield SqliteLedger(tmp_path / "ledger.sqlite3", create=True)
        return
    from mrtr_kit.server.ledger.redis import RedisLedger
    from tests.ledger_services import start_redis, stop

    store = start_redis(tmp_path)
    redis_ledger = RedisLedger.from_url(store.url)
    try:
        yield redis_ledger
    finally:
        LOOP.run(redis_ledger.aclose())
        stop(store.proc)


# -- the flow id ----------------------------------------------------------------------------------


def test_one_flow_id_per_call_the_same_in_every_round_and_fork():
    """KIT: the core mints the flow id on the first round and seals it into every state of the
    call; round 2 replayed (a fork) and round 3 see it too. Another call gets another one."""
    server, tally = deploy_server(MemoryLedger())
    forks = otp_forks(server, 3)
    send(server, forks[2], otp={"code": WRONG})
    first_call = set(tally.flows)
    otp_forks(server, 1)
    assert len(first_call) == 1 and len(tally.flows) == 5 + 2
    (flow,) = first_call
    assert len(flow) == 22 and set(tally.flows[5:]) == {tally.flows[5]} != {flow}


def test_a_one_round_call_gets_a_fresh_flow_id_every_time():
    """KIT: a call that completes on its first round has a flow of its own too: two calls, two
    unguessable ids (16 random bytes)."""
    server = McpServer("s", state_keys=KeyRing.generate())
    seen: list[str] = []

    @server.tool(description="Says which flow it ran in.")
    def whoami(ctx: RequestContext) -> str:
        seen.append(ctx.flow_id)
        return ctx.flow_id

    for _ in range(2):
        LOOP.run(server.handle(request("tools/call", {"name": "whoami"})))
    assert len(set(seen)) == 2 and all(len(f) == 22 for f in seen)


@pytest.mark.parametrize("flow", [None, "", "f" * 21, "f" * 23, "f" * 21 + "!", 7])
def test_a_state_without_a_well_formed_flow_is_refused(flow):
    """KIT: the flow claim is part of every state's structure; a state without one (or with a
    malformed one) could start a flow of its own, so it is refused like a forged state."""
    states = StateIssuer(PlainStateCodec(), audience="a")
    binding = StateBinding(None, "d")
    claims = states.codec.open(states.mint(binding, [], {}))
    if flow is None:
        del claims["flow"]
    else:
        claims["flow"] = flow
    with pytest.raises(InvalidState, match="malformed claims"):
        states.verify(states.codec.seal(claims), binding)
    claims["flow"] = "f" * 22
    assert states.verify(states.codec.seal(claims), binding)["flow"] == "f" * 22


def test_a_broken_flow_id_source_fails_when_minting():
    states = StateIssuer(PlainStateCodec(), flow_ids=lambda: "short")
    with pytest.raises(ValueError, match="flow id"):
        states.mint(StateBinding(None, "d"), [], {})


# -- a one-time code: 3 tries per flow, whatever the forks ---------------------------------------


def test_before_a_limit_kept_in_the_state_resets_in_every_fork(ledger):
    """MIG-3: the handler runs N times for one call. With the tries in the state, round 2
    replayed five times gives six forks of 3 tries each: 18 codes evaluated in one flow."""
    server, tally = deploy_server(ledger, before=True)
    guess_wrong_in_every_fork(server, forks=6)
    assert list(tally.evaluated.values()) == [6 * MAX_TRIES]


def test_a_one_time_code_is_evaluated_at_most_3_times_per_flow_across_forks(ledger):
    """KIT (MIG-3; MRTR-S5d alone does not cover it): round 2 replayed five times, wrong codes
    tried in all six forks: 3 are evaluated in the flow, every later one is refused, and
    the right code after that is refused too."""
    server, tally = deploy_server(ledger)
    guess_wrong_in_every_fork(server, forks=6)
    assert list(tally.evaluated.values()) == [MAX_TRIES]
    (flow,) = tally.evaluated
    late = otp_forks(server, 1)[0]  # another call: its own flow, its own 3 tries
    assert text_of(send(server, late, otp={"code": CODE})) == "Deployed."
    assert tally.evaluated[flow] == MAX_TRIES and tally.deployed[flow] == 0


def test_concurrent_forks_evaluate_at_most_3_codes(ledger):
    """KIT: ten forks send a wrong code at the same moment: the ledger's count is atomic, so
    exactly 3 are evaluated."""
    server, tally = deploy_server(ledger)
    forks = otp_forks(server, 10)
    message = {"name": "deploy", "inputResponses": {}}

    async def all_at_once() -> None:
        sends = []
        for state in forks:
            answers = {"otp": {"action": "accept", "content": {"code": WRONG}}}
            params = dict(message, requestState=state, inputResponses=answers)
            sends.append(server.handle(request("tools/call", params, capabilities=CAPS)))
        await asyncio.gather(*sends)

    LOOP.run(all_at_once())
    assert list(tally.evaluated.values()) == [MAX_TRIES]


# -- the side effect: once per flow --------------------------------------------------------------


def test_before_two_forks_reaching_the_final_step_deploy_twice(ledger):
    """MIG-3, MRTR-S5d: ``redeem_once`` spends each fork's own state, so two forks of round 2
    with the right code both deploy: two side effects in one flow."""
    server, tally = deploy_server(ledger, before=True)
    for state in otp_forks(server, 2):
        assert text_of(send(server, state, otp={"code": CODE})) == "Deployed."
    assert list(tally.deployed.values()) == [2]


def test_two_forks_reaching_the_final_step_deploy_once(ledger):
    """KIT (MIG-3): the deploy is marked once per flow: the second fork with the right code is
    told it is done, and deploys nothing."""
    server, tally = deploy_server(ledger)
    first, second = otp_forks(server, 2)
    assert text_of(send(server, first, otp={"code": CODE})) == "Deployed."
    assert text_of(send(server, second, otp={"code": CODE})) == "Deployed already."
    assert list(tally.deployed.values()) == [1]


def test_concurrent_forks_with_the_right_code_deploy_once(ledger):
    """KIT: three forks send the right code at the same moment: one deploys."""
    server, tally = deploy_server(ledger)
    forks = otp_forks(server, 3)  # 3 forks: each is one code, so all within the limit

    async def all_at_once() -> list[Any]:
        answers = {"otp": {"action": "accept", "content": {"code": CODE}}}
        return await asyncio.gather(
            *(
                server.handle(
                    request(
                        "tools/call",
                        {"name": "deploy", "requestState": s, "inputResponses": answers},
                        capabilities=CAPS,
                    )
                )
                for s in forks
            )
        )

    texts = sorted(text_of(reply.body) for reply in LOOP.run(all_at_once()))
    assert texts == ["Deployed already.", "Deployed already.", "Deployed."]
    assert list(tally.deployed.values()) == [1]


# -- KIT-ERR-A: a round's ledger writes all stay, or none do -------------------------------------


class FlakyLedger(MemoryLedger):
    """A memory ledger whose named writes fail (``LedgerUnavailable``, nothing written) while
    ``down`` holds their names."""

    def __init__(self) -> None:
        super().__init__()
        self.down: set[str] = set()

    def _check(self, write: str) -> None:
        if write in self.down:
            raise LedgerUnavailable(f"{write}: the ledger is down")

    async def spend(self, token_id: str, expires_at: float) -> bool:
        self._check("spend")
        return await super().spend(token_id, expires_at)

    async def unspend(self, token_id: str) -> None:
        self._check("unspend")
        await super().unspend(token_id)

    async def flow_count(self, flow_id: str, name: str, by: int = 1) -> int:
        self._check("flow_count" if by > 0 else "uncount")
        return await super().flow_count(flow_id, name, by)

    async def flow_once(self, flow_id: str, name: str, owner: str) -> bool:
        self._check(f"flow_once:{name}")
        return await super().flow_once(flow_id, name, owner)

    async def flow_release(self, flow_id: str, name: str, owner: str) -> None:
        self._check("flow_release")
        await super().flow_release(flow_id, name, owner)

    async def record_once(self, kind: str, key: str, body: str) -> Any:
        self._check("record_once")
        return await super().record_once(kind, key, body)


def paying_server(ledger: FlakyLedger) -> tuple[McpServer, list[str]]:
    """A tool whose final round writes the ledger four times: it spends its state, counts an
    attempt, marks a notice once and the payment once (through the context), then records
    the payout (directly in the ledger, as a business record). Pays after the last write."""
    server = McpServer("pay", state_keys=KeyRing.generate(), ledger=ledger)
    paid: list[str] = []

    @server.tool(description="Pays once.")
    async def pay(ctx: RequestContext) -> Any:
        if ctx.state is None:
            return ctx.input_required({"confirm": elicit_form("Pay?", CONFIRM)}, {})
        await ctx.redeem_once()
        await ctx.attempt("pay")
        await ctx.once("notice")
        if not await ctx.once("pay"):
            return "Paid already."
        await ledger.record_once("payout", ctx.flow_id, "{}")
        paid.append(ctx.flow_id)
        return "Paid."

    return server, paid


def pay(server: McpServer, state: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "pay"}
    if state is not None:
        params |= {
            "requestState": state,
            "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
        }
    reply = LOOP.run(server.handle(request("tools/call", params, capabilities=CAPS)))
    assert reply.body is not None
    return reply.body


@pytest.mark.parametrize(
    "failing", ["flow_count", "flow_once:notice", "flow_once:pay", "record_once"]
)
def test_kit_err_a_mrtr_s5d_a_retry_after_a_later_write_failed_pays_once(failing):
    """KIT-ERR-A: the ledger fails on a later write of the round (the state already spent):
    the client gets -31000, the core undoes the round's earlier writes, and once the ledger
    is back the same retry pays, once (MRTR-S5d): its replay is refused, nothing paid twice,
    and the attempt was counted once."""
    ledger = FlakyLedger()
    server, paid = paying_server(ledger)
    state = state_of(pay(server))
    ledger.down = {failing}
    assert pay(server, state)["error"]["code"] == TRY_AGAIN
    assert paid == []
    # None of the round's writes is left: no spend, no mark, every count back to 0.
    assert ledger._spent == {} and ledger._flow_marks == {}
    assert set(ledger._flow_counts.values()) <= {0}
    ledger.down = set()
    assert text_of(pay(server, state)) == "Paid."
    replay = pay(server, state)
    assert replay["error"]["code"] == -32602 and replay["error"]["data"] == INVALID_STATE
    (flow,) = set(paid)
    counted = LOOP.run(ledger.flow_count(flow, "pay", 0))
    assert (paid, counted) == ([flow], 1)


def test_kit_err_a_the_second_write_failing_alone_leaves_the_retry_good():
    """KIT-ERR-A, the review's case: ``redeem_once`` succeeds, the round's next write fails.
    Before the undo the retry was refused ("Invalid requestState"); now it pays once."""
    ledger = FlakyLedger()
    server, paid = paying_server(ledger)
    state = state_of(pay(server))
    ledger.down = {"flow_count"}  # the second write
    assert pay(server, state)["error"]["code"] == TRY_AGAIN
    ledger.down = set()
    assert text_of(pay(server, state)) == "Paid." and len(paid) == 1


def test_kit_err_a_an_undo_that_fails_too_is_logged_and_the_retry_is_refused(caplog):
    """KIT-ERR-A's one window: the ledger stays down for the undo as well. The operator's log
    names what could not be undone; the state stays spent, so its retry is refused (never
    paid twice), and a new call pays."""
    ledger = FlakyLedger()
    server, paid = paying_server(ledger)
    state = state_of(pay(server))
    ledger.down = {"flow_once:notice", "uncount", "unspend"}
    with caplog.at_level(logging.ERROR, logger="mrtr_kit.server"):
        assert pay(server, state)["error"]["code"] == TRY_AGAIN
    undone = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert [m.split(": could not undo ")[1].split(",")[0] for m in undone] == [
        "attempt 'pay'",
        "the spend",
    ]
    ledger.down = set()
    assert pay(server, state)["error"]["data"] == INVALID_STATE
    assert text_of(pay(server, state_of(pay(server)))) == "Paid." and len(paid) == 1


# -- the documented pattern ------------------------------------------------------------------------


def test_the_documented_one_time_code_keeps_3_tries_and_one_deploy_per_flow():
    """KIT: docs/flows.md's example, run as written (a memory ledger and a generated key in
    place of the fleet's): forks get 3 tries in all, and the right code deploys once."""
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "flows.md").read_text()
    source = page.split("```python\n", 1)[1].split("```", 1)[0]
    source = source.replace("KeyRing.from_env(), ledger=...", "KeyRing.generate(), ledger=LEDGER")
    deployed: list[str] = []
    namespace: dict[str, Any] = {
        "LEDGER": MemoryLedger(),
        "send_code": lambda principal, flow: None,
        "code_is_right": lambda principal, flow, code: code == CODE,
        "do_deploy": lambda: deployed.append("x") or "Deployed.",
    }
    exec(compile(source, "docs/flows.md", "exec"), namespace)
    server = namespace["server"]
    forks = [
        state_of(send(server, s, confirm={"confirm": True})) for s in [state_of(send(server))] * 4
    ]
    texts = []
    for state in forks:
        texts.append(send(server, state, otp={"code": WRONG}))
    assert [b["result"]["resultType"] for b in texts] == ["input_required"] * 3 + ["complete"]
    assert text_of(texts[3]) == "Too many tries: start again."
    first, second = otp_forks(server, 2)
    assert text_of(send(server, first, otp={"code": CODE})) == "Deployed."
    assert text_of(send(server, second, otp={"code": CODE})) == "Deployed already."
    assert deployed == ["x"]
