"""docs/cheatsheet.md shows a real exchange, not a made-up one.

Its round 1 and round 2 JSON are produced here, by the kit: the sans-IO client
(``MrtrCall``) builds the requests and the server core answers them, with the refund example
of lesson 02. The test fails when the page and the kit disagree; to refresh the page, run
``.venv/bin/python tests/course/test_cheatsheet.py`` and paste what it prints between the markers.

docs/cheatsheet.ru.md, the Russian page (KIT: a page of the kit, no spec rule), is kept in step
with the English one: the same headings at each level in the same order, the same rule IDs
(either way), and the same fenced examples byte for byte, in order. Change an example in the
English page and copy it into the Russian one.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mrtr_course.examples import refunds
from mrtr_kit.client import MrtrCall, RequestFactory, client_capabilities
from mrtr_kit.server import McpServer
from mrtr_kit.server.keyring import KeyRing, StateKey
from tests.test_spec_map import cited_ids

ROOT = Path(__file__).resolve().parents[2]
CHEATSHEET = ROOT / "docs" / "cheatsheet.md"
CHEATSHEET_RU = ROOT / "docs" / "cheatsheet.ru.md"
FENCE = re.compile(r"^```[^\n]*\n.*?^```$", flags=re.M | re.S)
BEGIN, END = "<!-- exchange: begin -->", "<!-- exchange: end -->"
WIDTH = 60  # characters per line of JSON, so two columns fit side by side on GitHub


async def exchange() -> tuple[dict[str, Any], ...]:
    """Two rounds of ``request_refund``, as alice: request and response of each."""
    keys = KeyRing([StateKey("k1", bytes(range(32)))])
    server = McpServer("refunds-example", "0.1.0", state_keys=keys, now=lambda: 1785240000.0)
    refunds.register(server)
    factory = RequestFactory(capabilities=client_capabilities(form=True))
    call = MrtrCall.tool(factory, "request_refund", {"order_id": "A-1001"})
    first = call.first_request()
    first_answer = (await server.handle(first, principal="alice")).body
    assert first_answer is not None
    call.receive(first_answer)
    retry = call.retry_request({"confirm": {"action": "accept", "content": {"ok": True}}})
    retry_answer = (await server.handle(retry, principal="alice")).body
    assert retry_answer is not None
    return first, first_answer, retry, retry_answer


def shorten_state(message: Any) -> Any:
    """The message with its requestState cut to its format and key id, and its length: the
    rest would fill half the page, and under the default codec (AES-GCM, a random nonce) it
    differs on every run."""
    if isinstance(message, dict):
        out = {}
        for key, value in message.items():
            if key == "requestState" and isinstance(value, str):
                fmt, kid = value.split(".")[:2]
                value = f"{fmt}.{kid}.…({len(value)} chars)"
            out[key] = shorten_state(value)
        return out
    if isinstance(message, list):
        return [shorten_state(v) for v in message]
    return message


def compact(value: Any, indent: int = 0, lead: int = 0) -> str:
    """JSON with small objects and lists on one line, so that each line, its ``indent`` and a
    ``lead`` already on the line (a key) included, fits in WIDTH characters where it can."""
    flat = json.dumps(value, ensure_ascii=False)
    if indent + lead + len(flat) <= WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = json.dumps(k, ensure_ascii=False) + ": "
            items.append(pad + key + compact(v, indent + 2, len(key)))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + compact(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def render() -> str:
    """The side-by-side table of the cheat-sheet, between its markers."""
    first, first_answer, retry, retry_answer = (
        compact(shorten_state(m)) for m in asyncio.run(exchange())
    )

    def cell(title: str, body: str) -> str:
        return f"<td>\n\n{title}\n\n```json\n{body}\n```\n\n</td>"

    return "\n".join(
        [
            BEGIN,
            "<table>",
            "<tr><th>Round 1</th><th>Round 2: the retry</th></tr>",
            "<tr>",
            cell("**client → server**: the call", first),
            cell(
                "**client → server**: same method, name and arguments; new `id`; fresh "
                "`_meta`; the answers; the state echoed byte for byte",
                retry,
            ),
            "</tr>",
            "<tr>",
            cell("**server → client**: what it needs, and its state", first_answer),
            cell("**server → client**: the final result", retry_answer),
            "</tr>",
            "</table>",
            END,
        ]
    )


def test_the_cheatsheet_shows_the_exchange_the_kit_produces():
    text = CHEATSHEET.read_text(encoding="utf-8")
    shown = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert shown == render(), "docs/cheatsheet.md is out of date: see this file's docstring"


def test_the_exchange_is_the_mrtr_shape():
    """MRTR-C2, MRTR-C3, RT-1: the retry echoes the state exactly, under a new id."""
    first, first_answer, retry, retry_answer = asyncio.run(exchange())
    assert first_answer["result"]["resultType"] == "input_required"
    assert retry["params"]["requestState"] == first_answer["result"]["requestState"]
    assert retry["id"] != first["id"]
    assert retry_answer["result"]["resultType"] == "complete"


def test_the_cheatsheet_is_one_page_and_links_the_spec_map():
    text = CHEATSHEET.read_text(encoding="utf-8")
    outside = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), "", text, flags=re.S)
    assert len(outside.splitlines()) < 170
    for part in (
        "## The client's duties",
        "## The server's rules",
        "## The three methods that may ask",
        "## Never cached",
        "## requestState security checklist",
        "## Glossary",
        "(spec-map.md)",
    ):
        assert part in text, part
    glossary = text[text.index("## Glossary") :]
    assert len(re.findall(r"^\| \*\*", glossary, flags=re.M)) >= 12


def page(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def headings(text: str) -> list[int]:
    """The level of each heading, in order (a ``#`` inside a fenced example is no heading)."""
    return [len(m[1]) for m in re.finditer(r"^(#{1,6}) \S", FENCE.sub("", text), flags=re.M)]


def rule_ids(text: str) -> set[str]:
    """The rule IDs a page cites (test_spec_map's reading, shorthands expanded), and KIT."""
    return cited_ids(text) | ({"KIT"} if re.search(r"\bKIT\b", text) else set())


def test_the_russian_cheatsheet_has_the_english_ones_headings():
    english, russian = headings(page(CHEATSHEET)), headings(page(CHEATSHEET_RU))
    for level in range(1, 7):
        assert russian.count(level) == english.count(level), (
            f"level {level}: {english.count(level)} headings in cheatsheet.md, "
            f"{russian.count(level)} in cheatsheet.ru.md"
        )
    assert russian == english, f"heading levels in order: {english} (en) vs {russian} (ru)"


@pytest.mark.parametrize(
    ("source", "target"), [(CHEATSHEET, CHEATSHEET_RU), (CHEATSHEET_RU, CHEATSHEET)]
)
def test_the_two_cheatsheets_cite_the_same_rule_ids(source, target):
    missing = sorted(rule_ids(page(source)) - rule_ids(page(target)))
    assert not missing, f"{', '.join(missing)} cited in {source.name}, missing from {target.name}"


def test_the_russian_cheatsheet_has_the_english_ones_examples_byte_for_byte():
    english, russian = FENCE.findall(page(CHEATSHEET)), FENCE.findall(page(CHEATSHEET_RU))
    assert english, "no fenced example found in cheatsheet.md"
    for n, (en, ru) in enumerate(zip(english, russian, strict=False), start=1):
        assert ru == en, f"fenced example {n} differs: copy it from cheatsheet.md\n{en}"
    assert len(russian) == len(english), (
        f"{len(english)} fenced examples in cheatsheet.md, {len(russian)} in cheatsheet.ru.md"
    )


def test_the_russian_cheatsheet_is_linked_from_the_readme_and_the_english_one():
    top = page(CHEATSHEET).split("\n## ", 1)[0]
    assert "(cheatsheet.ru.md)" in top
    assert "(docs/cheatsheet.ru.md)" in page(ROOT / "README.md")
    assert "(cheatsheet.md)" in page(CHEATSHEET_RU).split("\n## ", 1)[0]


if __name__ == "__main__":
    print(render())
