"""The command line (``python -m mrtr_kit``) and ``tools/run_conformance.py``.

The ``slow`` tests start real processes: a uvicorn server on a free loopback port, stopped by
its PID, and the terminal demo with answers piped to its stdin.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from mrtr_course.__main__ import main as course_main
from mrtr_course.__main__ import run_demo
from mrtr_course.examples.fake_weather import describe
from mrtr_kit.__main__ import main
from mrtr_kit.protocol.constants import PROTOCOL_VERSION
from mrtr_kit.server.loopback import free_port
from tests.helpers import discover_over_http

ROOT = Path(__file__).resolve().parents[2]


def wait_for(url: str, proc: subprocess.Popen[str], timeout: float = 60) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the server exited early"
        try:
            return discover_over_http(url)
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"no answer from {url} within {timeout} s")


def stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()  # by PID: only the process this test started
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


def serve(*args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "mrtr_kit", "serve", *args, "--log-level", "warning"]
    return subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.slow
@pytest.mark.parametrize("example", ["weather", "conformance"])
def test_serve_answers_server_discover_over_real_http(example):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = serve("--example", example, "--port", str(port))
    try:
        response = wait_for(url, proc)
        assert response.status_code == 200
        answer = response.json()
        assert answer["result"]["supportedVersions"] == [PROTOCOL_VERSION]
        assert "tools" in answer["result"]["capabilities"]
    finally:
        out = stop(proc)
    assert f"Serving example {example!r} at {url}" in out


@pytest.mark.slow
def test_serve_prints_its_url_once_uvicorn_accepts_connections():
    """KIT: the "Serving ... at URL" line comes after uvicorn's startup is complete (its log
    says so first, on the same stream), so whoever reads the line can send at once: the
    first request, sent without any retry, is answered."""
    command = [sys.executable, "-m", "mrtr_kit", "serve", "--example", "weather", "--port", "0"]
    proc = subprocess.Popen(
        [*command, "--log-level", "info"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        before = []
        while "Serving example" not in (line := proc.stdout.readline()):
            assert line, f"serve exited without its URL: {before}"
            before.append(line)
        assert any("Application startup complete" in b for b in before), before
        response = discover_over_http(line.rsplit(" at ", 1)[1].strip())  # no retry
        assert response.status_code == 200
    finally:
        stop(proc)


@pytest.mark.slow
def test_serve_on_port_zero_prints_the_real_url():
    proc = serve("--example", "booking", "--port", "0")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once uvicorn accepts connections
        url = line.rsplit(" at ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0/mcp")
        assert wait_for(url, proc).status_code == 200
    finally:
        stop(proc)


@pytest.mark.slow
def test_demo_reads_answers_from_piped_stdin():
    # Accept, a too-short login (the console form asks again before sending), then a valid
    # one with the default units, and send it.
    answers = "a\nal\nalice\n\n\n"
    proc = subprocess.run(
        [sys.executable, "-m", "mrtr_course", "demo", "--city", "Oslo"],
        cwd=ROOT,
        input=answers,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("\nround ") == 2
    assert "-> input_required, asks: login" in out
    assert "round 2: tools/call id=2, answers: login" in out
    assert "must be at least 3 characters" in out
    expected = f"Result after 2 round(s): Hello alice! Weather now in {describe('Oslo')}."
    assert out.rstrip().endswith(expected)


def test_demo_cancels_when_the_input_ends():
    lines = iter(["a"])
    written: list[str] = []

    def read(prompt: str) -> str:
        written.append(prompt)
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    assert asyncio.run(run_demo("Paris", read, written.append)) == 0
    assert written[-1] == (
        "\nResult after 2 round(s): No forecast for Paris: the sign-in was dismissed. "
        "Ask again when you want to sign in."
    )


def scripted(*answers: str) -> tuple[Any, list[str]]:
    """A ``read`` that answers from ``answers`` and a transcript of prompts and output."""
    lines = iter(answers)
    written: list[str] = []

    def read(prompt: str) -> str:
        written.append(prompt)
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    return read, written


def test_demo_prints_one_compact_line_per_round_by_default():
    """Issue 9, item 17: the question must not scroll away behind ~80 lines of JSON."""
    read, written = scripted("a", "alice", "", "s")
    assert asyncio.run(run_demo("Oslo", read, written.append)) == 0
    # Every input_required carries a sealed state (it records the asked key, MRTR-E3): the
    # line shows its length only, which depends on the token's claims, not on this test.
    rounds = [
        re.sub(r"\d+ chars", "N chars", line) for line in written if line.startswith("round ")
    ]
    assert rounds == [
        "round 1: tools/call id=1, answers: none, requestState: none"
        " -> input_required, asks: login, requestState: N chars",
        "round 2: tools/call id=2, answers: login, requestState: N chars -> complete",
    ]
    assert not any('"jsonrpc"' in line for line in written)
    assert len("\n".join(written).splitlines()) < 40  # the whole session fits a terminal


def test_demo_shows_the_state_length_when_there_is_a_state():
    from mrtr_course.__main__ import round_line
    from mrtr_kit.client.session import TraceRecord

    record = TraceRecord(
        call=1,
        round=2,
        method="tools/call",
        headers={},
        request={"id": 8, "params": {"inputResponses": {"details": {}}, "requestState": "s" * 40}},
        response={
            "result": {
                "resultType": "input_required",
                "inputRequests": {"confirm": {}},
                "requestState": "t" * 52,
            }
        },
    )
    assert round_line(record) == (
        "round 2: tools/call id=8, answers: details, requestState: 40 chars"
        " -> input_required, asks: confirm, requestState: 52 chars"
    )
    error = TraceRecord(
        call=1,
        round=1,
        method="tools/call",
        headers={},
        request={"id": 1, "params": {}},
        response={"error": {"code": -32602, "message": "bad"}},
    )
    assert round_line(error).endswith("-> error -32602: bad")


def test_demo_verbose_prints_every_request_and_response_in_full():
    read, written = scripted("a", "alice", "", "s")
    assert asyncio.run(run_demo("Oslo", read, written.append, verbose=True)) == 0
    text = "\n".join(written)
    assert text.count('"jsonrpc": "2.0"') == 4  # two requests, two responses
    assert '"resultType": "input_required"' in text


def test_the_console_form_shows_each_fields_constraints_when_asking():
    read, written = scripted("d")
    asyncio.run(run_demo("Oslo", read, written.append))
    read, written = scripted("a", "al", "alice", "", "s")
    asyncio.run(run_demo("Oslo", read, written.append))
    prompts = [line for line in written if line.startswith("  Your login")]
    assert prompts[0].startswith("  Your login (required; text, 3–32 characters)")
    assert "    must be at least 3 characters" in written
    units = next(line for line in written if line.startswith("  Units"))
    assert units.startswith("  Units (optional; choose one) [celsius]")


def test_edit_shows_the_previous_answers_and_enter_keeps_them():
    # accept, login alice, units fahrenheit (2); edit: keep login (Enter), units back to 1; send
    read, written = scripted("a", "alice", "2", "e", "", "1", "s")
    assert asyncio.run(run_demo("Oslo", read, written.append)) == 0
    edit = written.index("Send it? [s]end, [e]dit, [c]ancel (default s): ")
    after = written[edit + 1 :]
    assert any(line.startswith("  Your login") and line.endswith("[alice]: ") for line in after)
    assert any(line.startswith("  Units") and line.endswith("[fahrenheit]: ") for line in after)
    assert '  answer: {"login": "alice", "units": "celsius"}' in after
    assert written[-1].startswith("\nResult after 2 round(s): Hello alice!")


def test_examples_command_lists_every_example_the_course_registers(capsys):
    assert main(["examples"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names == [
        "booking",
        "conformance",
        "deprecated-inputs",
        "lessons",
        "refunds",
        "travel-guide",
        "trip-planner",
        "url-login",
        "weather",
    ]


def test_without_the_course_serve_example_says_what_to_install(monkeypatch, capsys):
    """The library's CLI finds examples through entry points; with none installed, ``serve
    --example`` and ``examples`` name the command that installs the course."""
    import mrtr_kit.__main__ as cli

    monkeypatch.setattr(cli, "example_entry_points", dict)
    assert main(["serve", "--example", "weather"]) == 2
    err = capsys.readouterr().err
    assert "no examples are installed" in err and "tools/kit.py lab" in err
    assert main(["examples"]) == 0
    assert "pip install -e ./course" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "now"),
    [
        (["demo", "--city", "Oslo"], "python -m mrtr_course demo"),
        (["serve", "--legacy", "--example", "trip-planner"], "mrtr_course serve --legacy"),
    ],
)
def test_the_library_cli_says_where_the_course_commands_went(capsys, argv, now):
    assert main(argv) == 2
    assert now in capsys.readouterr().err


def test_conformance_client_passes_the_url_through(monkeypatch, capsys):
    # The harness appends the URL and names the scenario in the environment (§7.1).
    monkeypatch.delenv("MCP_CONFORMANCE_SCENARIO", raising=False)
    assert main(["conformance-client", "http://127.0.0.1:9/mcp"]) == 2
    assert "unknown scenario ''" in capsys.readouterr().err


def test_serve_refuses_an_unknown_example(capsys):
    assert main(["serve", "--example", "nope"]) == 2
    assert "--example 'nope': no such example; try booking, conformance" in capsys.readouterr().err


# -- tools/run_conformance.py ----------------------------------------------------------------------


def load_runner():
    spec = importlib.util.spec_from_file_location(
        "conformance_runner", ROOT / "tools" / "run_conformance.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def test_runner_reports_counts_problems_and_the_summary_line(tmp_path, capsys):
    runner = load_runner()
    good, bad, empty = tmp_path / "good", tmp_path / "bad" / "server-x-1", tmp_path / "empty"
    good.mkdir()
    bad.mkdir(parents=True)
    empty.mkdir()
    (good / "checks.json").write_text(
        json.dumps([{"id": "a", "status": "SUCCESS"}, {"id": "b", "status": "INFO"}])
    )
    (bad / "checks.json").write_text(
        json.dumps(
            [
                {"id": "c", "status": "SUCCESS"},
                {"id": "d", "status": "WARNING", "errorMessage": "a SHOULD was missed"},
            ]
        )
    )
    outcomes = [
        runner.read_checks("server", "good", good),
        runner.read_checks("client", "bad", tmp_path / "bad"),
        runner.read_checks("server", "empty", empty),
    ]
    assert runner.report(outcomes) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("✓ server good") and "SUCCESS 1 FAILURE 0 WARNING 0" in out[0]
    assert out[1].startswith("✗ client bad") and "WARNING 1" in out[1]
    assert out[2] == "      WARNING [d] a SHOULD was missed"
    assert out[3].startswith("✗ server empty") and out[3].endswith("(no checks.json)")
    assert out[-1] == "conformance: 1 passed, 2 failed"


def test_runner_without_the_suite_explains_how_to_install_it(tmp_path, capsys):
    assert load_runner().main(["--suite-dir", str(tmp_path)]) == 2
    assert (
        "npm install node@22 @modelcontextprotocol/conformance@0.2.0-alpha.12"
        in capsys.readouterr().err
    )


def test_runner_never_allows_a_required_scenario_to_fail():
    runner = load_runner()
    assert not runner.REQUIRED & set(runner.ALLOWED_TO_FAIL)
    assert runner.REQUIRED.issubset({*runner.SERVER_SCENARIOS, *runner.CLIENT_SCENARIOS})


@pytest.mark.slow
def test_serve_url_login_serves_its_sign_in_page_at_the_bound_address():
    """ELIC-9: the URL-mode example's link points at the served page, on the real port."""
    from mrtr_kit.client import McpClient

    proc = serve("--example", "url-login", "--port", "0")
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().rsplit(" at ", 1)[1].strip()
        wait_for(url, proc)

        async def first_round() -> str:
            async with McpClient(url, url_elicitation=lambda params, ctx: None) as client:
                await client.list_tools()
                call = await client.begin_tool_call("connect_calendar", {})
                needs = call.input_required
                assert needs is not None
                return needs.input_requests["signin"]["params"]["url"]

        link = asyncio.run(first_round())
        assert link.startswith(url.removesuffix("/mcp") + "/signin/")
        page = httpx.get(link, timeout=60)
        assert page.status_code == 200 and "password" in page.text
    finally:
        stop(proc)


