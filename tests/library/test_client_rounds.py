"""The client's sans-IO round logic (``mrtr_kit.client.call`` and its modules) on plain dicts,
no I/O.

Each test names the rule it checks and fails if the rule is broken.
"""

from __future__ import annotations

import json

import pytest

from mrtr_kit.client import (
    CallStatus,
    ElicitResult,
    InvalidAnswers,
    McpClientError,
    McpRemoteError,
    MrtrCall,
    NoMutualVersion,
    NotJson,
    ProtocolViolation,
    RequestFactory,
    ResultCache,
    TooManyRounds,
    client_capabilities,
    encode_request,
)
from mrtr_kit.client.cache import cache_key, fresh_for_ms, may_cache
from mrtr_kit.client.call import DEFAULT_MAX_ROUNDS
from mrtr_kit.client.factory import choose_version
from mrtr_kit.client.results import Complete, NeedsInput, interpret_result, result_of
from mrtr_kit.client.steps import AnswerThese, Done, Resend, state_only_delay
from mrtr_kit.client.transitions import TRANSITIONS, Event, IllegalTransition, next_status
from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    MRTR_METHODS,
)

FORM = {
    "method": "elicitation/create",
    "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
ACCEPT = {"action": "accept", "content": {"name": "Ann"}}


def irr(requests: dict | None = None, state: str | None = None) -> dict:
    result: dict = {"resultType": "input_required"}
    if requests is not None:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


def reply(request: dict, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def factory(**kw) -> RequestFactory:
    return RequestFactory(capabilities=client_capabilities(form=True), **kw)


def started(result: dict, **kw) -> tuple[MrtrCall, dict]:
    """A tools/call whose first round got ``result``."""
    call = MrtrCall.tool(factory(), "book", {"party": 4}, **kw)
    first = call.first_request()
    call.receive(reply(first, result))
    return call, first


# --- every request: ids and _meta ------------------------------------------------------------


def test_core_10_every_request_has_meta_with_version_capabilities_and_client_info():
    """CORE-10 / CORE-12: _meta with protocolVersion, clientCapabilities, clientInfo."""
    req = factory().request("tools/list")
    meta = req["params"]["_meta"]
    assert meta[META_PROTOCOL_VERSION] == "2026-07-28"
    assert meta[META_CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}
    assert meta[META_CLIENT_INFO]["name"] == "mrtr-kit-client"


def test_core_12_client_info_can_be_switched_off():
    """CORE-12: clientInfo is a SHOULD 'unless configured not to'."""
    meta = RequestFactory(client_info=None).request("tools/list")["params"]["_meta"]
    assert META_CLIENT_INFO not in meta


def test_meta_objects_are_fresh_for_each_request():
    """CORE-10: a new _meta every time; mutating one request cannot change the next."""
    f = factory()
    first = f.request("tools/list")
    first["params"]["_meta"][META_CLIENT_CAPABILITIES]["sampling"] = {}
    second = f.request("tools/list")
    assert second["params"]["_meta"][META_CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}


def test_extra_meta_cannot_override_required_keys():
    """CORE-10: protocolVersion and clientCapabilities are the client's own business."""
    f = factory()
    assert f.request("x", extra_meta={"progressToken": "p"})["params"]["_meta"]["progressToken"]
    with pytest.raises(ValueError):
        f.request("x", extra_meta={META_PROTOCOL_VERSION: "1999-01-01"})


def test_capabilities_are_json_objects():
    """§2.9 / CAP-3: capability values are objects ({}), elicitation only with a mode."""
    assert client_capabilities() == {}
    assert client_capabilities(form=True, url=True, sampling=True, roots=True) == {
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
        "roots": {},
    }
    with pytest.raises(ValueError):
        RequestFactory(capabilities={"roots": True})


def test_core_3_ids_are_never_reused():
    """CORE-3: every request of a client gets a new id."""
    f = factory()
    ids = [f.request("tools/list")["id"] for _ in range(5)]
    assert len(set(ids)) == 5


# --- reading results -----------------------------------------------------------------------------


def test_rt_2_missing_result_type_is_complete():
    """RT-2: a result without resultType is complete (legacy servers), never retried."""
    outcome = interpret_result("tools/call", {"content": []})
    assert isinstance(outcome, Complete)
    call, _ = started({"content": [{"type": "text", "text": "ok"}]})
    assert call.is_complete and call.result is not None
    with pytest.raises(RuntimeError):
        call.retry_request({})


def test_rt_3_unknown_result_type_is_a_protocol_violation():
    """RT-3: any other resultType (no extension negotiated) is invalid."""
    with pytest.raises(ProtocolViolation, match="RT-3"):
        interpret_result("tools/call", {"resultType": "task"})


@pytest.mark.parametrize("method", ["tools/list", "server/discover", "prompts/list"])
def test_mrtr_r3_input_required_on_other_methods_is_a_protocol_violation(method):
    """MRTR-R3: input_required outside tools/call, prompts/get, resources/read -> error."""
    with pytest.raises(ProtocolViolation, match="MRTR-R3"):
        interpret_result(method, irr({"k": FORM}, "s"))


@pytest.mark.parametrize("method", sorted(MRTR_METHODS))
def test_mrtr_r1_input_required_is_read_on_the_three_methods(method):
    """MRTR-R1: tools/call, prompts/get and resources/read may answer input_required."""
    assert isinstance(interpret_result(method, irr({"k": FORM})), NeedsInput)


@pytest.mark.parametrize("result", [irr(), irr({}), {"resultType": "input_required"}])
def test_mrtr_s6_input_required_with_nothing_is_a_protocol_violation(result):
    """MRTR-S6: an InputRequiredResult with neither inputRequests nor requestState."""
    with pytest.raises(ProtocolViolation, match="MRTR-S6"):
        interpret_result("tools/call", result)


def test_mrtr_s2b_unknown_input_request_method_is_a_protocol_violation():
    """MRTR-S2b: input requests are elicitation/create, sampling/createMessage, roots/list."""
    with pytest.raises(ProtocolViolation, match="MRTR-S2b"):
        interpret_result("tools/call", irr({"k": {"method": "ping", "params": {}}}))


def test_request_state_must_be_a_string():
    """§4.2: requestState is a string; null or a number is not echoed, it is refused."""
    for bad in (None, 42, {"a": 1}):
        result = {"resultType": "input_required", "inputRequests": {"k": FORM}}
        result["requestState"] = bad
        with pytest.raises(ProtocolViolation):
            interpret_result("tools/call", result)


def test_err_4_remote_errors_keep_code_message_and_data():
    """ERR-4: a peer's error keeps its code/message/data and is a different class from local
    failures."""
    response = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "m", "data": [1]}}
    with pytest.raises(McpRemoteError) as info:
        result_of(response, http_status=200)
    assert (info.value.code, info.value.message, info.value.data) == (-32602, "m", [1])
    assert info.value.http_status == 200
    for local in (ProtocolViolation, TooManyRounds, InvalidAnswers, NoMutualVersion):
        assert issubclass(local, McpClientError) and not issubclass(local, McpRemoteError)


