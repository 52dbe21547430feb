"""The distributions carry the licence they declare (``license = "MIT"``, PEP 639).

Slow: it builds the wheel and the sdist in subprocesses, from a copy of the sources in a
temporary folder (the checkout gets no ``build/`` or ``*.egg-info``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_wheel_and_the_sdist_both_carry_the_mit_license(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "mrtr_kit", src / "mrtr_kit", ignore=shutil.ignore_patterns("__pycache__")
    )
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License") and "mrtr-kit contributors" in license_text
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    out = tmp_path / "dist"
    # The wheel: pip builds it with the backend pyproject.toml asks for (setuptools >= 77).
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(out), str(src)], check=True)
    # The sdist: the same backend, installed beside the build, through its PEP 517 hook.
    backend = tmp_path / "backend"
    subprocess.run([*pip, "install", "--target", str(backend), "setuptools>=77"], check=True)
    build_sdist = f"import setuptools.build_meta as b; print(b.build_sdist({str(out)!r}))"
    subprocess.run(
        [sys.executable, "-c", build_sdist],
        cwd=src,
        env={"PYTHONPATH": str(backend), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        assert "mrtr_kit-0.1.0.dist-info/licenses/LICENSE" in names
        assert "course/mrtr_course/nginx.conf" in names  # what fleet.Nginx runs (package data)
        assert whl.read("mrtr_kit-0.1.0.dist-info/licenses/LICENSE").decode() == license_text
        metadata = whl.read("mrtr_kit-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/LICENSE")
        assert member is not None and member.read().decode() == license_text
