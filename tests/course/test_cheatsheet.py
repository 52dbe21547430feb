"""docs/cheatsheet.md shows a real exchange, not a made-up one.

Its round 1 and round 2 JSON are produced here, by the kit: the sans-IO client
(``MrtrCall``) builds the requests and the server core answers them, with the refund example
of lesson 02. The test fails when the page and the kit disagree; to refresh the page, run
``.venv/bin/python tests/course/test_cheatsheet.py`` and paste what it prints between the markers.

docs/cheatsheet.ru.md, the Russian page (KIT: a page of the kit, no spec rule), is kept in step
with the English one, for content, not only structure (issue 32: nine content changes to the
Russian page passed the structural checks). Section by section (``## `` headings, paired in
order): the same rule IDs, error codes, numbers with their units, HTTP header names, method
names, backticked literals and fenced examples; the same count of bullets, checklist items and
table rows; and, item by item, each rule keeps its polarity: the clause before each cited rule
ID, and each table cell, uses the same kinds of modal words (never/not, only, may, must, error,
ignore, yes) in both languages. ``test_each_review_change_is_caught`` applies each of the
review's nine changes to a copy of either page and checks that the comparison fails.
Change an example in the English page and copy it into the Russian one.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
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
        "## The three requests that may get a question",
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


# The instructor review's table of Russian phrases that make a reader stumble (issue 32): none
# of them is left, each replaced by the review's wording or a better one.
STUMBLING_PHRASES = [
    "флот",
    "кольцо ключей",
    "подделка из mrtr-kit",
    "Спрашивать могут только три метода",
    "Три метода, которые могут спрашивать",
    "результат с одним лишь состоянием",
    "возвращается в точности",
    "спрошенные ключи",
    "без\n  недоступного",
    "без недоступного",
    "Открытое состояние",
    "Каждый токен",
    "Одна вещь",
    "враждебный ввод",
    "Запечатанный AES",
    "просит пример refunds",
    "к principal",
    "случается ровно один раз",
]


@pytest.mark.parametrize("phrase", STUMBLING_PHRASES)
def test_the_russian_page_has_had_the_reviews_wording_pass(phrase):
    assert phrase.lower() not in page(CHEATSHEET_RU).lower(), phrase


def test_russian_terms_are_used_one_way():
    """One Russian word per term: capabilities are «возможности», the fleet is «кластер» or
    «все экземпляры», the principal «принципал» (the English word only in brackets)."""
    text = FENCE.sub("", page(CHEATSHEET_RU))
    outside_brackets = re.sub(r"\([^()]*\)", "", text)
    for english in ("capabilities", "principal", "fleet", "key ring"):
        assert english not in outside_brackets, english


@pytest.mark.parametrize("path", [CHEATSHEET, CHEATSHEET_RU])
def test_both_pages_say_requests_to_the_client_are_gone_and_integrity_is_not_single_use(path):
    """The two headlines the review found missing (C12): MRTR-0, and MRTR-S5d's caveat."""
    text = page(path)
    gone = {"en": "No more requests to the client", "ru": "Запросов к клиенту больше нет"}
    once = {"en": "Integrity is not single use", "ru": "Целостность — не одноразовость"}
    lang = "ru" if path == CHEATSHEET_RU else "en"
    assert gone[lang] in text and "(MRTR-0)" in text
    assert once[lang] in text and "(MRTR-S5d)" in text


@pytest.mark.parametrize("path", [CHEATSHEET, CHEATSHEET_RU])
def test_no_page_says_a_method_asks(path):
    """ "Three methods may ask" meant two different triples (C11): requests get a question back;
    the three kinds of question are input requests."""
    text = page(path).lower()
    for wrong in ("three methods", "methods may ask", "три метода", "методы могут спрашивать"):
        assert wrong not in text, wrong


# -- the two pages, compared for content ---------------------------------------------------------