# --- one call across rounds ----------------------------------------------------------------------


def test_mrtr_c2_request_state_is_echoed_as_the_very_same_string():
    """MRTR-C2: the retry carries exactly the received requestState — the same object, not a
    parsed or re-serialised copy (it looks like JSON with odd spacing on purpose)."""
    state = '{"nonce" : "é\\u00e9",  "originalId":1 }'
    call, _ = started(irr({"confirm": FORM}, state))
    retry = call.retry_request({"confirm": ACCEPT})
    assert retry["params"]["requestState"] is state


def test_mrtr_c2_no_request_state_means_the_key_is_absent_not_null():
    """MRTR-C2: no requestState in the result -> no requestState key at all on the retry."""
    call, _ = started(irr({"confirm": FORM}))
    retry = call.retry_request({"confirm": ACCEPT})
    assert "requestState" not in retry["params"]
    assert retry["params"]["inputResponses"] == {"confirm": ACCEPT}


def test_mrtr_c2_each_round_echoes_the_latest_state_only():
    """MRTR-C2: round 3 echoes round 2's state, not round 1's; a round without state drops it."""
    call, _ = started(irr({"a": FORM}, "S1"))
    second = call.retry_request({"a": ACCEPT})
    call.receive(reply(second, irr({"b": FORM}, "S2")))
    third = call.retry_request({"b": ACCEPT})
    assert third["params"]["requestState"] == "S2"
    call.receive(reply(third, irr({"c": FORM})))
    fourth = call.retry_request({"c": ACCEPT})
    assert "requestState" not in fourth["params"]


