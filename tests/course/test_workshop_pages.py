"""The pages an instructor expects to find (issue 32; KIT: the kit's own pages, no spec rule):
a learners' page (profile, prerequisites, MCP on one page), a helpers' page, a Russian page for
the instructor, each linked from instructors/README.md; and no offline recovery advice that
sends a learner to the network."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.course.test_instructors import plan_checks, schedule_of
from tests.test_spec_map import cited_ids, defined_ids

ROOT = Path(__file__).resolve().parents[2]
INSTRUCTORS = ROOT / "instructors"
LEARNERS = INSTRUCTORS / "before-you-start.md"
HELPERS = INSTRUCTORS / "helpers.md"
RUSSIAN = INSTRUCTORS / "ru.md"
NEW_PAGES = [LEARNERS, HELPERS, RUSSIAN, INSTRUCTORS / "quiz-answers.md"]
SPEC_IDS = defined_ids((ROOT / "docs" / "spec-map.md").read_text(encoding="utf-8"))


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def flat(value: str) -> str:
    return " ".join(value.split())


@pytest.mark.parametrize("path", NEW_PAGES, ids=lambda p: p.name)
def test_each_page_is_linked_from_the_instructors_guide(path):
    assert f"]({path.name})" in text(INSTRUCTORS / "README.md"), path.name


@pytest.mark.parametrize("path", [LEARNERS, HELPERS, RUSSIAN], ids=lambda p: p.name)
def test_each_page_cites_only_rules_the_spec_map_defines_and_its_links_resolve(path):
    page = text(path)
    assert cited_ids(page) <= SPEC_IDS, cited_ids(page) - SPEC_IDS
    for target in re.findall(r"\]\(([^)\s]+)\)", page):
        if re.match(r"[a-z]+:", target):
            continue
        assert (path.parent / target.partition("#")[0]).resolve().exists(), target


def test_the_learners_page_has_a_profile_prerequisites_and_a_one_page_primer():
    page = text(LEARNERS)
    for heading in (
        "## Who the lessons are for",
        "## What you should know already",
        "## MCP on one page",
    ):
        assert heading in page, heading
    primer = page.split("## MCP on one page", 1)[1].split("\n## ", 1)[0]
    assert len(primer.split()) <= 650, "one page"  # about a printed page
    for idea in ("host", "client", "server", "tools/call", "JSON-RPC", "stdio", "capabilit"):
        assert idea in primer, idea
    assert "server-to-client requests are gone (MRTR-0" in flat(primer)


def test_the_helpers_page_gives_the_ratio_and_colour_blind_safe_notes():
    page = flat(text(HELPERS))
    assert "One helper for every 8 to 10 learners" in page
    assert "**blue** and **yellow**, not red and green" in page
    assert "python3 tools/kit.py reset NN" in page and "answer-key.md" in page


def test_the_russian_page_has_every_term_of_the_russian_cheatsheets_glossary():
    sheet = text(ROOT / "docs" / "cheatsheet.ru.md").split("## Глоссарий", 1)[1]
    terms = re.findall(r"^\| \*\*([^*]+)\*\*", sheet, flags=re.M)
    assert len(terms) >= 12
    glossary = text(RUSSIAN).split("## Глоссарий курса", 1)[1].split("\n## ", 1)[0]
    for term in terms:
        assert term in glossary, term
    assert "## Где уроки рассчитаны на английский, и что сказать" in text(RUSSIAN)


# Recovery advice in the instructors' pages, the plans included (the answer key is generated
# from the checkpoints' messages: it gives no recovery advice of its own).
ADVICE = [p for p in sorted(INSTRUCTORS.rglob("*.md")) if not p.name.startswith("answer-")]
PLANS = sorted(INSTRUCTORS.glob("plan-*.md"))


@pytest.mark.parametrize("path", ADVICE, ids=lambda p: p.stem)
def test_no_recovery_advice_sends_a_learner_to_binder_without_saying_it_needs_network(path):
    """ "Move to Binder" is no help with the Wi-Fi down (the review's C1): every sentence that
    sends a learner to Binder says it needs the network, or that offline it is pairing."""
    for sentence in re.split(r"(?<=[.;:])\s", flat(text(path))):
        sends = re.search(r"\b(?:move|moves|or|to)\s+(?:them\s+to\s+)?Binder\b", sentence)
        if sends:
            assert "network" in sentence or "offline" in sentence.lower(), sentence


# What needs the network: Binder, a web address that is not this machine, a download, pip or
# git reaching out (an install from the USB stick's wheelhouse or bundle is offline).
NETWORK = re.compile(
    r"\bBinder\b|https?://(?!127\.0\.0\.1|localhost)|\bdownload"
    r"|\bpip install\b(?!.*--(?:offline|no-index))|\bgit (?:clone|pull|fetch)\b(?!.*\.bundle)",
    re.I,
)


@pytest.mark.parametrize("path", PLANS, ids=lambda p: p.stem)
def test_no_plan_row_or_check_action_needs_the_network(path):
    """A plan is what the room does on the day, Wi-Fi or not (issue 32, the review's C1): none of
    its rows, and none of its "If half the room fails" actions, sends a learner to the network;
    the recovery is the USB stick (`kit.py lab --offline PATH`) or a neighbour's laptop."""
    page = text(path)
    _, rows, _ = schedule_of(page)
    for start, _, block, _ in rows:
        assert not NETWORK.search(block), f"{start}: {block}"
    for at, _, _, action in plan_checks(page):
        assert not NETWORK.search(action), f"{at}: {action}"


@pytest.mark.parametrize(
    ("advice", "online"),
    [
        ("those without forms move to `python3 tools/kit.py lab` or Binder", True),
        ("open https://mybinder.org/v2/gh/OWNER/REPO/TAG", True),
        ("download the lesson again", True),
        ("run `pip install mrtr-kit[lab]`", True),
        ("`git clone https://github.com/OWNER/REPO`", True),
        ("a helper reinstalls from the stick: `python3 tools/kit.py lab --offline PATH`", False),
        ("`pip install --no-index --find-links ~/wheelhouse mrtr-kit`", False),
        ("`git clone ~/wheelhouse/mrtr-kit.bundle mrtr-kit`", False),
        ("the server at http://127.0.0.1:8000/mcp", False),
    ],
)
def test_the_network_pattern_tells_online_advice_from_offline(advice, online):
    assert bool(NETWORK.search(advice)) is online
