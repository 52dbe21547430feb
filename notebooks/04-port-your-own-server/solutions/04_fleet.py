# Exercise 2: the same port on a fleet. Only build_server changes: order_pizza, book_table and
# their schemas stay in the exercise 1 cell, and the gate serves both cells, that one first.
# ruff: noqa: F821

from mrtr_kit.server import KeyRing, McpServer


def build_server(state_keys=None):
    # The ring every instance of the fleet is given: a retry may reach any instance, which must
    # open the requestState another sealed (CORE-8, CORE-9). Alone, a key for this process.
    server = McpServer("pizzeria", state_keys=state_keys or KeyRing.generate())
    server.tool("order_pizza", description="Orders a pizza.", input_schema=PIZZA_SCHEMA)(
        order_pizza
    )
    server.tool("book_table", description="Books a table.", input_schema=TABLE_SCHEMA)(book_table)
    return server