def test_mrtr_c3_every_retry_has_a_new_id():
    """MRTR-C3: each round is a separate request with a different JSON-RPC id."""
    call, first = started(irr({"a": FORM}, "S1"))
    second = call.retry_request({"a": ACCEPT})
    call.receive(reply(second, irr({"b": FORM}, "S2")))
    third = call.retry_request({"b": ACCEPT})
    assert len({first["id"], second["id"], third["id"]}) == 3


def test_mrtr_c5_retry_repeats_method_name_and_arguments_with_fresh_meta():
    """MRTR-C5 / CORE-10: same method, name and arguments every round, plus a fresh _meta —
    even if the caller mutates the arguments dict it passed in."""
    arguments = {"party": 4, "tags": ["quiet"]}
    call = MrtrCall.tool(factory(), "book", arguments)
    first = call.first_request()
    arguments["party"] = 99  # a later change by the caller must not leak into the retry
    arguments["tags"].append("late")  # not even deep inside
    first["params"]["arguments"]["tags"].append("x")  # nor a change to an earlier request
    call.receive(reply(first, irr({"k": FORM}, "S")))
    retry = call.retry_request({"k": ACCEPT})
    assert retry["method"] == "tools/call"
    assert retry["params"]["name"] == "book"
    assert retry["params"]["arguments"] == {"party": 4, "tags": ["quiet"]}
    assert retry["params"]["_meta"] == first["params"]["_meta"]
    assert retry["params"]["_meta"] is not first["params"]["_meta"]


def test_mrtr_c5_resource_and_prompt_retries_keep_uri_and_name():
    """MRTR-C5: resources/read repeats its uri, prompts/get its name and arguments."""
    f = factory()
    for call, key, value in (
        (MrtrCall.resource(f, "kit://x"), "uri", "kit://x"),
        (MrtrCall.prompt(f, "p", {"topic": "t"}), "arguments", {"topic": "t"}),
    ):
        first = call.first_request()
        call.receive(reply(first, irr({"k": FORM})))
        assert call.retry_request({"k": ACCEPT})["params"][key] == value


def test_mrtr_c1_a_missing_answer_refuses_the_retry():
    """MRTR-C1 / MRTR-C6: every requested key must be answered; otherwise nothing is built
    and the call still waits for answers."""
    call, _ = started(irr({"a": FORM, "b": FORM}, "S"))
    with pytest.raises(InvalidAnswers) as info:
        call.retry_request({"a": ACCEPT})
    assert info.value.missing == ["b"]
    assert call.status is CallStatus.INPUT_REQUIRED and call.rounds == 1
    with pytest.raises(InvalidAnswers):
        call.retry_request(None)


def test_mrtr_c1_state_only_result_may_be_retried_straight_away():
    """MRTR-C1: without inputRequests the client may retry at once: no inputResponses key."""
    call, _ = started(irr(state="S"))
    assert call.input_required is not None and call.input_required.is_state_only
    retry = call.retry_request()
    assert retry["params"]["requestState"] == "S"
    assert "inputResponses" not in retry["params"]


def test_mrtr_c6_extra_keys_are_refused_and_old_answers_not_resent():
    """MRTR-C6: answers cover exactly the latest inputRequests; earlier rounds' answers are
    not re-sent (the server keeps them in requestState)."""
    call, _ = started(irr({"a": FORM}, "S1"))
    with pytest.raises(InvalidAnswers) as info:
        call.retry_request({"a": ACCEPT, "zzz": ACCEPT})
    assert info.value.unexpected == ["zzz"]
    second = call.retry_request({"a": ACCEPT})
    call.receive(reply(second, irr({"b": FORM}, "S2")))
    third = call.retry_request({"b": {"action": "accept", "content": {"name": "Bo"}}})
    assert set(third["params"]["inputResponses"]) == {"b"}


def test_answers_must_be_objects_and_models_are_serialised():
    """§4.3: inputResponses values are result objects; pydantic answers become wire dicts."""
    call, _ = started(irr({"a": FORM}))
    with pytest.raises(InvalidAnswers):
        call.retry_request({"a": "yes"})
    retry = call.retry_request({"a": ElicitResult(action="accept", content={"name": "Ann"})})
    assert retry["params"]["inputResponses"] == {"a": ACCEPT}


