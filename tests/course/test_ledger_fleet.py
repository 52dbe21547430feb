"""The double spend against a fleet (MRTR-S5d, SEC-7): two real server processes
(``python -m mrtr_kit serve --example refunds``) share the state key and a ledger; one approval
is redeemed 100 times at once, half of the retries to each process.

With a shared ledger (SQLite file, or Redis) exactly 1 redemption pays and 99 get the same
-32602 error. With each process's own memory ledger, each process pays once: 2 payments,
which is why a fleet needs a shared ledger.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from typing import Any

import httpx
import pytest

from mrtr_course.refund_lab.lab import YES, RawCaller, ServerAnswer
from mrtr_kit.server.keyring import ENV_KEYS, KeyRing, StateKey
from mrtr_kit.server.state import invalid_state_error
from tests.helpers import new_sqlite_ledger
from tests.ledger_services import ServerProcess, start_redis, start_server, stop

pytestmark = pytest.mark.slow

TOKEN = "alice-fleet-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
REDEMPTIONS = 100


def fleet_env() -> dict[str, str]:
    env = dict(os.environ)
    env[ENV_KEYS] = KeyRing([StateKey.generate("k1")]).to_spec()  # both processes share it
    env["MRTR_KIT_BEARER_TOKENS"] = f"alice:{TOKEN}"
    env.pop("MRTR_KIT_STATE_KEY", None)
    return env


async def storm(urls: list[str]) -> tuple[str, list[ServerAnswer]]:
    """One approval from the first process, then 100 concurrent redemptions split evenly."""
    limits = httpx.Limits(max_connections=REDEMPTIONS + 10)
    async with httpx.AsyncClient(headers=AUTH, timeout=60, limits=limits) as http:
        callers = [RawCaller(http, url) for url in urls]
        first = await callers[0].call_tool("request_refund", {"order_id": "A-1001"})
        assert first.kind == "input_required" and first.request_state, first
        answers = await asyncio.gather(
            *(
                callers[n % len(callers)].call_tool(
                    "request_refund",
                    {"order_id": "A-1001"},
                    request_state=first.request_state,
                    input_responses=YES,
                )
                for n in range(REDEMPTIONS)
            )
        )
    return first.request_state, list(answers)


def run_fleet(tmp_path, ledger: str) -> list[ServerAnswer]:
    env = fleet_env()
    servers: list[ServerProcess] = []
    try:
        for n in range(2):
            log = tmp_path / f"server-{n}.log"
            servers.append(
                start_server(["--example", "refunds", "--ledger", ledger], env, log, AUTH)
            )
        assert servers[0].proc.pid != servers[1].proc.pid
        _, answers = asyncio.run(storm([s.url for s in servers]))
        return answers
    finally:
        for server in servers:
            stop(server.proc)


def assert_exactly_one_payment(answers: list[ServerAnswer]) -> None:
    paid = [a for a in answers if a.ok]
    errors = [a.response["error"] for a in answers if a.kind == "error"]
    assert len(paid) == 1, Counter(str(a) for a in answers)
    assert paid[0].text == "Refunded $124.50 to alice for order A-1001 (payout P-0001)."
    assert len(errors) == REDEMPTIONS - 1
    assert all(
        e == invalid_state_error("any reason").to_error_object() for e in errors
    )  # clean, identical


def test_sqlite_ledger_two_processes_100_concurrent_redemptions_exactly_one(tmp_path):
    answers = run_fleet(tmp_path, new_sqlite_ledger(tmp_path / "spent.sqlite3"))
    assert_exactly_one_payment(answers)
    from mrtr_kit.server.ledger.sqlite import SqliteLedger

    ledger = SqliteLedger(tmp_path / "spent.sqlite3")
    assert ledger.spent_count() == 1
    asyncio.run(ledger.aclose())


def test_redis_ledger_two_processes_100_concurrent_redemptions_exactly_one(tmp_path):
    redis = start_redis(tmp_path)
    try:
        answers = run_fleet(tmp_path, redis.url)
        assert_exactly_one_payment(answers)
    finally:
        stop(redis.proc)


def test_per_process_memory_ledgers_let_a_fleet_pay_once_per_process(tmp_path):
    """Why the ledger must be shared: each process spends the approval in its own memory, so
    the same approval pays once on each of the two processes."""
    answers = run_fleet(tmp_path, "memory")
    paid = [a for a in answers if a.ok]
    assert len(paid) == 2, Counter(str(a) for a in answers)
    assert Counter(a.kind for a in answers) == {"complete": 2, "error": REDEMPTIONS - 2}


def test_serve_options_aead_codec_shared_keys_and_bearer_tokens(tmp_path):
    """``serve --state-codec aead`` with the ring from MRTR_KIT_STATE_KEYS: a state sealed by
    one process opens on the other; a process with another key rejects it; a request without
    a bearer token gets 401 (HTTP-29)."""
    env = fleet_env()
    stranger_env = fleet_env()  # same token table, a different key ring
    args = ["--example", "refunds", "--state-codec", "aead", "--ledger", "memory"]
    servers = []
    try:
        for n, server_env in enumerate((env, env, stranger_env)):
            servers.append(start_server(args, server_env, tmp_path / f"s{n}.log", AUTH))
        a, b, stranger = (s.url for s in servers)

        async def scenario():
            async with httpx.AsyncClient(headers=AUTH, timeout=30) as http:
                first = await RawCaller(http, a).call_tool("request_refund", {"order_id": "A-1002"})
                retry = {
                    "request_state": first.request_state,
                    "input_responses": YES,
                }
                elsewhere = await RawCaller(http, stranger).call_tool(
                    "request_refund", {"order_id": "A-1002"}, **retry
                )
                on_b = await RawCaller(http, b).call_tool(
                    "request_refund", {"order_id": "A-1002"}, **retry
                )
            async with httpx.AsyncClient(timeout=30) as anonymous:
                unauthorized = await anonymous.post(a, json={})
            return first, elsewhere, on_b, unauthorized

        first, elsewhere, on_b, unauthorized = asyncio.run(scenario())
    finally:
        for server in servers:
            stop(server.proc)
    assert first.request_state.startswith("aead1.k1.")
    assert "12450" not in first.request_state and "A-1002" not in first.request_state
    assert str(elsewhere) == "error -32602 Invalid requestState"
    assert on_b.text == "Refunded $19.90 to alice for order A-1002 (payout P-0001)."
    assert unauthorized.status_code == 401
    assert "principal 'alice'): bad tag" in (tmp_path / "s2.log").read_text()  # reason: log only


# -- one refund per order, on the fleet ------------------------------------------------------------
# Single use (MRTR-S5d) stops one approval paying twice; "one refund per order" is the shop's
# own rule (no spec rule: the spec speaks of states, not orders), kept by the refund desk's
# idempotency key on the order. Round 1 issues a new approval every time, and any instance may
# serve round 2 (CORE-8), so only a record that every instance shares can keep that rule.

APPROVALS = 100


async def approvals_then_redemptions(urls: list[str], order_id: str) -> list[ServerAnswer]:
    """100 distinct approvals of one order (round 1s, half on each instance), then all 100
    round 2s at the same instant, half on each instance."""
    limits = httpx.Limits(max_connections=APPROVALS + 10)
    async with httpx.AsyncClient(headers=AUTH, timeout=120, limits=limits) as http:
        callers = [RawCaller(http, url) for url in urls]
        firsts = await asyncio.gather(
            *(
                callers[n % 2].call_tool("request_refund", {"order_id": order_id})
                for n in range(APPROVALS)
            )
        )
        assert {f.kind for f in firsts} == {"input_required"}, Counter(str(f) for f in firsts)
        return list(
            await asyncio.gather(
                *(
                    callers[(n + 1) % 2].call_tool(  # redeemed on the other instance
                        "request_refund",
                        {"order_id": order_id},
                        request_state=first.request_state,
                        input_responses=YES,
                    )
                    for n, first in enumerate(firsts)
                )
            )
        )


def with_two_instances(tmp_path, ledger: str, scenario) -> Any:
    """Two ``serve --example refunds`` processes sharing the key ring and ``ledger``, and
    nothing else; ``scenario(urls)`` runs against them."""
    env = fleet_env()
    servers: list[ServerProcess] = []
    # A generous write bound: the verdicts below are about counts, never about speed.
    args = ["--example", "refunds", "--ledger", ledger, "--ledger-timeout", "60"]
    try:
        for n in range(2):
            servers.append(start_server(args, env, tmp_path / f"server-{n}.log", AUTH))
        return asyncio.run(scenario([s.url for s in servers]))
    finally:
        for server in servers:
            stop(server.proc)


def assert_one_payout_per_order(answers: list[ServerAnswer], order: str, amount: str) -> None:
    paid = [a.text for a in answers if a.ok and a.text.startswith("Refunded ")]
    assert paid == [f"Refunded {amount} to alice for order {order} (payout P-0001)."], Counter(
        str(a) for a in answers
    )
    refused = (
        f"Order {order} was refunded already ({amount}, payout P-0001). Nothing more was paid."
    )
    assert Counter(a.text for a in answers if a.text != paid[0]) == {refused: len(answers) - 1}


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_one_refund_per_order_on_two_instances_100_approvals_at_once(backend, tmp_path):
    if backend == "redis":
        redis = start_redis(tmp_path)
        ledger = redis.url
    else:
        ledger = new_sqlite_ledger(tmp_path / "ledger.sqlite3")
    try:
        answers = with_two_instances(
            tmp_path, ledger, lambda urls: approvals_then_redemptions(urls, "A-1002")
        )
    finally:
        if backend == "redis":
            stop(redis.proc)
    assert_one_payout_per_order(answers, "A-1002", "$19.90")


def test_one_refund_per_order_on_two_instances_one_after_the_other(tmp_path):
    """No race needed to break a per-process record: approve A-1002 twice, redeem the first
    approval on instance A, then the second on instance B. One pays; B names A's payout."""

    async def scenario(urls: list[str]) -> list[ServerAnswer]:
        async with httpx.AsyncClient(headers=AUTH, timeout=60) as http:
            a, b = (RawCaller(http, url) for url in urls)
            first = await a.call_tool("request_refund", {"order_id": "A-1002"})
            second = await a.call_tool("request_refund", {"order_id": "A-1002"})
            answers = []
            for caller, approval in ((a, first), (b, second)):
                answers.append(
                    await caller.call_tool(
                        "request_refund",
                        {"order_id": "A-1002"},
                        request_state=approval.request_state,
                        input_responses=YES,
                    )
                )
            return answers

    answers = with_two_instances(tmp_path, new_sqlite_ledger(tmp_path / "ledger.sqlite3"), scenario)
    assert [a.text for a in answers] == [
        "Refunded $19.90 to alice for order A-1002 (payout P-0001).",
        "Order A-1002 was refunded already ($19.90, payout P-0001). Nothing more was paid.",
    ]
