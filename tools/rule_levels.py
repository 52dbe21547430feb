"""Write each rule's level beside its ID in the lessons' Markdown (issue 31, item 4).

    .venv/bin/python tools/rule_levels.py [--check] [notebooks/NN-name/NN-name.ipynb ...]

Where a lesson cites a rule, the reader sees how strong it is: ``MRTR-E3 SHOULD``, ``CAP-2
MUST``, ``MRTR-C6 note``, ``MRTR-S8 MUST NOT / MAY`` (a compound level as docs/spec-map.md
writes it), and ``MRTR-R3 (KIT)`` for the kit's own conventions (a "—" in the map's Level
column). The levels come from docs/spec-map.md, the repository's own page.

Without ``--check`` it writes the level after every citation in the Markdown cells that lacks
one, and replaces a level that is not the map's; a second run changes nothing. With ``--check``
it changes nothing, prints each missing or wrong level and exits 1 if there is one. With no
paths, every lesson (``notebooks/*/NN*.ipynb``).

What counts as a citation, as ``tests/course/test_rule_levels.py`` checks it:

* Prose only: fenced code blocks and inline code spans are code, shown as code; an ID there is
  not a citation (``cited_ids`` still checks it exists, tests/test_spec_map.py).
* A shorthand for several IDs (``MRTR-S5a–c``, ``MRTR-C1…C4``, ``CORE-10/11``) takes one level
  after the whole group: the members' levels, each once, in order, joined by `` / ``
  (``MRTR-S5a–c SHOULD``).
* An ID already followed by ``(KIT)`` where the map says it is a KIT row is right as it stands.

Read what it wrote: a level put into a sentence that already says it ("MRTR-E3 SHOULD says servers
SHOULD ...") reads badly; fix such a sentence by hand. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_MAP = ROOT / "docs" / "spec-map.md"
LESSON_GLOB = "[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb"

PREFIXES = "CACHE|CAP|CORE|DISC|ELIC|ERR|HTTP|MIG|MRTR|ROOTS|RT|SAMP|SCH|SEC|VER|STDIO"
ONE_ID = rf"\b(?:(?:{PREFIXES})-[A-Z]?[0-9]+[a-z]?|KIT-[A-Z]+-[A-Z0-9]+)\b"
PART = r"[A-Z]?[0-9]+[a-z]?"
CITATION = re.compile(
    rf"(?P<id>{ONE_ID})"
    rf"(?P<range>\s*(?:–|…|\.\.\.)\s*(?:{PART}|[a-z])\b|-[a-z]\b)?"
    rf"(?P<alts>(?:/(?:{PREFIXES}-)?{PART}\b)*)"
)
WORD = r"(?:MUST NOT|MUST|SHOULD NOT|SHOULD|MAY|note|step)"
# A level as written after an ID: one keyword, a compound ("MUST / MAY"), "MUST, where
# needed", or "(KIT)".
WRITTEN = re.compile(
    rf"[ \t]*(?:\n[ \t]*)?(?:\(KIT\)|{WORD}(?:, where needed|\s*/\s*{WORD})*)(?![A-Za-z])"
)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
KIT = "(KIT)"


def spec_levels(text: str | None = None) -> dict[str, str]:
    """Every ID of the spec map and its level as written there; "(KIT)" for a KIT row."""
    levels = {}
    for line in (text if text is not None else SPEC_MAP.read_text()).splitlines():
        row = re.match(
            r"\| \*\*(?P<id>[A-Za-z0-9-]+)\*\*(?P<kit> \(KIT\))? \| (?P<level>[^|]*)\|", line
        )
        if row:
            level = row["level"].strip()
            levels[row["id"]] = KIT if row["kit"] or level in ("—", "-", "") else level
    return levels


def _split(id_: str) -> tuple[str, str, int, str]:
    head, _, tail = id_.rpartition("-")
    m = re.fullmatch(r"([A-Z]?)([0-9]+)([a-z]?)", tail)
    if not m:
        raise ValueError(id_)
    return head + "-", m[1], int(m[2]), m[3]


def members(first: str, rng: str | None, alts: str) -> list[str]:
    """The IDs a citation stands for, in order: ``MRTR-S5a–c`` -> S5a, S5b, S5c."""
    ids = [first]
    if first.startswith("KIT-"):
        return ids
    prefix, family, number, letter = _split(first)
    if rng:
        end = rng.strip().lstrip("–….-").strip()
        if re.fullmatch(r"[a-z]", end) and letter:
            ids += [
                f"{prefix}{family}{number}{chr(c)}" for c in range(ord(letter) + 1, ord(end) + 1)
            ]
        else:
            last = int(re.sub(r"\D", "", end))
            ids += [f"{prefix}{family}{n}" for n in range(number + 1, last + 1)]
    for alt in filter(None, alts.split("/")):
        if alt.startswith(prefix):
            ids.append(alt)
        elif alt[0].isdigit():
            ids.append(f"{prefix}{family}{alt}")
        else:
            ids.append(f"{prefix}{alt}")
    return ids


def expected_level(ids: list[str], levels: dict[str, str]) -> str | None:
    """The level to write after a citation of ``ids``; None if an ID is not in the map (that
    is tests/test_spec_map.py's failure, not this tool's)."""
    if any(i not in levels for i in ids):
        return None
    seen: list[str] = []
    for i in ids:
        if levels[i] not in seen:
            seen.append(levels[i])
    if len(seen) == 1:
        return seen[0]
    parts: list[str] = []  # a mixed group: every keyword once, "(KIT)" as "KIT" inside it
    for level in seen:
        for part in re.split(r"\s*/\s*", level):
            part = "KIT" if part == KIT else part
            if part not in parts:
                parts.append(part)
    return " / ".join(parts)


def _keywords(level: str) -> set[str]:
    return {p.strip() for p in re.split(r"\s*/\s*", level) if p.strip()}


def _names_a_part(written: str, level: str, citation: re.Match[str]) -> bool:
    """One rule cited by the part of its compound level the sentence is about ("ELIC-12
    SHOULD" for its HTTPS part, of a "MUST / MUST NOT / SHOULD" rule) is right as written."""
    single = not citation["range"] and not citation["alts"]
    return (
        single
        and KIT not in (written, level)
        and bool(written)
        and (_keywords(written) <= _keywords(level))
    )


@dataclass(frozen=True)
class Finding:
    cited: str  # the citation as written ("MRTR-S5a–c")
    expected: str
    written: str  # "" when no level follows it
    context: str

    def __str__(self) -> str:
        said = f"has {self.written.strip()!r}" if self.written else "has no level"
        return f"{self.cited} {said}, the map says {self.expected!r}: …{self.context}…"


def _prose_spans(text: str) -> list[tuple[int, int]]:
    """The stretches of ``text`` outside code blocks and code spans."""
    spans, at = [], 0
    for code in CODE.finditer(text):
        spans.append((at, code.start()))
        at = code.end()
    spans.append((at, len(text)))
    return spans


def check_text(text: str, levels: dict[str, str]) -> list[Finding]:
    return fix_text(text, levels)[1]


def fix_text(text: str, levels: dict[str, str]) -> tuple[str, list[Finding]]:
    """``text`` with every citation's level written (or corrected), and what was wrong."""
    findings: list[Finding] = []
    out: list[str] = []
    at = 0
    for start, end in _prose_spans(text):
        out.append(text[at:start])
        prose = text[start:end]
        pieces, last = [], 0
        for m in CITATION.finditer(prose):
            level = expected_level(members(m["id"], m["range"], m["alts"] or ""), levels)
            if level is None:
                continue
            written = WRITTEN.match(prose, m.end())
            has = written[0] if written else ""
            want = f" {level}"
            if has.strip() == level or _names_a_part(has.strip(), level, m):
                continue
            context = prose[max(0, m.start() - 40) : m.end() + 40].replace("\n", " ")
            findings.append(Finding(m[0], level, has, context))
            pieces.append(prose[last : m.end()])
            pieces.append(want)
            last = m.end() + len(has)
        pieces.append(prose[last:])
        out.append("".join(pieces))
        at = end
    out.append(text[at:])
    return "".join(out), findings


def fix_notebook(path: Path, levels: dict[str, str], *, write: bool) -> list[Finding]:
    source = path.read_text(encoding="utf-8")
    notebook = json.loads(source)
    findings: list[Finding] = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        fixed, found = fix_text(text, levels)
        findings += found
        if fixed != text:
            cell["source"] = fixed.splitlines(keepends=True)
    if write and findings:
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return findings


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"]
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__)
        return 0
    paths = paths or sorted((ROOT / "notebooks").glob(LESSON_GLOB))
    levels = spec_levels()
    missing = 0
    for path in paths:
        findings = fix_notebook(path, levels, write=not check)
        missing += len(findings)
        for finding in findings:
            print(f"{path.name}: {finding}")
        if findings and not check:
            print(f"{path.name}: {len(findings)} level(s) written")
    if check and missing:
        print(f"{missing} citation(s) without their level: run tools/rule_levels.py to write them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
