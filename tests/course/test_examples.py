"""The lesson servers of ``mrtr_course.examples``, driven through ``McpServer.handle`` on
plain dicts: full multi-round flows, decline and cancel paths, invalid answers asked again,
capability gating.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from mrtr_course.examples import (
    EXAMPLES,
    booking,
    deprecated_inputs,
    fake_weather,
    lessons,
    travel_guide,
    weather,
)
from mrtr_kit.protocol.constants import PROTOCOL_VERSION, RESULT_COMPLETE, RESULT_INPUT_REQUIRED
from mrtr_kit.server import McpServer
from mrtr_kit.server.http import http_status
from tests.helpers import error, request, result, run

FORM = {"elicitation": {"form": {}}}


def send(server, method, params, caps, retry):
    """One round of ``method``; ``retry`` may hold inputResponses and requestState. Answers
    given without a state go where a client sends them: on the retry of round 1, with the
    state round 1 returned (sent with a first request, they would be ignored, MRTR-E3)."""
    if "inputResponses" in retry and "requestState" not in retry:
        first = result(run(server, request(method, params, capabilities=caps)))
        retry = {**retry, "requestState": first["requestState"]}
    return run(server, request(method, {**params, **retry}, capabilities=caps))


def call_tool(server, name, arguments, caps=FORM, **retry):
    """One tools/call round (see ``send``)."""
    return send(server, "tools/call", {"name": name, "arguments": arguments}, caps, retry)


def accept(**content):
    return {"action": "accept", "content": content}


def only_request(res):
    """The single (key, request) of an input_required result."""
    assert res["resultType"] == RESULT_INPUT_REQUIRED, res
    ((key, req),) = res["inputRequests"].items()
    return key, req


def text_of(res):
    assert res["resultType"] == RESULT_COMPLETE, res
    return " ".join(block["text"] for block in res["content"] if block["type"] == "text")


# -- the registry ------------------------------------------------------------------------------


def test_registry_has_one_example_per_lesson_and_the_conformance_server():
    assert {
        "weather",
        "booking",
        "travel-guide",
        "deprecated-inputs",
        "lessons",
        "conformance",
    } <= set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_example_answers_discover_and_lists_described_features(name):
    server = EXAMPLES[name]()
    discover = result(run(server, request("server/discover")))
    assert discover["supportedVersions"] == [PROTOCOL_VERSION]
    caps = discover["capabilities"]
    # docs/conformance.md §10: never advertise listChanged / subscribe without subscriptions/listen.
    assert all("listChanged" not in v and "subscribe" not in v for v in caps.values())
    for method, key in (("tools/list", "tools"), ("prompts/list", "prompts")):
        if key in caps:
            listed = result(run(server, request(method)))[key]
            assert listed and all(item.get("description") for item in listed)


def test_lessons_server_combines_every_lesson():
    server = lessons.build_server()
    tools = [t["name"] for t in result(run(server, request("tools/list")))["tools"]]
    assert tools == ["get_weather", "book_table", "summarize_forecast", "suggest_save_path"]
    prompts = result(run(server, request("prompts/list")))["prompts"]
    assert [p["name"] for p in prompts] == ["plan_trip"]
    templates = result(run(server, request("resources/templates/list")))["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["weather://forecast/{city}"]


# -- (a) weather: a login form before the answer -----------------------------------------------


def test_weather_round_one_asks_for_the_login_with_a_form():
    res = result(call_tool(weather.build_server(), "get_weather", {"city": "Paris"}))
    key, req = only_request(res)
    assert key == "login" and req["method"] == "elicitation/create"
    assert req["params"]["requestedSchema"] == weather.LOGIN_FORM
    assert "Paris" in req["params"]["message"]
    # Sealed although the tool keeps nothing: it records the asked key (MRTR-E3) and, being
    # AES-GCM by default, shows the client nothing (SEC-8).
    assert res["requestState"].startswith("aead1.")


def test_weather_asks_the_same_question_for_the_same_request():
    server = weather.build_server()
    first = result(call_tool(server, "get_weather", {"city": "Oslo"}))
    again = result(call_tool(server, "get_weather", {"city": "Oslo"}))
    assert first["inputRequests"] == again["inputRequests"]


def test_weather_completes_with_an_accepted_login():
    server = weather.build_server()
    res = result(
        call_tool(
            server,
            "get_weather",
            {"city": "Oslo"},
            inputResponses={"login": accept(login="alice", units="fahrenheit")},
        )
    )
    assert text_of(res).startswith("Hello alice! Weather now in Oslo: ")
    assert "°F" in text_of(res)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_weather_ends_on_decline_and_cancel_without_asking_again(action):
    """ELIC-6: decline is an explicit "no" (respect it, offer an alternative); cancel is a
    dismissal (nothing done, the user may ask again later). Neither re-asks in the same call,
    and neither is an error of the tool (ELIC-8)."""
    res = result(
        call_tool(
            weather.build_server(),
            "get_weather",
            {"city": "Oslo"},
            inputResponses={"login": {"action": action}},
        )
    )
    assert res["resultType"] == "complete", res
    assert not res.get("isError")
    if action == "decline":  # the alternative: the public forecast, no personal greeting
        assert text_of(res) == weather.DECLINED.format(
            city="Oslo", public=fake_weather.describe("Oslo")
        )
        assert "Hello" not in text_of(res)
    else:
        assert text_of(res) == "No forecast for Oslo: the sign-in was dismissed. " + (
            "Ask again when you want to sign in."
        )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"login": "al"}, "at least 3 characters"),
        ({"login": "alice", "units": "kelvin"}, "not one of the choices"),
        ({"units": "celsius"}, "login is required"),
    ],
)
def test_weather_reasks_when_the_answer_does_not_fit_the_form(content, problem):
    # Digest §6.3 (KIT): an answer that fails requestedSchema is asked again (MRTR-E4).
    res = result(
        call_tool(
            weather.build_server(),
            "get_weather",
            {"city": "Oslo"},
            inputResponses={"login": {"action": "accept", "content": content}},
        )
    )
    _, req = only_request(res)
    assert problem in req["params"]["message"]


def test_weather_needs_form_elicitation_declared_in_this_request():
    # MRTR-S7 / CAP-2: no elicitation capability -> -32021, HTTP 400, never the form.
    reply = call_tool(weather.build_server(), "get_weather", {"city": "Oslo"}, caps={})
    assert http_status(reply) == 400
    err = error(reply)
    assert err["code"] == -32021
    assert err["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_weather_rejects_a_malformed_answer():
    # MRTR-E1/E2: not an ElicitResult at all -> -32602, not a re-ask.
    reply = call_tool(
        weather.build_server(),
        "get_weather",
        {"city": "Oslo"},
        inputResponses={"login": {"action": "maybe"}},
    )
    assert error(reply)["code"] == -32602


# -- (b) booking: three rounds, state carried forward, one booking -----------------------------


def booking_server():
    server = McpServer("booking-test", state_key=b"b" * 32)
    book = booking.register(server)
    return server, book


def bookings_of(book: booking.ReservationBook) -> list[booking.Booking]:
    """The bookings made so far: records in the server's ledger, read through its async API."""
    return asyncio.run(book.bookings())


