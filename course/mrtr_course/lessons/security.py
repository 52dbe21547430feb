"""Lesson 02 - securing requestState: the refund lab, an attacker's client, the checkpoints.

``RefundLab`` runs the refund example (``mrtr_course.examples.refunds``) in this process, behind
bearer-token users and a clock the lesson moves by hand, in whatever configuration an attack
needs: plain, HMAC or AEAD state; each binding on or off; no ledger, or a ledger in memory or
in a SQLite file (one file may be shared by several instances, as by the processes of one
machine); the idempotency key on the order (one refund per order) on or off. Each protection
is off unless a section turns it on, so each section shows exactly one of them.

``lose_the_final_response`` runs the booking example's last round twice, as a client does whose
first answer was lost, once with each of the example's two designs (single use, idempotent).

``RawCaller`` sends whatever requestState it is given. A real client echoes the state
untouched (MRTR-C2); an attacker's client does not have to, and that is the client a server
must defend against (MRTR-S4). It builds a request (``tool_call``) apart from sending it
(``send``), so a cell can print the very request that goes over the wire.

The attacks themselves are not here: they are in ``notebooks/lesson02_attacks.py``, beside the
notebook, where a learner opens them from JupyterLab's file browser; the scoreboard is there
too. This module is the lab they run in, and it never imports that file (the arrow goes
notebook -> course -> library). ``rotation_timeline`` rolls key rings out to two instances and
records, after each change, which keys seal, which open and which states are accepted.

The checkpoints put the learner's code into a real server: ``check_unseal`` through
``LearnerHmacCodec`` (the kit's HMAC codec with the learner's ``unseal`` as its ``open``),
``check_verify_claims`` by wrapping the lab's ``StateIssuer.verify`` (the kit checks the tag,
the learner the claims). Neither needs a hook in ``mrtr_kit/server``.
"""

from __future__ import annotations

import ast
import html
import inspect
import json
import logging
import re
import tempfile
import textwrap
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

from mrtr_course.examples import booking
from mrtr_course.examples.refunds import RefundDesk, register
from mrtr_course.checkpoints import Checkpoint
from mrtr_kit.client import McpClient, client_capabilities, request_headers
from mrtr_kit.client.factory import RequestFactory
from mrtr_kit.client.session import BASE_HEADERS
from mrtr_kit.protocol.models import ElicitRequestFormParams, ElicitResult
from mrtr_kit.server import McpServer
from mrtr_kit.server.auth import BearerTokens
from mrtr_kit.server.codecs import (
    MAX_TOKEN_BYTES,
    AeadStateCodec,
    HmacStateCodec,
    InvalidState,
    PlainStateCodec,
    StateCodec,
    b64url,
    canonical_json,
    make_codec,
    unb64url,
)
from mrtr_kit.server.http import create_app
from mrtr_kit.server.keyring import KeyRing, StateKey, derive_key
from mrtr_kit.server.ledger import Ledger, MemoryLedger
from mrtr_kit.server.ledger.sqlite import SqliteLedger
from mrtr_kit.server.state import StateBinding, StateChecks, request_digest

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


def code_lines(obj: Any) -> list[str]:
    """The source lines of a kit function, method or class as they are in ``mrtr_kit``, less
    their docstrings. The lesson shows what the code does; docstrings are the API reference's
    and change without the code changing, so the lesson's outputs do not depend on them."""
    lines = inspect.getsource(obj).splitlines(keepends=True)
    # Dedenting keeps the line count, so the parsed line numbers index ``lines``.
    tree = ast.parse(textwrap.dedent("".join(lines)))
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return [line for number, line in enumerate(lines, 1) if number not in docstrings]


