#!/usr/bin/env python3
"""The kit's entry points, needing nothing but Python >= 3.11:

    python3 tools/kit.py lab           # JupyterLab on notebooks/
    python3 tools/kit.py test          # the whole suite: unit tests + every notebook under nbval
    python3 tools/kit.py test --fast   # the everyday lane (below)

``test --fast`` runs ``tests/`` without the tests marked ``slow`` (they start real processes:
servers, fleets, redis-server, nginx, kernels, ruff and mypy) or ``browser``, and without the
notebooks. Arguments after ``test`` or ``test --fast`` go to pytest (``-x``, ``-k ledger``).

and one for maintainers, after editing a lesson:

    python3 tools/kit.py store notebooks/NN-name.ipynb   # re-run it and store its outputs

Each creates (or refreshes) the virtual environment ``.venv/`` it needs first. Standard library
only, because it runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".mrtr-kit-installed"
EXTRAS = "lab,test"


def _wanted_stamp() -> str:
    """Reinstall when pyproject.toml changes (new dependencies) or the extras change."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return f"{digest} {EXTRAS}\n"


def ensure_env() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 (this script may be run by an older python)
        sys.exit(f"mrtr-kit needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print(f"creating {VENV.relative_to(ROOT)}/ ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _wanted_stamp():
        return
    print("installing mrtr-kit and its lab and test dependencies ...", flush=True)
    pip = [str(PYTHON), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "--quiet", "-e", f".[{EXTRAS}]"], check=True, cwd=ROOT)
    STAMP.write_text(_wanted_stamp())


def isolated_jupyter_env() -> dict[str, str]:
    """Kernels, Jupyter and IPython write under .jupyter-test/, not the user's home."""
    root = ROOT / ".jupyter-test"
    home = root / "home"
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        TMPDIR=str(root / "tmp"),
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        JUPYTER_DATA_DIR=str(home / ".local/share/jupyter"),
        JUPYTER_RUNTIME_DIR=str(home / ".local/share/jupyter/runtime"),
        IPYTHONDIR=str(home / ".ipython"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    for d in (home, root / "tmp"):
        d.mkdir(parents=True, exist_ok=True)
    return env


# The markers are defined in pyproject.toml; tests/conftest.py keeps `slow` true.
FAST_LANE = ["tests", "-m", "not slow and not browser"]
FULL_RUN = [
    "tests",
    "notebooks",
    "--nbval",
    "--nbval-sanitize-with",
    "tests/nbval_sanitize.cfg",
    "--nbval-cell-timeout=120",
]


def run_tests(extra: list[str]) -> int:
    fast = "--fast" in extra
    extra = [a for a in extra if a != "--fast"]
    command = [str(PYTHON), "-m", "pytest", *(FAST_LANE if fast else FULL_RUN), *extra]
    print("+", " ".join(command), flush=True)
    code = subprocess.run(command, cwd=ROOT, env=isolated_jupyter_env()).returncode
    if code == 5:  # pytest's "no tests collected" must never pass for a green run
        print("pytest collected no tests: treating that as a failure", file=sys.stderr)
        return 1
    return code


def run_lab(extra: list[str]) -> int:
    command = [str(BIN / "jupyter"), "lab", "--notebook-dir", str(ROOT / "notebooks"), *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in extra:
        command.append("--allow-root")  # containers often run as root; Jupyter refuses otherwise
    print("+", " ".join(command), flush=True)
    try:
        return subprocess.run(command, cwd=ROOT).returncode
    except KeyboardInterrupt:
        return 0


def store_outputs(paths: list[str]) -> int:
    command = [str(PYTHON), str(ROOT / "tools" / "store_outputs.py"), *paths]
    return subprocess.run(command, cwd=ROOT, env=isolated_jupyter_env()).returncode


COMMANDS = {"lab": run_lab, "test": run_tests, "store": store_outputs}


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] not in COMMANDS:
        print(__doc__)
        return 2
    ensure_env()
    return COMMANDS[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