def test_mrtr_c8_decline_and_cancel_are_answers():
    """MRTR-C8: declining is not failing — the retry carries {"action": "decline"}."""
    for action in ("decline", "cancel"):
        call, _ = started(irr({"a": FORM}, "S"))
        retry = call.retry_request({"a": ElicitResult(action=action)})
        assert retry["params"]["inputResponses"] == {"a": {"action": action}}


def test_mrtr_c4_state_stays_with_its_own_call():
    """MRTR-C4: two interleaved calls on one client each echo only their own state, and an
    unrelated request carries no inputResponses or requestState at all."""
    f = factory()
    one, two = MrtrCall.tool(f, "t", {"n": 1}), MrtrCall.tool(f, "t", {"n": 2})
    r1, r2 = one.first_request(), two.first_request()
    one.receive(reply(r1, irr({"k": FORM}, "STATE-ONE")))
    two.receive(reply(r2, irr({"k": FORM}, "STATE-TWO")))
    unrelated = f.request("tools/call", {"name": "other", "arguments": {}})
    retry_two = two.retry_request({"k": ACCEPT})
    retry_one = one.retry_request({"k": ACCEPT})
    assert retry_one["params"]["requestState"] == "STATE-ONE"
    assert retry_two["params"]["requestState"] == "STATE-TWO"
    assert "inputResponses" not in unrelated["params"]
    assert "requestState" not in unrelated["params"]


def test_mrtr_c7_round_limit_raises_too_many_rounds():
    """MRTR-C7: a server that never stops asking hits the round limit (default 10)."""
    assert DEFAULT_MAX_ROUNDS == 10
    call = MrtrCall.tool(factory(), "loop", max_rounds=3)
    request = call.first_request()
    for _ in range(2):
        call.receive(reply(request, irr({"k": FORM}, "S")))
        request = call.retry_request({"k": ACCEPT})
    call.receive(reply(request, irr({"k": FORM}, "S")))
    with pytest.raises(TooManyRounds, match="3 rounds"):
        call.retry_request({"k": ACCEPT})
    assert call.rounds == 3


def test_mrtr_c7_state_only_rounds_back_off():
    """MRTR-C7: growing pauses between state-only rounds, capped."""
    delays = [state_only_delay(n, base_s=0.1, cap_s=1.0) for n in range(1, 7)]
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert state_only_delay(0) == 0.0


def test_mrtr_c9_results_of_rounds_with_inputs_are_never_cacheable():
    """MRTR-C9 / CACHE-2 / CACHE-3: input_required results and results of requests carrying
    inputResponses or requestState may not be cached, even for resources/read."""
    f = factory()
    listing = f.request("tools/list")
    assert may_cache(listing, Complete({"tools": []}))
    read = MrtrCall.resource(f, "kit://r")
    first = read.first_request()
    assert may_cache(first, Complete({"contents": []}))
    assert not may_cache(first, NeedsInput({"k": FORM}, "S", irr({"k": FORM}, "S")))
    read.receive(reply(first, irr({"k": FORM}, "S")))
    retry = read.retry_request({"k": ACCEPT})
    assert not may_cache(retry, Complete({"contents": [], "ttlMs": 60000}))
    state_only = dict(
        retry, params={k: v for k, v in retry["params"].items() if k != "inputResponses"}
    )
    assert not may_cache(state_only, Complete({"contents": []}))
    tool = f.request("tools/call", {"name": "t"})
    assert not may_cache(tool, Complete({"content": []}))  # CACHE-6


def test_error_response_fails_the_call_and_resend_keeps_the_round():
    """VER-2 / HTTP-26: after an error the same round can be re-sent under a fresh id."""
    call = MrtrCall.tool(factory(), "t")
    first = call.first_request()
    error = {"jsonrpc": "2.0", "id": first["id"], "error": {"code": -32603, "message": "x"}}
    with pytest.raises(McpRemoteError):
        call.receive(error)
    assert call.status is CallStatus.FAILED
    again = call.resend_request()
    assert again["id"] != first["id"] and call.rounds == 1
    assert again["params"]["name"] == "t"


def test_receive_checks_the_response_id():
    """CORE-4: a response must echo the id of the request it answers."""
    call = MrtrCall.tool(factory(), "t")
    first = call.first_request()
    with pytest.raises(ProtocolViolation):
        call.receive({"jsonrpc": "2.0", "id": first["id"] + 100, "result": {}})


