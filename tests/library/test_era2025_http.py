"""One handler, both eras: ``create_app(server, eras="both")`` serves 2025-11-25 sessions from
the same MRTR handlers (``mrtr_kit/server/era2025_http.py``; docs/architecture.md §8).

The server runs under uvicorn on loopback, in the test's own event loop, and a small raw
2025-11-25 client (httpx) reads the pushed requests off each call's SSE stream and POSTs its
answers back on the session. ``test_sdk1_client_*`` drives the same server with the official
Python SDK 1.x client (``mcp<2``, 2025-11-25) from its own venv, as a subprocess.

Rule IDs are the digest's (docs/spec-map.md); the kit's own choices are marked KIT.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from mrtr_kit.server.auth import BearerTokens
from mrtr_kit.server.era2025_http import LegacyEra, LegacyLimits
from mrtr_kit.server.http import bind_tcp, create_app, uvicorn_config
from mrtr_kit.server.keyring import KeyRing
from tests import apps
from tests.helpers import headers as modern_headers
from tests.helpers import request as modern_request

LEGACY = "2025-11-25"
FORM_CAPS: dict[str, Any] = {"elicitation": {"form": {}}}
ALL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
Answer = Callable[[dict[str, Any]], Any]


def build(**limits: Any) -> tuple[Any, LegacyEra]:
    """The test handlers in a dual-era app, and its legacy era (to look inside)."""
    server = apps.both_eras(state_keys=KeyRing.generate())
    tokens = BearerTokens({"ann": "token-ann", "bob": "token-bob"})
    app = create_app(server, eras="both", principal_of=tokens, legacy_limits=LegacyLimits(**limits))
    return app, app.app.endpoint.legacy


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """uvicorn with the kit's settings on a free loopback port, in this event loop."""
    sock = bind_tcp("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn_config(app, log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        assert not task.done(), "uvicorn did not start"
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


class Legacy:
    """A bare 2025-11-25 Streamable HTTP client: what goes over the wire, and nothing more."""

    def __init__(self, http: httpx.AsyncClient, url: str, token: str = "token-ann") -> None:
        self.http = http
        self.url = url
        self.token = token
        self.sid: str | None = None
        self.ids = iter(range(1, 1000))
        self.wire: list[dict[str, Any]] = []  # every SSE event of the last call

    def head(self, **extra: str) -> dict[str, str]:
        h = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {self.token}",
        }
        if self.sid is not None:
            h["Mcp-Session-Id"] = self.sid
            h["MCP-Protocol-Version"] = LEGACY
        h.update(extra)
        return h

    async def post(self, body: Any, **extra: str) -> httpx.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return await self.http.post(self.url, content=content, headers=self.head(**extra))

    async def initialize(self, caps: dict[str, Any] | None = None) -> dict[str, Any]:
        params = {
            "protocolVersion": LEGACY,
            "capabilities": FORM_CAPS if caps is None else caps,
            "clientInfo": {"name": "raw-legacy", "version": "0"},
        }
        r = await self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert r.status_code == 200, r.text
        self.sid = r.headers["mcp-session-id"]
        note = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202
        return r.json()

    async def call(
        self,
        method: str,
        params: dict[str, Any],
        answer: Answer | None = None,
        version: str = LEGACY,
    ) -> dict[str, Any]:
        """One request; each pushed request is answered with ``answer(request)``: a result
        dict, ``("error", {...})``, or None to never answer. Returns the final response."""
        self.wire = []
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        head = self.head(**{"MCP-Protocol-Version": version})
        async with self.http.stream(
            "POST", self.url, content=json.dumps(body).encode(), headers=head
        ) as r:
            assert r.status_code == 200
            if r.headers["content-type"].startswith("application/json"):
                return json.loads(await r.aread())
            async for line in r.aiter_lines():
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                self.wire.append(event)
                if "method" in event and "id" in event:
                    reply = answer(event) if answer is not None else None
                    if reply is not None:
                        await self.respond(event["id"], reply, version)
                elif "method" not in event:
                    return event
        raise AssertionError("the stream ended without a response")

    async def respond(self, rid: Any, reply: Any, version: str = LEGACY) -> httpx.Response:
        if isinstance(reply, tuple):
            message = {"jsonrpc": "2.0", "id": rid, "error": reply[1]}
        else:
            message = {"jsonrpc": "2.0", "id": rid, "result": reply}
        r = await self.post(message, **{"MCP-Protocol-Version": version})
        assert r.status_code == 202, r.text
        return r


