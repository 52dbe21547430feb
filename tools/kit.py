#!/usr/bin/env python3
"""The kit's entry points, needing nothing but Python >= 3.11 (on Windows: ``py tools/kit.py``):

    python3 tools/kit.py lab [OPTIONS]   # JupyterLab on notebooks/; OPTIONS go to `jupyter lab`
                                         # (--no-browser, --port 8890, ...)
    python3 tools/kit.py doctor          # is everything in place? what to do if not
    python3 tools/kit.py reset [NN] [--from WHEELHOUSE]
                                         # restore lesson NN as committed (yours is saved aside)
    python3 tools/kit.py test            # the whole suite: unit tests + every notebook under nbval
    python3 tools/kit.py test --fast     # the everyday lane (below)
    python3 tools/kit.py binder-url      # the Binder launch link and badge of this clone's GitHub
    python3 tools/kit.py wheelhouse PATH [--platform NAME] [--python X.Y] [--test] [--bundle-only]
                                         # every wheel the lessons need, for a room without network,
                                         # and the repository itself (mrtr-kit.bundle, mrtr-kit.zip)
    python3 tools/kit.py lab --offline PATH   # install from such a wheelhouse (no network)
    python3 tools/kit.py inspector [--example NAME | --url URL | --stdio --example NAME] [--port N]
                                         # MCP Inspector 2.12 (a real host) on a kit server
    python3 tools/kit.py docs [--serve [PORT]]
                                         # the docs site into site/: lessons, API, deployment
    python3 tools/kit.py slides [--out DIR]  # a reveal.js deck per lesson, into slides/
                                         # (offline: reveal.js and Mermaid beside them)
    python3 tools/kit.py install [--test]    # install again, even if .venv/ looks up to date
    python3 tools/kit.py --help              # this page; `kit.py COMMAND --help`: one command's

``--help`` (or ``-h``) after any command prints that command's part of this page and does
nothing else: it installs nothing, starts nothing and writes no file.

``lab`` installs what the lessons need into ``.venv/``: the library (``.``) and, beside it, the
course (``./course``, its own distribution), both editable; ``test`` adds the library's test
tools (pytest, ruff, mypy, playwright, redis, hypothesis). ``install [--test]`` installs them
again even when ``.venv/`` looks up to date (what ``doctor`` asks for when a package has gone
missing).

``wheelhouse PATH`` (network needed) fills PATH with the wheels of the course, the library and
their whole dependency tree (``--test``: ``mrtr-kit[test]`` too), their own two wheels, pip and
setuptools, for Linux x86-64 and aarch64, macOS arm64 and x86-64 and Windows x86-64 and Python
3.11 to 3.14 (``--platform this``: this machine's Python only), with a README.txt for the USB
stick, and the repository itself: ``mrtr-kit.bundle`` (``git bundle``: learners clone it, and
``reset`` works in the clone) and ``mrtr-kit.zip`` (for a laptop without git; ``reset --from
PATH`` restores lessons from it). ``--bundle-only`` writes those two alone, with no network.
``lab``, ``install`` and ``test`` take ``--offline PATH``: ``.venv/`` is created and filled from
PATH alone (``pip --no-index``).

``test`` checks the lessons as committed (git HEAD), not the copies JupyterLab saved while you
studied them: ``--working-copy`` tests the files in ``notebooks/`` as they are (after editing a
lesson). ``test --fast`` runs ``tests/`` without the tests marked ``slow`` (they start real
processes: servers, fleets, redis-server, nginx, kernels, ruff and mypy) or ``browser``, and
without the notebooks. Other arguments after ``test`` go to pytest (``-x``, ``-k ledger``).

``docs`` installs the ``docs`` extra (Sphinx, MyST-NB) into ``.venv/`` beside what is there and
builds the site into ``site/``: every lesson with its stored outputs (none is run), the
cheat-sheet, the spec map, the API reference and the deployment guide. Any warning, a broken
internal link included, fails the build. ``--serve`` then serves ``site/`` on 127.0.0.1:8000.

``inspector`` installs Node 22 and ``@modelcontextprotocol/inspector`` (pinned) into
``.inspector/`` once (npm needed, about 300 MB), starts Inspector's web UI on 127.0.0.1 (port
6274, or ``--port``) with the 2026-07-28 protocol era, and prints the URL to open, its token
included. Its server: ``--url`` a running kit server's ``/mcp`` URL; ``--stdio`` Inspector
spawns ``.venv``'s ``python -m mrtr_kit serve --stdio --example NAME``; neither, it starts
``serve --example NAME`` (default weather) on a free port itself. Ctrl-C stops what it started.
``inspector --install-only`` installs and starts nothing (CI; the Inspector browser test).

and one for maintainers, after editing a lesson:

    python3 tools/kit.py store notebooks/NN-name/NN-name.ipynb   # re-run it, store its outputs

Standard library only, because it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import venv
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("MRTR_KIT_VENV") or ROOT / ".venv")  # another venv: doctor's tests
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".mrtr-kit-installed"
NOTEBOOKS = ROOT / "notebooks"
SAVED = NOTEBOOKS / "saved"  # learners' copies that `reset` put aside (.gitignore'd)
LESSON_COPY = ROOT / ".jupyter-test" / "lessons"  # the committed lessons that `test` runs
MIN_PYTHON = (3, 11)
LAB, TEST = ("lab",), ("lab", "test")  # the extras each path installs
FIRST_LESSON = "notebooks/01-the-basic-flow/01-the-basic-flow.ipynb"
# A lesson is a folder NN-name/ (or NNx-name/: 01b-...-OPTIONAL) holding NN-name.ipynb beside its
# own code; never a copy in notebooks/saved/.
LESSON_GLOB = "[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb"


def say(message: str) -> None:
    print(f"[kit] {message}", flush=True)


def _where(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


# -- the environment ----------------------------------------------------------------------------


# The two distributions the lessons' environment installs: the library (pyproject.toml) and,
# beside it, the course (course/pyproject.toml: the lessons' shared code and their tools).
PROJECTS = (ROOT / "pyproject.toml", ROOT / "course" / "pyproject.toml")


def _pyproject_digest() -> str:
    digest = hashlib.sha256()
    for project in PROJECTS:
        digest.update(project.read_bytes())
    return digest.hexdigest()


def install_targets(extras: tuple[str, ...]) -> list[str]:
    """pip's arguments for ``extras``: the library editable, with its extras (``test``,
    ``docs``) but ``lab``, and the course editable beside it (``lab``: what the lessons need),
    so the lessons import the code next to them."""
    wanted = [extra for extra in extras if extra != "lab"]
    library = f".[{','.join(wanted)}]" if wanted else "."
    return ["-e", library, "-e", "./course"]


def installed_extras() -> tuple[str, ...] | None:
    """The extras the stamp says were installed for these pyproject.toml files; None if stale
    or none.

    The stamp is ``<sha256 of both pyproject.toml> <extras>``: a changed one (new
    dependencies) means installing again."""
    try:
        digest, extras = STAMP.read_text().split()
    except (OSError, ValueError):
        return None
    return tuple(extras.split(",")) if digest == _pyproject_digest() else None


def offline_source(args: list[str]) -> tuple[Path | None, list[str]]:
    """``--offline PATH`` taken out of ``args``: (the wheelhouse, the other arguments)."""
    if "--offline" not in args:
        return None, args
    at = args.index("--offline")
    if at + 1 >= len(args):
        raise SystemExit("--offline needs the wheelhouse folder: --offline PATH")
    folder = Path(args[at + 1]).expanduser().resolve()
    for wheel in ("mrtr_kit", "mrtr_course"):
        if not any(folder.glob(f"{wheel}-*.whl")):
            raise SystemExit(
                f"{folder} is not a wheelhouse (no {wheel}-*.whl in it): build one with "
                "`python3 tools/kit.py wheelhouse PATH` on a machine with network"
            )
    return folder, args[:at] + args[at + 2 :]


def ensure_env(
    extras: tuple[str, ...], *, force: bool = False, offline: Path | None = None
) -> None:
    if sys.version_info < MIN_PYTHON:
        sys.exit(f"mrtr-kit needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    have = installed_extras()
    if not force and PYTHON.exists() and have is not None and set(extras) <= set(have):
        return
    started = time.monotonic()
    library = install_targets(extras)[1].replace(".", "mrtr-kit", 1)  # "mrtr-kit[test]"
    what = f"{library} and mrtr-course"
    if not PYTHON.exists():
        python = sys.version.split()[0]
        say(f"1/3 creating the virtual environment {_where(VENV)}/ (Python {python})")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    else:
        say(f"1/3 reusing {_where(VENV)}/")
    pip = [str(PYTHON), "-m", "pip", "--disable-pip-version-check"]
    if offline is not None:  # the wheelhouse alone: pip asks no index (and no network)
        pip += ["install", "--no-index", "--find-links", str(offline)]
        say(f"installing from the wheelhouse {offline} (--no-index: no network)")
    else:
        pip += ["install"]
    say("2/3 upgrading pip (the one venv ships may be old)")
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    size = "about 300 MB" if extras == LAB else "about 600 MB"
    say(f"3/3 installing {what} with what they depend on ({size}; a minute or more)")
    # Editable: the lessons import the code next to them, so an edit shows at the next import.
    try:
        subprocess.run([*pip, *install_targets(extras)], check=True, cwd=ROOT)
    except subprocess.CalledProcessError:
        if offline is not None:  # most often: built for another platform, Python or extras
            say(f"{offline} lacks a wheel this machine needs (Python {sys.version.split()[0]});")
            say("its README.txt lists the platforms and Pythons it holds; `test` needs one")
            say("built with `wheelhouse --test`")
        raise
    STAMP.write_text(f"{_pyproject_digest()} {','.join(extras)}\n")
    say(f"{_where(VENV)}/ is ready ({what}) after {time.monotonic() - started:.0f} s")


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


# -- the lessons as committed -------------------------------------------------------------------


def git(*args: str) -> subprocess.CompletedProcess[bytes] | None:
    """``git -C ROOT ARGS``; None when there is no git or ROOT is not its own repository."""
    if shutil.which("git") is None:
        return None
    top = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--show-toplevel"], capture_output=True, text=True
    )
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != ROOT:
        return None
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True)


def edited_lessons() -> list[str]:
    """Files under notebooks/ that differ from git HEAD (modified or deleted), as paths."""
    status = git("status", "--porcelain", "--untracked-files=no", "--", "notebooks")
    if status is None or status.returncode != 0:
        return []
    return [line[3:] for line in status.stdout.decode().splitlines() if line.strip()]


def committed_lessons() -> Path | None:
    """``notebooks/`` as committed at HEAD, extracted under .jupyter-test/; None without git."""
    archive = git("archive", "--format=tar", "HEAD", "notebooks")
    if archive is None or archive.returncode != 0:
        return None
    shutil.rmtree(LESSON_COPY, ignore_errors=True)
    LESSON_COPY.mkdir(parents=True)
    tar = LESSON_COPY / "notebooks.tar"
    tar.write_bytes(archive.stdout)
    with tarfile.open(tar) as bundle:
        if hasattr(tarfile, "data_filter"):  # 3.11.4+: refuse paths outside the folder
            bundle.extractall(LESSON_COPY, filter="data")
        else:  # git's own archive of our own HEAD
            bundle.extractall(LESSON_COPY)
    tar.unlink()
    return LESSON_COPY / "notebooks"


def lessons_to_test(working_copy: bool) -> Path:
    """The notebooks folder `test` checks: HEAD's lessons, unless asked (or no git)."""
    if working_copy:
        say("testing the lessons in notebooks/ as they are (--working-copy)")
        return NOTEBOOKS
    folder = committed_lessons()
    if folder is None:
        say("no git history here: testing the lessons in notebooks/ as they are")
        return NOTEBOOKS
    edited = edited_lessons()
    if edited:
        say("testing the lessons as committed; your edited copies are left as they are:")
        for path in edited:
            print(f"        {path}", flush=True)
        say("(`reset NN` restores one, saving yours aside; `test --working-copy` tests yours)")
    return folder


