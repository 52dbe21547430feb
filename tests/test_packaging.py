"""The two distributions: the library's wheel holds the library alone, the course's the course
alone, and each carries the licence it declares (``license = "MIT"``, PEP 639).

Slow: it builds the wheels and the sdist in subprocesses, from a copy of every tracked file in a
temporary folder (the checkout gets no ``build/`` or ``*.egg-info``), so the lessons, the course
and the tests are all there for the build to leave out.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from pathlib import Path, PurePosixPath

import pytest

from mrtr_kit import __version__

ROOT = Path(__file__).resolve().parents[1]
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]


def copy_of_the_repository(to: Path) -> Path:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for name in tracked:
        if (ROOT / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, to / name)
    return to


def wheel_of(project: Path, out: Path) -> Path:
    subprocess.run([*PIP, "wheel", "--no-deps", "-w", str(out), str(project)], check=True)
    (wheel,) = out.glob("*.whl")
    return wheel


@pytest.mark.slow
def test_the_library_wheel_holds_the_library_alone(tmp_path, capsys):
    src = copy_of_the_repository(tmp_path / "src")
    wheel = wheel_of(src, tmp_path / "dist")
    # The one version (pyproject.toml reads mrtr_kit.__version__): the wheel's is the code's.
    assert wheel.name == f"mrtr_kit-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        entry_points = "\n".join(n for n in names if n.endswith("entry_points.txt"))
    info = f"mrtr_kit-{__version__}.dist-info"
    code = [PurePosixPath(n) for n in names if not n.startswith(f"{info}/")]
    assert {p.parts[0] for p in code} == {"mrtr_kit"}
    assert not [p for p in code if "course" in p.parts or p.name.startswith("lesson")]
    assert "mrtr_kit/server/nginx.conf" in names  # what server/nginx.py fills in
    assert "mrtr_kit/py.typed" in names
    assert entry_points  # the mrtr-kit command
    modules = [p for p in code if p.suffix == ".py"]
    per_folder = Counter(str(p.parent) for p in modules)
    with capsys.disabled():  # the figure: the wheel's modules, by folder
        print(f"\nthe mrtr-kit wheel: {len(modules)} modules")
        for folder, n in sorted(per_folder.items()):
            print(f"  {folder:28} {n}")


@pytest.mark.slow
def test_the_course_wheel_holds_the_course_and_registers_its_examples(tmp_path):
    src = copy_of_the_repository(tmp_path / "src")
    with zipfile.ZipFile(wheel_of(src / "course", tmp_path / "dist")) as whl:
        names = whl.namelist()
        info = "mrtr_course-0.1.0.dist-info"
        metadata = whl.read(f"{info}/METADATA").decode()
        entry_points = whl.read(f"{info}/entry_points.txt").decode()
    code = {PurePosixPath(n).parts[0] for n in names if not n.startswith(info)}
    assert code == {"mrtr_course"}  # no lesson folder, no library
    assert "Requires-Dist: mrtr-kit" in metadata and "License-Expression: MIT" in metadata
    assert "[mrtr_kit.examples]" in entry_points and "weather = " in entry_points


@pytest.mark.slow
def test_the_library_wheel_and_sdist_both_carry_the_mit_license(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "mrtr_kit", src / "mrtr_kit", ignore=shutil.ignore_patterns("__pycache__")
    )
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License") and "mrtr-kit contributors" in license_text
    out = tmp_path / "dist"
    # The wheel: pip builds it with the backend pyproject.toml asks for (setuptools >= 77).
    wheel = wheel_of(src, out)
    # The sdist: the same backend, installed beside the build, through its PEP 517 hook.
    backend = tmp_path / "backend"
    subprocess.run([*PIP, "install", "--target", str(backend), "setuptools>=77"], check=True)
    build_sdist = f"import setuptools.build_meta as b; print(b.build_sdist({str(out)!r}))"
    subprocess.run(
        [sys.executable, "-c", build_sdist],
        cwd=src,
        env={"PYTHONPATH": str(backend), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
    )
    (sdist,) = out.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        assert f"mrtr_kit-{__version__}.dist-info/licenses/LICENSE" in names
        assert (
            whl.read(f"mrtr_kit-{__version__}.dist-info/licenses/LICENSE").decode() == license_text
        )
        metadata = whl.read(f"mrtr_kit-{__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {__version__}\n" in metadata
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    with tarfile.open(sdist) as tar:
        member = tar.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/LICENSE")
        assert member is not None and member.read().decode() == license_text
