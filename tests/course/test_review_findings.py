"""Issue 31: the pedagogy and newcomer reviews' findings in lessons 01b, 03 and 04, one test
each, named after the finding (S1-S3 serious, M1-M10 minor, the newcomer's broken and
confusing moments). Each test failed on the text and code before the fix.

The rules the fixes cite: MRTR-E3 (ignore unasked answers), ELIC-14 and MRTR-E4 (validate,
and ask again), MIG-3 and HTTP-26 (a final retry may arrive twice), MRTR-S8 (a server may ask
again), CAP-2 (gate where you ask), ELIC-12 (URL mode), ELIC-6 (decline vs cancel), MIG-2.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import runpy
from pathlib import Path
from typing import Any

import lesson01b_checkpoints
import lesson01b_quiz
import lesson03_checkpoints
import lesson03_lab
import lesson03c_checkpoints
import lesson03c_lab
import pytest

from mrtr_course.examples import booking, trip_planner, weather
from mrtr_course.examples.trip_planner import HotelDesk
from mrtr_course.refund_lab.lab import RawCaller
from mrtr_kit.protocol import errors
from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.http import create_app
from tests.lesson_files import LESSONS, ROOT, run_cell_in_loop

L01B = LESSONS / "01b-more-ways-to-ask-OPTIONAL"
L03 = LESSONS / "03-migrating-from-server-requests"
L03C = LESSONS / "03c-porting-practice-OPTIONAL"  # 03's exercises 3 and 4 moved here
L04 = LESSONS / "04-port-your-own-server"
NOTEBOOKS = {
    "01b": L01B / "01b-more-ways-to-ask-OPTIONAL.ipynb",
    "03": L03 / "03-migrating-from-server-requests.ipynb",
    "03c": L03C / "03c-porting-practice-OPTIONAL.ipynb",
    "04": L04 / "04-port-your-own-server.ipynb",
}
COURSE = ROOT / "course" / "mrtr_course"


def cells(lesson: str) -> list[dict[str, Any]]:
    return json.loads(NOTEBOOKS[lesson].read_text())["cells"]


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def prose(lesson: str) -> str:
    """The lesson's markdown, with line breaks and runs of spaces as one space."""
    text = "\n".join(source(c) for c in cells(lesson) if c["cell_type"] == "markdown")
    return " ".join(text.split())


def outputs(cell: dict[str, Any]) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append("".join(out.get("text", "")))
        parts.append("".join(out.get("data", {}).get("text/plain", "")))
    return "".join(parts)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- S1: the official-SDK port acts only on what it asked ------------------------------------------

sdk = pytest.importorskip("mrtr_course.sdk_port.trip_mrtr", reason="needs the official SDK (mcp)")


def test_s1_the_sdk_port_passes_its_checkpoint():
    """Both answers with no state, an early answer, out-of-schema answers, an accept with no
    content, and the final retry twice: the port asks, asks again, and books once."""
    result = run(lesson03_checkpoints.check_sdk_port(sdk.build_server))
    assert result.passed, result


def test_s1_a_port_that_reads_whichever_answers_are_present_fails_naming_mrtr_e3(monkeypatch):
    """The old port decided what to ask from which answers were present: a first call with
    both answers and no requestState booked the trip. The checkpoint names MRTR-E3."""

    def present(ctx: Any, state: dict[str, Any], key: str) -> Any:
        raw = (ctx.input_responses or {}).get(key)
        return None if raw is None else sdk.ElicitResult.model_validate(raw)

    monkeypatch.setattr(sdk, "answer_to", present)
    result = run(lesson03_checkpoints.check_sdk_port(sdk.build_server))
    assert not result.passed
    assert "no requestState got complete: Reserved" in result.message
    assert "(MRTR-E3 SHOULD)" in result.message


def test_s1_a_port_that_does_not_validate_fails_naming_elic14(monkeypatch):
    monkeypatch.setattr(sdk, "problem", lambda answer, model: None)
    result = run(lesson03_checkpoints.check_sdk_port(sdk.build_server))
    assert not result.passed
    assert "with the room 'purple' (not a choice)" in result.message
    assert "(ELIC-14 SHOULD" in result.message