def book_until_confirm(server, restaurant="Luigi's", party=4, when="2026-09-01"):
    args = {"restaurant": restaurant}
    r1 = result(call_tool(server, "book_table", args))
    r2 = result(
        call_tool(
            server,
            "book_table",
            args,
            inputResponses={"details": accept(party=party, when=when)},
            requestState=r1["requestState"],
        )
    )
    return r1, r2


def test_booking_takes_three_rounds_and_books_only_after_the_last_answer():
    server, book = booking_server()
    args = {"restaurant": "Luigi's"}
    r1, r2 = book_until_confirm(server)
    assert only_request(r1)[0] == "details" and r1["requestState"]
    key, req = only_request(r2)
    assert key == "confirm" and req["params"]["message"] == "Book Luigi's for 4 on 2026-09-01?"
    assert r2["requestState"] != r1["requestState"]  # the answers now travel in a new state
    assert bookings_of(book) == []  # MIG-3: nothing happened before the last answer
    r3 = result(
        call_tool(
            server,
            "book_table",
            args,
            inputResponses={"confirm": accept(ok=True)},
            requestState=r2["requestState"],
        )
    )
    assert text_of(r3) == "Booked Luigi's for 4 on 2026-09-01 (reference BK-0001)."
    assert len(bookings_of(book)) == 1


