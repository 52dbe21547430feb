"""``McpClient`` over HTTP: against the kit's own server through ``httpx.ASGITransport`` (no
socket), against small scripted ASGI stubs for server misbehaviour, and once over real TCP.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mrtr_kit.client import (
    AnswerHandlers,
    CreateMessageResult,
    ElicitResult,
    InputDeclined,
    InvalidAnswers,
    ListRootsResult,
    McpClient,
    McpRemoteError,
    MrtrCall,
    NoMutualVersion,
    ProtocolViolation,
    ResultCache,
    ToolRejected,
    TooManyRounds,
    TransportError,
)
from mrtr_kit.protocol.constants import (
    HEADER_METHOD,
    HEADER_NAME,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
)
from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.context import create_message, elicit_form, list_roots
from mrtr_kit.server.http import create_app
from mrtr_kit.server.loopback import LoopbackServer, free_port

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def build_server() -> McpServer:
    s = McpServer("client-tests", "1.0", state_key=b"c" * 32)

    @s.tool(description="Asks for a name (with requestState), then greets.")
    def greet(ctx):
        answer = ctx.elicitation("name")
        if answer is None:
            return ctx.input_required({"name": elicit_form("Your name?", NAME)}, state={})
        if answer.action != "accept":
            return f"no name ({answer.action})"
        return f"Hello, {answer.content['name']}!"

    @s.tool(description="Keeps no state of its own; asks again until it gets a name.")
    def stateless(ctx):
        answer = ctx.elicitation("name")
        if answer is None or not (answer.content or {}).get("name"):
            return ctx.input_required({"name": elicit_form("Your name?", NAME)})
        return "stateless ok"

    @s.tool(
        description="Two questions in two rounds; the first answer rides in requestState.",
        input_schema={"type": "object", "properties": {"tag": {"type": "string"}}},
    )
    def two_step(ctx):
        st = dict(ctx.state or {})
        if "name" not in st:
            ans = ctx.elicitation("name")
            if ans is None:
                return ctx.input_required({"name": elicit_form("Name?", NAME)}, state={})
            st["name"] = ans.content["name"]
            return ctx.input_required({"ok": elicit_form("Sure?", OK)}, state=st)
        ok = ctx.elicitation("ok")
        if ok is None:
            return ctx.input_required({"ok": elicit_form("Sure?", OK)}, state=st)
        return f"{ctx.arguments.get('tag')}:{st['name']}:{ok.content['ok']}"

    @s.tool(description="Never satisfied: state-only input_required forever.")
    def forever(ctx):
        return ctx.input_required(state={"n": (ctx.state or {}).get("n", 0) + 1})

    @s.tool(description="Asks for a completion (sampling).")
    def sample(ctx):
        answer = ctx.sampling("llm")
        if answer is None:
            return ctx.input_required({"llm": create_message("Capital of France?")}, state={})
        return f"model said: {answer.content.text}"

    @s.tool(description="Asks for the roots.")
    def roots(ctx):
        answer = ctx.roots("roots")
        if answer is None:
            return ctx.input_required({"roots": list_roots()})
        return ",".join(r.uri for r in answer.roots)

    @s.tool(
        description="Mirrors region and count into Mcp-Param headers.",
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
            },
        },
    )
    def regional(ctx):
        return f"region={ctx.arguments.get('region')} count={ctx.arguments.get('count')}"

    @s.tool(description="Streams progress before answering.")
    async def slow(ctx):
        for step in (0, 50, 100):
            await ctx.progress(step, 100)
        return "finished"

    @s.resource("kit://static", name="Static")
    def static(ctx):
        return "static text"

    @s.resource("kit://guarded", name="Guarded")
    def guarded(ctx):
        ok = ctx.elicitation("ok")
        if ok is None:
            return ctx.input_required({"ok": elicit_form("Read it?", OK)}, state={})
        return "guarded text"

    @s.prompt(description="Asks for a topic first.")
    def topic(ctx):
        ans = ctx.elicitation("topic")
        if ans is None:
            schema = {"type": "object", "properties": {"topic": {"type": "string"}}}
            return ctx.input_required({"topic": elicit_form("Topic?", schema)})
        return f"Write about {ans.content['topic']}"

    return s


APP = create_app(build_server())


def accept_name(params, ctx):
    if "ok" in params.requested_schema["properties"]:
        return ElicitResult(action="accept", content={"ok": True})
    if "topic" in params.requested_schema["properties"]:
        return ElicitResult(action="accept", content={"topic": "tea"})
    return ElicitResult(action="accept", content={"name": "Ann"})


def client(app: Any = APP, **kw: Any) -> McpClient:
    kw.setdefault("state_only_backoff_s", 0)
    return McpClient.for_app(app, **kw)


def run(coro_fn: Callable[[], Any]) -> Any:
    return asyncio.run(coro_fn())


def sent(record) -> dict:
    return record.request["params"]


# --- the automatic loop -------------------------------------------------------------------------


def test_auto_loop_answers_and_retries_until_complete():
    """MRTR-C1 / MRTR-C2 / MRTR-C3 / HTTP-11 over HTTP: the handler answers, the retry has a new
    id, the exact requestState, the answers, and the same headers as the first attempt."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            result = await cl.call_tool("greet", {})
            return result, cl.trace

    result, trace = run(go)
    assert result["content"][0]["text"] == "Hello, Ann!"
    first, retry = trace
    assert (first.round, retry.round) == (1, 2) and first.call == retry.call
    assert first.request["id"] != retry.request["id"]
    assert sent(retry)["requestState"] == first.response["result"]["requestState"]
    assert sent(retry)["inputResponses"] == {
        "name": {"action": "accept", "content": {"name": "Ann"}}
    }
    for record in trace:
        assert record.headers[HEADER_NAME] == "greet"
        assert record.headers[HEADER_METHOD] == "tools/call"
        assert record.headers["Accept"] == "application/json, text/event-stream"
        assert record.headers["Content-Type"] == "application/json"


