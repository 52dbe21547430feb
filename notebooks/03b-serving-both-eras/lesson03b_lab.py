"""Lesson 03b — serving both eras: what its cells run, beside the notebook.

* ``WireLog`` — an httpx transport that records every JSON-RPC message a client sends and
  receives (POST bodies, JSON answers, SSE events), in the order they happened;
  ``legacy_call`` and ``modern_call`` make one ``plan_trip`` call each way and return that
  record; ``side_by_side`` shows two records in two columns (HTML) or one after the other
  (text, what a stored notebook shows where HTML does not render);
* ``fleet_figures`` — many sessions and calls through a two-instance fleet, counted: the
  2025-11-25 era with and without sticky routing, the 2026-07-28 era round robin;
* ``crash_mid_call`` — a 2025-11-25 call and a 2026-07-28 call, both waiting on their first
  question on the same instance when it dies;
* the exercise's stand-in user (``user``, ``Reply``) and the 2025-11-25 client handler it
  ports (``on_server_request``).

The server is lesson 03's port (``mrtr_course.examples.trip_planner``), served by the library
with both eras (``create_app(server, eras="both")``, or ``python -m mrtr_kit serve``).
"""

from __future__ import annotations

import asyncio
import html
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from mrtr_course.examples.trip_planner import traveller
from mrtr_course.fleet import FRONT_URL, Fleet, RoundRobin
from mrtr_course.legacy import LegacyClient, LegacyClientError, LegacyHttpError, format_trace
from mrtr_course.plain.trace_view import short_state
from mrtr_course.trips import TripRun, mrtr_trip, result_text
from mrtr_kit.client import McpClient, McpClientError
from mrtr_kit.client.sse import SseDecoder
from mrtr_kit.protocol.models import ElicitRequestFormParams, ElicitResult

# Parts of a message that are the same in every call: shown as "…" so the rounds stand out.
# The capabilities a 2025-11-25 client declares in its initialize stay: they hold for the session.
ELIDED = ("_meta", "requestedSchema", "capabilities", "clientInfo", "serverInfo", "instructions")


def brief(message: Any) -> str:
    """One JSON-RPC message on one line, without ``jsonrpc`` and with ``ELIDED`` parts (but a
    request's ``params.capabilities``) and long states shortened (for display only; the wire
    carried them whole)."""

    def walk(obj: Any, parent: str = "") -> Any:
        if isinstance(obj, dict):
            out = {}
            for key, value in obj.items():
                if key == "jsonrpc":
                    continue
                if key in ELIDED and not (key == "capabilities" and parent == "params"):
                    out[key] = "…"
                elif key == "requestState" and isinstance(value, str):
                    out[key] = short_state(value)  # opaque to the client anyway (MRTR-C2)
                else:
                    out[key] = walk(value, key)
            return out
        if isinstance(obj, list):
            return [walk(v, parent) for v in obj]
        return obj

    return json.dumps(walk(message), ensure_ascii=False, separators=(", ", ": "))


# -- recording the wire ----------------------------------------------------------------------------


@dataclass
class WireLine:
    """One message: ``>`` sent by the client (a POST), ``<`` sent by the server."""

    way: str
    text: str

    def __str__(self) -> str:
        return f"{self.way} {self.text}"


@dataclass
class WireLog:
    """What one client sent and received, message by message, in order.

    Recorded at the HTTP transport, so a 2025-11-25 client (which keeps no MRTR trace for the
    course's ``trace_view`` to show) and a 2026-07-28 one are shown alike, states shortened
    as ``trace_view`` shortens them."""

    title: str
    lines: list[WireLine] = field(default_factory=list)
    result: str = ""

    def text(self) -> str:
        body = "\n".join(str(line) for line in self.lines)
        return f"{self.title}\n{body}\nresult: {self.result}"

    def __repr__(self) -> str:
        return self.text()

    def html(self) -> str:
        """One block per message, a gap between them; the server's side indented."""
        block = (
            "<div style='margin:0 0 6px {}em;font-family:monospace;white-space:pre-wrap'>{}</div>"
        )
        rows = "".join(
            block.format(0 if line.way == ">" else 1.5, html.escape(str(line)))
            for line in self.lines
        )
        result = block.format(0, "result: " + html.escape(self.result))
        return f"<b>{html.escape(self.title)}</b><div style='font-size:85%'>{rows}{result}</div>"

    def _repr_html_(self) -> str:
        return self.html()

    def transport(self, inner: httpx.AsyncBaseTransport | None = None) -> _Recording:
        """An httpx transport for the client whose wire this records."""
        return _Recording(self, inner or httpx.AsyncHTTPTransport())

    # What the lesson points at, counted from the record.
    def count(self, text: str) -> int:
        return sum(text in line.text for line in self.lines)


