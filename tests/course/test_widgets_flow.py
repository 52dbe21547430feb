"""``CallFlow``, the non-blocking driver, against the lesson servers served in this process.

Each test presses buttons from code (``button.click()``) and then awaits ``flow.settled()``,
exactly as notebook 01 does under nbval.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from mrtr_course.examples import lessons
from mrtr_course.widgets.flow import (
    AnsweredByWidgets,
    start_prompt,
    start_resource,
    start_tool_call,
    widget_client,
)
from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.context import elicit_form
from mrtr_kit.server.http import create_app


def in_loop(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test in a fresh event loop, like a kernel running a cell."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def lesson_client(**caps):
    return widget_client(create_app(lessons.build_server()), **caps)


def sent_params(flow):
    return [record.request["params"] for record in flow.records]


@in_loop
async def test_weather_form_problem_then_accept_completes_in_two_rounds():
    async with lesson_client() as client:
        flow = await start_tool_call(client, "get_weather", {"city": "Lisbon"})
        assert flow.status == "input_required" and flow.rounds == 1
        assert "the server needs input 'login'" in flow.status_message
        flow.form.fill(login="al").accept()
        assert await flow.settled() == "input_required"
        assert len(flow.records) == 1  # nothing was sent for the invalid answer
        flow.form.fill(login="grace").accept()
        assert flow.status == "sending"  # the click returned at once; the retry is a task
        assert await flow.settled() == "complete"
        assert flow.text.startswith("Hello grace! Weather now in Lisbon:")
        assert flow.rounds == 2 and len(flow.records) == 2
        assert "Hello grace!" in flow._result.value
        assert flow._trace_html.value == ""  # the closed trace is not rendered
        flow._trace.selected_index = 0  # a person opens "Wire trace of this call"
        assert "call 1 · round 2" in flow._trace_html.value
        assert flow.describe().splitlines()[-1].startswith("result: Hello grace!")


@in_loop
async def test_decline_and_cancel_are_answers_and_each_ends_the_call_without_a_new_question():
    """ELIC-6: decline gets the alternative (the public forecast), cancel a "dismissed, ask
    again later"; MRTR-C8: each refusal is still sent as an answer, in a retry."""
    async with lesson_client() as client:
        declined = await start_tool_call(client, "get_weather", {"city": "Oslo"})
        declined._trace.selected_index = 0  # the trace is open: every round refreshes it
        assert "call 1 · round 1" in declined._trace_html.value
        declined.form.decline()
        assert await declined.settled() == "complete"
        assert "call 1 · round 2" in declined._trace_html.value
        assert declined.text.startswith("You chose not to sign in, so no personal forecast")
        cancelled = await start_tool_call(client, "get_weather", {"city": "Oslo"})
        cancelled.form.cancel()
        assert await cancelled.settled() == "complete"
        assert cancelled.text.startswith("No forecast for Oslo: the sign-in was dismissed.")
        answers = [p.get("inputResponses") for f in (declined, cancelled) for p in sent_params(f)]
        assert answers == [
            None,
            {"login": {"action": "decline"}},
            None,
            {"login": {"action": "cancel"}},
        ]


@in_loop
async def test_three_rounds_echo_each_request_state_exactly_under_new_ids():
    async with lesson_client() as client:
        flow = await start_tool_call(client, "book_table", {"restaurant": "Luigi's"})
        flow.form.fill(party=4, when="2026-09-01").accept()
        await flow.settled()
        flow.form.accept()
        assert await flow.settled() == "complete"
        assert flow.text.startswith("Booked Luigi's for 4 on 2026-09-01")
        records = flow.records
        assert [r.round for r in records] == [1, 2, 3]
        ids = [r.request["id"] for r in records]
        assert len(set(ids)) == 3  # MRTR-C3: a new id every round
        for previous, retry in itertools.pairwise(records):
            # MRTR-C2: exactly the state the previous round returned.
            state = previous.response["result"]["requestState"]
            assert retry.request["params"]["requestState"] == state
            assert retry.request["params"]["arguments"] == {"restaurant": "Luigi's"}