def run(body: Callable[..., Awaitable[None]], **limits: Any) -> None:
    """Serve the dual-era app and run ``body(client, legacy_era, url, http)``."""

    async def main() -> None:
        app, era = build(**limits)
        async with serving(app) as url, httpx.AsyncClient(timeout=20) as http:
            await body(Legacy(http, url), era, url, http)

    asyncio.run(main())


def accept_login(req: dict[str, Any]) -> dict[str, Any]:
    assert req["method"] == "elicitation/create"
    return {"action": "accept", "content": {"login": "ann"}}


def trip_answers(req: dict[str, Any]) -> dict[str, Any]:
    if req["method"] == "elicitation/create":
        return {"action": "accept", "content": {"city": "Lyon", "nights": 3}}
    if req["method"] == "sampling/createMessage":
        text = {"type": "text", "text": "Lyon in spring"}
        return {"role": "assistant", "content": text, "model": "stand-in"}
    assert req["method"] == "roots/list"
    return {"roots": [{"uri": "file:///home/ann/trips", "name": "trips"}]}


def text_of(response: dict[str, Any]) -> str:
    return str(response["result"]["content"][0]["text"])


# -- the flows --------------------------------------------------------------------------------


def test_initialize_opens_a_session_and_names_the_servers_features():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        init = await c.initialize()
        assert init["result"]["protocolVersion"] == LEGACY
        assert set(init["result"]["capabilities"]) == {"tools", "prompts", "resources"}
        assert init["result"]["serverInfo"]["name"] == "test-eras"
        assert c.sid is not None and len(c.sid) >= 43  # 256 random bits, base64url (KIT)
        assert all(0x21 <= ord(ch) <= 0x7E for ch in c.sid)  # visible ASCII (2025-11-25)
        assert era.sessions[c.sid].principal == "ann"
        assert era.sessions[c.sid].capabilities == FORM_CAPS

    run(body)


def test_form_flow_pushes_elicitation_create_and_answers_in_the_2025_shape():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        done = await c.call(
            "tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}}, accept_login
        )
        pushed = c.wire[0]
        assert pushed["method"] == "elicitation/create" and isinstance(pushed["id"], int)
        assert pushed["params"]["requestedSchema"] == apps.LOGIN_FORM
        assert "inputRequests" not in json.dumps(c.wire)  # no MRTR on this wire (MIG-1)
        assert "requestState" not in json.dumps(c.wire)  # the state never leaves (KIT)
        assert text_of(done) == "Hello ann! Sunny in Oslo."
        # 2025-11-25 shape (KIT): no resultType (RT-1) and no result serverInfo (CORE-16).
        assert "resultType" not in done["result"] and "_meta" not in done["result"]
        assert era.sessions[c.sid].pending == {}

    run(body)


def test_three_round_flow_pushes_a_form_a_sampling_request_and_roots_in_turn():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize(ALL_CAPS)
        done = await c.call("tools/call", {"name": "plan_trip", "arguments": {}}, trip_answers)
        pushed = [e for e in c.wire if "method" in e]
        assert [e["method"] for e in pushed] == [
            "elicitation/create",
            "sampling/createMessage",
            "roots/list",
        ]
        assert len({e["id"] for e in pushed}) == 3  # CORE-3: a new id each
        assert (
            text_of(done) == "Lyon in spring: 3 nights in Lyon, saved under file:///home/ann/trips"
        )

    run(body)


def test_a_decline_reaches_the_handler_which_ends_the_call():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        done = await c.call(
            "tools/call",
            {"name": "get_weather", "arguments": {"city": "Oslo"}},
            lambda req: {"action": "decline"},
        )
        assert text_of(done) == "No personal forecast for Oslo."  # ELIC-6
        assert "isError" not in done["result"]

    run(body)


def test_prompts_get_and_resources_read_ask_the_same_way():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        prompt = await c.call(
            "prompts/get",
            {"name": "greeting", "arguments": {}},
            lambda req: {"action": "accept", "content": {"name": "Bea"}},
        )
        assert prompt["result"]["messages"][0]["content"]["text"] == "Write a greeting for Bea."
        note = await c.call(
            "resources/read",
            {"uri": "secret://note"},
            lambda req: {"action": "accept", "content": {"ok": True}},
        )
        assert note["result"]["contents"][0]["text"] == "the note"
        assert "ttlMs" not in note["result"] and "cacheScope" not in note["result"]  # KIT

    run(body)