def test_s1_a_port_that_books_every_final_retry_fails_naming_mig3_and_http26(monkeypatch):
    reserve = HotelDesk.reserve

    def every_time(self: HotelDesk, *args: Any, key: str | None = None, **kw: Any) -> Any:
        return reserve(self, *args, **kw)  # the key ignored: a booking per retry

    monkeypatch.setattr(HotelDesk, "reserve", every_time)
    result = run(lesson03_checkpoints.check_sdk_port(sdk.build_server))
    assert not result.passed
    assert "made 2 reservations" in result.message
    assert "(HTTP-26 MUST" in result.message and "(MIG-3)" in result.message


def test_s1_lesson_03_has_the_learner_write_what_the_sdk_does_not_check():
    """Issue 31, item 1: a learner exercise on the SDK port, whose checkpoint sends early,
    stateless and out-of-schema answers; stored unsolved, it says so."""
    all_cells = cells("03")
    checkpoint = next(c for c in all_cells if source(c) == "await check_sdk_answer_to(answer_to)")
    assert outputs(checkpoint).startswith("… Not done yet: answer_to()")
    text = prose("03")
    assert "does not know what the tool asked" in text and "(MRTR-E3 SHOULD)" in text
    assert "sends both answers with no state, an early room answer" in text


# -- S2: every model solution validates; every checkpoint sends unfit answers ----------------------

OLD_COLOUR = """
from mrtr_kit.server.context import elicit_form

COLOUR_FORM = {"type": "object", "properties": {"colour": {"type": "string",
               "enum": ["red", "green", "blue"]}}, "required": ["colour"]}


def favourite_colour(ctx):
    answer = ctx.elicitation("colour")
    if answer is None:
        return ctx.input_required({"colour": elicit_form("Which colour?", COLOUR_FORM)})
    if answer.action == "decline":
        return "No colour, then: I will use the default theme."
    if answer.action == "cancel":
        return "No colour chosen yet: ask me again when you want to pick one."
    return f"Your favourite colour is {answer.content['colour']}."
"""

OLD_03 = {
    "pick_seat": """
from lesson03_lab import SEAT_FORM, ask_seat, seat_text
from mrtr_kit.protocol.elicitation import validate_content

def pick_seat(ctx):
    flight = ctx.arguments["flight"]
    answer = ctx.elicitation("seat")
    if answer is None:
        return ctx.input_required({"seat": ask_seat(flight)})
    if answer.action != "accept" or validate_content(SEAT_FORM, answer.content):
        return f"No seat chosen on {flight}."
    return seat_text(flight, answer.content["seat"])
""",
    "rent_bike": """
from lesson03c_lab import ask_day, ask_hours, bike_text

def rent_bike(ctx):
    shop = ctx.arguments["shop"]
    state = ctx.state or {}
    if "day" not in state:
        day = ctx.elicitation("day")
        if day is None:
            return ctx.input_required({"day": ask_day(shop)}, state)
        if day.action != "accept":
            return "No bike booked."
        state = {"day": day.content["day"]}
    hours = ctx.elicitation("hours")
    if hours is None:
        return ctx.input_required({"hours": ask_hours(shop, state["day"])}, state)
    if hours.action != "accept":
        return "No bike booked."
    return bike_text(shop, state["day"], hours.content["hours"])
""",
    "open_ticket": """
from lesson03c_lab import ask_severity

def open_ticket(ctx, tracker):
    title = ctx.arguments["title"]
    answer = ctx.elicitation("severity")
    if answer is None:
        return ctx.input_required({"severity": ask_severity(title)})
    if answer.action != "accept":
        return "No ticket filed."
    return f"Filed {tracker.file(title, answer.content['severity'])}: {title}."
""",
}


# Exercise 2 of 03; rent_bike and open_ticket, once 03's exercises 3 and 4, are 03c's 1 and 2.
CHECKPOINTS = {
    "pick_seat": lesson03_checkpoints,
    "rent_bike": lesson03c_checkpoints,
    "open_ticket": lesson03c_checkpoints,
}
SOLUTIONS = {
    "pick_seat": L03 / "solutions" / "03_pick_seat.py",
    "rent_bike": L03C / "solutions" / "03c_rent_bike.py",
    "open_ticket": L03C / "solutions" / "03c_open_ticket.py",
}


def _load(tmp_path: Path, name: str, code: str) -> Any:
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    return runpy.run_path(str(path))[name]


