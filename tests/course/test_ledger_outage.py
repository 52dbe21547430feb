"""A ledger that is down, frozen or volatile, against a real ``redis-server`` and a real
``serve --example refunds`` process.

* KIT-ERR-A: a request that needs the ledger while it cannot answer gets -31000 "try again
  later" with ``data.reason`` and ``data.retryAfterMs``, over HTTP 503 with ``Retry-After``;
  the wait is bounded (``ledger.bounded``), and the approval is not spent, so the client's
  retry of the same state pays, once (MRTR-S5d), when the ledger is back.
* A Redis that keeps nothing across a restart is refused at start-up, unless the operator
  opts in with ``--allow-volatile-ledger``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest
import redis

from mrtr_course.refund_lab.lab import YES, RawCaller, ServerAnswer
from mrtr_kit.server.ledger import CLOCK_MARGIN_S, LEDGER_TIMEOUT_S
from mrtr_kit.server.ledger.redis import (
    DEFAULT_PREFIX,
    RECORD_ONCE,
    SPEND,
    VolatileRedis,
    check_persistence,
)
from mrtr_kit.server.state import invalid_state_error
from tests.course.test_ledger_fleet import AUTH, fleet_env
from tests.ledger_services import RedisServer, start_redis, start_server, stop

pytestmark = pytest.mark.slow

TRY_AGAIN = {
    "code": -31000,
    "message": "Temporarily unavailable: try again later",
    "data": {"reason": "ledger_unavailable", "retryAfterMs": 2000},
}


class Recorder:
    """Every HTTP response the client gets: status and headers, for the 503 checks."""

    def __init__(self) -> None:
        self.responses: list[httpx.Response] = []

    async def __call__(self, response: httpx.Response) -> None:
        self.responses.append(response)


async def approve(caller: RawCaller, order_id: str) -> str:
    first = await caller.call_tool("request_refund", {"order_id": order_id})
    assert first.kind == "input_required" and first.request_state, first
    return first.request_state


async def redeem(caller: RawCaller, order_id: str, state: str) -> ServerAnswer:
    return await caller.call_tool(
        "request_refund", {"order_id": order_id}, request_state=state, input_responses=YES
    )


def spent_keys(server: RedisServer) -> list[bytes]:
    client = redis.Redis(port=server.port)
    try:
        return list(client.keys(DEFAULT_PREFIX + "*"))
    finally:
        client.close()


def load_scripts(server: RedisServer) -> None:
    client = redis.Redis(port=server.port)
    try:
        for script in (SPEND, RECORD_ONCE):
            client.script_load(script)
    finally:
        client.close()


def wait_until_clients_gone(server: RedisServer, cap_s: float = 60.0) -> None:
    """After SIGCONT: wait until Redis has read what the server's closed connections sent
    (it drops a connection only after reading its last bytes) - our own is the one left."""
    client = redis.Redis(port=server.port, socket_timeout=cap_s)
    deadline = time.monotonic() + cap_s
    try:
        while len(client.client_list()) > 1:
            assert time.monotonic() < deadline, client.client_list()
            time.sleep(0.05)
    finally:
        client.close()


def serve_refunds(tmp_path, url: str) -> Any:
    return start_server(
        ["--example", "refunds", "--ledger", url], fleet_env(), tmp_path / "serve.log", AUTH
    )


def test_redis_killed_gives_a_retryable_503_and_the_approval_pays_once_it_is_back(tmp_path):
    store = start_redis(tmp_path)
    server = serve_refunds(tmp_path, store.url)
    seen = Recorder()

    async def scenario() -> None:
        nonlocal store
        hooks = {"response": [seen]}
        async with httpx.AsyncClient(headers=AUTH, timeout=120, event_hooks=hooks) as http:
            caller = RawCaller(http, server.url)
            state = await approve(caller, "A-1001")
            store.proc.send_signal(signal.SIGKILL)  # a crash: nothing is closed cleanly
            store.proc.wait()
            down = await redeem(caller, "A-1001", state)
            assert down.response["error"] == TRY_AGAIN
            assert (seen.responses[-1].status_code, seen.responses[-1].headers["retry-after"]) == (
                503,
                "2",
            )
            # Round 1 needs the ledger too (has this order been refunded?): the same answer.
            again = await caller.call_tool("request_refund", {"order_id": "A-1002"})
            assert again.response["error"] == TRY_AGAIN

            store = start_redis(tmp_path, port=store.port)  # back, with its append-only file
            paid = await redeem(caller, "A-1001", state)
            assert paid.text == "Refunded $124.50 to alice for order A-1001 (payout P-0001)."
            replay = await redeem(caller, "A-1001", state)
            assert replay.response["error"] == invalid_state_error("any reason").to_error_object()

    try:
        asyncio.run(scenario())
    finally:
        stop(server.proc)
        stop(store.proc)


def test_redis_frozen_answers_within_the_bound_and_spends_nothing_late(tmp_path):
    """SIGSTOP: Redis accepts connections (the kernel does) but answers nothing. Each round 2
    gets -31000 after the ledger's bound, not whenever Redis wakes up; when it wakes, it
    refuses the spends that reached it after their deadline, so no approval is burnt: both
    clients' retries pay."""
    store = start_redis(tmp_path)
    server = serve_refunds(tmp_path, store.url)

    async def scenario() -> list[float]:
        async with httpx.AsyncClient(headers=AUTH, timeout=120) as http:
            caller = RawCaller(http, server.url)
            states = {o: await approve(caller, o) for o in ("A-1001", "A-1002")}
            load_scripts(store)  # so that a late EVALSHA would run, not fail with NOSCRIPT
            store.proc.send_signal(signal.SIGSTOP)
            try:

                async def timed(order_id: str) -> float:
                    start = time.monotonic()
                    answer = await redeem(caller, order_id, states[order_id])
                    assert answer.response.get("error") == TRY_AGAIN, answer
                    return time.monotonic() - start

                waits = await asyncio.gather(*(timed(o) for o in states))
            finally:
                store.proc.send_signal(signal.SIGCONT)
            wait_until_clients_gone(store)
            assert spent_keys(store) == []  # the late spends were refused by Redis itself
            for order_id, amount in (("A-1001", "$124.50"), ("A-1002", "$19.90")):
                paid = await redeem(caller, order_id, states[order_id])
                assert paid.text.startswith(f"Refunded {amount} to alice for order {order_id}")
            return list(waits)

    try:
        waits = asyncio.run(scenario())
    finally:
        stop(server.proc)
        stop(store.proc)
    # Bounded: the client had its answer while Redis was still frozen (SIGCONT came after),
    # and not before the ledger's own bound ran out. No upper limit in seconds here: the
    # "while still frozen" is the bound, and a busy machine only makes it later.
    assert all(w >= LEDGER_TIMEOUT_S * 0.9 for w in waits), waits
    assert LEDGER_TIMEOUT_S + CLOCK_MARGIN_S <= 5  # the documented bound stays short