def show_source(obj: Any) -> None:
    """Print the source of a kit function or method, as it is in ``mrtr_kit``, without its
    docstring (``code_lines``)."""
    print("".join(code_lines(obj)).rstrip())


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
            spent, kind = SqliteLedger(folder / "spent.sqlite3", now=clock), "sqlite"
        elif isinstance(ledger, Path):
            if not ledger.is_file():  # SQLite would create an empty one: a typo shares nothing
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
    instances: int = 1

    def __str__(self) -> str:
        on_a, on_b = (" on A", " on B") if self.instances == 2 else ("", "")
        return "\n".join(
            [
                f"{self.design}",
                f"  round 3{on_a}, lost on the way: {self.first}",
                f"  the same request again{on_b}:   {self.again}",
                f"  bookings made: {self.bookings}",
            ]
        )

    __repr__ = __str__


async def lose_the_final_response(design: str, instances: int = 1) -> LostResponse:
    """Book a table in three rounds and send round 3 twice, as a client does whose first
    answer was lost (HTTP-26). ``design``: ``"single use"`` (the ledger refuses the repeat) or
    ``"idempotent"`` (a nonce in the state; the repeat gets the same booking). With
    ``instances=2`` the repeat lands on instance B, which shares A's keys and SQLite ledger
    file (the spent ids and the bookings): nothing else."""
    if design not in ("single use", "idempotent"):
        raise ValueError("design is 'single use' or 'idempotent'")
    if instances not in (1, 2):
        raise ValueError("instances is 1 or 2")
    keys = KeyRing.generate()
    ledger_file = Path(tempfile.mkdtemp(prefix="mrtr-booking-")) / "ledger.sqlite3"
    servers, callers = [], []
    for _ in range(instances):
        ledger: Ledger = SqliteLedger(ledger_file) if instances == 2 else MemoryLedger()
        server = McpServer("booking", state_keys=keys, ledger=ledger)
        book = booking.register(server, idempotent=design == "idempotent")
        servers.append(server)
        callers.append(RawCaller.for_app(create_app(server)))
    a, b = callers[0], callers[-1]
    try:
        r1 = await a.call_tool("book_table", BOOKING_ARGS)
        r2 = await a.call_tool(
            "book_table",
            BOOKING_ARGS,
            request_state=r1.request_state,
            input_responses=BOOKING_DETAILS,
        )
        final = {"request_state": r2.request_state, "input_responses": BOOKING_YES}
        first = await a.call_tool("book_table", BOOKING_ARGS, **final)
        again = await b.call_tool("book_table", BOOKING_ARGS, **final)
        made = len(await book.bookings())  # B's book: it reads the shared file
    finally:
        for caller in callers:
            await caller.aclose()
        for server in servers:
            await server.ledger.aclose()
    return LostResponse(design, first, again, made, instances)


# -- tables the notebook shows ---------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A small table for the notebook: HTML in JupyterLab and on GitHub, aligned text elsewhere."""

    title: str
    header: list[str]
    rows: list[list[str]]

    def __repr__(self) -> str:
        widths = [
            max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))
        ]

        def line(cells: list[str]) -> str:
            return " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

        rule = "-+-".join("-" * w for w in widths)
        return "\n".join([self.title, line(self.header), rule, *map(line, self.rows)])

    def _repr_html_(self) -> str:
        def row(cells: list[str], tag: str) -> str:
            inner = "".join(
                f"<{tag} style='text-align:left'>{html.escape(c)}</{tag}>" for c in cells
            )
            return f"<tr>{inner}</tr>"

        body = "".join(row(r, "td") for r in self.rows)
        return (
            f"<table><caption style='text-align:left'><b>{html.escape(self.title)}</b></caption>"
            f"<thead>{row(self.header, 'th')}</thead><tbody>{body}</tbody></table>"
        )


def mark(stopped: bool, text: str) -> str:
    """``✔ text`` when a protection held, ``✘ text`` when it did not."""
    return f"{'✔' if stopped else '✘'} {text}"


# -- one round 2, for the checkpoints --------------------------------------------------------------

ORDER = "A-1001"
_REFUNDED = re.compile(r"^Refunded (\$[\d,.]+)")


