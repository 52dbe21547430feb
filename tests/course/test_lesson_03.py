"""Lesson 03 (migrating from server-initiated requests): the notebook's shape, its exercises and
checkpoints, and the helpers its cells call. nbval runs the notebook itself."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import itertools
import json
import re
import runpy
from pathlib import Path
from typing import Any

import lesson03_checkpoints as checkpoints
import lesson03_lab as lesson
import pytest

from mrtr_course.examples.trip_planner import make_plan_trip, make_plan_trip_legacy
from mrtr_kit.protocol.errors import McpError
from tests.lesson_files import LESSONS, assert_port_diagnosis, exercise_stubs

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = LESSONS / "03-migrating-from-server-requests" / "03-migrating-from-server-requests.ipynb"
SOLUTIONS = NOTEBOOK.parent / "solutions"

CHECKPOINTS = {
    "require_forms": (checkpoints.check_require_forms, "03_require_forms.py"),
    "pick_seat": (checkpoints.check_pick_seat, "03_pick_seat.py"),
    "answer_to": (checkpoints.check_sdk_answer_to, "03_answer_to.py"),  # optional, section 5
}


def cells() -> list[dict[str, Any]]:
    return json.loads(NOTEBOOK.read_text())["cells"]


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def tags(cell: dict[str, Any]) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


# -- exercises -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_each_solution_passes_its_checkpoint(name: str):
    check, filename = CHECKPOINTS[name]
    handler = runpy.run_path(str(SOLUTIONS / filename))[name]
    result = asyncio.run(check(handler))
    assert result.passed, result


def stubs() -> dict[str, Any]:
    return exercise_stubs(cells(), CHECKPOINTS)


SOLUTION = (
    "Solution: delete the `# ` in front of `%load` in the exercise cell and run it: the cell is "
    "replaced by the solution. Run it once more, then run the checkpoint below."
)
LEGACY = {"pick_seat": lesson.pick_seat_legacy}


def test_every_exercise_has_one_layout_task_stub_hint_and_solution_then_checkpoint():
    """notes/LESSONS.md: one layout in every notebook (issue 9, item 10)."""
    all_cells = cells()
    starts = [i for i, c in enumerate(all_cells) if source(c).startswith("### Exercise ")]
    # Exercise 3 is the optional SDK section's; the practice ports that were 3 and 4 are 03c's.
    assert len(starts) == 3
    names = ("require_forms", "pick_seat", "answer_to")
    for n, (i, name) in enumerate(zip(starts, names, strict=True), 1):
        check, filename = CHECKPOINTS[name]
        task, stub_cell, hint, checkpoint = all_cells[i : i + 4]
        assert re.match(rf"### Exercise {n} · \S.* \(\d+ min\)\n", source(task))
        if name in LEGACY:  # the legacy tool is shown in the task as text: the code that runs
            code = inspect.getsource(LEGACY[name]).rstrip()
            assert f"```python\n{code}\n```" in source(task), name
        assert stub_cell["cell_type"] == "code" and "exercise-stub" in tags(stub_cell)
        assert source(stub_cell).splitlines()[0] == f"# %load solutions/{filename}"
        assert (SOLUTIONS / filename).exists()
        assert source(hint).startswith("<details><summary>Hint</summary>")
        assert source(hint).rstrip().endswith(SOLUTION)
        assert checkpoint["cell_type"] == "code"
        assert source(checkpoint) == f"await {check.__name__}({name})"
    intro = next(source(c) for c in all_cells if source(c).startswith("## 4. Exercise"))
    assert SOLUTION in " ".join(intro.split())
    practice = "../03c-porting-practice-OPTIONAL/03c-porting-practice-OPTIONAL.ipynb"
    assert f"]({practice})" in intro and (NOTEBOOK.parent / practice).exists()


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_the_stubs_run_and_do_not_pass(name: str):
    check, _ = CHECKPOINTS[name]
    result = asyncio.run(check(stubs()[name]))
    assert not result.passed
    assert result.status in ("not done", "not yet")


def wrong_seat(ctx: Any) -> Any:
    answer = ctx.elicitation("choice")  # the wrong key
    if answer is None:
        return ctx.input_required({"choice": lesson.ask_seat(ctx.arguments["flight"])})
    return "whatever"


def seat_without_decline(ctx: Any) -> Any:
    answer = ctx.elicitation("seat")
    if answer is None:
        return ctx.input_required({"seat": lesson.ask_seat(ctx.arguments["flight"])})
    return lesson.seat_text(ctx.arguments["flight"], (answer.content or {}).get("seat", "aisle"))


def seat_reading_content_first(ctx: Any) -> Any:
    """A plausible port: reads the content before checking the action (issue 9, item 16)."""
    flight = ctx.arguments["flight"]
    answer = ctx.elicitation("seat")
    if answer is None:
        return ctx.input_required({"seat": lesson.ask_seat(flight)})
    seat = answer.content["seat"]  # TypeError on a decline: it carries no content
    if answer.action != "accept":
        return f"No seat chosen on {flight}."
    return lesson.seat_text(flight, seat)


@pytest.mark.parametrize(
    ("check", "handler", "complaint"),
    [
        (checkpoints.check_pick_seat, wrong_seat, "not ['seat']"),
        (checkpoints.check_pick_seat, seat_without_decline, "answer 'decline'"),
        (checkpoints.check_pick_seat, lambda ctx: 1 / 0, "raised ZeroDivisionError"),
        (checkpoints.check_pick_seat, seat_reading_content_first, "with a declined answer"),
        (checkpoints.check_pick_seat, seat_reading_content_first, "raised TypeError"),
    ],
)
def test_checkpoints_say_what_is_wrong(check: Any, handler: Any, complaint: str):
    result = asyncio.run(check(handler))
    assert not result.passed
    assert complaint in result.message, result


# -- the notebook's shape (docs/architecture.md §4) ------------------------------------------------


def test_the_notebook_opens_with_goals_needs_time_spec_links_and_a_sequence_diagram():
    """The header of every notebook (notes/LESSONS.md): the same items in the same order."""
    first = source(cells()[0])
    assert first.startswith("# 03 · Migrating from server-initiated requests")
    parts = (
        "**What you will learn**",
        "**What you need**: notebook 01",
        "**How long**: About ",
        "minutes to read and try, plus about ",
        "**Teaching it**: about ",
        "**Spec**",
        "(https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)",
        "(https://modelcontextprotocol.io/seps/2322-MRTR)",
        "Rule IDs like `MRTR-S4a` are explained in [docs/spec-map.md](../../docs/spec-map.md)",
        "```mermaid\nsequenceDiagram",
    )
    at = [first.find(part) for part in parts]
    assert -1 not in at, [p for p, i in zip(parts, at, strict=True) if i < 0]
    assert at == sorted(at)


def test_the_opening_diagram_names_its_instances_alike_and_draws_every_requeststate():
    """Issue 9, item 7: "waits in A" over boxes named A and B; the port mints a state in round 1."""
    diagram = source(cells()[0]).split("```mermaid", 1)[1].split("```", 1)[0]
    assert "participant A as Instance A" in diagram and "participant B as Instance B" in diagram
    assert "(the tool now waits in A)" in diagram
    mrtr = diagram.split("2026-07-28 (MRTR)", 1)[1]
    assert "A-->>C: input_required: dates + requestState" in mrtr
    assert mrtr.count("+ requestState") == 3  # round 1's reply, and both retries


def test_the_round_one_reply_of_the_port_does_carry_a_request_state():
    """What the diagram draws is what the port does."""
    from mrtr_course.examples.trip_planner import build_server, traveller
    from mrtr_kit.client import McpClient
    from mrtr_kit.server.http import create_app

    async def first_round() -> Any:
        async with McpClient.for_app(create_app(build_server()), elicitation=traveller()) as c:
            return (await c.begin_tool_call("plan_trip", {"city": "Lisbon"})).input_required

    needs = asyncio.run(first_round())
    assert list(needs.input_requests) == ["dates"] and needs.request_state


def test_the_notebook_closes_with_key_points_caveats_the_cheatsheet_and_a_link():
    last = source(cells()[-1])
    assert last.index("## Key points") < last.index("## In practice") < last.index("**Next**")
    assert "[docs/cheatsheet.md](../../docs/cheatsheet.md)" in last
    target = last.split("**Next**", 1)[1].split(".ipynb)", 1)[0].rsplit("(", 1)[1] + ".ipynb"
    assert (NOTEBOOK.parent / target).exists()
    # 03b follows 03; the optional practice lesson 03c (03's former exercises 3 and 4) is named
    assert target == "../03b-serving-both-eras/03b-serving-both-eras.ipynb", target
    assert "](../03c-porting-practice-OPTIONAL/03c-porting-practice-OPTIONAL.ipynb)" in last


def test_trap_3_asks_for_stable_keys_not_for_fixed_messages():
    """Issue 9, item 5: notebook 01's weather tool changes its message after a decline."""
    text = "\n".join(source(c) for c in cells() if c["cell_type"] == "markdown")
    assert "Keys, messages and schemas must follow" not in text
    assert "The message may change" in text


