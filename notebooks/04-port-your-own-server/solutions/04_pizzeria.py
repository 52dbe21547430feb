"""The pizzeria, ported to 2026-07-28 (MRTR): each round is a request any instance can serve."""

import secrets

from mrtr_course.examples.pizzeria import TableBook
from mrtr_kit.server import KeyRing, McpServer, RequestContext

TABLES = TableBook()  # the restaurant's booking system (in production: a database)

SIZE_FORM = {
    "type": "object",
    "properties": {
        "size": {"type": "string", "title": "Size", "enum": ["small", "medium", "large"]}
    },
    "required": ["size"],
}
PEOPLE_FORM = {
    "type": "object",
    "properties": {"people": {"type": "integer", "title": "People", "minimum": 1, "maximum": 12}},
    "required": ["people"],
}
TIME_FORM = {
    "type": "object",
    "properties": {
        "time": {"type": "string", "title": "Time", "enum": ["19:00", "20:00", "21:00"]}
    },
    "required": ["time"],
}
PIZZA_SCHEMA = {
    "type": "object",
    "properties": {"pizza": {"type": "string", "minLength": 1}},
    "required": ["pizza"],
}
TABLE_SCHEMA = {
    "type": "object",
    "properties": {"date": {"type": "string", "format": "date"}},
    "required": ["date"],
}


def order_pizza(ctx: RequestContext):
    pizza = ctx.arguments["pizza"]
    answer = ctx.form("size", f"What size of {pizza}?", SIZE_FORM)  # checked against the form
    if answer.needs_asking:  # round 1, or an answer that does not fit (ELIC-14, MRTR-E4)
        return answer.ask()
    if not answer.accepted:
        return "No pizza ordered."
    return f"One {answer.content['size']} {pizza}, ready in 20 minutes."


def book_table(ctx: RequestContext):
    date = ctx.arguments["date"]
    state = ctx.state or {}  # the sealed requestState: what earlier rounds learnt (MIG-2)
    if "people" not in state:
        party = ctx.form("people", f"How many people on {date}?", PEOPLE_FORM, state={})
        if party.needs_asking:
            return party.ask()
        if not party.accepted:
            return "No table booked."
        # The number of people rides along, and so does this call's booking key: made once,
        # sealed in the state, where the client cannot change it.
        state = {"people": party.content["people"], "key": secrets.token_urlsafe(16)}
    people = state["people"]
    slot = ctx.form("time", f"What time on {date}, for {people}?", TIME_FORM, state=state)
    if slot.needs_asking:
        return slot.ask()
    if not slot.accepted:
        return "No table booked."
    # The side effect, after the last answer and once: a final retry that arrives twice
    # (HTTP-26) gets the table booked under this key back, not a second table (MIG-3).
    time = slot.content["time"]
    reference = TABLES.book(date, people, time, key=state["key"])
    return f"Table for {people} on {date} at {time}, reference {reference}."


def build_server():
    # The keys that seal requestState, made for this process: enough for one instance.
    # Exercise 2 gives every instance of a fleet the same ring instead (04_fleet.py).
    server = McpServer("pizzeria", state_keys=KeyRing.generate())
    server.tool("order_pizza", description="Orders a pizza.", input_schema=PIZZA_SCHEMA)(
        order_pizza
    )
    server.tool("book_table", description="Books a table.", input_schema=TABLE_SCHEMA)(book_table)
    return server
