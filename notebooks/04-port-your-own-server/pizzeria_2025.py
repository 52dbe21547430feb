# The pizzeria: a 2025-11-25 server with two tools that ask. Port it to 2026-07-28 (MRTR).
#
# * order_pizza(pizza) asks one question: the size;
# * book_table(date) asks two: how many people, then the time, which uses the first answer,
#   and then books the table in the restaurant's table book.
#
# build_server() is what the gate loads, in this kernel and as separate server processes.

from mrtr_course.examples.pizzeria import TableBook
from mrtr_course.legacy import LegacyServer, LegacyToolContext, LocalSessions

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


async def order_pizza(ctx: LegacyToolContext) -> str:
    pizza = ctx.arguments["pizza"]
    answer = await ctx.elicit(f"What size of {pizza}?", SIZE_FORM)
    if answer.action != "accept":
        return "No pizza ordered."
    return f"One {answer.content['size']} {pizza}, ready in 20 minutes."


async def book_table(ctx: LegacyToolContext) -> str:
    date = ctx.arguments["date"]
    party = await ctx.elicit(f"How many people on {date}?", PEOPLE_FORM)
    if party.action != "accept":
        return "No table booked."
    people = party.content["people"]
    slot = await ctx.elicit(f"What time on {date}, for {people}?", TIME_FORM)
    if slot.action != "accept":
        return "No table booked."
    time = slot.content["time"]
    return f"Table for {people} on {date} at {time}, reference {TABLES.book(date, people, time)}."


def build_server():
    server = LegacyServer("pizzeria", sessions=LocalSessions())
    server.tool("order_pizza", description="Orders a pizza.", input_schema=PIZZA_SCHEMA)(
        order_pizza
    )
    server.tool("book_table", description="Books a table.", input_schema=TABLE_SCHEMA)(book_table)
    return server
