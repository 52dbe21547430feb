"""``serve --app module:attribute``: the user's own ``McpServer`` on the command line, with
``--allowed-host`` (HTTP-27, HTTP-29), ``--state-keys-file`` and the ``--ledger`` extras.

In this process (fast): every refusal is one line on stderr and status 2, never a traceback
(a bad spec, a missing module or attribute, a wrong type, options a built server cannot
take, a bad keys file, a missing extra). ``slow``: a real process serving the app over HTTP
(the printed URL, a tool call, the Host and Origin checks) and over stdio (two processes
sharing a keys file finish one flow).
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import httpx
import pytest

from mrtr_kit.__main__ import _app_server, build_parser, main
from mrtr_kit.server import KeyRing
from tests.helpers import (
    discover_over_http,
    headers,
    new_sqlite_ledger,
    request,
    start_serve,
    stop_serve,
)

APP = """
from mrtr_kit.server import KeyRing, McpServer

built = []  # what the factory was given, for the tests to read


def register(server):
    @server.tool(description="asks for a name, then greets")
    def hello(ctx):
        answer = ctx.input_responses.get("name")
        if answer is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            form = {"mode": "form", "message": "Name?", "requestedSchema": schema}
            return ctx.input_required(
                {"name": {"method": "elicitation/create", "params": form}}, state={"asked": 1}
            )
        return f"Hello {answer['content']['name']}"

    return server


server = register(McpServer("my-app", state_keys=KeyRing.generate()))


def build(state_keys, state_codec, ledger):
    built.append({"state_keys": state_keys, "state_codec": state_codec, "ledger": ledger})
    return register(
        McpServer("my-app", state_keys=state_keys, state_codec=state_codec, ledger=ledger)
    )


def build_plain():
    return server


def needs_a_name(name):
    return server


def not_a_server():
    return "nope"


number = 42
"""

ANSWER = {"name": {"action": "accept", "content": {"name": "Ada"}}}
FORMS = {"elicitation": {"form": {}}}  # the client capability the tool's question needs
KEYS = f"k2:{'ab' * 32},k1:{'cd' * 32}"


@pytest.fixture
def app(tmp_path, monkeypatch):
    """The app module under a fresh name in ``tmp_path``, the current folder (as for uvicorn);
    ``sys.path`` and ``sys.modules`` are restored after the test."""
    name = f"app_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(APP, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield name
    sys.modules.pop(name, None)


def refused(capsys, argv: list[str]) -> str:
    """Run ``argv``; it must exit with status 2 and say why in exactly one stderr line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no-colon", "write it module:attribute"),
        (":server", "write it module:attribute"),
        ("{app}:", "write it module:attribute"),
        ("not_a_module_anywhere:server", "no module named 'not_a_module_anywhere'"),
        ("{app}:missing", "has no attribute 'missing'"),
        ("{app}:number", "object of type int, not an McpServer"),
        ("{app}:not_a_server", "returned an object of type str, not an McpServer"),
        ("{app}:needs_a_name", "needs arguments"),
    ],
)
def test_a_bad_app_is_one_line_and_status_2(app, capsys, spec, says):
    err = refused(capsys, ["serve", "--app", spec.format(app=app), "--port", "0"])
    assert says in err and err.startswith("serve: --app ")