def test_call_params_reject_reserved_keys():
    """MRTR-C2 / MRTR-C4: answers and state come only from the call itself."""
    with pytest.raises(ValueError):
        MrtrCall(factory(), "tools/call", {"name": "t", "requestState": "stolen"})
    with pytest.raises(ValueError):
        MrtrCall(factory(), "tools/list", {})


# --- version negotiation ---------------------------------------------------------------------


def version_error(supported) -> McpRemoteError:
    return McpRemoteError(-32022, "Unsupported protocol version", {"supported": supported})


def test_ver_2_choose_a_mutually_supported_version():
    """VER-2: the first of our versions that the server lists."""
    ours = ("2027-01-01", "2026-07-28")
    assert choose_version(version_error(["2025-11-25", "2026-07-28"]), ours) == "2026-07-28"
    assert choose_version(version_error(["2026-07-28"]), ("2026-07-28",)) == "2026-07-28"


def test_ver_2_no_mutual_version_is_reported():
    """VER-2: 'or reports an error if none fits'."""
    with pytest.raises(NoMutualVersion):
        choose_version(version_error(["2025-11-25"]), ("2026-07-28",))
    with pytest.raises(ProtocolViolation):
        choose_version(McpRemoteError(-32022, "x", {"requested": "y"}), ("2026-07-28",))


# --- issue 8: request bytes and what a caching client keeps ---------------------------------


def test_core_1_mrtr_c2_request_bytes_are_utf8_and_echo_a_lone_surrogate_exactly():
    """CORE-1 / MRTR-C2: a body is UTF-8 JSON; non-ASCII text goes as UTF-8, and a received
    state holding a lone surrogate goes back as the same escape (json.loads gives the very
    string back), never as a bare UnicodeEncodeError."""
    f = factory()
    plain = f.request("tools/call", {"name": "café"})
    assert "café".encode() in encode_request(plain)
    odd = "tok\ud800en"
    call, _first = started(irr({"k": FORM}, odd))
    body = encode_request(call.retry_request({"k": ACCEPT}))
    body.decode("utf-8")
    assert json.loads(body)["params"]["requestState"] == odd


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), b"bytes", {1, 2}])
def test_core_1_a_request_json_cannot_carry_is_a_clear_client_error(bad):
    """CORE-1: NaN/Infinity would go out as non-JSON tokens; the client refuses instead."""
    request = factory().request("tools/call", {"name": "t", "arguments": {"x": bad}})
    with pytest.raises(NotJson, match="tools/call"):
        encode_request(request)


def test_cache_4_the_key_is_method_plus_the_params_that_change_the_result():
    """CACHE-4: same method and uri/cursor -> same key (ids and _meta do not count); another
    method, uri or cursor -> another key, so a cached result is never served for them."""
    f = factory()
    a1, a2 = (
        f.request("resources/read", {"uri": "kit://a"}),
        f.request("resources/read", {"uri": "kit://a"}),
    )
    assert a1["id"] != a2["id"] and cache_key(a1) == cache_key(a2)
    keys = {
        cache_key(f.request("resources/read", {"uri": "kit://b"})),
        cache_key(a1),
        cache_key(f.request("tools/list")),
        cache_key(f.request("tools/list", {"cursor": ""})),
        cache_key(f.request("tools/list", {"cursor": "2"})),
        cache_key(f.request("prompts/list")),
        cache_key(f.request("server/discover")),
    }
    assert len(keys) == 7 and None not in keys
    assert cache_key(f.request("tools/call", {"name": "t"})) is None  # CACHE-6


@pytest.mark.parametrize(
    ("ttl", "fresh"), [(5000, 5000), (0, 0), (None, 0), (-1, 0), (True, 0), ("60", 0)]
)
def test_cache_5_ttl_is_read_defensively(ttl, fresh):
    """CACHE-5: absent, non-integer or negative ttlMs count as 0: stale at once."""
    result = {"tools": []} if ttl is None else {"tools": [], "ttlMs": ttl}
    assert fresh_for_ms(result) == fresh


