"""Official 2025-11-25 clients against ``serve`` with its default, both eras (issue 29 item 6):
a real ``serve --app tests.apps:both_eras`` process, and each client as a real process of its
own on loopback, through a form flow, a three-round flow (form, sampling, roots) and a decline.

* The TypeScript SDK v1 client (``@modelcontextprotocol/sdk`` 1.x, Node 22):
  ``ts_sdk1_client.mjs`` (beside this file) connects with the SDK's ``Client`` and
  ``StreamableHTTPClientTransport``, sends ``initialize``, and answers the server's pushed
  ``elicitation/create``, ``sampling/createMessage`` and ``roots/list`` with the SDK's own
  request handlers; it prints what it got, and the methods the server pushed, as one JSON line.
  Node 22 and the SDK come from npm into ``.ts-sdk1/`` (gitignored), as .ci/run's
  "ts sdk v1 client" stage installs them (``TS_SDK1_INSTALL``).
* The Python SDK 1.x client (``mcp<2``): ``sdk1_legacy_client.py`` from the ``.sdk1`` venv, as
  ``test_era2025_http.py`` runs it against the app in-process; here against the command.
* The Python SDK 2.3 client (``mcp`` 2.3, the ``test`` extra) told to speak 2025-11-25
  (``Client(url, mode="legacy")``), in this process.

Without either install the tests skip, naming the command; under CI (``CI`` set) they fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import start_serve, stop_serve
from tests.library.test_era2025_http import SDK1_CLIENT, sdk1_python

ROOT = Path(__file__).resolve().parents[2]
TS_SDK1_VERSION = "1.32.2"  # the newest 1.x on npm (2026-12-06); pinned, as CI installs it
TS_SDK1_DIR = Path(os.environ.get("MRTR_TS_SDK1_DIR", ROOT / ".ts-sdk1"))
TS_SDK1_INSTALL = (
    f"npm install --prefix .ts-sdk1 node@22 @modelcontextprotocol/sdk@{TS_SDK1_VERSION}"
)
CLIENT = Path(__file__).with_name("ts_sdk1_client.mjs")
LEGACY = "2025-11-25"


def node_with_ts_sdk1() -> str:
    """Node 22 of the install folder, once the pinned SDK is there; skip (fail under CI)."""
    node = TS_SDK1_DIR / "node_modules" / "node" / "bin" / "node"
    package = TS_SDK1_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    try:
        version = json.loads(package.read_text())["version"]
    except (OSError, ValueError, KeyError):
        version = None
    if node.exists() and version == TS_SDK1_VERSION:
        return str(node)
    message = f"no TypeScript SDK {TS_SDK1_VERSION} in {TS_SDK1_DIR}/: {TS_SDK1_INSTALL}"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must install it")
    pytest.skip(message)


@pytest.fixture(scope="module")
def node() -> str:
    return node_with_ts_sdk1()


@pytest.fixture(scope="module")
def serve() -> Iterator[str]:
    """``serve`` as a user starts it (both eras: no flag), ann's bearer token configured."""
    env = {"MRTR_KIT_BEARER_TOKENS": "ann:token-ann"}
    proc, url = start_serve(ROOT, "--app", "tests.apps:both_eras", env=env)
    yield url
    stop_serve(proc)


def spawn_stdio() -> dict[str, object]:
    """How a stdio client starts ``serve --stdio`` on the library's test app (its own child)."""
    args = ["-m", "mrtr_kit", "serve", "--stdio", "--app", "tests.apps:both_eras"]
    return {
        "command": sys.executable,
        "args": args,
        "env": {"PYTHONPATH": str(ROOT)},
        "cwd": str(ROOT),
    }


def run_client(command: list[str], *args: str) -> dict[str, object]:
    done = subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        timeout=120,  # a cap for a busy machine, not a speed claim
        env={**os.environ, "MRTR_TS_SDK1_DIR": str(TS_SDK1_DIR)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "text", "pushed"),
    [
        ("form", "Hello ann! Sunny in Oslo.", ["elicitation/create"]),
        (
            "three_rounds",
            "Lyon in spring: 3 nights in Lyon, saved under file:///home/ann/trips",
            ["elicitation/create", "sampling/createMessage", "roots/list"],
        ),
        # ELIC-6: decline is the user's explicit no; the handler ends the call without asking again
        ("decline", "No personal forecast for Oslo.", ["elicitation/create"]),
    ],
)
def test_ts_sdk1_client_flows(node: str, serve: str, scenario: str, text: str, pushed: list[str]):
    """The MRTR handler's questions reach the TS v1 client as pushed requests on the call's SSE
    stream, one kind per round, and its answers complete the call in the 2025-11-25 shape."""
    report = run_client([node, str(CLIENT)], serve, scenario)
    assert report["protocolVersion"] == LEGACY  # the SDK's initialize was answered in its era
    assert report["sessionId"] is True  # and it got a 2025-11-25 session
    assert (report["text"], report["isError"]) == (text, False)
    assert report["pushed"] == pushed