# The markers are defined in pyproject.toml; tests/conftest.py keeps `slow` true.
FAST_LANE = ["tests", "-m", "not slow and not browser"]
NBVAL = ["--nbval", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "--nbval-cell-timeout=120"]


def run_tests(extra: list[str]) -> int:
    fast = "--fast" in extra
    working_copy = "--working-copy" in extra
    extra = [a for a in extra if a not in ("--fast", "--working-copy")]
    lessons = lessons_to_test(working_copy)
    notebooks = [_where(p) for p in sorted(lessons.glob(LESSON_GLOB))]
    selection = FAST_LANE if fast else ["tests", *notebooks, *NBVAL]
    command = [str(PYTHON), "-m", "pytest", *selection, *extra]
    print("+", " ".join(command), flush=True)
    env = isolated_jupyter_env()
    env["MRTR_KIT_LESSONS"] = str(lessons)  # the tests that read a lesson read this copy
    code = subprocess.run(command, cwd=ROOT, env=env).returncode
    if code == 5:  # pytest's "no tests collected" must never pass for a green run
        print("pytest collected no tests: treating that as a failure", file=sys.stderr)
        return 1
    return code


def resolve_lesson(name: str) -> Path | None:
    """``01``, ``01-the-basic-flow``, ``01-the-basic-flow.ipynb`` or a path (the lesson's folder
    or its notebook), to a lesson's notebook."""
    path = (Path.cwd() / name).resolve()
    if path.is_dir() and path.parent == NOTEBOOKS:  # notebooks/NN-name/: its notebook
        path = path / f"{path.name}.ipynb"
    if path.is_relative_to(NOTEBOOKS) and (path.exists() or path.suffix == ".ipynb"):
        return path
    stem = Path(name.removesuffix(".ipynb")).name
    # "01" is 01-the-basic-flow, not 01b-...: a number first names the lesson with exactly it.
    found = sorted(NOTEBOOKS.glob(f"{stem}-*/{stem}-*.ipynb")) or sorted(
        NOTEBOOKS.glob(f"{stem}*/{stem}*.ipynb")
    )
    return found[0] if len(found) == 1 else None