def test_booking_replayed_final_round_does_not_book_twice():
    # MRTR-S5d / SEC-7: a valid state can be replayed; the core's ledger refuses the second use.
    server, book = booking_server()
    _, r2 = book_until_confirm(server)
    final = {"inputResponses": {"confirm": accept(ok=True)}, "requestState": r2["requestState"]}
    first = result(call_tool(server, "book_table", {"restaurant": "Luigi's"}, **final))
    assert text_of(first).startswith("Booked ")
    replay = call_tool(server, "book_table", {"restaurant": "Luigi's"}, **final)
    assert error(replay)["code"] == -32602
    assert error(replay)["data"] == {"reason": "invalid_request_state"}
    assert len(bookings_of(book)) == 1


def test_booking_declined_confirmation_books_nothing():
    server, book = booking_server()
    _, r2 = book_until_confirm(server)
    for answer in ({"action": "decline"}, accept(ok=False)):
        res = result(
            call_tool(
                server,
                "book_table",
                {"restaurant": "Luigi's"},
                inputResponses={"confirm": answer},
                requestState=r2["requestState"],
            )
        )
        assert "Nothing was booked" in text_of(res)
    assert bookings_of(book) == []


def test_booking_invalid_details_are_asked_again_with_the_problem():
    server, _ = booking_server()
    args = {"restaurant": "Luigi's"}
    r1 = result(call_tool(server, "book_table", args))
    res = result(
        call_tool(
            server,
            "book_table",
            args,
            inputResponses={"details": accept(party=20, when="soon")},
            requestState=r1["requestState"],
        )
    )
    key, req = only_request(res)
    assert key == "details"
    assert "party must be at most 12" in req["params"]["message"]
    assert "when must be a date" in req["params"]["message"]


def test_booking_missing_confirm_answer_is_asked_again():
    # MRTR-E4: a retry without the answer the state asked for gets the question again.
    server, _ = booking_server()
    _, r2 = book_until_confirm(server)
    res = result(
        call_tool(
            server,
            "book_table",
            {"restaurant": "Luigi's"},
            inputResponses={"something_else": accept(ok=True)},
            requestState=r2["requestState"],
        )
    )
    assert only_request(res)[0] == "confirm"


def test_booking_state_cannot_be_moved_to_another_restaurant():
    # MRTR-S5c: the state is bound to this tool and these arguments.
    server, book = booking_server()
    _, r2 = book_until_confirm(server)
    reply = call_tool(
        server,
        "book_table",
        {"restaurant": "Chez Other"},
        inputResponses={"confirm": accept(ok=True)},
        requestState=r2["requestState"],
    )
    assert error(reply)["code"] == -32602
    assert error(reply)["data"] == {"reason": "invalid_request_state"}
    assert bookings_of(book) == []


def test_booking_checks_capabilities_again_on_every_round():
    # CAP-4: the retry declares its own capabilities; without elicitation there is no round 3.
    server, _ = booking_server()
    r1 = result(call_tool(server, "book_table", {"restaurant": "Luigi's"}))
    reply = call_tool(
        server,
        "book_table",
        {"restaurant": "Luigi's"},
        caps={"sampling": {}},
        inputResponses={"details": accept(party=2, when="2026-09-01")},
        requestState=r1["requestState"],
    )
    assert http_status(reply) == 400 and error(reply)["code"] == -32021