FLOWS = [
    ("form", "Hello ann! Sunny in Oslo."),
    ("three_rounds", "Lyon in spring: 3 nights in Lyon, saved under file:///home/ann/trips"),
    ("decline", "No personal forecast for Oslo."),  # ELIC-6: the user's explicit no
]


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "text"), FLOWS)
def test_python_sdk1_client_flows_against_serve(serve: str, scenario: str, text: str):
    """The Python SDK 1.x client's callbacks answer the same pushed requests."""
    report = run_client([sdk1_python(), str(SDK1_CLIENT)], serve, scenario)
    assert report["protocolVersion"] == LEGACY
    assert (report["text"], report["isError"]) == (text, False)


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "text"), FLOWS)
def test_ts_sdk1_client_flows_over_stdio(node: str, scenario: str, text: str):
    """The same over stdio: the SDK's StdioClientTransport spawns ``serve --stdio`` (both eras
    by default), whose first message, a 2025-11-25 ``initialize``, makes it a legacy session."""
    report = run_client([node, str(CLIENT)], "stdio", scenario, json.dumps(spawn_stdio()))
    assert report["protocolVersion"] == LEGACY and report["sessionId"] is False
    assert (report["text"], report["isError"]) == (text, False)
    kinds = ["elicitation/create", "sampling/createMessage", "roots/list"]
    assert report["pushed"] == (kinds if scenario == "three_rounds" else kinds[:1])


@pytest.mark.slow
def test_ts_sdk1_client_without_elicitation_gets_a_tool_error(node: str, serve: str):
    """KIT: a question the session cannot answer fails as on a 2025-11-25 server, nothing pushed."""
    report = run_client([node, str(CLIENT)], serve, "no_elicitation")
    assert report["isError"] is True and report["pushed"] == []
    assert "elicitation.form" in str(report["text"])


def test_ci_installs_the_pinned_version():
    """CI's install stage and this test name the same release (else CI would fail every run)."""
    assert f'local version="{TS_SDK1_VERSION}"' in (ROOT / ".ci" / "run").read_text()


# -- the Python SDK 2.3 client in its legacy mode -----------------------------------------------


@pytest.fixture(scope="module")
def serve_open() -> Iterator[str]:
    """``serve`` with no authentication (the SDK 2.3 ``Client(url)`` sends no credential)."""
    proc, url = start_serve(ROOT, "--app", "tests.apps:both_eras")
    yield url
    stop_serve(proc)


async def sdk2_legacy_call(url: str, scenario: str) -> tuple[str, bool, list[str]]:
    """One tool call by ``mcp.Client(url, mode="legacy")``; what it got and what was pushed."""
    try:
        from mcp import Client
        from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent
    except ImportError:
        message = 'the official SDK is not installed (pip install "mcp==2.3.*")'
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must install the test extra")
        pytest.skip(message)
    pushed: list[str] = []

    async def elicit(context: object, params: object) -> ElicitResult:
        pushed.append("elicitation/create")
        if scenario == "decline":
            return ElicitResult(action="decline")
        fields = getattr(params, "requested_schema", {}).get("properties", {})
        if "login" in fields:
            return ElicitResult(action="accept", content={"login": "ann"})
        return ElicitResult(action="accept", content={"city": "Lyon", "nights": 3})

    async def sample(context: object, params: object) -> CreateMessageResult:
        pushed.append("sampling/createMessage")
        text = TextContent(type="text", text="Lyon in spring")
        return CreateMessageResult(role="assistant", content=text, model="stand-in")

    async def roots(context: object) -> ListRootsResult:
        pushed.append("roots/list")
        return ListRootsResult(roots=[Root(uri="file:///home/ann/trips", name="trips")])

    tool, arguments = (
        ("plan_trip", {}) if scenario == "three_rounds" else ("get_weather", {"city": "Oslo"})
    )
    async with Client(
        url,
        mode="legacy",
        elicitation_callback=elicit,
        sampling_callback=sample,
        list_roots_callback=roots,
    ) as client:
        result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    return text, bool(result.is_error), pushed


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "text"), FLOWS)
def test_python_sdk2_client_in_legacy_mode_against_serve(serve_open: str, scenario: str, text: str):
    """The SDK 2.3 client, kept to 2025-11-25, gets the same handler's questions pushed."""
    got, is_error, pushed = asyncio.run(sdk2_legacy_call(serve_open, scenario))
    assert (got, is_error) == (text, False)
    expected = ["elicitation/create"]
    if scenario == "three_rounds":
        expected += ["sampling/createMessage", "roots/list"]
    assert pushed == expected