def test_s2_the_01b_colour_solution_passes_and_the_unvalidating_one_fails(tmp_path):
    solution = runpy.run_path(str(L01B / "solutions" / "01b_colour_tool.py"))
    ok = lesson01b_checkpoints.run_checkpoint(
        lesson01b_checkpoints.check_colour_tool(solution["favourite_colour"])
    )
    assert ok.passed, ok
    old = _load(tmp_path, "favourite_colour", OLD_COLOUR)
    failed = lesson01b_checkpoints.run_checkpoint(lesson01b_checkpoints.check_colour_tool(old))
    assert not failed.passed
    assert "'Your favourite colour is purple.'" in failed.message
    assert "(ELIC-14 SHOULD)" in failed.message and "(MRTR-E4 SHOULD)" in failed.message


@pytest.mark.parametrize("name", sorted(OLD_03))
def test_s2_the_old_unvalidating_03_solutions_fail_their_checkpoints_naming_elic14(
    tmp_path, name: str
):
    check = getattr(CHECKPOINTS[name], f"check_{name}")
    result = run(check(_load(tmp_path, name, OLD_03[name])))
    assert not result.passed
    assert "does not fit the form" in result.message
    assert "(ELIC-14 SHOULD)" in result.message and "MRTR-E4 SHOULD" in result.message


@pytest.mark.parametrize("name", ["pick_seat", "rent_bike", "open_ticket"])
def test_s2_the_03_solutions_ask_again_for_an_accept_with_no_content(name: str):
    """An ``accept`` with no content never gives -32603: it is asked again."""
    handler = runpy.run_path(str(SOLUTIONS[name]))[name]
    args = {
        "pick_seat": {"flight": "LX 1"},
        "rent_bike": {"shop": "V"},
        "open_ticket": {"title": "T"},
    }
    key = {"pick_seat": "seat", "rent_bike": "day", "open_ticket": "severity"}[name]
    tracker = lesson03c_lab.Tracker()
    server = McpServer("t", state_keys=KeyRing.generate())

    def tool(ctx: Any) -> Any:
        return handler(ctx, tracker) if name == "open_ticket" else handler(ctx)

    server.tool(name, description="d")(tool)

    async def go() -> Any:
        caller = RawCaller.for_app(create_app(server))
        try:
            first = await caller.call_tool(name, args[name])
            return await caller.call_tool(
                name,
                args[name],
                request_state=first.request_state,
                input_responses={key: {"action": "accept"}},
            )
        finally:
            await caller.aclose()

    reply = run(go())
    assert reply.kind == "input_required", reply
    assert key in reply.result["inputRequests"]


def test_s2_lesson_01b_no_longer_calls_the_unvalidating_solution_one_level_down():
    text = prose("01b")
    assert "one level down" not in text
    assert "does not fit the form" in text and "(ELIC-14 SHOULD, MRTR-E4 SHOULD)" in text


# -- S3: the last round can arrive twice -----------------------------------------------------------


def test_s3_the_ported_plan_trip_books_once_when_the_final_retry_arrives_twice():
    wrong = run(lesson03_lab.run_trap("plan_trip_books_every_retry", final_twice=True))
    right = run(lesson03_lab.run_trap("plan_trip", final_twice=True))
    assert len(wrong.desk.reservations) == 2
    assert len(right.desk.reservations) == 1
    assert right.repeat == right.outcome  # the repeat gets the same reservation back


def test_s3_lesson_03_has_the_final_retry_trap_with_its_run():
    all_cells = cells("03")
    trap = next(
        i
        for i, c in enumerate(all_cells)
        if "### Trap 4: the final retry arrives twice" in source(c)
    )
    run_cell = all_cells[trap + 1]
    assert "final_twice=True" in source(run_cell)
    shown = outputs(run_cell)
    assert "2 reservation(s)" in shown and "1 reservation(s)" in shown
    assert "HTTP-26 MUST" in source(all_cells[trap])
    assert "**and once**" in prose("03")


OPEN_TICKET_TWICE = """
from lesson03c_lab import SEVERITY_FORM

def open_ticket(ctx, tracker):
    title = ctx.arguments["title"]
    severity = ctx.form("severity", f"How bad is {title!r}?", SEVERITY_FORM)
    if severity.needs_asking:
        return severity.ask()
    if not severity.accepted:
        return "No ticket filed."
    return f"Filed {tracker.file(title, severity.content['severity'])}: {title}."
"""


