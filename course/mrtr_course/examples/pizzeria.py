"""Lesson 04: the pizzeria's table book, the one side effect of its ``book_table`` tool.

It stands for the restaurant's booking system. In a real fleet every instance writes to the
same one (a database); here it lives in the process, which is enough for the capstone's gate
to count bookings and to see a final retry that books a second table.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TableBook:
    """Tables booked, each with a reference ``T-1``, ``T-2``, ..."""

    tables: list[tuple[str, int, str]] = field(default_factory=list)  # (date, people, time)
    by_key: dict[str, str] = field(default_factory=dict)  # idempotency key -> reference

    def book(self, date: str, people: int, time: str, *, key: str | None = None) -> str:
        """Book a table and return its reference. With ``key`` (an idempotency key), the
        first call books and every later call with that key returns the same reference,
        booking nothing: a repeated final retry (HTTP-26) gets the table it already has."""
        if key is not None and key in self.by_key:
            return self.by_key[key]
        self.tables.append((date, people, time))
        reference = f"T-{len(self.tables)}"
        if key is not None:
            self.by_key[key] = reference
        return reference
