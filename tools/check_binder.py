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
   loopback HTTP, its form displayed, filled in and accepted, the call complete;
4. every package is installed at the version ``binder/requirements.txt`` pins (the versions the
   kit's tests ran with, ``tools/binder_pins.py``), and that file is in step with ``.venv``;
5. lesson 01b's sign-in link: ``jupyter-server-proxy`` is installed and enabled as a server
   extension, and, with a Jupyter server of the Binder environment running under a hub-style
   base URL (``/user/binder-check/``), the link ``UrlLoginExample.behind_jupyter`` makes opens
   the sign-in page through Jupyter's proxy when the hub publishes its address
   (``JUPYTERHUB_PUBLIC_URL``); when the hub sets only ``JUPYTERHUB_SERVICE_PREFIX``, the
   link stays on loopback and the warning names ``MRTR_KIT_JUPYTER_URL``. Whether a given hub
   (mybinder.org on the day) publishes its address is outside what this can check: the lesson
   prints the warning there, and the checklist says to try the link the day before.

What this stage checks is the *environment*: the lessons themselves run under nbval, strict,
in the README's test command (``python3 tools/kit.py test``), which CI runs just before; a
second full run of notebook 01 here would test the same cells again with the same versions
(``binder/requirements.txt`` and the course's dependencies, ``course/pyproject.toml``, resolve
the same ranges). A lesson that
imports something Binder does not install, or a form flow that breaks in Binder's kernel,
fails here.

nbval itself runs from the environment running this script (the kit's ``.venv``); only the
kernel, which is what a Binder user gets, comes from the Binder environment.

``--notebooks`` runs every lesson instead of the smoke notebook (nbval strict, as the README's
test command, each in its own Binder kernel) and measures its memory: every quarter second it
adds up the resident memory (RSS, and PSS: shared pages split between the processes sharing
them) of the kernel and of every process the kernel starts (lesson 03's server fleets), and
prints each lesson's peak. It also measures an idle JupyterLab server of the Binder
environment, and estimates a whole session (JupyterLab plus every lesson's kernel at its peak,
as when a learner leaves each kernel running). It fails when a lesson peaks above 1 GB or the
session above 2 GB (mybinder.org gives a session 2 GB). Memory is read from /proc (Linux).

Usage, from the project root:  .venv/bin/python tools/check_binder.py [--notebooks [NN ...]]
Standard library only (it writes the smoke notebook as plain JSON).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import venv
from dataclasses import dataclass, field
from pathlib import Path

from mrtr_kit.server.loopback import stop_process

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
    ".inspector",
    ".sdk1",
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

from mrtr_course.examples import lessons
from mrtr_course.widgets.flow import start_tool_call, widget_client
from mrtr_kit.server.loopback import LoopbackServer
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

    lessons = sorted(NOTEBOOKS.glob("[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb"))
    # Each lesson's kernel runs in the lesson's folder, where its own modules (lessonNN_*.py)
    # are found: so does this cell, for the imports of that lesson.
    sources = [
        f"# {nb.name}\nimport os\nos.chdir({str(nb.parent)!r})\nimport sys\n"
        f"sys.path.insert(0, {str(nb.parent)!r})\n" + "\n".join(lesson_imports(nb))
        for nb in lessons
    ]
    cells = [cell(n, source) for n, source in enumerate([*sources, FLOW_CELL])]
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": KERNEL_NAME, "display_name": "Binder check"}},
        "cells": cells,
    }


# Lesson 01b's sign-in page behind Jupyter's proxy, run by the Binder environment's Python with
# (the Jupyter server's URL, its token): what UrlLoginExample.behind_jupyter does on a hub.
HUB_PREFIX = "/user/binder-check/"
SIGNIN_PROBE = """\
import sys, urllib.request, warnings
from mrtr_course.examples.url_login import UrlLoginExample, signin_url
from mrtr_kit.server.loopback import LoopbackServer

jupyter, token, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
made = {}


def serve(env):
    def build(base_url):
        made["example"] = UrlLoginExample.behind_jupyter(base_url, env=env)
        return made["example"].app()

    return LoopbackServer.start(build)


# A hub that publishes its address: the link goes through Jupyter's proxy, and opens.
site = serve({"JUPYTERHUB_SERVICE_PREFIX": prefix, "JUPYTERHUB_PUBLIC_URL": jupyter})
try:
    example = made["example"]
    link = signin_url(example.public_url, example.pages.start("ada"))
    assert link.startswith(jupyter + "proxy/"), f"not through the proxy: {link}"
    asked = urllib.request.Request(link, headers={"Authorization": "token " + token})
    with urllib.request.urlopen(asked, timeout=60) as page:
        body = page.read().decode()
    assert "Sign in to Pretend Calendar" in body, body[:500]
    print("JUPYTERHUB_PUBLIC_URL set: the sign-in link", link, "opens through the proxy")
finally:
    site.stop()
# A hub that sets only its service prefix: loopback, and the warning says what to set.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    site = serve({"JUPYTERHUB_SERVICE_PREFIX": prefix})
site.stop()
assert not made["example"].address.proxied, made["example"].address
said = " ".join(str(w.message) for w in caught)
assert "MRTR_KIT_JUPYTER_URL" in said, said
print("only JUPYTERHUB_SERVICE_PREFIX set: the link stays on loopback; the lesson warns:", said)
"""


def check_signin_link(bindir: Path, env: dict[str, str], cwd: Path) -> bool:
    """Check 5: jupyter-server-proxy enabled, and 01b's sign-in link through it (see above)."""
    listing = subprocess.run(
        [str(bindir / "jupyter"), "server", "extension", "list"],
        cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    lines = (listing.stdout + listing.stderr).splitlines()
    proxy = [line.strip() for line in lines if "jupyter_server_proxy" in line]
    print("\n".join(proxy) or "(not listed)")
    if not any("enabled" in line for line in proxy):
        print("jupyter-server-proxy is not an enabled server extension: 01b's link cannot open")
        return False
    port, token = free_port(), secrets.token_hex(16)
    command = [
        str(bindir / "jupyter"), "server", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--ServerApp.base_url={HUB_PREFIX}", f"--IdentityProvider.token={token}",
        "--ServerApp.port_retries=0", "--allow-root",
    ]  # fmt: skip
    print("+", " ".join(command).replace(token, "<token>"), flush=True)
    proc = subprocess.Popen(command, cwd=cwd, env=env, stderr=subprocess.DEVNULL)
    jupyter = f"http://127.0.0.1:{port}{HUB_PREFIX}"
    try:
        if not _serves(proc, f"{jupyter}api/status?token={token}", within_s=120):
            print("the Binder environment's Jupyter server did not start")
            return False
        probe = [str(bindir / "python"), "-c", SIGNIN_PROBE, jupyter, token, HUB_PREFIX]
        done = subprocess.run(probe, cwd=cwd, env=env, capture_output=True, text=True)
        print((done.stdout + done.stderr).replace(token, "<token>").strip())
        return done.returncode == 0
    finally:
        stop_process(proc, timeout=15)


def pinned(requirements: Path) -> dict[str, str]:
    """``binder/requirements.txt``'s pins: normalised name -> version."""
    found = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            found[name.strip().lower().replace("_", "-").replace(".", "-")] = version.strip()
    return found


def check_pins(python: Path, env: dict[str, str], cwd: Path) -> bool:
    """Check 4: every pinned package installed at its pinned version, the file in step."""
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        cwd=cwd, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    have = {
        p["name"].lower().replace("_", "-").replace(".", "-"): p["version"]
        for p in json.loads(listed.stdout)
    }
    want = pinned(BINDER / "requirements.txt")
    wrong = {name: (version, have.get(name)) for name, version in want.items()}
    wrong = {name: pair for name, pair in wrong.items() if pair[0] != pair[1]}
    for name, (version, got) in sorted(wrong.items()):
        print(f"{name}: pinned {version}, installed {got}")
    step_ok = not wrong
    tool = subprocess.run([sys.executable, str(ROOT / "tools" / "binder_pins.py"), "--check"])
    print(f"{len(want)} pins, {len(want) - len(wrong)} installed as pinned", flush=True)
    return step_ok and tool.returncode == 0


# -- memory of a process tree (Linux /proc) ------------------------------------------------------

MB = 1024 * 1024
LESSON_BUDGET = 1024 * MB  # each lesson's kernel and the processes it starts
SESSION_BUDGET = 2048 * MB  # mybinder.org's memory limit for a whole session
SAMPLE_EVERY_S = 0.25


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc/PID/stat (field 4 is the parent's PID)."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # it ended while we looked
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the name in (...) may hold spaces
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in bytes; (0, 0) if it has ended."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0, 0
    values = {}
    for line in rollup.splitlines()[1:]:
        name, _, rest = line.partition(":")
        if rest.strip().endswith("kB"):
            values[name] = int(rest.split()[0]) * 1024
    return values.get("Rss", 0), values.get("Pss", 0)


@dataclass
class Peak:
    """The largest sums seen over a process tree's samples."""

    rss: int = 0
    pss: int = 0
    processes: int = 0
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def sample(self, pids: list[int]) -> None:
        sizes = [_memory(p) for p in pids]
        self.rss = max(self.rss, sum(r for r, _ in sizes))
        self.pss = max(self.pss, sum(p for _, p in sizes))
        self.processes = max(self.processes, sum(1 for r, _ in sizes if r))
        self.samples += 1


def watch(root: int, *, include_root: bool, peak: Peak) -> threading.Thread:
    """Sample ``root``'s process tree until ``peak._stop`` is set (a daemon thread)."""

    def loop() -> None:
        while not peak._stop.is_set():
            peak.sample(([root] if include_root else []) + _descendants(root))
            peak._stop.wait(SAMPLE_EVERY_S)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def measure(command: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[int, Peak]:
    """Run ``command`` (nbval), sampling the processes it starts (the kernel and its children;
    not nbval itself, which a Binder session does not run)."""
    print("+", " ".join(command), flush=True)
    peak = Peak()
    proc = subprocess.Popen(command, cwd=cwd, env=env)
    thread = watch(proc.pid, include_root=False, peak=peak)
    code = proc.wait()
    peak._stop.set()
    thread.join()
    return code, peak


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def measure_lab(bindir: Path, env: dict[str, str], cwd: Path) -> Peak:
    """An idle JupyterLab server of the Binder environment, after it served the /lab page."""
    port, token = free_port(), secrets.token_hex(16)
    command = [
        str(bindir / "jupyter"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--IdentityProvider.token={token}", "--ServerApp.port_retries=0", "--allow-root",
    ]  # fmt: skip
    print("+", " ".join(command).replace(token, "<token>"), flush=True)
    proc = subprocess.Popen(command, cwd=cwd, env=env, stderr=subprocess.DEVNULL)
    peak = Peak()
    try:
        if not _serves(proc, f"http://127.0.0.1:{port}/lab?token={token}", within_s=60):
            raise RuntimeError("JupyterLab did not start in the Binder environment")
        for _ in range(8):  # a couple of seconds once it has served the page
            peak.sample([proc.pid, *_descendants(proc.pid)])
            time.sleep(SAMPLE_EVERY_S)
    finally:
        stop_process(proc, timeout=15)
    return peak


def _serves(proc: subprocess.Popen[bytes], url: str, *, within_s: float) -> bool:
    """True once ``url`` answers (its body read whole); False if ``proc`` exits first or
    ``within_s`` pass: a cap on a server that hangs, not a wait."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as page:
                page.read()
            return True
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.5)


def mb(size: int) -> str:
    return f"{size / MB:.0f} MB"


def run_lessons(
    repo: Path, bindir: Path, build_env: dict[str, str], test_env: dict[str, str], only: list[str]
) -> int:
    """Every lesson in a Binder kernel under nbval strict, with its peak memory; then a table."""
    lessons = sorted((repo / "notebooks").glob("[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb"))  # 01b-... too
    if only:  # --notebooks 03: that lesson (and JupyterLab) only
        lessons = [p for p in lessons if any(p.name.startswith(name) for name in only)]
    rows: list[tuple[str, str, int, Peak, float]] = []
    for lesson in lessons:
        step(f"{lesson.name} in a Binder kernel, measuring its memory")
        started = time.monotonic()
        nbval = [
            sys.executable, "-m", "pytest", str(lesson.relative_to(repo)), "--nbval",
            "--nbval-sanitize-with", "tests/nbval_sanitize.cfg",
            f"--nbval-kernel-name={KERNEL_NAME}", "--nbval-cell-timeout=120",
            "-p", "no:cacheprovider", "-q",
        ]  # fmt: skip
        code, peak = measure(nbval, cwd=repo, env=test_env)
        took = time.monotonic() - started
        rows.append((lesson.name, "passed" if code == 0 else "FAILED", code, peak, took))
    step("an idle JupyterLab server in the Binder environment")
    lab = measure_lab(bindir, build_env, repo / "notebooks")
    session_rss = lab.rss + sum(peak.rss for _, _, _, peak, _ in rows)
    session_pss = lab.pss + sum(peak.pss for _, _, _, peak, _ in rows)

    print()
    print("| notebook | nbval | peak RSS | peak PSS | processes | run |")
    print("|---|---|---|---|---|---|")
    for name, verdict, _, peak, took in rows:
        print(f"| {name} | {verdict} | {mb(peak.rss)} | {mb(peak.pss)} | {peak.processes} "
              f"| {took:.0f} s |")  # fmt: skip
    print(f"| JupyterLab server (idle, /lab served) | - | {mb(lab.rss)} | {mb(lab.pss)} "
          f"| {lab.processes} | - |")  # fmt: skip
    print(f"| **session** (JupyterLab + every kernel at its peak) | - | {mb(session_rss)} "
          f"| {mb(session_pss)} | - | - |")  # fmt: skip
    print()
    over = [name for name, _, _, peak, _ in rows if peak.rss > LESSON_BUDGET]
    failed = [name for name, _, code, _, _ in rows if code != 0]
    if over:
        print(f"above the {mb(LESSON_BUDGET)} per lesson goal: {', '.join(over)}")
    if session_rss > SESSION_BUDGET:
        print(f"the session is above mybinder.org's {mb(SESSION_BUDGET)}")
    if failed:
        print(f"nbval failed: {', '.join(failed)}")
    ok = not (over or failed or session_rss > SESSION_BUDGET)
    print(f"memory goal (each lesson < 1 GB RSS, session < 2 GB): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


def binder_python_version() -> str | None:
    runtime = BINDER / "runtime.txt"
    if not runtime.exists():
        return None
    return runtime.read_text().strip().removeprefix("python-")


def main(argv: list[str]) -> int:
    lessons = "--notebooks" in argv
    if lessons and not Path("/proc/self/smaps_rollup").exists():
        print("--notebooks reads memory from /proc/PID/smaps_rollup: it needs Linux")
        return 2
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
            "import ipywidgets, jupyterlab, mrtr_kit, mrtr_course.widgets.flow;"
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

        step("every package at the version binder/requirements.txt pins (as tested)")
        if not check_pins(python, build_env, work):
            return 1

        step("lesson 01b's sign-in link through jupyter-server-proxy")
        if not check_signin_link(bindir, dict(build_env, HOME=str(work)), work):
            print("lesson 01b's sign-in link does not open through Jupyter's proxy on Binder")
            return 1

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
        if lessons:
            only = argv[argv.index("--notebooks") + 1 :]
            code = run_lessons(repo, bindir, dict(build_env, HOME=str(home)), test_env, only)
            print(f"binder check took {time.monotonic() - started:.0f} s", flush=True)
            return code

        step("every lesson's imports and lesson 01's form flow, in a Binder kernel")
        # Beside the lessons in the copy, so its kernel starts in notebooks/ as theirs does on
        # Binder: lesson 02 imports lesson02_attacks.py from there.
        smoke = repo / "notebooks" / "binder-smoke.ipynb"
        smoke.write_text(json.dumps(smoke_notebook(), indent=1), encoding="utf-8")
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
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as exc:
        print(f"binder check failed: {' '.join(map(str, exc.cmd))} exited {exc.returncode}")
        sys.exit(1)