def test_the_cells_that_fail_on_purpose_are_tagged_and_say_so():
    all_cells = cells()
    for index, cell in enumerate(all_cells):
        if cell["cell_type"] != "code":
            continue
        errors = [o for o in cell.get("outputs", []) if o["output_type"] == "error"]
        assert bool(errors) == ("raises-exception" in tags(cell)), source(cell)
        if errors:
            lead_in = " ".join(source(all_cells[index - 1]).split())
            assert "fails, on purpose" in lead_in


def test_every_code_cell_is_led_in_by_a_markdown_cell():
    all_cells = cells()
    for before, cell in itertools.pairwise(all_cells):
        if cell["cell_type"] == "code":
            assert before["cell_type"] == "markdown", source(cell)


def test_processes_started_in_the_notebook_are_stopped_in_it():
    text = "\n".join(source(c) for c in cells() if c["cell_type"] == "code")
    for fleet in ("legacy", "mrtr", "kit"):
        assert f"{fleet} = start_fleet(" in text and f"{fleet}.stop()" in text
    assert "start_sdk_servers" not in text  # the SDK's port runs in the kernel (its checkpoint)


# -- the helpers the cells call --------------------------------------------------------------------


def test_side_by_side_shows_both_handlers_as_text_and_escaped_html():
    view = lesson.side_by_side(make_plan_trip_legacy, make_plan_trip)
    text, page = repr(view), view._repr_html_()
    assert "await ctx.elicit(" in text and "ctx.form(" in text and "ask(ctx, " in text
    assert text.index("def make_plan_trip_legacy") < text.index("def make_plan_trip(")
    assert page.count("<pre") == 2 and "-&gt; Any" in page


