"""The client's round logic (client/call.py and the modules it uses): promises of its public
API that no other test pinned, found by the mutants ``tools/mutate.py`` saw survive. Each test
names the deliberate bug it catches. Plain dicts, no I/O.
"""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from mrtr_kit.client import (
    CallStatus,
    McpRemoteError,
    MrtrCall,
    ProtocolViolation,
    RequestFactory,
    ResultCache,
    TooManyRounds,
)
from mrtr_kit.client.cache import cache_key, may_cache
from mrtr_kit.client.factory import choose_version
from mrtr_kit.client.results import Complete, NeedsInput, interpret_result, result_of
from mrtr_kit.client.steps import state_only_delay
from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
)
from mrtr_kit.protocol.models import CreateMessageResult, Implementation, TextContent

FORM = {
    "method": "elicitation/create",
    "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
SAMPLE = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 10}}
ACCEPT = {"action": "accept", "content": {"name": "Ann"}}


def reply(request: dict, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def asking(request: dict, requests: dict, state: str | None = "s1") -> dict:
    result = {"resultType": "input_required", "inputRequests": requests}
    if state is not None:
        result["requestState"] = state
    return reply(request, result)


def done(request: dict) -> dict:
    return reply(request, {"resultType": "complete", "content": []})


# --- requests and _meta ----------------------------------------------------------------------


def test_core_10_core_12_no_two_requests_share_a_mutable_part_of_meta():
    """CORE-10 / CORE-12: every request gets its own ``_meta``; a transport that edits one
    request (adds a header hint, redacts client info) never changes the next.

    Kills: clientInfo, capabilities or an extra ``_meta`` value put in by reference.
    """
    factory = RequestFactory(
        capabilities={"elicitation": {"form": {}}}, client_info={"name": "n", "version": "1"}
    )
    extra = {"progressToken": {"n": 1}}
    first = factory.request("tools/call", {"name": "t"}, extra)
    meta = first["params"]["_meta"]
    meta[META_CLIENT_INFO]["name"] = "edited"
    meta[META_CLIENT_CAPABILITIES]["elicitation"]["url"] = {}
    meta["progressToken"]["n"] = 2
    second = factory.request("tools/call", {"name": "t"}, extra)["params"]["_meta"]
    assert second[META_CLIENT_INFO] == {"name": "n", "version": "1"}
    assert second[META_CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}
    assert second["progressToken"] == {"n": 1} and extra == {"progressToken": {"n": 1}}


def test_core_10_a_factory_keeps_its_own_copy_of_what_it_was_given():
    """CORE-10: the capabilities a client declares are the ones it was built with; changing
    the dicts passed in afterwards does not change later requests.

    Kills: ``dict(capabilities ...)`` and ``dict(client_info)`` dropped in the factory.
    """
    caps = {"elicitation": {"form": {}}}
    info = {"name": "n", "version": "1"}
    factory = RequestFactory(capabilities=caps, client_info=info)
    caps["roots"] = {}
    info["name"] = "changed"
    meta = factory.meta()
    assert meta[META_CLIENT_CAPABILITIES] == {"elicitation": {"form": {}}}
    assert meta[META_CLIENT_INFO] == {"name": "n", "version": "1"}


def test_core_12_client_info_from_a_model_goes_out_with_wire_names():
    """CORE-12: ``clientInfo`` built from an ``Implementation`` model uses the wire's field
    names (``websiteUrl``), not Python's.

    Kills: ``by_alias=True`` turned into ``False`` when the factory dumps the model.
    """
    info = Implementation(name="kit", version="1", website_url="https://example.org")
    meta = RequestFactory(client_info=info).meta()
    assert meta[META_CLIENT_INFO] == {
        "name": "kit",
        "version": "1",
        "websiteUrl": "https://example.org",
    }


def test_core_10_params_cannot_replace_the_required_meta():
    """CORE-10: ``protocolVersion`` and ``clientCapabilities`` are always the client's own; a
    ``_meta`` passed inside ``params`` is ignored, not sent instead.

    Kills: the ``k != "_meta"`` filter dropped, or comparing against ``""``.
    """
    sent = RequestFactory().request("tools/list", {"_meta": {"x": 1}, "cursor": "c"})
    assert sent["params"]["cursor"] == "c"
    meta = sent["params"]["_meta"]
    assert meta[META_PROTOCOL_VERSION] == PROTOCOL_VERSION and "x" not in meta


@pytest.mark.parametrize("key", ["_meta", "inputResponses", "requestState"])
def test_mrtr_c2_a_call_refuses_params_that_each_round_adds_itself(key):
    """MRTR-C2 / MRTR-C5: answers, state and ``_meta`` are added by each round; passed in the
    original params they would go out on round 1 (a state the server never sent). Refused.

    Kills: "_meta" or "inputResponses" emptied in RESERVED_CALL_PARAMS.
    """
    with pytest.raises(ValueError, match="must not contain"):
        MrtrCall(RequestFactory(), "tools/call", {"name": "t", key: {}})


# --- reading results -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "result",
    [[1], "complete", None],
    ids=["list", "string", "null"],
)
def test_core_4_a_result_that_is_not_an_object_is_a_protocol_violation(result):
    """CORE-4: a result response has a ``result`` object; anything else is refused clearly.

    Kills: the two "not an object" raises removed (result_of, interpret_result).
    """
    with pytest.raises(ProtocolViolation):
        result_of({"jsonrpc": "2.0", "id": 1, "result": result})
    with pytest.raises(ProtocolViolation):
        interpret_result("tools/call", result)


