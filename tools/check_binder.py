#!/usr/bin/env python3
"""Check what a Binder launch would install, without Docker.

repo2docker, which builds Binder images, reads only ``binder/`` when that folder exists:
``runtime.txt`` picks the Python, ``requirements.txt`` is installed with pip, then
``postBuild`` runs from the repository root. This script does the same in a fresh virtual
environment in a temporary folder, from a copy of the repository, and then checks that

1. the kit and its Jupyter layer import there;
2. the JupyterLab widgets extension is installed and enabled, so the forms would render;
3. a kernel running in that environment imports everything every lesson imports (read from
   the notebooks' code cells), and completes lesson 01's form flow: the weather tool over
   loopback HTTP, its form displayed, filled in and accepted, the call complete.

What this stage checks is the *environment*: the lessons themselves run under nbval, strict,
in the README's test command (``python3 tools/kit.py test``), which CI runs just before; a
second full run of notebook 01 here would test the same cells again with the same versions
(``binder/requirements.txt`` and the ``lab`` extra resolve the same ranges). A lesson that
imports something Binder does not install, or a form flow that breaks in Binder's kernel,
fails here.

nbval itself runs from the environment running this script (the kit's ``.venv``); only the
kernel, which is what a Binder user gets, comes from the Binder environment.

Usage, from the project root:  .venv/bin/python tools/check_binder.py
Standard library only (it writes the smoke notebook as plain JSON).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
NOTEBOOKS = ROOT / "notebooks"
KERNEL_NAME = "mrtr-binder-check"
# What a clone would not contain, or what this copy must not reuse.
NOT_COPIED = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".jupyter-test",
    ".conformance",
    ".hypothesis",
    ".ruff_cache",
    ".mypy_cache",
    "__pycache__",
    "*.egg-info",
    "build",
    "screenshots",
    ".ipynb_checkpoints",
)


def step(title: str) -> float:
    print(f"== {title}", flush=True)
    return time.monotonic()


def run(command: list[str], *, cwd: Path, env: dict[str, str]) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=cwd, env=env, check=True)


# Lesson 01's form flow (its Paris cells), over real loopback HTTP as its URL-mode section runs.
FLOW_CELL = """\
from IPython.display import display

from mrtr_kit.examples import lessons
from mrtr_kit.jupyter.flow import start_tool_call, widget_client
from mrtr_kit.lessons.basics import LoopbackServer
from mrtr_kit.server.http import create_app

site = LoopbackServer.start(lambda base_url: create_app(lessons.build_server()))
try:
    client = widget_client(f"{site.url}/mcp")
    paris = await start_tool_call(client, "get_weather", {"city": "Paris"})
    display(paris)
    paris.form.fill(login="ada", units="fahrenheit").accept()
    status = await paris.settled()
    assert status == "complete", (status, paris.text)
    assert "Hello ada!" in paris.text, paris.text
    print(paris.text)
finally:
    site.stop()
"""


def lesson_imports(notebook: Path) -> list[str]:
    """The top-level import statements of a notebook's code cells (magics left out)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found: list[str] = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).splitlines()
        code = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
        for node in ast.parse(code).body:
            if isinstance(node, ast.Import | ast.ImportFrom) and ast.unparse(node) not in found:
                found.append(ast.unparse(node))
    return found


def smoke_notebook() -> dict[str, object]:
    """One cell of imports per lesson, then the form flow; run with ``--nbval-lax``."""

    def cell(n: int, source: str) -> dict[str, object]:
        return {"id": f"smoke-{n}", "cell_type": "code", "metadata": {}, "source": source,
                "outputs": [], "execution_count": None}  # fmt: skip

    lessons = sorted(NOTEBOOKS.glob("*.ipynb"))
    sources = [f"# {nb.name}\n" + "\n".join(lesson_imports(nb)) for nb in lessons]
    cells = [cell(n, source) for n, source in enumerate([*sources, FLOW_CELL])]
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": KERNEL_NAME, "display_name": "Binder check"}},
        "cells": cells,
    }


def binder_python_version() -> str | None:
    runtime = BINDER / "runtime.txt"
    if not runtime.exists():
        return None
    return runtime.read_text().strip().removeprefix("python-")