def test_trip_planner_reasks_a_bad_answer_saying_what_was_wrong_and_keeps_the_state():
    """ELIC-14 / MRTR-E4: an answer that does not fit is asked again with the problem named,
    the earlier answers still in the state (MIG-2), and nothing is reserved (MIG-3)."""
    from mrtr_course.examples import trip_planner

    desk = trip_planner.HotelDesk()
    server = McpServer("trip-test", state_key=b"t" * 32)
    trip_planner.register(server, desk)
    args = {"city": "Rome"}
    r1 = result(call_tool(server, "plan_trip", args))
    bad = {"dates": accept(start="20260901", nights=3)}
    r2 = result(call_tool(server, "plan_trip", args, inputResponses=bad, **state_of(r1)))
    key, req = only_request(r2)
    assert (key, req["params"]["message"]) == (
        "dates",
        "Please check your answer: start must be a date such as 2026-09-01. "
        "When are you going to Rome?",
    )
    good = {"dates": accept(start="2026-09-01", nights=3)}
    r3 = result(call_tool(server, "plan_trip", args, inputResponses=good, **state_of(r2)))
    wrong_room = {"room": accept(room="penthouse")}
    r4 = result(call_tool(server, "plan_trip", args, inputResponses=wrong_room, **state_of(r3)))
    key, req = only_request(r4)
    assert key == "room" and req["params"]["message"] == (
        "Please check your answer: room 'penthouse' is not one of the choices. "
        "3 nights in Rome from 2026-09-01: which room?"
    )
    assert desk.reservations == []
    room = {"room": accept(room="suite")}
    done = result(call_tool(server, "plan_trip", args, inputResponses=room, **state_of(r4)))
    assert text_of(done) == "Reserved a suite room in Rome: 3 nights from 2026-09-01, 780 EUR."


def state_of(res):
    return {"requestState": res["requestState"]}


# -- (c) travel guide: a prompt and a resource that ask ----------------------------------------


def get_prompt(server, arguments, caps=FORM, **retry):
    return send(server, "prompts/get", {"name": "plan_trip", "arguments": arguments}, caps, retry)


def read(server, uri, caps=FORM, **retry):
    return send(server, "resources/read", {"uri": uri}, caps, retry)


def prompt_text(res):
    assert res["resultType"] == RESULT_COMPLETE, res
    return res["messages"][0]["content"]["text"]


def test_plan_trip_prompt_asks_how_you_travel_then_writes_the_prompt():
    # MRTR-R1: prompts/get may return input_required too.
    server = travel_guide.build_server()
    key, req = only_request(result(get_prompt(server, {"city": "Lisbon"})))
    assert key == "style" and req["params"]["requestedSchema"] == travel_guide.STYLE_FORM
    answer = accept(pace="packed", days=2, interests=["food", "museums"])
    res = result(get_prompt(server, {"city": "Lisbon"}, inputResponses={"style": answer}))
    assert prompt_text(res).startswith(
        "Plan a 2-day, packed trip to Lisbon for someone who enjoys food and museums."
    )


def test_plan_trip_prompt_uses_the_defaults_when_declined():
    server = travel_guide.build_server()
    res = result(
        get_prompt(server, {"city": "Lisbon"}, inputResponses={"style": {"action": "decline"}})
    )
    text = prompt_text(res)
    assert text.startswith("Plan a 3-day, balanced trip to Lisbon for someone who enjoys food.")
    assert "defaults" in text


def test_plan_trip_prompt_reasks_an_invalid_answer():
    server = travel_guide.build_server()
    answer = accept(pace="sleepy", days=30)
    res = result(get_prompt(server, {"city": "Lisbon"}, inputResponses={"style": answer}))
    _, req = only_request(res)
    assert "days must be at most 14" in req["params"]["message"]


def test_plan_trip_city_completion():
    server = travel_guide.build_server()
    params = {
        "ref": {"type": "ref/prompt", "name": "plan_trip"},
        "argument": {"name": "city", "value": "L"},
    }
    res = result(run(server, request("completion/complete", params)))
    assert res["completion"]["values"] == ["Lisbon", "Lima"]


