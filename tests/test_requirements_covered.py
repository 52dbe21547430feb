"""Every MRTR server, client, error-handling and method rule of the digest has a test citing it.

The IDs are copied from the 2026-07-28 digest (§5, §6): a rule without a test shows up here.
"""

from __future__ import annotations

import re
from pathlib import Path

MRTR_RULES = """
MRTR-R1 MRTR-R2 MRTR-R3
MRTR-S1 MRTR-S2 MRTR-S2a MRTR-S2b MRTR-S3 MRTR-S4 MRTR-S4a MRTR-S4b
MRTR-S5 MRTR-S5a MRTR-S5b MRTR-S5c MRTR-S5d MRTR-S6 MRTR-S7 MRTR-S8
MRTR-C1 MRTR-C2 MRTR-C3 MRTR-C4 MRTR-C5 MRTR-C6 MRTR-C7 MRTR-C8 MRTR-C9
MRTR-E1 MRTR-E2 MRTR-E3 MRTR-E4
""".split()  # noqa: SIM905 (a block reads like the digest)

TESTS = Path(__file__).parent


def _cited_ids() -> set[str]:
    cited: set[str] = set()
    for path in TESTS.glob("test_*.py"):
        if path.name == Path(__file__).name:
            continue
        cited.update(re.findall(r"MRTR-[SCER]\d+[a-d]?\b", path.read_text()))
    return cited


def test_every_mrtr_rule_has_a_test_that_cites_it():
    cited = _cited_ids()
    # MRTR-S5 is the umbrella of S5a-d: covered when all four are.
    if all(f"MRTR-S5{x}" in cited for x in "abcd"):
        cited.add("MRTR-S5")
    missing = [rule for rule in MRTR_RULES if rule not in cited]
    assert not missing, f"rules with no test citing them: {missing}"