class _Tee(httpx.AsyncByteStream):
    """A response body passed on unchanged, each message in it noted as it goes by."""

    def __init__(self, inner: httpx.AsyncByteStream, log: WireLog, sse: bool) -> None:
        self.inner, self.log, self.sse = inner, log, sse
        self.decoder = SseDecoder()
        self.buffer = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.buffer += chunk
            if self.sse:
                *whole, rest = self.buffer.split(b"\n")
                self.buffer = rest
                for line in whole:
                    data = self.decoder.feed(line.decode(errors="replace").rstrip("\r"))
                    if data:
                        self.log.lines.append(WireLine("<", "event " + brief(json.loads(data))))
            yield chunk
        if not self.sse and self.buffer.strip():
            self.log.lines.append(WireLine("<", brief(json.loads(self.buffer))))

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Recording(httpx.AsyncBaseTransport):
    def __init__(self, log: WireLog, inner: httpx.AsyncBaseTransport) -> None:
        self.log, self.inner = log, inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        sent = WireLine(">", "POST " + brief(json.loads(request.content)))
        self.log.lines.append(sent)
        response = await self.inner.handle_async_request(request)
        sse = response.headers.get("content-type", "").startswith("text/event-stream")
        sent.text += f"   [{response.status_code}{', SSE stream' if sse else ''}]"
        if "mcp-session-id" in response.headers:
            sent.text += " [Mcp-Session-Id]"
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Tee(response.stream, self.log, sse),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


async def legacy_call(
    url: str,
    city: str = "Lisbon",
    inner: httpx.AsyncBaseTransport | None = None,
    *,
    forms: bool = True,
) -> WireLog:
    """``plan_trip`` from a 2025-11-25 client (the course's ``LegacyClient``): its wire, and
    its error as the result if the server refused it. ``inner`` carries the requests (HTTP by
    default); ``forms=False`` is a client that declares no elicitation at ``initialize``."""
    title = "2025-11-25 client: a session, questions pushed on the call's stream"
    if not forms:
        title = "2025-11-25 client that declared no forms"
    log = WireLog(title)
    try:
        transport = log.transport(inner)
        answers = traveller() if forms else None
        async with LegacyClient(url, elicitation=answers, transport=transport) as c:
            log.result = result_text(await c.call_tool("plan_trip", {"city": city}))
    except LegacyClientError as exc:
        log.result = f"failed: {_legacy_failure(exc)}"
    return log


async def modern_call(
    url: str, city: str = "Lisbon", inner: httpx.AsyncBaseTransport | None = None
) -> WireLog:
    """``plan_trip`` from a 2026-07-28 client (the kit's ``McpClient``): its wire."""
    log = WireLog("2026-07-28 client: rounds, each a request of its own")
    async with McpClient(url, elicitation=traveller(), transport=log.transport(inner)) as client:
        log.result = result_text(await client.call_tool("plan_trip", {"city": city}))
    return log


@dataclass
class SideBySide:
    left: WireLog
    right: WireLog

    def __repr__(self) -> str:
        return f"{self.left.text()}\n\n{self.right.text()}"

    def _repr_html_(self) -> str:
        cell = "<td style='vertical-align:top;text-align:left;width:50%'>{}</td>"
        return (
            "<table style='table-layout:fixed;width:100%'><tr>"
            + cell.format(self.left.html())
            + cell.format(self.right.html())
            + "</tr></table>"
        )