async def _redeem(
    lab: RefundLab, token: str, user: str = "alice", order: str = ORDER
) -> tuple[ServerAnswer, str | None]:
    """Round 2 with ``token``; the answer and the reason the server logged, if it rejected."""
    with server_log() as log:
        answer = await lab.redeem(user, order, token)
    return answer, logged_reason(log)


def logged_reason(log: list[str]) -> str | None:
    """Why the server rejected a state, from its last log line: ``"bad tag"``, ``"expired"``."""
    return log[-1].rsplit("): ", 1)[-1] if log else None


def verdict(answer: ServerAnswer, reason: str | None) -> tuple[bool, str]:
    """(stopped, what happened) for one round 2: paid, rejected (and why), or not paid."""
    paid = _REFUNDED.match(answer.text) if answer.ok else None
    if paid:
        return False, f"paid {paid.group(1)}"
    if answer.kind == "error":
        return True, f"rejected ({reason})" if reason else f"error {answer.text}"
    if "refunded already" in answer.text:
        return True, "not paid: refunded already"
    return True, f"not paid: {answer}"


# The two edits exercise 2's checkpoint sends. The lesson's own token editors, written for
# learners to read, are in notebooks/lesson02_attacks.py; the course never imports from
# notebooks/ (the arrow goes notebook -> course -> library), so the checkpoint keeps these.


def _tamper(token: str, **changes: Any) -> str:
    """An hmac1 ``token`` with fields of its ``data`` changed and its tag kept."""
    fields = token.split(".")
    claims = json.loads(unb64url(fields[2]))
    claims["data"].update(changes)
    fields[2] = b64url(canonical_json(claims))
    return ".".join(fields)


def _field(token: str, index: int, value: str) -> str:
    fields = token.split(".")
    fields[index] = value
    return ".".join(fields)


# -- the rotation timeline ------------------------------------------------------------------------


def _change(old: KeyRing, new: KeyRing) -> str:
    added = [k for k in new.kids if k not in old.kids]
    removed = [k for k in old.kids if k not in new.kids]
    promoted = new.primary.kid != old.primary.kid
    if added and removed and promoted:
        return f"replace {', '.join(removed)} by {', '.join(added)}"
    parts = [f"add {k}" for k in added if not (promoted and k == new.primary.kid)]
    parts += [f"promote {new.primary.kid}"] if promoted else []
    parts += [f"retire {k}" for k in removed]
    return " + ".join(parts) or "same ring"


def _ring(lab: RefundLab) -> str:
    return f"{lab.keys.primary.kid} / {', '.join(lab.keys.kids)}"


def rotation_timeline(current: KeyRing, plan: Iterable[KeyRing]) -> Table:
    """Roll ``plan``'s rings out to two instances, A then B, from ``current``, and after every
    change record, from real seals and checks: each instance's sealing key and the keys it
    opens; which instances open a fresh state sealed with each key; and whether every state A
    and B have issued so far (and not expired) still opens on both. Before a ring that drops a
    key, the clock waits one state lifetime, as an operator must."""
    plan = list(plan)
    a = RefundLab.build("hmac", keys=current, label="A")
    b = RefundLab.build("hmac", keys=current, label="B", clock=a.clock, desk=a.desk)
    fleet = (a, b)
    every_key: dict[str, StateKey] = {}
    for ring in (current, *plan):
        every_key.update({k.kid: k for k in ring if k.kid not in every_key})
    sealers = {
        kid: RefundLab.build("hmac", keys=KeyRing([key]), clock=a.clock)
        for kid, key in every_key.items()
    }
    binding = StateBinding("alice", request_digest("tools/call", "request_refund", {}))
    in_flight: list[tuple[str, str]] = []  # (who sealed it, token)

    def opens_on(token: str) -> list[str]:
        found = []
        for lab in fleet:
            try:
                lab.server.states.verify(token, binding)
            except InvalidState:
                continue
            found.append(lab.label)
        return found

    def row(step: str) -> list[str]:
        for lab in fleet:
            sealed = lab.server.states.mint(binding, [], {})
            in_flight.append((f"{lab.label}'s {sealed.split('.')[1]} state", sealed))
        cells = [step, _ring(a), _ring(b)]
        for sealer in sealers.values():
            where = opens_on(sealer.server.states.mint(binding, [], {}))
            cells.append(" and ".join(where) if where else "neither")
        broken = [
            f"{who} rejected by {target}"
            for who, token in in_flight
            for target in sorted({lab.label for lab in fleet} - set(opens_on(token)))
        ]
        cells.append(mark(not broken, "; ".join(dict.fromkeys(broken)) or "yes"))
        return cells

    rows = [row("start")]
    lifetime = a.server.states.ttl_s + 2 * a.server.states.skew_s
    for number, ring in enumerate(plan, 1):
        change = _change(a.keys, ring)
        if set(a.keys.kids) - set(ring.kids):  # a key goes: first wait until its states expire
            a.clock.advance(lifetime)
            in_flight.clear()  # every state issued so far has expired
            rows.append(row(f"wait {lifetime // 60} min: earlier states expire"))
        for lab in fleet:
            lab.keys = ring
            rows.append(row(f"{number}. {change} → {lab.label}"))
    header = ["step", "A seals / opens", "B seals / opens"]
    header += [f"a {kid} state opens on" for kid in sealers]
    header += ["every state issued so far opens on both"]
    return Table("Key rotation, step by step (A first, then B)", header, rows)


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


