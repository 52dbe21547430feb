"""``serve --clock-skew SECONDS`` (issue 30, item 4, the command line's part): it becomes
``McpServer(clock_skew_s=...)`` for an ``--app`` factory that takes ``clock_skew_s``, and is
refused (one line, status 2, KIT) for a server that would not receive it. A state is accepted
up to ``state_ttl_s + clock_skew_s`` after it was issued and refused after, to the second (SEC-4).
"""

from __future__ import annotations

import asyncio
import sys
import uuid

import pytest

from mrtr_kit.__main__ import _app_server, build_parser, main
from mrtr_kit.server.state import CLOCK_SKEW_S
from tests.helpers import T0, request

APP = """
from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.context import elicit_form

NOW = [0.0]  # the test moves this clock
OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def register(server):
    @server.tool(description="asks, then says done")
    def step(ctx):
        if ctx.state is None:
            return ctx.input_required({"ok": elicit_form("Go on?", OK)}, {"asked": True})
        return "done"

    return server


def build(state_keys, state_codec, ledger, clock_skew_s=None):
    return register(McpServer(
        "skew", state_keys=state_keys, state_codec=state_codec, ledger=ledger,
        clock_skew_s=clock_skew_s, state_ttl_s=60, now=lambda: NOW[0],
    ))


def build_skew_only(clock_skew_s):
    return McpServer("skew", state_keys=KeyRing.generate(), clock_skew_s=clock_skew_s)


def build_state_only(state_keys, state_codec, ledger):
    return McpServer("skew", state_keys=state_keys, state_codec=state_codec, ledger=ledger)


def build_nothing():
    return McpServer("skew", state_keys=KeyRing.generate())


server = build_nothing()
"""


@pytest.fixture
def app(tmp_path, monkeypatch):
    name = f"skew_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(APP)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield name
    sys.modules.pop(name, None)


def served(app: str, attribute: str, *argv: str):
    return _app_server(build_parser().parse_args(["serve", "--app", f"{app}:{attribute}", *argv]))


def test_kit_a_factory_taking_clock_skew_s_gets_the_option(app):
    assert served(app, "build", "--clock-skew", "7").states.skew_s == 7
    assert served(app, "build", "--clock-skew", "0").states.skew_s == 0
    assert served(app, "build_skew_only", "--clock-skew", "3").states.skew_s == 3
    # Without the option: McpServer's default (30 s), not a value the CLI made up.
    assert served(app, "build").states.skew_s == CLOCK_SKEW_S


def test_sec_4_serve_clock_skew_expiry_to_the_second(app):
    """TTL 60 s and ``--clock-skew 5``: the retry at +65 s completes, at +66 s it is refused."""
    server = served(app, "build", "--clock-skew", "5")
    clock = sys.modules[app].NOW
    caps = {"elicitation": {"form": {}}}

    def retry_after(seconds: int) -> dict:
        clock[0] = T0
        reply = asyncio.run(
            server.handle(request("tools/call", {"name": "step"}, capabilities=caps))
        )
        state = reply.body["result"]["requestState"]
        clock[0] = T0 + seconds
        answer = {"ok": {"action": "accept", "content": {"ok": True}}}
        params = {"name": "step", "requestState": state, "inputResponses": answer}
        return asyncio.run(server.handle(request("tools/call", params, capabilities=caps))).body

    assert retry_after(65)["result"]["content"][0]["text"] == "done"
    assert retry_after(66)["error"]["code"] == -32602  # Invalid requestState


@pytest.mark.parametrize(
    ("attribute", "argv", "says"),
    [
        ("server", ["--clock-skew", "5"], "cannot change them"),
        ("build_state_only", ["--clock-skew", "5"], "takes no clock_skew_s keyword"),
        ("build_nothing", ["--clock-skew", "5"], "takes no clock_skew_s keyword"),
    ],
)
def test_kit_clock_skew_a_server_would_not_receive_is_refused(app, capsys, attribute, argv, says):
    assert main(["serve", "--app", f"{app}:{attribute}", "--port", "0", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and "--clock-skew" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("value", ["-1", "1.5", "soon"])
def test_kit_clock_skew_is_whole_seconds(app, capsys, value):
    with pytest.raises(SystemExit) as caught:
        build_parser().parse_args(["serve", "--app", f"{app}:build", "--clock-skew", value])
    assert caught.value.code == 2
    assert "whole number of seconds" in capsys.readouterr().err
