"""Lesson 01b's checkpoints: the graders of its exercises 1 to 3.

* ``check_retry`` — exercise 1, the retry of an MRTR round built by hand;
* ``check_booking_form`` — exercise 2, a form's ``requestedSchema`` inside the form-mode subset;
* ``check_colour_tool`` — exercise 3, a tool that asks with a form.

Each returns a ``Checkpoint``: passed, not done (the stub still raises ``NotImplementedError``)
or not yet (with the first thing that is wrong). 01's own exercise, the round loop, is graded in
``../01-the-basic-flow/lesson01_checkpoints.py``.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Callable
from typing import Any

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.examples import booking, weather
from mrtr_course.messages import FORM_CAPS, meta
from mrtr_course.plain.trace_view import result_text
from mrtr_kit.forms import FormSpec, SchemaOutsideSubset
from mrtr_kit.protocol.constants import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from mrtr_kit.protocol.errors import McpError
from mrtr_kit.server import KeyRing, McpServer, RequestContext


class _NotYet(Exception):
    """One check failed: the message says what to fix."""


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise _NotYet(message)


def _run_learner(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except NotImplementedError:
        raise _NotDone(name) from None
    except _NotYet:
        raise
    except Exception as exc:
        raise _NotYet(f"{name}() raised {type(exc).__name__}: {exc}") from None


class _NotDone(Exception):
    pass


async def _grade(name: str, checks: Callable[[], Any]) -> Checkpoint:
    try:
        summary = checks()
        if inspect.isawaitable(summary):
            summary = await summary
    except _NotDone:
        return Checkpoint("not done", f"{name}() still raises NotImplementedError.")
    except _NotYet as exc:
        return Checkpoint("not yet", str(exc))
    return Checkpoint("passed", str(summary))


async def _handle(server: McpServer, message: dict[str, Any]) -> dict[str, Any]:
    reply = await server.handle(message)
    assert reply.body is not None
    return reply.body


# 01b, exercise 1: the retry by hand ---------------------------------------------------------------

RetryBuilder = Callable[[dict[str, Any], dict[str, Any], dict[str, Any], int], dict[str, Any]]


async def _check_one_retry(
    make_retry: RetryBuilder,
    server: McpServer,
    first: dict[str, Any],
    answers: dict[str, Any],
    new_id: int,
) -> dict[str, Any]:
    response = await _handle(server, first)
    result = response["result"]
    sent = copy.deepcopy(first)
    retry = _run_learner("make_retry", make_retry, sent, copy.deepcopy(result), answers, new_id)
    _expect(isinstance(retry, dict), f"make_retry() returned {type(retry).__name__}, not a dict")
    _expect(sent == first, "make_retry() changed the first request: build a new dict instead")
    params = retry.get("params")
    _expect(isinstance(params, dict), "the retry needs a params object")
    _expect(retry.get("jsonrpc") == "2.0", 'the retry needs "jsonrpc": "2.0"')
    _expect(retry.get("method") == first["method"], "the retry repeats the method (MRTR-C5)")
    _expect(
        retry.get("id") == new_id and new_id != first["id"],
        f"the retry's id must be the new id {new_id}, not {retry.get('id')!r} (MRTR-C3)",
    )
    for key in ("name", "arguments"):
        _expect(
            params.get(key) == first["params"].get(key),
            f"params.{key} must be exactly the first request's (MRTR-C5)",
        )
    m = params.get("_meta")
    _expect(
        isinstance(m, dict) and META_PROTOCOL_VERSION in m and META_CLIENT_CAPABILITIES in m,
        "every round carries _meta with protocolVersion and clientCapabilities (CORE-10)",
    )
    _expect(params.get("inputResponses") == answers, "params.inputResponses must hold the answers")
    if "requestState" in result:
        _expect(
            params.get("requestState") == result["requestState"],
            "echo requestState exactly as received (MRTR-C2)",
        )
    else:
        _expect(
            "requestState" not in params,
            "the result had no requestState, so the retry must not send one (MRTR-C2)",
        )
    reply = await _handle(server, retry)
    _expect("result" in reply, f"the server refused the retry: {reply.get('error')}")
    return reply["result"]


async def check_retry(make_retry: RetryBuilder) -> Checkpoint:
    """01b, exercise 1: ``make_retry(first_request, result, answers, new_id)`` builds the retry."""

    async def checks() -> str:
        server = McpServer("lesson-01-checkpoint", state_keys=KeyRing.generate())
        weather.register(server)
        booking.register(server)
        first = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "_meta": meta(FORM_CAPS),
                "name": "get_weather",
                "arguments": {"city": "Oslo"},
            },
        }
        login = {"login": {"action": "accept", "content": {"login": "ada"}}}
        done = await _check_one_retry(make_retry, server, first, login, 2)
        _expect(done.get("resultType") == "complete", "the weather retry should complete")
        first = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "_meta": meta(FORM_CAPS),
                "name": "book_table",
                "arguments": {"restaurant": "Luigi's"},
            },
        }
        details = {"details": {"action": "accept", "content": {"party": 4, "when": "2026-09-01"}}}
        nxt = await _check_one_retry(make_retry, server, first, details, 8)
        _expect(
            "confirm" in (nxt.get("inputRequests") or {}),
            "the booking retry should reach round 3 (the confirm question)",
        )
        # The kit's server sends a requestState with every input_required; another server
        # may send none (MRTR-S3 is a MAY). Such a result, built here, is only read: the
        # retry must then carry no requestState key at all (MRTR-C2).
        ask = {"message": "Log in", "requestedSchema": weather.LOGIN_FORM}
        asks = {"login": {"method": "elicitation/create", "params": ask}}
        stateless = {"resultType": "input_required", "inputRequests": asks}
        sent = copy.deepcopy(first)
        retry = _run_learner("make_retry", make_retry, sent, stateless, login, 9)
        _expect(
            isinstance(retry, dict), f"make_retry() returned {type(retry).__name__}, not a dict"
        )
        _expect(
            "requestState" not in (retry.get("params") or {}),
            "a result with no requestState: the retry must not send one (MRTR-C2)",
        )
        return (
            "new id, same method, name and arguments, fresh _meta, the answers, and "
            "requestState echoed exactly or left out. Both servers took your retries."
        )

    return await _grade("make_retry", checks)


# 01b, exercise 3: a tool that asks ----------------------------------------------------------------

COLOURS = ("red", "green", "blue")


# What each refusal means (ELIC-6 note), and what this exercise asks the tool to do with it:
# finish. The spec allows asking again (MRTR-S8 MAY, MRTR-E4 SHOULD); not doing so is the kit's
# choice here (KIT), so the message says so.
REFUSALS = {
    "decline": (
        "a decline is the user's explicit no (ELIC-6 note). This exercise asks you to respect "
        "it and finish with a complete result (say nothing was chosen, offer an alternative). "
        "Not asking again in this call is the kit's choice (KIT): the spec allows asking again "
        "(MRTR-S8 MAY), but it would ignore the user's answer"
    ),
    "cancel": (
        "a cancel means the form was dismissed without a choice (ELIC-6 note). This exercise "
        "asks you to finish with a complete result saying nothing was chosen and they can pick "
        "one later; not asking again in this call is the kit's choice (KIT), which the spec "
        "allows either way (MRTR-S8 MAY)"
    ),
}

# Answers that do not fit the colour form: the tool must ask again, saying why (ELIC-14 SHOULD:
# the server validates answers against its form; MRTR-E4 SHOULD: ask again, not fail).
UNFIT = {
    "the colour 'purple' (not one of the choices)": {
        "action": "accept",
        "content": {"colour": "purple"},
    },
    "the colour 42 (not a string)": {"action": "accept", "content": {"colour": 42}},
    "an accept with no content": {"action": "accept"},
}


def _outcome(result: dict[str, Any]) -> str:
    if result.get("resultType") == "input_required":
        return "asked again"
    if result.get("isError"):
        return "ended with isError"
    return f"returned resultType {result.get('resultType')!r}"


async def check_colour_tool(favourite_colour: Callable[[RequestContext], Any]) -> Checkpoint:
    """01b, exercise 3: a tool handler that asks for a colour with a form (key ``colour``)."""
    raised: list[Exception] = []

    async def handler(ctx: RequestContext) -> Any:
        # Keep the learner's exception for the report; the server would otherwise answer
        # -32603 and log a traceback into the notebook.
        try:
            outcome = favourite_colour(ctx)
            return await outcome if inspect.isawaitable(outcome) else outcome
        except McpError:
            raise
        except Exception as exc:
            raised.append(exc)
            return "(the handler raised)"

    server = McpServer("lesson-01-checkpoint", state_keys=KeyRing.generate())
    server.tool("favourite_colour", description="Asks for your favourite colour.")(handler)

    async def call(
        input_responses: dict[str, Any] | None = None, state: str | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"_meta": meta(FORM_CAPS), "name": "favourite_colour"}
        if input_responses is not None:
            params["inputResponses"] = input_responses
        if state is not None:  # answers count only on the retry of the round that asked
            params["requestState"] = state
        body = await _handle(
            server, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        )
        if raised:
            if isinstance(raised[0], NotImplementedError):
                raise _NotDone("favourite_colour")
            raise _NotYet(f"favourite_colour() raised {type(raised[0]).__name__}: {raised[0]}")
        _expect("result" in body, f"the server answered with an error: {body.get('error')}")
        return body["result"]

    async def checks() -> str:
        first = await call()
        _expect(
            first.get("resultType") == "input_required",
            "the first call (no answers yet) must return input_required",
        )
        requests = first.get("inputRequests") or {}
        _expect(list(requests) == ["colour"], f"ask one question, keyed 'colour': {list(requests)}")
        request = requests["colour"]
        _expect(request.get("method") == "elicitation/create", "ask with elicitation/create")
        try:
            form = FormSpec.from_schema(request["params"].get("requestedSchema"))
        except SchemaOutsideSubset as exc:
            raise _NotYet(f"the form is outside the form-mode subset: {exc}") from None
        field = next((f for f in form.fields if f.name == "colour"), None)
        _expect(field is not None and field.kind == "choice", "the form needs a choice 'colour'")
        assert field is not None
        _expect({ch.value for ch in field.choices} == set(COLOURS), f"offer {', '.join(COLOURS)}")
        _expect(field.required, "make 'colour' required")
        state = first.get("requestState")
        green = {"colour": {"action": "accept", "content": {"colour": "green"}}}
        picked = await call(green, state)
        _expect(picked.get("resultType") == "complete", "an accepted answer must complete the call")
        _expect("green" in result_text(picked), "the final text should name the chosen colour")
        again = await call({}, state)
        _expect(
            again.get("resultType") == "input_required",
            "a retry without the answer must ask again, not fail (MRTR-E4)",
        )
        for label, answer in UNFIT.items():
            try:
                unfit = await call({"colour": answer}, state)
            except _NotYet as exc:  # the handler raised: a server would answer -32603
                raise _NotYet(
                    f"with {label}, {exc}: on a server that is -32603, an internal error, for "
                    "an answer the user can fix. Check the answer against the form before "
                    "using it: ctx.form('colour', ...) does (ELIC-14 SHOULD), and "
                    "colour.needs_asking is then True: return colour.ask() (MRTR-E4 SHOULD)."
                ) from None
            _expect(
                unfit.get("resultType") == "input_required"
                and "colour" in (unfit.get("inputRequests") or {}),
                f"with {label} your tool {_outcome(unfit)}: "
                f"{result_text(unfit)!r}. The server validates answers against its form "
                "(ELIC-14 SHOULD) and asks again, saying what was wrong (MRTR-E4 SHOULD): read "
                "it with ctx.form('colour', ...) and return colour.ask() when "
                "colour.needs_asking.",
            )
        # ELIC-6: decline is an explicit "no", cancel a dismissal; neither is a request to ask
        # again in the same call, and neither is a failure of the tool (ELIC-8).
        for action, meaning in REFUSALS.items():
            refused = await call({"colour": {"action": action}}, state)
            _expect(
                refused.get("resultType") == "complete" and not refused.get("isError"),
                f"after {action!r} your tool {_outcome(refused)}; {meaning}",
            )
        return (
            "asks with a valid form, completes with the answer, asks again when it is missing "
            "or does not fit the form ('purple', 42, an accept with no content), and respects "
            "a decline and a cancel."
        )

    return await _grade("favourite_colour", checks)


# 01b, exercise 2: a form's schema -----------------------------------------------------------------

DIETS = ("vegetarian", "vegan", "gluten-free")


def check_booking_form(schema: Any) -> Checkpoint:
    """01b, exercise 2: a ``requestedSchema`` for party (1-8, default 2), date and diet."""
    try:
        if schema is None:
            return Checkpoint("not done", "BOOKING_FORM is still None. Write the schema.")
        try:
            form = FormSpec.from_schema(schema)
        except SchemaOutsideSubset as exc:
            raise _NotYet(f"outside the form-mode subset: {exc}") from None
        names = [f.name for f in form.fields]
        _expect(
            set(names) == {"party", "date", "diet"}, f"the fields are party, date, diet: {names}"
        )
        party, date, diet = form.field("party"), form.field("date"), form.field("diet")
        _expect(party.kind == "integer", "party is a whole number (type integer)")
        _expect(date.kind == "date", 'date is a string with "format": "date"')
        _expect(diet.kind == "choices", "diet is a multi-select (an array of enum strings)")
        _expect(party.required and date.required, "party and date are required")
        _expect(not diet.required, "diet is optional")
        _expect(party.initial() == "2", "party starts at 2 (a default)")
        _expect({ch.value for ch in diet.choices} == set(DIETS), f"diet offers {', '.join(DIETS)}")
        good = {"party": "4", "date": "2026-09-01", "diet": ["vegan"]}
        outcome = form.respond("accept", good)
        _expect(outcome.ok, f"a valid answer was refused: {outcome.problems}")
        for bad, field_name in (
            ({"party": "9"}, "party"),
            ({"party": "0"}, "party"),
            ({"date": "next friday"}, "date"),
            ({"date": ""}, "date"),
            ({"diet": ["meat"]}, "diet"),
        ):
            refused = form.respond("accept", {**good, **bad})
            _expect(field_name in refused.problems, f"{bad} should be refused")
        no_diet = form.respond("accept", {**good, "diet": []})
        _expect(no_diet.ok, "leaving diet empty is fine: it is optional")
    except _NotYet as exc:
        return Checkpoint("not yet", str(exc))
    return Checkpoint("passed", "party 1-8 (default 2) and a date are required; diet is optional.")


def run_checkpoint(coro: Any) -> Checkpoint:
    """Run an async checkpoint from plain (non-notebook) code, e.g. a test."""
    return asyncio.run(coro)