@pytest.mark.parametrize(
    ("trap", "rounds", "outcome", "holds"),
    [
        ("plan_trip_hold_first", 3, "complete: Reserved", (3, 2)),
        ("plan_trip_forgetful", 10, "TooManyRounds", (0, 0)),
        ("plan_trip_counter_keys", 10, "TooManyRounds", (0, 0)),
        ("plan_trip", 3, "complete: Reserved", (0, 0)),
    ],
)
def test_each_trap_fails_the_way_the_lesson_says(
    trap: str, rounds: int, outcome: str, holds: tuple[int, int]
):
    run = asyncio.run(lesson.run_trap(trap))
    if outcome == "TooManyRounds":  # the cap is the kit's, and says so where a learner reads it
        assert run.outcome.endswith("MRTR-C7 (KIT)")
    assert len(run.asked) == rounds
    assert run.outcome.startswith(outcome)
    assert (run.desk.holds_placed, len(run.desk.holds)) == holds
    if trap == "plan_trip_forgetful":
        assert run.asked[:4] == [["dates"], ["room"], ["dates"], ["room"]]
    if trap == "plan_trip_counter_keys":
        assert len({key for keys in run.asked for key in keys}) == 10  # never the same question


def test_the_correct_port_reserves_once_and_a_decline_reserves_nothing():
    from mrtr_course.examples.trip_planner import HotelDesk, build_server, traveller
    from mrtr_kit.client import McpClient
    from mrtr_kit.server.http import create_app

    async def go(accept: bool) -> tuple[str, HotelDesk]:
        desk = HotelDesk()
        app = create_app(build_server(desk))
        async with McpClient.for_app(app, elicitation=traveller(accept=accept)) as client:
            result = await client.call_tool("plan_trip", {"city": "Rome"})
        return result["content"][0]["text"], desk

    text, desk = asyncio.run(go(accept=True))
    assert text == "Reserved a double room in Rome: 3 nights from 2026-09-01, 360 EUR."
    assert (desk.holds_placed, len(desk.reservations)) == (0, 1)
    text, desk = asyncio.run(go(accept=False))
    assert text == "You declined: no trip to Rome planned. Nothing was reserved."
    assert desk.reservations == []