def main() -> int:
    if importlib.util.find_spec("nbval") is None:
        print("nbval is not installed here; run this with the kit's .venv/bin/python")
        return 2
    wanted = binder_python_version()
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if wanted and wanted != here:
        print(f"note: binder/runtime.txt asks for Python {wanted}; this check uses {here}")

    with tempfile.TemporaryDirectory(prefix="binder-check-") as tmp:
        work = Path(tmp)
        repo, env_dir = work / "repo", work / "env"
        bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
        python = bindir / ("python.exe" if os.name == "nt" else "python")

        started = step("copy the repository (as repo2docker copies the checkout)")
        shutil.copytree(ROOT, repo, ignore=NOT_COPIED)
        # The Binder environment: a fresh venv on PATH, so postBuild's `python` is this one.
        venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
        build_env = dict(os.environ, VIRTUAL_ENV=str(env_dir))
        build_env["PATH"] = f"{bindir}{os.pathsep}{build_env.get('PATH', '')}"
        build_env.pop("PYTHONPATH", None)

        step("binder/requirements.txt")
        pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
        run([*pip, "install", "--quiet", "-r", "binder/requirements.txt"], cwd=repo, env=build_env)

        step("binder/postBuild")
        run(["bash", "binder/postBuild"], cwd=repo, env=build_env)

        step("the kit imports in the Binder environment")
        probe = (
            "import ipywidgets, jupyterlab, mrtr_kit, mrtr_kit.jupyter.flow;"
            "print('mrtr_kit', mrtr_kit.__version__, '| ipywidgets', ipywidgets.__version__,"
            " '| jupyterlab', jupyterlab.__version__, '| from', mrtr_kit.__file__)"
        )
        run([str(python), "-c", probe], cwd=work, env=build_env)

        step("the widgets extension is installed and enabled")
        listing = subprocess.run(
            [str(bindir / "jupyter"), "labextension", "list"],
            cwd=work,
            env=build_env,
            capture_output=True,
            text=True,
            check=True,
        )
        lines = (listing.stdout + listing.stderr).splitlines()
        manager = [line for line in lines if "@jupyter-widgets/jupyterlab-manager" in line]
        print("\n".join(manager) or "(not listed)")
        if not any("enabled" in line and "OK" in line for line in manager):
            print("the ipywidgets JupyterLab extension is missing or disabled: no forms on Binder")
            return 1

        step("every lesson's imports and lesson 01's form flow, in a Binder kernel")
        smoke = work / "binder-smoke.ipynb"
        smoke.write_text(json.dumps(smoke_notebook(), indent=1), encoding="utf-8")
        kernels = work / "kernels"
        run(
            [str(python), "-m", "ipykernel", "install", "--prefix", str(kernels),
             "--name", KERNEL_NAME, "--display-name", "Binder check"],
            cwd=work,
            env=build_env,
        )  # fmt: skip
        home = work / "home"
        home.mkdir()
        test_env = dict(
            os.environ,
            HOME=str(home),
            JUPYTER_PATH=str(kernels / "share" / "jupyter"),
            JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
            JUPYTER_DATA_DIR=str(home / ".local" / "share" / "jupyter"),
            JUPYTER_RUNTIME_DIR=str(home / ".local" / "share" / "jupyter" / "runtime"),
            IPYTHONDIR=str(home / ".ipython"),
            PYTHONDONTWRITEBYTECODE="1",
        )
        test_env.pop("PYTHONPATH", None)
        nbval = [
            sys.executable,
            "-m",
            "pytest",
            str(smoke),
            "--nbval-lax",  # no stored outputs to compare: a cell passes if it raises nothing
            f"--nbval-kernel-name={KERNEL_NAME}",
            "--nbval-cell-timeout=120",
            "-p",
            "no:cacheprovider",
            "-q",
        ]
        run(nbval, cwd=repo, env=test_env)
        print(f"binder check passed in {time.monotonic() - started:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as exc:
        print(f"binder check failed: {' '.join(map(str, exc.cmd))} exited {exc.returncode}")
        sys.exit(1)
