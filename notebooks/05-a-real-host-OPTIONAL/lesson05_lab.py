"""Lesson 05 (optional): a real host. The lesson server in a subprocess with its trace on, the
command that points MCP Inspector at it, and the checkpoint that reads Inspector's rounds
from the server's trace.

* ``start_traced_server()`` — ``python -m mrtr_kit serve --example lessons --trace PATH`` on a
  free loopback port; ``.url``, ``.trace`` (the file), ``.inspector_command``, ``.stop()``;
* ``send_tampered(url, record)`` — resend a traced round with one character of its
  ``requestState`` changed, as an attacker would, and return the server's answer;
* ``check_host_flow(trace)`` — did a client other than this notebook's call a tool that asks,
  answer its form in a retry with a new id and the state verified, and decline once?
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.fleet import Fleet, serve_command, start_processes
from mrtr_course.plain.server_trace import ServerStep, Source, load, server_steps
from mrtr_kit.server.rounds import ServerRound

NOTEBOOK_CLIENT = "mrtr-kit-client"  # the clientInfo.name the kit's own client declares
# The kit's own clients all declare a name starting so (mrtr-kit-client, -legacy-client, ...):
# none of them is a host. Nor is a client that declares no name (a script posting JSON).
KIT_CLIENTS = "mrtr-kit"
TOOL = "book_table"  # the tool the lesson asks the learner to call in the host
INSPECTOR_HINT = (
    "start Inspector with the command above, call book_table in its Tools tab, answer the "
    "form, call it again and decline, then re-run this cell"
)


class TracedServer:
    """The lesson server as a subprocess whose every round is appended to ``trace``."""

    def __init__(self, fleet: Fleet, trace: Path, workdir: tempfile.TemporaryDirectory[str]):
        self._fleet = fleet
        self._workdir = workdir
        self.trace = trace
        self.url = fleet[0].url

    @property
    def inspector_command(self) -> str:
        return f"python3 tools/kit.py inspector --url {self.url}"

    def stop(self) -> None:
        self._fleet.stop()
        self._workdir.cleanup()

    def __repr__(self) -> str:
        running = "running" if self._fleet[0].running else "stopped"
        return f"<lesson server {self.url} ({running}), trace in {self.trace.name}>"


def start_traced_server(example: str = "lessons") -> TracedServer:
    workdir = tempfile.TemporaryDirectory(prefix="mrtr-trace-")
    trace = Path(workdir.name) / "rounds.jsonl"
    command = serve_command(example, "lesson", options=["--trace", str(trace)])
    try:
        fleet = start_processes({"lesson": command})
    except BaseException:
        workdir.cleanup()
        raise
    return TracedServer(fleet, trace, workdir)


def tampered(token: str) -> str:
    """``token`` with one character in the middle of its payload (the third field) changed."""
    fields = token.split(".")
    payload = fields[2]
    i = len(payload) // 2
    fields[2] = payload[:i] + ("B" if payload[i] == "A" else "A") + payload[i + 1 :]
    return ".".join(fields)


def send_tampered(url: str, record: Any, request_id: str = "tampered-1") -> dict[str, Any]:
    """POST ``record``'s request (a client trace record that carried a requestState) again,
    with a new id and its state tampered with; return the server's JSON answer."""
    request = {**record.request, "id": request_id}
    params = dict(request["params"])
    params["requestState"] = tampered(params["requestState"])
    request["params"] = params
    headers = {**record.headers, "Accept": "application/json, text/event-stream"}
    answer: dict[str, Any] = httpx.post(url, json=request, headers=headers, timeout=30).json()
    return answer


def _answered_as_asked(step: ServerStep) -> bool:
    assert step.retries is not None
    return set(step.retries.round.asked) <= set(step.round.answers)


def _good_retries(steps: Iterable[ServerStep]) -> list[ServerStep]:
    """Retries with a new id, every asked key answered, and the state verified."""
    return [
        s
        for s in steps
        if s.retries is not None
        and s.round.id != s.retries.round.id
        and _answered_as_asked(s)
        and s.round.state in ("verified", "absent")
        and (s.round.state == "verified") == s.retries.round.state_issued
    ]


def is_host(client: str | None, own: str = NOTEBOOK_CLIENT) -> bool:
    """A host declares a name of its own: not ``own``, not one of the kit's clients, not none."""
    return bool(client) and client != own and not str(client).startswith(KIT_CLIENTS)


def check_host_flow(
    source: Source | Iterable[ServerRound], own: str = NOTEBOOK_CLIENT
) -> Checkpoint:
    """From the server's trace: one host (a client that names itself, and is not one of the
    kit's) called ``book_table``, answered its form in a proper retry, and declined once. Says
    what is missing first."""
    rounds = load(source) if isinstance(source, str | Path) else list(source)
    hosts = [r for r in rounds if is_host(r.client, own) and r.target == TOOL]
    if not hosts:
        return Checkpoint(
            "not yet",
            f"no {TOOL} rounds from a host yet (only from the kit's own clients, or from "
            f"clients that declare no name): {INSPECTOR_HINT}.",
        )
    host = hosts[-1].client
    steps, _ = server_steps(r for r in hosts if r.client == host)
    refused = [s for s in steps if s.round.state == "refused"]
    if refused:
        return Checkpoint(
            "not yet",
            f"round {refused[0].number} from {host} had its requestState refused "
            f"({refused[0].round.state_problem}): the host must echo it byte for byte (MRTR-C2).",
        )
    good = _good_retries(steps)
    if not good:
        return Checkpoint(
            "not yet",
            f"{host} called, but no retry answered a form yet: answer the form in its dialog.",
        )
    declined = [s for s in good if "decline" in s.round.answers.values()]
    accepted = [s for s in good if "accept" in s.round.answers.values()]
    if not accepted:
        return Checkpoint(
            "not yet",
            f"{host} has not submitted a form yet: call {TOOL} again, fill in its form and "
            "submit it.",
        )
    if not declined:
        return Checkpoint(
            "not yet",
            f"{host} answered {len(good)} round(s) correctly; now call book_table again and "
            "press Decline in the form.",
        )
    return Checkpoint(
        "passed",
        f"{host} answered {len(good)} round(s): each retry had a new id, answered every key "
        f"asked and echoed the state (verified); round {declined[0].number} declined.",
    )