def test_forecast_resource_asks_for_units_and_is_not_cacheable_after_the_retry():
    server = travel_guide.build_server()
    uri = "weather://forecast/New%20York"
    first = result(read(server, uri))
    key, _ = only_request(first)
    assert key == "units"
    assert "ttlMs" not in first and "cacheScope" not in first  # CACHE-2
    res = result(read(server, uri, inputResponses={"units": accept(units="fahrenheit")}))
    text = res["contents"][0]["text"]
    assert text.startswith("Day 1: New York: ") and text.count("°F") == 7
    assert (res["ttlMs"], res["cacheScope"]) == (0, "private")  # CACHE-3 (KIT)


def test_forecast_resource_falls_back_to_celsius_when_declined():
    server = travel_guide.build_server()
    res = result(
        read(server, "weather://forecast/Oslo", inputResponses={"units": {"action": "cancel"}})
    )
    assert res["contents"][0]["text"].count("°C") == 7


def test_city_list_is_a_plain_cacheable_resource():
    res = result(read(travel_guide.build_server(), "weather://cities", caps={}))
    assert res["contents"][0]["text"].splitlines()[0] == "Lisbon"
    assert (res["ttlMs"], res["cacheScope"]) == (3_600_000, "public")


def test_list_methods_never_ask_for_input():
    # MRTR-R2: only tools/call, prompts/get and resources/read may answer input_required.
    server = lessons.build_server()
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        assert result(run(server, request(method)))["resultType"] == RESULT_COMPLETE


# -- (d) the deprecated inputs: sampling and roots ---------------------------------------------


def test_deprecated_tools_say_so():
    listed = result(run(deprecated_inputs.build_server(), request("tools/list")))["tools"]
    assert all(t["description"].startswith(deprecated_inputs.DEPRECATED) for t in listed)


def test_summarize_forecast_asks_the_clients_llm():
    server = deprecated_inputs.build_server()
    res = result(call_tool(server, "summarize_forecast", {"city": "Oslo"}, caps={"sampling": {}}))
    key, req = only_request(res)
    assert key == "summary" and req["method"] == "sampling/createMessage"
    assert req["params"]["maxTokens"] == 60
    assert "Oslo" in req["params"]["messages"][0]["content"]["text"]
    reply = {"role": "assistant", "content": {"type": "text", "text": "Mild."}, "model": "stand-in"}
    done = result(
        call_tool(
            server,
            "summarize_forecast",
            {"city": "Oslo"},
            caps={"sampling": {}},
            inputResponses={"summary": reply},
        )
    )
    assert text_of(done).startswith("Mild.\n(written by stand-in;")


def test_summarize_forecast_without_text_is_a_tool_error():
    reply = {"role": "assistant", "content": [], "model": "stand-in"}
    res = result(
        call_tool(
            deprecated_inputs.build_server(),
            "summarize_forecast",
            {"city": "Oslo"},
            caps={"sampling": {}},
            inputResponses={"summary": reply},
        )
    )
    assert res["isError"] is True


def test_suggest_save_path_asks_for_roots_and_stays_inside_the_first():
    server = deprecated_inputs.build_server()
    caps = {"roots": {}}
    key, req = only_request(
        result(call_tool(server, "suggest_save_path", {"filename": "notes.txt"}, caps=caps))
    )
    assert key == "roots" and req == {"method": "roots/list", "params": {}}
    roots = {"roots": [{"uri": "file:///home/ann/site/", "name": "Site"}, {"uri": "file:///tmp"}]}
    res = result(
        call_tool(
            server,
            "suggest_save_path",
            {"filename": "notes.txt"},
            caps=caps,
            inputResponses={"roots": roots},
        )
    )
    assert text_of(res) == "Save it as file:///home/ann/site/notes.txt (Site)."
    empty = result(
        call_tool(
            server,
            "suggest_save_path",
            {"filename": "a"},
            caps=caps,
            inputResponses={"roots": {"roots": []}},
        )
    )
    assert "No roots were shared" in text_of(empty)


@pytest.mark.parametrize("filename", ["..", "../etc/passwd", "a/b", ".hidden"])
def test_suggest_save_path_refuses_paths(filename):
    reply = call_tool(
        deprecated_inputs.build_server(),
        "suggest_save_path",
        {"filename": filename},
        caps={"roots": {}},
    )
    assert error(reply)["code"] == -32602