ID = re.compile(r"\b(?:[A-Z]{2,6}-[A-Z]?\d+[a-z]?|KIT)\b")
CODE = re.compile(r"(?<![\w-])-32\d{3}\b")
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
HEADER = re.compile(r"\b(?:Mcp-[A-Za-z-]+|Authorization|Content-Type|Accept)\b")
METHOD = re.compile(r"\b[a-z]+(?:/[a-zA-Z]+)+\b")
TICKS = re.compile(r"`([^`\n]+)`")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
NUMBER = re.compile(r"(?<![\w.+-])(\d+(?:\.\d+)?)\+?(?:\s+([^\W\d]+))?")
# A number's unit, in either language (the review's change: "15 минут" became "15 секунд").
UNITS = {
    "minute": r"min|mins|minutes?|мин|минут[аы]?",
    "second": r"s|sec|seconds?|с|сек|секунд[аы]?",
    "millisecond": r"ms|мс",
    "hour": r"h|hours?|ч|час|часа|часов",
    "byte": r"bytes?|байт[а]?",
    "round": r"rounds?|раунд[аов]*",
}
# The modal words that give a rule its polarity, in either language (MUST vs MUST NOT, MAY).
POLARITY = {
    "not": r"never|not|no|don't|doesn't|isn't|none|nothing|nor|cannot|can't"
    r"|никогда|не|нет|ни|нельзя|ничего|недопуст\w*",
    "only": r"only|только|лишь",
    "may": r"may|can|allowed|allows?|можно|разреша\w*|может|могут|допустим\w*",
    "must": r"must|mandatory|always|должен|должна|должно|должны|обязател\w*|всегда|положено",
    "error": r"error|errors|fail|fails|failed|reject|rejects|refused|ошибк\w*|отверга\w*",
    "ignore": r"ignore|ignored|игнорир\w*",
    "yes": r"yes|да",
}


def _unit(word: str | None) -> str | None:
    for unit, pattern in UNITS.items():
        if word and re.fullmatch(pattern, word, flags=re.I):
            return unit
    return None


def polarity(text: str) -> frozenset[str]:
    """The kinds of modal word in ``text``."""
    words = re.findall(r"[^\W\d_]+(?:'[a-z]+)?", text.lower())
    return frozenset(
        kind
        for kind, pattern in POLARITY.items()
        if any(re.fullmatch(pattern, word) for word in words)
    )


def sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) for the text before the first ``## `` heading and for each section."""
    parts = re.split(r"^## ", text, flags=re.M)
    return [("(top)", parts[0])] + [tuple(p.split("\n", 1)) for p in parts[1:]]  # type: ignore[misc]


def items(body: str) -> list[str]:
    """A section's bullets, checklist items and table rows (a continuation line joins its
    item), fenced examples and the exchange's HTML left out."""
    body = FENCE.sub("", body)
    found: list[str] = []
    for line in body.splitlines():
        if re.match(r"^(- |\|)", line) and not re.match(r"^\|[-| ]+\|$", line):
            found.append(line)
        elif found and line.startswith("  ") and line.strip():
            found[-1] += " " + line.strip()
        elif not line.strip() or not line.startswith(" "):
            found.append("") if found and found[-1] else None
    return [item for item in found if item]


def rule_clauses(item: str) -> list[tuple[str, frozenset[str]]]:
    """Each parenthesis of rule IDs in an item, with the polarity of the clause before it
    (from the previous parenthesis, or the item's start): the rule and what it says."""
    out = []
    start = 0
    for m in re.finditer(r"\(([^()]*)\)", item):
        ids = ", ".join(ID.findall(m[1]))
        if ids:
            out.append((ids, polarity(item[start : m.start()])))
            start = m.end()
    return out