def test_mrtr_c2_no_state_no_key_over_http():
    """MRTR-C2: the server sent no requestState, so the retry has no requestState key. The
    kit's server always sends one (to drop unasked answers, MRTR-E3), so a stub that keeps
    none (MRTR-S3: a MAY) plays the server."""
    ask = {
        "name": {
            "method": "elicitation/create",
            "params": {"message": "Name?", "requestedSchema": NAME},
        }
    }

    def respond(message: dict) -> dict:
        if "inputResponses" not in message["params"]:
            return {"resultType": "input_required", "inputRequests": ask}
        return {"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}

    stub = Stub(respond)

    async def go():
        async with client(stub.app, elicitation=accept_name) as cl:
            await cl.call_tool("t")
            return cl.trace

    first, retry = run(go)
    assert "requestState" not in first.response["result"]
    assert "requestState" not in sent(retry) and "inputResponses" in sent(retry)


def test_mrtr_c6_multi_round_sends_only_the_latest_answers():
    """MRTR-C6 / MRTR-C5: round 3 answers only round 2's key; name and arguments repeat."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            return await cl.call_tool("two_step", {"tag": "t"}), cl.trace

    result, trace = run(go)
    assert result["content"][0]["text"] == "t:Ann:True"
    assert [set(sent(r).get("inputResponses", {})) for r in trace] == [set(), {"name"}, {"ok"}]
    assert all(sent(r)["arguments"] == {"tag": "t"} for r in trace)
    assert sent(trace[2])["requestState"] == trace[1].response["result"]["requestState"]
    assert sent(trace[2])["requestState"] != sent(trace[1])["requestState"]


def test_mrtr_c7_round_limit_over_http():
    """MRTR-C7: a server that keeps answering input_required is cut off at max_rounds."""

    async def go():
        async with client(max_rounds=3) as cl:
            with pytest.raises(TooManyRounds):
                await cl.call_tool("forever")
            return cl.trace

    assert [r.round for r in run(go)] == [1, 2, 3]


def test_mrtr_c7_at_the_round_limit_nobody_is_asked_a_question_that_would_not_be_sent():
    """MRTR-C7: the call gives up when the last allowed round is answered with input_required;
    the handler is not asked for an answer that could never be sent."""
    asked: list[int] = []

    def wrong_name(params, ctx):
        asked.append(ctx.round)
        return ElicitResult(action="accept", content={"name": ""})  # "stateless" asks again

    async def go():
        async with client(elicitation=wrong_name, max_rounds=2) as cl:
            with pytest.raises(TooManyRounds):
                await cl.call_tool("stateless")
            return cl.trace

    assert [r.round for r in run(go)] == [1, 2]
    assert asked == [1]


def test_mrtr_c8_decline_is_sent_as_an_answer():
    """MRTR-C8: a declined elicitation is still an answer and the call goes on."""

    async def go():
        async with client(elicitation=lambda p, ctx: ElicitResult(action="decline")) as cl:
            return await cl.call_tool("greet"), cl.trace

    result, trace = run(go)
    assert result["content"][0]["text"] == "no name (decline)"
    assert sent(trace[1])["inputResponses"] == {"name": {"action": "decline"}}


def test_mrtr_c8_refused_sampling_stops_without_a_retry():
    """MRTR-C8: a sampling handler that gives no answer ends the call locally; no retry."""

    async def go():
        async with client(sampling=lambda p, ctx: None) as cl:
            with pytest.raises(InputDeclined):
                await cl.call_tool("sample")
            return cl.trace

    assert len(run(go)) == 1


def test_sampling_and_roots_handlers_sync_and_async():
    """§10 / §11: sampling and roots answers travel like elicitation answers."""

    async def sampler(params, ctx):
        assert params.max_tokens == 200 and ctx.key == "llm"
        return CreateMessageResult(
            role="assistant", content={"type": "text", "text": "Paris."}, model="stand-in"
        )

    async def go():
        async with client(
            sampling=sampler,
            roots=lambda p, ctx: ListRootsResult(roots=[{"uri": "file:///work", "name": "w"}]),
        ) as cl:
            return await cl.call_tool("sample"), await cl.call_tool("roots")

    sampled, rooted = run(go)
    assert sampled["content"][0]["text"] == "model said: Paris."
    assert rooted["content"][0]["text"] == "file:///work"


def test_handlers_see_who_is_asking():
    """ELIC-15: the handler context names the call, the round and the server."""
    seen = []

    def handler(params, ctx):
        seen.append(ctx)
        return ElicitResult(action="accept", content={"name": "Ann"})

    async def go():
        async with client(elicitation=handler) as cl:
            await cl.call_tool("greet")

    run(go)
    (ctx,) = seen
    assert (ctx.key, ctx.method, ctx.target, ctx.round) == ("name", "tools/call", "greet", 1)
    assert ctx.server_info == {"name": "client-tests", "version": "1.0"}


def test_prompts_and_resources_run_the_same_loop():
    """MRTR-R1: prompts/get and resources/read are MRTR methods too."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            return await cl.get_prompt("topic"), await cl.read_resource("kit://guarded")

    prompt, resource = run(go)
    assert "tea" in prompt["messages"][0]["content"]["text"]
    assert resource["contents"][0]["text"] == "guarded text"


# --- the manual API ---------------------------------------------------------------------------


def test_manual_rounds_with_an_unrelated_call_in_between():
    """MRTR-C4: while one call waits for answers, another call carries none of its
    inputResponses or requestState; then the first is finished by hand."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            await cl.list_tools()
            cl.clear_trace()
            waiting = await cl.begin_tool_call("greet", {})
            assert waiting.result is None
            assert list(waiting.input_required.input_requests) == ["name"]
            unrelated = await cl.call_tool("regional", {"region": "eu"})
            await cl.continue_call(
                waiting, {"name": ElicitResult(action="accept", content={"name": "Bo"})}
            )
            return waiting, unrelated, cl.trace

    call, unrelated, trace = run(go)
    assert call.result["content"][0]["text"] == "Hello, Bo!"
    assert unrelated["content"][0]["text"].startswith("region=eu")
    middle = sent(trace[1])
    assert "inputResponses" not in middle and "requestState" not in middle
    assert sent(trace[2])["requestState"] == trace[0].response["result"]["requestState"]


def test_mrtr_c4_parallel_calls_do_not_share_state():
    """MRTR-C4: concurrent calls of the same tool each echo their own requestState."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            await asyncio.gather(*(cl.call_tool("two_step", {"tag": str(i)}) for i in range(4)))
            return cl.trace

    trace = run(go)
    by_call: dict[int, list] = {}
    for record in trace:
        by_call.setdefault(record.call, []).append(record)
    assert len(by_call) == 4
    states = set()
    for records in by_call.values():
        records.sort(key=lambda r: r.round)
        for before, after in itertools.pairwise(records):
            assert sent(after)["requestState"] == before.response["result"]["requestState"]
            assert sent(after)["arguments"] == sent(before)["arguments"]
            states.add(sent(after)["requestState"])
    assert len(states) == 8  # every round of every call had its own state


def test_mrtr_c1_manual_retry_refuses_missing_answers():
    """MRTR-C1 / MRTR-C6: continue_call without an answer for every key sends nothing."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            call = await cl.begin_tool_call("greet")
            with pytest.raises(InvalidAnswers):
                await cl.continue_call(call, {})
            with pytest.raises(InvalidAnswers):  # ELIC-14: content must fit requestedSchema
                await cl.continue_call(call, {"name": {"action": "accept", "content": {}}})
            return cl.trace

    assert len(run(go)) == 1


def test_manual_retry_can_skip_validation_to_show_the_server_asking_again():
    """MRTR-E4 from the client side: an unvalidated bad answer makes the server ask again."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            call = await cl.begin_tool_call("stateless")
            bad = {"name": {"action": "accept", "content": {}}}
            await cl.continue_call(call, bad, validate=False)
            return call

    call = run(go)
    assert call.input_required is not None and call.rounds == 2


# --- capabilities, headers, notifications, caching -------------------------------------------


def test_capabilities_follow_the_registered_handlers():
    """§2.9: declare exactly what there are handlers for; a server needing more says -32021
    (kept as a remote error with its HTTP status and data, ERR-4)."""

    async def go():
        async with client() as cl:
            assert cl.capabilities == {}
            with pytest.raises(McpRemoteError) as info:
                await cl.call_tool("greet")
            cl.handlers = AnswerHandlers(elicitation=accept_name, roots=lambda p, ctx: None)
            assert cl.capabilities == {"elicitation": {"form": {}}, "roots": {}}
            return info.value, cl.trace

    error, trace = run(go)
    assert error.code == -32021 and error.http_status == 400
    assert error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    meta = sent(trace[0])["_meta"]
    assert meta[META_CLIENT_CAPABILITIES] == {}


def test_http_12_param_headers_reach_the_server_encoded():
    """HTTP-12 / HTTP-9: after tools/list the client mirrors annotated arguments; the kit
    server decodes and checks them (a mismatch there would be a -32020)."""

    async def go():
        async with client() as cl:
            await cl.list_tools()
            result = await cl.call_tool("regional", {"region": "Zürich ", "count": 3})
            return result, cl.trace[-1]

    result, record = run(go)
    assert result["content"][0]["text"] == "region=Zürich  count=3"
    assert record.headers["Mcp-Param-Region"].startswith("=?base64?")
    assert record.headers["Mcp-Param-Count"] == "3"


def test_progress_notifications_arrive_over_sse():
    """HTTP-6 / HTTP-21: with a progressToken the answer is an SSE stream; notifications go to
    the callback (sync or async) and into the trace, the response ends it."""
    seen: list[dict] = []

    async def on_note(message):
        seen.append(message)

    async def go():
        async with client(on_notification=on_note) as cl:
            result = await cl.call_tool("slow", meta={"progressToken": "p1"})
            return result, cl.trace[-1]

    result, record = run(go)
    assert result["content"][0]["text"] == "finished"
    assert record.content_type.startswith("text/event-stream")
    assert [n["params"]["progress"] for n in seen] == [0, 50, 100]
    assert record.notifications == seen
    assert sent(record)["_meta"]["progressToken"] == "p1"


def test_mrtr_c9_the_session_caches_nothing():
    """MRTR-C9: repeated reads go to the server every time; the trace marks which results a
    cache could keep (never a retry's or an input_required one)."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            await cl.read_resource("kit://static")
            await cl.read_resource("kit://static")
            await cl.read_resource("kit://guarded")
            return cl.trace

    trace = run(go)
    assert [r.request["params"]["uri"] for r in trace] == ["kit://static"] * 2 + [
        "kit://guarded"
    ] * 2
    assert [r.cacheable for r in trace] == [True, True, False, False]
    assert trace[3].response["result"]["ttlMs"] == 0  # the KIT server agrees (CACHE-3)


def test_http_13_list_tools_drops_invalid_tools_and_refuses_to_call_them():
    """HTTP-13: an invalid x-mcp-header tool is left out of the view and never called."""
    tools = [
        {"name": "good", "inputSchema": {"type": "object"}},
        {
            "name": "bad",
            "inputSchema": {
                "type": "object",
                "properties": {"s": {"type": "number", "x-mcp-header": "Score"}},
            },
        },
    ]
    stub = Stub(
        lambda m: {"resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "private"}
    )

    async def go():
        async with client(stub.app) as cl:
            kept = await cl.list_tools()
            with pytest.raises(ToolRejected, match="number"):
                await cl.call_tool("bad", {"s": 1.5})
            return kept, cl

    kept, cl = run(go)
    assert [t["name"] for t in kept] == ["good"] and list(cl.tools) == ["good"]
    assert set(cl.rejected_tools) == {"bad"}
    assert [m["method"] for m, _ in stub.requests] == ["tools/list"]


def test_trace_can_be_cleared():
    async def go():
        async with client() as cl:
            await cl.discover()
            assert len(cl.trace) == 1 and cl.trace[0].http_status == 200
            cl.clear_trace()
            return cl.trace

    assert run(go) == []


# --- scripted stubs: servers that misbehave ---------------------------------------------------


class Stub:
    """A tiny ASGI server: ``respond(message)`` gives a result dict, or a full Response."""

    def __init__(self, respond: Callable[[dict], Any]) -> None:
        self.respond = respond
        self.requests: list[tuple[dict, dict[str, str]]] = []
        self.app = Starlette(routes=[Route("/mcp", self.handle, methods=["POST"])])

    async def handle(self, request: Request) -> Response:
        message = json.loads(await request.body())
        self.requests.append((message, dict(request.headers)))
        answer = self.respond(message)
        if isinstance(answer, Response):
            return answer
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": answer})


def test_rt_2_missing_result_type_completes_without_retry():
    """RT-2: a legacy-style result without resultType is complete; no second request."""
    stub = Stub(lambda m: {"content": [{"type": "text", "text": "no-result-type"}]})

    async def go():
        async with client(stub.app, elicitation=accept_name) as cl:
            return await cl.call_tool("t")

    assert run(go)["content"][0]["text"] == "no-result-type"
    assert len(stub.requests) == 1


def test_rt_3_unknown_result_type_raises():
    """RT-3: an unrecognised resultType is a protocol violation, not a result."""
    stub = Stub(lambda m: {"resultType": "task", "taskId": "1"})

    async def go():
        async with client(stub.app) as cl:
            with pytest.raises(ProtocolViolation, match="RT-3"):
                await cl.call_tool("t")

    run(go)


def test_mrtr_r3_input_required_on_tools_list_raises():
    """MRTR-R3: input_required on tools/list -> error to the caller, no retry."""
    stub = Stub(lambda m: {"resultType": "input_required", "requestState": "x"})

    async def go():
        async with client(stub.app) as cl:
            with pytest.raises(ProtocolViolation, match="MRTR-R3"):
                await cl.list_tools()

    run(go)
    assert len(stub.requests) == 1


def test_mrtr_s6_empty_input_required_raises():
    """MRTR-S6: input_required with neither inputRequests nor requestState -> error."""
    stub = Stub(lambda m: {"resultType": "input_required"})

    async def go():
        async with client(stub.app) as cl:
            with pytest.raises(ProtocolViolation, match="MRTR-S6"):
                await cl.call_tool("t")

    run(go)


def test_mrtr_s7_undeclared_input_request_is_a_protocol_violation():
    """MRTR-S7: a server asking for input the client did not declare is refused, not
    answered."""
    request = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    stub = Stub(lambda m: {"resultType": "input_required", "inputRequests": {"s": request}})

    async def go():
        async with client(stub.app, elicitation=accept_name) as cl:
            with pytest.raises(ProtocolViolation, match="MRTR-S7"):
                await cl.call_tool("t")

    run(go)
    assert len(stub.requests) == 1


def version_stub(supported: list[str]) -> Stub:
    """Refuses the very first POST with -32022, like the request-metadata mock."""

    def respond(message: dict) -> Any:
        if len(stub.requests) == 1:
            error = {
                "code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": supported, "requested": "x"},
            }
            body = {"jsonrpc": "2.0", "id": message["id"], "error": error}
            return JSONResponse(body, status_code=400)
        return {"resultType": "complete", "supportedVersions": supported, "capabilities": {}}

    stub = Stub(respond)
    return stub


def test_ver_2_unsupported_version_is_retried_once_with_a_supported_one():
    """VER-2: on -32022 the client resends with a version from data.supported — in the header
    and in _meta — under a fresh id, exactly once."""
    stub = version_stub(["2026-07-28"])

    async def go():
        async with client(stub.app) as cl:
            return await cl.discover(), cl.trace

    result, trace = run(go)
    assert result["supportedVersions"] == ["2026-07-28"]
    (first, _), (second, headers) = stub.requests
    assert second["id"] != first["id"]
    assert second["params"]["_meta"][META_PROTOCOL_VERSION] == "2026-07-28"
    assert headers["mcp-protocol-version"] == "2026-07-28"
    assert [r.http_status for r in trace] == [400, 200]


def test_ver_2_no_mutual_version():
    """VER-2: no version in common -> a local error, no further request."""
    stub = version_stub(["2025-11-25"])

    async def go():
        async with client(stub.app) as cl:
            with pytest.raises(NoMutualVersion):
                await cl.discover()

    run(go)
    assert len(stub.requests) == 1


def test_ver_2_negotiation_inside_an_mrtr_call_resends_the_same_round():
    """VER-2 / MRTR-C2: a -32022 on a retry resends that same retry (answers and state)."""
    form = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": NAME}}

    def respond(message: dict) -> Any:
        n = len(stub.requests)
        if n == 1:
            return {
                "resultType": "input_required",
                "inputRequests": {"name": form},
                "requestState": "S",
            }
        if n == 2:
            error = {"code": -32022, "message": "no", "data": {"supported": ["2026-07-28"]}}
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": error}, 400)
        return {"resultType": "complete", "content": []}

    stub = Stub(respond)

    async def go():
        async with client(stub.app, elicitation=accept_name) as cl:
            await cl.call_tool("t")

    run(go)
    _, second, third = (m for m, _ in stub.requests)
    assert third["params"]["requestState"] == second["params"]["requestState"] == "S"
    assert third["params"]["inputResponses"] == second["params"]["inputResponses"]
    assert len({m["id"] for m, _ in stub.requests}) == 3


def test_http_14_header_mismatch_refreshes_tools_and_resends():
    """HTTP-14: after -32020 on tools/call the client refreshes tools/list and, if the
    annotations changed, sends the round again with the right Mcp-Param header."""
    annotated = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    }

    def respond(message: dict) -> Any:
        if message["method"] == "tools/list":
            return {"resultType": "complete", "tools": [annotated]}
        headers = stub.requests[-1][1]
        if "mcp-param-region" not in headers:
            error = {"code": -32020, "message": "Missing Mcp-Param-Region header"}
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": error}, 400)
        return {"resultType": "complete", "content": []}

    stub = Stub(respond)

    async def go():
        async with client(stub.app) as cl:
            return await cl.call_tool("t", {"region": "eu"})

    assert run(go)["content"] == []
    assert [m["method"] for m, _ in stub.requests] == ["tools/call", "tools/list", "tools/call"]
    assert stub.requests[-1][1]["mcp-param-region"] == "eu"


def sse(*events: str) -> Response:
    return Response("".join(events), media_type="text/event-stream")


def test_sse_comments_are_ignored_and_the_matching_response_wins():
    """HTTP-23: ':' comment lines are skipped; notifications are collected; the response with
    our id resolves the request."""

    def respond(message: dict) -> Response:
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": 1},
        }
        final = {
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"resultType": "complete", "tools": []},
        }
        return sse(
            ": keep-alive\n\n",
            f"event: message\ndata: {json.dumps(note)}\n\n",
            f"data: {json.dumps(final)}\n\n",
        )

    stub = Stub(respond)

    async def go():
        async with client(stub.app) as cl:
            return await cl.list_tools(), cl.trace[0]

    tools, record = run(go)
    assert tools == [] and len(record.notifications) == 1


def test_core_6_a_server_request_on_the_stream_is_refused():
    """CORE-6: a JSON-RPC request (method + id) from the server is a protocol violation."""

    def respond(message: dict) -> Response:
        push = {"jsonrpc": "2.0", "id": 99, "method": "elicitation/create", "params": {}}
        return sse(f"data: {json.dumps(push)}\n\n")

    async def go():
        async with client(Stub(respond).app) as cl:
            with pytest.raises(ProtocolViolation, match="CORE-6"):
                await cl.call_tool("t")

    run(go)


def test_sse_stream_without_a_response_is_a_transport_error():
    def respond(message: dict) -> Response:
        return sse(": nothing to see\n\n")

    async def go():
        async with client(Stub(respond).app) as cl:
            with pytest.raises(TransportError, match="ended without a response"):
                await cl.discover()

    run(go)


def test_err_4_http_error_status_with_json_rpc_body_is_a_remote_error():
    """ERR-4 / HTTP-17: a 404 with a JSON-RPC body is the server's -32601, kept as such."""

    def respond(message: dict) -> Response:
        error = {"code": -32601, "message": "Method not found", "data": {"method": "x"}}
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": error}, 404)

    async def go():
        async with client(Stub(respond).app) as cl:
            with pytest.raises(McpRemoteError) as info:
                await cl.request("completion/complete", {"ref": {}, "argument": {}})
            return info.value

    error = run(go)
    assert (error.code, error.http_status, error.data) == (-32601, 404, {"method": "x"})


@pytest.mark.parametrize(
    "response",
    [
        Response("<html>bad gateway</html>", status_code=502, media_type="text/html"),
        Response("", status_code=200),
        JSONResponse({"hello": "world"}),
    ],
)
def test_non_mcp_bodies_are_local_transport_errors(response):
    """ERR-4: a body that is not a JSON-RPC message is a local error, not a remote one."""

    async def go():
        async with client(Stub(lambda m: response).app) as cl:
            with pytest.raises(TransportError):
                await cl.discover()
            return cl.trace[0]

    record = run(go)
    assert record.error and record.response is None


def test_connection_failure_is_a_transport_error():
    """ERR-4: failures with no peer answer at all (connection refused) are local."""

    async def go():
        async with McpClient(f"http://127.0.0.1:{free_port()}/mcp", timeout=2) as cl:
            with pytest.raises(TransportError):
                await cl.discover()

    run(go)


# --- real TCP ------------------------------------------------------------------------------------


@pytest.fixture
def live_url() -> Iterator[str]:
    site = LoopbackServer.start(lambda base: APP)
    yield site.url + "/mcp"
    site.stop()


@pytest.mark.slow
def test_same_client_over_real_tcp(live_url):
    """The same client code over a socket: MRTR rounds, SSE progress, header mirroring."""

    async def go():
        notes: list[dict] = []
        async with McpClient(live_url, elicitation=accept_name, on_notification=notes.append) as cl:
            await cl.list_tools()
            greeting = await cl.call_tool("greet")
            slow = await cl.call_tool("slow", meta={"progressToken": 7})
            regional = await cl.call_tool("regional", {"region": "ü"})
            return greeting, slow, regional, notes

    greeting, slow, regional, notes = run(go)
    assert greeting["content"][0]["text"] == "Hello, Ann!"
    assert slow["content"][0]["text"] == "finished" and len(notes) == 3
    assert regional["content"][0]["text"].startswith("region=ü")


def test_own_http_client_is_not_closed():
    """A caller-owned httpx.AsyncClient stays open after the McpClient closes."""

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(APP)) as http:
            async with McpClient("http://localhost/mcp", http_client=http) as cl:
                await cl.discover()
            return http.is_closed

    assert run(go) is False


