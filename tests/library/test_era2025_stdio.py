"""Both eras over stdio: ``StdioSession(eras="both")`` and ``serve --stdio`` (the default),
where the first request decides the connection's era (``mrtr_kit/server/stdio.py``, the
session rules of ``mrtr_kit/server/era2025.py``; docs/architecture.md §8).

In-process tests talk to a ``StdioSession`` line by line; ``test_sdk1_stdio_*`` has the
official Python SDK 1.x client (``mcp<2``, 2025-11-25) start ``serve --stdio --app
tests.apps:both_eras`` as its child, from its own venv.

Rule IDs are the digest's (docs/spec-map.md); the kit's own choices are marked KIT.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mrtr_kit.server.era2025 import LegacyLimits
from mrtr_kit.server.keyring import KeyRing
from mrtr_kit.server.stdio import StdioSession
from tests import apps
from tests.helpers import request as modern_request
from tests.library.test_era2025_http import (
    ALL_CAPS,
    FORM_CAPS,
    LEGACY,
    SDK1_CLIENT,
    sdk1_python,
    trip_answers,
)

ROOT = Path(__file__).resolve().parents[2]


class Pipe:
    """Both ends of a stdio connection, in this process: ``send`` writes a line to the
    session's stdin, ``next`` reads the next line it wrote to stdout."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.ids = iter(range(1, 1000))

    async def write(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1  # STDIO-1: one line, whole
        await self.outbox.put(json.loads(data))

    async def read(self) -> bytes:
        return await self.inbox.get()

    def send(self, message: dict[str, Any]) -> None:
        self.inbox.put_nowait(json.dumps(message).encode() + b"\n")

    def close(self) -> None:
        self.inbox.put_nowait(b"")  # end of input

    async def next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.outbox.get(), 5)

    async def silent(self) -> None:
        """Nothing was written, and nothing is about to be."""
        await asyncio.sleep(0.05)
        assert self.outbox.empty(), self.outbox.get_nowait()

    async def initialize(self, caps: dict[str, Any] | None = None) -> dict[str, Any]:
        params = {
            "protocolVersion": LEGACY,
            "capabilities": FORM_CAPS if caps is None else caps,
            "clientInfo": {"name": "raw-legacy", "version": "0"},
        }
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        answer = await self.next()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, name: str, arguments: dict[str, Any]) -> int:
        rid = next(self.ids)
        params = {"name": name, "arguments": arguments}
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
        return rid

    def answer(self, rid: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})


@asynccontextmanager
async def session(eras: Any = "both", **limits: Any) -> AsyncIterator[tuple[Pipe, StdioSession]]:
    """A ``StdioSession`` serving ``apps.both_eras``, run until the test closes its input."""
    pipe = Pipe()
    server = apps.both_eras(state_keys=KeyRing.generate())
    stdio = StdioSession(
        server, pipe.write, eras=eras, legacy_limits=LegacyLimits(**limits), eof_grace_s=0.5
    )
    task = asyncio.create_task(stdio.run(pipe.read))
    try:
        yield pipe, stdio
    finally:
        pipe.close()
        await asyncio.wait_for(task, 10)


def run(test: Any) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


