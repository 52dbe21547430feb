"""Lesson 03c — porting practice (optional): the legacy tools its exercises port.

The checkpoints are in ``lesson03c_checkpoints.py``, beside this file; what they share with
lesson 03's is in ``mrtr_course.port_checks``.

* exercise 1, carry the first answer: ``rent_bike_legacy`` asks the day, then the hours; its
  forms, questions (``ask_day``, ``ask_hours``) and text (``bike_text``);
* exercise 2, one ticket per call: ``open_ticket_legacy`` opens a draft before it asks; the
  ``Tracker`` it files into counts drafts and tickets and files once per idempotency key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mrtr_course.legacy import LegacyToolContext
from mrtr_kit.protocol.models import ElicitRequest
from mrtr_kit.server.context import elicit_form

# -- exercise 1: carry the first answer ------------------------------------------------------------

DAY_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"day": {"type": "string", "title": "Day", "format": "date"}},
    "required": ["day"],
}
HOURS_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"hours": {"type": "integer", "title": "Hours", "minimum": 1, "maximum": 8}},
    "required": ["hours"],
}
BIKE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"shop": {"type": "string", "minLength": 1}},
    "required": ["shop"],
}


def ask_day(shop: str) -> ElicitRequest:
    return elicit_form(f"Which day do you want a bike from {shop}?", DAY_FORM)


def ask_hours(shop: str, day: str) -> ElicitRequest:
    return elicit_form(f"How many hours on {day}?", HOURS_FORM)


def bike_text(shop: str, day: str, hours: int) -> str:
    return f"Bike from {shop} booked on {day} for {hours} h."


async def rent_bike_legacy(ctx: LegacyToolContext) -> str:
    shop = ctx.arguments["shop"]
    day = await ctx.elicit(f"Which day do you want a bike from {shop}?", DAY_FORM)
    if day.action != "accept":
        return "No bike booked."
    when = str((day.content or {})["day"])
    hours = await ctx.elicit(f"How many hours on {when}?", HOURS_FORM)
    if hours.action != "accept":
        return "No bike booked."
    return bike_text(shop, when, int((hours.content or {})["hours"]))


# -- exercise 2: one side effect -------------------------------------------------------------------

SEVERITY_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "severity": {"type": "string", "title": "Severity", "enum": ["low", "high"]},
    },
    "required": ["severity"],
}
TICKET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string", "minLength": 1}},
    "required": ["title"],
}


@dataclass
class Tracker:
    """An issue tracker that counts what it is asked to do."""

    drafts: list[str] = field(default_factory=list)  # drafts opened, ever
    tickets: list[tuple[str, str]] = field(default_factory=list)  # (title, severity)
    by_key: dict[str, str] = field(default_factory=dict)  # idempotency key -> ticket number

    def open_draft(self, title: str) -> int:
        self.drafts.append(title)
        return len(self.drafts)

    def file(self, title: str, severity: str, *, key: str | None = None) -> str:
        """File a ticket and return its number. With ``key`` (an idempotency key), the first
        call files and every later call with that key returns the same number, filing nothing."""
        if key is not None and key in self.by_key:
            return self.by_key[key]
        self.tickets.append((title, severity))
        number = f"T-{len(self.tickets)}"
        if key is not None:
            self.by_key[key] = number
        return number


def ask_severity(title: str) -> ElicitRequest:
    return elicit_form(f"How bad is {title!r}?", SEVERITY_FORM)


async def open_ticket_legacy(ctx: LegacyToolContext, tracker: Tracker) -> str:
    title = ctx.arguments["title"]
    tracker.open_draft(title)  # before the question: fine when the tool runs once
    answer = await ctx.elicit(f"How bad is {title!r}?", SEVERITY_FORM)
    if answer.action != "accept":
        return "No ticket filed."
    return f"Filed {tracker.file(title, str((answer.content or {})['severity']))}: {title}."