def side_by_side(left: WireLog, right: WireLog) -> SideBySide:
    return SideBySide(left, right)


# -- the fleet, counted ----------------------------------------------------------------------------


def _legacy_failure(exc: LegacyClientError) -> str:
    if isinstance(exc, LegacyHttpError):
        step = str(exc).split(":", 1)[0]
        return f"HTTP {exc.status} on {step}"
    return type(exc).__name__


async def legacy_sessions(balancer: RoundRobin, n: int) -> Counter[str]:
    """``n`` 2025-11-25 sessions through ``balancer``, one call each: how each ended."""
    outcomes: Counter[str] = Counter()
    for _ in range(n):
        client = LegacyClient(FRONT_URL, elicitation=traveller(), transport=balancer.transport())
        try:
            async with client:
                await client.call_tool("plan_trip", {"city": "Lisbon"})
            outcomes["completed"] += 1
        except LegacyClientError as exc:
            outcomes[_legacy_failure(exc)] += 1
    return outcomes


async def modern_calls(balancer: RoundRobin, n: int) -> Counter[str]:
    """``n`` 2026-07-28 calls through ``balancer``: how each ended."""
    outcomes: Counter[str] = Counter()
    for _ in range(n):
        try:
            await mrtr_trip(balancer)
            outcomes["completed"] += 1
        except (McpClientError, OSError) as exc:
            outcomes[type(exc).__name__] += 1
    return outcomes


@dataclass
class FleetFigures:
    rows: list[tuple[str, int, Counter[str]]]

    def __repr__(self) -> str:
        lines = []
        for label, n, outcomes in self.rows:
            done = outcomes["completed"]
            failed = ", ".join(f"{k} x{v}" for k, v in sorted(outcomes.items()) if k != "completed")
            lines.append(
                f"{label:<40} {done:>2} of {n} completed" + (f"; {failed}" if failed else "")
            )
        return "\n".join(lines)


async def fleet_figures(fleet: Fleet, n: int = 10) -> FleetFigures:
    """The same fleet, three ways: 2025-11-25 sessions round robin and sticky, 2026-07-28
    calls round robin. ``n`` of each, one after another (the figures do not depend on timing)."""
    return FleetFigures(
        [
            (
                "2025-11-25, round robin",
                n,
                await legacy_sessions(RoundRobin(fleet.urls), n),
            ),
            (
                "2025-11-25, sticky (by Mcp-Session-Id)",
                n,
                await legacy_sessions(RoundRobin(fleet.urls, sticky=True), n),
            ),
            ("2026-07-28, round robin", n, await modern_calls(RoundRobin(fleet.urls), n)),
        ]
    )


# -- an instance dies mid-call ---------------------------------------------------------------


@dataclass
class CrashReport:
    victim: str
    legacy: list[str]  # the trace lines of each attempt, with the crash and restart marked
    legacy_result: str
    modern: TripRun
    asked: Counter[str]  # questions each user was shown

    def __repr__(self) -> str:
        modern = str(self.modern).splitlines()
        modern.insert(1, f"   x  {self.victim} killed")
        return "\n".join(
            [
                f"2025-11-25, sticky: the user was shown {self.asked['legacy']} questions",
                *self.legacy,
                f"result: {self.legacy_result}",
                "",
                f"2026-07-28, round robin: the user was shown {self.asked['modern']} questions",
                *modern,
                f"result: {self.modern.text}",
            ]
        )


