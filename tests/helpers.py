"""Small helpers shared by the tests: build 2026-07-28 requests and run the core on plain dicts."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from mrtr_kit.protocol.constants import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
)
from mrtr_kit.server import McpServer, Reply

_ids = itertools.count(1)

T0 = 1_800_000_000.0  # a fixed "now" for servers given a test clock


def meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {
        META_PROTOCOL_VERSION: PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES: {} if capabilities is None else capabilities,
        META_CLIENT_INFO: {"name": "kit-tests", "version": "0"},
    }
    m.update(extra)
    return m


def request(method: str, params: dict[str, Any] | None = None, **meta_kw: Any) -> dict[str, Any]:
    p = dict(params or {})
    p.setdefault("_meta", meta(**meta_kw))
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": p}


def headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    """The standard headers of a 2026-07-28 POST (HTTP-15), plus ``extra``."""
    h = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        HEADER_PROTOCOL_VERSION: PROTOCOL_VERSION,
        HEADER_METHOD: method,
    }
    if name is not None:
        h[HEADER_NAME] = name
    h.update(extra)
    return h


def discover_over_http(
    url: str, headers: dict[str, str] | None = None, timeout: float = 30
) -> httpx.Response:
    """POST a bare 2026-07-28 ``server/discover`` to a running server, with the standard headers.

    ``timeout`` is a cap for a server that hangs, never a claim about speed: an answer takes
    milliseconds, but a busy machine may be slow to serve even that."""
    body = request("server/discover")
    sent = {
        **(headers or {}),
        "Accept": "application/json, text/event-stream",
        HEADER_PROTOCOL_VERSION: PROTOCOL_VERSION,
        HEADER_METHOD: "server/discover",
    }
    return httpx.post(url, json=body, headers=sent, timeout=timeout)


def run(server: McpServer, message: Any, principal: str | None = None) -> Reply:
    return asyncio.run(server.handle(message, principal=principal))


def call(
    server: McpServer, method: str, params: dict[str, Any] | None = None, **meta_kw: Any
) -> Reply:
    """Run one ``method`` request with ``params`` (and ``_meta`` from ``meta_kw``) on the core."""
    return run(server, request(method, params, **meta_kw))


def answered(
    server: McpServer,
    method: str,
    params: dict[str, Any],
    answers: Any,
    principal: str | None = None,
    **meta_kw: Any,
) -> Reply:
    """Round 2 of ``method``: round 1 first, then the retry a client sends with ``answers``
    and round 1's requestState. A server reads answers only on a retry of a round that asked
    for them (MRTR-E3): answers sent with a first request never reach a handler."""
    first = result(run(server, request(method, params, **meta_kw), principal))
    assert first["resultType"] == "input_required", first
    retry = dict(params, inputResponses=answers, requestState=first["requestState"])
    return run(server, request(method, retry, **meta_kw), principal)


def stateful(**kw: Any) -> tuple[McpServer, list[float]]:
    """A server (``McpServer(**kw)``) with one tool, ``step``: a state-only round, then done.

    Its clock is the returned one-item list, at ``T0`` until a test moves it."""
    clock = [T0]
    s = McpServer("stateful", now=lambda: clock[0], **kw)

    @s.tool(description="state-only round, then done")
    def step(ctx):
        if ctx.state is None:
            return ctx.input_required(state={"n": 1})
        return "done"

    return s, clock


def result(reply: Reply) -> dict[str, Any]:
    assert reply.body is not None and "result" in reply.body, reply.body
    return reply.body["result"]


def error(reply: Reply) -> dict[str, Any]:
    assert reply.body is not None and "error" in reply.body, reply.body
    return reply.body["error"]


def with_bad_tag(token: str) -> str:
    """``token`` with one bit of its decoded tag (the last field) flipped, re-encoded canonically.

    Changing the tag's last base64url *character* instead is not a bad tag about one time in
    sixteen: that character also carries padding bits, so the edit often yields a non-canonical
    spelling of the same bytes, which the codec refuses for that reason first.
    """
    from mrtr_kit.server.codecs import b64url, unb64url

    head, tag = token.rsplit(".", 1)
    raw = bytearray(unb64url(tag))
    raw[0] ^= 0x01
    return f"{head}.{b64url(bytes(raw))}"


# -- a server's replies, as the client-side tests feed them to a call -----------------------------

FORM = {
    "method": "elicitation/create",
    "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
ACCEPT = {"action": "accept", "content": {"name": "Ann"}}


def irr(requests: dict | None = None, state: str | None = None) -> dict:
    result: dict = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


def reply(request: dict, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def asking(request: dict, requests: dict, state: str | None = "s1") -> dict:
    return reply(request, irr(requests, state))


# -- a real `serve` process ---------------------------------------------------------------------


def start_serve(
    cwd: Path, *args: str, log: str = "warning", env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """``python -m mrtr_kit serve ARGS`` in ``cwd`` on a free port (``env`` added to this
    process's), and the URL it prints once it accepts connections."""
    command = [sys.executable, "-m", "mrtr_kit", "serve", *args, "--port", "0"]
    proc = subprocess.Popen(
        [*command, "--log-level", log],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    assert proc.stdout is not None
    before = []  # uvicorn's own log lines, at --log-level info
    while " at http" not in (line := proc.stdout.readline()):
        if not line:
            proc.kill()
            raise AssertionError(f"serve printed no URL: {''.join(before)}")
        before.append(line)
    return proc, line.rsplit(" at ", 1)[1].strip()


def stop_serve(proc: subprocess.Popen[str]) -> str:
    """Stop a process ``start_serve`` started (by its PID) and return what it printed."""
    proc.terminate()  # by PID: only the process this test started
    try:
        return proc.communicate(timeout=10)[0]
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[0]


def new_sqlite_ledger(path: Path) -> str:
    """``sqlite:PATH`` for ``serve --ledger``, the file created first the one way a deployment
    does (``mrtr-kit ledger init``, in-process): ``serve`` refuses a missing ledger file."""
    from mrtr_kit.__main__ import main

    spec = f"sqlite:{path}"
    assert main(["ledger", "init", spec]) == 0
    return spec


def nginx_upstream_block(config: str) -> str:
    """The ``upstream mcp_fleet { ... }`` block of a rendered kit nginx configuration: its
    directives are about nginx's connections to the instances, not to clients."""
    found = re.search(r"^\s*upstream mcp_fleet \{.*?^\s*\}", config, re.M | re.S)
    assert found, "no upstream block"
    return found[0]


def nginx_client_side(config: str) -> str:
    """The configuration without its upstream block: the directives about clients."""
    return config.replace(nginx_upstream_block(config), "")
