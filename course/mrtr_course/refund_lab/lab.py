"""The refund lab of lessons 02, 02a and 02b: the refund server, its users, its clock, its log.

``RefundLab`` runs the refund example (``mrtr_course.examples.refunds``) in this process, behind
bearer-token users and a clock the lesson moves by hand, in whatever configuration an attack
needs: plain, HMAC or AEAD state; each binding on or off; no ledger, or a ledger in memory or
in a SQLite file (one file may be shared by several instances, as by the processes of one
machine); the idempotency key on the order (one refund per order) on or off. Each protection
is off unless a section turns it on, so each section shows exactly one of them.

``RawCaller`` sends whatever requestState it is given. A real client echoes the state
untouched (MRTR-C2); an attacker's client does not have to, and that is the client a server
must defend against (MRTR-S4). It builds a request (``tool_call``) apart from sending it
(``send``), so a cell can print the very request that goes over the wire.

What the lessons print is in ``views.py``, the attacker's toolkit in ``attacks.py``; the attacks
and the checkpoints sit beside each lesson's notebook.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from mrtr_course.examples.refunds import RefundDesk, register
from mrtr_kit.client import McpClient, client_capabilities, request_headers
from mrtr_kit.client.factory import RequestFactory
from mrtr_kit.client.session import BASE_HEADERS
from mrtr_kit.protocol.models import ElicitRequestFormParams, ElicitResult
from mrtr_kit.server import McpServer
from mrtr_kit.server.auth import BearerTokens
from mrtr_kit.server.codecs import AeadStateCodec, HmacStateCodec, StateCodec, make_codec
from mrtr_kit.server.http import create_app
from mrtr_kit.server.keyring import KeyRing
from mrtr_kit.server.ledger import Ledger, MemoryLedger
from mrtr_kit.server.ledger.sqlite import SqliteLedger
from mrtr_kit.server.state import StateChecks

USERS = {
    "alice": "alice-token",
    "bob": "bob-token",
    "carol": "carol-token",  # the shop's admin
    "mallory": "mallory-token",
}
LESSON_START = datetime(2026, 7, 28, 12, 0, tzinfo=UTC).timestamp()
MCP_URL = "http://localhost/mcp"
YES = {"confirm": {"action": "accept", "content": {"ok": True}}}
ORDER = "A-1001"  # alice's order: the refund the attacks and the checkpoints ask for

# -- the server log ------------------------------------------------------------------------------
# The wire shows one fixed error for every rejected state; the reason is only in the server log.
# That uniform error is this kit's convention (KIT): the spec asks only that such a state be
# rejected (MRTR-S4a). The lesson keeps the log here so a cell can print it next to what the
# client saw.

_CAPTURES: list[list[str]] = []  # the lists of the ``server_log()`` blocks now running


class _LessonLogHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        for lines in _CAPTURES:
            lines.append(record.getMessage())


for _name in ("mrtr_kit.state", "mrtr_kit.auth"):
    logging.getLogger(_name).addHandler(_LessonLogHandler(logging.INFO))


@contextmanager
def server_log() -> Iterator[list[str]]:
    """A list that collects the server's log lines about rejected states and requests while
    the block runs."""
    lines: list[str] = []
    _CAPTURES.append(lines)
    try:
        yield lines
    finally:
        _CAPTURES.remove(lines)


def logged_reason(log: list[str]) -> str | None:
    """Why the server rejected a state, from its last log line: ``"bad tag"``, ``"expired"``."""
    return log[-1].rsplit("): ", 1)[-1] if log else None


# -- time ----------------------------------------------------------------------------------------


class LessonClock:
    """A clock the lesson moves by hand, so expiry shows without waiting 15 minutes."""

    def __init__(self, start: float = LESSON_START) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    def __repr__(self) -> str:
        return f"LessonClock({datetime.fromtimestamp(self.t, UTC):%Y-%m-%d %H:%M:%S} UTC)"


# -- what came back --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerAnswer:
    """One JSON-RPC response, printed on one line: ``complete: ...`` or ``error -32602: ...``."""

    response: dict[str, Any]

    @property
    def result(self) -> dict[str, Any]:
        return self.response.get("result") or {}

    @property
    def kind(self) -> str:
        if "error" in self.response:
            return "error"
        return str(self.result.get("resultType", "complete"))

    @property
    def ok(self) -> bool:
        """A complete result that is not a tool error."""
        return self.kind == "complete" and not self.result.get("isError")

    @property
    def request_state(self) -> str | None:
        return self.result.get("requestState")

    @property
    def text(self) -> str:
        if self.kind == "error":
            err = self.response["error"]
            return f"{err['code']} {err['message']}"
        if self.kind == "input_required":
            return f"asks for {sorted(self.result.get('inputRequests') or {})}"
        return text_of(self.result)

    def __str__(self) -> str:
        if self.kind == "error":
            return f"error {self.text}"
        flag = " (tool error)" if self.result.get("isError") else ""
        return f"{self.kind}{flag}: {self.text}"

    __repr__ = __str__


def text_of(result: dict[str, Any]) -> str:
    """The text blocks of a tool result, joined."""
    blocks = result.get("content") or []
    return "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")


# -- clients ---------------------------------------------------------------------------------------


def bearer(user: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {USERS[user]}"} if user else {}


class RawCaller:
    """A client that sends exactly the ``requestState`` and answers you give it."""

    def __init__(self, http: httpx.AsyncClient, url: str = MCP_URL) -> None:
        self.http = http
        self.url = url
        self._factory = RequestFactory(capabilities=client_capabilities(form=True))

    @classmethod
    def for_app(cls, app: Starlette, headers: dict[str, str] | None = None) -> RawCaller:
        return cls(httpx.AsyncClient(transport=httpx.ASGITransport(app), headers=headers))

    def tool_call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        request_state: str | None = None,
        input_responses: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The JSON-RPC ``tools/call`` request ``call_tool`` sends, built but not sent: lesson
        02 prints it before it ``send``s it, so what a cell shows is what goes over the wire."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if input_responses is not None:
            params["inputResponses"] = input_responses
        if request_state is not None:
            params["requestState"] = request_state
        return self._factory.request("tools/call", params)

    async def send(self, request: dict[str, Any]) -> ServerAnswer:
        """POST one request built by ``tool_call``; the server's JSON-RPC response."""
        headers = {**BASE_HEADERS, **request_headers(request)}  # HTTP-11: a retry's headers
        response = await self.http.post(self.url, json=request, headers=headers)
        return ServerAnswer(response.json())

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        request_state: str | None = None,
        input_responses: dict[str, Any] | None = None,
    ) -> ServerAnswer:
        request = self.tool_call(
            name, arguments, request_state=request_state, input_responses=input_responses
        )
        return await self.send(request)

    async def aclose(self) -> None:
        await self.http.aclose()