def test_a_volatile_redis_is_refused_at_start_up_and_the_opt_in_serves(tmp_path):
    store = start_redis(tmp_path, persistent=False)
    command = [sys.executable, "-m", "mrtr_kit", "serve", "--port", "0"]
    command += ["--example", "refunds", "--ledger", store.url]
    try:
        refused = subprocess.run(
            command, capture_output=True, text=True, timeout=120, env=dict(os.environ)
        )
        assert refused.returncode == 2, refused
        assert "keeps nothing across a restart (appendonly no, save '')" in refused.stderr
        assert "--allow-volatile-ledger" in refused.stderr
        with pytest.raises(VolatileRedis):
            check_persistence(store.url)

        opted_in = start_server(
            ["--example", "refunds", "--ledger", store.url, "--allow-volatile-ledger"],
            fleet_env(),
            tmp_path / "opted-in.log",
            AUTH,
        )
        stop(opted_in.proc)
    finally:
        stop(store.proc)


def test_check_persistence_names_what_a_redis_keeps(tmp_path):
    aof = start_redis(tmp_path)
    try:
        assert check_persistence(aof.url) == "AOF"
        client = redis.Redis(port=aof.port)
        client.config_set("appendonly", "no")
        client.config_set("save", "3600 1")
        client.close()
        assert check_persistence(aof.url).startswith("snapshots only (save 3600 1)")
    finally:
        stop(aof.proc)