def facts(body: str) -> dict[str, Any]:
    """What a section says that must read the same in both languages."""
    text = FENCE.sub("", body)
    plain = LINK_TARGET.sub("]", text)
    ticks = Counter(TICKS.findall(plain))
    bare = TICKS.sub(" ", plain)
    numbers_text = DATE.sub(" ", CODE.sub(" ", ID.sub(" ", bare)))
    lines = body.splitlines()
    rows = [item for item in items(body) if item.startswith("|")]
    return {
        "rule IDs": Counter(ID.findall(plain)),
        "error codes": Counter(CODE.findall(plain)),
        "dates": Counter(DATE.findall(bare)),
        "numbers": Counter((n, _unit(w)) for n, w in NUMBER.findall(numbers_text)),
        "header names": Counter(HEADER.findall(plain)),
        "method names": Counter(METHOD.findall(plain)),
        "backticked literals": ticks,
        "fenced examples": FENCE.findall(body),
        "bullets": sum(bool(re.match(r"^- (?!\[)", line)) for line in lines),
        "checklist items": sum(line.startswith("- [ ] ") for line in lines),
        "table rows": len(rows),
        "table cells": [len(row.strip("|").split("|")) for row in rows],
    }


def differences(english: str, russian: str) -> list[str]:
    """Everything the two pages do not say alike, section by section: empty when in step."""
    en, ru = sections(english), sections(russian)
    if len(en) != len(ru):
        return [f"{len(en)} sections in English, {len(ru)} in Russian"]
    problems = []
    for (title, en_body), (_, ru_body) in zip(en, ru, strict=True):
        a, b = facts(en_body), facts(ru_body)
        for what in a:
            if a[what] != b[what]:
                if isinstance(a[what], Counter):
                    only_en, only_ru = a[what] - b[what], b[what] - a[what]
                    detail = f"only in English {dict(only_en)}, only in Russian {dict(only_ru)}"
                else:
                    detail = f"English {a[what]!r}, Russian {b[what]!r}"
                problems.append(f"section {title!r}: {what} differ: {detail}")
        en_items, ru_items = items(en_body), items(ru_body)
        for n, (x, y) in enumerate(zip(en_items, ru_items, strict=False), 1):
            if rule_clauses(x) != rule_clauses(y):
                problems.append(
                    f"section {title!r}, item {n}: rules or their polarity differ: "
                    f"English {rule_clauses(x)}, Russian {rule_clauses(y)}"
                )
            if x.startswith("|") and y.startswith("|") and not title.startswith(GLOSSARY):
                cx = [polarity(c) for c in x.strip("|").split("|")]
                cy = [polarity(c) for c in y.strip("|").split("|")]
                if cx != cy:
                    problems.append(
                        f"section {title!r}, row {n}: the cells' polarity differs: "
                        f"English {cx}, Russian {cy}"
                    )
    return problems


GLOSSARY = ("Glossary", "Глоссарий")  # definitions, not rules: counted, IDs checked, no polarity


def test_the_two_cheatsheets_say_the_same_section_by_section():
    """Every rule ID, error code, number, header and method name, literal and example in the
    same section of both pages, and every rule with the same polarity (KIT)."""
    problems = differences(page(CHEATSHEET), page(CHEATSHEET_RU))
    assert not problems, "\n".join(problems)


def test_the_comparison_reads_what_it_should():
    """The comparison's readers on known text, so that a reader that finds nothing cannot pass
    two pages that differ."""
    en = facts(page(CHEATSHEET).split("## The server's rules", 1)[1].split("\n## ", 1)[0])
    assert en["error codes"] == Counter({"-32021": 1})
    assert en["rule IDs"]["MRTR-0"] == 1 and en["bullets"] >= 8
    assert en["method names"]["elicitation/create"] == 2
    checklist = facts(page(CHEATSHEET_RU).split("## Чек-лист", 1)[1].split("\n## ", 1)[0])
    assert checklist["numbers"][("15", "minute")] == 1 and checklist["checklist items"] == 9
    assert polarity("Лишние ответы игнорируйте") == {"ignore"}
    assert polarity("never read it; only if it may") == {"not", "only", "may"}
    assert rule_clauses("- a: ignore (MRTR-E3); b must (CAP-1, KIT)") == [
        ("MRTR-E3", frozenset({"ignore"})),
        ("CAP-1, KIT", frozenset({"must"})),
    ]