def say_yes(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
    """An answer handler for ``McpClient`` that approves every confirmation form."""
    return ElicitResult(action="accept", content={"ok": True})


# -- the lab ---------------------------------------------------------------------------------------


@dataclass(eq=False)
class RefundLab:
    """The refund server in one configuration, with its desk (orders, payouts) and clock."""

    label: str
    server: McpServer
    desk: RefundDesk
    clock: LessonClock
    app: Starlette
    ledger_kind: str | None = None
    one_per_order: bool = False
    _callers: dict[str, RawCaller] = field(default_factory=dict, repr=False)
    _http: list[httpx.AsyncClient] = field(default_factory=list, repr=False)

    @classmethod
    def build(
        cls,
        # hmac, not the library's default (aead): the lesson reads what a state shows a client,
        # and a tag alone leaves every claim readable (SEC-8); aead is one of the lesson's steps.
        codec: str | StateCodec = "hmac",
        *,
        keys: KeyRing | None = None,
        checks: StateChecks | None = None,
        ledger: str | Path | None = None,
        name: str = "refunds",
        label: str | None = None,
        clock: LessonClock | None = None,
        desk: RefundDesk | None = None,
        one_per_order: bool = False,
    ) -> RefundLab:
        """``codec``: plain, hmac or aead, or a codec object (which holds its own keys, so
        ``keys`` is then ignored). ``ledger``: None (no single use), ``"memory"``,
        ``"sqlite"`` (a new file in a temporary folder) or the path of an existing SQLite
        ledger file, such as another instance's ``ledger_file``: this instance then opens
        its own connection to that file and shares with the other instance, as two
        processes of one machine would, the spent states and the payouts, and nothing
        else. ``name`` is the server's name, which states are bound to as their audience.
        ``one_per_order`` pays each order at most once, whichever approval asks (the
        example's default; off here until lesson 02b turns it on). ``desk``: another
        instance's desk, shared as a Python object (lesson 02b, section 1); by default a new
        desk that keeps its payouts in this instance's ledger."""
        clock = clock or LessonClock()
        spent: Ledger | None = None
        kind: str | None = None
        if ledger == "memory":
            spent, kind = MemoryLedger(now=clock), "memory"
        elif ledger == "sqlite":
            folder = Path(tempfile.mkdtemp(prefix="mrtr-kit-lesson02-"))
            spent, kind = SqliteLedger(folder / "spent.sqlite3", now=clock, create=True), "sqlite"
        elif isinstance(ledger, Path):
            if (
                not ledger.is_file()
            ):  # another instance's file, never a new one: a typo shares nothing
                raise FileNotFoundError(f"no SQLite ledger file at {ledger}")
            spent, kind = SqliteLedger(ledger, now=clock), "sqlite"
        elif ledger is not None:
            raise ValueError("ledger is None, 'memory', 'sqlite' or the Path of a SQLite file")
        if isinstance(codec, str):
            codec = make_codec(codec, keys or KeyRing.generate("k1"))
        server = McpServer(
            name,
            state_codec=codec,
            state_checks=checks,
            now=clock,
            ledger=spent,
        )
        desk = register(server, desk, single_use=spent is not None, one_per_order=one_per_order)
        app = create_app(server, principal_of=BearerTokens(USERS))
        return cls(label or name, server, desk, clock, app, kind, one_per_order)

    # -- configuration -----------------------------------------------------------------------

    @property
    def ledger_file(self) -> Path:
        """The SQLite file of this instance's ledger. Pass it to another instance's
        ``build(ledger=...)`` and the two share their spent states and their payouts."""
        ledger = self.server.ledger
        if not isinstance(ledger, SqliteLedger):
            raise TypeError(f"{self.label} keeps its ledger in {type(ledger).__name__}, no file")
        return ledger.path

    @property
    def keyed_codec(self) -> HmacStateCodec | AeadStateCodec:
        codec = self.server.states.codec
        if not isinstance(codec, HmacStateCodec | AeadStateCodec):
            raise TypeError(f"the {codec.format} codec has no keys")
        return codec

    @property
    def keys(self) -> KeyRing:
        return self.keyed_codec.keys

    @keys.setter
    def keys(self, ring: KeyRing) -> None:
        """Give this instance another key ring: one step of a rotation."""
        self.keyed_codec.keys = ring

    def describe(self) -> str:
        codec = self.server.states.codec
        unsafe = " (UNSAFE: no integrity)" if getattr(codec, "unsafe", False) else ""
        on = [name for name, enabled in vars(self.server.states.checks).items() if enabled]
        checks = ", ".join(on) if on else "none (integrity only)"
        single = f"{self.ledger_kind} ledger" if self.ledger_kind else "off"
        per_order = "; one refund per order: on" if self.one_per_order else ""
        return (
            f"{self.label}: {codec.format} state{unsafe}; bound to: {checks}; "
            f"single use: {single}{per_order}"
        )

    __repr__ = describe

    # -- talking to it -----------------------------------------------------------------------

    def client(self, user: str) -> McpClient:
        """A well-behaved ``McpClient`` signed in as ``user``."""
        http = httpx.AsyncClient(transport=httpx.ASGITransport(self.app), headers=bearer(user))
        self._http.append(http)  # McpClient leaves an http_client it was given open
        return McpClient(MCP_URL, http_client=http, elicitation=say_yes)

    def caller(self, user: str | None) -> RawCaller:
        """A ``RawCaller`` signed in as ``user``: it sends any state you hand it."""
        key = user or ""
        if key not in self._callers:
            self._callers[key] = RawCaller.for_app(self.app, bearer(user))
        return self._callers[key]

    async def approval(self, user: str, order_id: str) -> str:
        """Round 1 of ``request_refund`` as ``user``: the requestState holding the approval."""
        answer = await self.caller(user).call_tool("request_refund", {"order_id": order_id})
        if answer.request_state is None:
            raise RuntimeError(f"no approval: {answer}")
        return answer.request_state

    async def redeem(self, user: str, order_id: str, request_state: str) -> ServerAnswer:
        """Round 2 of ``request_refund`` as ``user``: "yes", with whatever state you give."""
        return await self.caller(user).call_tool(
            "request_refund",
            {"order_id": order_id},
            request_state=request_state,
            input_responses=YES,
        )

    async def aclose(self) -> None:
        for caller in self._callers.values():
            await caller.aclose()
        for http in self._http:
            await http.aclose()
        await self.server.ledger.aclose()
