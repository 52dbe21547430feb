"""Two rooms (docs/architecture.md §7): the library never imports the course, and no import runs
back up.

The contracts are pyproject.toml's ``[tool.importlinter]``; import-linter checks them from the
import graph of every module, function-level imports included, so a lazy import inside a
function counts as much as one at the top of a file. ``lint-imports`` in the project folder
prints the same report.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "lint-imports"
    command = [str(exe)] if exe.exists() else [shutil.which("lint-imports") or "lint-imports"]
    return subprocess.run(
        [*command, "--no-cache"],
        cwd=project,
        env={"PYTHONPATH": str(project), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_contracts_name_both_rooms_and_forbid_the_way_back():
    by_id = {c["id"]: c for c in CONTRACTS["contracts"]}
    apart = by_id["library-apart"]
    assert apart["source_modules"] == ["mrtr_kit"]  # all of it, its command line included
    assert "mrtr_course" in apart["forbidden_modules"]
    tests = by_id["tests-library-apart"]  # the library's tests, helpers included, stand alone
    assert tests["source_modules"] == ["tests.library"]
    assert {"mrtr_course", "tests.course"} <= set(tests["forbidden_modules"])
    assert "ipywidgets" in apart["forbidden_modules"]
    assert by_id["no-loops"]["type"] == "acyclic_siblings"
    assert by_id["course-layers"]["layers"][0] == "__main__ | widgets"


@pytest.mark.slow  # import-linter builds the import graph in its own process
def test_every_contract_is_kept():
    out = _lint_imports(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"Contracts: {len(CONTRACTS['contracts'])} kept, 0 broken." in out.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("importer", "line", "broken"),
    [
        # a library module reaching into the course
        ("mrtr_kit/server/hosts.py", "from mrtr_course import fleet", "never imports"),
        # the library's command line reaching into the course (examples come by entry point)
        ("mrtr_kit/__main__.py", "import mrtr_course.examples", "never imports"),
        # a plain course module reaching up into the widgets (the old lessons -> jupyter arrow)
        ("mrtr_course/examples/weather.py", "from mrtr_course.widgets import quiz", "widgets"),
        # a library test reaching into the course, directly or through a shared test helper
        ("tests/library/test_http.py", "import mrtr_course.fleet", "never the course"),
        ("tests/helpers.py", "from tests.course import test_fleet", "never the course"),
        # a ledger backend's package importing back what imports it
        ("mrtr_kit/server/ledger/base.py", "from mrtr_kit.server.ledger import sqlite", "cycles"),
    ],
)
def test_a_forbidden_import_breaks_a_contract(tmp_path, importer, line, broken):
    """The contracts can fail: one added import in a copy of the package is reported."""
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "mrtr_kit", tmp_path / "mrtr_kit", ignore=ignore)
    shutil.copytree(ROOT / "course" / "mrtr_course", tmp_path / "mrtr_course", ignore=ignore)
    shutil.copytree(ROOT / "tests", tmp_path / "tests", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / importer
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    out = _lint_imports(tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert broken in out.stdout
