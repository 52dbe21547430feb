"""``McpClient`` falls back to a 2025-11-25 server (VER-4; ``mrtr_kit/client/eras.py`` decides,
``mrtr_kit/client/era2025.py`` speaks the session; docs/architecture.md §8).

The legacy servers: the kit's own adapter behind a front that refuses every request without a
session (``tests.apps.LegacyOnly``: a server written before 2026-07-28), under uvicorn on
loopback; and a server built with the official Python SDK 1.x's FastMCP (``await
ctx.elicit(...)``), run from the ``.sdk1`` venv as a subprocess (``sdk1_fastmcp_server.py``).
The same handler functions answer the pushed requests and the MRTR rounds.

Rule IDs are the digest's (docs/spec-map.md); the kit's own choices are marked KIT.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from mrtr_kit.client import CreateMessageResult, ElicitResult, ListRootsResult, McpClient, Root
from mrtr_kit.client.eras import EraCache, era_of_answer, is_modern_error, origin_of
from mrtr_kit.client.errors import LegacyServer, McpRemoteError, NoMutualVersion
from mrtr_kit.protocol.models import TextContent
from mrtr_kit.server.http import create_app
from mrtr_kit.server.keyring import KeyRing
from tests import apps
from tests.library.test_era2025_http import sdk1_python, serving

TOKEN = {"Authorization": "Bearer token-ann"}
SEEN: list[tuple[str, int]] = []  # (what was asked, round) as the handlers saw it


def form(params: Any, ctx: Any) -> ElicitResult:
    """One form handler for both eras: the login, or a trip."""
    SEEN.append((params.message, ctx.round))
    fields = params.requested_schema.get("properties", {})
    if "login" in fields:
        return ElicitResult(action="accept", content={"login": "ann"})
    if "name" in fields:
        return ElicitResult(action="accept", content={"name": "Bea"})
    return ElicitResult(action="accept", content={"city": "Lyon", "nights": 3})


def decline(params: Any, ctx: Any) -> ElicitResult:
    return ElicitResult(action="decline")


def sample(params: Any, ctx: Any) -> CreateMessageResult:
    text = TextContent(type="text", text="Lyon in spring")
    return CreateMessageResult(role="assistant", content=text, model="stand-in")


def roots(params: Any, ctx: Any) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri="file:///home/ann/trips", name="trips")])


def dual_era_app() -> Any:
    from mrtr_kit.server.auth import BearerTokens

    server = apps.both_eras(state_keys=KeyRing.generate())
    tokens = BearerTokens({"ann": "token-ann"})
    return create_app(server, eras="both", principal_of=tokens)


@asynccontextmanager
async def legacy_only() -> AsyncIterator[tuple[str, apps.LegacyOnly, Any]]:
    """The kit's adapter, legacy only, on loopback: (url, the front, the legacy era)."""
    app = dual_era_app()
    front = apps.LegacyOnly(app)
    async with serving(front) as url:
        yield url, front, app.app.endpoint.legacy


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def run(test: Callable[[], Any]) -> None:
    asyncio.run(asyncio.wait_for(test(), 60))


# -- against the kit's own adapter, legacy only -------------------------------------------------


def test_ver_4_a_400_that_is_no_modern_error_falls_back_and_the_form_is_pushed():
    """VER-4: the first tools/call gets 400 -32000; the client initializes 2025-11-25, keeps
    the session, answers the pushed elicitation/create with the MRTR loop's form handler."""

    async def go() -> None:
        SEEN.clear()
        async with legacy_only() as (url, front, era):
            async with McpClient(url, elicitation=form, headers=TOKEN) as client:
                result = await client.call_tool("get_weather", {"city": "Oslo"})
                assert text(result) == "Hello ann! Sunny in Oslo."
                assert "resultType" not in result  # the 2025-11-25 shape, as the server sent
                assert front.refused == 1
                assert client.eras.get(url) == "legacy"
                session = client.legacy_session()
                assert session.version == "2025-11-25" and session.session_id in era.sessions
            assert era.sessions == {}  # aclose ended the session (DELETE)
        assert SEEN == [("Sign in for the weather in Oslo", 1)]

    run(go)


