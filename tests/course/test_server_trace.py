"""The server's view of each round (``server/rounds.py``): one ``ServerRound`` per request the
core answers, from ``McpServer.handle``, for every outcome; and the ``serve --trace`` file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from mrtr_course.examples import booking
from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.rounds import ServerRound
from mrtr_kit.server.state import INVALID_STATE_DATA, INVALID_STATE_MESSAGE
from tests.helpers import T0, call, error, headers, request, result, run, with_bad_tag

FORM = {"elicitation": {"form": {}}}
ROOT = Path(__file__).resolve().parents[2]


def watched(**kw) -> tuple[McpServer, list[ServerRound]]:
    rounds: list[ServerRound] = []
    server = booking.build_server(KeyRing.generate(), now=lambda: T0, **kw)
    server.observer = rounds.append
    return server, rounds


def book(**extra):
    return {"name": "book_table", "arguments": {"restaurant": "Luigi's"}, **extra}


def details(action="accept"):
    answer = {"action": action}
    if action == "accept":
        answer["content"] = {"party": 2, "when": "2026-10-10"}
    return {"details": answer}


def test_round_one_is_input_required_with_the_keys_asked_and_a_state_issued():
    server, rounds = watched()
    reply = call(server, "tools/call", book(), capabilities=FORM)
    [r] = rounds
    assert r.id == reply.body["id"]
    assert (r.method, r.target, r.client, r.at) == ("tools/call", "book_table", "kit-tests", T0)
    assert (r.outcome, r.asked, r.state_issued) == ("input_required", ("details",), True)
    assert (r.answers, r.state, r.state_problem) == ({}, "absent", None)


def test_a_retry_shows_its_answers_kinds_and_the_state_verified():
    server, rounds = watched()
    state = result(call(server, "tools/call", book(), capabilities=FORM))["requestState"]
    retry = book(inputResponses=details(), requestState=state)
    call(server, "tools/call", retry, capabilities=FORM)
    r = rounds[-1]
    assert (r.answers, r.state, r.state_problem) == ({"details": "accept"}, "verified", None)
    assert (r.outcome, r.asked, r.state_issued) == ("input_required", ("confirm",), True)
    assert "2026-10-10" not in json.dumps(r.to_json())  # never the answer's content


def test_a_decline_completes_and_says_decline():
    server, rounds = watched()
    state = result(call(server, "tools/call", book(), capabilities=FORM))["requestState"]
    call(server, "tools/call", book(inputResponses=details("decline"), requestState=state))
    r = rounds[-1]
    assert (r.answers, r.state, r.outcome) == ({"details": "decline"}, "verified", "complete")
    assert (r.asked, r.state_issued, r.error_code) == ((), False, None)


def test_a_forged_state_is_refused_with_its_reason_while_the_client_sees_the_uniform_error():
    server, rounds = watched()
    state = result(call(server, "tools/call", book(), capabilities=FORM))["requestState"]
    forged = call(
        server, "tools/call", book(inputResponses=details(), requestState=with_bad_tag(state))
    )
    other = call(
        server, "tools/call", book(arguments={"restaurant": "Chez Nous"}, requestState=state)
    )
    # MRTR-S4a, KIT: the wire says the same thing for both, and nothing about why.
    for reply in (forged, other):
        assert error(reply) == {
            "code": -32602,
            "message": INVALID_STATE_MESSAGE,
            "data": INVALID_STATE_DATA,
        }
    assert [(r.state, r.state_problem) for r in rounds[1:]] == [
        ("refused", "bad tag"),
        ("refused", "issued for another request"),
    ]
    assert rounds[-1].outcome == "error" and rounds[-1].error_code == -32602
    text = json.dumps([r.to_json() for r in rounds])
    assert state not in text  # the operator's view holds no state, no key


def test_a_replayed_final_state_is_refused_as_already_redeemed():
    server, rounds = watched()
    first = result(call(server, "tools/call", book(), capabilities=FORM))["requestState"]
    retry = book(inputResponses=details(), requestState=first)
    confirm = result(call(server, "tools/call", retry, capabilities=FORM))
    last = book(inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}})
    last["requestState"] = confirm["requestState"]
    assert "result" in call(server, "tools/call", last).body
    assert rounds[-1].outcome == "complete" and rounds[-1].state == "verified"
    call(server, "tools/call", last)
    assert (rounds[-1].state, rounds[-1].state_problem) == ("refused", "already redeemed")


def test_errors_and_other_methods_are_rounds_too_and_a_state_not_looked_at_is_unchecked():
    server, rounds = watched()
    call(server, "tools/list")
    call(server, "tools/call", {"name": "nope", "requestState": "x"})
    run(server, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    assert [(r.method, r.outcome) for r in rounds] == [
        ("tools/list", "complete"),
        ("tools/call", "error"),
    ]  # a notification is not a round: nothing was answered
    r = rounds[-1]
    assert (r.target, r.state, r.error_code) == ("nope", "unchecked", -32602)
    assert r.error_message == "Unknown tool: nope"


def test_client_chosen_text_is_cut_short():
    server, rounds = watched()
    call(server, "tools/call", {"name": "x" * 5000})
    assert len(rounds[0].target) <= 121 and len(rounds[0].error_message) <= 121


def test_an_observer_that_fails_changes_nothing_and_none_builds_nothing(caplog):
    server, _ = watched()
    plain = booking.build_server(KeyRing.generate(), now=lambda: T0)

    def broken(_round):
        raise RuntimeError("observer bug")

    server.observer = broken
    watched_reply = call(server, "tools/call", book(), capabilities=FORM)
    plain_reply = call(plain, "tools/call", book(), capabilities=FORM)
    assert result(watched_reply)["inputRequests"] == result(plain_reply)["inputRequests"]
    assert "the round observer failed" in caplog.text


def test_a_record_survives_its_json_line():
    server, rounds = watched()
    call(server, "tools/call", book(), capabilities=FORM)
    line = json.dumps(rounds[0].to_json())
    assert ServerRound.from_json(json.loads(line)) == rounds[0]


@pytest.mark.slow
def test_serve_trace_appends_one_flushed_json_line_per_round(tmp_path):
    """``serve --trace PATH`` from a real subprocess: each round is in the file as soon as
    it is answered (the server still runs), one JSON object per line."""
    trace = tmp_path / "rounds.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "mrtr_kit", "serve", "--example", "booking", "--port", "0"]
    command += ["--log-level", "warning", "--trace", str(trace)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        url = line.rsplit(" ", 1)[-1].strip()
        assert url.startswith("http://127.0.0.1:"), line
        first = request("tools/call", book(), capabilities=FORM)
        sent = headers("tools/call", "book_table")
        r1 = httpx.post(url, json=first, headers=sent, timeout=30).json()
        state = r1["result"]["requestState"]
        retry = request("tools/call", book(inputResponses=details("decline"), requestState=state))
        httpx.post(url, json=retry, headers=sent, timeout=30)
        deadline = time.monotonic() + 30
        while len(trace.read_text().splitlines()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None  # flushed while the server runs
        lines = [json.loads(x) for x in trace.read_text().splitlines()]
    finally:
        proc.terminate()
        proc.wait(30)
    assert [(x["id"], x["outcome"], x["state"]) for x in lines] == [
        (first["id"], "input_required", "absent"),
        (retry["id"], "complete", "verified"),
    ]
    assert lines[1]["answers"] == {"details": "decline"}
    assert state not in trace.read_text()
