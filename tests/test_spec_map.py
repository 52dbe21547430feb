"""Every rule ID the kit cites resolves in docs/spec-map.md.

The lessons, the README, the docs, code comments, docstrings and test names cite rules by ID
(``MRTR-S4a``, ``CACHE-3``, ``KIT-HTTP-B``; shorthands such as ``MRTR-S5a–c``, ``MRTR-C1…C4``,
``HTTP-7/10/14``; in test names ``..._mrtr_s5d``). A reader must be able to look each one up,
so an ID the map does not define is a failure, reported with the files that cite it.

The map is the repository's own page: this test reads nothing outside the repository.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from tests.lesson_files import LESSONS

ROOT = Path(__file__).resolve().parent.parent
SPEC_MAP = ROOT / "docs" / "spec-map.md"

PREFIXES = "CACHE|CAP|CORE|DISC|ELIC|ERR|HTTP|MIG|MRTR|ROOTS|RT|SAMP|SCH|SEC|VER|STDIO"
ONE_ID = rf"\b(?:(?:{PREFIXES})-[A-Z]?[0-9]+[a-z]?|KIT-[A-Z]+-[A-Z0-9]+)\b"
PART = r"[A-Z]?[0-9]+[a-z]?"
# An ID, then what may follow it as a shorthand for more IDs of the same family.
CITATION = re.compile(
    rf"(?P<id>{ONE_ID})"
    rf"(?P<range>\s*(?:–|…|\.\.\.)\s*(?:{PART}|[a-z])|-[a-z]\b)?"
    rf"(?P<alts>(?:/(?:{PREFIXES}-)?{PART}\b)*)"
)
TEST_NAME = re.compile(r"\bdef (test_\w+)")
TEST_NAME_ID = re.compile(
    rf"(?<=_)(?P<prefix>mrtr|{PREFIXES.lower()})_(?P<part>[a-z]?[0-9]+[a-z]?)(?=_|$)"
)


def _split(id_: str) -> tuple[str, str, int, str]:
    """``MRTR-S5a`` -> ("MRTR-", "S", 5, "a")."""
    head, _, tail = id_.rpartition("-")
    m = re.fullmatch(r"([A-Z]?)([0-9]+)([a-z]?)", tail)
    assert m, id_
    return head + "-", m[1], int(m[2]), m[3]


def _expand(first: str, rng: str | None, alts: str) -> set[str]:
    ids = {first}
    if first.startswith("KIT-"):
        return ids
    prefix, family, number, letter = _split(first)
    if rng:
        end = rng.strip().lstrip("–….-").strip()
        if re.fullmatch(r"[a-z]", end) and letter:  # MRTR-S5a–c
            ids |= {f"{prefix}{family}{number}{chr(c)}" for c in range(ord(letter), ord(end) + 1)}
        else:  # MRTR-C1…C4
            last = int(re.sub(r"\D", "", end))
            ids |= {f"{prefix}{family}{n}" for n in range(number, last + 1)}
    for alt in filter(None, alts.split("/")):
        if alt.startswith(prefix):
            ids.add(alt)
        elif alt[0].isdigit():  # CORE-10/11, HTTP-7/10/14
            ids.add(f"{prefix}{family}{alt}")
        else:  # MRTR-C1/C6, MRTR-S4/S4a
            ids.add(f"{prefix}{alt}")
    return ids


def cited_ids(text: str) -> set[str]:
    """Every rule ID ``text`` cites, shorthands expanded, test names included."""
    found: set[str] = set()
    for m in CITATION.finditer(text):
        found |= _expand(m["id"], m["range"], m["alts"] or "")
    for name in TEST_NAME.findall(text):
        for m in TEST_NAME_ID.finditer(name):
            part = re.fullmatch(r"([a-z]?)([0-9]+)([a-z]?)", m["part"])
            assert part
            found.add(f"{m['prefix'].upper()}-{part[1].upper()}{part[2]}{part[3]}")
    return found


def defined_ids(map_text: str) -> set[str]:
    """The IDs the map defines: the first cell of each rule row, ``| **ID** ...``."""
    return set(re.findall(rf"^\| \*\*({ONE_ID})\*\*", map_text, flags=re.M))


def unknown_ids(text: str, defined: set[str]) -> set[str]:
    return cited_ids(text) - defined


def notebook_text(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells)


def texts(paths: list[Path]) -> dict[Path, str]:
    return {
        p: notebook_text(p) if p.suffix == ".ipynb" else p.read_text(encoding="utf-8")
        for p in paths
    }


def report(found: dict[Path, str], defined: set[str]) -> dict[str, list[str]]:
    """Unknown ID -> the files that cite it."""
    where: dict[str, list[str]] = defaultdict(list)
    for path, text in found.items():
        for id_ in sorted(unknown_ids(text, defined)):
            where[id_].append(str(path.relative_to(ROOT)))
    return dict(where)


@pytest.fixture(scope="module")
def defined() -> set[str]:
    return defined_ids(SPEC_MAP.read_text(encoding="utf-8"))


# --- the checker itself -------------------------------------------------------------------------


def test_an_unknown_id_is_reported(defined):
    text = "Round 2 must reject it (MRTR-S4a), and also obey MRTR-S99 and KIT-FOO-1."
    assert unknown_ids(text, defined) == {"MRTR-S99", "KIT-FOO-1"}


def test_the_real_check_fails_on_a_notebook_citing_an_unknown_id(tmp_path, defined):
    fake = tmp_path / "99-fake.ipynb"
    fake.write_text(
        json.dumps({"cells": [{"cell_type": "markdown", "source": ["Forbidden (MRTR-S99)."]}]})
    )
    assert unknown_ids(notebook_text(fake), defined) == {"MRTR-S99"}


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("bound claims (MRTR-S5a–c)", {"MRTR-S5a", "MRTR-S5b", "MRTR-S5c"}),
        ("bound claims (MRTR-S5a-c)", {"MRTR-S5a", "MRTR-S5b", "MRTR-S5c"}),
        ("obligations (MRTR-C1…C4)", {"MRTR-C1", "MRTR-C2", "MRTR-C3", "MRTR-C4"}),
        ("headers (HTTP-7/10/14)", {"HTTP-7", "HTTP-10", "HTTP-14"}),
        ("(MRTR-C1/C6)", {"MRTR-C1", "MRTR-C6"}),
        ("(MRTR-S4/S4a)", {"MRTR-S4", "MRTR-S4a"}),
        ("(CAP-1/CAP-4)", {"CAP-1", "CAP-4"}),
        ("KIT-HTTP-B, CORE-10.", {"KIT-HTTP-B", "CORE-10"}),
        ("def test_replay_is_refused_mrtr_s5d_and_http_26():", {"MRTR-S5d", "HTTP-26"}),
        ("no citation: HTTP/1.1, SEP-2322, -32602, test_http", set()),
    ],
)
def test_shorthands_and_test_names_are_read_as_ids(text, ids):
    assert cited_ids(text) == ids


# --- the map ------------------------------------------------------------------------------------


def test_the_map_defines_each_id_once_with_a_source(defined):
    text = SPEC_MAP.read_text(encoding="utf-8")
    rows = re.findall(rf"^\| \*\*({ONE_ID})\*\*(.*)$", text, flags=re.M)
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids)) and len(ids) > 150
    links = dict(re.findall(r"^\[([\w-]+)\]: (\S+)$", text, flags=re.M))
    for id_, rest in rows:
        if rest.startswith(" (KIT)"):
            assert rest.rstrip().endswith("| kit convention |"), id_
            continue
        labels = re.findall(r"\]\[([\w-]+)\]", rest)
        assert labels, f"{id_} links no source"
        for label in labels:
            assert label in links, f"{id_}: [{label}] is not defined"
    for url in links.values():
        assert url.startswith(
            (
                "https://modelcontextprotocol.io/specification/2026-07-28",
                "https://modelcontextprotocol.io/seps/2322-MRTR",
            )
        ), url


def test_the_map_explains_the_kit_tag_once_at_the_top():
    text = SPEC_MAP.read_text(encoding="utf-8")
    first_table = text.index("| ID |")
    assert "**(KIT)** marks the kit's own conventions" in text[:first_table]


# --- the repository ------------------------------------------------------------------------------

LESSON_FILES = [*sorted(LESSONS.glob("*/*.ipynb")), ROOT / "README.md"]
DOC_FILES = sorted((ROOT / "docs").glob("*.md"))
CODE_FILES = sorted(
    p
    for folder in ("mrtr_kit", "tests", "tools", "benchmarks")
    for p in (ROOT / folder).rglob("*.py")
    if p.name != Path(__file__).name  # this file cites made-up IDs on purpose
)


def test_every_id_the_notebooks_and_readme_cite_is_in_the_map(defined):
    unknown = report(texts(LESSON_FILES), defined)
    assert unknown == {}, f"IDs missing from docs/spec-map.md: {unknown}"


def test_every_id_the_docs_cite_is_in_the_map(defined):
    unknown = report(texts(DOC_FILES), defined)
    assert unknown == {}, f"IDs missing from docs/spec-map.md: {unknown}"


def test_every_id_code_comments_and_test_names_cite_is_in_the_map(defined):
    unknown = report(texts(CODE_FILES), defined)
    assert unknown == {}, f"IDs missing from docs/spec-map.md: {unknown}"


# --- levels the map once got wrong --------------------------------------------------------------

# The keyword each rule carries in the digest's checklist (copied here: tests must not read it).
# CACHE-2 and CACHE-6 state facts with no keyword; HTTP-26's MUST binds "a client that still
# wants the answer"; ELIC-14's MUST NOT is about forms, "use URL mode" has no keyword of its own;
# ELIC-16 binds to the client and the user (MUST) and distrusts identity in the answers (MUST NOT).
PINNED_LEVELS = {
    "CACHE-2": ("note", ""),
    "CACHE-6": ("note", ""),
    "HTTP-26": ("MUST", "a client that still wants the answer"),
    "ELIC-14": ("MUST NOT / SHOULD", "without a keyword of its own"),
    "ELIC-16": ("MUST / MUST NOT", "asserted inside the answers"),
}


@pytest.mark.parametrize(("id_", "level", "words"), [(k, *v) for k, v in PINNED_LEVELS.items()])
def test_the_map_gives_the_specifications_level(id_, level, words):
    row = re.search(rf"^\| \*\*{id_}\*\* \| ([^|]+) \| ([^|]+) \|", SPEC_MAP.read_text(), re.M)
    assert row, id_
    assert row[1].strip() == level, f"{id_} is {row[1].strip()!r} in the map, {level!r} in the spec"
    assert words in row[2], f"{id_}: the words should say {words!r}"