def test_a_hand_built_call_can_be_sent_with_begin():
    """The sans-IO MrtrCall and the session share one factory: ids stay unique (CORE-3)."""

    async def go():
        async with client(elicitation=accept_name) as cl:
            call = MrtrCall.tool(cl.factory, "greet", max_rounds=2)
            await cl.begin(call)
            result = await cl.complete_call(call)
            await cl.discover()
            return result, cl.trace

    result, trace = run(go)
    assert result["content"][0]["text"] == "Hello, Ann!"
    assert len({r.request["id"] for r in trace}) == 3


def test_handlers_are_frozen_so_capabilities_cannot_go_stale():
    """§2.9: capabilities always match the handlers; swapping handlers means assigning anew."""
    handlers = AnswerHandlers(elicitation=accept_name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        handlers.sampling = lambda p, ctx: None  # type: ignore[misc]


def test_extra_headers_go_on_every_post_and_response_headers_are_traced():
    """HTTP-29: a client authenticates every request; extra headers ride on each POST, and
    the trace keeps each response's headers (e.g. which instance served it)."""
    from mrtr_kit.server import McpServer
    from mrtr_kit.server.http import create_app

    seen: list[str | None] = []
    server = McpServer("auth-echo", state_keys=KeyRing.generate())

    @server.tool(description="Says who is asking.")
    def whoami(ctx):
        return str(ctx.principal)

    def principal_of(request):
        seen.append(request.headers.get("authorization"))
        return "alice"

    app = create_app(server, principal_of=principal_of, response_headers={"X-Instance": "i-1"})

    async def go():
        async with McpClient.for_app(app, headers={"Authorization": "Bearer t0k"}) as client:
            await client.list_tools()
            text = (await client.call_tool("whoami"))["content"][0]["text"]
            return text, client.trace

    text, trace = asyncio.run(go())
    assert text == "alice"
    assert seen == ["Bearer t0k", "Bearer t0k"]
    assert all(r.response_headers.get("x-instance") == "i-1" for r in trace)


# --- issue 8: odd servers, manual controls ---------------------------------------------------


def test_mrtr_c2_a_request_state_with_a_lone_surrogate_is_echoed_exactly():
    """MRTR-C2 / CORE-1: a server may send a requestState holding a lone surrogate escape
    (``\\ud800``). The client must not inspect it, so it echoes exactly that string; the body
    stays UTF-8 (the surrogate goes back as the same JSON escape), and nothing raises a bare
    UnicodeEncodeError."""
    odd = "state-\ud800-\udfff-end"
    bodies: list[bytes] = []

    async def handle(request: Request) -> Response:
        raw = await request.body()
        bodies.append(raw)
        message = json.loads(raw)
        params = message["params"]
        if "requestState" not in params:
            ask = {
                "method": "elicitation/create",
                "params": {"message": "Name?", "requestedSchema": NAME},
            }
            result = {
                "resultType": "input_required",
                "inputRequests": {"name": ask},
                "requestState": odd,
            }
        else:
            echoed = params["requestState"]
            result = {
                "resultType": "complete",
                "content": [{"type": "text", "text": str(echoed == odd)}],
            }
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})  # \\u escapes
        return Response(body, media_type="application/json")

    app = Starlette(routes=[Route("/mcp", handle, methods=["POST"])])

    async def go():
        async with client(app, elicitation=accept_name) as cl:
            return await cl.call_tool("t")

    assert run(go)["content"][0]["text"] == "True"
    retry = bodies[1]
    retry.decode("utf-8")  # CORE-1: valid UTF-8 on the wire
    assert b"\\ud800" in retry and b"\\udfff" in retry