def test_cache_4_5_result_cache_serves_only_fresh_results_for_the_same_request():
    """CACHE-4 / CACHE-5 / CACHE-3: fresh while now < received + ttlMs; never for another
    request; never a result of a retry or an input_required result."""
    clock = [1000.0]
    cache = ResultCache(now=lambda: clock[0])
    f = factory()
    listing = f.request("tools/list")
    assert cache.store(listing, Complete({"tools": ["t"], "ttlMs": 500}))
    assert cache.lookup(f.request("tools/list")) == {"tools": ["t"], "ttlMs": 500}
    assert cache.lookup(f.request("prompts/list")) is None
    assert cache.lookup(f.request("tools/list", {"cursor": "2"})) is None
    clock[0] = 1499.0
    assert cache.lookup(f.request("tools/list")) is not None
    clock[0] = 1500.0
    assert cache.lookup(f.request("tools/list")) is None  # stale at received + ttlMs
    assert not cache.store(listing, Complete({"tools": [], "ttlMs": 0}))
    assert not cache.store(listing, Complete({"tools": [], "ttlMs": -5}))
    assert not cache.store(listing, Complete({"tools": []}))  # absent: 0
    read = MrtrCall.resource(f, "kit://r")
    first = read.first_request()
    assert not cache.store(first, NeedsInput({"k": FORM}, "S", irr({"k": FORM}, "S")))
    read.receive(reply(first, irr({"k": FORM}, "S")))
    retry = read.retry_request({"k": ACCEPT})
    assert not cache.store(retry, Complete({"contents": [], "ttlMs": 60000}))
    assert cache.lookup(first) is None


# --- the call's state machine: one table (client/transitions.py) ------------------------------

# The life of a call as the rules read, written out apart from the code: (state, event) -> next.
LIFE_OF_A_CALL = {
    (CallStatus.NEW, Event.FIRST_REQUEST): CallStatus.AWAITING,  # MRTR-C5, CORE-3
    (CallStatus.AWAITING, Event.RESPONSE): CallStatus.AWAITING,  # CORE-4
    (CallStatus.AWAITING, Event.UNSUPPORTED_VERSION): CallStatus.AWAITING,  # VER-2
    (CallStatus.AWAITING, Event.ERROR): CallStatus.FAILED,  # ERR-4, RT-3, MRTR-R3, MRTR-S6
    (CallStatus.AWAITING, Event.COMPLETE): CallStatus.COMPLETE,  # RT-2
    (CallStatus.AWAITING, Event.INPUT_REQUIRED): CallStatus.INPUT_REQUIRED,  # MRTR-C1
    (CallStatus.INPUT_REQUIRED, Event.RETRY): CallStatus.AWAITING,  # MRTR-C1..C3, MRTR-C5
    (CallStatus.AWAITING, Event.RESEND): CallStatus.AWAITING,  # HTTP-26, HTTP-14
    (CallStatus.FAILED, Event.RESEND): CallStatus.AWAITING,  # HTTP-26
}
ALL_PAIRS = [(status, event) for status in CallStatus for event in Event]


def test_mrtr_c1_c3_the_call_moves_by_exactly_the_table_of_its_rules():
    """MRTR-C1 / MRTR-C3 / VER-2 / HTTP-26: the transition table is the life of a call and
    nothing else: round 1, a response read, a version resend, an error, a result, the input
    the server asks for, the retry with a new id, the same round resent. COMPLETE is final."""
    assert TRANSITIONS == LIFE_OF_A_CALL
    for (status, event), after in LIFE_OF_A_CALL.items():
        assert next_status(status, event) is after


@pytest.mark.parametrize(
    ("status", "event"), [pair for pair in ALL_PAIRS if pair not in LIFE_OF_A_CALL]
)
def test_mrtr_c3_an_event_the_table_does_not_list_is_an_illegal_transition(status, event):
    """MRTR-C3 / MRTR-C7: a pair missing from the table raises ``IllegalTransition`` (a
    RuntimeError, not an McpClientError: the driver's bug, not the server's), naming what was
    tried and the call's state, so no round is sent twice and a finished call sends nothing."""
    with pytest.raises(IllegalTransition) as caught:
        next_status(status, event)
    error = caught.value
    assert isinstance(error, RuntimeError) and not isinstance(error, McpClientError)
    assert (error.status, error.event) == (status, event)
    words = {
        Event.FIRST_REQUEST: "first_request() was already called for this call",
        Event.RESPONSE: f"no request is awaiting a response: the call is {status}",
        Event.RETRY: f"nothing to retry: the call is {status.value}",
        Event.RESEND: f"nothing to resend: the call is {status.value}",
    }
    expected = words.get(event, f"{event.name} cannot happen to a call that is {status.value}")
    assert str(error) == expected