def test_elic_14_the_console_form_types_values_with_the_form_engine():
    """ELIC-14 / ELIC-3 (KIT: the terminal's typing): the console reads lines only; the form
    engine (``mrtr_kit.forms``) turns each into a typed value or says why not, and builds the
    ``ElicitResult``: ``3.0`` is the whole number 3, a choice goes by its number, y/n answer a
    yes-or-no field, Enter keeps the default, an optional field left empty is left out."""
    from mrtr_course.console import ConsoleForm
    from mrtr_kit.client import AnswerContext
    from mrtr_kit.protocol.models import ElicitRequestFormParams

    schema = {
        "type": "object",
        "properties": {
            "party": {"type": "integer", "minimum": 1, "maximum": 12},
            "room": {"type": "string", "enum": ["single", "double"], "default": "double"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
            "ok": {"type": "boolean"},
            "note": {"type": "string"},
        },
        "required": ["party", "ok"],
    }
    params = ElicitRequestFormParams(message="Details?", requested_schema=schema)
    ctx = AnswerContext("details", "tools/call", "t", 1, {"name": "test-server"})
    read, written = scripted("a", "13", "", "abc", "3.0", "", "1, c", "maybe", "y", "", "s")
    answer = ConsoleForm(read, written.append)(params, ctx)
    assert answer.to_wire() == {
        "action": "accept",
        "content": {"party": 3, "room": "double", "tags": ["a", "c"], "ok": True},
    }
    assert type(answer.content["party"]) is int
    problems = [line.strip() for line in written if line.startswith("    ")]
    assert problems == [
        "must be at most 12",
        "this field is required",
        "must be a whole number",
        "answer y or n",
    ]


def test_trace_is_refused_for_a_legacy_server(capsys, tmp_path):
    """``serve --trace`` records 2026-07-28 rounds; a 2025-11-25 server has none to record."""
    trace = tmp_path / "rounds.jsonl"
    argv = ["serve", "--legacy", "--example", "trip-planner", "--trace", str(trace)]
    assert course_main(argv) == 2
    assert "--trace records 2026-07-28 rounds" in capsys.readouterr().err
    assert not trace.exists()