def test_ver_4_the_era_is_cached_per_origin_so_later_requests_go_legacy_at_once():
    """VER-4 (SHOULD cache per origin): one refusal, then every request on the session."""

    async def go() -> None:
        async with legacy_only() as (url, front, _era):
            cache = EraCache()
            async with McpClient(url, elicitation=form, headers=TOKEN, era_cache=cache) as c:
                tools = await c.list_tools()
                assert {"get_weather", "plan_trip"} <= {t["name"] for t in tools}
                await c.call_tool("get_weather", {"city": "Oslo"})
                prompt = await c.get_prompt("greeting")
                assert prompt["messages"][0]["content"]["text"].startswith("Write a greeting")
            assert front.refused == 1
            async with McpClient(url, elicitation=form, headers=TOKEN, era_cache=cache) as c:
                await c.call_tool("get_weather", {"city": "Rome"})  # a shared cache: no probe
            assert front.refused == 1

    run(go)


def test_a_three_round_flow_answers_a_form_a_sampling_request_and_roots():
    async def go() -> None:
        async with legacy_only() as (url, _, _era):
            client = McpClient(url, elicitation=form, sampling=sample, roots=roots, headers=TOKEN)
            async with client:
                result = await client.call_tool("plan_trip", {})
        expected = "Lyon in spring: 3 nights in Lyon, saved under file:///home/ann/trips"
        assert text(result) == expected

    run(go)


def test_a_decline_reaches_the_legacy_handler():
    async def go() -> None:
        async with (
            legacy_only() as (url, _, _era),
            McpClient(url, elicitation=decline, headers=TOKEN) as client,
        ):
            result = await client.call_tool("get_weather", {"city": "Oslo"})
        assert text(result) == "No personal forecast for Oslo."

    run(go)


def test_the_same_handlers_run_mrtr_rounds_against_a_dual_era_server():
    """No fallback where none is needed: a 2026-07-28 server gets rounds, same handler."""

    async def go() -> None:
        SEEN.clear()
        async with (
            serving(dual_era_app()) as url,
            McpClient(url, elicitation=form, headers=TOKEN) as client,
        ):
            result = await client.call_tool("get_weather", {"city": "Oslo"})
            assert result["resultType"] == "complete"
            assert client.eras.get(url) == "modern"
            assert [r.round for r in client.trace] == [1, 2]  # input_required, then done
        assert SEEN == [("Sign in for the weather in Oslo", 1)]

    run(go)


# -- never a downgrade after a modern error (VER-4), with a scripted server -------------------


def scripted(answers: list[tuple[int, dict[str, Any]]]) -> tuple[httpx.MockTransport, list[Any]]:
    """A server that answers each POST with the next (status, body); records what it got."""
    got: list[Any] = []
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        got.append(json.loads(request.content))
        status, body = queue.pop(0)
        return httpx.Response(status, json={**body, "id": got[-1]["id"]})

    return httpx.MockTransport(handle), got


def error(code: int, message: str = "no") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": message}}


@pytest.mark.parametrize(
    ("status", "code"), [(400, -32022), (400, -32021), (400, -32020), (404, -32601)]
)
def test_ver_4_a_recognised_modern_error_never_falls_back(status, code):
    async def go() -> None:
        refusal = error(code)
        if code == -32022:  # VER-1: with the versions the server has; none in common here
            refusal["error"]["data"] = {"supported": ["2099-01-01"], "requested": "2026-07-28"}
        transport, got = scripted([(status, refusal)])
        async with McpClient("http://h/mcp", transport=transport, elicitation=form) as c:
            with pytest.raises((McpRemoteError, NoMutualVersion)) as raised:
                await c.request("tools/list")
            assert c.eras.get("http://h/mcp") == "modern"
        assert getattr(raised.value, "code", -32022) == code
        assert [m["method"] for m in got] == ["tools/list"]  # no initialize

    run(go)


def test_ver_4_after_a_modern_answer_a_400_is_that_requests_error_not_a_downgrade():
    async def go() -> None:
        ok = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": []}}
        transport, got = scripted([(200, ok), (400, error(-32000, "Bad Request"))])
        async with McpClient("http://h/mcp", transport=transport) as c:
            await c.list_tools()
            with pytest.raises(McpRemoteError) as raised:
                await c.request("prompts/list")
        assert raised.value.code == -32000
        assert [m["method"] for m in got] == ["tools/list", "prompts/list"]

    run(go)


