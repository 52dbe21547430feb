"""The conformance entry point (``mrtr_kit.client.conformance_client``) against local stand-ins for
two of the suite's mocks (docs/conformance.md §7.2, §7.3), so the key client scenarios are checked
without Node. The real suite is run as described in docs/conformance.md §1.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mrtr_kit.client import conformance_client as conformance
from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
)
from mrtr_kit.server.loopback import LoopbackServer

CONFIRM = {
    "confirm": {
        "method": "elicitation/create",
        "params": {
            "message": "Please confirm to continue",
            "requestedSchema": {
                "type": "object",
                "properties": {"confirmed": {"type": "boolean", "description": "Confirm?"}},
            },
        },
    }
}


@contextmanager
def serve(app: Any) -> Iterator[str]:
    site = LoopbackServer.start(lambda base: app)
    try:
        # The suite's mocks listen on "localhost"; so does this stand-in.
        yield site.url.replace("127.0.0.1", "localhost") + "/mcp"
    finally:
        site.stop()


class RequestStateMock:
    """The checks of the sep-2322-client-request-state mock (§7.2), in Python."""

    def __init__(self) -> None:
        self.checks: dict[str, str] = {}
        self.echo: dict[str, Any] = {}
        self.app = Starlette(routes=[Route("/mcp", self.handle, methods=["POST"])])

    def check(self, check_id: str, ok: bool) -> None:
        if self.checks.get(check_id) != "FAILURE":
            self.checks[check_id] = "SUCCESS" if ok else "FAILURE"

    async def handle(self, request: Request) -> JSONResponse:
        m = json.loads(await request.body())
        rid, params = m["id"], m.get("params", {})
        if m["method"] == "tools/list":
            names = ["echo_state", "no_state", "unrelated", "no_result_type"]
            tools = [{"name": f"test_mrtr_{n}", "inputSchema": {"type": "object"}} for n in names]
            return self.reply(rid, {"resultType": "complete", "tools": tools})
        name, retry = params.get("name"), bool(params.get("inputResponses"))
        if name == "test_mrtr_echo_state" and not retry:
            state = json.dumps({"nonce": "n-1", "originalId": rid})
            self.echo = {"id": rid, "state": state}
            irr = {"resultType": "input_required", "inputRequests": CONFIRM}
            return self.reply(rid, {**irr, "requestState": state})
        if name == "test_mrtr_echo_state":
            self.check(
                "sep-2322-client-request-state-echoed",
                params.get("requestState") == self.echo["state"],
            )
            self.check("sep-2322-client-jsonrpc-id-different", rid != self.echo["id"])
            return self.text(rid, "echo-state-ok")
        if name == "test_mrtr_no_state" and not retry:
            return self.reply(rid, {"resultType": "input_required", "inputRequests": CONFIRM})
        if name == "test_mrtr_no_state":
            self.check("sep-2322-client-no-state-omitted", "requestState" not in params)
            return self.text(rid, "no-state-ok")
        if name == "test_mrtr_unrelated":
            clean = "inputResponses" not in params and "requestState" not in params
            self.check("sep-2322-client-parallel-isolation", clean)
            return self.text(rid, "unrelated-ok")
        if name == "test_mrtr_no_result_type":
            self.check("sep-2322-default-result-type-complete", not retry)
            body = {"content": [{"type": "text", "text": "no-result-type-test-ok"}]}
            return self.reply(rid, body)
        error = {"code": -32601, "message": "unknown"}
        return JSONResponse({"jsonrpc": "2.0", "id": rid, "error": error})

    @staticmethod
    def reply(rid: Any, result: dict) -> JSONResponse:
        return JSONResponse({"jsonrpc": "2.0", "id": rid, "result": result})

    def text(self, rid: Any, text: str) -> JSONResponse:
        return self.reply(
            rid, {"resultType": "complete", "content": [{"type": "text", "text": text}]}
        )


class RequestMetadataMock:
    """The request-metadata mock (§7.3): the first POST is always refused with -32022."""

    def __init__(self) -> None:
        self.posts: list[tuple[dict, dict[str, str]]] = []
        self.app = Starlette(routes=[Route("/mcp", self.handle, methods=["POST"])])

    async def handle(self, request: Request) -> JSONResponse:
        m = json.loads(await request.body())
        self.posts.append((m, dict(request.headers)))
        if len(self.posts) == 1:
            data = {
                "supported": ["2026-07-28"],
                "requested": request.headers.get("mcp-protocol-version", ""),
            }
            error = {"code": -32022, "message": "Unsupported protocol version", "data": data}
            return JSONResponse({"jsonrpc": "2.0", "id": m.get("id"), "error": error}, 400)
        result: dict[str, Any] = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
        if m["method"] == "tools/list":
            result["tools"] = []
        return JSONResponse({"jsonrpc": "2.0", "id": m["id"], "result": result})


@pytest.mark.slow
def test_sep_2322_client_request_state_scenario(monkeypatch):
    """MRTR-C2 / MRTR-C3 / MRTR-C4 / RT-2: the five checks of §7.2 all succeed."""
    mock = RequestStateMock()
    monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", "sep-2322-client-request-state")
    with serve(mock.app) as url:
        assert conformance.main(["prog", url]) == 0
    assert mock.checks == {
        "sep-2322-client-request-state-echoed": "SUCCESS",
        "sep-2322-client-parallel-isolation": "SUCCESS",
        "sep-2322-client-jsonrpc-id-different": "SUCCESS",
        "sep-2322-client-no-state-omitted": "SUCCESS",
        "sep-2322-default-result-type-complete": "SUCCESS",
    }


@pytest.mark.slow
def test_request_metadata_scenario(monkeypatch):
    """CORE-10 / CORE-12 / HTTP-7 / VER-2: every POST carries the header and full _meta with
    object-valued capabilities; after the forced -32022 the request is sent again."""
    mock = RequestMetadataMock()
    monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", "request-metadata")
    with serve(mock.app) as url:
        assert conformance.main(["prog", url]) == 0
    methods = [m["method"] for m, _ in mock.posts]
    assert methods == ["server/discover", "server/discover", "tools/list"]
    for message, headers in mock.posts:
        meta = message["params"]["_meta"]
        assert headers["mcp-protocol-version"] == meta[META_PROTOCOL_VERSION] == "2026-07-28"
        assert meta[META_CLIENT_INFO]["name"]
        caps = meta[META_CLIENT_CAPABILITIES]
        assert set(caps) == {"elicitation", "sampling", "roots"}
        assert all(isinstance(v, dict) for v in caps.values())


def test_unknown_scenario_and_missing_url_exit_2(monkeypatch, capsys):
    monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", "no-such-scenario")
    assert conformance.main(["prog", "http://127.0.0.1:9/mcp"]) == 2
    assert "unknown scenario" in capsys.readouterr().err
    assert conformance.main(["prog"]) == 2


def test_client_failure_exits_1(monkeypatch, capsys):
    """A local failure (here: nothing listening) is reported and exits 1, not a traceback."""
    monkeypatch.setenv("MCP_CONFORMANCE_SCENARIO", "json-schema-ref-no-deref")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert conformance.main(["prog", f"http://127.0.0.1:{port}/mcp"]) == 1
    assert "TransportError" in capsys.readouterr().err