async def crash_mid_call(fleet: Fleet, victim: str = "instance-1") -> CrashReport:
    """A 2025-11-25 session (sticky) and a 2026-07-28 call, each behind a balancer of its own
    whose first pick is ``victim``. Both users get their first question; then ``victim`` is
    killed (SIGKILL) and both answer. The legacy client starts again on a 404, as 2025-11-25
    clients must."""
    waiting = {"legacy": asyncio.Event(), "modern": asyncio.Event()}
    crashed = asyncio.Event()
    asked: Counter[str] = Counter()

    def user(era: str) -> Callable[[ElicitRequestFormParams, Any], Any]:
        answer = traveller()

        async def respond(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
            asked[era] += 1
            if not waiting[era].is_set():  # the first question: the user is still reading
                waiting[era].set()
                await crashed.wait()
            return answer(params, ctx)

        return respond

    async def legacy() -> tuple[list[str], str]:
        balancer = RoundRobin(fleet.urls, sticky=True)
        lines: list[str] = []
        for attempt in (1, 2):
            client = LegacyClient(
                FRONT_URL, elicitation=user("legacy"), transport=balancer.transport()
            )
            try:
                async with client:
                    result = await client.call_tool("plan_trip", {"city": "Lisbon"})
            except LegacyHttpError as exc:
                trace = format_trace(client.trace).splitlines()
                at = next(i for i, line in enumerate(trace) if "elicitation/create" in line)
                trace.insert(at + 1, f"   x  {victim} killed")
                lines += trace
                if exc.status != 404 or attempt == 2:
                    return lines, f"failed: {exc}"
                lines.append("   -- 404: the session is gone; a new session, from the start --")
                continue
            lines += format_trace(client.trace).splitlines()
            return lines, result_text(result)
        raise AssertionError("unreachable")

    legacy_task = asyncio.create_task(legacy())
    await waiting["legacy"].wait()
    modern_task = asyncio.create_task(mrtr_trip(RoundRobin(fleet.urls), answers=user("modern")))
    await waiting["modern"].wait()
    fleet[victim].crash()
    crashed.set()
    (lines, legacy_result), modern = await asyncio.gather(legacy_task, modern_task)
    return CrashReport(victim, lines, legacy_result, modern, asked)


# -- the exercise: a 2025-11-25 client's handler, and the user it asks ----------------------------


@dataclass(frozen=True)
class Reply:
    """What the user did with a form: submitted it (``values``), said no, or closed it."""

    submitted: bool
    values: dict[str, Any] | None = None
    closed: bool = False  # dismissed without choosing


@dataclass
class User:
    """A stand-in for the client's form UI: ``ask(message, schema)`` shows a form and returns
    the ``Reply``. It fills each form with the fields it has in ``answers``, says no when
    ``says_no`` is set, and closes the form when ``closes`` is set. Every form it was shown is
    kept in ``shown`` (message, field names)."""

    answers: dict[str, Any] = field(default_factory=dict)
    says_no: bool = False
    closes: bool = False
    shown: list[tuple[str, list[str]]] = field(default_factory=list)

    def ask(self, message: str, schema: dict[str, Any]) -> Reply:
        fields = list(schema.get("properties", {}))
        self.shown.append((message, fields))
        if self.closes:
            return Reply(submitted=False, closed=True)
        if self.says_no:
            return Reply(submitted=False)
        return Reply(submitted=True, values={k: v for k, v in self.answers.items() if k in fields})

    def reset(self, **how: Any) -> None:
        """Start a new scenario: new answers or behaviour, nothing shown yet."""
        self.answers = how.get("answers", {})
        self.says_no = how.get("says_no", False)
        self.closes = how.get("closes", False)
        self.shown = []


user = User(answers={"start": "2026-09-01", "nights": 3, "room": "double"})


def on_server_request(message: dict[str, Any]) -> dict[str, Any]:
    """2025-11-25: the client's handler for each request the server pushed on a call's
    stream; the client POSTed what it returns back on the session."""
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if message["method"] != "elicitation/create":
        return reply | {"error": {"code": -32601, "message": "Method not found"}}
    params = message["params"]
    answer = user.ask(params["message"], params["requestedSchema"])
    if answer.closed:
        return reply | {"result": {"action": "cancel"}}
    if not answer.submitted:
        return reply | {"result": {"action": "decline"}}
    return reply | {"result": {"action": "accept", "content": answer.values}}


__all__: Sequence[str] = (
    "CrashReport",
    "FleetFigures",
    "Reply",
    "User",
    "WireLog",
    "brief",
    "crash_mid_call",
    "fleet_figures",
    "legacy_call",
    "legacy_sessions",
    "modern_call",
    "modern_calls",
    "on_server_request",
    "side_by_side",
    "user",
)
