"""Issue 20, items 2 and 3: requestState is sealed (AEAD) by default, and every
input_required seals the keys it asked, so an answer nobody asked for never reaches a handler.

* MRTR-E3 (SHOULD): ignore unrequested entries in inputResponses. The server knows what it
  asked only if every input_required records it: SEC-6 (KIT) is that record, now minted even
  for a handler that keeps no state of its own.
* SEC-8: the client can read an unencrypted state; the default codec is AES-256-GCM.
* MRTR-S5d: ``redeem_once`` spends a state; every retry now carries one.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from typing import Any

import pytest

from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.codecs import AeadStateCodec, HmacStateCodec
from mrtr_kit.server.context import elicit_form
from mrtr_kit.server.core import RedeemWithoutState
from tests.helpers import error, request, result, run

FORM = {"elicitation": {"form": {}}}
OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
CODE = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}
SECRET = "risk-note-7f3a9c"  # what a handler keeps in its state; no client may read it


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def transfer_server(**options: Any) -> tuple[McpServer, list[set[str]]]:
    """The issue's transfer_funds: round 1 asks ``confirm`` and keeps no state (the README's
    pattern), then ``otp``; then it spends the state once and pays. ``seen`` records the
    answer keys the handler was given on each run."""
    s = McpServer("bank", state_keys=KeyRing.generate(), **options)
    seen: list[set[str]] = []

    @s.tool(description="Moves money after a confirmation and a one-time code.")
    async def transfer_funds(ctx):
        seen.append(set(ctx.input_responses))
        st = ctx.state or {}
        if not st.get("confirmed"):
            confirm = ctx.elicitation("confirm")
            if confirm is None or confirm.action != "accept":
                return ctx.input_required({"confirm": elicit_form("Send $100?", OK)})
            st = {"confirmed": True}
        otp = ctx.elicitation("otp")
        if otp is None or otp.action != "accept":
            return ctx.input_required({"otp": elicit_form("Code?", CODE)}, state=st)
        await ctx.redeem_once()
        return f"sent, code {otp.content['code']}"

    return s, seen


def call(server: McpServer, principal: str | None = "alice", **extra: Any) -> dict[str, Any]:
    msg = request("tools/call", {"name": "transfer_funds", **extra}, capabilities=FORM)
    reply = run(server, msg, principal)
    assert reply.body is not None
    return reply.body


def test_mrtr_e3_the_issues_unasked_otp_is_asked_for_again_never_used():
    """MRTR-E3 / SEC-6 (KIT): round 1 asked only ``confirm`` and the handler kept no state.
    A retry carrying ``confirm`` and an ``otp`` nobody asked for: the handler sees only
    ``confirm`` and asks for the otp; the otp, once asked, completes the transfer, and
    ``redeem_once`` works on it (before: the otp skipped its question, redeem_once raised and
    the client got -32603)."""
    server, seen = transfer_server()
    r1 = call(server)["result"]
    assert list(r1["inputRequests"]) == ["confirm"]
    assert isinstance(r1["requestState"], str)  # minted although the handler kept none
    early = {"confirm": accept(ok=True), "otp": accept(code="000000")}
    r2 = call(server, inputResponses=early, requestState=r1["requestState"])["result"]
    assert r2["resultType"] == "input_required" and list(r2["inputRequests"]) == ["otp"]
    assert seen == [set(), {"confirm"}]  # the early otp never reached the handler
    r3 = call(
        server, inputResponses={"otp": accept(code="123456")}, requestState=r2["requestState"]
    )
    assert r3["result"]["content"][0]["text"] == "sent, code 123456"
    again = call(
        server, inputResponses={"otp": accept(code="123456")}, requestState=r2["requestState"]
    )
    assert again["error"]["code"] == -32602  # spent: single use (MRTR-S5d)


@pytest.mark.parametrize(
    ("method", "params"),
    [("tools/call", {"name": "transfer_funds"}), ("prompts/get", {"name": "brief"})],
)
def test_mrtr_e3_answers_on_a_first_request_without_state_are_ignored(method, params):
    """MRTR-E3: a request with no requestState is a first round: the server has asked
    nothing, so its inputResponses are unrequested and never reach a handler; it is asked."""
    server, seen = transfer_server()

    @server.prompt(description="Needs a topic.")
    def brief(ctx):
        seen.append(set(ctx.input_responses))
        topic = ctx.elicitation("topic")
        if topic is None:
            schema = {"type": "object", "properties": {"topic": {"type": "string"}}}
            return ctx.input_required({"topic": elicit_form("Topic?", schema)})
        return f"about {topic.content['topic']}"

    answers = {"confirm": accept(ok=True), "otp": accept(code="1"), "topic": accept(topic="x")}
    msg = request(method, {**params, "inputResponses": answers}, capabilities=FORM)
    res = result(run(server, msg, "alice"))
    assert res["resultType"] == "input_required"
    assert seen == [set()]


def test_mrtr_s5d_redeem_once_on_a_first_round_names_the_fix_for_the_author(caplog):
    """MRTR-S5d: redeem_once spends a state; a first round has none. A handler that spends
    before asking gets ``RedeemWithoutState`` in the server log with the fix; the client gets
    the plain -32603 (no internals on the wire). No client input leads there: answers sent on
    a first round never reach the handler."""
    server = McpServer("eager", state_keys=KeyRing.generate())

    @server.tool(description="Spends before it asked anything (a handler bug).")
    async def pay_now(ctx):
        await ctx.redeem_once()
        return "paid"

    with caplog.at_level(logging.ERROR, logger="mrtr_kit.server"):
        err = error(run(server, request("tools/call", {"name": "pay_now"})))
    assert err == {"code": -32603, "message": "Internal error"}
    bugs = [r.exc_info[1] for r in caplog.records if r.exc_info]
    assert len(bugs) == 1 and isinstance(bugs[0], RedeemWithoutState)
    assert "first round" in str(bugs[0]) and "ctx.input_required" in str(bugs[0])


def decodings(token: str) -> list[bytes]:
    """Everything base64 (URL-safe or standard, padded or not) makes of the token and of
    every part of it split at dots, underscores or dashes, and of runs of those parts."""
    parts = {token}
    for sep in r"[.]", r"[._]", r"[._-]":
        pieces = re.split(sep, token)
        parts.update(pieces)
        parts.update(
            "".join(pieces[i:j]) for i in range(len(pieces)) for j in range(i + 1, len(pieces) + 1)
        )
    out = []
    for part in parts:
        padded = part + "=" * (-len(part) % 4)
        for decode in (base64.urlsafe_b64decode, base64.b64decode):
            try:
                out.append(decode(padded))
            except (binascii.Error, ValueError):
                continue
    return out


def first_state(server: McpServer) -> str:
    @server.tool(description="Keeps a note and the user's name in its state.")
    def approve(ctx):
        return ctx.input_required({"ok": elicit_form("OK?", OK)}, state={"note": SECRET})

    msg = request("tools/call", {"name": "approve"}, capabilities=FORM)
    token: str = result(run(server, msg, "alice"))["requestState"]
    return token


def revealed(token: str) -> list[str]:
    found = []
    for raw in decodings(token):
        for secret in (SECRET, "alice", '"asked"', '"data"', '"sub"'):
            if secret.encode() in raw:
                found.append(secret)
    return sorted(set(found))


def test_sec_8_the_default_state_shows_nothing_to_any_base64_decoding():
    """SEC-8: with no codec named, requestState is AES-256-GCM: no base64 decoding of the
    token or of any of its parts shows the handler's data, the principal or a claim name.
    The same decoder reads all of them in an HMAC state, so it would find them if shown."""
    server = McpServer("bank", state_keys=KeyRing.generate())
    assert isinstance(server.states.codec, AeadStateCodec)
    token = first_state(server)
    assert token.startswith("aead1.")
    assert revealed(token) == []
    hmac_token = first_state(McpServer("bank", state_keys=KeyRing.generate(), state_codec="hmac"))
    assert revealed(hmac_token) == sorted([SECRET, "alice", '"asked"', '"data"', '"sub"'])


def test_sec_8_hmac_is_still_selectable_by_name_and_keeps_working():
    """SEC-8 / MRTR-S4a: ``state_codec="hmac"`` still gives an HMAC-SHA256 state (readable,
    tamper-proof) that completes a flow, as lesson 02 uses it to show what a tag leaves
    readable."""
    server, _ = transfer_server(state_codec="hmac")
    assert isinstance(server.states.codec, HmacStateCodec)
    r1 = call(server)["result"]
    assert r1["requestState"].startswith("hmac1.")
    claims = server.states.codec.open(r1["requestState"])
    assert claims["asked"] == ["confirm"] and claims["data"] is None  # kept none
    r2 = call(server, inputResponses={"confirm": accept(ok=True)}, requestState=r1["requestState"])
    r3 = call(
        server, inputResponses={"otp": accept(code="9")}, requestState=r2["result"]["requestState"]
    )
    assert r3["result"]["content"] == [{"type": "text", "text": "sent, code 9"}]


def test_mrtr_e3_a_tool_may_name_keys_it_reads_without_state_and_gets_only_those():
    """MRTR-E3: ``stateless_answers`` (the conformance suite's greeting needs it) lets a tool
    read the keys it names on a first request; every other answer there is still dropped."""
    server = McpServer("greeter", state_keys=KeyRing.generate())
    seen: list[set[str]] = []

    @server.tool(description="Greets.", stateless_answers=("name",))
    def greet(ctx):
        seen.append(set(ctx.input_responses))
        return "hi"

    answers = {"name": accept(name="Ann"), "confirm": accept(ok=True)}
    run(server, request("tools/call", {"name": "greet", "inputResponses": answers}))
    assert seen == [{"name"}]


def test_cache_3_a_retry_is_a_retry_even_when_the_handler_kept_nothing_and_got_no_answer():
    """CACHE-3 (KIT): a resources/read that completes on a retry is never cacheable. The
    retry here carries only the state the core minted (the handler kept none, the client sent
    no answer), and ``ctx.is_retry`` still says so."""
    server = McpServer("docs", state_keys=KeyRing.generate())

    @server.resource("docs://terms", name="terms", ttl_ms=60_000, cache_scope="public")
    def terms(ctx):
        if not ctx.is_retry:
            return ctx.input_required({"ok": elicit_form("Read the terms?", OK)})
        return "the terms"

    first = result(
        run(server, request("resources/read", {"uri": "docs://terms"}, capabilities=FORM))
    )
    retry = {"uri": "docs://terms", "requestState": first["requestState"]}
    done = result(run(server, request("resources/read", retry, capabilities=FORM)))
    assert done["contents"][0]["text"] == "the terms"
    assert (done["ttlMs"], done["cacheScope"]) == (0, "private")