def test_s3_a_validating_open_ticket_that_files_every_final_retry_fails_naming_http26(tmp_path):
    result = run(
        lesson03c_checkpoints.check_open_ticket(_load(tmp_path, "open_ticket", OPEN_TICKET_TWICE))
    )
    assert not result.passed
    assert "filed a second ticket" in result.message
    assert "(HTTP-26 MUST" in result.message and "(MIG-3)" in result.message


# -- M1: not asking again after a decline is the kit's choice --------------------------------------


def test_m1_decline_not_asked_again_is_labelled_kit_with_mrtr_s8():
    text = prose("03")
    assert "not with the same question again" not in text
    assert "(MRTR-S8 MAY)" in text and "the kit's choice (KIT)" in text
    for meaning in lesson01b_checkpoints.REFUSALS.values():
        assert "(KIT)" in meaning and "MRTR-S8 MAY" in meaning
    assert "(ELIC-6):" not in " ".join(lesson01b_checkpoints.REFUSALS.values())
    assert "the kit's choice (KIT)" in " ".join(prose("01b").split())
    assert "(KIT)" in " ".join((weather.__doc__ or "").split())


# -- M2: gate capabilities where you ask -----------------------------------------------------------


def test_m2_a_final_retry_that_declares_no_capabilities_is_served_not_refused():
    """The port used to answer -32021 to a round-3 retry that carries the room answer and
    declares nothing: CAP-2 applies where the handler would ask."""
    desk = HotelDesk()
    app = create_app(trip_planner.build_server(desk))

    async def go() -> Any:
        caller = RawCaller.for_app(app)
        try:
            r1 = await caller.call_tool("plan_trip", {"city": "Lima"})
            dates = {"dates": {"action": "accept", "content": {"start": "2026-09-01", "nights": 2}}}
            r2 = await caller.call_tool(
                "plan_trip", {"city": "Lima"}, request_state=r1.request_state, input_responses=dates
            )
            caller._factory.capabilities = {}  # this retry declares no capabilities
            return await caller.call_tool(
                "plan_trip",
                {"city": "Lima"},
                request_state=r2.request_state,
                input_responses={"room": {"action": "accept", "content": {"room": "single"}}},
            )
        finally:
            await caller.aclose()

    final = run(go())
    assert final.ok and final.text.startswith("Reserved a single room in Lima"), final


def test_m2_lesson_03_gates_where_it_asks():
    text = prose("03")
    assert "Before anything else, on every round, it calls `require_forms(ctx)`" not in text
    assert "Just before it asks, it calls `require_forms(ctx)`" in text
    assert "Check where the handler asks" in text


# -- M6, M7, M8, M10 -------------------------------------------------------------------------------


def test_m6_url_mode_https_is_a_should_checking_the_user_a_must():
    text = prose("01b")
    assert "(ELIC-12), over HTTPS" not in text
    assert "check who opens it** (ELIC-12 MUST)" in text
    assert "HTTPS outside development (ELIC-12 SHOULD)" in text


DIGEST = re.compile(r"digest|\(§\s?\d")


def test_m7_no_reference_to_a_digest_section_a_learner_cannot_open():
    texts = {lesson: prose(lesson) for lesson in NOTEBOOKS}
    for path in [
        L01B / "lesson01b_quiz.py",
        L03 / "lesson03_quiz.py",
        L03C / "lesson03c_quiz.py",
        L04 / "lesson04_quiz.py",
        COURSE / "examples" / "weather.py",
        COURSE / "examples" / "travel_guide.py",
        COURSE / "examples" / "booking.py",
        COURSE / "examples" / "deprecated_inputs.py",
        COURSE / "examples" / "trip_planner.py",
        *sorted((COURSE / "sdk_port").glob("*.py")),
    ]:
        texts[path.name] = path.read_text()
    for name, text in texts.items():
        assert not DIGEST.search(text), (name, DIGEST.search(text))
    for lesson in NOTEBOOKS:  # the code cells shown (e.g. the SDK port's source) too
        shown = "".join(outputs(c) for c in cells(lesson))
        assert not DIGEST.search(shown), lesson


def test_m8_the_ledger_and_rotation_are_sent_to_02b():
    for lesson in NOTEBOOKS:
        text = prose(lesson)
        assert "(lesson 02)" not in text and "(lesson 02," not in text, lesson
    assert "02b-rotation-and-single-use.ipynb" in prose("01b")
    assert prose("03").count("02b-rotation-and-single-use.ipynb") >= 2
    assert prose("04").count("02b-rotation-and-single-use.ipynb") >= 2
    assert "hmac1" not in lesson01b_quiz.FORGOTTEN_STATE_RETRY
    assert "aead1" in lesson01b_quiz.FORGOTTEN_STATE_RETRY