# -- exercise 2: your unseal, inside a real server ------------------------------------------------

Unseal = Callable[[str, bytes], Any]


@dataclass
class UnsealCall:
    """One call the server made to the learner's ``unseal``: the token, what the spies saw
    while it ran (``"hmac.compare_digest"``, or a decoder of the payload),
    and what it returned or raised."""

    token: str
    events: list[str] = field(default_factory=list)
    claims: Any = None
    error: Exception | None = None

    @property
    def refused(self) -> bool:
        return isinstance(self.error, InvalidState)

    @property
    def accepted(self) -> bool:
        return self.error is None

    def decoded_before_compare(self) -> str | None:
        """The first decoding of the payload that happened before any tag comparison."""
        for event in self.events:
            if event == "hmac.compare_digest":
                return None
            return event
        return None


_RECORDING: list[UnsealCall] = []  # the call now running, while the checkpoint's spies are on


def _spy(original: Callable[..., Any], event: Callable[..., str | None]) -> Callable[..., Any]:
    def spy(*args: Any, **kwargs: Any) -> Any:
        if _RECORDING:
            seen = event(_RECORDING[-1], *args)
            if seen:
                _RECORDING[-1].events.append(seen)
        return original(*args, **kwargs)

    return spy


def _payload_decode(name: str) -> Callable[..., str | None]:
    def event(call: UnsealCall, data: Any = b"", *rest: Any) -> str | None:
        fields = call.token.split(".")
        payload = fields[2] if len(fields) > 2 else ""
        text = data.decode("latin-1") if isinstance(data, bytes | bytearray) else str(data)
        return f"{name} of the payload" if payload and text.startswith(payload) else None

    return event


@contextmanager
def _spies(unseal: Unseal) -> Iterator[None]:
    """While the block runs, watch ``unseal``: replace hmac.compare_digest (and the same function
    under secrets), json.loads and base64's decoders, in their modules and wherever ``unseal``'s
    module imported them by name, with spies that note each call made during an unseal. The
    spies call the originals, so nothing else changes."""
    import base64
    import hmac
    import json as json_module
    import secrets

    watched: list[tuple[Any, str, Callable[..., str | None]]] = [
        (hmac, "compare_digest", lambda call, *a: "hmac.compare_digest"),
        (secrets, "compare_digest", lambda call, *a: "hmac.compare_digest"),
        (json_module, "loads", lambda call, *a: "json.loads"),
        (base64, "urlsafe_b64decode", _payload_decode("base64.urlsafe_b64decode")),
        (base64, "b64decode", _payload_decode("base64.b64decode")),
    ]
    namespace = getattr(unseal, "__globals__", {})
    undo: list[tuple[Any, str, Any]] = []
    spies: dict[int, Callable[..., Any]] = {}
    for module, name, event in watched:
        original = getattr(module, name)
        spy = spies.setdefault(id(original), _spy(original, event))
        undo.append((module, name, original))
        setattr(module, name, spy)
        for key, value in list(namespace.items()):
            if value is original:
                undo.append((namespace, key, original))
                namespace[key] = spy
    try:
        yield
    finally:
        for target, name, original in reversed(undo):
            if isinstance(target, dict):
                target[name] = original
            else:
                setattr(target, name, original)