# -- Exercise 1: the capability gate ---------------------------------------------------------------

FORMS = {"requiredCapabilities": {"elicitation": {"form": {}}}}


def gate_asks_anyway(ctx: Any) -> None:
    pass  # lets every request through: guided_walk asks a client that cannot answer


def gate_wrong_code(ctx: Any) -> None:
    if not ctx.capabilities.supports_elicitation("form"):
        raise McpError(-32602, "This tool needs forms", FORMS)


def gate_internal_error(ctx: Any) -> None:
    if not ctx.capabilities.supports_elicitation("form"):
        raise RuntimeError("no forms")  # the server answers -32603


def gate_without_data(ctx: Any) -> None:
    if not ctx.capabilities.supports_elicitation("form"):
        raise McpError(-32021, "This tool needs forms")


def gate_always(ctx: Any) -> None:
    raise McpError(-32021, "This tool needs forms", FORMS)


def gate_any_elicitation(ctx: Any) -> None:
    if ctx.capabilities.elicitation is None:  # a URL-only client slips through
        raise McpError(-32021, "This tool needs forms", FORMS)


SESSION: dict[str, Any] = {}


def gate_first_capabilities(ctx: Any) -> None:
    caps = SESSION.setdefault("caps", ctx.capabilities)  # the "initialize-time" capabilities
    if not caps.supports_elicitation("form"):
        raise McpError(-32021, "This tool needs forms", FORMS)


def gate_returns_the_error(ctx: Any) -> Any:
    if not ctx.capabilities.supports_elicitation("form"):
        return McpError(-32021, "This tool needs forms", FORMS)  # returned, not raised
    return None


@pytest.mark.parametrize(
    ("gate", "diagnosis"),
    [
        (gate_asks_anyway, "got through your gate, and guided_walk asked for the day"),
        (gate_returns_the_error, "your gate returned the error (McpError"),
        (gate_wrong_code, "your gate refused with -32602; a missing client capability is -32021"),
        (gate_internal_error, "The server answers that with -32603"),
        (gate_without_data, "must carry data.requiredCapabilities"),
        (gate_always, "round 1 declared form elicitation, and your gate refused it"),
        (gate_any_elicitation, "declares only URL-mode elicitation got through your gate"),
        (gate_first_capabilities, "it judged by capabilities an earlier request declared"),
    ],
)
def test_the_gate_checkpoint_diagnoses_each_wrong_gate(gate: Any, diagnosis: str):
    """CAP-1, CAP-2, CAP-4, ERR-1, MRTR-S7: each plausible wrong gate fails with its reason."""
    SESSION.clear()
    result = asyncio.run(checkpoints.check_require_forms(gate))
    assert not result.passed, result
    assert diagnosis in result.message, result


def test_the_gate_solution_passes_and_the_refusal_is_a_400_on_the_wire():
    solved = runpy.run_path(str(SOLUTIONS / "03_require_forms.py"))["require_forms"]
    result = asyncio.run(checkpoints.check_require_forms(solved))
    assert result.passed and "HTTP 400" in result.message, result
    wire = asyncio.run(lesson.without_forms())
    meta = wire.request["params"]["_meta"]
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert wire.status == 400
    assert wire.response["error"]["code"] == -32021
    assert wire.response["error"]["data"] == FORMS


def test_trap_5_is_now_the_capability_gate_exercise_with_the_wire_before_it():
    all_cells = cells()
    trap = next(i for i, c in enumerate(all_cells) if "### Trap 5: capabilities" in source(c))
    assert source(all_cells[trap + 1]).startswith("await lesson.without_forms(")
    assert "raises-exception" not in tags(all_cells[trap + 1])
    assert source(all_cells[trap + 2]).startswith("### Exercise 1 · The capability gate")
    for rule in ("CAP-1", "CAP-2", "CAP-4", "-32021", "requiredCapabilities", "400"):
        assert rule in source(all_cells[trap]), rule