BUNDLE = "mrtr-kit.bundle"  # the repository with its history, for `git clone` (wheelhouse)
ARCHIVE = "mrtr-kit.zip"  # the repository as committed, for a laptop without git (wheelhouse)
NO_GIT = """\
reset restores a lesson from the repository's last commit, and this copy has no git history
(no git installed, or a copy without its .git folder). Either:
  - restore from the USB stick's copy of the kit, with no network and no git:
        python3 tools/kit.py reset {names}--from path/to/wheelhouse
    (the wheelhouse folder holds {archive}; or give the path of {archive} itself);
  - or, with git installed, clone the stick's bundle and work in that clone from now on:
        git clone path/to/wheelhouse/{bundle} mrtr-kit
Your own notebooks stay where they are in both cases.\
"""


class ZipLessons:
    """The lessons as committed, read from the wheelhouse's ``mrtr-kit.zip`` (``git archive``
    of the repository, under a ``mrtr-kit/`` prefix): ``reset`` without git."""

    def __init__(self, source: Path) -> None:
        import zipfile

        path = source / ARCHIVE if source.is_dir() else source
        if not path.is_file():
            raise SystemExit(f"{source}: no {ARCHIVE} there (kit.py wheelhouse writes it)")
        self.zip = zipfile.ZipFile(path)
        names = self.zip.namelist()
        self.prefix = names[0].split("/", 1)[0] + "/" if names else ""

    def read(self, rel: str) -> bytes | None:
        try:
            return self.zip.read(self.prefix + rel)
        except KeyError:
            return None

    def edited(self) -> list[str]:
        """Lesson files that differ from the archive's (or were deleted)."""
        found = []
        for name in self.zip.namelist():
            rel = name.removeprefix(self.prefix)
            if not rel.startswith("notebooks/") or name.endswith("/"):
                continue
            path = ROOT / rel
            if not path.exists() or path.read_bytes() != self.zip.read(name):
                found.append(rel)
        return found


def _from_option(names: list[str]) -> tuple[Path | None, list[str]]:
    """``--from PATH`` taken out of ``names``."""
    if "--from" not in names:
        return None, names
    at = names.index("--from")
    if at + 1 >= len(names):
        raise SystemExit("--from needs the wheelhouse folder (or its mrtr-kit.zip): --from PATH")
    return Path(names[at + 1]).expanduser().resolve(), names[:at] + names[at + 2 :]


def reset_lessons(names: list[str]) -> int:
    """Restore lessons as committed: from git HEAD, or (``--from PATH``, no git needed) from the
    wheelhouse's copy of the repository; each edited copy is first saved in notebooks/saved/."""
    source, names = _from_option(names)
    archive = ZipLessons(source) if source is not None else None
    if archive is None and git("rev-parse", "HEAD") is None:
        wanted = " ".join(names) + " " if names else ""
        print(NO_GIT.format(names=wanted, archive=ARCHIVE, bundle=BUNDLE))
        return 2
    if names:
        targets = []
        for name in names:
            path = resolve_lesson(name)
            if path is None:
                lessons = ", ".join(p.stem for p in sorted(NOTEBOOKS.glob(LESSON_GLOB)))
                print(f"no lesson matches {name!r}; the lessons: {lessons}")
                return 2
            targets.append(path.relative_to(ROOT).as_posix())
    else:
        targets = archive.edited() if archive else edited_lessons()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    restored = 0
    for rel in targets:
        if archive is not None:
            committed = archive.read(rel)
        else:
            shown = git("show", f"HEAD:{rel}")
            committed = shown.stdout if shown is not None and shown.returncode == 0 else None
        if committed is None:
            print(f"{rel}: not in the last commit, nothing to restore it from")
            return 1
        path = ROOT / rel
        if path.exists() and path.read_bytes() == committed:
            print(f"{rel}: already as committed")
            continue
        if path.exists():
            SAVED.mkdir(parents=True, exist_ok=True)
            kept = SAVED / f"{path.stem}-{stamp}{path.suffix}"
            shutil.copy2(path, kept)
            print(f"{rel}: your copy is saved as {_where(kept)}")
        path.write_bytes(committed)
        print(f"{rel}: restored as committed")
        restored += 1
    if restored:
        print("If a restored lesson is open in JupyterLab, close its tab without saving (or use")
        print("File > Reload Notebook from Disk): JupyterLab would save your old version over it.")
    elif not targets:
        print("every lesson is as committed; nothing to restore")
    return 0