class LearnerHmacCodec:
    """The kit's ``hmac1`` codec with the learner's ``unseal`` in place of its ``open``.

    Sealing stays the kit's (``HmacStateCodec``), and so does choosing the key: ``unseal`` gets
    the HMAC key of the key id the token names, derived as the kit derives it (or the sealing
    key's, if the token names no key of the ring: its tag then fails, as it must). Every state
    the server receives goes through ``unseal``; each call is kept in ``calls``.
    """

    format = HmacStateCodec.format
    unsafe = False

    def __init__(self, unseal: Unseal, keys: KeyRing) -> None:
        self.unseal = unseal
        self.keys = keys
        self._kit = HmacStateCodec(keys)
        self.calls: list[UnsealCall] = []

    def seal(self, claims: Mapping[str, Any]) -> str:
        return self._kit.seal(claims)

    def key_for(self, token: str) -> bytes:
        fields = token.split(".", 2) if isinstance(token, str) else []
        key = self.keys.get(fields[1]) if len(fields) > 1 else None
        return derive_key((key or self.keys.primary).secret, self.format)

    def open(self, token: str) -> dict[str, Any]:
        call = UnsealCall(token)
        self.calls.append(call)
        _RECORDING.append(call)
        try:
            call.claims = self.unseal(token, self.key_for(token))
        except Exception as exc:
            call.error = exc
            raise
        finally:
            _RECORDING.remove(call)
        if not isinstance(call.claims, dict):
            raise InvalidState(f"unseal returned {type(call.claims).__name__}")
        return call.claims


@contextmanager
def _quiet_server_errors() -> Iterator[list[str]]:
    """Keep the tracebacks of a crashing ``unseal`` out of the notebook: the checkpoint reports
    the exception itself."""
    logger = logging.getLogger("mrtr_kit.server")
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler, propagate = Keep(logging.ERROR), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


