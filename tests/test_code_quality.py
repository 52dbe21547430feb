"""The kit promises code worth copying: ruff-clean and ruff-formatted everywhere, and type-checked
(mypy, strict) where the protocol lives: ``protocol/``, ``server/``, ``client/`` (the files and
options are in pyproject.toml's ``[tool.mypy]``, so a plain ``mypy`` checks the same)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> list[str]:
    """The program from this environment's test extra (next to its python), else on PATH."""
    exe = Path(sys.executable).parent / name
    if exe.exists():
        return [str(exe)]
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; it is part of the test extra")
    return [found]


def _ruff() -> list[str]:
    return _tool("ruff")


@pytest.mark.slow  # runs a checker in its own process
def test_ruff_check_is_clean():
    proc = subprocess.run([*_ruff(), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow  # runs a checker in its own process
def test_ruff_format_is_clean():
    proc = subprocess.run(
        [*_ruff(), "format", "--check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow  # runs a checker in its own process
def test_mypy_strict_is_clean(tmp_path):
    """pyproject.toml's [tool.mypy]: strict on protocol/, server/ and client/.

    The cache goes to a temporary folder, so the run checks the tree as it is now and leaves no
    ``.mypy_cache/`` behind in the checkout."""
    proc = subprocess.run(
        [*_tool("mypy"), "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_package_ships_py_typed():
    """PEP 561: without ``py.typed`` a user's type checker ignores the kit's hints."""
    assert (ROOT / "mrtr_kit" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["mrtr_kit"]
