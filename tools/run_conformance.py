#!/usr/bin/env python3
"""Run the official MCP conformance suite against the kit's server and client.

    .venv/bin/python tools/run_conformance.py [--suite-dir .conformance] [--output DIR]
                                          [--only server|client] [--scenario NAME ...]

It installs nothing. The suite must already be in ``--suite-dir`` (default ``.conformance/``)::

    mkdir -p .conformance && cd .conformance \\
      && echo '{"name": "mrtr-kit-conformance", "private": true}' > package.json \\
      && npm install node@22 @modelcontextprotocol/conformance@0.2.0-alpha.12

What it does (docs/conformance.md §1, §8):

1. starts ``python -m mrtr_kit serve --example conformance --port <free port>`` as a real
   process and waits until it answers ``server/discover``;
2. runs every server scenario below, one at a time, with ``--spec-version 2026-07-28``;
3. runs the client scenarios with ``--command "<python> -m mrtr_kit conformance-client"``;
4. stops the server (by its PID), reads every ``checks.json`` and prints one line per
   scenario, each FAILURE/WARNING with its message, and ``conformance: N passed, M failed``.

A scenario passes with 0 FAILURE and 0 WARNING (a WARNING fails client runs anyway, §2.4).
Exit status 1 if any scenario outside ``ALLOWED_TO_FAIL`` has a FAILURE or a WARNING, or wrote
no ``checks.json``. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_VERSION = "2026-07-28"
INSTALL = (
    "mkdir -p .conformance && cd .conformance && "
    """echo '{"name": "mrtr-kit-conformance", "private": true}' > package.json && """
    "npm install node@22 @modelcontextprotocol/conformance@0.2.0-alpha.12"
)

MRTR_SCENARIOS = [
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
]
SERVER_SCENARIOS = [
    *MRTR_SCENARIOS,
    "server-stateless",
    "caching",
    "http-header-validation",
    "http-custom-header-server-validation",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "sep-2164-resource-not-found",
    "completion-complete",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "json-schema-2020-12",
]
CLIENT_SCENARIOS = [
    "sep-2322-client-request-state",
    "request-metadata",
    "tools_call",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
]

# Scenarios the kit must always pass; none of them may ever be allowed to fail.
REQUIRED = {
    *MRTR_SCENARIOS,
    "server-stateless",
    "caching",
    "http-header-validation",
    "tools-list",
    "tools-call-simple-text",
    "prompts-get-simple",
    "resources-read-text",
    "sep-2164-resource-not-found",
    "dns-rebinding-protection",
    "sep-2322-client-request-state",
    "request-metadata",
}

# Scenarios that genuinely cannot pass, each with the reason. Reported, but they do not
# change the exit status. Empty: every scenario above passes.
ALLOWED_TO_FAIL: dict[str, str] = {}

assert not REQUIRED & ALLOWED_TO_FAIL.keys(), "a required scenario cannot be allowed to fail"


@dataclass
class Outcome:
    kind: str  # "server" or "client"
    scenario: str
    counts: Counter[str] = field(default_factory=Counter)
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (status, id, message)
    found_checks: bool = False

    @property
    def passed(self) -> bool:
        return self.found_checks and not self.counts["FAILURE"] and not self.counts["WARNING"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def discover_ok(url: str) -> bool:
    """True once the server answers a 2026-07-28 ``server/discover`` with HTTP 200."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": SPEC_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": SPEC_VERSION,
            "Mcp-Method": "server/discover",
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(port: int, log_path: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "mrtr_kit", "serve", "--example", "conformance"]
    command += ["--port", str(port), "--log-level", "warning"]
    log = log_path.open("wb")
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the conformance server exited early; see {log_path}")
        if discover_ok(url):
            return server
        time.sleep(0.2)
    stop_server(server)
    sys.exit(f"the conformance server did not answer within 30 s; see {log_path}")


