"""Lesson 03c — porting practice (optional): the checkpoints of its exercises.

Each checkpoint serves the learner's handler on a real ``McpServer`` in this process, calls it
as a client would and says whether it is right (and, if not, which case failed):

* ``check_rent_bike`` — exercise 1, the first answer carried in ``requestState``; every round
  runs on a fresh instance (``FreshInstances``), as behind round robin;
* ``check_open_ticket`` — exercise 2, one side effect per completed call, even when the final
  retry arrives twice.

Both send answers that do not fit the form and an ``accept`` with no content, and expect the
question asked again (ELIC-14 SHOULD, MRTR-E4 SHOULD). What they share with lesson 03's
checkpoints is in ``mrtr_course.port_checks``; what the exercises port is in
``lesson03c_lab.py``, beside this file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from lesson03c_lab import BIKE_SCHEMA, TICKET_SCHEMA, Tracker, bike_text

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.port_checks import (
    NO_CONTENT,
    FreshInstances,
    LearnerCode,
    accept,
    acted_twice,
    decline,
    final_twice,
    instance_per_request,
    probe_unfit,
    serve_tool,
)
from mrtr_course.trips import result_text
from mrtr_course.users import scripted_user
from mrtr_kit.client import McpClient, McpClientError, TooManyRounds
from mrtr_kit.server import RequestContext

__all__ = ["FreshInstances", "Tracker", "check_open_ticket", "check_rent_bike"]
SERVER_NAME = "lesson-03c-checkpoint"


def _holds(state: dict[str, Any] | None, value: str) -> bool:
    return value in json.dumps(state or {})


async def check_rent_bike(rent_bike: Callable[[RequestContext], Any]) -> Checkpoint:
    """Exercise 1: ``rent_bike`` asks the day, then the hours, and remembers the day in
    ``requestState``. Every round runs on a fresh server instance (module-level dicts empty),
    so a day kept in the process's memory is gone by round 3, as behind round robin."""
    code = LearnerCode(rent_bike, fresh=True)
    app = instance_per_request("rent_bike", code, BIKE_SCHEMA, SERVER_NAME)
    answers = scripted_user(day="2026-09-02", hours=3)
    code.case = "accepted answers (day, then hours)"
    async with McpClient.for_app(app, elicitation=answers, max_rounds=5) as client:
        try:
            result = await client.call_tool("rent_bike", {"shop": "Velo"})
        except TooManyRounds:
            result = None
        asked = [
            list(((r.response or {}).get("result") or {}).get("inputRequests") or {})
            for r in client.trace
        ]
    if problem := code.problem("rent_bike"):
        return problem
    memory = code.instances.memory if code.instances else []
    in_memory = (
        f"the day was kept in this process's memory ({', '.join(memory)}), not in requestState"
        if memory
        else "the day was kept in this process's memory, not in requestState"
    )
    if result is None:
        flat = " | ".join(", ".join(keys) for keys in asked)
        if memory:
            return Checkpoint(
                "not yet",
                f"{in_memory}. Each round here runs on a fresh instance, as behind round robin, "
                f"where that memory does not hold it; asked per round: {flat}. Carry the day in "
                "the state: ctx.input_required(requests, state).",
            )
        return Checkpoint(
            "not yet",
            f"the call never finished; asked per round: {flat}. The day answered in round 2 is "
            "gone by round 3: carry it in the state (ctx.input_required(requests, state)).",
        )
    want = bike_text("Velo", "2026-09-02", 3)
    if result_text(result) != want:
        return Checkpoint("not yet", f"got {result_text(result)!r}, want {want!r}")
    if asked[:2] != [["day"], ["hours"]] or len(asked) != 3:
        return Checkpoint("not yet", f"expected rounds asking day, then hours, then done: {asked}")
    if not _holds(code.states[-1], "2026-09-02"):
        # Right text, but the last round's verified state lacks the day: it came from elsewhere.
        return Checkpoint(
            "not yet",
            f"{in_memory}: the last round's requestState does not hold it, so another instance "
            "could not finish this call. Put the day into the state you return with the "
            "second question.",
        )
    code.case = "decline"
    async with McpClient.for_app(app, elicitation=decline) as client:
        declined = result_text(await client.call_tool("rent_bike", {"shop": "Velo"}))
    if problem := code.problem("rent_bike"):
        return problem
    if declined != "No bike booked.":
        return Checkpoint("not yet", f"after a decline: got {declined!r}, want 'No bike booked.'")
    shop = {"shop": "Velo"}
    unfit_day = {
        "the day 'next friday' (not a date)": accept({"day": "next friday"}),
        "the day 5 (not a string)": accept({"day": 5}),
        "an accept with no content": NO_CONTENT,
    }
    if problem := await probe_unfit(app, code, "rent_bike", shop, "day", unfit_day):
        return problem
    unfit_hours = {
        "0 hours (below the form's minimum of 1)": accept({"hours": 0}),
        "the hours 'three' (not a number)": accept({"hours": "three"}),
        "an accept with no content": NO_CONTENT,
    }
    day = (("day", accept({"day": "2026-09-02"})),)
    if problem := await probe_unfit(app, code, "rent_bike", shop, "hours", unfit_hours, day):
        return problem
    return Checkpoint(
        "passed",
        "day, then hours, then the booking, in 3 rounds, each on a fresh instance: the day "
        "rode along in the state; answers that do not fit were asked again (ELIC-14).",
    )