def _item_starting(prefix: str, path: Path) -> str:
    """The whole checklist item (with its continuation lines) that starts with ``prefix``."""
    text = page(path)
    start = text.index(prefix)
    end = text.index("\n- ", start + 1)
    return text[start : end + 1]


def _row_starting(prefix: str, path: Path) -> str:
    text = page(path)
    start = text.index(prefix)
    return text[start : text.index("\n", start) + 1]


# The review's nine content changes (docs/cheatsheet.ru.md, one at a time; issue 32, B3), each
# as it would read in the Russian page and in the English one: (old, new) replacements.
REVIEW_CHANGES = {
    "error code -32021 to -32602": (
        [("отвечайте `-32021`", "отвечайте `-32602`")],
        [("answer `-32021`", "answer `-32602`")],
    ),
    "round cap 10 to 3": (
        [("останавливается на 10", "останавливается на 3")],
        [("stops at 10", "stops at 3")],
    ),
    "expiry 15 minutes to 15 seconds": (
        [("15 мин, KIT", "15 секунд, KIT")],
        [("15 min, KIT", "15 seconds, KIT")],
    ),
    "MRTR-E3 inverted: extra answers are an error": (
        [("Лишние ответы\n  игнорируйте (MRTR-E3)", "Лишние ответы —\n  ошибка (MRTR-E3)")],
        [("Extra answers: ignore\n  (MRTR-E3)", "Extra answers: an error\n  (MRTR-E3)")],
    ),
    "MRTR-C2 inverted: the state may be read and decoded": (
        [
            (
                "никогда\n  не читайте, не декодируйте и не правьте его",
                "можно\n  читать и декодировать его",
            )
        ],
        [("never read, decode or\n  edit it", "you may read and decode\n  it")],
    ),
    "the key-rotation checklist item deleted": (
        [(_item_starting("- [ ] Ключи:", CHEATSHEET_RU), "")],
        [(_item_starting("- [ ] Keys:", CHEATSHEET), "")],
    ),
    "the glossary row for the fleet deleted": (
        [(_row_starting("| **кластер**", CHEATSHEET_RU), "")],
        [(_row_starting("| **fleet**", CHEATSHEET), "")],
    ),
    "resources/read made never cacheable": (
        [("| да, но не `input_required` и не после повтора |", "| никогда |")],
        [("| yes, but not `input_required` and not after a retry |", "| never |")],
    ),
    "MRTR-S4b turned into never allowed": (
        [
            (
                "Незащищённое состояние допустимо, только если худшая подделка всего\n"
                "      лишь завершает запрос ошибкой (MRTR-S4b)",
                "Незащищённое состояние недопустимо никогда (MRTR-S4b)",
            )
        ],
        [
            (
                "An unprotected state is allowed only if the worst forgery just ends the\n"
                "      request in an error (MRTR-S4b)",
                "An unprotected state is never allowed (MRTR-S4b)",
            )
        ],
    ),
}


@pytest.mark.parametrize("language", ["ru", "en"])
@pytest.mark.parametrize("change", sorted(REVIEW_CHANGES))
def test_each_review_change_is_caught(change, language):
    """Each of the instructor review's nine changes, made to a copy of either page, makes the
    comparison fail (it passed the old, structural test)."""
    english, russian = page(CHEATSHEET), page(CHEATSHEET_RU)
    edits = REVIEW_CHANGES[change][0 if language == "ru" else 1]
    changed = russian if language == "ru" else english
    for old, new in edits:
        assert old and old in changed, f"{change}: {old!r} is not in the {language} page"
        changed = changed.replace(old, new, 1)
    pair = (english, changed) if language == "ru" else (changed, russian)
    assert differences(*pair), f"{change} ({language}) was not caught"


if __name__ == "__main__":
    print(render())
