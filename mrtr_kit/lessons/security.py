"""Lesson 02 - securing requestState: the refund lab, an attacker's client, the checkpoints.

``RefundLab`` runs the refund example (``mrtr_kit.examples.refunds``) in this process, behind
bearer-token users and a clock the lesson moves by hand, in whatever configuration an attack
needs: plain, HMAC or AEAD state; each binding on or off; no ledger, or a ledger in memory or
in a SQLite file; the idempotency key on the order (one refund per order) on or off. Each
protection is off unless a section turns it on, so each section shows exactly one of them.

``lose_the_final_response`` runs the booking example's last round twice, as a client does whose
first answer was lost, once with each of the example's two designs (single use, idempotent).

``RawCaller`` sends whatever requestState it is given. A real client echoes the state
untouched (MRTR-C2); an attacker's client does not have to, and that is the client a server
must defend against (MRTR-S4).
"""

from __future__ import annotations

import inspect
import json
import logging
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from ..client import McpClient, client_capabilities, request_headers
from ..client.rounds import RequestFactory
from ..client.session import BASE_HEADERS
from ..examples import booking
from ..examples.refunds import RefundDesk, register
from ..protocol.models import ElicitRequestFormParams, ElicitResult
from ..server import McpServer
from ..server.auth import BearerTokens
from ..server.codecs import (
    AeadStateCodec,
    HmacStateCodec,
    InvalidState,
    PlainStateCodec,
    b64url,
    canonical_json,
    make_codec,
    unb64url,
)
from ..server.http import create_app
from ..server.keyring import KeyRing, StateKey
from ..server.ledger import Ledger, MemoryLedger
from ..server.ledger_sqlite import SqliteLedger
from ..server.state import StateBinding, StateChecks, request_digest
from .checkpoints import Checkpoint

USERS = {
    "alice": "alice-token",
    "bob": "bob-token",
    "carol": "carol-token",  # the shop's admin
    "mallory": "mallory-token",
}
LESSON_START = datetime(2026, 7, 28, 12, 0, tzinfo=UTC).timestamp()
MCP_URL = "http://localhost/mcp"
YES = {"confirm": {"action": "accept", "content": {"ok": True}}}

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


def show(answer: ServerAnswer, log: Iterable[str] = (), label: str | None = None) -> None:
    """Print what the client got, then what the server logged about it."""
    print(f"{label}: {answer}" if label else answer)
    for line in log:
        print(f"    server log: {line}")


def tally(answers: Iterable[ServerAnswer]) -> str:
    """One line per kind of answer in a batch, most frequent first:
    ``"9 × error -32602 Invalid requestState\n1 × paid"``. "paid" stands for an answer that
    paid a refund; every other answer is shown as printed."""
    counts = Counter("paid" if a.ok and a.text.startswith("Refunded ") else str(a) for a in answers)
    return "\n".join(f"{n} × {what}" for what, n in counts.most_common())


def show_source(obj: Any) -> None:
    """Print the source of a kit function or method, as it is in ``mrtr_kit``."""
    print(inspect.getsource(obj).rstrip())


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

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        request_state: str | None = None,
        input_responses: dict[str, Any] | None = None,
    ) -> ServerAnswer:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if input_responses is not None:
            params["inputResponses"] = input_responses
        if request_state is not None:
            params["requestState"] = request_state
        request = self._factory.request("tools/call", params)
        headers = {**BASE_HEADERS, **request_headers(request)}  # HTTP-11: a retry's headers
        response = await self.http.post(self.url, json=request, headers=headers)
        return ServerAnswer(response.json())

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
        codec: str = "hmac",
        *,
        keys: KeyRing | None = None,
        checks: StateChecks | None = None,
        ledger: str | None = None,
        name: str = "refunds",
        label: str | None = None,
        clock: LessonClock | None = None,
        desk: RefundDesk | None = None,
        one_per_order: bool = False,
    ) -> RefundLab:
        """``codec``: plain, hmac or aead. ``ledger``: None (no single use), ``"memory"`` or
        ``"sqlite"`` (a new file in a temporary folder). ``name`` is the server's name, which
        states are bound to as their audience. ``one_per_order`` pays each order at most once,
        whichever approval asks (the example's default; off here until section 7 turns it on).
        Instances that share ``desk`` and ``clock`` behave like two processes of one shop."""
        clock = clock or LessonClock()
        spent: Ledger | None = None
        if ledger == "memory":
            spent = MemoryLedger(now=clock)
        elif ledger == "sqlite":
            folder = Path(tempfile.mkdtemp(prefix="mrtr-kit-lesson02-"))
            spent = SqliteLedger(folder / "spent.sqlite3", now=clock)
        elif ledger is not None:
            raise ValueError("ledger is None, 'memory' or 'sqlite'")
        keys = keys or KeyRing.generate("k1")
        server = McpServer(
            name,
            state_codec=make_codec(codec, keys),
            state_checks=checks,
            now=clock,
            ledger=spent,
        )
        desk = register(server, desk, single_use=spent is not None, one_per_order=one_per_order)
        app = create_app(server, principal_of=BearerTokens(USERS))
        return cls(label or name, server, desk, clock, app, ledger, one_per_order)

    # -- configuration -----------------------------------------------------------------------

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


