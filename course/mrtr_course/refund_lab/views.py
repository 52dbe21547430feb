"""What lessons 02, 02a and 02b print: one answer and what the server logged about it, a tally of
many answers, a table (HTML in JupyterLab and on GitHub, text elsewhere), and the source of a
library function as the server runs it."""

from __future__ import annotations

import ast
import html
import inspect
import textwrap
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mrtr_course.refund_lab.lab import ServerAnswer


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
