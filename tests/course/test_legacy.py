"""The 2025-11-25 server and client of ``mrtr_course.legacy`` (lesson 03).

Unit tests drive ``LegacyServer`` on plain dicts; the ``slow`` ones serve it from a real
uvicorn process (``python -m mrtr_course serve --legacy``), because a tool that waits for an
answer needs a real HTTP server: the answer arrives on a second connection while the first
one's SSE stream stays open.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mrtr_course.examples.trip_planner import HotelDesk, build_legacy_server, traveller
from mrtr_course.fleet import Fleet, start_fleet
from mrtr_course.legacy import (
    REQUEST_TIMEOUT,
    LegacyClient,
    LegacyHttpError,
    LegacyServer,
    LocalSessions,
    PendingRequests,
    SignedSessions,
    format_trace,
)
from mrtr_kit.protocol.models import ElicitRequestFormParams

KEY = bytes(range(32))
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


# -- sessions --------------------------------------------------------------------------------------


def test_signed_sessions_are_valid_on_every_store_with_the_same_key():
    session = SignedSessions(KEY).create("2025-11-25", {"elicitation": {}}, {"name": "c"})
    again = SignedSessions(KEY).get(session.id)  # "another instance"
    assert again == session
    assert again.supports_elicitation()


def test_signed_sessions_reject_another_key_and_tampering():
    session = SignedSessions(KEY).create("2025-11-25", {}, {})
    assert SignedSessions(bytes(32)).get(session.id) is None
    payload, tag = session.id.split(".")
    assert SignedSessions(KEY).get(f"{payload}x.{tag}") is None
    assert SignedSessions(KEY).get("no-dot") is None
    assert all(0x21 <= ord(ch) <= 0x7E for ch in session.id)  # visible ASCII only


def test_local_sessions_are_unknown_to_another_store():
    session = LocalSessions().create("2025-11-25", {}, {})
    assert LocalSessions().get(session.id) is None
    assert not session.supports_elicitation()


def test_signed_sessions_need_a_long_key():
    with pytest.raises(ValueError):
        SignedSessions(b"short")


# -- pending requests and the server core ----------------------------------------------------------


def test_pending_request_resolves_only_in_the_process_that_opened_it():
    async def go() -> tuple[bool, bool, dict[str, Any]]:
        here, elsewhere = PendingRequests(), PendingRequests()
        future = here.open("s1", 0)
        answer = {"jsonrpc": "2.0", "id": 0, "result": {"action": "cancel"}}
        return elsewhere.resolve("s1", answer), here.resolve("s1", answer), await future

    dropped, delivered, got = asyncio.run(go())
    assert (dropped, delivered) == (False, True)
    assert got["result"] == {"action": "cancel"}


def _server(timeout: float = 5.0) -> tuple[LegacyServer, HotelDesk]:
    desk = HotelDesk()
    server = build_legacy_server(desk, shared_sessions=False, answer_timeout_s=timeout)
    return server, desk


def test_initialize_negotiates_once_for_the_session():
    server, _ = _server()
    result, session = server.initialize(
        {"protocolVersion": "2024-11-05", "capabilities": {"elicitation": {}}}
    )
    assert result["protocolVersion"] == "2025-11-25"  # the server's own, the client's is unknown
    assert result["capabilities"] == {"tools": {}}
    assert "resultType" not in result  # 2025-11-25 results had none
    assert server.sessions.get(session.id) == session


def test_a_waiting_tool_resumes_when_the_answer_reaches_its_process():
    async def go() -> tuple[list[dict[str, Any]], dict[str, Any], HotelDesk]:
        server, desk = _server()
        _, session = server.initialize({"capabilities": {"elicitation": {"form": {}}}})
        sent: list[dict[str, Any]] = []
        answer_for = traveller()

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            params = message["params"]
            answer = answer_for(_form_params(params), None)
            response = {"jsonrpc": "2.0", "id": message["id"], "result": answer.to_wire()}
            # Answer a moment later, as a client's second POST would.
            asyncio.get_running_loop().call_soon(server.pending.resolve, session.id, response)

        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
        call["params"] = {"name": "plan_trip", "arguments": {"city": "Oslo"}}
        return sent, await server.handle_request(session, call, send), desk

    sent, response, desk = asyncio.run(go())
    assert [m["method"] for m in sent] == ["elicitation/create", "elicitation/create"]
    assert [m["id"] for m in sent] == [0, 1]  # the server's own request ids, per session
    assert response["id"] == 7
    assert response["result"]["content"][0]["text"].startswith("Reserved a double room in Oslo")
    assert (desk.holds_placed, desk.holds) == (1, {})  # the legacy hold, placed once and used


def _form_params(params: dict[str, Any]) -> ElicitRequestFormParams:
    return ElicitRequestFormParams.model_validate(params)


def test_a_tool_whose_answer_never_comes_fails_with_request_timeout():
    async def go() -> dict[str, Any]:
        server, _ = _server(timeout=0.05)
        _, session = server.initialize({"capabilities": {"elicitation": {"form": {}}}})

        async def send(message: dict[str, Any]) -> None:
            return None  # the answer goes somewhere else

        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "plan_trip", "arguments": {"city": "Oslo"}}
        response = await server.handle_request(session, call, send)
        assert server.pending.ids() == []  # nothing left waiting
        return response

    error = asyncio.run(go())["error"]
    assert error["code"] == REQUEST_TIMEOUT == -32001
    assert "timed out after 0.05 s" in error["message"]


def test_session_capabilities_decide_once_for_the_whole_session():
    async def go() -> dict[str, Any]:
        server, _ = _server()
        _, session = server.initialize({"capabilities": {}})  # no elicitation declared

        async def send(message: dict[str, Any]) -> None:
            raise AssertionError("must not ask a client that cannot answer")

        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        call["params"] = {"name": "plan_trip", "arguments": {"city": "Oslo"}}
        return await server.handle_request(session, call, send)

    text = asyncio.run(go())["result"]["content"][0]["text"]
    assert text == "This client cannot show forms, so I cannot plan a trip to Oslo."


def test_unknown_tool_method_and_bad_arguments_are_json_rpc_errors():
    server, _ = _server()
    _, session = server.initialize({})

    async def send(message: dict[str, Any]) -> None:
        return None

    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return asyncio.run(server.handle_request(session, request, send))["error"]

    assert ask("tools/call", {"name": "nope"})["code"] == -32602
    assert ask("tools/call", {"name": "plan_trip", "arguments": {}})["code"] == -32602
    assert ask("resources/list", {})["code"] == -32601


# -- over HTTP, one real process -------------------------------------------------------------------


@pytest.fixture(scope="module")
def legacy_local() -> Any:
    fleet = start_fleet(1, legacy=True, prefix="legacy", options=["--sessions", "local"])
    yield fleet
    fleet.stop()


def _post(url: str, message: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(url, content=json.dumps(message), headers={**ACCEPT, **headers}, timeout=60)


@pytest.mark.slow
def test_http_handshake_hands_out_a_session_and_names_the_instance(legacy_local: Fleet):
    url = legacy_local.urls[0]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    response = _post(url, init)
    assert response.status_code == 200
    assert response.headers["x-mcp-instance"] == "legacy-1"
    session = response.headers["mcp-session-id"]
    listed = _post(
        url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, **{"Mcp-Session-Id": session}
    )
    assert [t["name"] for t in listed.json()["result"]["tools"]] == ["plan_trip"]


@pytest.mark.slow
def test_http_status_codes_of_the_2025_transport(legacy_local: Fleet):
    url = legacy_local.urls[0]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert _post(url, listing).status_code == 400  # no session id
    unknown = _post(url, listing, **{"Mcp-Session-Id": "abc"})
    assert unknown.status_code == 404
    assert unknown.json()["error"]["message"] == "Session not found"
    assert httpx.get(url, timeout=60).status_code == 405  # no standalone GET stream
    only_json = httpx.post(url, json=listing, headers={"Accept": "application/json"}, timeout=60)
    assert only_json.status_code == 406
    foreign = _post(url, listing, Origin="http://evil.example")
    assert foreign.status_code == 403


@pytest.mark.slow
def test_legacy_client_answers_the_servers_requests_on_one_instance(legacy_local: Fleet):
    async def go() -> tuple[dict[str, Any], LegacyClient]:
        client = LegacyClient(legacy_local.urls[0], elicitation=traveller(nights=2, room="suite"))
        async with client:
            return await client.call_tool("plan_trip", {"city": "Lima"}), client

    result, client = asyncio.run(go())
    assert result["content"][0]["text"] == (
        "Reserved a suite room in Lima: 2 nights from 2026-09-01, 520 EUR."
    )
    assert "resultType" not in result
    lines = format_trace(client.trace).splitlines()
    assert [line.split()[2] for line in lines if " POST " in line] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
        "answer",
        "answer",
    ]
    assert all("legacy-1" in line for line in lines)
    assert "elicitation/create (id 0)" in lines[3]


@pytest.mark.slow
def test_declining_the_first_question_releases_the_hold(legacy_local: Fleet):
    async def go() -> dict[str, Any]:
        client = LegacyClient(legacy_local.urls[0], elicitation=traveller(accept=False))
        async with client:
            return await client.call_tool("plan_trip", {"city": "Lima"})

    assert (
        asyncio.run(go())["content"][0]["text"]
        == "You declined: no trip to Lima planned. Nothing was reserved."
    )


@pytest.mark.slow
def test_a_session_from_another_process_is_rejected_with_404(legacy_local: Fleet):
    async def go() -> None:
        client = LegacyClient(legacy_local.urls[0], elicitation=traveller())
        async with client:
            client.session_id = LocalSessions().create("2025-11-25", {}, {}).id
            await client.call_tool("plan_trip", {"city": "Lima"})

    with pytest.raises(LegacyHttpError) as caught:
        asyncio.run(go())
    assert caught.value.status == 404