@pytest.mark.parametrize(
    "requests",
    [["k"], {"k": "elicitation/create"}, {"k": ["elicitation/create"]}],
    ids=["list", "string-value", "list-value"],
)
def test_mrtr_s2b_input_requests_of_the_wrong_shape_are_a_protocol_violation(requests):
    """MRTR-S2 / MRTR-S2b: ``inputRequests`` is a map of request objects; a list, or a value
    that is not an object, is a protocol violation - never a crash of the client.

    Kills: the "inputRequests must be an object" raise removed; the ``isinstance(request,
    dict)`` check dropped.
    """
    with pytest.raises(ProtocolViolation):
        interpret_result("tools/call", {"resultType": "input_required", "inputRequests": requests})


def test_core_4_an_error_without_an_id_is_the_servers_error_not_a_mismatch():
    """CORE-4: a server that could not read the request's id answers without one; the client
    reports that error (code and message), not an id mismatch.

    Kills: ``rid is not None and`` dropped from the id check in ``receive``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    call.first_request()
    response = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    with pytest.raises(McpRemoteError) as raised:
        call.receive(response)
    assert raised.value.code == -32700 and call.status is CallStatus.FAILED


def test_rt_3_a_protocol_violation_fails_the_call():
    """RT-3: an unknown ``resultType`` is invalid; the call is FAILED (and may be resent),
    not left waiting for a response that already came.

    Kills: ProtocolViolation dropped from the ``except`` that marks the call failed.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    first = call.first_request()
    with pytest.raises(ProtocolViolation):
        call.receive(reply(first, {"resultType": "partial"}))
    assert call.status is CallStatus.FAILED
    assert call.resend_request()["params"]["name"] == "t"


# --- one call across rounds ------------------------------------------------------------------


def test_mrtr_c7_a_one_round_limit_is_allowed_and_zero_is_not():
    """MRTR-C7 (KIT limit): ``max_rounds=1`` means the first request only; 0 is refused.

    Kills: ``max_rounds < 1`` turned into ``<= 1`` or ``< 0``; its raise removed.
    """
    call = MrtrCall.tool(RequestFactory(), "t", max_rounds=1)
    first = call.first_request()
    call.receive(asking(first, {"k": FORM}))
    with pytest.raises(TooManyRounds):
        call.retry_request({"k": ACCEPT})
    with pytest.raises(ValueError, match="at least 1"):
        MrtrCall.tool(RequestFactory(), "t", max_rounds=0)