# -- Binder -------------------------------------------------------------------------------------

GITHUB = re.compile(
    r"^(?:https://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com(?::22)?/)"
    r"(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+?)(?:\.git)?/?$"
)


def binder_url(remote: str, ref: str = "HEAD", lesson: str = FIRST_LESSON) -> str | None:
    """mybinder.org's launch URL for a GitHub remote (https or ssh form); None if not GitHub."""
    match = GITHUB.match(remote.strip())
    if match is None:
        return None
    return (
        f"https://mybinder.org/v2/gh/{match['owner']}/{match['repo']}/{ref}"
        f"?urlpath=lab/tree/{lesson}"
    )


BADGE = "[![Launch on Binder](https://mybinder.org/badge_logo.svg)]({url})"


def print_binder_url(args: list[str]) -> int:
    ref = args[args.index("--ref") + 1] if "--ref" in args else "HEAD"
    remote = git("remote", "get-url", "origin")
    if remote is None:
        print("binder-url needs git and a clone of the repository: this copy has no git history")
        return 2
    if remote.returncode != 0:
        print("this clone has no remote named origin; Binder launches public GitHub repositories:")
        print("push it to GitHub (git remote add origin https://github.com/OWNER/REPO.git) first")
        return 2
    origin = remote.stdout.decode().strip()
    url = binder_url(origin, ref)
    if url is None:
        print(f"origin is {origin}, not a GitHub repository: this command builds mybinder.org")
        print("links for GitHub only (https://github.com/OWNER/REPO or git@github.com:OWNER/REPO)")
        return 2
    print(url)
    print(BADGE.format(url=url))
    return 0


# -- doctor -------------------------------------------------------------------------------------

# Runs inside the venv's Python. It prints one JSON object per line: {"check", "ok", "detail"}.
PROBE = r"""
import asyncio, json, os, re, subprocess, sys, time
from importlib import metadata

ROOT, WANTED = sys.argv[1], json.loads(sys.argv[2])
def report(check, ok, detail):
    print(json.dumps({"check": check, "ok": ok, "detail": detail}), flush=True)

try:
    from packaging.requirements import Requirement
except ImportError:  # a venv with only pip: names, no version check
    Requirement = None
missing, wrong = [], []
for line in WANTED:
    name = line.split(";")[0]
    req = Requirement(line) if Requirement else None
    dist = req.name if req else name.split("[")[0].split("=")[0].split(">")[0].split("<")[0]
    try:
        version = metadata.version(dist)
    except metadata.PackageNotFoundError:
        missing.append(dist)
        continue
    if req is not None and not req.specifier.contains(version, prereleases=True):
        wrong.append(f"{dist} {version} (wanted {req.specifier})")
try:
    import mrtr_kit
    kit = os.path.dirname(os.path.dirname(os.path.abspath(mrtr_kit.__file__)))
    if os.path.realpath(kit) != os.path.realpath(ROOT):
        wrong.append(f"mrtr_kit imports from {kit}, not from this clone")
except ImportError:
    missing.append("mrtr-kit")
report("environment", not (missing or wrong), {"missing": sorted(set(missing)), "wrong": wrong})

jupyter = os.path.join(os.path.dirname(sys.executable), "jupyter")
try:
    out = subprocess.run([jupyter, "labextension", "list"], capture_output=True, text=True,
                         timeout=60)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)  # no colour codes
    lines = [l.strip() for l in plain.splitlines()
             if "@jupyter-widgets/jupyterlab-manager" in l]
    ok = any("enabled" in l and "OK" in l for l in lines)
    try:  # the kernel's half of a form: without it the extension has nothing to render
        import ipywidgets
    except ImportError:
        ok, lines = False, ["ipywidgets does not import (the kernel side of the forms)"]
    report("widgets", ok, lines[0] if lines else
           "JupyterLab's widgets extension (@jupyter-widgets/jupyterlab-manager) is not installed")
except (OSError, subprocess.TimeoutExpired) as exc:
    report("widgets", False, f"jupyter labextension list did not run: {exc}")

async def smoke():
    from mrtr_kit.client import ElicitResult, McpClient
    server = subprocess.Popen(
        [sys.executable, "-m", "mrtr_kit", "serve", "--example", "weather", "--port", "0",
         "--log-level", "warning"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()  # "Serving example 'weather' at http://127.0.0.1:P/mcp"
        if " at http" not in line:
            return False, "the example did not start: " + (line + server.stdout.read())[-300:]
        url = line.rsplit(" at ", 1)[1].strip()
        asked = []
        def answer(params, ctx):
            asked.append(ctx.key)
            return ElicitResult(action="accept", content={"login": "doctor", "units": "celsius"})
        started = time.monotonic()
        async with McpClient(url, elicitation=answer, timeout=10) as client:
            result = await client.call_tool("get_weather", {"city": "Paris"})
        text = result["content"][0]["text"]
        took = time.monotonic() - started
        ok = asked == ["login"] and "doctor" in text and len(client.trace) == 2
        rounds = len(client.trace)
        return ok, f"{rounds} rounds over {url} in {took:.1f} s, asked {asked}: {text}"
    finally:
        server.terminate()
        server.wait(10)

if "mrtr-kit" in missing:
    report("smoke", False, "skipped: mrtr_kit does not import")
else:
    try:
        report("smoke", *asyncio.run(asyncio.wait_for(smoke(), 30)))
    except Exception as exc:
        report("smoke", False, f"{type(exc).__name__}: {exc}")
"""


def _requirements(extras: tuple[str, ...]) -> list[str]:
    import tomllib

    library, course = (tomllib.loads(p.read_text())["project"] for p in PROJECTS)
    wanted = list(library["dependencies"])
    wanted += [r for r in course["dependencies"] if not r.startswith("mrtr-kit")]
    if "test" in extras:
        wanted += library["optional-dependencies"]["test"]
    return list(dict.fromkeys(wanted))