class _NotYet(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _described(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


async def check_unseal(unseal: Unseal) -> Checkpoint:
    """Exercise 2: put ``unseal`` in a real kit server (``LearnerHmacCodec``) and run the
    notebook's attacks against it, each as a real round 2. Reports the first attack it let
    through, or every attack and what stopped it."""
    codec = LearnerHmacCodec(unseal, KeyRing.generate("k1"))
    lab = RefundLab.build(codec, label="your unseal")
    try:
        with _spies(unseal), _quiet_server_errors():
            report = await _unseal_suite(lab, codec)
    except NotImplementedError:
        return _not_done("unseal")
    except _NotYet as failure:
        return Checkpoint("not yet", failure.message)
    finally:
        await lab.aclose()
    lines = "\n".join(f"  {line}" for line in report)
    return Checkpoint(
        "passed",
        f"your unseal, inside a real kit server, stopped every attack on the tag:\n{lines}",
    )


async def _unseal_suite(lab: RefundLab, codec: LearnerHmacCodec) -> list[str]:
    kit = HmacStateCodec(codec.keys)
    report: list[str] = []

    async def send(token: str, what: str, user: str = "alice") -> tuple[str, UnsealCall]:
        before = len(codec.calls)
        answer, reason = await _redeem(lab, token, user=user)
        if len(codec.calls) == before:
            raise RuntimeError("the server did not call unseal")  # the kit's bug, not yours
        call = codec.calls[-1]
        if call.error is not None and not call.refused:
            if isinstance(call.error, NotImplementedError):
                raise call.error
            raise _NotYet(
                f"{what} made your unseal raise {_described(call.error)}, and the server "
                f"answered {answer.text}. Raise InvalidState for every bad token: then the "
                "client gets -32602 and the server never fails."
            )
        return verdict(answer, reason)[1], call

    def must_refuse(call: UnsealCall, what: str, outcome: str, advice: str) -> str:
        if call.accepted:
            raise _NotYet(f"your unseal accepted {what}, and the server {outcome}. {advice}")
        return f"✔ {what}: {outcome}"

    # 1. A genuine state opens, and unseal returns its claims.
    what = "alice's genuine state"
    genuine = await lab.approval("alice", ORDER)
    outcome, call = await send(genuine, what)
    if call.refused:
        raise _NotYet(f"your unseal refused {what} ({call.error}): it must accept it")
    if call.claims != kit.open(genuine):
        raise _NotYet(
            f"your unseal returned {call.claims!r:.80} for {what}: return the token's claims, "
            "the whole decoded payload"
        )
    report.append(f"✔ {what}: {outcome}, as it must")
    order_on_genuine = call.decoded_before_compare()

    # 2. Tampering: the payload edited, the tag kept.
    what = "a state whose amount was edited (tag kept)"
    forged = _tamper(await lab.approval("alice", ORDER), approved_cents=99_999_00)
    outcome, forged_call = await send(forged, what)
    report.append(
        must_refuse(
            forged_call,
            what,
            outcome,
            "Compute the tag over hmac1.<kid>.<payload> with key and compare it with the "
            "token's tag before you trust anything in the payload.",
        )
    )

    # 3. Forgery with the attacker's own key.
    what = "a state sealed with another server's key"
    rogue_codec = HmacStateCodec(KeyRing.generate("k1"))
    rogue = rogue_codec.seal(
        {**kit.open(genuine), "data": {**kit.open(genuine)["data"], "approved_cents": 99_999_00}}
    )
    outcome, call = await send(rogue, what)
    report.append(
        must_refuse(call, what, outcome, "The tag must be computed with key, the server's.")
    )

    # 4. Truncation: no tag at all, then every 1-byte tag.
    what = "an edited state with its tag cut off (empty tag)"
    outcome, call = await send(_field(forged, 3, ""), what)
    advice = (
        "Compare the whole tag: a shorter one can be guessed (hmac.compare_digest is False "
        "when the lengths differ)."
    )
    report.append(must_refuse(call, what, outcome, advice))
    what = "an edited state with a 1-byte tag"
    for guess in range(256):
        token = _field(forged, 3, b64url(bytes([guess])))
        try:
            codec.open(token)
        except Exception:  # refused, or crashed: the send below says which
            if codec.calls[-1].refused:
                continue
        what = f"an edited state with a 1-byte tag, found in {guess + 1} guesses"
        outcome, call = await send(token, what)
        must_refuse(call, what, outcome, advice)
    report.append("✔ an edited state with a 1-byte tag: all 256 guesses rejected")

    # 5. The size cap: a genuine state, sealed by the server itself, but too big.
    claims = kit.open(genuine)
    binding = StateBinding(
        "alice", request_digest("tools/call", "request_refund", {"order_id": ORDER})
    )
    padded = {**claims["data"], "note": "x" * MAX_TOKEN_BYTES}
    big = lab.server.states.mint(binding, claims["asked"], padded)
    what = f"a genuine state of {len(big):,} characters"
    outcome, call = await send(big, what)
    report.append(
        must_refuse(
            call,
            what,
            outcome,
            f"Refuse any token longer than MAX_TOKEN_BYTES ({MAX_TOKEN_BYTES:,}) first: the cap "
            "keeps a client from making the server hash and decode whatever it sends.",
        )
    )
    if call.events:
        raise _NotYet(
            f"your unseal refused {what}, but only after {call.events[0]} (a spy saw it): "
            "check the size first, before any other work"
        )

    # 6. Format: a downgrade to plain1, and malformed tokens.
    plain = PlainStateCodec()
    what = "an edited plain1 state (a downgrade)"
    edited = {**claims, "data": {**claims["data"], "approved_cents": 99_999_00}}
    outcome, call = await send(plain.seal(edited), what)
    report.append(
        must_refuse(call, what, outcome, "Open hmac1 tokens only: check the first field.")
    )
    payload = genuine.split(".")[2]
    malformed = {
        "hmac1.k1.<payload> (3 fields)": f"hmac1.k1.{payload}",
        "a genuine state + '.x' (5 fields)": f"{genuine}.x",
        "a 1-character tag": _field(genuine, 3, "A"),
        "an empty string": "",
    }
    for label, token in malformed.items():
        what = f"the malformed state {label}"
        outcome, call = await send(token, what)
        must_refuse(
            call, what, outcome, "Check that a token has exactly 4 fields, the first hmac1."
        )
    report.append(f"✔ malformed states ({', '.join(malformed)}): all rejected")

    # 7. Timing and order, from the spies.
    if "hmac.compare_digest" not in forged_call.events:
        raise _NotYet(
            "your unseal rejected the edited state without calling hmac.compare_digest (a spy "
            "on it saw no call): == stops at the first byte that differs, so the time a "
            "rejection takes tells an attacker how much of a guessed tag is right. Compare "
            "tags with hmac.compare_digest, which takes the same time wherever they differ."
        )
    report.append("✔ timing: tags compared with hmac.compare_digest (a spy saw the call)")
    early = forged_call.decoded_before_compare() or order_on_genuine
    if early:
        raise _NotYet(
            f"your unseal ran {early} before it checked the tag (a spy saw it): until the "
            "tag checks out, the payload is the attacker's. Check the tag first, then decode."
        )
    report.append("✔ order: nothing decoded before the tag checked out")

    # 8. What is not unseal's job.
    what = "alice's genuine state, a second time"
    outcome, call = await send(genuine, what)
    if call.refused:
        raise _NotYet(
            f"your unseal refused {what} ({call.error}): unseal checks the seal only, and a "
            "genuine state is genuine every time"
        )
    report.append(
        f"· {what}: {outcome}. Right for unseal, which only checks the seal: single use is "
        "the ledger's job (lesson 02b)"
    )
    what = "alice's genuine state, sent by mallory"
    outcome, call = await send(await lab.approval("alice", ORDER), what, user="mallory")
    report.append(f"· {what}: your unseal opened it; the claim checks then {outcome} (section 5)")
    return report


# -- exercise 3: your claim checks, inside a real server ------------------------------------------

VerifyClaims = Callable[[dict[str, Any], "str | None", str, str, float], Any]


def _with_claim_checks(lab: RefundLab, verify_claims: VerifyClaims, calls: list[Any]) -> None:
    """Make ``lab``'s server check claims with ``verify_claims``: its own issuer checks the tag
    and the structure only (the lab is built ``integrity_only``), then hands the claims on.
    Each outcome (None, a returned value, or the exception) is appended to ``calls``."""
    issuer = lab.server.states
    kit_verify = issuer.verify

    def verify(token: str, binding: StateBinding) -> dict[str, Any]:
        claims = kit_verify(token, binding)  # the tag and the claims' types: the kit's
        try:
            returned = verify_claims(
                dict(claims), binding.principal, binding.digest, issuer.audience, issuer.now()
            )
        except Exception as exc:
            calls.append(exc)
            raise
        calls.append(returned)
        if returned is not None:
            raise InvalidState("verify_claims returned a value instead of raising")
        return claims

    issuer.verify = verify  # type: ignore[method-assign]


async def check_verify_claims(verify_claims: VerifyClaims) -> Checkpoint:
    """Exercise 3: put ``verify_claims`` in a real kit server and replay genuine states at it,
    each as a real round 2: the right ones must pay, every misplaced one must be refused."""
    lab = RefundLab.build("hmac", checks=StateChecks.integrity_only(), label="your checks")
    calls: list[Any] = []
    _with_claim_checks(lab, verify_claims, calls)
    report: list[str] = []

    async def case(what: str, token: str, must_pay: bool, **redeem: Any) -> None:
        before = len(calls)
        answer, _reason = await _redeem(lab, token, **redeem)
        if len(calls) == before:
            raise RuntimeError("the server did not call verify_claims")  # the kit's bug
        got = calls[-1]
        if isinstance(got, NotImplementedError):
            raise got
        if isinstance(got, Exception) and not isinstance(got, InvalidState):
            raise _NotYet(
                f"{what}: verify_claims raised {_described(got)}, and the server answered "
                f"{answer.text}. Raise InvalidState for a state that must be refused."
            )
        refused = isinstance(got, InvalidState)
        if got is not None and not refused:
            raise _NotYet(
                f"{what}: verify_claims returned {got!r}. Return nothing when the claims are "
                "right and raise InvalidState when they are not: a returned False is not a "
                "refusal."
            )
        outcome = verdict(answer, got.reason if refused else None)[1]
        if must_pay and refused:
            raise _NotYet(f"{what}: your checks refused it ({got}), but it must be accepted.")
        if not must_pay and not refused:
            raise _NotYet(f"{what}: your checks let it through, and the server {outcome}.")
        report.append(f"✔ {what}: {outcome}")

    async def staging_state(name: str, offset: float = 0.0) -> str:
        other = RefundLab.build(
            "hmac", keys=lab.keys, name=name, clock=LessonClock(lab.clock() + offset)
        )
        try:
            return await other.approval("alice", ORDER)
        finally:
            await other.aclose()

    try:
        with _quiet_server_errors():
            await _claim_cases(lab, case, staging_state)
    except NotImplementedError:
        return _not_done("verify_claims")
    except _NotYet as failure:
        return Checkpoint("not yet", failure.message)
    finally:
        await lab.aclose()
    lines = "\n".join(f"  {line}" for line in report)
    return Checkpoint(
        "passed",
        f"your claim checks, inside a real kit server, paid the right states and refused every "
        f"replay:\n{lines}",
    )


async def _claim_cases(
    lab: RefundLab,
    case: Callable[..., Awaitable[None]],
    staging_state: Callable[..., Awaitable[str]],
) -> None:
    skew, ttl = lab.server.states.skew_s, lab.server.states.ttl_s
    await case("alice's own state, at once", await lab.approval("alice", ORDER), True)
    late = await lab.approval("alice", ORDER)
    lab.clock.advance(ttl + skew - 10)
    await case(
        f"alice's state, {skew - 10} s past its expiry (within the {skew} s of clock skew)",
        late,
        True,
    )
    await case(
        "alice's state, sent by mallory (MRTR-S5a)",
        await lab.approval("alice", ORDER),
        False,
        user="mallory",
    )
    await case(
        "alice's state for A-1001, sent with A-1002 (MRTR-S5c)",
        await lab.approval("alice", ORDER),
        False,
        order="A-1002",
    )
    old = await lab.approval("alice", ORDER)
    lab.clock.advance(ttl + skew + 10)
    await case(
        f"alice's state, {skew + 10} s past its expiry (beyond the skew, MRTR-S5b)", old, False
    )
    two_hours = await lab.approval("alice", ORDER)
    lab.clock.advance(2 * 60 * 60)
    await case("alice's state, two hours later (MRTR-S5b)", two_hours, False)
    await case(
        f"a state from an instance whose clock is {skew - 10} s fast (within the skew)",
        await staging_state("refunds", offset=skew - 10),
        True,
    )
    await case(
        "a state from an instance whose clock is 1 hour fast (KIT)",
        await staging_state("refunds", offset=60 * 60),
        False,
    )
    await case(
        "a state issued by refunds-staging, which shares the key (KIT)",
        await staging_state("refunds-staging"),
        False,
    )


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