def test_mrtr_c7_a_new_call_has_sent_no_round_and_has_no_outcome():
    """MRTR-C7: ``rounds`` counts the rounds sent (0 before the first), and a new call has no
    result and nothing to answer yet.

    Kills: ``self.rounds = 0`` removed or set to 1; ``self.outcome = None`` removed.
    """
    call = MrtrCall.resource(RequestFactory(), "file:///a")
    assert call.rounds == 0 and call.result is None and call.input_required is None
    assert call.status is CallStatus.NEW
    call.first_request()
    assert call.rounds == 1


@pytest.mark.parametrize(
    ("make", "target"),
    [
        (lambda f: MrtrCall.tool(f, "get_weather"), "get_weather"),
        (lambda f: MrtrCall.prompt(f, "greet"), "greet"),
        (lambda f: MrtrCall.resource(f, "file:///notes.txt"), "file:///notes.txt"),
    ],
    ids=["tool", "prompt", "resource"],
)
def test_mrtr_c5_a_call_knows_its_target(make, target):
    """MRTR-C5: the target every round repeats is the tool or prompt name, or the resource
    URI (also what TooManyRounds reports).

    Kills: "resources/read" or "uri" emptied in ``MrtrCall.target``.
    """
    assert make(RequestFactory()).target == target


def test_mrtr_c5_params_are_a_copy_and_any_mapping_will_do():
    """MRTR-C5: the call keeps a private copy of its params: what ``params`` returns and what
    the caller passed can be changed without changing the next round. Read-only mappings
    (``MappingProxyType``) are accepted for params, arguments and extra ``_meta``.

    Kills: ``dict(...)`` dropped before the deep copy of params, of tool or prompt arguments,
    or of the extra ``_meta``; ``params`` returned without a copy.
    """
    factory = RequestFactory()
    args = MappingProxyType({"city": "Paris"})
    meta = {"progressToken": "p1"}
    call = MrtrCall.tool(factory, "w", args, meta=meta)
    prompt = MrtrCall.prompt(factory, "p", MappingProxyType({"tone": "dry"}))
    raw = MrtrCall(factory, "resources/read", MappingProxyType({"uri": "file:///a"}))
    view = call.params
    view["arguments"]["city"] = "Rome"
    meta["progressToken"] = "p2"
    first = call.first_request()
    assert first["params"]["arguments"] == {"city": "Paris"}
    assert first["params"]["_meta"]["progressToken"] == "p1"
    assert call.params == {"name": "w", "arguments": {"city": "Paris"}}
    assert prompt.first_request()["params"]["arguments"] == {"tone": "dry"}
    assert raw.first_request()["params"]["uri"] == "file:///a"