async def check_open_ticket(open_ticket: Callable[[RequestContext, Tracker], Any]) -> Checkpoint:
    """Exercise 2: ``open_ticket`` files exactly one ticket per completed call, none otherwise."""
    tracker = Tracker()
    code = LearnerCode(open_ticket, tracker)
    app = serve_tool("open_ticket", code, TICKET_SCHEMA, server_name=SERVER_NAME)
    code.case = "an accepted answer (severity high)"
    async with McpClient.for_app(app, elicitation=scripted_user(severity="high")) as client:
        try:
            result = await client.call_tool("open_ticket", {"title": "Login broken"})
        except McpClientError as exc:
            return code.problem("open_ticket") or Checkpoint("not yet", f"the call failed: {exc}")
    if problem := code.problem("open_ticket"):
        return problem
    if tracker.tickets != [("Login broken", "high")]:
        return Checkpoint("not yet", f"one call filed {tracker.tickets}, want one high ticket")
    if len(tracker.drafts) > 1:
        return Checkpoint(
            "not yet",
            f"one call opened {len(tracker.drafts)} drafts in {code.runs} runs of the handler: "
            "the code before the question runs on every round. File the ticket after the answer.",
        )
    if not result_text(result).startswith("Filed T-1"):
        return Checkpoint("not yet", f"got {result_text(result)!r}; say which ticket was filed")
    code.case = "decline"
    async with McpClient.for_app(app, elicitation=decline) as client:
        await client.call_tool("open_ticket", {"title": "Typo"})
    if problem := code.problem("open_ticket"):
        return problem
    if len(tracker.tickets) != 1 or len(tracker.drafts) > 1:
        return Checkpoint("not yet", "a declined call must leave nothing behind in the tracker")
    title = {"title": "Login broken"}
    unfit = {
        "the severity 'critical' (not a choice)": accept({"severity": "critical"}),
        "the severity 1 (not a string)": accept({"severity": 1}),
        "an accept with no content": NO_CONTENT,
    }
    if problem := await probe_unfit(app, code, "open_ticket", title, "severity", unfit):
        return problem
    if len(tracker.tickets) != 1:
        return Checkpoint(
            "not yet", f"answers that do not fit the form filed tickets: {tracker.tickets}"
        )
    code.case = "the final retry sent twice"
    first, again = await final_twice(
        app, "open_ticket", title, (("severity", accept({"severity": "low"})),)
    )
    if problem := code.problem("open_ticket"):
        return problem
    if len(tracker.tickets) > 2:
        return Checkpoint(
            "not yet", acted_twice(f"filed a second ticket ({tracker.tickets[1:]})", first, again)
        )
    return Checkpoint(
        "passed",
        f"{code.runs} runs of the handler, one ticket per call, no stray drafts; a decline files "
        "nothing; answers that do not fit are asked again; the final retry sent twice files "
        "one ticket.",
    )
