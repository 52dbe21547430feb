"""The conformance server's key behaviours, in process (docs/conformance.md §4-§6), so a regression
shows up here before the official suite runs."""

from __future__ import annotations

import asyncio
import base64
import io
import time
import wave

import pytest

from mrtr_course.examples import conformance_server as conformance
from mrtr_kit.protocol.constants import META_LOG_LEVEL, RESULT_COMPLETE, RESULT_INPUT_REQUIRED
from mrtr_kit.server.http import http_status
from tests.helpers import error, request, result, run

# The harness's default capabilities (§3).
HARNESS_CAPS = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
ELICIT = "test_input_required_result_elicitation"


@pytest.fixture(scope="module")
def server():
    return conformance.build_server()


def call(server, name, caps=HARNESS_CAPS, emit=None, meta_extra=None, **params):
    msg = request(
        "tools/call",
        {"name": name, "arguments": {}, **params},
        capabilities=caps,
        **(meta_extra or {}),
    )
    return asyncio.run(server.handle(msg, emit=emit))


def is_input_required(res):
    return res["resultType"] == RESULT_INPUT_REQUIRED


def test_first_tool_succeeds_with_empty_arguments_and_every_item_is_described(server):
    tools = result(run(server, request("tools/list")))["tools"]
    assert tools[0]["name"] == "test_simple_text"
    res = result(call(server, tools[0]["name"]))
    assert res["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    prompts = result(run(server, request("prompts/list")))["prompts"]
    assert all(item.get("description") for item in [*tools, *prompts])
    again = result(run(server, request("tools/list")))["tools"]
    assert [t["name"] for t in again] == [t["name"] for t in tools]  # deterministic order


def test_capabilities_advertise_no_list_changed_or_subscribe(server):
    caps = result(run(server, request("server/discover")))["capabilities"]
    assert caps == {"tools": {}, "prompts": {}, "resources": {}, "completions": {}}


# -- SEP-2322 MRTR (§4) ------------------------------------------------------------------------


def test_basic_elicitation_round_one_is_exactly_the_expected_request(server):
    res = result(call(server, ELICIT))
    assert res["resultType"] == "input_required"
    assert res["inputRequests"] == {
        "user_name": {
            "method": "elicitation/create",
            "params": {
                "message": "What is your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            },
        }
    }
    # The kit seals the asked keys into every input_required (MRTR-E3); the suite only echoes
    # the state, so an extra field does not matter to it.
    assert isinstance(res["requestState"], str)


def test_basic_elicitation_completes_from_input_responses_alone(server):
    # MRTR-E3: answers with no requestState never reach a handler, except under a key the
    # tool registered as ``stateless_answers``, as this fixture's ``user_name`` (the suite's
    # extra-params scenario sends it with no state and expects a complete result).
    res = result(
        call(
            server,
            ELICIT,
            inputResponses={"user_name": {"action": "accept", "content": {"name": "Alice"}}},
        )
    )
    assert res["content"] == [{"type": "text", "text": "Hello, Alice!"}]


def test_missing_or_wrong_answer_key_is_asked_again_not_an_error(server):
    # MRTR-E4 (missing-input-response scenario).
    res = result(
        call(
            server,
            ELICIT,
            inputResponses={"wrong_key": {"action": "accept", "content": {"data": "x"}}},
        )
    )
    assert is_input_required(res) and "user_name" in res["inputRequests"]


def test_extra_answer_keys_are_ignored(server):
    # MRTR-E3 (ignore-extra-params scenario).
    answers = {
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
        "another_unexpected": {"action": "accept", "content": {"baz": 123}},
    }
    assert result(call(server, ELICIT, inputResponses=answers))["resultType"] == RESULT_COMPLETE


@pytest.mark.parametrize(
    "answers", [{"user_name": 12345}, {"user_name": {"action": "maybe"}}, {"user_name": None}]
)
def test_malformed_answers_are_a_protocol_error(server, answers):
    # MRTR-E1/E2 (validate-input scenario): never a complete result.
    assert error(call(server, ELICIT, inputResponses=answers))["code"] == -32602


def test_null_input_responses_never_complete(server):
    # validate-input scenario: either a -32602 error or a new question is fine.
    body = call(server, ELICIT, inputResponses=None).body
    assert body is not None
    if "error" in body:
        assert body["error"]["code"] == -32602
    else:
        assert is_input_required(body["result"])


@pytest.mark.parametrize(
    "answers",
    [
        {"user_name": {"action": "accept", "content": {"name": 5}}},
        {"user_name": {"action": "accept"}},
    ],
)
def test_ill_typed_answers_are_asked_again(server, answers):
    assert is_input_required(result(call(server, ELICIT, inputResponses=answers)))


@pytest.mark.parametrize(
    "answers",
    [
        {"user_name": {"action": "accept", "content": {"name": 5}}},
        {"user_name": {"action": "accept"}},
        {"wrong_key": {"action": "accept", "content": {"name": "Alice"}}},
    ],
)
def test_mrtr_e4_a_reask_is_the_round_one_request_word_for_word(server, answers):
    """MRTR-E4 (KIT: the conformance server's wire): the question asked again after an answer
    that does not fit is exactly round 1's, with no explanation added to the message."""
    first = result(call(server, ELICIT))
    again = result(call(server, ELICIT, inputResponses=answers))
    assert again["inputRequests"] == first["inputRequests"]


def test_tampered_state_is_rejected_with_an_error_not_a_reprompt(server):
    # MRTR-S4a (tampered-state scenario).
    name = "test_input_required_result_tampered_state"
    first = result(call(server, name))
    assert first["requestState"]
    answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
    reply = call(
        server, name, inputResponses=answers, requestState=first["requestState"] + "-TAMPERED"
    )
    assert error(reply)["code"] == -32602
    good = result(call(server, name, inputResponses=answers, requestState=first["requestState"]))
    assert good["resultType"] == RESULT_COMPLETE


def test_request_state_round_trip_says_state_ok(server):
    name = "test_input_required_result_request_state"
    first = result(call(server, name))
    assert isinstance(first["requestState"], str) and first["requestState"]
    done = result(
        call(
            server,
            name,
            inputResponses={"confirm": {"action": "accept", "content": {"ok": True}}},
            requestState=first["requestState"],
        )
    )
    assert "state-ok" in done["content"][0]["text"]


def test_multi_round_issues_a_new_state_each_round(server):
    name = "test_input_required_result_multi_round"
    r1 = result(call(server, name))
    r2 = result(
        call(
            server,
            name,
            inputResponses={"step1": {"action": "accept", "content": {"name": "Alice"}}},
            requestState=r1["requestState"],
        )
    )
    assert list(r2["inputRequests"]) == ["step2"] and r2["requestState"] != r1["requestState"]
    r3 = result(
        call(
            server,
            name,
            inputResponses={"step2": {"action": "accept", "content": {"color": "blue"}}},
            requestState=r2["requestState"],
        )
    )
    assert r3["content"][0]["text"] == "Alice's favorite color is blue."


def test_multiple_inputs_asks_for_all_three_kinds_then_only_what_is_missing(server):
    name = "test_input_required_result_multiple_inputs"
    r1 = result(call(server, name))
    methods = {k: v["method"] for k, v in r1["inputRequests"].items()}
    assert methods == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    assert r1["requestState"]
    partial = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
    r2 = result(call(server, name, inputResponses=partial, requestState=r1["requestState"]))
    assert set(r2["inputRequests"]) == {"greeting", "client_roots"}
    rest = {
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi!"}, "model": "m"},
        "client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]},
    }
    r3 = result(call(server, name, inputResponses=rest, requestState=r2["requestState"]))
    assert r3["content"][0]["text"] == "Hello, Alice! Hi! Roots: file:///test/root"


@pytest.mark.parametrize(
    ("caps", "method"),
    [
        ({"sampling": {}}, "sampling/createMessage"),
        ({"elicitation": {}}, "elicitation/create"),
        ({"roots": {}}, "roots/list"),
    ],
)
def test_capability_check_uses_only_this_requests_capabilities(server, caps, method):
    # MRTR-S7 / CAP-1 (capability-check scenario).
    res = result(call(server, "test_input_required_result_capabilities", caps=caps))
    assert [r["method"] for r in res["inputRequests"].values()] == [method]


def test_capability_check_without_any_input_capability_is_32021(server):
    reply = call(server, "test_input_required_result_capabilities", caps={})
    assert http_status(reply) == 400 and error(reply)["code"] == -32021


def test_prompt_asks_for_context_then_returns_messages(server):
    msg = request(
        "prompts/get", {"name": "test_input_required_result_prompt"}, capabilities=HARNESS_CAPS
    )
    first = result(run(server, msg))
    assert list(first["inputRequests"]) == ["user_context"]
    answers = {"user_context": {"action": "accept", "content": {"context": "test context"}}}
    retry = request(
        "prompts/get",
        {
            "name": "test_input_required_result_prompt",
            "inputResponses": answers,
            "requestState": first["requestState"],  # the suite echoes it when present
        },
        capabilities=HARNESS_CAPS,
    )
    assert "test context" in result(run(server, retry))["messages"][0]["content"]["text"]


# -- server-stateless diagnostics (§5) ---------------------------------------------------------


def test_missing_capability_tool_is_refused_with_400_and_32021(server):
    reply = call(server, "test_missing_capability", caps={})
    assert http_status(reply) == 400
    assert error(reply)["code"] == -32021
    assert error(reply)["data"] == {"requiredCapabilities": {"sampling": {}}}


def test_streaming_elicitation_returns_the_question_as_the_result(server):
    sent = []

    async def emit(message):
        sent.append(message)

    res = result(call(server, "test_streaming_elicitation", caps={"elicitation": {}}, emit=emit))
    assert is_input_required(res)
    assert all(m["method"].startswith("notifications/") and "id" not in m for m in sent)


def test_logging_tool_logs_only_when_the_request_sets_a_level(server):
    for level, expected in ((None, 0), ("debug", 3), ("warning", 1)):
        sent = []

        async def emit(message, sent=sent):
            sent.append(message)

        extra = {META_LOG_LEVEL: level} if level else {}
        assert result(call(server, "test_logging_tool", emit=emit, meta_extra=extra))["content"]
        assert len(sent) == expected, level  # CORE-14
        assert all(m["method"] == "notifications/message" for m in sent)


def test_progress_tool_reports_0_50_100_about_50ms_apart(server):
    sent = []

    async def emit(message):
        sent.append((time.monotonic(), message))

    res = result(
        call(
            server,
            "test_tool_with_progress",
            emit=emit,
            meta_extra={"progressToken": "progress-test-1"},
        )
    )
    assert res["content"][0]["text"] == "Progress test completed."
    params = [m["params"] for _, m in sent]
    assert [(p["progressToken"], p["progress"], p["total"]) for p in params] == [
        ("progress-test-1", 0, 100),
        ("progress-test-1", 50, 100),
        ("progress-test-1", 100, 100),
    ]
    assert sent[-1][0] - sent[0][0] >= 0.09


def test_progress_tool_sends_nothing_without_a_token(server):
    sent = []

    async def emit(message):
        sent.append(message)

    result(call(server, "test_tool_with_progress", emit=emit))
    assert sent == []


# -- content, prompts, resources (§6) ----------------------------------------------------------


def test_image_and_audio_blocks_hold_valid_files(server):
    image = result(call(server, "test_image_content"))["content"][0]
    assert image["mimeType"] == "image/png"
    png = base64.b64decode(image["data"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR"
    audio = result(call(server, "test_audio_content"))["content"][0]
    assert audio["mimeType"] == "audio/wav"
    with wave.open(io.BytesIO(base64.b64decode(audio["data"]))) as wav:
        assert wav.getnchannels() == 1 and wav.getnframes() > 0


def test_embedded_mixed_and_error_tools(server):
    embedded = result(call(server, "test_embedded_resource"))["content"][0]
    assert embedded == {
        "type": "resource",
        "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        },
    }
    mixed = result(call(server, "test_multiple_content_types"))["content"]
    assert [b["type"] for b in mixed] == ["text", "image", "resource"]
    failed = result(call(server, "test_error_handling"))
    assert failed["isError"] is True and failed["content"][0]["text"]


def test_x_mcp_header_and_json_schema_tools_are_listed_as_the_suite_expects(server):
    tools = {t["name"]: t for t in result(run(server, request("tools/list")))["tools"]}
    region = tools["test_x_mcp_header"]["inputSchema"]["properties"]["region"]
    assert region["type"] == "string" and region["x-mcp-header"] == "Region"
    assert tools["json_schema_2020_12_tool"]["inputSchema"] == conformance.JSON_SCHEMA_2020_12


def test_prompts_with_arguments_embedded_resource_and_image(server):
    def get(name, arguments=None):
        params = {"name": name, **({"arguments": arguments} if arguments else {})}
        return result(run(server, request("prompts/get", params)))["messages"]

    text = get("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"})[0][
        "content"
    ]["text"]
    assert "testValue1" in text and "testValue2" in text
    embedded = get("test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"})
    assert embedded[0]["content"]["type"] == "resource"
    assert embedded[0]["content"]["resource"]["uri"] == "test://example-resource"
    assert get("test_prompt_with_image")[0]["content"]["type"] == "image"
    assert get("test_simple_prompt")[0]["role"] == "user"


def test_completion_for_prompt_argument(server):
    params = {
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "test"},
    }
    values = result(run(server, request("completion/complete", params)))["completion"]["values"]
    assert values and all(v.startswith("test") for v in values)


def test_resources_first_is_readable_and_each_has_a_mime_type(server):
    listed = result(run(server, request("resources/list")))["resources"]
    assert listed[0]["uri"] == "test://static-text"
    text = result(run(server, request("resources/read", {"uri": listed[0]["uri"]})))
    assert text["contents"][0]["mimeType"] == "text/plain" and text["contents"][0]["text"]
    assert text["ttlMs"] >= 0 and text["cacheScope"] in ("public", "private")
    binary = result(run(server, request("resources/read", {"uri": "test://static-binary"})))[
        "contents"
    ][0]
    assert binary["mimeType"] == "image/png"
    assert base64.b64decode(binary["blob"]).startswith(b"\x89PNG")
    templated = result(run(server, request("resources/read", {"uri": "test://template/123/data"})))
    assert "123" in templated["contents"][0]["text"]


def test_unknown_resource_is_32602_with_the_uri(server):
    uri = "test://nonexistent-resource-for-conformance-testing"
    err = error(run(server, request("resources/read", {"uri": uri})))
    assert err["code"] == -32602 and err["data"] == {"uri": uri}