@in_loop
async def test_prompt_and_resource_flows_and_what_may_be_cached():
    async with lesson_client() as client:
        trip = await start_prompt(client, "plan_trip", {"city": "Oslo"})
        trip.form.fill(pace="relaxed", days=5, interests=["museums"]).accept()
        assert await trip.settled() == "complete"
        assert trip.text.startswith("Plan a 5-day, relaxed trip to Oslo")
        forecast = await start_resource(client, "weather://forecast/Lima")
        forecast.form.fill(units="fahrenheit").accept()
        assert await forecast.settled() == "complete"
        assert forecast.text.startswith("Day 1: Lima:") and "°F" in forecast.text
        # MRTR-C9: neither the input_required result nor the retry's result is cacheable.
        assert [r.cacheable for r in forecast.records] == [False, False]


@in_loop
async def test_sampling_approved_completes_and_refused_sends_nothing():
    async with lesson_client(sampling=True) as client:
        flow = await start_tool_call(client, "summarize_forecast", {"city": "Paris"})
        flow.sampling.approve()
        assert await flow.settled() == "complete"
        assert "written by kit-stand-in (not an LLM)" in flow.text
        refused = await start_tool_call(client, "summarize_forecast", {"city": "Paris"})
        refused.sampling.refuse()
        # MRTR-C8: no answer, no retry: nothing is on its way (the flow is idle already, so
        # settled() returns without waiting), and nothing more was sent.
        assert refused._idle.is_set()
        assert await refused.settled() == "stopped"
        assert len(refused.records) == 1
        assert "nothing was sent" in refused.status_message


@in_loop
async def test_roots_panel_answers_roots_list():
    async with lesson_client(roots=True) as client:
        roots = [{"uri": "file:///home/ann/trips", "name": "Trips"}]
        flow = await start_tool_call(client, "suggest_save_path", {"filename": "a.md"}, roots=roots)
        flow.roots_panel.select("file:///home/ann/trips").share()
        assert await flow.settled() == "complete"
        assert flow.text == "Save it as file:///home/ann/trips/a.md (Trips)."


@in_loop
async def test_a_missing_capability_fails_the_flow_with_the_servers_error():
    async with lesson_client(form=False) as client:
        flow = await start_tool_call(client, "get_weather", {"city": "Lima"})
        assert flow.status == "failed"
        assert "-32021" in flow.error  # CAP-2: the server refuses rather than asking
        with pytest.raises(RuntimeError, match="shows nothing"):
            flow.form  # noqa: B018


@in_loop
async def test_the_automatic_loop_refuses_on_a_widget_client():
    async with lesson_client() as client:
        with pytest.raises(AnsweredByWidgets, match="start_tool_call"):
            await client.call_tool("get_weather", {"city": "Lima"})


@in_loop
async def test_every_input_request_is_answered_before_the_retry():
    server = McpServer("two-questions", state_keys=KeyRing.generate())

    @server.tool(description="Asks two things in one round.")
    def greet(ctx):
        first, last = ctx.elicitation("first"), ctx.elicitation("last")
        if first is None or last is None:
            return ctx.input_required(
                {
                    "first": elicit_form("First name?", NAME_FORM),
                    "last": elicit_form("Last?", NAME_FORM),
                }
            )
        return f"Hello {first.content['name']} {last.content['name']}!"

    async with widget_client(create_app(server)) as client:
        flow = await start_tool_call(client, "greet")
        assert "(1 of 2)" in flow.status_message
        flow.form.fill(name="Ada").accept()
        assert flow.status == "input_required" and "(2 of 2)" in flow.status_message
        assert len(flow.records) == 1  # MRTR-C1: no retry until every key has its answer
        flow.form.fill(name="Lovelace").accept()
        assert await flow.settled() == "complete"
        assert flow.text == "Hello Ada Lovelace!"
        assert set(flow.records[1].request["params"]["inputResponses"]) == {"first", "last"}


@in_loop
async def test_a_state_only_result_is_retried_without_asking_anyone():
    server = McpServer("checkpointing", state_keys=KeyRing.generate())

    @server.tool(description="Works in two steps.")
    def slow(ctx):
        if ctx.state is None:
            return ctx.input_required(state={"step": 1})  # "call me again"
        return f"done after step {ctx.state['step']}"

    async with widget_client(create_app(server)) as client:
        flow = await start_tool_call(client, "slow")
        assert flow.status == "complete" and flow.text == "done after step 1"
        assert "inputResponses" not in flow.records[1].request["params"]  # MRTR-C1: nothing asked


