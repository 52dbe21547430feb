"""Bookkeeping for the MRTR checklist (digest §5, §6) and for the mutation run.

What this module can and cannot show. It checks that every MRTR rule is *named* by a test -
in the test's name (``test_mrtr_s4a_...``) or its docstring, never in a comment, which says
nothing about what runs - and that no test names a rule that does not exist. Whether those
tests would notice a broken rule is a different question, answered by the mutation run
(``tools/mutate.py``, a CI stage): it breaks the protocol core on purpose, mutant by mutant,
and fails when a broken version passes the suite without a reason recorded in
``tools/mutation-survivors.toml``. The last test here keeps that file honest between runs.

The IDs are copied from the digest's checklist (the ``- [ ]`` lines of §5 and §6): tests must
not read ../shared, which a user's clone does not have. MRTR-R3 and MRTR-C7 are KIT
conventions there, not spec rules.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

MRTR_RULES = """
MRTR-R1 MRTR-R2 MRTR-R3
MRTR-S1 MRTR-S2 MRTR-S2a MRTR-S2b MRTR-S3 MRTR-S4 MRTR-S4a MRTR-S4b
MRTR-S5 MRTR-S5a MRTR-S5b MRTR-S5c MRTR-S5d MRTR-S6 MRTR-S7 MRTR-S8
MRTR-C1 MRTR-C2 MRTR-C3 MRTR-C4 MRTR-C5 MRTR-C6 MRTR-C7 MRTR-C8 MRTR-C9
MRTR-E1 MRTR-E2 MRTR-E3 MRTR-E4
""".split()  # noqa: SIM905 (a block reads like the digest)

TESTS = Path(__file__).parent
SURVIVORS = TESTS.parent / "tools" / "mutation-survivors.toml"


def _mutation_targets() -> tuple[str, ...]:
    """The files tools/mutate.py mutates: its own TARGETS, so the list is kept in one place."""
    name = "tools_mutate"
    spec = importlib.util.spec_from_file_location(name, TESTS.parent / "tools" / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return tuple(module.TARGETS)


# In a docstring: MRTR-S4a. In a name: mrtr_s4a, and a run of IDs after one prefix
# (test_mrtr_r1_s1_... cites MRTR-R1 and MRTR-S1).
DOC_ID = re.compile(r"\bMRTR-([RSCE]\d+[a-d]?)\b")
NAME_RUN = re.compile(r"(?:^|_)mrtr((?:_[rsce]\d+[a-d]?)+)(?=_|$)")


def ids_in_name(name: str) -> set[str]:
    found: set[str] = set()
    for run in NAME_RUN.finditer(name.lower()):
        found.update(f"MRTR-{part[0].upper()}{part[1:]}" for part in run.group(1).split("_")[1:])
    return found


def ids_in_docstring(text: str) -> set[str]:
    return {f"MRTR-{m}" for m in DOC_ID.findall(text)}


def cited_by_tests() -> dict[str, set[str]]:
    """Rule ID -> the tests (file::name) whose name or docstring cites it."""
    cited: dict[str, set[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                "test"
            ):
                ids = ids_in_name(node.name) | ids_in_docstring(ast.get_docstring(node) or "")
                for rule in ids:
                    cited.setdefault(rule, set()).add(f"{path.name}::{node.name}")
    return cited


def test_citations_are_read_from_names_and_docstrings_only():
    """The reader itself: runs of IDs in names, IDs in docstrings; a comment never counts."""
    assert ids_in_name("test_mrtr_r1_s1_three_methods") == {"MRTR-R1", "MRTR-S1"}
    assert ids_in_name("test_refuses_a_replay_mrtr_s5d") == {"MRTR-S5d"}
    assert ids_in_name("test_mrtr_c5_resource_retries") == {"MRTR-C5"}
    assert ids_in_name("test_mrtrs_s4") == set() and ids_in_name("test_mrtr_sx") == set()
    # Made-up IDs are assembled, so that no scan of the sources mistakes them for citations.
    made_up, not_an_id = "MRTR-" + "C10", "MRTR-" + "X1"
    assert ids_in_docstring(f"MRTR-S5a and {made_up}; not {not_an_id}") == {"MRTR-S5a", made_up}
    source = 'def test_a():\n    # MRTR-S8\n    """Nothing cited here."""\n'
    func = ast.parse(source).body[0]
    assert isinstance(func, ast.FunctionDef)
    assert ids_in_docstring(ast.get_docstring(func) or "") | ids_in_name(func.name) == set()


def test_every_mrtr_rule_is_named_by_a_test():
    cited = cited_by_tests()
    # MRTR-S5 is the umbrella of S5a-d: named when all four are.
    if all(f"MRTR-S5{x}" in cited for x in "abcd"):
        cited.setdefault("MRTR-S5", set())
    missing = [rule for rule in MRTR_RULES if rule not in cited]
    assert not missing, f"rules no test names in its name or docstring: {missing}"


def test_no_test_names_an_mrtr_rule_that_does_not_exist():
    unknown = {rule: sorted(tests) for rule, tests in cited_by_tests().items()}
    unknown = {rule: tests for rule, tests in unknown.items() if rule not in MRTR_RULES}
    assert not unknown, f"tests cite MRTR IDs the digest does not have: {unknown}"


def test_every_kept_mutation_survivor_has_a_reason():
    """The mutation run's exceptions (tools/mutation-survivors.toml): each names one mutant of
    one of the core files (TARGETS of tools/mutate.py) and gives a reason - not empty, not TODO."""
    entries = tomllib.loads(SURVIVORS.read_text()).get("survivor", [])
    files = _mutation_targets()
    ids = [entry["id"] for entry in entries]
    assert len(ids) == len(set(ids)), "a survivor is listed twice"
    for entry in entries:
        file, function, operator, change = entry["id"].split(" | ", 3)
        assert file in files and function and operator and change, entry
        reason = entry.get("reason", "").strip()
        assert reason and not reason.upper().startswith("TODO"), entry