# -- the section quizzes ---------------------------------------------------------------------------


def test_the_section_quizzes_follow_their_sections():
    codes = [source(c) for c in cells() if c["cell_type"] == "code"]
    texts = [source(c) for c in cells()]
    assert [c for c in codes if "show_quiz(" in c] == ['show_quiz("03.2")', 'show_quiz("03.3")']
    quiz_2 = texts.index('show_quiz("03.2")')
    quiz_3 = texts.index('show_quiz("03.3")')
    section_3 = next(i for i, t in enumerate(texts) if t.startswith("## 3."))
    section_4 = next(i for i, t in enumerate(texts) if t.startswith("## 4."))
    assert quiz_2 < section_3 < quiz_3 < section_4


def test_the_predict_the_output_answer_is_what_the_code_prints():
    """The right option of the predict question is computed, so it cannot drift."""
    from lesson03_quiz import PREDICT_CAPS

    from mrtr_course.quizzes import quiz

    question = next(q for q in quiz("03.3").questions if q.code == PREDICT_CAPS)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(PREDICT_CAPS, {})
    assert question.options[question.answer].text == printed.getvalue().strip()


def test_the_spot_the_bug_retry_really_asks_for_the_dates_again():
    """The quiz's buggy retry echoes round 1's state: the room answer is dropped (MRTR-E3)
    and the server asks for the dates again, as the right option's explanation says."""
    from mrtr_course.examples.trip_planner import build_server
    from mrtr_course.messages import meta

    server = build_server()
    forms = {"elicitation": {"form": {}}}
    params = {"name": "plan_trip", "arguments": {"city": "Lisbon"}}

    async def rounds() -> dict[str, Any]:
        async def send(n: int, **extra: Any) -> dict[str, Any]:
            request = {"jsonrpc": "2.0", "id": n, "method": "tools/call"}
            request["params"] = {"_meta": meta(forms), **params, **extra}
            return (await server.handle(request)).body["result"]

        first = await send(1)
        dates = {"action": "accept", "content": {"start": "2026-09-01", "nights": 3}}
        second = await send(2, inputResponses={"dates": dates}, requestState=first["requestState"])
        assert list(second["inputRequests"]) == ["room"]
        room = {"room": {"action": "accept", "content": {"room": "double"}}}
        return await send(3, inputResponses=room, requestState=first["requestState"])  # "S1"

    third = asyncio.run(rounds())
    assert third["resultType"] == "input_required"
    assert list(third["inputRequests"]) == ["dates"]


# -- errors 2, 3 and 6: sentences that must not come back ------------------------------------------


def prose() -> str:
    return " ".join(" ".join(source(c).split()) for c in cells() if c["cell_type"] == "markdown")


def test_decline_and_cancel_are_described_as_the_spec_means_them():
    """Error 2: decline is an explicit no, cancel a dismissal (ELIC-6); no re-ask as the model."""
    text = prose()
    assert "asks again after a decline" not in text
    assert "why it asks again" not in text
    assert 'A decline is the user\'s explicit "no" and a' in text
    assert "cancel a form dismissed without a choice (ELIC-6 note)" in text


def test_sticky_sessions_and_shared_stores_are_described_once_and_right():
    """Error 3: shared session ids do not help; sticky routing or a shared store that forwards
    the answer does; MRTR needs neither."""
    text = prose()
    assert "unless sessions are sticky or shared" not in text
    assert "Shared sessions do not fix it" not in text
    assert "even with shared sessions" not in text
    assert "a shared store that forwards answers to the waiting process" in text
    assert "Sticky sessions fix it, or a shared store that forwards the answer" in text


def test_the_kits_form_timeout_is_tagged_kit_not_elic_6():
    """Error 6: the 10-minute timeout is the kit's choice; ELIC-6 only defines cancel."""
    text = prose()
    assert not re.search(r"10 minutes \(ELIC-6\)", text)
    assert "10 minutes, the kit's choice (KIT)" in text


# -- Exercise 2: a port that uses answers unchecked (issue 31, S2; 03c tests the other ports) -----


