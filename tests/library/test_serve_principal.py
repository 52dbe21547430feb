"""Your own authentication in ``serve`` (issue 30, item 3).

* ``serve --principal-of MODULE:ATTRIBUTE`` over HTTP: a sync or async callable given the
  request's headers returns the principal, or None for 401 (HTTP-29); the principal is what
  requestState is bound to (MRTR-S5a, SEC-9). The official SDK client (``mcp`` 2.3) calls a
  real ``serve`` process with a bearer token and is answered by name; a bad token gets 401.
* ``serve --stdio --principal NAME`` (or ``MRTR_KIT_PRINCIPAL``): the process's principal, with
  the SDK's stdio client.
* What cannot work together is refused in one line, status 2 (KIT).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from mrtr_kit.__main__ import main
from mrtr_kit.server.auth import FromHeaders, Unauthenticated
from tests.helpers import headers, request, start_serve, stop_serve

ROOT = Path(__file__).resolve().parents[2]

APP = """
from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.context import elicit_form

server = McpServer("whoami", state_keys=KeyRing.generate())
OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@server.tool(description="asks for a confirmation, then names who is calling")
def whoami(ctx):
    if ctx.principal is None:
        return "Sign in first."
    if ctx.state is None:  # a second round: the state is bound to this principal (MRTR-S5a)
        return ctx.input_required({"ok": elicit_form("Go on?", OK)}, {"asked": True})
    return f"You are {ctx.principal}."
"""

AUTH = """
import asyncio

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}


def check(headers):
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return TOKENS.get(token) if scheme.lower() == "bearer" else None


async def check_async(headers):  # an OAuth introspection would await the network here
    await asyncio.sleep(0)
    return check(headers)


def broken(headers):
    raise RuntimeError("the introspection endpoint is down")


def not_a_principal(headers):
    return 42


def no_arguments():
    return "alice"


number = 7
"""


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "whoami_app.py").write_text(APP)
    (tmp_path / "my_auth.py").write_text(AUTH)
    return tmp_path


def a_request(authorization: str | None) -> Request:
    raw = [] if authorization is None else [(b"authorization", authorization.encode())]
    return Request({"type": "http", "method": "POST", "path": "/mcp", "headers": raw})


def test_http_29_from_headers_sync_and_async_principal_or_401():
    """The wrapper ``--principal-of`` uses: a str is the principal; None, a non-str, or an
    empty name is ``Unauthenticated`` (401); an async check is awaited."""
    table = {"tok-alice": "alice"}

    def sync(h: Any) -> Any:
        return table.get(h.get("Authorization", "").removeprefix("Bearer "))  # any case

    async def asynchronous(h: Any) -> Any:
        return sync(h)

    for check in (sync, asynchronous):
        auth = FromHeaders(check)
        assert asyncio.run(auth(a_request("Bearer tok-alice"))) == "alice"
        for bad in (None, "Bearer tok-mallory"):
            with pytest.raises(Unauthenticated, match="returned None"):
                asyncio.run(auth(a_request(bad)))
    for value in (42, ""):
        with pytest.raises(Unauthenticated, match="not a principal"):
            asyncio.run(FromHeaders(lambda h, v=value: v)(a_request("x")))


def sdk_call(url: str, token: str, statuses: list[int] | None = None) -> str:
    """The official SDK client over Streamable HTTP with a bearer token: whoami, both rounds;
    the HTTP status of each response it got is appended to ``statuses``."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp_types import ElicitResult

    async def answer(context: Any, params: Any) -> Any:
        return ElicitResult(action="accept", content={"ok": True})

    async def go() -> str:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})

        async def seen(response: Any) -> None:
            if statuses is not None:
                statuses.append(response.status_code)

        http.event_hooks = {"response": [seen]}
        async with http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="2026-07-28", elicitation_callback=answer) as c:
                result = await c.call_tool("whoami", {})
        assert not result.is_error
        return str(result.content[0].text)  # type: ignore[union-attr]

    return asyncio.run(asyncio.wait_for(go(), 60))


@pytest.mark.slow  # a real serve process
@pytest.mark.parametrize("check", ["check", "check_async"])
def test_http_29_serve_principal_of_with_the_official_sdk_client(app_dir: Path, check: str):
    """``serve --principal-of my_auth:CHECK``: the SDK client with alice's token is answered
    "You are alice." after its second round; bob's, "You are bob."; a wrong token and no
    token get 401 with ``WWW-Authenticate: Bearer``, and the server log says who refused."""
    pytest.importorskip("mcp")
    proc, url = start_serve(
        app_dir, "--app", "whoami_app:server", "--principal-of", f"my_auth:{check}", log="info"
    )
    try:
        assert sdk_call(url, "tok-alice") == "You are alice."
        assert sdk_call(url, "tok-bob") == "You are bob."
        body = request("tools/call", {"name": "whoami", "arguments": {}})
        wrong = headers("tools/call", "whoami", Authorization="Bearer tok-mallory")
        refused = [
            httpx.post(url, json=body, headers=h, timeout=30)
            for h in (wrong, headers("tools/call", "whoami"))
        ]
        statuses: list[int] = []
        with pytest.raises(Exception) as caught:  # the SDK client sees the 401 too
            sdk_call(url, "tok-mallory", statuses)
    finally:
        log = stop_serve(proc)
    assert [r.status_code for r in refused] == [401, 401]
    assert refused[0].headers["www-authenticate"].startswith("Bearer")
    assert statuses == [401], (statuses, caught.value)  # the SDK raises MCPError -32603
    assert f"rejected request: my_auth:{check} returned None" in log