def nested_form_app():
    """A hand-made server that sends a nested form. The kit's own server refuses to send one
    (ELIC-5, KIT), so the client's check is tested against an app that answers every POST with
    the same input_required result."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    schema = {"type": "object", "properties": {"home": {"type": "object"}}}
    ask = {
        "method": "elicitation/create",
        "params": {"message": "Address?", "requestedSchema": schema},
    }

    async def mcp(request: Request) -> JSONResponse:
        body = await request.json()
        result = {"resultType": "input_required", "inputRequests": {"address": ask}}
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])


@in_loop
async def test_a_form_outside_the_subset_stops_the_flow_with_a_clear_message():
    async with widget_client(nested_form_app()) as client:
        flow = await start_tool_call(client, "nested")
        assert flow.status == "failed"
        assert "outside the form subset" in flow.error and "home" in flow.error


@in_loop
async def test_settled_gives_up_after_its_timeout():
    server = McpServer("stuck", state_keys=KeyRing.generate())
    never = asyncio.Event()

    @server.tool(description="Hangs on the retry.")
    async def hang(ctx):
        if ctx.elicitation("name") is None:
            return ctx.input_required({"name": elicit_form("Name?", NAME_FORM)})
        await never.wait()
        return "unreachable"

    async with widget_client(create_app(server)) as client:
        flow = await start_tool_call(client, "hang")
        flow.form.fill(name="Ada").accept()
        with pytest.raises(TimeoutError, match=r"still sending after 0\.2 s"):
            await flow.settled(timeout=0.2)
        for task in list(flow._tasks):
            task.cancel()


@in_loop
async def test_a_click_handled_on_another_thread_runs_the_round_on_the_flows_loop():
    async with lesson_client() as client:
        flow = await start_tool_call(client, "get_weather", {"city": "Lima"})
        await asyncio.to_thread(flow.form.fill(login="ada").accept)
        assert await flow.settled() == "complete"
        assert flow.text.startswith("Hello ada!")


@in_loop
async def test_a_flow_starts_once():
    async with lesson_client() as client:
        flow = await start_tool_call(client, "get_weather", {"city": "Lima"})
        with pytest.raises(RuntimeError, match="started already"):
            await flow.start()


@in_loop
async def test_a_cell_written_for_round_1_after_a_hand_answer_says_what_happened_and_what_to_do():
    """Issue 19 (browser): a learner answers 01 §4's form by hand, then runs the next 'from
    code' cell. Not a raw KeyError or 'a ElicitationForm': the call moved on, re-run its cell."""
    async with lesson_client() as client:
        table = await start_tool_call(client, "book_table", {"restaurant": "Luigi's"})
        table.form.fill(party=2, when="2026-09-02").accept()  # the learner's click
        assert await table.settled() == "input_required"
        with pytest.raises(KeyError) as info:  # the cell written for round 1
            table.form.fill(party=4, when="2026-09-01")
        said = str(info.value)
        assert said.startswith("no field 'party' in this form: it asks 'confirm'")
        assert "answered an earlier form of this call by hand" in said
        assert "re-run the cell that started the call" in said
        table.form.accept()  # the learner confirms by hand too
        assert await table.settled() == "complete"
        with pytest.raises(RuntimeError) as done:
            table.form  # noqa: B018
        said = str(done.value)
        assert "not an ElicitationForm" in said and "a ElicitationForm" not in said
        assert "answered already" in said and "re-run the cell that started the call" in said


@in_loop
async def test_a_decline_shows_sent_decline_on_the_locked_form():
    """Issue 19 (cosmetic): the declined form stays in view, saying what was sent."""
    async with lesson_client() as client:
        flow = await start_tool_call(client, "get_weather", {"city": "Lima"})
        form = flow.form
        form.decline()
        assert await flow.settled() == "complete"
        assert "Sent: decline" in form.status.value
        assert "\nSent: login: decline\nresult: You chose not to sign in" in flow.describe()
