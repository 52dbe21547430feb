"""Bearer-token principals on the HTTP adapter (HTTP-29, SEC-9) and what they give requestState:
a real principal to bind to (MRTR-S5a), end to end through Streamable HTTP."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest

from mrtr_course.examples import refunds
from mrtr_course.refund_lab.lab import RawCaller, say_yes
from mrtr_kit.client import McpClient
from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.auth import ENV_TOKENS, BearerTokens, Unauthenticated
from mrtr_kit.server.http import create_app

TOKENS = {"alice": "alice-secret-token", "mallory": "mallory-secret-token"}
YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


def app_and_desk():
    server = McpServer("refunds", state_keys=KeyRing.generate())
    desk = refunds.register(server)
    return create_app(server, principal_of=BearerTokens(TOKENS)), desk


def raw(app, headers):
    return RawCaller(httpx.AsyncClient(transport=httpx.ASGITransport(app), headers=headers))


def test_missing_or_wrong_tokens_get_401_and_the_same_body(caplog):
    """HTTP-29: every request is authenticated; one answer whatever was wrong, reason logged."""
    app, _ = app_and_desk()

    async def attempt(headers):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app)) as http:
            return await http.post(
                "http://localhost/mcp", content=b"not even json", headers=headers
            )

    cases = [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer wrong-token"},
        {"Authorization": "Basic YWxpY2U6cHc="},
        {"Authorization": f"Bearer {TOKENS['alice']}x"},
        {"Authorization": TOKENS["alice"]},
    ]
    with caplog.at_level(logging.WARNING, logger="mrtr_kit.auth"):
        replies = [asyncio.run(attempt(h)) for h in cases]
    for reply in replies:
        assert reply.status_code == 401
        assert reply.headers["www-authenticate"] == 'Bearer realm="mcp"'
        assert reply.json() == {
            "jsonrpc": "2.0",
            "error": {"code": -32600, "message": "Unauthorized"},
        }
    assert "no bearer token" in caplog.text and "unknown bearer token" in caplog.text


def test_the_principal_comes_from_the_token_and_binds_the_state():
    """SEC-9 / MRTR-S5a over HTTP: alice's approval, replayed with mallory's token, is refused."""
    app, desk = app_and_desk()

    async def scenario():
        alice = raw(app, {"Authorization": f"Bearer {TOKENS['alice']}"})
        mallory = raw(app, {"Authorization": f"bearer {TOKENS['mallory']}"})  # scheme any case
        first = await alice.call_tool("request_refund", {"order_id": "A-1001"})
        state = first.request_state
        stolen = await mallory.call_tool(
            "request_refund", {"order_id": "A-1001"}, request_state=state, input_responses=YES
        )
        own = await alice.call_tool(
            "request_refund", {"order_id": "A-1001"}, request_state=state, input_responses=YES
        )
        not_hers = await mallory.call_tool("request_refund", {"order_id": "A-1001"})
        await alice.aclose()
        await mallory.aclose()
        return stolen, own, not_hers

    stolen, own, not_hers = asyncio.run(scenario())
    assert str(stolen) == "error -32602 Invalid requestState"
    assert own.ok and "to alice" in own.text
    assert not_hers.result["isError"] and "no order A-1001" in not_hers.text
    assert [p.principal for p in asyncio.run(desk.payouts())] == ["alice"]


def test_mcp_client_with_a_bearer_header_runs_the_whole_flow():
    app, desk = app_and_desk()

    async def scenario():
        headers = {"Authorization": f"Bearer {TOKENS['alice']}"}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), headers=headers) as http:
            client = McpClient("http://localhost/mcp", http_client=http, elicitation=say_yes)
            result = await client.call_tool("request_refund", {"order_id": "A-1002"})
            return result

    result = asyncio.run(scenario())
    assert (
        result["content"][0]["text"] == "Refunded $19.90 to alice for order A-1002 (payout P-0001)."
    )
    assert asyncio.run(desk.paid_cents()) == 1990


def test_without_authentication_the_refund_tool_refuses():
    server = McpServer("refunds", state_keys=KeyRing.generate())
    refunds.register(server)

    async def scenario():
        async with McpClient.for_app(create_app(server), elicitation=say_yes) as client:
            return await client.call_tool("request_refund", {"order_id": "A-1001"})

    result = asyncio.run(scenario())
    assert result["isError"] is True and "Sign in first" in result["content"][0]["text"]


def test_token_table_validation_and_configuration():
    assert BearerTokens.parse("alice:t1, bob:t2").principals == ["alice", "bob"]
    assert BearerTokens.from_env({ENV_TOKENS: "alice:t1"}).principal_for("t1") == "alice"
    assert BearerTokens.from_env({}) is None
    table = BearerTokens({"alice": "t1", "bob": "t2"})
    assert table.principal_for("t2") == "bob" and table.principal_for("t3") is None
    assert table.principal_for("t1 ") is None and table.principal_for("T1") is None
    for bad in ({}, {"a": "same", "b": "same"}, {"a": ""}, {"a": "has space"}, {"": "t"}):
        with pytest.raises(ValueError):
            BearerTokens(bad)
    for spec in ("alice", "alice:t1,alice:t2"):
        with pytest.raises(ValueError):
            BearerTokens.parse(spec)
    assert issubclass(Unauthenticated, Exception)
