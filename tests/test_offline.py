"""The offline set-up (KIT: the kit's own tooling, no spec rule): ``kit.py wheelhouse`` fills a
folder with every wheel the lessons need, and ``kit.py install --offline`` builds a working
``.venv`` from that folder alone.

Slow, and the one test that needs the package index: it builds a wheelhouse for this machine's
platform and Python only (the three-platform one takes many minutes), installs it into a fresh
venv under tmp with pip's index switched off, pip's configuration ignored and every proxy
pointing at a closed port (a download attempt would fail), then imports what the lessons import
in that venv. It prints the wheelhouse's size and the install time. Without network it skips,
except under CI, where a skip would hide a broken wheelhouse command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "tools" / "kit.py"
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, a connection is refused
REPOSITORY_COPIES = ("mrtr-kit.bundle", "mrtr-kit.zip")

# What the lessons import: the library, the whole course package (the notebooks' shared code),
# and every lesson's own modules, each from its folder as its kernel would (argv[1]: notebooks/).
IMPORTS = """
import importlib, json, pkgutil, sys
from pathlib import Path
import ipywidgets, jupyterlab, mrtr_kit, mrtr_course
course = [m.name for m in pkgutil.walk_packages(mrtr_course.__path__, "mrtr_course.")]
for name in course:
    if not name.endswith("__main__"):
        importlib.import_module(name)
lessons = []
for module in sorted(Path(sys.argv[1]).glob("*/lesson*.py")):
    sys.path.insert(0, str(module.parent))
    importlib.import_module(module.stem)
    lessons.append(module.stem)
print(json.dumps({"kit": mrtr_kit.__file__, "course": mrtr_course.__file__, "course_modules":
    len(course), "lessons": lessons, "lab": jupyterlab.__version__}))
"""


def index_reachable(tmp: Path) -> bool:
    """Can pip fetch from its index? (pip's own configuration names it; no host named here.)"""
    probe = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    probe += ["--retries", "0", "--timeout", "10", "-q", "-d", str(tmp), "pip"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=60).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def offline_env(venv: Path) -> dict[str, str]:
    """No pip configuration, no index, every proxy closed: only the wheelhouse can serve."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PIP_")}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        HTTP_PROXY=CLOSED,
        HTTPS_PROXY=CLOSED,
        http_proxy=CLOSED,
        https_proxy=CLOSED,
        MRTR_KIT_VENV=str(venv),
    )
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    return env


@pytest.mark.slow
def test_a_wheelhouse_installs_the_lessons_without_network(tmp_path, capsys):
    if not index_reachable(tmp_path / "probe"):
        message = "no network to the package index: the wheelhouse cannot be built here"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must reach it")
        pytest.skip(message)
    house = tmp_path / "wheelhouse"
    build = [sys.executable, str(KIT), "wheelhouse", str(house), "--platform", "this"]
    built = subprocess.run(build, cwd=ROOT, capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    files = sorted(p.name for p in house.iterdir())
    assert "README.txt" in files and "--offline" in (house / "README.txt").read_text()
    wheels = [name for name in files if name.endswith(".whl")]
    assert any(name.startswith("mrtr_kit-") for name in wheels)
    assert any(name.startswith("mrtr_course-") for name in wheels)  # the course, beside it
    assert any(name.startswith("setuptools-") for name in wheels)  # `pip install -e .` builds
    # wheels, and the repository for the stick: a bundle to clone and a zip for no git
    assert set(files) - set(wheels) == {"README.txt", "wheelhouse.json", *REPOSITORY_COPIES}
    record = json.loads((house / "wheelhouse.json").read_text())
    size = sum((house / name).stat().st_size for name in wheels)

    venv = tmp_path / "venv"
    started = time.monotonic()
    install = [sys.executable, str(KIT), "install", "--offline", str(house)]
    done = subprocess.run(install, cwd=ROOT, env=offline_env(venv), capture_output=True, text=True)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "--no-index" in done.stdout

    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    check = subprocess.run(
        [str(python), "-c", IMPORTS, str(ROOT / "notebooks")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0, check.stderr[-3000:]
    seen = json.loads(check.stdout.splitlines()[-1])
    assert Path(seen["kit"]).resolve().is_relative_to(ROOT)  # editable: the clone's own code
    assert Path(seen["course"]).resolve().is_relative_to(ROOT / "course")
    assert "lesson02_attacks" in seen["lessons"], seen["lessons"]
    with capsys.disabled():
        print(
            f"\n[offline] wheelhouse for this platform: {len(wheels)} wheels, {size / 1e6:.0f} MB "
            f"(built from sdists: {', '.join(record['built_from_sdist']) or 'none'}); "
            f"--no-index install {took:.0f} s; {seen['course_modules']} course modules and "
            f"{len(seen['lessons'])} lesson modules, "
            f"JupyterLab {seen['lab']} import",
            flush=True,
        )