def test_m10_lesson_03_names_mig2s_server_store_option():
    assert "or in a server-side store keyed from it" in prose("03")


# -- decline is never called "cancelled" -----------------------------------------------------------


def test_decline_is_not_answered_with_cancelled_by_any_port():
    assert "cancel" not in trip_planner.ended_text("Lima", "decline").lower()
    assert "cancel" not in booking.ended_text("Luigi's", "decline").lower()
    assert trip_planner.ended_text("Lima", "cancel") != trip_planner.ended_text("Lima", "decline")
    assert booking.ended_text("L", "cancel") != booking.ended_text("L", "decline")
    for path in [*(COURSE / "examples").glob("*.py"), *(COURSE / "sdk_port").glob("*.py")]:
        assert "cancelled. Nothing was" not in path.read_text(), path.name


# -- the newcomer's broken and confusing moments ---------------------------------------------------


@pytest.mark.parametrize(
    ("start", "click"),
    [
        ('start_prompt(client, "plan_trip"', 'trip.form.fill(pace="packed", days=2).accept()'),
        ('start_tool_call(client, "summarize_forecast"', "summary.sampling.approve()"),
    ],
    ids=["section_3_form", "section_7_sampling"],
)
def test_broken_moment_1_clicking_yourself_then_running_the_next_cell_raises_nothing(start, click):
    """01b §3 and §7: the learner answers the form (or the sampling panel) by hand, as the text
    allows, then runs the next cell as written: it used to raise a 20-line RuntimeError (the
    call had moved on). Now it answers only a call still waiting, and shows the result."""
    code = [source(c) for c in cells("01b") if c["cell_type"] == "code"]
    setup = code[0]  # the Setup cell: imports and the client
    [begin] = [c for c in code if start in c]
    after = code[code.index(begin) + 1]
    printed: list[str] = []
    namespace: dict[str, Any] = {"print": lambda *a, **_: printed.append(" ".join(map(str, a)))}
    cwd = Path.cwd()

    async def learner() -> None:
        for cell in (setup, begin):
            await run_cell_in_loop(cell, namespace)
        name = begin.split(" = ", 1)[0]
        await run_cell_in_loop(f"{click}\nawait {name}.settled()", namespace)  # the click, by hand
        printed.clear()
        await run_cell_in_loop(after, namespace)  # the next cell, as written
        await namespace["client"].aclose()

    kit_logger = logging.getLogger("mrtr_kit")
    level = kit_logger.level  # the Setup cell quietens it: give it back to the other tests
    os.chdir(LESSONS / "01b-more-ways-to-ask-OPTIONAL")
    try:
        asyncio.run(learner())
    finally:
        os.chdir(cwd)
        kit_logger.setLevel(level)
    assert printed and printed[-1].strip(), printed


def test_confusing_require_forms_that_returns_the_error_is_told_to_raise_it():
    def returns(ctx: Any) -> Any:
        if not ctx.capabilities.supports_elicitation("form"):
            return errors.missing_capability({"elicitation": {"form": {}}})
        return None

    result = run(lesson03_checkpoints.check_require_forms(returns))
    assert not result.passed
    assert "your gate returned the error" in result.message
    assert "`raise errors.missing_capability(...)`, not `return`" in result.message


# -- the diagnostic question: decline vs cancel vs re-ask ------------------------------------------


def test_quiz_01b5_asks_decline_vs_cancel_vs_reask_with_a_misconception_per_distractor():
    quiz = lesson01b_quiz.LESSON_01B_5
    question = next(q for q in quiz.questions if '"action": "decline"' in q.ask)
    right = next(o for o in question.options if o.right)
    assert "complete result" in right.text and "(KIT)" in right.why
    wrong = [o for o in question.options if not o.right]
    assert len(wrong) == 3
    joined = " ".join(o.text + " " + o.why for o in wrong)
    assert "input_required" in joined  # asking again
    assert "cancelled" in joined  # calling a decline a cancel
    assert "isError" in joined  # treating a no as a failure
    for option in wrong:
        assert re.search(r"\b(ELIC|MRTR)-[A-Z]?\d", option.why), option