def test_a_legacy_client_cannot_inject_mrtr_fields():
    """inputResponses and requestState do not exist in 2025-11-25: they are dropped, so a
    forged state or a self-made "accept" never reaches the core (MRTR-S4, SEC-6; KIT)."""

    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        params = {
            "name": "get_weather",
            "arguments": {"city": "Oslo"},
            "requestState": "forged",
            "inputResponses": {"login": {"action": "accept", "content": {"login": "eve"}}},
        }
        done = await c.call("tools/call", params, accept_login)
        assert [e["method"] for e in c.wire if "method" in e] == ["elicitation/create"]
        assert text_of(done) == "Hello ann! Sunny in Oslo."

    run(body)


def test_single_use_holds_on_the_legacy_path():
    """The core spends the state in its ledger on the in-process retry, as for a modern
    client (MRTR-S5d): one confirmation, one payment. The handler's progress notification
    goes out on the same stream, before the question (HTTP-21's shape is 2025-11-25's)."""

    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        apps.PAID.clear()
        yes = {"action": "accept", "content": {"ok": True}}
        params = {"name": "pay", "arguments": {}, "_meta": {"progressToken": "p1"}}
        done = await c.call("tools/call", params, lambda req: yes)
        assert text_of(done) == "Paid." and apps.PAID == ["ann"]
        progress = {"progressToken": "p1", "progress": 0, "total": 2, "message": "asking"}
        assert c.wire[0] == {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": progress,
        }
        assert c.wire[1]["method"] == "elicitation/create"  # the handler's notification first
        assert len(era.server.ledger._spent) == 1  # type: ignore[attr-defined]

    run(body)


@pytest.mark.parametrize(
    ("asked", "agreed"),
    [("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"), ("2024-11-05", "2025-11-25")],
)
def test_version_negotiation_of_initialize(asked, agreed):
    """The server echoes a version it speaks, else names its latest (2025-11-25 lifecycle).
    2025-06-18 is served too (KIT: it costs one line, a form's ``mode`` removed)."""

    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        params = {
            "protocolVersion": asked,
            "capabilities": FORM_CAPS,
            "clientInfo": {"name": "x", "version": "0"},
        }
        r = await c.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        assert r.json()["result"]["protocolVersion"] == agreed
        c.sid = r.headers["mcp-session-id"]
        done = await c.call(
            "tools/call",
            {"name": "get_weather", "arguments": {"city": "Oslo"}},
            accept_login,
            version=agreed,
        )
        assert text_of(done) == "Hello ann! Sunny in Oslo."
        assert "mode" not in c.wire[0]["params"]  # form mode, as the core sends it (ELIC-1)

    run(body)


def test_lists_and_ping_work_on_a_session_in_the_2025_shape():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        tools = (await c.post({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})).json()
        assert [t["name"] for t in tools["result"]["tools"]][:2] == ["get_weather", "plan_trip"]
        assert "ttlMs" not in tools["result"] and "resultType" not in tools["result"]
        pong = await c.post({"jsonrpc": "2.0", "id": 6, "method": "ping"})
        assert pong.json() == {"jsonrpc": "2.0", "id": 6, "result": {}}

    run(body)


def test_a_question_the_session_cannot_answer_fails_as_on_a_2025_server():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize({})  # no elicitation declared
        tool = await c.call("tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}})
        # KIT: a tool execution error for tools/call (MRTR-S7 holds: nothing was pushed) ...
        assert tool["result"]["isError"] is True and "elicitation.form" in text_of(tool)
        assert c.wire == []
        prompt = await c.call("prompts/get", {"name": "greeting", "arguments": {}})
        # ... and a JSON-RPC error where there is no isError; never 2026's -32021 (KIT).
        assert prompt["error"]["code"] == -32602
        assert prompt["error"]["data"]["requiredCapabilities"] == {"elicitation": {"form": {}}}

    run(body)


def test_url_mode_pushes_an_elicitation_id_and_signals_completion():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize(ALL_CAPS)
        apps.LINKED.discard("ann")

        def go(req: dict[str, Any]) -> dict[str, Any]:
            assert req["params"]["mode"] == "url" and req["params"]["elicitationId"]
            # the user finishes the page a little later: the handler waits (MRTR-S3)
            asyncio.get_running_loop().call_later(0.3, apps.LINKED.add, "ann")
            return {"action": "accept"}

        done = await c.call(
            "tools/call", {"name": "link_account", "arguments": {"user": "ann"}}, go
        )
        assert text_of(done) == "Linked ann."
        eid = c.wire[0]["params"]["elicitationId"]
        complete = [e for e in c.wire if e.get("method") == "notifications/elicitation/complete"]
        assert complete == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": eid},
            }
        ]
        assert c.wire.index(complete[0]) == len(c.wire) - 2  # before the answer (ELIC-11)

    run(body, poll_interval_s=0.05)