def test_elic_10_manual_rounds_give_retry_and_cancel_controls_for_url_mode():
    """ELIC-10: the client offers manual "retry" and "cancel" for the original request: with
    the one-round-at-a-time API a URL-mode call is retried with ``accept`` (the server says
    "not yet" and sends the link again) as often as the user likes, then cancelled, which
    ends the call with the server's answer."""
    s = McpServer("url-controls", state_key=b"u" * 32)
    done: set[str] = set()

    @s.tool(description="Needs a sign-in on a page.")
    def connect(ctx):
        from mrtr_kit.server.context import elicit_url

        ask = {"signin": elicit_url("Sign in", "https://example.com/signin/1")}
        answer = ctx.elicitation("signin")
        if answer is None:
            return ctx.input_required(ask, state={})
        if answer.action == "cancel":
            return "cancelled by the user"
        if "1" not in done:  # accept means "I went there", not "done" (ELIC-9)
            return ctx.input_required(ask, state={})
        return "connected"

    async def go():
        async with client(create_app(s), url_elicitation=lambda p, c: None) as cl:
            call = await cl.begin_tool_call("connect")
            assert call.input_required is not None
            await cl.continue_call(call, {"signin": ElicitResult(action="accept")})  # retry
            assert call.input_required is not None and call.rounds == 2
            await cl.continue_call(call, {"signin": ElicitResult(action="cancel")})  # cancel
            return call

    call = run(go)
    assert call.is_complete and call.result["content"][0]["text"] == "cancelled by the user"


def test_cache_4_5_a_client_given_a_cache_reuses_fresh_plain_results_only():
    """CACHE-4 / CACHE-5 / MRTR-C9: with ``cache=ResultCache()`` a second tools/list within its
    ttlMs is not sent again, another method is, and an MRTR call never uses the cache."""
    stub = Stub(
        lambda m: (
            {"tools": [], "ttlMs": 60_000, "cacheScope": "public"}
            if m["method"] == "tools/list"
            else {"prompts": [], "ttlMs": 0, "cacheScope": "public"}
            if m["method"] == "prompts/list"
            else {"resultType": "complete", "content": [], "ttlMs": 60_000}
        )
    )

    async def go():
        async with client(stub.app, cache=ResultCache()) as cl:
            for _ in range(2):
                await cl.list_tools()
                await cl.list_prompts()
                await cl.call_tool("t")

    run(go)
    assert [m["method"] for m, _ in stub.requests] == [
        "tools/list",
        "prompts/list",
        "tools/call",
        "prompts/list",  # ttlMs 0: stale at once (CACHE-5)
        "tools/call",  # never cached (CACHE-6)
    ]