def test_mrtr_c6_a_resend_repeats_the_round_even_if_the_sent_request_was_edited():
    """MRTR-C6 / HTTP-26: a resend is the same round again; a transport that edited the
    request it sent (say, while logging it) does not change the resend.

    Kills: ``copy.deepcopy`` of the answers dropped in ``_send``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    first = call.first_request()
    call.receive(asking(first, {"k": FORM}))
    retry = call.retry_request({"k": {"action": "accept", "content": {"name": "Ann"}}})
    retry["params"]["inputResponses"]["k"]["content"]["name"] = "edited"
    assert call.resend_request()["params"]["inputResponses"] == {"k": ACCEPT}


def test_mrtr_c6_answers_are_copied_when_the_round_is_built():
    """MRTR-C6: the answers of a round are the ones given when it was built; a caller that
    reuses its answer dict (a form widget's value) must not change a later resend.

    Kills: the ``copy.deepcopy`` of the answers dropped in ``_check_answers``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    first = call.first_request()
    call.receive(asking(first, {"k": FORM}))
    answer = {"action": "accept", "content": {"name": "Ann"}}
    call.retry_request({"k": answer})
    answer["content"]["name"] = "Bob"
    assert call.resend_request()["params"]["inputResponses"] == {"k": ACCEPT}


def test_mrtr_c6_sampling_answers_go_out_with_wire_names():
    """MRTR-C6 / SAMP-1: a ``CreateMessageResult`` answer is sent as the wire's
    ``CreateMessageResult`` (``stopReason``), whatever model object the caller used.

    Kills: ``by_alias=True`` turned into ``False`` in ``answer_to_wire``.
    """
    call = MrtrCall.tool(RequestFactory(capabilities={"sampling": {}}), "t")
    first = call.first_request()
    call.receive(asking(first, {"s": SAMPLE}))
    answer = CreateMessageResult(
        role="assistant", content=TextContent(text="hi"), model="m", stop_reason="endTurn"
    )
    sent = call.retry_request({"s": answer})["params"]["inputResponses"]["s"]
    assert sent["stopReason"] == "endTurn" and "stop_reason" not in sent
    json.dumps(sent)


def test_mrtr_c3_a_round_is_sent_once_then_it_waits_for_its_response():
    """MRTR-C3 / MRTR-C4: after a retry is built the call waits for its response; it cannot
    build another retry from the same answers meanwhile, nor a first request twice, nor take
    a response when none is awaited, nor resend before anything was sent.

    Kills: the status check dropped from ``input_required`` (or its ``and`` made ``or``);
    the "already called", "nothing to resend" and "no request is awaiting" raises removed.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    with pytest.raises(RuntimeError, match="nothing to resend"):
        call.resend_request()
    first = call.first_request()
    with pytest.raises(RuntimeError, match="already called"):
        call.first_request()
    call.receive(asking(first, {"k": FORM}))
    with pytest.raises(RuntimeError, match="no request is awaiting"):
        call.receive(asking(first, {"k": FORM}))
    retry = call.retry_request({"k": ACCEPT})
    assert call.input_required is None
    with pytest.raises(RuntimeError, match="nothing to retry"):
        call.retry_request({"k": ACCEPT})
    call.receive(done(retry))
    assert call.is_complete and call.rounds == 2


# --- helpers for the transport ---------------------------------------------------------------


def test_err_1_ver_2_a_supported_list_with_a_non_string_is_a_protocol_violation():
    """ERR-1 / VER-2: ``data.supported`` of -32022 is a list of strings; one that is not is a
    protocol violation, and an error that is not -32022 is not a version error at all.

    Kills: the "every entry is a string" half of the check dropped; the "not an
    UnsupportedProtocolVersion error" raise removed.
    """
    bad = McpRemoteError(-32022, "Unsupported", {"supported": [PROTOCOL_VERSION, 2025]})
    with pytest.raises(ProtocolViolation):
        choose_version(bad, [PROTOCOL_VERSION])
    other = McpRemoteError(-32602, "Invalid params", {"supported": [PROTOCOL_VERSION]})
    with pytest.raises(ValueError, match="not an UnsupportedProtocolVersion"):
        choose_version(other, [PROTOCOL_VERSION])


def test_mrtr_c9_a_request_without_params_can_still_be_judged():
    """MRTR-C9: ``may_cache`` answers for any request dict, one without ``params`` too.

    Kills: ``or {}`` dropped where ``may_cache`` reads the params.
    """
    assert may_cache({"method": "resources/read"}, Complete({"contents": []})) is True


def test_mrtr_c7_state_only_backoff_defaults_to_50_ms_doubling_up_to_2_s():
    """MRTR-C7 (KIT numbers): without arguments the backoff after state-only results is
    0.05 s, 0.1 s, 0.2 s ... and never more than 2 s.

    Kills: the 0.05 s base or the 2 s cap changed.
    """
    assert [state_only_delay(n) for n in (1, 2, 3)] == [0.05, 0.1, 0.2]
    assert state_only_delay(7) == 2.0 and state_only_delay(50) == 2.0


# --- what a caching client keeps (CACHE-3, CACHE-4, CACHE-5, MRTR-C9) ------------------------


def test_cache_3_a_request_carrying_answers_or_state_has_no_cache_key():
    """CACHE-3 / MRTR-C9: a request that carried ``inputResponses`` or ``requestState`` (each
    alone) has no cache key; a request with no params at all still has one.

    Kills: ``or`` made ``and`` between the two, either half dropped or emptied; ``or {}``
    dropped where the params are read.
    """
    read = {"method": "resources/read", "params": {"uri": "kit://a"}}
    assert cache_key(read) == ("resources/read", "uri", "kit://a")
    answers = {"method": "resources/read", "params": {"uri": "kit://a", "inputResponses": {}}}
    state = {"method": "resources/read", "params": {"uri": "kit://a", "requestState": "s"}}
    assert cache_key(answers) is None and cache_key(state) is None
    assert cache_key({"method": "tools/list"}) == ("tools/list", "cursor", None)


def test_mrtr_c9_cache_2_nothing_uncacheable_is_stored_and_store_says_so():
    """MRTR-C9 / CACHE-2 / CACHE-6: ``store`` keeps neither a tools/call result nor an
    input_required one (even one that wrongly carries ``ttlMs``), and answers False.

    Kills: ``key is None or not may_cache(...)`` with ``and``, or without its second half;
    ``return False`` turned into ``return None``.
    """
    cache = ResultCache(now=lambda: 0.0)
    tool = {"method": "tools/call", "params": {"name": "t"}}
    assert cache.store(tool, Complete({"content": [], "ttlMs": 5000})) is False
    read = {"method": "resources/read", "params": {"uri": "kit://a"}}
    asking_result = {"resultType": "input_required", "requestState": "s", "ttlMs": 5000}
    assert cache.store(read, NeedsInput({}, "s", asking_result)) is False
    assert cache.lookup(read) is None and cache.lookup(tool) is None
    assert cache.store(read, Complete({"contents": [], "ttlMs": 0})) is False


def test_cache_5_a_fresher_ttl_0_answer_evicts_the_cached_one_and_clear_forgets_all():
    """CACHE-5: a newer result for the same request with ``ttlMs: 0`` means "do not reuse":
    the older cached result goes too. ``clear()`` (a list_changed notification) forgets all.

    Kills: the eviction on ttl 0 removed; ``clear()`` doing nothing.
    """
    cache = ResultCache(now=lambda: 0.0)
    listing = {"method": "tools/list", "params": {}}
    read = {"method": "resources/read", "params": {"uri": "kit://a"}}
    assert cache.store(listing, Complete({"tools": [], "ttlMs": 500}))
    assert cache.store(listing, Complete({"tools": [], "ttlMs": 0})) is False
    assert cache.lookup(listing) is None
    assert cache.store(read, Complete({"contents": [], "ttlMs": 500}))
    cache.clear()
    assert cache.lookup(read) is None


def test_cache_4_a_cached_result_cannot_be_changed_through_the_caller():
    """CACHE-4: what is served is what the server sent; editing the stored dict, or a dict
    a lookup returned, does not change what the next lookup serves.

    Kills: ``copy.deepcopy`` dropped in ``store`` or in ``lookup``.
    """
    cache = ResultCache(now=lambda: 0.0)
    listing = {"method": "tools/list", "params": {}}
    sent = {"tools": [{"name": "t"}], "ttlMs": 500}
    cache.store(listing, Complete(sent))
    sent["tools"][0]["name"] = "edited"
    served = cache.lookup(listing)
    assert served == {"tools": [{"name": "t"}], "ttlMs": 500}
    served["tools"].clear()
    assert cache.lookup(listing) == {"tools": [{"name": "t"}], "ttlMs": 500}


def test_cache_5_the_default_clock_counts_milliseconds(monkeypatch):
    """CACHE-5: ``ttlMs`` is milliseconds. With the default (monotonic) clock a 500 ms result
    is fresh 0.4998 s later and stale at 0.5 s.

    Kills: the default clock scaled by ``/ 1000`` or ``* 1001`` instead of ``* 1000``.
    """
    import time

    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    cache = ResultCache()
    listing = {"method": "tools/list", "params": {}}
    cache.store(listing, Complete({"tools": [], "ttlMs": 500}))
    clock[0] = 1000.4998
    assert cache.lookup(listing) is not None
    clock[0] = 1000.5
    assert cache.lookup(listing) is None


# --- the step API (issue: every client rule in the call's modules) ---------------------------


def version_error(request: dict) -> dict:
    error = {"code": -32022, "message": "no", "data": {"supported": [PROTOCOL_VERSION]}}
    return {"jsonrpc": "2.0", "id": request["id"], "error": error}


def test_ver_2_the_factory_keeps_its_own_versions_and_says_which_it_chose():
    """VER-2: the versions a client speaks are fixed when it is built (a list passed in and
    changed later changes nothing); ``negotiate`` returns the version it switched to.

    Kills: ``tuple(supported_versions)`` unwrapped; ``negotiate`` returning None.
    """
    ours = ["2027-01-01", PROTOCOL_VERSION]
    factory = RequestFactory(protocol_version="2027-01-01", supported_versions=ours)
    ours.clear()
    assert factory.supported_versions == ("2027-01-01", PROTOCOL_VERSION)
    error = McpRemoteError(-32022, "no", {"supported": [PROTOCOL_VERSION]})
    assert factory.negotiate(error) == PROTOCOL_VERSION == factory.protocol_version


def test_mrtr_c3_a_new_call_has_no_step_and_no_request_yet():
    """MRTR-C3: before round 1 a call has built no request and has no step to act on.

    Kills: ``self.request = {}`` or ``self._step = None`` removed from ``Exchange.__init__``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    assert call.request == {} and call.step is None
    first = call.first_request()
    assert call.request is first and call.step is None


def test_ver_2_the_resend_is_the_calls_step_and_each_round_may_negotiate_once():
    """VER-2: after -32022 ``call.step`` is the ``Resend`` (a driver that reads the step, not
    the return value, sends it too); a later round that meets -32022 again negotiates again.

    Kills: ``self._step = resend`` removed; ``self._renegotiated = False`` removed from
    ``_next_round``.
    """
    from mrtr_kit.client import Resend

    call = MrtrCall.tool(RequestFactory(), "t")
    step = call.receive(version_error(call.first_request()))
    assert isinstance(step, Resend) and call.step is step
    call.receive(asking(step.request, {"k": FORM}))
    again = call.receive(version_error(call.retry_request({"k": ACCEPT})))
    assert isinstance(again, Resend) and call.rounds == 2


def test_core_10_a_plain_request_keeps_its_own_params():
    """CORE-10 / VER-2: a plain request repeats its own params on a resend: a caller that
    changes the dict it passed, or the request it sent, changes nothing; read-only mappings
    are accepted. Once its result arrives it is complete.

    Kills: ``copy.deepcopy`` or ``dict`` dropped in ``PlainRequest``; its COMPLETE status
    not set.
    """
    from mrtr_kit.client.call import PlainRequest

    params = {"cursor": "c", "filter": {"tags": ["a"]}}
    plain = PlainRequest(RequestFactory(), "tools/list", params)
    params["filter"]["tags"].append("late")
    first = plain.first_request()
    first["params"]["filter"]["tags"].append("edited")
    resent = plain.resend_request()
    assert resent["params"]["filter"] == {"tags": ["a"]}
    plain.receive(reply(resent, {"tools": []}))
    assert plain.status is CallStatus.COMPLETE
    proxy = PlainRequest(RequestFactory(), "tools/list", MappingProxyType({"cursor": "x"}))
    assert proxy.first_request()["params"]["cursor"] == "x"


def test_mrtr_c8_only_a_question_of_the_waiting_round_can_be_refused():
    """MRTR-C8: ``refuse`` names the error for a question of the round the call waits on; a
    complete call has no question left to refuse.

    Kills: ``needs is None`` dropped from the check in ``refuse``.
    """
    call = MrtrCall.tool(RequestFactory(), "t")
    call.receive(done(call.first_request()))
    with pytest.raises(RuntimeError, match="not asked"):
        call.refuse("k")


def test_mrtr_c9_may_cache_answers_with_a_bool():
    """MRTR-C9: ``may_cache`` is a yes or no, ``False`` for an input_required result and for
    a retry's result alike (the trace shows it as such).

    Kills: either ``return False`` in ``may_cache`` returning None.
    """
    call = MrtrCall.resource(RequestFactory(), "file:///a")
    first = call.first_request()
    needs = NeedsInput({"k": FORM}, "s", {"resultType": "input_required"})
    assert may_cache(first, needs) is False
    call.receive(asking(first, {"k": FORM}))
    assert may_cache(call.retry_request({"k": ACCEPT}), Complete({"contents": []})) is False