def test_ver_4_an_initialize_refused_the_modern_way_means_modern_after_all():
    """KIT: a 400 -32602 first, then our initialize gets -32022 (VER-5): the server is modern,
    and the first request's own error is raised, the era cached modern."""

    async def go() -> None:
        transport, got = scripted([(400, error(-32602, "bad params")), (400, error(-32022))])
        async with McpClient("http://h/mcp", transport=transport) as c:
            with pytest.raises(McpRemoteError) as raised:
                await c.request("tools/list")
            assert c.eras.get("http://h/mcp") == "modern"
        assert raised.value.code == -32602
        assert [m["method"] for m in got] == ["tools/list", "initialize"]

    run(go)


def test_a_400_without_json_rpc_falls_back_too():
    """VER-4: 'anything else' includes a body that is no JSON-RPC at all."""

    async def go() -> None:
        calls: list[str] = []

        def handle(request: httpx.Request) -> httpx.Response:
            if request.method == "DELETE":
                return httpx.Response(200)
            body = json.loads(request.content)
            calls.append(body.get("method", "response"))
            if "mcp-session-id" not in request.headers and body.get("method") != "initialize":
                return httpx.Response(400, text="Bad Request")
            if body.get("method") == "initialize":
                result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}
                head = {"mcp-session-id": "s1"}
                return httpx.Response(
                    200, json={"jsonrpc": "2.0", "id": body["id"], "result": result}, headers=head
                )
            if body.get("method") == "tools/list":
                return httpx.Response(
                    200, json={"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}}
                )
            return httpx.Response(202)

        async with McpClient("http://h/mcp", transport=httpx.MockTransport(handle)) as c:
            assert await c.list_tools() == []
            with pytest.raises(LegacyServer):
                await c.begin_tool_call("t")  # rounds have no 2025-11-25 counterpart
        assert calls[:4] == ["tools/list", "initialize", "notifications/initialized", "tools/list"]

    run(go)


def test_eras_is_modern_error_and_origin():
    assert is_modern_error({"error": {"code": -32601}}, 404)
    assert not is_modern_error({"error": {"code": -32601}}, 400)
    assert era_of_answer({"error": {"code": -32600}}, 400) == "legacy"
    assert era_of_answer(None, 401) is None
    assert origin_of("http://LOCALHOST/mcp") == origin_of("http://localhost:80/other")


# -- against a 2025-11-25 server built with the SDK 1.x's FastMCP ------------------------------

FASTMCP = Path(__file__).with_name("sdk1_fastmcp_server.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def fastmcp_url() -> Any:
    python = sdk1_python()
    port = free_port()
    proc = subprocess.Popen(
        [python, str(FASTMCP), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "FastMCP did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["form", "decline", "three_rounds"])
def test_the_kit_client_against_an_sdk1_fastmcp_server(fastmcp_url, scenario):
    """VER-4 against a server nobody here wrote: FastMCP's ``await ctx.elicit(...)`` and
    ``create_message`` pushed on the call's stream, ``list_roots()`` on the session's GET
    stream, all answered by the MRTR handlers."""

    async def go() -> str:
        handler = decline if scenario == "decline" else form
        client = McpClient(fastmcp_url, elicitation=handler, sampling=sample, roots=roots)
        async with client:
            if scenario == "three_rounds":
                result = await client.call_tool("plan_trip", {})
            else:
                result = await client.call_tool("get_weather", {"city": "Oslo"})
            assert client.eras.get(fastmcp_url) == "legacy"
            assert client.legacy_session().version == "2025-11-25"
            return text(result)

    expected = {
        "form": "Hello ann! Sunny in Oslo.",
        "decline": "No personal forecast for Oslo.",
        "three_rounds": "Lyon in spring: 3 nights in Lyon, saved under file:///home/ann/trips",
    }[scenario]
    assert asyncio.run(asyncio.wait_for(go(), 60)) == expected