def _loopback() -> tuple[bool, str]:
    try:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            sock.listen()
            port = sock.getsockname()[1]
    except OSError as exc:
        return False, f"cannot bind a port on 127.0.0.1: {exc}"
    with socket.socket() as sock:
        busy = sock.connect_ex(("127.0.0.1", 8888)) == 0
    lab = "in use (JupyterLab will pick the next free one)" if busy else "free"
    return True, f"bound 127.0.0.1:{port} (JupyterLab's usual port 8888: {lab})"


def clip(text: str, width: int = 120) -> str:
    """``text`` on one line of at most ``width`` characters, cut between words (never inside
    one), with "…" where it was cut."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    head = text[: width - 1]
    if text[width - 1] != " " and " " in head:  # the cut falls inside a word: drop that word
        head = head.rsplit(" ", 1)[0]
    return head.rstrip(" ,;:") + "…"


def doctor(args: list[str]) -> int:
    """Check everything a lesson needs; print what is wrong and the command that fixes it."""
    problems: list[tuple[str, str]] = []

    def line(ok: bool, check: str, detail: str, fix: str = "") -> None:
        print(f"  {'ok  ' if ok else 'FAIL'}  {check}: {detail}", flush=True)
        if not ok:
            print(f"        fix: {fix}", flush=True)
            problems.append((check, fix))

    def loopback_line() -> None:
        ok, detail = _loopback()
        line(ok, "loopback", detail, "allow local servers on 127.0.0.1 (firewall, sandbox)")

    print(f"mrtr-kit doctor: {ROOT}", flush=True)
    me = sys.version.split()[0]
    run_kit = "py tools/kit.py" if os.name == "nt" else "python3 tools/kit.py"
    newer = "install Python 3.11 or newer (python.org; on Windows run it as `py tools/kit.py`)"
    line(sys.version_info >= MIN_PYTHON, "python", f"{me} runs tools/kit.py", newer)
    if sys.version_info < MIN_PYTHON:
        return _verdict(problems)
    if not PYTHON.exists():
        line(False, "environment", f"{_where(VENV)}/ does not exist", f"{run_kit} lab")
        loopback_line()
        return _verdict(problems)
    have = installed_extras()
    extras = TEST if have == TEST else LAB
    version = subprocess.run(
        [str(PYTHON), "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
    )
    venv_version = version.stdout.strip() or "unknown"
    venv_ok = bool(re.match(r"3\.(1[1-9]|[2-9]\d)\.", venv_version))
    line(
        venv_ok,
        "python",
        f"{venv_version} in {_where(VENV)}/",
        f"remove {_where(VENV)}/ and run {run_kit} lab with Python 3.11 or newer",
    )
    if have is None:
        line(
            False,
            "environment",
            f"{_where(VENV)}/ was not installed for this pyproject.toml "
            "(new dependencies, or an interrupted install)",
            f"{run_kit} install",
        )
    command = [str(PYTHON), "-c", PROBE, str(ROOT), json.dumps(_requirements(extras))]
    try:
        probe = subprocess.run(command, capture_output=True, text=True, cwd=VENV, timeout=180)
    except subprocess.TimeoutExpired as exc:  # a hung import or server: say so, do not hang
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        probe = subprocess.CompletedProcess(command, 1, out, "the checks took over 180 s")
    results = {}
    for raw in probe.stdout.splitlines():
        if raw.startswith("{"):
            item = json.loads(raw)
            results[item["check"]] = item
    env = results.get("environment")
    install = f"{run_kit} install" + (" --test" if extras == TEST else "")
    if env is None:
        line(
            False,
            "environment",
            f"the venv's Python failed: {probe.stderr.strip()[-300:]}",
            f"remove {_where(VENV)}/ and run {run_kit} lab",
        )
        return _verdict(problems)
    missing, wrong = env["detail"]["missing"], env["detail"]["wrong"]
    named = "mrtr-kit[test] and mrtr-course" if extras == TEST else "mrtr-kit and mrtr-course"
    detail = (
        f"{named}: every requirement installed"
        if env["ok"]
        else "; ".join(([f"missing: {', '.join(missing)}"] if missing else []) + wrong)
    )
    line(env["ok"], "environment", detail, install)
    widgets = results.get("widgets", {"ok": False, "detail": "not checked"})
    if widgets["ok"]:
        shown = f"the forms render ({widgets['detail']})"
    else:  # the extension comes with ipywidgets (jupyterlab_widgets): install brings both
        shown = f"{widgets['detail']}: the lessons' forms would not render"
    line(widgets["ok"], "widgets", shown, install)
    loopback_line()
    smoke = results.get("smoke", {"ok": False, "detail": probe.stderr.strip()[-300:]})
    line(smoke["ok"], "MRTR flow", clip(smoke["detail"]), install)
    if extras == LAB:
        print(f"  note  the test tools are not installed ({run_kit} test installs them)")
    return _verdict(problems)


def _verdict(problems: list[tuple[str, str]]) -> int:
    if not problems:
        print("doctor: everything is in place", flush=True)
        return 0
    fixes = list(dict.fromkeys(fix for _, fix in problems))
    print(f"doctor: {len(problems)} problem(s); run: {' ; '.join(fixes)}", flush=True)
    return 1


# -- lab, store ---------------------------------------------------------------------------------


def lab_arguments(root: Path = ROOT) -> list[str]:
    """Where JupyterLab serves from: the file browser opens on notebooks/ (the lessons) and
    reaches the whole repository, so the lessons' links to ../docs/ and ../README.md and the
    course code a lesson shows (course/mrtr_course/...) open from it too, as on Binder. The
    browser test (tests/course/test_browser_links.py) starts its lab with these."""
    return [
        f"--ServerApp.root_dir={root}",
        f"--ContentsManager.preferred_dir={NOTEBOOKS.relative_to(ROOT).as_posix()}",
    ]


def run_lab(extra: list[str]) -> int:
    command = [str(BIN / "jupyter"), "lab", *lab_arguments(), *extra]
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


SITE = ROOT / "site"  # .gitignore'd, as is docs/api/ (the API pages Sphinx writes)


# The site's build, from the repository's root with docs/conf.py: every page again (-E),
# warnings are errors (-W), all of them listed (--keep-going). tests/test_docs_site.py runs it.
SPHINX_FLAGS = ["-E", "-W", "--keep-going", "-q", "-c", "docs", "-b", "html"]


def sphinx_command(out: Path) -> list[str]:
    return [str(PYTHON), "-m", "sphinx", *SPHINX_FLAGS, ".", str(out)]


def run_docs(args: list[str]) -> int:
    """Build the docs site into site/ (docs/conf.py); ``--serve [PORT]`` then serves it."""
    have = installed_extras() or ()
    # The test extra holds the docs packages too (tests/test_docs_site.py builds the site).
    ensure_env(have if {"docs", "test"} & set(have) else (*have, "docs"))
    command = sphinx_command(SITE)
    print("+", " ".join(command), flush=True)
    code = subprocess.run(command, cwd=ROOT).returncode
    # MyST-NB writes the lessons' output files beside site/ first (jupyter_execute/, a fixed
    # name); the site has its own copies of them.
    shutil.rmtree(ROOT / "jupyter_execute", ignore_errors=True)
    if code != 0:
        say("the docs build failed: every warning above is an error")
        return code
    say(f"built {_where(SITE)}/ (open {_where(SITE)}/index.html)")
    if "--serve" in args:
        rest = args[args.index("--serve") + 1 :]
        port = rest[0] if rest and rest[0].isdigit() else "8000"
        serve = [str(PYTHON), "-m", "http.server", port, "--bind", "127.0.0.1"]
        say(f"serving it at http://127.0.0.1:{port}/ (Ctrl-C stops)")
        try:
            return subprocess.run([*serve, "--directory", str(SITE)]).returncode
        except KeyboardInterrupt:
            return 0
    return 0


def build_slides(args: list[str]) -> int:
    """One deck per lesson from the cells its metadata marks as slides (tools/slides.py).
    reveal.js and Mermaid are fetched first, in the user's own environment (npm's cache)."""
    slides = [str(PYTHON), str(ROOT / "tools" / "slides.py")]
    out = args[args.index("--out") : args.index("--out") + 2] if "--out" in args else []
    if subprocess.run([*slides, "vendor", *out], cwd=ROOT).returncode != 0:
        return 1
    command = [*slides, "build", *args]
    return subprocess.run(command, cwd=ROOT, env=isolated_jupyter_env()).returncode


def install(args: list[str]) -> int:
    offline, args = offline_source(args)
    ensure_env(TEST if "--test" in args else LAB, force=True, offline=offline)
    return 0


def write_repository_copies(dest: Path) -> list[Path]:
    """The repository for the USB stick, beside the wheels: ``mrtr-kit.bundle`` (``git bundle``
    of HEAD, its branch and its tags: learners ``git clone`` it, so ``reset`` works) and
    ``mrtr-kit.zip`` (``git archive`` of HEAD: for a laptop without git, and what ``reset
    --from`` restores from). Both hold the last commit: uncommitted changes are not in them."""
    if git("rev-parse", "HEAD") is None:
        say("no git history here: no mrtr-kit.bundle or mrtr-kit.zip written (build the")
        say("wheelhouse from a clone of the repository to put them on the stick)")
        return []
    dest.mkdir(parents=True, exist_ok=True)
    refs = ["HEAD"]
    branch = git("symbolic-ref", "--quiet", "--short", "HEAD")
    if branch is not None and branch.returncode == 0:
        refs.append(branch.stdout.decode().strip())
    tags = git("tag", "--points-at", "HEAD")
    refs += tags.stdout.decode().split() if tags is not None else []
    bundle, archive = dest / BUNDLE, dest / ARCHIVE
    made = git("bundle", "create", str(bundle), *refs)
    if made is None or made.returncode != 0:
        raise SystemExit(f"git bundle failed: {made.stderr.decode() if made else 'no git'}")
    made = git("archive", "--format=zip", "--prefix=mrtr-kit/", "-o", str(archive), "HEAD")
    if made is None or made.returncode != 0:
        raise SystemExit(f"git archive failed: {made.stderr.decode() if made else 'no git'}")
    head = git("rev-parse", "--short", "HEAD")
    commit = head.stdout.decode().strip() if head is not None else "HEAD"
    sizes = f"{bundle.stat().st_size / 1e6:.1f} MB, {archive.stat().st_size / 1e6:.1f} MB"
    say(
        f"{bundle.name} and {archive.name} ({sizes}): the repository at {commit} ({' '.join(refs)})"
    )
    dirty = git("status", "--porcelain", "--untracked-files=no")
    if dirty is not None and dirty.stdout.strip():
        say("uncommitted changes are not in them: commit (and tag) first for the room's copy")
    return [bundle, archive]


def build_wheelhouse(args: list[str]) -> int:
    """The repository's bundle and zip, then tools/wheelhouse.py in a throwaway venv with a
    recent pip and ``packaging`` (it reads the wheels' markers), so that this file stays
    standard-library only. ``--bundle-only``: the repository copies alone (no network)."""
    # The folder: the first argument that is not an option or an option's value.
    takes_value = ("--platform", "--python")
    paths = [a for i, a in enumerate(args) if not a.startswith("-")
             and not (i and args[i - 1] in takes_value)]  # fmt: skip
    if paths:
        write_repository_copies(Path(paths[0]).expanduser().resolve())
    if "--bundle-only" in args:
        return 0 if paths else 2
    with tempfile.TemporaryDirectory(prefix="mrtr-kit-wheelhouse-") as tmp:
        say("preparing a throwaway venv for the build (pip, packaging)")
        venv.EnvBuilder(with_pip=True).create(tmp)
        python = str(Path(tmp) / ("Scripts" if os.name == "nt" else "bin") / PYTHON.name)
        pip = [python, "-m", "pip", "--disable-pip-version-check", "install", "-q", "--upgrade"]
        subprocess.run([*pip, "pip", "packaging"], check=True)
        script = str(ROOT / "tools" / "wheelhouse.py")
        return subprocess.run([python, script, *args]).returncode  # PATH: from the caller's folder


# -- MCP Inspector (a real host) -------------------------------------------------------------

# Pinned: Inspector's UI is not a stable API (the browser test drives it). It needs Node >= 22.19,
# which the npm package node@22 brings, whatever node runs npm (recipe: INSPECTOR.md).
INSPECTOR_VERSION = "2.12.0"
INSPECTOR_PACKAGES = ("node@22", f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}")
INSPECTOR_DIR = ROOT / ".inspector"  # .gitignore'd
INSPECTOR_INSTALL = "python3 tools/kit.py inspector"
MIN_NODE = (22, 19)


def inspector_paths(folder: Path = INSPECTOR_DIR) -> tuple[Path, Path]:
    """(the node@22 binary, Inspector's launcher script) inside an install folder."""
    modules = folder / "node_modules"
    node = modules / "node" / "bin" / ("node.exe" if os.name == "nt" else "node")
    launcher = modules / "@modelcontextprotocol/inspector/clients/launcher/build/index.js"
    return node, launcher


def inspector_installed(folder: Path = INSPECTOR_DIR) -> bool:
    """Node and the pinned Inspector version are both in ``folder``."""
    node, launcher = inspector_paths(folder)
    package = folder / "node_modules/@modelcontextprotocol/inspector/package.json"
    try:
        version = json.loads(package.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return False
    return node.exists() and launcher.exists() and version == INSPECTOR_VERSION


def install_inspector(folder: Path = INSPECTOR_DIR) -> None:
    """``npm install node@22 @modelcontextprotocol/inspector@2.12.0`` into ``folder``, once."""
    if inspector_installed(folder):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit(
            "inspector needs npm (any version: it installs Node 22 for Inspector itself); "
            "install Node.js from https://nodejs.org or your package manager, then run again"
        )
    folder.mkdir(parents=True, exist_ok=True)
    # A package.json of its own: npm would otherwise name one after the folder, and
    # ".inspector" is not a valid package name.
    (folder / "package.json").write_text('{"name": "mrtr-kit-inspector", "private": true}\n')
    started = time.monotonic()
    say(f"installing {' '.join(INSPECTOR_PACKAGES)} into {_where(folder)}/ (about 300 MB)")
    command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *INSPECTOR_PACKAGES]
    subprocess.run(command, cwd=folder, check=True)
    node, _ = inspector_paths(folder)
    out = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=True)
    found = tuple(int(n) for n in out.stdout.strip().lstrip("v").split(".")[:2])
    if found < MIN_NODE or not inspector_installed(folder):
        raise SystemExit(f"Inspector's install in {_where(folder)}/ is incomplete (node {found})")
    say(
        f"Inspector {INSPECTOR_VERSION} and node {out.stdout.strip()} ready after "
        f"{time.monotonic() - started:.0f} s"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def inspector_command(
    *,
    url: str | None = None,
    stdio: list[str] | None = None,
    env: dict[str, str] | None = None,
    folder: Path = INSPECTOR_DIR,
    era: str | None = "modern",
) -> list[str]:
    """Inspector's web UI, in the 2026-07-28 ("modern") era, on one server: an HTTP ``url``
    (Streamable HTTP) or a ``stdio`` command line that Inspector spawns, with ``env`` added to
    the few variables Inspector gives it (PATH, HOME, ...). ``era=None`` leaves Inspector in
    its own default, ``legacy`` (2025-11-25: ``initialize``, then pushed requests)."""
    node, launcher = inspector_paths(folder)
    command = [str(node), str(launcher), "--web"]
    if era is not None:
        command += ["--protocol-era", era]
    if url is not None:
        return [*command, "--server-url", url, "--transport", "http"]
    if not stdio:
        raise ValueError("inspector_command needs url or stdio")
    # `--`: the server's own flags are not Inspector's; it spawns the server from the repository.
    extra = [arg for key, value in (env or {}).items() for arg in ("-e", f"{key}={value}")]
    return [*command, "--cwd", str(ROOT), *extra, "--", *stdio]


def inspector_env(
    token: str, home: Path, port: int = 6274, folder: Path = INSPECTOR_DIR
) -> dict[str, str]:
    """The environment that makes Inspector quiet and predictable: a given token, no browser
    opened, secrets in memory (no keychain), its ~/.mcp-inspector under ``home``, the UI on
    ``port`` and its two helper ports on free ones, node@22 first on PATH."""
    node, _ = inspector_paths(folder)
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        USERPROFILE=str(home),
        MCP_INSPECTOR_API_TOKEN=token,
        MCP_AUTO_OPEN_ENABLED="false",
        MCP_INSPECTOR_SECRET_STORE="memory",
        CLIENT_PORT=str(port),
        MCP_SANDBOX_PORT=str(free_port()),
        MCP_APP_ORIGIN_PORT=str(free_port()),
        PATH=os.pathsep.join([str(node.parent), env.get("PATH", "")]),
    )
    return env


def inspector_url(port: int, token: str) -> str:
    return f"http://127.0.0.1:{port}/?MCP_INSPECTOR_API_TOKEN={token}"


def start_inspector(
    command: list[str], env: dict[str, str], log: Path, *, timeout: float = 120.0
) -> subprocess.Popen[bytes]:
    """Start Inspector (output into ``log``) and return once its UI answers on CLIENT_PORT."""
    port = int(env["CLIENT_PORT"])
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-1500:]
            raise RuntimeError(f"Inspector exited (rc={process.returncode}):\n{tail}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
            return process
        except OSError as exc:
            if time.monotonic() > deadline:
                stop(process)
                raise RuntimeError(f"Inspector did not answer in {timeout} s; see {log}") from exc
            time.sleep(0.1)


def start_example(
    python: str, example: str, log: Path, *, options: Sequence[str] = (), timeout: float = 60.0
) -> tuple[subprocess.Popen[bytes], str]:
    """``python -m mrtr_kit serve --example EXAMPLE --port 0 [OPTIONS]``, its output (the line
    naming its URL, then uvicorn's access log: one ``POST /mcp`` line per request) into ``log``.
    Returns once that line is there. (A pipe nobody reads would stall the server once full.)"""
    command = [python, "-m", "mrtr_kit", "serve", "--example", example, "--port", "0", *options]
    with open(log, "wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    deadline = time.monotonic() + timeout
    while True:
        text = log.read_text(errors="replace")
        found = re.search(r"^Serving .* at (http://\S+)$", text, re.MULTILINE)
        if found:
            return server, found[1]
        if server.poll() is not None or time.monotonic() > deadline:
            stop(server)
            raise RuntimeError(f"serve --example {example} did not start:\n{text[-1500:]}")
        time.sleep(0.05)


def stop(process: subprocess.Popen[Any]) -> None:
    """End a process we started, by its PID: SIGTERM, then kill if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def inspector_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kit.py inspector", description="MCP Inspector 2.12")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--url", help="a running server's Streamable HTTP URL (…/mcp)")
    target.add_argument("--stdio", action="store_true", help="Inspector spawns `serve --stdio`")
    parser.add_argument("--example", default="weather", help="the kit example (default weather)")
    parser.add_argument("--port", type=int, default=6274, help="Inspector's UI port (6274)")
    parser.add_argument(
        "--install-only", action="store_true", help="install into .inspector/, start nothing (CI)"
    )
    return parser


def run_inspector(args: list[str]) -> int:
    options = inspector_parser().parse_args(args)
    if options.install_only:
        install_inspector()
        return 0
    if options.url is None:
        ensure_env(LAB)  # the kit's server runs from .venv/
    install_inspector()
    with socket.socket() as sock:
        if sock.connect_ex(("127.0.0.1", options.port)) == 0:
            say(f"port {options.port} is in use (another Inspector?): pick one with --port N")
            return 2
    token = secrets.token_hex(16)  # Inspector's /api can start processes: never a fixed one
    env = inspector_env(token, INSPECTOR_DIR / "home", options.port)
    log = INSPECTOR_DIR / "inspector.log"
    server = None
    try:
        if options.stdio:
            serve = [str(PYTHON), "-m", "mrtr_kit", "serve", "--stdio"]
            usage = subprocess.run([*serve[:4], "--help"], capture_output=True, text=True)
            if "--stdio" not in usage.stdout:
                say("this kit's `python -m mrtr_kit serve` has no --stdio: use --url or --example")
                return 2
            command = inspector_command(stdio=[*serve, "--example", options.example])
            say(f"Inspector spawns: {' '.join(serve)} --example {options.example}")
        try:
            if not options.stdio:
                url = options.url
                if url is None:
                    serve_log = INSPECTOR_DIR / "serve.log"
                    server, url = start_example(str(PYTHON), options.example, serve_log)
                    say(f"serving example {options.example!r} at {url} (log: .inspector/serve.log)")
                command = inspector_command(url=url)
            inspector = start_inspector(command, env, log)
        except RuntimeError as exc:
            say(str(exc))
            return 1
        say(f"Inspector {INSPECTOR_VERSION} (protocol era modern) is up; its log: {_where(log)}")
        print(f"\n    open: {inspector_url(options.port, token)}\n", flush=True)
        say("then: the switch on the server's card (Connected), Tools, a tool, Execute Tool")
        say("Ctrl-C stops Inspector" + (" and the server" if server else ""))
        try:
            return inspector.wait()
        except KeyboardInterrupt:
            return 0
        finally:
            stop(inspector)
    finally:
        if server is not None:
            stop(server)


# Each command: what it runs, and the extras it needs installed first (None: installs nothing).
COMMANDS = {
    "lab": (run_lab, LAB),
    "test": (run_tests, TEST),
    "store": (store_outputs, TEST),
    "doctor": (doctor, None),
    "reset": (reset_lessons, None),
    "binder-url": (print_binder_url, None),
    "install": (install, None),
    "wheelhouse": (build_wheelhouse, None),
    "inspector": (run_inspector, None),
    "docs": (run_docs, None),  # installs the `docs` extra next to what is there
    "slides": (build_slides, LAB),
}


HELP = ("--help", "-h")
# Where a command's own arguments go on to another program: its help says how to see that one's.
PASSED_ON = {
    "lab": "Other options go to `jupyter lab`; its own help: .venv/bin/jupyter lab --help",
    "test": "Other arguments go to pytest; its own help: .venv/bin/python -m pytest --help",
    "wheelhouse": "Every option of the build: tools/wheelhouse.py (its --help needs `packaging`)",
}


def command_help(name: str) -> str:
    """``name``'s part of this file's docstring: its usage lines (with their comment lines) and
    the paragraphs that start with it; standard library only, nothing installed or started."""
    lines = (__doc__ or "").splitlines()
    usage: list[str] = []
    for at, line in enumerate(lines):
        if re.match(rf"\s+python3 tools/kit\.py {re.escape(name)}(\s|$)", line):
            usage.append(line)
            usage += [ln for ln in _continuation(lines[at + 1 :])]
    prose = [
        block.strip()
        for block in (__doc__ or "").split("\n\n")
        if re.match(rf"``{re.escape(name)}[ `]", block.strip())
    ]
    parts = ["\n".join(usage), *prose, PASSED_ON.get(name, "")]
    if name == "inspector":
        parts.append(inspector_parser().format_help().strip())
    parts.append("Every command: python3 tools/kit.py --help")
    return "\n\n".join(p for p in parts if p)


def _continuation(lines: list[str]) -> list[str]:
    """The comment lines that continue a usage line (indented to its comment column)."""
    taken = []
    for line in lines:
        if not re.match(r"\s{20,}#", line):
            break
        taken.append(line)
    return taken


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[1] in (*HELP, "help"):
        print(__doc__)
        return 0
    if len(argv) < 2 or argv[1] not in COMMANDS:
        print(__doc__)
        return 2
    command, extras = COMMANDS[argv[1]]
    args = argv[2:]
    if any(arg in HELP for arg in args):  # before anything is installed or started
        print(command_help(argv[1]))
        return 0
    try:
        if extras is not None:
            offline, args = offline_source(args)  # lab/test --offline PATH: no network
            ensure_env(extras, offline=offline)
        return command(args)
    except subprocess.CalledProcessError as exc:  # pip's own message is just above
        say(f"{' '.join(map(str, exc.cmd[:5]))} ... failed (exit {exc.returncode}), see above;")
        say("once fixed, `python3 tools/kit.py install` installs again")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