# -- a lost final response (the booking example) ------------------------------------------------

BOOKING_ARGS = {"restaurant": "Luigi's"}
BOOKING_DETAILS = {"details": {"action": "accept", "content": {"party": 4, "when": "2026-09-01"}}}
BOOKING_YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


@dataclass(frozen=True)
class LostResponse:
    """What the client got for round 3 (lost on the way), and for the same request sent again."""

    design: str
    first: ServerAnswer
    again: ServerAnswer
    bookings: int

    def __str__(self) -> str:
        return "\n".join(
            [
                f"{self.design}",
                f"  round 3, lost on the way: {self.first}",
                f"  the same request again:   {self.again}",
                f"  bookings made: {self.bookings}",
            ]
        )

    __repr__ = __str__


async def lose_the_final_response(design: str) -> LostResponse:
    """Book a table in three rounds and send round 3 twice, as a client does whose first
    answer was lost (HTTP-26). ``design``: ``"single use"`` (the ledger refuses the repeat) or
    ``"idempotent"`` (a nonce in the state; the repeat gets the same booking)."""
    if design not in ("single use", "idempotent"):
        raise ValueError("design is 'single use' or 'idempotent'")
    server = McpServer("booking", state_keys=KeyRing.generate(), ledger=MemoryLedger())
    book = booking.register(server, idempotent=design == "idempotent")
    caller = RawCaller.for_app(create_app(server))
    try:
        r1 = await caller.call_tool("book_table", BOOKING_ARGS)
        r2 = await caller.call_tool(
            "book_table",
            BOOKING_ARGS,
            request_state=r1.request_state,
            input_responses=BOOKING_DETAILS,
        )
        final = {"request_state": r2.request_state, "input_responses": BOOKING_YES}
        first = await caller.call_tool("book_table", BOOKING_ARGS, **final)
        again = await caller.call_tool("book_table", BOOKING_ARGS, **final)
    finally:
        await caller.aclose()
        await server.ledger.aclose()
    return LostResponse(design, first, again, len(book.bookings))


# -- reading and editing tokens, as any client can -------------------------------------------------


def _payload_field(token: str) -> int:
    fmt = token.split(".", 1)[0]
    if fmt == PlainStateCodec.format:
        return 1
    if fmt == HmacStateCodec.format:
        return 2
    if fmt == AeadStateCodec.format:
        raise ValueError("an aead1 token is encrypted: without the key there is no payload to read")
    raise ValueError(f"{fmt!r} is not a requestState format of this kit")


def read_payload(token: str) -> dict[str, Any]:
    """The claims inside a plain1 or hmac1 token, read with no key: what every client sees."""
    try:
        return json.loads(unb64url(token.split(".")[_payload_field(token)]))
    except InvalidState as exc:
        raise ValueError(f"the payload is not base64url: {exc.reason}") from None


def show_claims(token: str) -> None:
    print(json.dumps(read_payload(token), indent=2, ensure_ascii=False))


def tamper(token: str, **changes: Any) -> str:
    """``token`` with fields of its ``data`` changed; everything else, the tag too, kept."""
    fields = token.split(".")
    claims = read_payload(token)
    claims["data"].update(changes)
    fields[_payload_field(token)] = b64url(canonical_json(claims))
    return ".".join(fields)


# -- checkpoints -----------------------------------------------------------------------------------


def _not_done(name: str) -> Checkpoint:
    return Checkpoint(
        "not done", f"{name}() still raises NotImplementedError. Fill it in and run again."
    )


def _raised(name: str, exc: Exception) -> Checkpoint:
    return Checkpoint("not yet", f"{name}() raised {type(exc).__name__}: {exc}")


