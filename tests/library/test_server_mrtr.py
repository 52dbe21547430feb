"""The MRTR server rules (digest §5, §6.1, §6.3, §7) checked on the sans-IO core, on plain dicts.

Each test names the requirement it checks; each would fail if the core broke that rule.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mrtr_kit.protocol.constants import (
    ELICITATION_CREATE,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
    ROOTS_LIST,
    SAMPLING_CREATE_MESSAGE,
)
from mrtr_kit.protocol.models import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
)
from mrtr_kit.server import McpServer
from mrtr_kit.server.context import create_message, elicit_form, elicit_url, list_roots
from mrtr_kit.server.http import http_status
from tests.helpers import answered, call, error, meta, request, result, run, with_bad_tag

KEY = b"k" * 32
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
FORM = {"elicitation": {"form": {}}}
ALL_CAPS = {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {}}


class Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def build(clock: Clock | None = None) -> McpServer:
    s = McpServer("test-server", "1.0", state_key=KEY, now=clock)

    @s.tool(description="Asks for a name; needs no state.")
    def greet(ctx):
        answer = ctx.elicitation("user_name")
        if answer is None or answer.action != "accept":
            return ctx.input_required({"user_name": elicit_form("What is your name?", NAME_SCHEMA)})
        return f"Hello, {answer.content['name']}!"

    @s.tool(
        description="Two rounds; the first answer travels in requestState; booking happens once.",
        input_schema={
            "type": "object",
            "properties": {"restaurant": {"type": "string"}},
            "required": ["restaurant"],
        },
    )
    async def book(ctx):
        st = dict(ctx.state or {})
        if "name" not in st:
            ans = ctx.elicitation("who")
            if ans is None or ans.action != "accept":
                return ctx.input_required({"who": elicit_form("Name?", NAME_SCHEMA)}, state={})
            st["name"] = ans.content["name"]
            return ctx.input_required({"confirm": elicit_form("Sure?", OK_SCHEMA)}, state=st)
        ok = ctx.elicitation("confirm")
        if ok is None:
            return ctx.input_required({"confirm": elicit_form("Sure?", OK_SCHEMA)}, state=st)
        await ctx.redeem_once()
        return f"Booked {ctx.arguments['restaurant']} for {st['name']}"

    @s.tool(description="Acts on any `confirm` it is given: only the core's filter stops it.")
    def eager(ctx):
        if ctx.state is None:
            return ctx.input_required({"who": elicit_form("Name?", NAME_SCHEMA)}, state={})
        who, ok = ctx.elicitation("who"), ctx.elicitation("confirm")
        if ok is not None and ok.action == "accept":  # trusts whatever reaches it
            return f"Booked for {who.content['name'] if who else '?'} without asking"
        return ctx.input_required({"confirm": elicit_form("Sure?", OK_SCHEMA)}, state={})

    @s.tool(description="Returns an InputRequiredResult model itself (a handler bug).")
    def raw_model(ctx):
        return InputRequiredResult(
            input_requests={"go": elicit_url("Log in", "https://example.com/login")}
        )

    @s.tool(description="Returns a raw input_required dict with an unsealed state (a bug).")
    def raw_dict(ctx):
        return {"resultType": "input_required", "requestState": "admin=true"}

    @s.tool(description="Returns a raw input_required dict with nothing in it (a bug).")
    def raw_empty(ctx):
        return {"resultType": "input_required"}

    @s.tool(description="Returns a resultType no 2026-07-28 client knows (a bug).")
    def raw_task(ctx):
        return {"resultType": "task", "content": []}

    @s.tool(description="Builds an ElicitRequest by hand with a nested schema (a bug).")
    def nested_form(ctx):
        schema = {
            "type": "object",
            "properties": {"address": {"type": "object", "properties": {}}},
        }
        form = ElicitRequestFormParams(message="Where?", requested_schema=schema)
        return ctx.input_required({"where": ElicitRequest(params=form)})

    @s.tool(description="Asks with plain dicts instead of models.")
    def dict_requests(ctx):
        kind = ctx.arguments.get("kind", "url")
        wire = {
            "url": {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Log in", "url": "https://example.com/"},
            },
            "form": {
                "method": "elicitation/create",
                "params": {"message": "Name?", "requestedSchema": NAME_SCHEMA},
            },
            "bogus": {"method": "ping"},
        }[kind]
        return ctx.input_required({"k": wire})

    @s.tool(description="Needs sampling with tools, sampling with context and a URL, at once.")
    def needs_everything(ctx):
        with_tools = create_message("Use a tool")
        with_tools.params.tools = [{"name": "t", "inputSchema": {"type": "object"}}]
        with_context = create_message("Look around")
        with_context.params.include_context = "thisServer"
        return ctx.input_required(
            {
                "a": with_tools,
                "b": with_context,
                "c": elicit_url("Log in", "https://example.com/login"),
            }
        )

    @s.tool(description="Returns nothing to ask and no state: a server bug.")
    def broken(ctx):
        return ctx.input_required()

    @s.tool(description="State-only round, then done.")
    def checkpoint(ctx):
        if ctx.state is None:
            return ctx.input_required(state={"step": 1})
        return f"resumed at step {ctx.state['step']}"

    @s.tool(description="Asks for a sampling completion (deprecated).")
    def sample(ctx):
        if ctx.sampling("s") is None:
            return ctx.input_required({"s": create_message("Capital of France?")})
        return ctx.sampling("s").model

    @s.tool(description="Asks for sampling with tools.")
    def sample_tools(ctx):
        req = create_message("Use a tool")
        req.params.tools = [{"name": "t", "inputSchema": {"type": "object"}}]
        return ctx.input_required({"s": req})

    @s.tool(description="Asks for roots (deprecated).")
    def roots(ctx):
        if ctx.roots("r") is None:
            return ctx.input_required({"r": list_roots()})
        return ", ".join(r.uri for r in ctx.roots("r").roots)

    @s.tool(description="URL-mode elicitation.")
    def url_login(ctx):
        return ctx.input_required({"go": elicit_url("Log in", "https://example.com/login")})

    @s.tool(description="Raises.")
    def explode(ctx):
        raise ValueError("secret internals")

    @s.prompt(description="Needs context first.")
    def briefing(ctx):
        ans = ctx.elicitation("context")
        if ans is None:
            schema = {"type": "object", "properties": {"context": {"type": "string"}}}
            return ctx.input_required({"context": elicit_form("Context?", schema)})
        return f"Brief me about {ans.content.get('context')}"

    @s.resource_template("notes://{id}", name="note")
    def note(ctx):
        ans = ctx.elicitation("pin")
        if ans is None:
            schema = {"type": "object", "properties": {"pin": {"type": "integer"}}}
            return ctx.input_required({"pin": elicit_form("PIN?", schema)}, state={})
        return f"note {ctx.uri_params['id']}"

    @s.resource("docs://readme", name="readme")
    def readme(ctx):
        return "read me"

    return s


@pytest.fixture
def server() -> McpServer:
    return build()


def accept(**content):
    return {"action": "accept", "content": content}


def retry(first: dict, previous: dict, answers: dict | None, **meta_kw) -> dict:
    """The retry a correct client sends: same method and params, new id, answers, echoed state."""
    params = {k: v for k, v in first["params"].items() if k != "_meta"}
    if answers is not None:
        params["inputResponses"] = answers
    if "requestState" in previous:
        params["requestState"] = previous["requestState"]
    return request(first["method"], params, **meta_kw)


# --- MRTR-R1 / R2 / S1 -------------------------------------------------------------------------


def test_mrtr_r1_s1_three_methods_may_answer_input_required(server):
    """MRTR-R1, MRTR-S1: tools/call, prompts/get and resources/read may return input_required."""
    for method, params in [
        ("tools/call", {"name": "greet"}),
        ("prompts/get", {"name": "briefing"}),
        ("resources/read", {"uri": "notes://7"}),
    ]:
        res = result(run(server, request(method, params, capabilities=FORM)))
        assert res["resultType"] == RESULT_INPUT_REQUIRED, method


@pytest.mark.parametrize(
    "method",
    ["server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"],
)
def test_mrtr_r2_other_methods_never_input_required(server, method):
    """MRTR-R2: every other request answers complete, even with all capabilities declared."""
    res = result(run(server, request(method, capabilities=ALL_CAPS)))
    assert res["resultType"] == RESULT_COMPLETE
    assert "inputRequests" not in res and "requestState" not in res


# --- MRTR-S2, S2a, S2b, S3 ---------------------------------------------------------------------


def test_mrtr_s2_s2a_s2b_input_requests_are_keyed_bare_requests(server):
    """MRTR-S2, MRTR-S2a, MRTR-S2b: server-chosen unique keys; values are bare
    {method, params} of the three allowed kinds, with no jsonrpc and no id (§4.1)."""
    for tool, key, method in [
        ("greet", "user_name", ELICITATION_CREATE),
        ("sample", "s", SAMPLING_CREATE_MESSAGE),
        ("roots", "r", ROOTS_LIST),
    ]:
        res = result(run(server, request("tools/call", {"name": tool}, capabilities=ALL_CAPS)))
        assert list(res["inputRequests"]) == [key]
        value = res["inputRequests"][key]
        assert value["method"] == method
        assert set(value) <= {"method", "params"}
    greet = result(run(server, request("tools/call", {"name": "greet"}, capabilities=FORM)))
    assert greet["inputRequests"]["user_name"] == {
        "method": "elicitation/create",
        "params": {"message": "What is your name?", "requestedSchema": NAME_SCHEMA},
    }


@pytest.mark.parametrize("bad", ["state-not-a-dict", "key-not-a-string"])
def test_mrtr_s2a_input_required_of_the_wrong_shape_is_a_handler_bug(bad):
    """MRTR-S2a (and the kit's state contract): a state that is not a dict, or an
    ``inputRequests`` key that is not a string, is the handler's bug: -32603 at once, never
    an input_required result that breaks on the client's retry.

    Kills: either HandlerBug raise removed.
    """
    from mrtr_kit.server.context import elicit_form

    s = McpServer("bugs", state_key=KEY)
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    @s.tool(description="asks wrongly")
    def ask(ctx):
        if bad == "state-not-a-dict":
            return ctx.input_required(state=["n", 1])  # type: ignore[arg-type]
        return ctx.input_required({1: elicit_form("Sure?", form)})  # type: ignore[dict-item]

    assert error(call(s, "tools/call", {"name": "ask"}))["code"] == -32603


def test_mrtr_s3_request_state_is_an_opaque_string_that_carries_answers(server):
    """MRTR-S3: requestState is a server-only string; the second round's state carries the
    first round's answer forward and differs from the first."""
    first = request(
        "tools/call", {"name": "book", "arguments": {"restaurant": "Luigi's"}}, capabilities=FORM
    )
    r1 = result(run(server, first))
    assert isinstance(r1["requestState"], str)
    r2 = result(run(server, retry(first, r1, {"who": accept(name="Ann")}, capabilities=FORM)))
    assert r2["resultType"] == "input_required" and r2["requestState"] != r1["requestState"]
    r3 = result(run(server, retry(first, r2, {"confirm": accept(ok=True)}, capabilities=FORM)))
    assert r3["content"][0]["text"] == "Booked Luigi's for Ann"


# --- MRTR-S4, S4a, S4b -------------------------------------------------------------------------


def _book_round_two(server, principal=None, capabilities=FORM):
    first = request(
        "tools/call", {"name": "book", "arguments": {"restaurant": "L"}}, capabilities=capabilities
    )
    r1 = result(run(server, first, principal))
    r2 = result(
        run(
            server,
            retry(first, r1, {"who": accept(name="Ann")}, capabilities=capabilities),
            principal,
        )
    )
    return first, r2


def test_mrtr_s4_s4a_tampered_state_is_rejected_with_an_error(server):
    """MRTR-S4/S4a: state that fails verification is rejected: a JSON-RPC error, never a
    complete result and never a re-prompt."""
    first, r2 = _book_round_two(server)
    token = r2["requestState"]
    for forged in [token + "-TAMPERED", token[:-2], "v9" + token[token.index(".") :], "", "null"]:
        reply = run(
            server,
            retry(first, {"requestState": forged}, {"confirm": accept(ok=True)}, capabilities=FORM),
        )
        err = error(reply)
        assert err["code"] == -32602 and err["message"] == "Invalid requestState"
        assert err["data"] == {"reason": "invalid_request_state"}


def test_mrtr_s4a_every_rejection_looks_the_same_on_the_wire(server):
    """MRTR-S4a: forged, expired, cross-principal and cross-request states get one
    identical error body, so an attacker cannot tell which check failed."""
    clock = Clock()
    s = build(clock)
    first, r2 = _book_round_two(s, principal="alice")
    answers = {"confirm": accept(ok=True)}
    bodies = []
    forged = retry(
        first, {"requestState": with_bad_tag(r2["requestState"])}, answers, capabilities=FORM
    )
    bodies.append(error(run(s, forged, "alice")))
    bodies.append(error(run(s, retry(first, r2, answers, capabilities=FORM), "bob")))
    other = request(
        "tools/call", {"name": "book", "arguments": {"restaurant": "X"}}, capabilities=FORM
    )
    bodies.append(error(run(s, retry(other, r2, answers, capabilities=FORM), "alice")))
    clock.t += 3600
    bodies.append(error(run(s, retry(first, r2, answers, capabilities=FORM), "alice")))
    assert all(b == bodies[0] for b in bodies), bodies


def test_mrtr_s4a_every_state_rejection_carries_the_same_data_even_if_a_reply_was_changed():
    """MRTR-S4a (KIT: one answer for every rejection): every rejected state gets the same
    error, so a forger learns nothing. A caller that edits one reply (an adapter adding a
    field to ``error.data``) must not change the next one.

    Kills: ``invalid_state_error`` handing out its shared data dict instead of a copy.
    """
    s = build()
    first = error(run(s, request("tools/call", {"name": "greet", "requestState": "x"})))
    assert first["data"] == {"reason": "invalid_request_state"}
    first["data"]["hint"] = "added by a caller"
    second = error(run(s, request("tools/call", {"name": "greet", "requestState": "y"})))
    assert second["data"] == {"reason": "invalid_request_state"}


def test_mrtr_s4b_every_state_the_kit_issues_is_integrity_protected(server):
    """MRTR-S4b: skipping protection is allowed only when tampering is harmless; the kit never
    relies on that, so flipping any single character of any issued state is rejected."""
    first, r2 = _book_round_two(server)
    token = r2["requestState"]
    for i in range(0, len(token), max(1, len(token) // 40)):
        flipped = token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]
        reply = run(
            server,
            retry(
                first, {"requestState": flipped}, {"confirm": accept(ok=True)}, capabilities=FORM
            ),
        )
        assert error(reply)["code"] == -32602, i


# --- MRTR-S5a..d --------------------------------------------------------------------------------
# MRTR-S5b (lifetime, clock tolerance) is checked through McpServer.handle in the last section
# of test_security_codecs.py.


def test_mrtr_s5a_state_bound_to_principal():
    """MRTR-S5a: a state presented by a different principal is rejected."""
    s = build()
    first, r2 = _book_round_two(s, principal="alice")
    answers = {"confirm": accept(ok=True)}
    assert error(run(s, retry(first, r2, answers, capabilities=FORM), "mallory"))["code"] == -32602
    assert (
        result(run(s, retry(first, r2, answers, capabilities=FORM), "alice"))["resultType"]
        == "complete"
    )


def test_mrtr_s5c_state_bound_to_the_originating_request(server):
    """MRTR-S5c: the same state on another tool, other arguments or another method fails."""
    _first, r2 = _book_round_two(server)
    answers = {"confirm": accept(ok=True)}
    for method, params in [
        ("tools/call", {"name": "book", "arguments": {"restaurant": "Elsewhere"}}),
        ("tools/call", {"name": "greet"}),
        ("prompts/get", {"name": "briefing"}),
    ]:
        params = dict(params, inputResponses=answers, requestState=r2["requestState"])
        assert error(run(server, request(method, params, capabilities=FORM)))["code"] == -32602


def test_mrtr_s5d_single_use_enforced_server_side(server):
    """MRTR-S5d: a valid, bound, unexpired state redeemed once cannot be redeemed again."""
    first, r2 = _book_round_two(server)
    final = retry(first, r2, {"confirm": accept(ok=True)}, capabilities=FORM)
    assert result(run(server, final))["content"][0]["text"].startswith("Booked")
    again = dict(final, id=final["id"] + 100_000)
    assert error(run(server, again)) == {
        "code": -32602,
        "message": "Invalid requestState",
        "data": {"reason": "invalid_request_state"},
    }


def test_mrtr_s5d_concurrent_redemptions_exactly_one_wins(server):
    """MRTR-S5d: 20 concurrent retries with one state: exactly one books."""
    first, r2 = _book_round_two(server)
    final = retry(first, r2, {"confirm": accept(ok=True)}, capabilities=FORM)

    async def storm():
        return await asyncio.gather(*(server.handle(dict(final, id=i)) for i in range(20)))

    replies = asyncio.run(storm())
    assert sum("result" in r.body for r in replies) == 1
    assert sum(r.body.get("error", {}).get("code") == -32602 for r in replies) == 19


# --- MRTR-S6 ------------------------------------------------------------------------------------


def test_mrtr_s6_empty_input_required_is_never_sent(server):
    """MRTR-S6: a handler returning neither requests nor state is a server bug: -32603,
    not an InputRequiredResult without inputRequests and requestState."""
    err = error(run(server, request("tools/call", {"name": "broken"})))
    assert err == {"code": -32603, "message": "Internal error"}


def test_mrtr_s6_state_only_round(server):
    """MRTR-S6: requestState alone is a valid InputRequiredResult ("call me again")."""
    first = request("tools/call", {"name": "checkpoint"})
    r1 = result(run(server, first))
    assert r1["resultType"] == "input_required" and "inputRequests" not in r1
    assert isinstance(r1["requestState"], str)
    r2 = result(run(server, retry(first, r1, None)))
    assert r2["content"][0]["text"] == "resumed at step 1"


# --- MRTR-S7 / CAP --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "caps", "required"),
    [
        ("greet", {}, {"elicitation": {"form": {}}}),
        ("greet", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("url_login", {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("sample", {"elicitation": {}}, {"sampling": {}}),
        ("sample_tools", {"sampling": {}}, {"sampling": {"tools": {}}}),
        ("sample_tools", {}, {"sampling": {"tools": {}}}),
        ("roots", {"sampling": {}}, {"roots": {}}),
    ],
)
def test_mrtr_s7_never_asks_for_an_undeclared_capability(server, tool, caps, required):
    """MRTR-S7 / CAP-2: an input request of an undeclared kind is never sent; the request
    gets -32021 naming what is missing, HTTP 400."""
    reply = run(server, request("tools/call", {"name": tool}, capabilities=caps))
    assert http_status(reply) == 400
    err = error(reply)
    assert err["code"] == -32021 and err["data"] == {"requiredCapabilities": required}


def test_mrtr_s7_empty_elicitation_object_means_form(server):
    """MRTR-S7 / §2.9: `elicitation: {}` declares form mode."""
    res = result(
        run(server, request("tools/call", {"name": "greet"}, capabilities={"elicitation": {}}))
    )
    assert res["resultType"] == "input_required"


def test_mrtr_s7_capabilities_come_from_each_round_not_the_first(server):
    """MRTR-S7 / CAP-1 / CAP-4: a retry that no longer declares elicitation cannot be asked
    again by form, even though the first round declared it."""
    first = request(
        "tools/call", {"name": "book", "arguments": {"restaurant": "L"}}, capabilities=FORM
    )
    r1 = result(run(server, first))
    reply = run(server, retry(first, r1, {"who": accept(name="Ann")}, capabilities={}))
    assert http_status(reply) == 400 and error(reply)["code"] == -32021


def sampling_server(params: dict[str, Any]) -> McpServer:
    s = McpServer("sampler", state_key=KEY)
    base = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}

    @s.tool(description="asks for a completion")
    def ask(ctx):
        p = CreateMessageRequestParams.model_validate({**base, "maxTokens": 5, **params})
        return ctx.input_required({"s": CreateMessageRequest(params=p)})

    return s


def test_samp_3_mrtr_s7_tool_choice_alone_needs_sampling_tools():
    """SAMP-3 / MRTR-S7: a sampling request with ``toolChoice`` (even without ``tools``)
    needs ``sampling.tools``; with plain ``sampling`` declared it is -32021.

    Kills: ``p.tool_choice is not None`` dropped from what counts as using tools.
    """
    s = sampling_server({"toolChoice": {"mode": "auto"}})
    err = error(call(s, "tools/call", {"name": "ask"}, capabilities={"sampling": {}}))
    assert err["code"] == -32021


def test_samp_3_include_context_none_needs_no_context_capability():
    """SAMP-3: ``includeContext: "none"`` asks for no context, so plain ``sampling`` is enough.

    Kills: "none" emptied in the list of values that need ``sampling.context``.
    """
    s = sampling_server({"includeContext": "none"})
    res = result(call(s, "tools/call", {"name": "ask"}, capabilities={"sampling": {}}))
    assert res["resultType"] == RESULT_INPUT_REQUIRED


# --- MRTR-S8 -------------------------------------------------------------------------------------


def test_mrtr_s8_no_pending_state_and_any_instance_serves_the_retry():
    """MRTR-S8: the server waits for nobody. An unanswered round leaves nothing behind, and a
    different instance (same key) serves the retry of a round another instance issued."""
    a, b = build(), build()
    first = request(
        "tools/call", {"name": "book", "arguments": {"restaurant": "L"}}, capabilities=FORM
    )
    r1 = result(run(a, first))
    r2 = result(run(b, retry(first, r1, {"who": accept(name="Ann")}, capabilities=FORM)))
    r3 = result(run(a, retry(first, r2, {"confirm": accept(ok=True)}, capabilities=FORM)))
    assert r3["resultType"] == "complete"


def test_mrtr_s8_declined_answers_are_asked_again(server):
    """MRTR-S8 / ELIC-8: a decline or cancel is not an error; this tool asks again."""
    for action in ("decline", "cancel"):
        answers = {"user_name": {"action": action}}
        res = result(answered(server, "tools/call", {"name": "greet"}, answers, capabilities=FORM))
        assert res["resultType"] == "input_required"


# --- MRTR-E1..E4 ---------------------------------------------------------------------------------
# MRTR-E2 (a fitting JSON-RPC error code for each protocol problem) is checked in
# test_server_protocol.py with the other envelope and params checks.


@pytest.mark.parametrize("bad", [12345, None, [], "yes", True])
def test_mrtr_e1_input_responses_must_be_an_object(server, bad):
    """MRTR-E1: inputResponses that is not a map -> -32602 with a message saying so."""
    msg = request("tools/call", {"name": "greet", "inputResponses": bad}, capabilities=FORM)
    err = error(run(server, msg))
    assert err["code"] == -32602 and "inputResponses" in err["message"]


@pytest.mark.parametrize("bad", [12345, None, "accept", [1]])
def test_mrtr_e1_each_response_must_be_an_object(server, bad):
    """MRTR-E1: a value that is not a result object -> -32602 naming the key."""
    msg = request(
        "tools/call", {"name": "greet", "inputResponses": {"user_name": bad}}, capabilities=FORM
    )
    err = error(run(server, msg))
    assert err["code"] == -32602 and "user_name" in err["message"]


@pytest.mark.parametrize(
    "bad",
    [{"action": "maybe"}, {"content": {"name": "x"}}, {"action": "accept", "content": "Ann"}],
)
def test_mrtr_e1_responses_must_parse_as_the_requested_kind(server, bad):
    """MRTR-E1: an answer that does not parse as an ElicitResult -> -32602 naming the key."""
    answers = {"user_name": bad}
    err = error(answered(server, "tools/call", {"name": "greet"}, answers, capabilities=FORM))
    assert err["code"] == -32602 and "user_name" in err["message"]


def test_mrtr_e3_unrequested_answers_are_ignored(server):
    """MRTR-E3: extra, unknown entries are ignored: the call completes."""
    answers = {
        "user_name": accept(name="Alice"),
        "unknown_extra_key": {"action": "accept", "content": {"x": 1}},
        "another_unexpected": {"roots": []},
    }
    res = result(answered(server, "tools/call", {"name": "greet"}, answers, capabilities=FORM))
    assert res["content"][0]["text"] == "Hello, Alice!"


def test_mrtr_e3_with_state_only_answers_to_asked_keys_reach_the_handler(server):
    """MRTR-E3 / SEC-6: the round-1 state asked only for `who`; a `confirm` smuggled into the
    round-2 retry is dropped before the handler runs. ``eager`` books on any `confirm` it
    sees, so without the core's filter this retry would book without the confirmation round."""
    first = request("tools/call", {"name": "eager"}, capabilities=FORM)
    r1 = result(run(server, first))
    assert list(r1["inputRequests"]) == ["who"]
    smuggled = {"who": accept(name="Ann"), "confirm": accept(ok=True)}
    r2 = result(run(server, retry(first, r1, smuggled, capabilities=FORM)))
    assert r2["resultType"] == "input_required" and list(r2["inputRequests"]) == ["confirm"]
    # The confirmation, once asked for, is read: the filter drops only what was not asked.
    r3 = result(run(server, retry(first, r2, {"confirm": accept(ok=True)}, capabilities=FORM)))
    assert r3["content"][0]["text"].startswith("Booked for ? without asking")


def test_mrtr_e4_missing_answers_are_asked_again_not_an_error(server):
    """MRTR-E4: a retry whose answer is under the wrong key -> a new InputRequiredResult."""
    answers = {"wrong_key": accept(name="A")}
    res = result(answered(server, "tools/call", {"name": "greet"}, answers, capabilities=FORM))
    assert res["resultType"] == "input_required" and "user_name" in res["inputRequests"]


# --- issue 8 item 5: every input_required outcome passes the same checks -----------------------
# One way to ask: ``ctx.input_required(...)``. The core refuses a handler's own
# InputRequiredResult or input_required dict (a handler bug: -32603 and a log line saying why),
# because such a result would skip the gate (MRTR-S7), the S6 check, the sealing of its
# requestState (MRTR-S4a) and CACHE-2.


@pytest.mark.parametrize("tool", ["raw_model", "raw_dict", "raw_empty", "raw_task"])
def test_rt_1_mrtr_s4a_s7_a_raw_input_required_result_is_refused_loudly(server, tool, caplog):
    """MRTR-S7 / MRTR-S6 / MRTR-S4a / RT-1: a handler that returns an InputRequiredResult
    model, an input_required dict (here one with an unsealed "admin=true" state, or an empty
    one), or an unknown resultType gets -32603, never a result that skipped the core's
    checks; the log says what to return instead."""
    reply = run(server, request("tools/call", {"name": tool}, capabilities={}))
    assert error(reply) == {"code": -32603, "message": "Internal error"}
    assert "ctx.input_required" in caplog.text or "resultType" in caplog.text


def test_elic_5_a_hand_built_form_outside_the_subset_never_leaves_the_server(server):
    """ELIC-5 (KIT): the form-subset check runs where every input request leaves the server,
    so an ElicitRequest built by hand with a nested object schema is refused (-32603)."""
    reply = run(server, request("tools/call", {"name": "nested_form"}, capabilities=FORM))
    assert error(reply)["code"] == -32603


def test_elic_4_enum_values_must_be_strings_wherever_the_form_was_built():
    """ELIC-4: enum values and consts are strings. A form with a number enum is outside the
    subset: elicit_form refuses it, and so does the core for a hand-built request."""
    from mrtr_kit.protocol.elicitation import SchemaOutsideSubset

    schema = {"type": "object", "properties": {"n": {"type": "string", "enum": [1, 2]}}}
    with pytest.raises(SchemaOutsideSubset, match="ELIC-4"):
        elicit_form("Pick", schema)
    s = McpServer("enum", state_key=KEY)

    @s.tool(description="t")
    def t(ctx):
        form = ElicitRequestFormParams(message="Pick", requested_schema=schema)
        return ctx.input_required({"n": ElicitRequest(params=form)})

    assert error(run(s, request("tools/call", {"name": "t"}, capabilities=FORM)))["code"] == -32603


def test_elic_4_multi_select_answers_must_be_string_arrays():
    """ELIC-4: a multi-select answer is an array of strings from the options; numbers or
    unknown options are not usable content."""
    s = McpServer("multi", state_key=KEY)
    tags = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        },
        "required": ["tags"],
    }

    @s.tool(description="t")
    def t(ctx):
        answer = ctx.form("tags", "Tags?", tags)
        if not answer.accepted:
            return answer.ask()
        return ",".join(answer.content["tags"])

    def send(content):
        answers = {"tags": {"action": "accept", "content": content}}
        return answered(s, "tools/call", {"name": "t"}, answers, capabilities=FORM)

    assert result(send({"tags": ["a", "b"]}))["content"][0]["text"] == "a,b"
    assert result(send({"tags": ["a", "c"]}))["resultType"] == "input_required"
    assert error(send({"tags": [1, 2]}))["code"] == -32602  # not an ElicitResult at all


@pytest.mark.parametrize(
    ("caps", "required"),
    [
        ({"roots": {}}, {"elicitation": {"url": {}}}),  # was gated as if it were roots/list
        ({"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
        ({"elicitation": {}}, {"elicitation": {"url": {}}}),
    ],
)
def test_elic_2_mrtr_s7_plain_dict_requests_are_gated_by_their_real_kind(server, caps, required):
    """ELIC-2 / MRTR-S7: a URL-mode request written as a plain dict is gated as URL-mode
    elicitation; a client that declared only roots or form mode gets -32021."""
    msg = request("tools/call", {"name": "dict_requests", "arguments": {}}, capabilities=caps)
    reply = run(server, msg)
    assert http_status(reply) == 400
    assert error(reply)["data"] == {"requiredCapabilities": required}


def test_elic_2_the_declared_mode_is_sent_and_a_non_input_request_is_a_handler_bug(server):
    """ELIC-2: a plain-dict form request goes out to a form client; MRTR-S2b: a dict that is
    no input request at all (``ping``) is a handler bug, -32603."""
    form = request("tools/call", {"name": "dict_requests", "arguments": {"kind": "form"}})
    form["params"]["_meta"] = meta(FORM)
    res = result(run(server, form))
    assert res["inputRequests"]["k"]["params"]["requestedSchema"] == NAME_SCHEMA
    bogus = request("tools/call", {"name": "dict_requests", "arguments": {"kind": "bogus"}})
    assert error(run(server, bogus))["code"] == -32603


def test_cap_2_err_1_missing_capabilities_are_named_all_at_once(server):
    """CAP-2 / ERR-1: -32021 names everything the request needs in one go (sampling.tools,
    sampling.context and elicitation.url here), so the client needs no second failed round."""
    reply = run(server, request("tools/call", {"name": "needs_everything"}, capabilities={}))
    assert error(reply)["data"] == {
        "requiredCapabilities": {
            "sampling": {"tools": {}, "context": {}},
            "elicitation": {"url": {}},
        }
    }
    some = {"sampling": {"tools": {}}, "elicitation": {"url": {}}}
    reply = run(server, request("tools/call", {"name": "needs_everything"}, capabilities=some))
    assert error(reply)["data"] == {"requiredCapabilities": {"sampling": {"context": {}}}}


def test_elic_6_an_answer_action_outside_accept_decline_cancel_is_invalid_params(server):
    """ELIC-6: action is accept, decline or cancel; anything else is -32602 naming the key."""
    for action in ("ACCEPT", "ok", "dismiss", None):
        answers = {"user_name": {"action": action}}
        err = error(answered(server, "tools/call", {"name": "greet"}, answers, capabilities=FORM))
        assert err["code"] == -32602 and "user_name" in err["message"], action
