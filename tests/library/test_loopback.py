"""``mrtr_kit.server.loopback``: a kit app on 127.0.0.1 from a thread (HTTP-28), a free port, a
process stopped by its PID."""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from mrtr_kit.server.loopback import LoopbackServer, free_port, responds, stop_process


def test_http_28_loopback_server_starts_on_a_free_port_and_stops():
    seen = []

    def make_app(base_url):
        seen.append(base_url)
        return Starlette(routes=[Route("/", lambda r: PlainTextResponse(base_url))])

    site = LoopbackServer.start(make_app)
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", site.url)
        assert httpx.get(site.url + "/", timeout=60).text == site.url == seen[0]
        assert responds(site.url + "/")
    finally:
        site.stop()
    assert "stopped" in repr(site)
    assert not responds(site.url + "/")


def test_a_free_port_has_no_listener():
    assert not responds(f"http://127.0.0.1:{free_port()}/")


@pytest.mark.slow
def test_stop_process_ends_one_that_ignores_sigterm_with_sigkill():
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print(1, flush=True); time.sleep(60)"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"1\n"
    stop_process(process, timeout=0.5)
    assert process.returncode == -9