async def check_forge_admin(forge_admin: Callable[[str], str]) -> Checkpoint:
    """Exercise 1: does ``forge_admin`` turn mallory into an admin on the plain server?"""
    lab = RefundLab.build("plain")
    mallory = lab.caller("mallory")
    try:
        first = await mallory.call_tool("export_orders")
        assert first.request_state is not None
        try:
            forged = forge_admin(first.request_state)
        except NotImplementedError:
            return _not_done("forge_admin")
        except Exception as exc:
            return _raised("forge_admin", exc)
        if not isinstance(forged, str):
            return Checkpoint("not yet", f"forge_admin() returned {type(forged).__name__}, not str")
        answer = await mallory.call_tool("export_orders", request_state=forged, input_responses=YES)
    finally:
        await lab.aclose()
    if not answer.ok:
        return Checkpoint("not yet", f"the plain server did not accept it: {answer}")
    customers = sorted({o.customer for o in lab.desk.orders.values() if o.id in answer.text})
    if customers == ["mallory"]:
        return Checkpoint("not yet", "the export shows only mallory's orders: admin is still false")
    return Checkpoint(
        "passed",
        f"the plain server obeyed the forged flag: mallory exported the orders of "
        f"{', '.join(customers)}.",
    )


LESSON_DATA = {"order": "A-1001", "approved_cents": 12450, "note": "2 refunds in 90 days: watch"}


def check_peek(peek: Callable[[str], dict[str, Any]]) -> Checkpoint:
    """Exercise 2: does ``peek`` read every claim of an HMAC token without the key?"""
    lab = RefundLab.build("hmac")
    arguments = {"order_id": LESSON_DATA["order"]}
    binding = StateBinding("alice", request_digest("tools/call", "request_refund", arguments))
    token = lab.server.states.mint(binding, ["confirm"], dict(LESSON_DATA))
    claims = lab.server.states.codec.open(token)
    try:
        seen = peek(token)
    except NotImplementedError:
        return _not_done("peek")
    except Exception as exc:
        return _raised("peek", exc)
    if seen == claims:
        return Checkpoint(
            "passed",
            f"peek() read all {len(claims)} claims without the key, the internal note "
            f"{claims['data']['note']!r} too.",
        )
    if seen == claims["data"]:
        return Checkpoint("not yet", "that is only the data claim: return the whole payload")
    return Checkpoint("not yet", f"peek() returned {seen!r:.80}, not the token's claims")


def check_rotation_plan(
    rotation_plan: Callable[[KeyRing, StateKey], list[KeyRing]],
) -> Checkpoint:
    """Exercise 3: roll ``rotation_plan``'s rings out to two instances, one at a time, and
    check that no state is ever rejected on the way and that the old key is gone at the end."""
    old, new = StateKey.generate("k1"), StateKey.generate("k2")
    current = KeyRing([old])
    try:
        plan = list(rotation_plan(current, new))
    except NotImplementedError:
        return _not_done("rotation_plan")
    except Exception as exc:
        return _raised("rotation_plan", exc)
    if not plan or not all(isinstance(ring, KeyRing) for ring in plan):
        return Checkpoint("not yet", "rotation_plan() must return a non-empty list of KeyRings")

    a = RefundLab.build("hmac", keys=current, label="A")
    b = RefundLab.build("hmac", keys=current, label="B", clock=a.clock, desk=a.desk)
    fleet = (a, b)
    binding = StateBinding("alice", request_digest("tools/call", "request_refund", {}))
    in_flight = [(lab, lab.server.states.mint(binding, [], {})) for lab in fleet]
    ttl = a.server.states.ttl_s + 2 * a.server.states.skew_s
    for step, ring in enumerate(plan, 1):
        if set(a.keys.kids) - set(ring.kids):  # a key goes: the operator first waits a TTL
            a.clock.advance(ttl)
            in_flight = []  # every state issued so far has expired
        for lab in fleet:
            lab.keys = ring
            fresh = [(other, other.server.states.mint(binding, [], {})) for other in fleet]
            in_flight += fresh
            for origin, token in in_flight:
                for target in fleet:
                    try:
                        target.server.states.verify(token, binding)
                    except InvalidState as exc:
                        return Checkpoint(
                            "not yet",
                            f"step {step} {ring!r} reached {lab.label} before the other "
                            f"instance: a state sealed by {origin.label} was rejected by "
                            f"{target.label} ({exc.reason})",
                        )
    final = a.keys
    if final.primary.kid != new.kid:
        return Checkpoint("not yet", f"at the end {final!r} still seals with {final.primary.kid}")
    if old.kid in final.kids:
        return Checkpoint("not yet", f"at the end {final!r} still opens {old.kid}: retire it")
    return Checkpoint(
        "passed",
        f"{len(plan)} steps, every state accepted by both instances throughout; now {final!r}.",
    )