def stop_server(server: subprocess.Popen[bytes]) -> None:
    server.terminate()  # SIGTERM to this one PID: uvicorn shuts down cleanly
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def run_scenario(
    kind: str, scenario: str, target: list[str], out: Path, env: dict[str, str], cli: Path
) -> Outcome:
    """Run one scenario into its own directory and read back its checks."""
    out.mkdir(parents=True, exist_ok=True)
    command = [str(cli), kind, *target, "--scenario", scenario, "--spec-version", SPEC_VERSION]
    command += ["-o", str(out)]
    with (out / "console.log").open("wb") as log:
        try:
            subprocess.run(
                command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=180
            )
        except subprocess.TimeoutExpired:
            log.write(b"\n[tools/run_conformance.py] the harness timed out after 180 s\n")
    return read_checks(kind, scenario, out)


def read_checks(kind: str, scenario: str, out: Path) -> Outcome:
    outcome = Outcome(kind, scenario)
    for path in sorted(out.rglob("checks.json")):
        outcome.found_checks = True
        for check in json.loads(path.read_text()):
            status = check.get("status", "?")
            outcome.counts[status] += 1
            if status in ("FAILURE", "WARNING"):
                message = check.get("errorMessage") or check.get("description", "")
                outcome.problems.append((status, check.get("id", "?"), message))
    return outcome


def report(outcomes: list[Outcome]) -> int:
    failing_run = False
    for o in outcomes:
        mark = "✓" if o.passed else "✗"
        counts = " ".join(f"{s} {o.counts[s]}" for s in ("SUCCESS", "FAILURE", "WARNING"))
        note = "" if o.found_checks else "  (no checks.json)"
        if not o.passed and o.scenario in ALLOWED_TO_FAIL:
            note += f"  (allowed to fail: {ALLOWED_TO_FAIL[o.scenario]})"
        elif not o.passed:
            failing_run = True
        print(f"{mark} {o.kind:6} {o.scenario:46} {counts}{note}")
        for status, check_id, message in o.problems:
            print(f"      {status} [{check_id}] {message}")
    passed = sum(o.passed for o in outcomes)
    print(f"conformance: {passed} passed, {len(outcomes) - passed} failed")
    return 1 if failing_run else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite-dir", type=Path, default=ROOT / ".conformance")
    parser.add_argument("--output", type=Path, default=ROOT / "conformance-results")
    parser.add_argument("--only", choices=["server", "client"])
    parser.add_argument("--scenario", action="append", help="run only these (repeatable)")
    args = parser.parse_args(argv)

    suite_bin = args.suite_dir.resolve() / "node_modules" / ".bin"
    cli = suite_bin / "conformance"
    if not cli.exists():
        print(f"no conformance suite at {cli}; install it with:\n  {INSTALL}", file=sys.stderr)
        return 2
    # The suite's own node@22 comes first on PATH: the harness needs Node >= 22 (§1).
    env = {**os.environ, "PATH": f"{suite_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    args.output.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime("run-%Y%m%d-%H%M%S-")
    out = Path(tempfile.mkdtemp(prefix=stamp, dir=args.output.resolve()))  # unique per run

    def wanted(names: list[str], kind: str) -> list[str]:
        if args.only not in (None, kind):
            return []
        return [n for n in names if not args.scenario or n in args.scenario]

    outcomes: list[Outcome] = []
    server_names = wanted(SERVER_SCENARIOS, "server")
    if server_names:
        port = free_port()
        server = start_server(port, out / "server.log", env)
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            for name in server_names:
                target = ["--url", url]
                outcomes.append(
                    run_scenario("server", name, target, out / "server" / name, env, cli)
                )
        finally:
            stop_server(server)
    # The harness splits --command on spaces, so the interpreter path must not contain any.
    if " " in sys.executable:
        print(f"warning: {sys.executable!r} has a space; client runs will fail", file=sys.stderr)
    client_command = f"{sys.executable} -m mrtr_kit conformance-client"
    for name in wanted(CLIENT_SCENARIOS, "client"):
        target = ["--command", client_command]
        outcomes.append(run_scenario("client", name, target, out / "client" / name, env, cli))

    print(f"results in {out}")
    return report(outcomes)


if __name__ == "__main__":
    sys.exit(main())
