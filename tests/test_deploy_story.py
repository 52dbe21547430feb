"""Issue 20's story, end to end, as an engineer deploying the library would see it: their own
module served with ``python -m mrtr_kit serve --app bank:server --allowed-host api.example.com``,
a ``transfer_funds`` tool (confirm, then a one-time code, then pay once), called over real HTTP
with ``Host: api.example.com``.

* the round-2 ``requestState`` reveals none of the handler's data to any base64 decoding of any
  part of it (the default codec is AEAD, SEC-8);
* an ``otp`` answer sent early, with the ``confirm`` answer, is not used: the server asks for the
  code again (MRTR-E3: only answers to what the previous round asked reach a handler);
* the final retry sent twice pays once: the second is refused (MRTR-S5d), and the business
  record (a file the module appends to) holds one payment.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
from typing import Any

import httpx
import pytest

from tests.helpers import headers, request, start_serve, stop_serve

BANK = """
import os
from pathlib import Path

from mrtr_kit.server import KeyRing, McpServer
from mrtr_kit.server.context import elicit_form

SECRET = "memo-only-the-server-may-read-7f3a"  # handler data the client must never see
PAID = Path(os.environ["BANK_PAID_FILE"])
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
OTP = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}
ARGS = {
    "type": "object",
    "properties": {"amount": {"type": "integer", "minimum": 1}, "to": {"type": "string"}},
    "required": ["amount", "to"],
}
server = McpServer("bank", state_keys=KeyRing.generate())


@server.tool(description="Sends money once you confirm and give the one-time code.",
             input_schema=ARGS)
async def transfer_funds(ctx):
    amount, to = ctx.arguments["amount"], ctx.arguments["to"]
    if ctx.state is None:  # nothing confirmed yet
        confirm = ctx.form("confirm", f"Send {amount} to {to}?", CONFIRM)
        if confirm.needs_asking:
            return confirm.ask()
        if not (confirm.accepted and confirm.content["ok"]):
            return "Nothing sent."
        otp = elicit_form("The code we sent you?", OTP)
        return ctx.input_required({"otp": otp}, state={"step": "otp", "memo": SECRET})
    otp = ctx.form("otp", "The code we sent you?", OTP, state=ctx.state)
    if otp.needs_asking:
        return otp.ask()
    if not otp.accepted or otp.content["code"] != "123456":
        return "Wrong code: nothing sent."
    await ctx.redeem_once()  # MRTR-S5d: spend the state before paying, never after
    with PAID.open("a") as out:
        out.write(f"{amount} {to}\\n")
    return f"Sent {amount} to {to}."
"""

FORMS = {"elicitation": {"form": {}}}
PUBLIC = "api.example.com"


def call(url: str, rid: int, **params: Any) -> dict[str, Any]:
    body = request(
        "tools/call",
        {"name": "transfer_funds", "arguments": {"amount": 250, "to": "bob"}, **params},
        capabilities=FORMS,
    )
    body["id"] = rid
    sent = headers("tools/call", "transfer_funds", Host=PUBLIC)
    response = httpx.post(url, json=body, headers=sent, timeout=30)
    assert response.status_code in (200, 400), response.text
    return response.json()


def decodings(token: str) -> list[bytes]:
    """Every base64 (standard or URL-safe, padded or not) decoding of every part of ``token``
    split at dots, and of the whole token: what a curious client would try."""
    parts = [token, *re.split(r"[.]", token)]
    found = []
    for part in parts:
        for alphabet in (base64.urlsafe_b64decode, base64.b64decode):
            for pad in range(3):
                with contextlib.suppress(binascii.Error, ValueError):
                    found.append(alphabet(part + "=" * pad))
    return found


@pytest.mark.slow
def test_issue_20_own_module_public_host_sealed_state_unasked_answer_and_one_payment(tmp_path):
    (tmp_path / "bank.py").write_text(BANK, encoding="utf-8")
    paid = tmp_path / "paid.txt"
    proc, url = start_serve(
        tmp_path, "--app", "bank:server", "--allowed-host", PUBLIC,
        env={"BANK_PAID_FILE": str(paid)},
    )  # fmt: skip
    try:
        confirm = {"action": "accept", "content": {"ok": True}}
        early_otp = {"action": "accept", "content": {"code": "123456"}}
        round1 = call(url, 1)["result"]
        assert round1["resultType"] == "input_required"
        assert list(round1["inputRequests"]) == ["confirm"]
        # The confirm answer plus an otp answer nobody asked for yet (MRTR-E3).
        round2 = call(
            url, 2, inputResponses={"confirm": confirm, "otp": early_otp},
            requestState=round1["requestState"],
        )["result"]  # fmt: skip
        assert round2["resultType"] == "input_required", round2
        assert list(round2["inputRequests"]) == ["otp"], "the early otp answer was used"
        assert not paid.exists()
        state = round2["requestState"]
        for raw in decodings(state):
            for secret in (b"memo-only", b"7f3a", b'"step"', b"otp", b"bob"):
                assert secret not in raw, (secret, raw[:80])
        final = {"inputResponses": {"otp": early_otp}, "requestState": state}
        paid_once = call(url, 3, **final)["result"]
        assert paid_once["content"][0]["text"] == "Sent 250 to bob."
        replay = call(url, 4, **final)
        assert replay["error"]["code"] == -32602, replay  # MRTR-S5d: spent
    finally:
        out = stop_serve(proc)
    assert paid.read_text() == "250 bob\n", "paid more than once"
    assert "Traceback" not in out, out
    print(json.dumps({"round2_requestState_chars": len(state)}))