@pytest.mark.slow  # a real serve process
def test_http_29_a_check_that_raises_or_returns_a_non_str_is_401_never_500(app_dir: Path):
    """Fail closed: the check's exception is logged with its traceback, the client gets 401."""
    for check, logged in (
        ("broken", "the introspection endpoint is down"),
        ("not_a_principal", "int 42"),
    ):
        proc, url = start_serve(
            app_dir, "--app", "whoami_app:server", "--principal-of", f"my_auth:{check}"
        )
        try:
            reply = httpx.post(
                url,
                json=request("tools/call", {"name": "whoami", "arguments": {}}),
                headers=headers("tools/call", "whoami", Authorization="Bearer tok-alice"),
                timeout=30,
            )
        finally:
            log = stop_serve(proc)
        assert reply.status_code == 401
        assert logged in log


@pytest.mark.parametrize(
    ("argv", "env", "said"),
    [
        (["--principal", "alice"], {}, "--principal is for --stdio"),
        (["--principal-of", "my_auth:check"], {"MRTR_KIT_BEARER_TOKENS": "a:t"}, "keep one"),
        (["--principal-of", "my_auth"], {}, "write it module:attribute"),
        (["--principal-of", "no_such_module:check"], {}, "no module named 'no_such_module'"),
        (["--principal-of", "my_auth:number"], {}, "not a callable"),
        (["--principal-of", "my_auth:no_arguments"], {}, "must take one argument"),
        (["--stdio", "--principal-of", "my_auth:check"], {}, "over stdio use --principal NAME"),
        # a malformed token table: one line before the port is bound, no token shown
        ([], {"MRTR_KIT_BEARER_TOKENS": "garbage"}, "MRTR_KIT_BEARER_TOKENS: write each entry"),
    ],
)
def test_kit_what_cannot_work_is_refused_in_one_line_status_2(
    app_dir, monkeypatch, capsys, argv, env, said
):
    monkeypatch.chdir(app_dir)
    monkeypatch.delenv("MRTR_KIT_BEARER_TOKENS", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    stdout = sys.stdout
    try:
        status = main(["serve", "--app", "whoami_app:server", "--port", "0", *argv])
    finally:
        sys.stdout = stdout  # serve --stdio points stdout at stderr
    err = capsys.readouterr().err
    assert status == 2
    assert said in err and err.count("\n") == 1, err


def stdio_call(app_dir: Path, argv: list[str], env: dict[str, str]) -> str:
    """The SDK's stdio client starts ``serve --stdio --app whoami_app:server ARGV``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import ElicitResult

    async def answer(context: Any, params: Any) -> Any:
        return ElicitResult(action="accept", content={"ok": True})

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mrtr_kit", "serve", "--stdio", "--app", "whoami_app:server", *argv],
        env={"PYTHONPATH": str(ROOT), **env},
        cwd=app_dir,
    )

    async def go() -> str:
        with (app_dir / "stderr.txt").open("w") as err:
            transport = stdio_client(params, errlog=err)
            async with Client(transport, mode="2026-07-28", elicitation_callback=answer) as c:
                result = await c.call_tool("whoami", {})
        return str(result.content[0].text)  # type: ignore[union-attr]

    return asyncio.run(asyncio.wait_for(go(), 120))


@pytest.mark.slow  # a real serve --stdio process
def test_stdio_serve_principal_names_the_process_user(app_dir: Path):
    """``--principal alice``, then ``MRTR_KIT_PRINCIPAL=bob``, then the option over the
    variable, then neither: the tool names the principal, or asks to sign in."""
    pytest.importorskip("mcp")
    assert stdio_call(app_dir, ["--principal", "alice"], {}) == "You are alice."
    assert "as principal 'alice'" in (app_dir / "stderr.txt").read_text()
    assert stdio_call(app_dir, [], {"MRTR_KIT_PRINCIPAL": "bob"}) == "You are bob."
    both = stdio_call(app_dir, ["--principal", "carol"], {"MRTR_KIT_PRINCIPAL": "bob"})
    assert both == "You are carol."
    assert stdio_call(app_dir, [], {}) == "Sign in first."
