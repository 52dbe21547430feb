"""Several real server processes behind round robin: why push-style servers break and MRTR
does not (lesson 03, MRTR-0, MIG-1, MIG-2, CORE-8).

Every process is a ``python -m mrtr_kit serve`` started and stopped by PID; nginx is the Debian
package, with its own config, pid file and logs in a temporary directory, stopped by PID.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httpx
import pytest

from mrtr_course.examples.trip_planner import traveller
from mrtr_course.fleet import (
    FRONT_URL,
    Fleet,
    FleetError,
    RoundRobin,
    start_fleet,
    start_processes,
)
from mrtr_course.legacy import LegacyHttpError, LegacyRemoteError, format_trace
from mrtr_course.trips import legacy_trip, mrtr_trip, run_flows
from mrtr_kit.client import McpClient
from mrtr_kit.server.loopback import free_port
from mrtr_kit.server.nginx import NGINX_TEMPLATE, Nginx, nginx_config
from tests.conftest import system_binary
from tests.helpers import discover_over_http

pytestmark = pytest.mark.slow


# How long a legacy tool waits for the answer to its elicitation/create. Where the answer
# cannot arrive (it reaches the other instance), 1 s, so the test does not wait the default
# 300 s. Where it arrives, a wait a busy machine cannot run out: the round trip (an SSE event,
# the client's answer POST) is ordinarily a few ms, but it must never be what the test measures.
LOST_ANSWER_S = "1"
ANSWER_S = "120"


@pytest.fixture(scope="module")
def legacy() -> Any:
    """Two 2025-11-25 instances sharing signed sessions; a tool waits ANSWER_S for an answer."""
    fleet = start_fleet(2, legacy=True, prefix="legacy", options=["--answer-timeout", ANSWER_S])
    yield fleet
    fleet.stop()


@pytest.fixture(scope="module")
def legacy_lost() -> Any:
    """The same, for the tests where the answer goes astray: a tool waits 1 s."""
    options = ["--answer-timeout", LOST_ANSWER_S]
    fleet = start_fleet(2, legacy=True, prefix="legacy", options=options)
    yield fleet
    fleet.stop()


@pytest.fixture(scope="module")
def mrtr() -> Any:
    """Three instances of the MRTR port sharing one MRTR_KIT_STATE_KEY."""
    fleet = start_fleet(3)
    yield fleet
    fleet.stop()


def nginx_binary() -> str:
    return system_binary("nginx", paths=("/usr/sbin/nginx",))


# -- the fleet itself ------------------------------------------------------------------------------


def test_instances_are_separate_processes_named_in_every_response(mrtr: Fleet):
    assert mrtr.names == ["instance-1", "instance-2", "instance-3"]
    assert len({i.pid for i in mrtr}) == 3
    assert len(set(mrtr.urls)) == 3
    for instance in mrtr:
        response = discover_over_http(instance.url)
        assert response.status_code == 200
        assert response.headers["x-mcp-instance"] == instance.name


def test_stop_ends_each_process_by_pid():
    fleet = start_fleet(1, prefix="short")
    process = fleet["short-1"].process
    fleet.stop()
    assert process.poll() is not None
    assert repr(fleet) == "<Fleet short-1: 0 of 1 running>"


def test_a_process_that_does_not_start_is_reported_with_its_log():
    with pytest.raises(FleetError, match="exited"):
        start_processes({"broken": [sys.executable, "-c", "print('no server')"]}, timeout=60)


def test_start_processes_returns_on_the_printed_url_line_without_polling_it():
    """KIT: the fleet waits for each process's URL line, not for an HTTP answer or a fixed
    time: a process that prints a URL where nothing listens (port 1) still counts as started,
    its earlier lines are skipped, and everything it prints, before and after, is in its log
    (the output keeps being copied once the URL was found)."""
    child = (
        "import sys\n"
        "print('starting up')\n"
        "print('Serving fake at http://127.0.0.1:1/mcp', flush=True)\n"
        "print('after the url')\n"
    )
    fleet = start_processes({"fake": [sys.executable, "-c", child]}, timeout=None)
    try:
        instance = fleet["fake"]
        assert instance.url == "http://127.0.0.1:1/mcp"
        instance.process.wait()
        assert instance._watcher is not None
        instance._watcher.join()
        assert instance.log_lines("starting up") and instance.log_lines("after the url")
    finally:
        fleet.stop()


def test_round_robin_rotates_and_sticky_keeps_a_session_together():
    balancer = RoundRobin(["http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp"], sticky=True)
    plain = httpx.Request("POST", FRONT_URL)
    session = httpx.Request("POST", FRONT_URL, headers={"Mcp-Session-Id": "s1"})
    assert [balancer.pick(plain) for _ in range(3)] == [0, 1, 0]
    assert balancer.pick(session) == 1
    assert [balancer.pick(session) for _ in range(3)] == [1, 1, 1]
    balancer.pin("s1", 0)  # the response that created s1 came from instance 0
    assert balancer.pick(session) == 0


def test_a_dead_instance_is_skipped_like_nginx_does(mrtr: Fleet):
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    balancer = RoundRobin([dead, mrtr.urls[0]])
    run = asyncio.run(mrtr_trip(balancer))
    assert run.instances == ["instance-1"] * 3
    assert run.text.startswith("Reserved")


# -- the push-style server behind a balancer -------------------------------------------------------


def test_legacy_tool_works_on_one_instance(legacy: Fleet):
    run = asyncio.run(legacy_trip(RoundRobin(legacy.urls[:1])))
    assert run.error is None
    assert run.text == "Reserved a double room in Lisbon: 3 nights from 2026-09-01, 360 EUR."
    assert {r.instance for r in run.trace} == {"legacy-1"}


def test_legacy_tool_fails_on_two_instances_behind_round_robin(legacy_lost: Fleet):
    """The answer POST reaches the other instance, which has no waiting tool: it accepts and
    drops it (202, as the official SDK does), and the tool times out where it waits."""
    legacy = legacy_lost
    dropped_before = len(legacy["legacy-2"].log_lines("dropped the answer"))
    run = asyncio.run(legacy_trip(RoundRobin(legacy.urls)))

    error = run.error
    assert isinstance(error, LegacyRemoteError)
    assert error.code == -32001
    assert error.message == (
        "Request 'elicitation/create' (id 0) timed out after 1 s: no answer reached this process"
    )
    assert error.instance == "legacy-1"  # the tool waited there
    posts = {r.what: r for r in run.trace if r.step is not None}
    assert posts["tools/call plan_trip"].instance == "legacy-1"
    answer = posts["answer to request 0"]
    assert (answer.instance, answer.http_status) == ("legacy-2", 202)  # accepted... and dropped
    dropped = legacy["legacy-2"].log_lines("dropped the answer")
    assert len(dropped) == dropped_before + 1
    assert dropped[-1] == (
        "legacy-2: dropped the answer to request 0: no tool in this process is waiting for it"
    )
    assert legacy["legacy-1"].log_lines("failed: Request 'elicitation/create' (id 0) timed out")


def test_without_shared_sessions_the_second_request_already_fails():
    with start_fleet(2, legacy=True, options=["--sessions", "local"]) as fleet:
        run = asyncio.run(legacy_trip(RoundRobin(fleet.urls)))
    assert isinstance(run.error, LegacyHttpError)
    assert (run.error.status, run.error.instance) == (404, "instance-2")
    assert "notifications/initialized" in str(run.error)


def test_sticky_sessions_make_the_legacy_tool_work(legacy: Fleet):
    run = asyncio.run(legacy_trip(RoundRobin(legacy.urls, sticky=True)))
    assert run.error is None and run.text is not None and run.text.startswith("Reserved")
    assert len({r.instance for r in run.trace}) == 1
    assert "answer to request 1" in format_trace(run.trace)


def test_sticky_sessions_lose_the_call_with_its_instance():
    """The cost of per-instance state: the waiting tool dies with its process."""
    with start_fleet(2, legacy=True) as fleet:
        answer = traveller()

        def crash_then_answer(params: Any, ctx: Any) -> Any:
            fleet["instance-1"].crash()
            return answer(params, ctx)

        run = asyncio.run(
            legacy_trip(RoundRobin(fleet.urls, sticky=True), answers=crash_then_answer)
        )
        assert fleet["instance-2"].log_lines("dropped the answer to request 0")
    assert run.error is not None
    assert "broke before the response arrived; the call is lost" in str(run.error)
    assert run.trace[-1].what == "connection lost"


# -- the MRTR port on the same kind of fleet -------------------------------------------------------


def test_mrtr_port_rounds_land_on_different_instances(mrtr: Fleet):
    run = asyncio.run(mrtr_trip(RoundRobin(mrtr.urls[:2])))
    assert run.instances == ["instance-1", "instance-2", "instance-1"]
    assert run.text == "Reserved a double room in Lisbon: 3 nights from 2026-09-01, 360 EUR."
    run = asyncio.run(mrtr_trip(RoundRobin(mrtr.urls)))
    assert run.instances == ["instance-1", "instance-2", "instance-3"]


def test_mrtr_call_survives_an_instance_crash_between_rounds():
    with start_fleet(3) as fleet:
        answer = traveller()

        def crash_then_answer(params: Any, ctx: Any) -> Any:
            if fleet["instance-2"].running:
                fleet["instance-2"].crash()
            return answer(params, ctx)

        run = asyncio.run(mrtr_trip(RoundRobin(fleet.urls), answers=crash_then_answer))
    assert run.instances == ["instance-1", "instance-3", "instance-1"]
    assert run.text.startswith("Reserved")


def test_1000_mrtr_flows_over_3_instances_none_lost(mrtr: Fleet):
    balancer = RoundRobin(mrtr.urls)
    report = asyncio.run(run_flows(balancer, flows=1000, concurrency=20))
    assert report.completed == 1000
    assert report.lost == 0
    assert not report.errors
    assert report.rounds == 3000  # three rounds (two forms) per flow
    # Strict rotation: every instance served exactly a third of the rounds...
    assert report.per_instance == {"instance-1": 1000, "instance-2": 1000, "instance-3": 1000}
    # ... and single flows had their rounds served by different instances.
    assert report.spread > 500


# -- nginx in front --------------------------------------------------------------------------------


def test_nginx_config_for_each_balancing():
    urls = ["http://127.0.0.1:9001/mcp", "http://127.0.0.1:9002/mcp"]
    plain = nginx_config(urls, port=8080, prefix="/tmp/x")
    assert "server 127.0.0.1:9001;" in plain and "server 127.0.0.1:9002;" in plain
    assert "daemon off;" in plain and "pid /tmp/x/nginx.pid;" in plain
    assert "proxy_buffering off;" in plain and "ip_hash;" not in plain
    # Sessions go to their own instance by default; "sticky" is the same, its older name.
    assert '"~^127\\.0\\.0\\.1:9001~" 127.0.0.1:9001;' in plain
    assert nginx_config(urls, port=8080, prefix="/tmp/x", balancing="sticky") == plain
    assert "ip_hash;" in nginx_config(urls, port=8080, prefix="/tmp/x", balancing="ip-hash")
    unrouted = nginx_config(urls, port=8080, prefix="/tmp/x", balancing="ignore-sessions")
    assert "~^127" not in unrouted and "default $upstream_http_mcp_session_id;" in unrouted


def test_nginx_runs_the_file_the_deployment_guide_shows():
    """KIT: the nginx the tests and lessons start runs ``course/mrtr_course/nginx.conf``, the file
    docs/deploy.md includes, with only its ``@NAME@`` placeholders filled in: every other line
    of the file is in the configuration, in order, so the guide cannot drift from what runs."""
    urls = ["http://127.0.0.1:9001/mcp", "http://127.0.0.1:9002/mcp"]
    config = nginx_config(urls, port=8080, prefix="/tmp/x").splitlines()
    template = NGINX_TEMPLATE.read_text().splitlines()
    fixed = [line for line in template if "@" not in line or line.lstrip().startswith("#")]
    assert len(fixed) > 50  # the whole file, comments included
    it = iter(config)
    assert all(line in it for line in fixed), "nginx_config left out or reordered a line"
    code = [line for line in config if not line.lstrip().startswith("#")]
    assert not [line for line in code if "@" in line], "a placeholder left unfilled"


def test_nginx_round_robin_breaks_the_legacy_tool(legacy_lost: Fleet):
    # Round robin for every request, sessions included (the kit's default routes sessions).
    with Nginx(legacy_lost.urls, balancing="ignore-sessions", binary=nginx_binary()) as nginx:
        pid = nginx.process.pid if nginx.process else None
        run = asyncio.run(legacy_trip(RoundRobin([nginx.url])))
        assert (nginx.prefix / "nginx.pid").read_text().strip() == str(pid)
    assert nginx.process is not None and nginx.process.poll() is not None  # stopped by PID
    assert isinstance(run.error, LegacyRemoteError) and run.error.code == -32001
    posts = {r.what: r.instance for r in run.trace if r.step is not None}
    assert posts["answer to request 0"] != posts["tools/call plan_trip"]


def test_nginx_sticky_hash_makes_the_legacy_tool_work(legacy: Fleet):
    with Nginx(legacy.urls, balancing="sticky", binary=nginx_binary()) as nginx:
        run = asyncio.run(legacy_trip(RoundRobin([nginx.url])))
    assert run.error is None
    steps = [r for r in run.trace if r.step is not None and r.what != "initialize"]
    assert len({r.instance for r in steps}) == 1  # every request of the session, one instance


def test_nginx_round_robin_carries_mrtr_flows(mrtr: Fleet):
    with Nginx(mrtr.urls, binary=nginx_binary()) as nginx:
        report = asyncio.run(run_flows(RoundRobin([nginx.url]), flows=300, concurrency=20))
    assert (report.completed, report.lost) == (300, 0)
    assert set(report.per_instance) == {"instance-1", "instance-2", "instance-3"}
    assert report.spread > 150


def test_one_mrtr_client_many_calls_through_nginx(mrtr: Fleet):
    async def go() -> list[str]:
        with Nginx(mrtr.urls, binary=nginx_binary()) as nginx:
            balancer = RoundRobin([nginx.url])
            async with McpClient(
                FRONT_URL, elicitation=traveller(), transport=balancer.transport()
            ) as client:
                for city in ("Lisbon", "Porto"):
                    await client.call_tool("plan_trip", {"city": city})
            return [h.instance or "?" for h in balancer.hits]

    instances = asyncio.run(go())
    assert len(instances) == 6 and len(set(instances)) == 3