def test_url_mode_without_the_url_capability_fails_before_anything_is_pushed():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize(FORM_CAPS)
        done = await c.call("tools/call", {"name": "link_account", "arguments": {"user": "ann"}})
        assert done["result"]["isError"] is True and "elicitation.url" in text_of(done)

    run(body)


def test_modern_clients_are_served_as_before_on_the_same_endpoint():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        req = modern_request(
            "tools/call",
            {"name": "get_weather", "arguments": {"city": "Oslo"}},
            capabilities=FORM_CAPS,
        )
        h = modern_headers("tools/call", "get_weather", Authorization="Bearer token-ann")
        r = await http.post(url, json=req, headers=h)
        assert r.status_code == 200 and r.json()["result"]["resultType"] == "input_required"
        assert "mcp-session-id" not in r.headers  # HTTP-20: no session for 2026-07-28
        stale = await http.post(url, json=req, headers={**h, "Mcp-Session-Id": "stale"})
        assert stale.json()["result"]["resultType"] == "input_required"  # HTTP-20: ignored
        no_session = await http.delete(url, headers={"Authorization": "Bearer token-ann"})
        assert no_session.status_code == 405  # HTTP-20, as a modern-only server
        assert era.sessions == {}

    run(body)


def test_the_default_app_stays_modern_only():
    """Opt-in (KIT): without eras="both", a legacy initialize gets -32022 (VER-5)."""

    async def main() -> None:
        app = create_app(apps.both_eras(state_keys=KeyRing.generate()))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            params = {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "0"},
            }
            r = await http.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
            )
            assert r.status_code == 400 and r.json()["error"]["code"] == -32022
            assert "mcp-session-id" not in r.headers
            assert (await http.delete("/mcp")).status_code == 405

    asyncio.run(main())


# -- bad input: a JSON-RPC error and an HTTP status, never a 500, nothing lost ----------------


def test_a_response_to_an_id_never_sent_is_400_without_an_id():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        r = await c.post({"jsonrpc": "2.0", "id": 999, "result": {"action": "accept"}})
        assert r.status_code == 400
        assert r.json()["error"]["code"] == -32600 and "id" not in r.json()

    run(body)


def test_an_answer_posted_on_another_session_is_refused_and_the_question_waits():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        other = Legacy(http, url)
        await other.initialize()
        await c.initialize()
        refused: list[int] = []

        async def answer_wrong_then_right(req: dict[str, Any]) -> None:
            r = await other.post({"jsonrpc": "2.0", "id": req["id"], "result": accept_login(req)})
            refused.append(r.status_code)
            assert era.sessions[c.sid].pending  # nothing lost: still waiting
            await c.respond(req["id"], accept_login(req))

        def answer(req: dict[str, Any]) -> None:
            asyncio.get_running_loop().create_task(answer_wrong_then_right(req))
            return None

        done = await c.call(
            "tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}}, answer
        )
        assert refused == [400]
        assert text_of(done) == "Hello ann! Sunny in Oslo."

    run(body)


def test_another_principals_session_id_is_404():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        c.token = "token-bob"  # bob presents ann's session id
        r = await c.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert r.status_code == 404 and r.json()["error"]["code"] == -32600
        assert (await http.delete(url, headers=c.head())).status_code == 404
        assert c.sid in era.sessions  # bob ended nothing

    run(body)


def test_a_second_initialize_on_a_session_is_400():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        params = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "0"},
        }
        r = await c.post({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params})
        assert r.status_code == 400
        assert r.json() == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32600, "message": "Session already initialized"},
        }
        assert era.sessions[c.sid].capabilities == FORM_CAPS  # unchanged

    run(body)


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        (b'{"jsonrpc": "2.0", "id": 1, "result": ', 400, -32700),  # not JSON
        (b'[{"jsonrpc": "2.0", "id": 1, "result": {}}]', 400, -32600),  # a batch
        (b'{"jsonrpc": "2.0", "id": 1}', 400, -32600),  # neither result nor error
        (b'{"jsonrpc": "1.0", "method": "ping", "id": 1}', 400, -32600),
        (b'{"jsonrpc": "2.0", "method": "ping", "id": null}', 400, -32600),
    ],
)
def test_a_malformed_post_on_a_session_gets_its_json_rpc_error(payload, status, code):
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        r = await c.post(payload)
        assert (r.status_code, r.json()["error"]["code"]) == (status, code)
        assert c.sid in era.sessions

    run(body)