def test_a_bad_app_over_stdio_is_one_line_on_stderr_too(app, capsys):
    """STDIO-1: even the refusal stays off stdout, where only JSON-RPC lines may go."""
    assert main(["serve", "--stdio", "--app", f"{app}:missing"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip().endswith("has no attribute 'missing'")


def test_app_and_example_exclude_each_other(app, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--app", f"{app}:server", "--example", "weather"])
    assert stop.value.code == 2
    assert "not allowed with argument --app" in capsys.readouterr().err


@pytest.mark.parametrize(
    "option", [["--state-codec", "aead"], ["--ledger", "memory"], ["--state-keys-file", "k"]]
)
@pytest.mark.parametrize("attribute", ["server", "build_plain"])
def test_options_a_built_server_cannot_take_are_refused_not_ignored(app, capsys, option, attribute):
    """An McpServer (or a zero-argument factory) holds its own keys, codec and ledger: the
    CLI says so rather than serve something other than what was asked."""
    err = refused(capsys, ["serve", "--app", f"{app}:{attribute}", *option, "--port", "0"])
    assert option[0] in err


def test_a_factory_taking_the_state_options_gets_the_clis(app, tmp_path):
    """The examples' builder signature: keys from --state-keys-file, --state-codec, --ledger."""
    (tmp_path / "keys").write_text(f"# the fleet's keys, newest first\n{KEYS}\n")
    argv = ["serve", "--app", f"{app}:build", "--state-keys-file", "keys"]
    argv += ["--state-codec", "aead", "--ledger", new_sqlite_ledger(tmp_path / "ledger.db")]
    server = _app_server(build_parser().parse_args(argv))
    [given] = sys.modules[app].built
    assert given["state_keys"].to_spec() == KeyRing.parse(KEYS).to_spec()
    assert given["state_codec"] == "aead" and given["ledger"] is server.ledger
    assert type(server.ledger).__name__ == "SqliteLedger"


def test_a_keys_file_may_hold_one_key_per_line(app, tmp_path):
    (tmp_path / "keys").write_text(KEYS.replace(",", "\n"))
    argv = ["serve", "--app", f"{app}:build", "--state-keys-file", "keys"]
    _app_server(build_parser().parse_args(argv))
    [given] = sys.modules[app].built
    assert given["state_keys"].to_spec() == KeyRing.parse(KEYS).to_spec()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "No such file or directory"),
        ("", "no keys in it"),
        ("just-a-secret", "each key is written kid:secret"),
        ("k1:not base64!", "must be hex or base64url"),
    ],
)
def test_a_missing_or_bad_keys_file_is_one_line(app, tmp_path, capsys, content, says):
    if content is not None:
        (tmp_path / "keys").write_text(content)
    argv = ["serve", "--app", f"{app}:build", "--state-keys-file", "keys", "--port", "0"]
    err = refused(capsys, argv)
    assert says in err and err.startswith("serve: --state-keys-file keys: ")
    assert "not base64" not in err  # a secret, even a malformed one, is never echoed


