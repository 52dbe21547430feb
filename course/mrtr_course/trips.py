"""The trip planner's ``plan_trip`` called through a fleet: what lessons 00 and 03 show.

* ``legacy_trip`` — the 2025-11-25 tool, pushed through a balancer: one call, every HTTP
  exchange and the instance that served it, and the error if the call was lost;
* ``mrtr_trip`` — the MRTR port: one call, round by round, with the instance that served each;
* ``run_flows`` — many MRTR calls at once, each its own client behind one balancer, counted;
* ``show_logs`` — what each instance of a fleet logged about its tools.

The fleet itself (processes, ``RoundRobin``) is ``mrtr_course.fleet``; the tool is
``mrtr_course.examples.trip_planner``, answered as ``traveller`` answers.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mrtr_course.examples import trip_planner
from mrtr_course.examples.trip_planner import traveller
from mrtr_course.fleet import FRONT_URL, Fleet, RoundRobin
from mrtr_course.legacy import LegacyClient, LegacyClientError, LegacyExchange, format_trace
from mrtr_kit.client import McpClient, McpClientError


def result_line(result: dict[str, Any]) -> str:
    """A ``tools/call`` result on one line: ``input_required, asks <keys>`` or
    ``complete: <text>``."""
    if result.get("resultType") == "input_required":
        return "input_required, asks " + ", ".join(result.get("inputRequests") or {})
    texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
    return "complete: " + " ".join(texts)


def result_text(result: dict[str, Any]) -> str:
    """The text of a complete result (``result_line`` without its ``complete: ``)."""
    return result_line(result).removeprefix("complete: ")


# -- the push-style tool on a fleet ----------------------------------------------------------------


@dataclass
class LegacyRun:
    """One 2025-11-25 call through a balancer: its trace, and its result or its error."""

    trace: list[LegacyExchange]
    text: str | None
    error: LegacyClientError | None

    def __repr__(self) -> str:
        outcome = f"result: {self.text}" if self.error is None else f"failed: {self.error}"
        return f"{format_trace(self.trace)}\n{outcome}"


async def legacy_trip(balancer: RoundRobin, city: str = "Lisbon", answers: Any = None) -> LegacyRun:
    """``plan_trip`` with the 2025-11-25 client through ``balancer``; errors are kept, not
    raised, so that the trace can be shown next to them."""
    client = LegacyClient(
        FRONT_URL, elicitation=answers or traveller(), transport=balancer.transport()
    )
    try:
        async with client:
            result = await client.call_tool("plan_trip", {"city": city})
    except LegacyClientError as exc:
        return LegacyRun(client.trace, None, exc)
    return LegacyRun(client.trace, result_text(result), None)


def show_logs(fleet: Fleet) -> None:
    """Print what each instance logged about its tools (its start-up line left out)."""
    for instance in fleet:
        for line in instance.log_lines(f"{instance.name}:"):
            print(line)


# -- the MRTR port on a fleet ----------------------------------------------------------------------


@dataclass
class TripRun:
    """One MRTR call through a balancer: each round, and the instance that served it."""

    rounds: list[tuple[int, str, str]]  # (round, instance, what the server answered)
    text: str

    @property
    def instances(self) -> list[str]:
        return [instance for _, instance, _ in self.rounds]

    def __repr__(self) -> str:
        lines = [f"round {n} -> {who:<11} {what}" for n, who, what in self.rounds]
        return "\n".join(lines)


async def mrtr_trip(
    balancer: RoundRobin, city: str = "Lisbon", answers: Any = None, **call: Any
) -> TripRun:
    """``plan_trip`` with the MRTR client through ``balancer``, answering as ``traveller``."""
    transport = balancer.transport()
    async with McpClient(FRONT_URL, elicitation=answers or traveller(), transport=transport) as c:
        result = await c.call_tool("plan_trip", {"city": city, **call})
        rounds = [
            (
                record.round,
                hit.instance or "?",
                result_line((record.response or {}).get("result", {})),
            )
            for record, hit in zip(c.trace, transport.hits, strict=True)
        ]
    return TripRun(rounds, result_text(result))


@dataclass
class FlowReport:
    """What ``run_flows`` saw: completed and lost calls, and where their rounds went."""

    flows: int
    completed: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    per_instance: Counter[str] = field(default_factory=Counter)
    rounds: int = 0
    spread: int = 0  # calls whose rounds were served by two or more instances

    @property
    def lost(self) -> int:
        return self.flows - self.completed

    def __repr__(self) -> str:
        instances = ", ".join(f"{name}: {n}" for name, n in sorted(self.per_instance.items()))
        lines = [
            f"{self.completed} of {self.flows} calls completed, {self.lost} lost",
            f"{self.rounds} rounds served ({instances})",
            "rounds of one call served by different instances: " + ("yes" if self.spread else "no"),
        ]
        lines += [f"error: {error} x{n}" for error, n in sorted(self.errors.items())]
        return "\n".join(lines)


def expected_summary(city: str, start: str = "2026-09-01", nights: int = 3) -> str:
    return trip_planner.Reservation(city, start, nights, "double").summary()


async def run_flows(balancer: RoundRobin, flows: int, concurrency: int) -> FlowReport:
    """``flows`` whole ``plan_trip`` calls (3 rounds, 2 forms each), ``concurrency`` at a time,
    each its own client behind the same balancer. A call is lost if it raises or ends with
    anything but its own reservation."""
    report = FlowReport(flows)
    gate = asyncio.Semaphore(concurrency)

    async def one(n: int) -> None:
        city, nights = f"City {n % 7}", 1 + n % 5
        async with gate:
            transport = balancer.transport()
            try:
                async with McpClient(
                    FRONT_URL, elicitation=traveller(nights=nights), transport=transport
                ) as client:
                    result = await client.call_tool("plan_trip", {"city": city})
            except (McpClientError, OSError) as exc:
                report.errors[type(exc).__name__] += 1
                return
        instances = [hit.instance or "?" for hit in transport.hits]
        report.rounds += len(instances)
        report.per_instance.update(instances)
        report.spread += len(set(instances)) > 1
        if result_line(result) == "complete: " + expected_summary(city, nights=nights):
            report.completed += 1
        else:
            report.errors["wrong result"] += 1

    await asyncio.gather(*(one(n) for n in range(flows)))
    return report