def test_mrtr_c3_c5_a_call_walks_every_row_of_the_table():
    """MRTR-C3 / MRTR-C5 / VER-2 / HTTP-26: one call driven through every transition the
    table has; its status after each is the table's, and every request has a new id."""
    call = MrtrCall.tool(factory(), "book", {"party": 4})
    assert call.status is CallStatus.NEW
    first = call.first_request()  # NEW -FIRST_REQUEST-> AWAITING
    assert call.status is CallStatus.AWAITING
    again = call.resend_request()  # AWAITING -RESEND-> AWAITING (HTTP-26)
    assert call.status is CallStatus.AWAITING and call.rounds == 1
    step = call.receive(reply(again, irr({"k": FORM})))  # -> INPUT_REQUIRED (MRTR-C1)
    assert call.status is CallStatus.INPUT_REQUIRED and isinstance(step, AnswerThese)
    retry = call.retry_request({"k": ACCEPT})  # INPUT_REQUIRED -RETRY-> AWAITING
    assert call.status is CallStatus.AWAITING and call.rounds == 2
    version = {"code": -32022, "message": "no", "data": {"supported": ["2026-07-28"]}}
    step = call.receive({"jsonrpc": "2.0", "id": retry["id"], "error": version})  # VER-2
    assert call.status is CallStatus.AWAITING and isinstance(step, Resend)
    resent = step.request
    with pytest.raises(McpRemoteError):  # a second -32022: AWAITING -ERROR-> FAILED
        call.receive({"jsonrpc": "2.0", "id": resent["id"], "error": version})
    assert call.status is CallStatus.FAILED and call.step is None
    last = call.resend_request()  # FAILED -RESEND-> AWAITING
    assert call.status is CallStatus.AWAITING and call.rounds == 2
    step = call.receive(reply(last, {"content": []}))  # AWAITING -COMPLETE-> COMPLETE (RT-2)
    assert call.status is CallStatus.COMPLETE and isinstance(step, Done)
    ids = [r["id"] for r in (first, again, retry, resent, last)]
    assert len(set(ids)) == len(ids)
    for action in (
        call.first_request,
        call.resend_request,
        lambda: call.retry_request({}),
        lambda: call.receive(reply(last, {"content": []})),
    ):
        with pytest.raises(IllegalTransition):
            action()
    assert call.status is CallStatus.COMPLETE


def test_mrtr_c7_a_transition_whose_work_fails_leaves_the_state_as_it_was():
    """MRTR-C7 / MRTR-C6 / CORE-10: a retry refused for its answers or for the round limit,
    and a first request whose _meta cannot be built, change nothing: the call can still be
    answered (or fixed) and sent."""
    call, _ = started(irr({"k": FORM}), max_rounds=2)
    with pytest.raises(InvalidAnswers):
        call.retry_request({})
    assert call.status is CallStatus.INPUT_REQUIRED and call.rounds == 1
    retry = call.retry_request({"k": ACCEPT})
    call.receive(reply(retry, irr({"k": FORM})))
    with pytest.raises(TooManyRounds):
        call.retry_request({"k": ACCEPT})
    assert call.status is CallStatus.INPUT_REQUIRED and call.rounds == 2
    broken = MrtrCall.tool(factory(), "book", meta={META_PROTOCOL_VERSION: "1999-01-01"})
    with pytest.raises(ValueError, match="CORE-10"):
        broken.first_request()
    assert broken.status is CallStatus.NEW


def test_mrtr_c3_a_response_with_the_wrong_id_leaves_the_call_waiting():
    """CORE-4 / MRTR-C3: a response that echoes another id is a protocol violation, but the
    request is still out: the call keeps waiting for its own response."""
    call = MrtrCall.tool(factory(), "book")
    first = call.first_request()
    with pytest.raises(ProtocolViolation):
        call.receive({"jsonrpc": "2.0", "id": first["id"] + 100, "result": {}})
    assert call.status is CallStatus.AWAITING
    assert isinstance(call.receive(reply(first, {"content": []})), Done)