def test_bad_answers_are_refused_and_the_question_still_waits():
    """Too large (413) and not an ElicitResult (400): the client may still answer well."""

    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        statuses: list[tuple[int, int]] = []

        async def answers(req: dict[str, Any]) -> None:
            big = {"action": "accept", "content": {"login": "x" * 2000}}
            for bad in (big, {"action": "maybe"}):
                r = await c.post({"jsonrpc": "2.0", "id": req["id"], "result": bad})
                statuses.append((r.status_code, r.json()["error"]["code"]))
            await c.respond(req["id"], accept_login(req))

        def answer(req: dict[str, Any]) -> None:
            asyncio.get_running_loop().create_task(answers(req))
            return None

        done = await c.call(
            "tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}}, answer
        )
        assert statuses == [(413, -32600), (400, -32602)]
        assert text_of(done) == "Hello ann! Sunny in Oslo."

    run(body, max_answer_bytes=1024)


def test_unknown_session_protocol_version_mismatch_and_no_session():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert (await c.post(ping, **{"MCP-Protocol-Version": "2025-06-18"})).status_code == 400
        c.sid, sid = "not-a-session", c.sid
        assert (await c.post(ping)).status_code == 404
        c.sid = None  # a legacy request outside any session: the modern path's 400
        assert (await c.post(ping)).status_code == 400
        c.sid = sid
        assert (await http.delete(url, headers=c.head())).status_code == 200
        assert (await c.post(ping)).status_code == 404  # ended: start again (2025-11-25)

    run(body)


def test_a_bug_in_the_driver_is_answered_internal_error_not_500(monkeypatch):
    def broken(result: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("a bug")

    monkeypatch.setattr("mrtr_kit.server.era2025.legacy_result", broken)

    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        done = await c.call(
            "tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}}, accept_login
        )
        assert done["error"] == {"code": -32603, "message": "Internal error"}  # on the stream
        assert era.sessions[c.sid].pending == {} and era.sessions[c.sid].calls == {}

    run(body)


# -- bounds: a client that never answers, and nothing leaks -----------------------------------


def test_a_client_that_never_answers_gets_a_timeout_error_and_nothing_leaks():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        done = await c.call("tools/call", {"name": "get_weather", "arguments": {"city": "Oslo"}})
        assert done["result"]["isError"] is True and "Timed out" in text_of(done)  # MRTR-S8
        session = era.sessions[c.sid]
        assert session.pending == {} and session.calls == {}
        late = await c.post(
            {"jsonrpc": "2.0", "id": c.wire[0]["id"], "result": accept_login(c.wire[0])}
        )
        assert late.status_code == 400  # the question is gone

    run(body, answer_timeout_s=0.3)


def test_sessions_per_principal_are_bounded():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        await Legacy(http, url).initialize()
        params = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "x", "version": "0"},
        }
        third = await Legacy(http, url).post(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        )
        assert third.status_code == 429 and "mcp-session-id" not in third.headers
        await Legacy(http, url, "token-bob").initialize()  # per principal: bob may

    run(body, max_sessions_per_principal=2)


def test_an_idle_session_ends():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        await asyncio.sleep(0.4)
        r = await c.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert r.status_code == 404 and era.sessions == {}

    run(body, idle_timeout_s=0.3)


def test_pending_requests_per_session_are_bounded():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        first = asyncio.create_task(
            c.call("tools/call", {"name": "get_weather", "arguments": {"city": "A"}})
        )
        while not era.sessions[c.sid].pending:
            await asyncio.sleep(0.01)
        second = await Legacy.call(
            c, "tools/call", {"name": "get_weather", "arguments": {"city": "B"}}
        )
        assert second["result"]["isError"] is True and "Too many" in text_of(second)
        first.cancel()

    run(body, max_pending_per_session=1, answer_timeout_s=2)