def pick_seat_unchecked(ctx: Any) -> Any:
    flight = ctx.arguments["flight"]
    answer = ctx.elicitation("seat")
    if answer is None:
        return ctx.input_required({"seat": lesson.ask_seat(flight)})
    if answer.action != "accept":
        return f"No seat chosen on {flight}."
    return lesson.seat_text(flight, answer.content["seat"])  # "middle": KeyError, -32603


@pytest.mark.parametrize(
    ("name", "port", "diagnosis"),
    [
        ("pick_seat", pick_seat_unchecked, "with the seat 'middle' (not a choice) under 'seat'"),
    ],
)
def test_the_port_checkpoints_diagnose_unchecked_answers_and_a_second_side_effect(
    name: str, port: Any, diagnosis: str
):
    """ELIC-14, MRTR-E4: an answer that does not fit the form is asked again, never used; MIG-3,
    HTTP-26: the final retry sent twice files one ticket."""
    check, _ = CHECKPOINTS[name]
    assert_port_diagnosis(asyncio.run(check(port)), diagnosis)


# -- Exercise 3: which answers the SDK port reads (issue 31, item 1) -------------------------------


def answer_to_present(ctx: Any, state: dict[str, Any], key: str) -> Any:
    return (ctx.input_responses or {}).get(key)  # whatever came, asked or not


def answer_to_any_kind(ctx: Any, state: dict[str, Any], key: str) -> Any:
    if state.get("asked") != key:
        return None
    return (ctx.input_responses or {}).get(key)  # a roots reply passes as an answer


def answer_to_on_a_first_call(ctx: Any, state: dict[str, Any], key: str) -> Any:
    if state["asked"] != key:  # a first call's state is {}: KeyError
        return None
    return ctx.input_responses.get(key)


@pytest.mark.parametrize(
    ("wrong", "diagnosis"),
    [
        (answer_to_present, "no requestState got complete: Reserved"),
        (answer_to_present, "(MRTR-E3 SHOULD)"),
        (answer_to_any_kind, "with a roots reply (not a form's answer)"),
        (answer_to_any_kind, "a form's answer is an ElicitResult"),
        (answer_to_on_a_first_call, "answer_to() raised KeyError: 'asked'"),
    ],
)
def test_the_sdk_exercise_checkpoint_diagnoses_each_wrong_answer_to(wrong: Any, diagnosis: str):
    """The checkpoint sends early, stateless, wrong-kind and out-of-schema answers to the SDK port
    with the learner's ``answer_to`` in it (MRTR-E3 SHOULD; ELIC-14 SHOULD is the port's own)."""
    result = asyncio.run(checkpoints.check_sdk_answer_to(wrong))
    assert not result.passed, result
    assert diagnosis in result.message, result


def test_the_sdk_exercise_checkpoint_leaves_the_port_as_it_was():
    """The learner's function replaces the port's own only while the checkpoint runs."""
    from mrtr_course.sdk_port import trip_mrtr

    own = trip_mrtr.answer_to
    solved = runpy.run_path(str(SOLUTIONS / "03_answer_to.py"))["answer_to"]
    assert asyncio.run(checkpoints.check_sdk_answer_to(solved)).passed
    assert trip_mrtr.answer_to is own


def test_the_sdk_exercise_sits_in_the_optional_section_with_its_own_kit_instance():
    """Section 5 is optional: nothing after it needs it, and it starts and stops the one kit
    instance its SDK client calls (section 2's fleet is stopped before section 3)."""
    texts = [source(c) for c in cells()]
    section_5 = next(i for i, t in enumerate(texts) if t.startswith("## 5. "))
    assert texts[section_5].splitlines()[0].endswith("(optional)")
    exercise = texts.index("await check_sdk_answer_to(answer_to)")
    closing = next(i for i, t in enumerate(texts) if t.startswith("## Key points"))
    assert section_5 < exercise < closing
    fleet_stop = texts.index("mrtr.stop()\nmrtr")
    assert fleet_stop < next(i for i, t in enumerate(texts) if t.startswith("## 3."))
    start = texts.index('kit = start_fleet(1, prefix="kit")\nkit')
    assert section_5 < start < texts.index("kit.stop()\nkit") < closing