def test_a_2025_initialize_first_opens_the_legacy_session_over_stdio():
    """KIT (the SDKs' dual-era loop): the first request decides; a 2025-11-25 initialize gets
    its 2025-11-25 answer, no session id (stdio has one session)."""

    async def go() -> None:
        async with session() as (pipe, _):
            init = await pipe.initialize()
            assert init["result"]["protocolVersion"] == LEGACY
            assert init["result"]["serverInfo"]["name"] == "test-eras"
            pipe.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
            assert await pipe.next() == {"jsonrpc": "2.0", "id": 7, "result": {}}
            pipe.send({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
            listed = await pipe.next()
            assert "resultType" not in listed["result"]  # the 2025-11-25 shape (RT-1 is new)
            assert {t["name"] for t in listed["result"]["tools"]} >= {"get_weather", "plan_trip"}

    run(go)


def test_a_form_flow_writes_elicitation_create_to_stdout_and_reads_the_answer_from_stdin():
    """MIG-2 run backwards: the handler's input_required becomes a JSON-RPC request on stdout;
    the client's response on stdin is the next round's answer; the result has no resultType."""

    async def go() -> None:
        async with session() as (pipe, stdio):
            await pipe.initialize()
            rid = pipe.call("get_weather", {"city": "Oslo"})
            pushed = await pipe.next()
            assert pushed["method"] == "elicitation/create" and "id" in pushed
            assert pushed["params"].get("mode", "form") == "form"
            assert "login" in pushed["params"]["requestedSchema"]["properties"]
            pipe.answer(pushed["id"], {"action": "accept", "content": {"login": "ann"}})
            done = await pipe.next()
            assert done["id"] == rid
            assert done["result"]["content"][0]["text"] == "Hello ann! Sunny in Oslo."
            assert "resultType" not in done["result"]
            assert stdio._legacy is not None and stdio._legacy.pending == {}

    run(go)


def test_a_three_round_flow_pushes_a_form_a_sampling_request_and_roots_in_turn():
    async def go() -> None:
        async with session() as (pipe, _):
            await pipe.initialize(ALL_CAPS)
            rid = pipe.call("plan_trip", {})
            methods = []
            while "method" in (message := await pipe.next()):
                methods.append(message["method"])
                pipe.answer(message["id"], trip_answers(message))
            assert methods == ["elicitation/create", "sampling/createMessage", "roots/list"]
            assert message["id"] == rid
            text = message["result"]["content"][0]["text"]
            assert text == "Lyon in spring: 3 nights in Lyon, saved under file:///home/ann/trips"

    run(go)


def test_a_decline_reaches_the_handler():
    """ELIC-6: a decline is the handler's to act on; it ends the call."""

    async def go() -> None:
        async with session() as (pipe, _):
            await pipe.initialize()
            pipe.call("get_weather", {"city": "Oslo"})
            pushed = await pipe.next()
            pipe.answer(pushed["id"], {"action": "decline"})
            done = await pipe.next()
            assert done["result"]["content"][0]["text"] == "No personal forecast for Oslo."

    run(go)


def test_a_question_the_session_cannot_answer_fails_as_on_a_2025_server():
    """MRTR-S7 in the core, answered the 2025-11-25 way: a tool execution error (KIT)."""

    async def go() -> None:
        async with session() as (pipe, _):
            await pipe.initialize({})
            pipe.call("get_weather", {"city": "Oslo"})
            done = await pipe.next()
            assert done["result"]["isError"] is True
            assert "elicitation.form" in done["result"]["content"][0]["text"]

    run(go)


def test_bad_responses_are_logged_not_answered_and_the_question_still_waits(caplog):
    """A response gets no answer (JSON-RPC); one to an id never sent, or malformed, is refused
    (KIT, as over HTTP) and the question it did not answer is still pending."""

    async def go() -> None:
        async with session() as (pipe, stdio):
            await pipe.initialize()
            rid = pipe.call("get_weather", {"city": "Oslo"})
            pushed = await pipe.next()
            pipe.answer(pushed["id"] + 100, {"action": "decline"})  # an id never sent
            pipe.answer(pushed["id"], {"action": "maybe"})  # not an ElicitResult
            await pipe.silent()
            assert stdio._legacy is not None and list(stdio._legacy.pending) == [pushed["id"]]
            pipe.answer(pushed["id"], {"action": "accept", "content": {"login": "ann"}})
            done = await pipe.next()
            assert done["id"] == rid and "Hello ann!" in done["result"]["content"][0]["text"]

    run(go)
    refused = [r.getMessage() for r in caplog.records if "refused a response" in r.getMessage()]
    assert len(refused) == 2


def test_a_second_initialize_is_refused():
    async def go() -> None:
        async with session() as (pipe, _):
            await pipe.initialize()
            again = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "x"}}
            pipe.send({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": again})
            answer = await pipe.next()
            assert answer["id"] == 9 and answer["error"]["code"] == -32600

    run(go)


def test_a_cancel_ends_the_call_without_an_answer_and_drops_its_question():
    """2025-11-25 cancellation: no answer follows, and nothing of the call is left."""

    async def go() -> None:
        async with session() as (pipe, stdio):
            await pipe.initialize()
            rid = pipe.call("get_weather", {"city": "Oslo"})
            pushed = await pipe.next()
            cancel = {"requestId": rid, "reason": "user"}
            pipe.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
            await pipe.silent()
            assert stdio._legacy is not None
            assert stdio._legacy.pending == {} and stdio._legacy.calls == {}
            pipe.answer(pushed["id"], {"action": "accept", "content": {"login": "ann"}})
            await pipe.silent()  # too late: refused like any unknown id, and logged

    run(go)


def test_a_client_that_never_answers_gets_a_timeout_error():
    """KIT (LegacyLimits.answer_timeout_s): the same bound as over HTTP."""

    async def go() -> None:
        async with session(answer_timeout_s=0.2) as (pipe, stdio):
            await pipe.initialize()
            pipe.call("get_weather", {"city": "Oslo"})
            assert (await pipe.next())["method"] == "elicitation/create"
            done = await pipe.next()
            assert done["result"]["isError"] is True
            assert "Timed out" in done["result"]["content"][0]["text"]
            assert stdio._legacy is not None and stdio._legacy.pending == {}

    run(go)


def test_end_of_input_mid_question_ends_the_call_without_an_answer():
    async def go() -> None:
        pipe = Pipe()
        server = apps.both_eras(state_keys=KeyRing.generate())
        stdio = StdioSession(server, pipe.write, eras="both", eof_grace_s=0.2)
        task = asyncio.create_task(stdio.run(pipe.read))
        await pipe.initialize()
        pipe.call("get_weather", {"city": "Oslo"})
        assert (await pipe.next())["method"] == "elicitation/create"
        pipe.close()
        await asyncio.wait_for(task, 5)
        assert pipe.outbox.empty()
        assert stdio._legacy is not None and stdio._legacy.pending == {}

    run(go)


def test_modern_only_refuses_a_2025_initialize_with_32022():
    """VER-5 / VER-1: ``eras="modern"`` (StdioSession's default) names its versions."""

    async def go() -> None:
        async with session(eras="modern") as (pipe, _):
            answer = await pipe.initialize()
            assert answer["error"]["code"] == -32022
            assert answer["error"]["data"]["supported"] == ["2026-07-28"]

    run(go)


def test_a_modern_first_request_makes_the_connection_modern_for_good():
    """The first request decides: after a 2026-07-28 request, a 2025-11-25 initialize is the
    modern core's to refuse (-32022), and modern rounds carry on."""

    async def go() -> None:
        async with session() as (pipe, _):
            caps = {"elicitation": {"form": {}}}
            args = {"name": "get_weather", "arguments": {"city": "Oslo"}}
            pipe.send(modern_request("tools/call", args, capabilities=caps))
            first = await pipe.next()
            assert first["result"]["resultType"] == "input_required"
            answer = await pipe.initialize()
            assert answer["error"]["code"] == -32022

    run(go)


# -- serve --stdio, both eras by default, with the official SDK 1.x client --------------------


def spawn(*extra: str) -> dict[str, Any]:
    """How the SDK's stdio client starts ``serve --stdio`` on the library's test app."""
    args = ["-m", "mrtr_kit", "serve", "--stdio", "--app", "tests.apps:both_eras", *extra]
    return {
        "command": sys.executable,
        "args": args,
        "env": {"PYTHONPATH": str(ROOT)},
        "cwd": str(ROOT),
    }


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["form", "three_rounds", "decline", "no_elicitation"])
def test_sdk1_stdio_client_flows(scenario):
    """The SDK 1.x's ``stdio_client`` and ``elicitation_callback``/``sampling_callback``/
    ``list_roots_callback`` against ``serve --stdio``: pushed requests answered, 2025-11-25."""
    python = sdk1_python()
    proc = subprocess.run(
        [python, str(SDK1_CLIENT), "stdio", scenario, json.dumps(spawn())],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    report = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    expected = {
        "form": "Hello ann! Sunny in Oslo.",
        "three_rounds": "Lyon in spring: 3 nights in Lyon, saved under file:///home/ann/trips",
        "decline": "No personal forecast for Oslo.",
        "no_elicitation": "This needs the client capability elicitation.form, which this "
        "session's initialize did not declare",
    }[scenario]
    assert report == {
        "protocolVersion": LEGACY,
        "text": expected,
        "isError": scenario == "no_elicitation",
    }


@pytest.mark.slow
def test_serve_stdio_modern_only_keeps_32022():
    """VER-5: ``serve --stdio --modern-only`` answers a 2025-11-25 initialize -32022."""
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "x"}}
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    how = spawn("--modern-only")
    proc = subprocess.run(
        [how["command"], *how["args"]],
        input=line.encode() + b"\n",
        capture_output=True,
        env={**how["env"], "PATH": "/usr/bin:/bin"},
        cwd=how["cwd"],
        timeout=60,
    )
    answer = json.loads(proc.stdout)
    assert answer["error"]["code"] == -32022, proc.stderr.decode()