@pytest.mark.parametrize(
    ("tool", "arguments", "needed"),
    [
        ("summarize_forecast", {"city": "Oslo"}, {"sampling": {}}),
        ("suggest_save_path", {"filename": "a.txt"}, {"roots": {}}),
    ],
)
def test_deprecated_tools_need_their_capability(tool, arguments, needed):
    # MRTR-S7: asked with only form elicitation declared, the core refuses with -32021.
    reply = call_tool(deprecated_inputs.build_server(), tool, arguments, caps=FORM)
    assert http_status(reply) == 400
    assert error(reply)["data"] == {"requiredCapabilities": needed}


# -- ELIC-14 / MRTR-E4: no example acts on an answer that does not fit its form ----------------
# Every form any example asks, in every round of every tool, prompt and resource template, gets
# answers that break its requestedSchema one way at a time. An example must not act on them: it
# asks the same question again (MRTR-E4, the kit's decision table), or does exactly what it does
# for a decline. The walk finds the forms itself, so a new example tool is checked too.

ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
PRINCIPAL = "alice"  # the refunds example pays only signed-in users; A-1002 is alice's order
ARGUMENTS = {
    "get_weather": {"city": "Oslo"},
    "book_table": {"restaurant": "Luigi's"},
    "request_refund": {"order_id": "A-1002"},
    "plan_trip": {"city": "Rome"},
    "summarize_forecast": {"city": "Oslo"},
    "suggest_save_path": {"filename": "notes.md"},
    "test_x_mcp_header": {"region": "eu-west"},
    "json_schema_2020_12_tool": {"email": "ann@example.com"},
    "test_prompt_with_arguments": {"arg1": "a", "arg2": "b"},
    "test_prompt_with_embedded_resource": {"resourceUri": "test://x"},
}
VALID_TEXT = {
    "email": "ann@example.com",
    "uri": "https://example.com/",
    "date": "2026-09-01",
    "date-time": "2026-09-01T18:30:00Z",
}
OTHER_ANSWERS = {
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "Hi."},
        "model": "stand-in",
    },
    "roots/list": {"roots": [{"uri": "file:///home/ann", "name": "home"}]},
}


def _options(prop):
    from mrtr_kit.protocol.elicitation import choice_options

    return [value for value, _label in choice_options(prop) or []]


def valid_value(prop):
    if "default" in prop:
        return prop["default"]
    kind, options = prop["type"], _options(prop)
    if kind == "array":
        return options[: max(1, prop.get("minItems", 1))]
    if options:
        return options[0]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return prop.get("minimum", 1)
    if "format" in prop:
        return VALID_TEXT[prop["format"]]
    return "x" * max(3, prop.get("minLength", 0))


def valid_content(schema):
    return {name: valid_value(prop) for name, prop in schema["properties"].items()}


def broken_contents(schema):
    """Contents that each break the schema in one way (all parse as ElicitResult content)."""
    good = valid_content(schema)
    for name, prop in schema["properties"].items():
        kind, options = prop["type"], _options(prop)
        bad_values = {
            "boolean": ["false", "true", 1, 0],
            "integer": ["3", 2.5, prop.get("minimum", 1) - 1 if "minimum" in prop else None],
            "number": ["3.5", prop.get("maximum", 0) + 1 if "maximum" in prop else None],
            "array": ["not-a-list", ["__not_an_option__"]] if options else ["not-a-list"],
            "string": [12345, True]
            + (["__not_an_option__"] if options else [])
            + (["20260901", "2026-W36-2"] if prop.get("format") == "date" else [])
            + (["nope"] if prop.get("format") in ("email", "uri") else [])
            + (["x" * (prop["maxLength"] + 1)] if "maxLength" in prop else [])
            + (["" if prop.get("minLength") else None]),
        }[kind]
        for bad in bad_values:
            if bad is not None:
                yield f"{name}={bad!r}", {**good, name: bad}
    if schema.get("required"):
        yield "required fields missing", {}