@pytest.mark.parametrize("stdio", [[], ["--stdio"]])
def test_a_redis_ledger_without_the_extra_names_the_install_command(
    app, capsys, monkeypatch, stdio
):
    """The issue's raw ModuleNotFoundError: now one line naming ``mrtr-kit[redis]``."""
    monkeypatch.setitem(sys.modules, "redis", None)  # as if redis-py were not installed
    monkeypatch.delitem(sys.modules, "mrtr_kit.server.ledger.redis", raising=False)
    argv = ["serve", *stdio, "--app", f"{app}:build", "--ledger", "redis://127.0.0.1:1/0"]
    assert main([*argv, "--port", "0"] if not stdio else argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert "pip install 'mrtr-kit[redis]'" in err


def test_a_bad_allowed_host_is_one_line(app, capsys):
    err = refused(capsys, ["serve", "--app", f"{app}:server", "--allowed-host", "a b/c"])
    assert err == "serve: --allowed-host 'a b/c' is not a host name or address"


def test_http_only_options_are_refused_over_stdio(app, capsys):
    assert main(["serve", "--stdio", "--app", f"{app}:server", "--allowed-host", "a.io"]) == 2
    assert "are for HTTP" in capsys.readouterr().err


# -- real processes ---------------------------------------------------------------------------


def call_hello(url: str, **params: Any) -> dict[str, Any]:
    body = request("tools/call", {"name": "hello", "arguments": {}, **params}, capabilities=FORMS)
    response = httpx.post(url, json=body, headers=headers("tools/call", "hello"), timeout=30)
    assert response.status_code == 200, response.text
    return response.json()["result"]


@pytest.mark.slow
def test_http_27_29_serve_app_over_http_answers_its_allowed_public_names_only(tmp_path):
    """The user's server over real HTTP, one flow through its tool and ``--trace``; with
    ``--allowed-host api.example.com`` that name is accepted in Host and in Origin, and
    another (``evil.example``) still gets 403 (the DNS-rebinding defence, HTTP-27)."""
    (tmp_path / "myserver.py").write_text(APP, encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    proc, url = start_serve(
        tmp_path, "--app", "myserver:server", "--allowed-host", "api.example.com",
        "--trace", str(trace),
    )  # fmt: skip
    try:
        assert url.startswith("http://127.0.0.1:")
        first = call_hello(url)
        assert first["resultType"] == "input_required"
        done = call_hello(url, inputResponses=ANSWER, requestState=first["requestState"])
        assert done["content"][0]["text"] == "Hello Ada"
        public = {"Host": "api.example.com"}
        assert discover_over_http(url, public).status_code == 200
        origin = {"Origin": "https://api.example.com"}
        assert discover_over_http(url, origin).status_code == 200
        assert discover_over_http(url, {"Host": "evil.example"}).status_code == 403
        assert discover_over_http(url, {"Origin": "https://evil.example"}).status_code == 403
    finally:
        out = stop_serve(proc)
    assert "Traceback" not in out, out
    rounds = [json.loads(line) for line in trace.read_text().splitlines()]
    # Two rounds of hello and the two allowed discovers: the 403s never reach the server.
    assert [r["method"] for r in rounds] == ["tools/call"] * 2 + ["server/discover"] * 2


@pytest.mark.slow
def test_http_27_without_allowed_host_a_public_name_is_refused(tmp_path):
    """The default stays loopback only: ``Host: api.example.com`` is 403."""
    (tmp_path / "myserver.py").write_text(APP, encoding="utf-8")
    proc, url = start_serve(tmp_path, "--app", "myserver:server")
    try:
        assert discover_over_http(url, {"Host": "api.example.com"}).status_code == 403
        assert discover_over_http(url).status_code == 200
    finally:
        stop_serve(proc)


@pytest.mark.slow
@pytest.mark.parametrize("trusted", [False, True])
def test_forwarded_headers_are_read_only_from_trusted_proxies_and_never_for_the_host(
    tmp_path, trusted
):
    """``--forwarded-allow-ips``: uvicorn's proxy settings, off by default. From a trusted
    address, X-Forwarded-For names the client in the access log; untrusted, it is ignored.
    Either way X-Forwarded-Host never passes the Host check (HTTP-27): only Host counts."""
    (tmp_path / "myserver.py").write_text(APP, encoding="utf-8")
    proxy = ["--forwarded-allow-ips", "127.0.0.1"] if trusted else []
    proc, url = start_serve(tmp_path, "--app", "myserver:server", *proxy, log="info")
    try:
        forwarded = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}
        assert discover_over_http(url, forwarded).status_code == 200
        sneaky = {"Host": "evil.example", "X-Forwarded-Host": "127.0.0.1"}
        assert discover_over_http(url, sneaky).status_code == 403
    finally:
        out = stop_serve(proc)
    assert ("203.0.113.7" in out) is trusted, out


@pytest.mark.slow
def test_stdio_1_serve_app_over_stdio_two_processes_share_a_keys_file(tmp_path):
    """A factory app over ``--stdio``: one process asks (its state sealed with the keys
    from ``--state-keys-file``, AEAD), another started with the same file finishes the flow:
    the keys came from the file, not a fresh key per process."""
    (tmp_path / "myserver.py").write_text(APP, encoding="utf-8")
    (tmp_path / "keys").write_text(KEYS)
    command = [sys.executable, "-m", "mrtr_kit", "serve", "--stdio", "--app", "myserver:build"]
    command += ["--state-keys-file", "keys", "--state-codec", "aead"]
    command += ["--ledger", new_sqlite_ledger(tmp_path / "ledger.db")]

    def one(message: dict[str, Any]) -> dict[str, Any]:
        done = subprocess.run(
            command, cwd=tmp_path, input=json.dumps(message) + "\n", capture_output=True,
            text=True, timeout=60, check=True,
        )  # fmt: skip
        assert "Traceback" not in done.stderr, done.stderr
        [line] = done.stdout.splitlines()  # stdout: JSON-RPC lines only (STDIO-1)
        return json.loads(line)["result"]

    first = one(request("tools/call", {"name": "hello", "arguments": {}}, capabilities=FORMS))
    assert first["resultType"] == "input_required"
    params = {"inputResponses": ANSWER, "requestState": first["requestState"]}
    done = one(
        request("tools/call", {"name": "hello", "arguments": {}, **params}, capabilities=FORMS)
    )
    assert done["content"][0]["text"] == "Hello Ada"


@pytest.mark.parametrize("example", ["weather", "refunds", "url-login"])
def test_kit_clock_skew_reaches_an_examples_server(example):
    """``serve --example NAME --clock-skew 4``: every example passes its options on to
    ``McpServer``, so its states are accepted up to TTL + 4 s (the expiry itself is
    tests/library/test_serve_clock_skew.py's)."""
    from mrtr_kit.__main__ import _example_builder, _example_options

    args = build_parser().parse_args(["serve", "--example", example, "--clock-skew", "4"])
    builder = _example_builder(example)
    built = builder.build("http://127.0.0.1:1", _example_options(args))
    server = built if builder.plain else built.server
    assert server.states.skew_s == 4