def test_a_hang_up_or_a_cancel_ends_the_call_and_drops_its_questions():
    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        await c.initialize()
        session = era.sessions[c.sid]
        hung = asyncio.create_task(
            c.call("tools/call", {"name": "get_weather", "arguments": {"city": "A"}})
        )
        while not session.pending:
            await asyncio.sleep(0.01)
        hung.cancel()  # the client closes the stream
        with contextlib.suppress(asyncio.CancelledError):
            await hung
        for _ in range(200):
            if not session.pending and not session.calls:
                break
            await asyncio.sleep(0.01)
        assert session.pending == {} and session.calls == {}

        body_ = {
            "jsonrpc": "2.0",
            "id": 42,
            "method": "tools/call",
            "params": {"name": "get_weather", "arguments": {"city": "B"}},
        }
        async with http.stream(
            "POST", url, content=json.dumps(body_).encode(), headers=c.head()
        ) as r:
            events = r.aiter_lines()
            async for line in events:
                if line.startswith("data: "):
                    break  # the pushed question
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 42},
            }
            assert (await c.post(cancel)).status_code == 202
            rest = [line async for line in events if line.startswith("data: ")]
        assert rest == []  # no answer to a cancelled request (2025-11-25)
        assert session.pending == {} and session.calls == {}

    run(body)


# -- the official Python SDK 1.x client (2025-11-25), as a subprocess -------------------------

# The official Python SDK 1.x (a 2025-11-25 client) in a venv of its own, beside .venv's mcp 2.3:
# .ci/run's "sdk 1.x client" stage makes it (`python3 -m venv .sdk1`, `pip install "mcp<2"`).
SDK1_PYTHON = os.environ.get(
    "MRTR_SDK1_PYTHON", str(Path(__file__).resolve().parents[2] / ".sdk1" / "bin" / "python")
)
SDK1_CLIENT = Path(__file__).with_name("sdk1_legacy_client.py")


def sdk1_python() -> str:
    if Path(SDK1_PYTHON).exists():
        return SDK1_PYTHON
    message = (
        f'no SDK 1.x venv at {SDK1_PYTHON}: python3 -m venv .sdk1 && .sdk1/bin/pip install "mcp<2"'
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.slow
@pytest.mark.parametrize(
    "scenario", ["form", "three_rounds", "decline", "prompt_and_resource", "no_elicitation"]
)
def test_sdk1_client_flows(scenario):
    python = sdk1_python()

    async def body(c: Legacy, era: LegacyEra, url: str, http: httpx.AsyncClient) -> None:
        proc = await asyncio.create_subprocess_exec(
            python,
            str(SDK1_CLIENT),
            url,
            scenario,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()[-3000:]
        report = json.loads(out.decode().strip().splitlines()[-1])
        expected = {
            "form": "Hello ann! Sunny in Oslo.",
            "three_rounds": "Lyon in spring: 3 nights in Lyon, saved under file:///home/ann/trips",
            "decline": "No personal forecast for Oslo.",
            "prompt_and_resource": "Write a greeting for Bea. / the note",
            "no_elicitation": "This needs the client capability elicitation.form, which this "
            "session's initialize did not declare",
        }[scenario]
        assert report["text"] == expected
        assert report["isError"] is (scenario == "no_elicitation")  # KIT: a tool error
        assert report["protocolVersion"] == LEGACY
        assert era.sessions == {}  # the SDK client DELETEs its session on exit

    run(body)


# -- serve: both eras by default, --modern-only keeps VER-5 ------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("modern_only", [False, True])
def test_serve_serves_both_eras_by_default_and_modern_only_keeps_32022(modern_only):
    """KIT (issue 29): ``serve`` opens a 2025-11-25 session for a legacy ``initialize`` and still
    serves 2026-07-28 requests; ``--modern-only`` answers the same initialize -32022 with the
    supported versions (VER-5, VER-1)."""
    from tests.helpers import start_serve, stop_serve

    extra = ["--modern-only"] if modern_only else []
    proc, url = start_serve(
        Path(__file__).resolve().parents[2], "--app", "tests.apps:weather", *extra
    )
    try:
        info = {"name": "x", "version": "1"}
        params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": info}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        accept = {"Accept": "application/json, text/event-stream"}
        r = httpx.post(url, json=init, headers=accept, timeout=20)
        if modern_only:
            assert r.status_code == 400 and r.json()["error"]["code"] == -32022
            assert r.json()["error"]["data"]["supported"] == ["2026-07-28"]
            assert "mcp-session-id" not in r.headers
        else:
            assert r.status_code == 200 and r.json()["result"]["protocolVersion"] == LEGACY
            assert r.headers["mcp-session-id"]
        body = modern_request("server/discover", {})
        r = httpx.post(url, json=body, headers=modern_headers("server/discover"), timeout=20)
        assert r.status_code == 200 and r.json()["result"]["resultType"] == "complete"
    finally:
        stop_serve(proc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