def _targets(server):
    """(method, params) for every tool, prompt and resource template of ``server``."""
    for tool in (
        result(run(server, request("tools/list")))["tools"]
        if "tools" in server.capabilities
        else []
    ):
        yield "tools/call", {"name": tool["name"], "arguments": ARGUMENTS.get(tool["name"], {})}
    for prompt in (
        result(run(server, request("prompts/list")))["prompts"]
        if "prompts" in server.capabilities
        else []
    ):
        yield (
            "prompts/get",
            {"name": prompt["name"], "arguments": ARGUMENTS.get(prompt["name"], {})},
        )
    if "resources" in server.capabilities:
        for tpl in result(run(server, request("resources/templates/list")))["resourceTemplates"]:
            uri = re.sub(r"\{[^}]+\}", "Lima", tpl["uriTemplate"])
            yield "resources/read", {"uri": uri}


def _send(server, method, params, answers, state):
    body = dict(params, inputResponses=answers)
    if state is not None:
        body["requestState"] = state
    return run(server, request(method, body, capabilities=ALL_CAPS), PRINCIPAL)


def _answers(requests, overrides):
    answers = {}
    for key, req in requests.items():
        if key in overrides:
            answers[key] = overrides[key]
        elif req["method"] == "elicitation/create" and req["params"].get("mode") == "url":
            answers[key] = {"action": "accept"}
        elif req["method"] == "elicitation/create":
            answers[key] = accept(**valid_content(req["params"]["requestedSchema"]))
        else:
            answers[key] = OTHER_ANSWERS[req["method"]]
    return answers


def _outcome(reply):
    """What a reply did, without the parts that differ on every call."""
    if "error" in reply.body:
        return ("error", reply.body["error"]["code"])
    res = reply.body["result"]
    if res["resultType"] == RESULT_INPUT_REQUIRED:
        return ("input_required", tuple(sorted(res["inputRequests"])))
    return ("complete", repr({k: v for k, v in res.items() if k != "_meta"}))


def walk_forms(name):
    """Drive every target of example ``name`` round by round with valid answers; at each
    form round, also send each broken content (and a decline) with the same state."""
    checked, failures = [], []
    for method, params in _targets(EXAMPLES[name]()):
        server = EXAMPLES[name]()  # a fresh server, so earlier side effects do not interfere
        reply = run(server, request(method, params, capabilities=ALL_CAPS), PRINCIPAL)
        assert "error" not in reply.body, (name, method, params, reply.body)
        for _round in range(6):
            res = reply.body["result"]
            if res["resultType"] != RESULT_INPUT_REQUIRED:
                break
            requests, state = res["inputRequests"], res.get("requestState")
            if not any("requestedSchema" in r.get("params", {}) for r in requests.values()):
                break  # no form in this round (URL mode may wait for a page: not walked)
            for key, req in requests.items():
                form = req["params"].get("requestedSchema")
                if req["method"] != "elicitation/create" or form is None:
                    continue
                declined = _outcome(
                    _send(
                        server,
                        method,
                        params,
                        _answers(requests, {key: {"action": "decline"}}),
                        state,
                    )
                )
                for label, content in broken_contents(form):
                    got = _outcome(
                        _send(
                            server,
                            method,
                            params,
                            _answers(requests, {key: accept(**content)}),
                            state,
                        )
                    )
                    checked.append((name, params.get("name", params.get("uri")), key, label))
                    reasked = got[0] == "input_required" and key in got[1]
                    if not (reasked or got == declined):
                        failures.append(
                            (name, params.get("name", params.get("uri")), key, label, got)
                        )
            reply = _send(server, method, params, _answers(requests, {}), state)
            assert "error" not in reply.body, (name, method, params, reply.body)
    return checked, failures


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_elic_14_mrtr_e4_no_example_acts_on_content_that_breaks_its_form(name):
    """ELIC-14 / MRTR-E4: a broken answer is asked again or treated like a decline."""
    checked, failures = walk_forms(name)
    assert not failures, failures
    if name in {"weather", "booking", "travel-guide", "refunds", "trip-planner", "conformance"}:
        assert checked, f"{name} asks forms, but none was checked"
