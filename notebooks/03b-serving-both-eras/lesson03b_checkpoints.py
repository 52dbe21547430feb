"""Lesson 03b — serving both eras: the checkpoint of its exercise.

``check_answer_form`` gives the learner's callback to the kit's MRTR client (``McpClient``'s
``elicitation=``) and calls lesson 03's ``plan_trip`` on a real ``McpServer`` in this process
three times: the user fills in both forms, says no to the first, and closes the first. Each
failure names the rule the port broke (MIG-6: the client drops its handler for pushed requests
and answers inside the retry; MRTR-C8: a no is an answer; ELIC-6: decline is not cancel).

What the exercise ports (``on_server_request``) and the stand-in user (``user``) are in
``lesson03b_lab.py``, beside this file.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from lesson03b_lab import user

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.examples.trip_planner import (
    build_server,
    dates_question,
    ended_text,
    room_question,
)
from mrtr_course.trips import result_text
from mrtr_kit.client import McpClient, McpClientError
from mrtr_kit.server.http import create_app

ENVELOPE = {"jsonrpc", "id", "result", "error"}
TRIP = {"city": "Lisbon"}
BOOKED = "Reserved a double room in Lisbon: 3 nights from 2026-09-01, 360 EUR."


class _Watch:
    """The learner's callback as the client calls it, with what it returned or raised kept
    for the report (the client would otherwise stop with an error of its own)."""

    def __init__(self, callback: Callable[..., Any]) -> None:
        self.callback = callback
        self.returned: list[Any] = []
        self.error: BaseException | None = None

    async def __call__(self, params: Any, ctx: Any) -> Any:
        try:
            answer = self.callback(params, ctx)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            self.error = exc
            raise
        self.returned.append(answer)
        return answer


def _wire(answer: Any) -> Any:
    """A returned answer as a plain value (a pydantic model's wire form)."""
    to_wire = getattr(answer, "to_wire", None)
    return to_wire() if callable(to_wire) else answer


def _retry_answers(client: McpClient) -> list[dict[str, Any]]:
    """The ``inputResponses`` of each retry the client sent."""
    return [
        r.request.get("params", {}).get("inputResponses")
        for r in client.trace
        if r.request.get("params", {}).get("inputResponses")
    ]


def _diagnose(watch: _Watch, case: str, refused: bool) -> Checkpoint | None:
    """What the callback did wrong, in the words of the rule it broke; None if nothing.
    ``refused``: the user said no or closed the form in this case."""
    error = watch.error
    if isinstance(error, NotImplementedError):
        return Checkpoint("not done", "answer_form() still raises NotImplementedError.")
    if (isinstance(error, TypeError) and "subscriptable" in str(error)) or (
        isinstance(error, KeyError | AttributeError)
        and any(part in str(error) for part in ("'method'", "'params'", "'id'"))
    ):
        return Checkpoint(
            "not yet",
            f"when {case}, answer_form raised {type(error).__name__}: {error}. It reads a "
            "JSON-RPC message, but the MRTR loop hands it the request's params "
            "(params.message, params.requested_schema): the client already picked this "
            "handler by the method, and there is no pushed request any more (MIG-6 step).",
        )
    if error is not None:
        hint = (
            " A no is an answer: return ElicitResult(action='decline') and let the loop "
            "retry with it (MRTR-C8 note)."
            if case != "the user fills in both forms"
            else ""
        )
        return Checkpoint(
            "not yet", f"when {case}, answer_form raised {type(error).__name__}: {error}.{hint}"
        )
    for answer in watch.returned:
        wire = _wire(answer)
        if isinstance(wire, dict) and ENVELOPE & set(wire) and "action" not in wire:
            return Checkpoint(
                "not yet",
                f"when {case}, answer_form returned a JSON-RPC message ({sorted(wire)}). Under "
                "2026-07-28 no request was pushed, so there is nothing to respond to by id: "
                "return the ElicitResult itself, and the loop sends it in the retry's "
                "inputResponses under the question's key (MIG-6 step, MRTR-C6 note).",
            )
        if answer is None:
            return Checkpoint(
                "not yet",
                f"when {case}, answer_form returned None. A no or a closed form is still an "
                "answer: return ElicitResult(action='decline') or 'cancel', and the loop "
                "retries with it (MRTR-C8 note).",
            )
        action = wire.get("action") if isinstance(wire, dict) else getattr(answer, "action", None)
        if refused and action == "accept":
            return Checkpoint(
                "not yet",
                f"when {case}, answer_form answered 'accept': accept means the user submitted "
                "the form (ELIC-6 note), and this user did not. Read the reply's closed and "
                "submitted first, as on_server_request does.",
            )
    return None


async def _call(callback: Callable[..., Any], case: str, **how: Any) -> tuple[Any, ...]:
    """One ``plan_trip`` call with ``user`` set up as ``how``: (the client, the result's text
    or the client's error, what the callback did wrong)."""
    user.reset(**how)
    watch = _Watch(callback)
    app = create_app(build_server())
    async with McpClient.for_app(app, elicitation=watch) as client:
        try:
            outcome: Any = result_text(await client.call_tool("plan_trip", TRIP))
        except Exception as exc:  # the callback's own error is reported by _diagnose
            if watch.error is None and not isinstance(exc, McpClientError):
                raise
            outcome = exc
    refused = bool(how.get("says_no") or how.get("closes"))
    return client, outcome, _diagnose(watch, case, refused)


async def check_answer_form(answer_form: Callable[..., Any]) -> Checkpoint:
    """The exercise: ``answer_form(params, ctx)``, the port of ``on_server_request``."""
    both = "the user fills in both forms"
    answers = {"start": "2026-09-01", "nights": 3, "room": "double"}
    client, outcome, problem = await _call(answer_form, both, answers=answers)
    if problem:
        return problem
    if isinstance(outcome, McpClientError):
        return Checkpoint("not yet", f"when {both}, the call failed: {outcome}")
    shown = [message for message, _ in user.shown]
    want = [dates_question("Lisbon"), room_question("Lisbon", "2026-09-01", 3)]
    if shown != want:
        return Checkpoint(
            "not yet",
            f"the user was shown {shown or 'nothing'}, not the server's two questions {want}. "
            "Ask the user with the server's message and form: "
            "user.ask(params.message, params.requested_schema) (ELIC-15 MUST: the user sees "
            "what is asked and decides).",
        )
    if outcome != BOOKED:
        return Checkpoint("not yet", f"when {both}, the trip ended {outcome!r}, not {BOOKED!r}")

    for case, how, action in (
        ("the user says no", {"says_no": True}, "decline"),
        ("the user closes the form", {"closes": True}, "cancel"),
    ):
        client, outcome, problem = await _call(answer_form, case, **how)
        if problem:
            return problem
        if isinstance(outcome, McpClientError):
            return Checkpoint("not yet", f"when {case}, the call failed: {outcome}")
        sent = _retry_answers(client)
        got = sent[0].get("dates", {}).get("action") if sent else None
        if got != action:
            meaning = "decline is the user's explicit no, cancel a form dismissed without a choice"
            return Checkpoint(
                "not yet",
                f"when {case}, the retry answered {got!r}, not {action!r}: {meaning} "
                "(ELIC-6 note). Keep the difference the 2025-11-25 handler made.",
            )
        if outcome != ended_text(TRIP["city"], action):
            return Checkpoint("not yet", f"when {case}, the trip ended {outcome!r}")
    return Checkpoint(
        "passed",
        "the loop asked the user each question the server returned and sent the answers in "
        "the retries: accepted (the trip booked), declined and cancelled (nothing reserved). "
        "No JSON-RPC id, no POST of your own.",
    )
