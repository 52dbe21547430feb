"""``tools/kit.py``: set-up stamps, ``doctor``, ``reset``, the lessons ``test`` checks, and
``binder-url`` (KIT conventions: the kit's own tooling, no spec rule).

The ``slow`` tests run the real script in a subprocess against real things: a scratch git
repository holding a copy of the script, and a real, fresh virtual environment with nothing
installed (``doctor`` must say what is missing and the command that fixes it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KIT = ROOT / "tools" / "kit.py"


def load_kit(monkeypatch: pytest.MonkeyPatch, path: Path = KIT, venv_dir: Path | None = None):
    """tools/kit.py as a module (its ROOT is the folder above ``path``'s tools/)."""
    if venv_dir is not None:
        monkeypatch.setenv("MRTR_KIT_VENV", str(venv_dir))
    spec = importlib.util.spec_from_file_location("kit_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- binder-url: the launch link from the remote ------------------------------------------------

LAUNCH = (
    "https://mybinder.org/v2/gh/ada/mrtr-kit/HEAD"
    "?urlpath=lab/tree/notebooks/01-the-basic-flow/01-the-basic-flow.ipynb"
)


@pytest.mark.parametrize(
    "remote",
    [
        "https://github.com/ada/mrtr-kit",
        "https://github.com/ada/mrtr-kit.git",
        "https://github.com/ada/mrtr-kit/",
        "https://ada@github.com/ada/mrtr-kit.git",
        "git@github.com:ada/mrtr-kit.git",
        "git@github.com:ada/mrtr-kit",
        "ssh://git@github.com/ada/mrtr-kit.git",
        "ssh://git@github.com:22/ada/mrtr-kit.git",
    ],
)
def test_binder_url_from_https_and_ssh_github_remotes(monkeypatch, remote):
    kit = load_kit(monkeypatch)
    assert kit.binder_url(remote) == LAUNCH


@pytest.mark.parametrize(
    "remote",
    [
        "https://gitlab.com/ada/mrtr-kit.git",
        "git@gitlab.com:ada/mrtr-kit.git",
        "/srv/git/mrtr-kit",
        "https://github.com/ada",  # no repository
        "https://github.com.evil.example/ada/mrtr-kit",
    ],
)
def test_binder_url_is_none_for_what_is_not_a_github_repository(monkeypatch, remote):
    kit = load_kit(monkeypatch)
    assert kit.binder_url(remote) is None


def test_binder_url_keeps_a_named_ref(monkeypatch):
    kit = load_kit(monkeypatch)
    url = kit.binder_url("git@github.com:ada/mrtr-kit.git", ref="workshop-2026")
    assert url.startswith("https://mybinder.org/v2/gh/ada/mrtr-kit/workshop-2026?urlpath=lab/")


# -- the set-up stamp ---------------------------------------------------------------------------


@pytest.fixture
def fake_venv(tmp_path):
    """A folder where kit.py expects a venv's python (the stamp logic only checks it exists)."""
    bindir = tmp_path / "venv" / ("Scripts" if os.name == "nt" else "bin")
    bindir.mkdir(parents=True)
    (bindir / ("python.exe" if os.name == "nt" else "python")).write_text("")
    return tmp_path / "venv"


def record_commands(monkeypatch: pytest.MonkeyPatch, kit) -> list[list[str]]:
    """Every command ``kit`` runs from now on, recorded instead of run (each succeeds)."""
    commands: list[list[str]] = []

    def record(command, **kwargs):
        commands.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(kit.subprocess, "run", record)
    return commands


def test_lab_installs_the_lab_extra_and_test_adds_the_test_extra(monkeypatch, fake_venv):
    """``lab`` needs the library and the course (``./course``); ``test`` adds the library's
    ``[test]`` extra; the stamp names what is in."""
    kit = load_kit(monkeypatch, venv_dir=fake_venv)
    assert kit.COMMANDS["lab"][1] == ("lab",)
    assert kit.COMMANDS["test"][1] == ("lab", "test")
    commands = record_commands(monkeypatch, kit)
    kit.ensure_env(("lab",))
    assert commands[-1][-4:] == ["-e", ".", "-e", "./course"]
    assert kit.installed_extras() == ("lab",)
    commands.clear()
    kit.ensure_env(("lab",))  # up to date: nothing runs
    assert commands == []
    kit.ensure_env(("lab", "test"))  # the test tools are not in yet
    assert commands[-1][-4:] == ["-e", ".[test]", "-e", "./course"]
    commands.clear()
    kit.ensure_env(("lab",))  # lab,test covers lab
    assert commands == []


def test_docs_adds_the_docs_extra_and_builds_strictly(monkeypatch, fake_venv):
    """KIT: ``docs`` installs ``.[docs]`` beside what is in (the test extra has its packages
    already), then runs Sphinx with warnings as errors into site/."""
    kit = load_kit(monkeypatch, venv_dir=fake_venv)
    commands = record_commands(monkeypatch, kit)
    kit.ensure_env(("lab",))
    commands.clear()
    assert kit.run_docs([]) == 0
    install, build = commands[-2:]  # after pip's own upgrade
    assert install[-4:] == ["-e", ".[docs]", "-e", "./course"]
    assert build[1:3] == ["-m", "sphinx"] and "-W" in build and "-E" in build
    assert build[-2:] == [".", str(kit.ROOT / "site")]
    kit.ensure_env(("lab", "test"))
    commands.clear()
    assert kit.run_docs([]) == 0
    assert len(commands) == 1  # nothing to install: the build only


def test_offline_installs_every_package_from_the_wheelhouse_alone(monkeypatch, fake_venv, tmp_path):
    """``lab --offline PATH`` (and ``install``/``test``): every pip call has ``--no-index
    --find-links PATH``; the other arguments still go to the command."""
    kit = load_kit(monkeypatch, venv_dir=fake_venv)
    house = tmp_path / "house"
    house.mkdir()
    (house / "mrtr_kit-0.1.0-py3-none-any.whl").write_bytes(b"")
    with pytest.raises(SystemExit, match="no mrtr_course-"):  # the course's wheel is needed too
        kit.offline_source(["--offline", str(house)])
    (house / "mrtr_course-0.1.0-py3-none-any.whl").write_bytes(b"")
    commands = record_commands(monkeypatch, kit)
    offline, rest = kit.offline_source(["--no-browser", "--offline", str(house), "--port", "1"])
    assert offline == house.resolve() and rest == ["--no-browser", "--port", "1"]
    kit.ensure_env(("lab",), offline=offline)
    pips = [c for c in commands if "pip" in c]
    assert len(pips) == 2 and pips[-1][-4:] == ["-e", ".", "-e", "./course"]
    for command in pips:
        at = command.index("--no-index")
        assert command[at + 1 : at + 3] == ["--find-links", str(house.resolve())]
    assert kit.installed_extras() == ("lab",)


def test_offline_refuses_a_folder_that_is_no_wheelhouse(monkeypatch, fake_venv, tmp_path):
    kit = load_kit(monkeypatch, venv_dir=fake_venv)
    with pytest.raises(SystemExit, match="not a wheelhouse"):
        kit.offline_source(["--offline", str(tmp_path)])
    with pytest.raises(SystemExit, match="needs the wheelhouse folder"):
        kit.offline_source(["--offline"])


def test_a_changed_pyproject_means_installing_again(monkeypatch, fake_venv):
    kit = load_kit(monkeypatch, venv_dir=fake_venv)
    kit.STAMP.write_text(f"{'0' * 64} lab,test\n")  # written for another pyproject.toml
    assert kit.installed_extras() is None
    kit.STAMP.write_text(f"{kit._pyproject_digest()} lab,test\n")
    assert kit.installed_extras() == ("lab", "test")


# -- doctor on a real, broken environment -------------------------------------------------------


def run_kit(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, python: str = ""):
    return subprocess.run(
        [python or sys.executable, str(cwd / "tools" / "kit.py"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_doctor_fails_on_a_venv_with_nothing_installed_and_names_the_fix(tmp_path):
    """A real, fresh venv (no kit, no ipywidgets, no JupyterLab): doctor exits non-zero, says
    what is missing and prints the command that fixes it."""
    empty = tmp_path / "empty-venv"
    venv.EnvBuilder(with_pip=False).create(empty)
    env = dict(os.environ, MRTR_KIT_VENV=str(empty))
    env.pop("PYTHONPATH", None)  # the venv sees only what is installed in it
    done = run_kit("doctor", env=env)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    missing = next(line for line in out.splitlines() if "FAIL  environment: missing:" in line)
    for package in ("ipywidgets", "jupyterlab", "mrtr-kit", "pydantic"):
        assert package in missing, missing
    assert "FAIL  widgets:" in out
    assert "FAIL  MRTR flow: skipped: mrtr_kit does not import" in out
    assert "fix: python3 tools/kit.py install" in out
    assert out.rstrip().endswith("run: python3 tools/kit.py install"), out
    assert "ok    loopback:" in out  # what does work is said too


@pytest.mark.slow
def test_doctor_without_a_venv_says_how_to_create_it(tmp_path):
    env = dict(os.environ, MRTR_KIT_VENV=str(tmp_path / "nowhere"))
    done = run_kit("doctor", env=env)
    assert done.returncode == 1
    assert "FAIL  environment: " in done.stdout and "does not exist" in done.stdout
    assert "fix: python3 tools/kit.py lab" in done.stdout


@pytest.mark.slow
def test_doctor_passes_on_the_environment_running_these_tests():
    """The kit's own venv (the one running pytest) is complete: every check passes, and the
    MRTR smoke flow does two rounds over loopback."""
    prefix = Path(sys.prefix)
    if not (prefix / ".mrtr-kit-installed").exists():
        pytest.skip("these tests do not run from a venv that tools/kit.py installed")
    done = run_kit("doctor", env=dict(os.environ, MRTR_KIT_VENV=str(prefix)))
    if "mrtr_kit imports from" in done.stdout:
        pytest.skip("this venv's mrtr_kit is another clone's (a shared venv)")
    if "was not installed for this pyproject.toml" in done.stdout:
        pytest.skip("this venv was installed for another pyproject.toml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok    MRTR flow: 2 rounds over http://127.0.0.1:" in done.stdout
    assert "ok    widgets: the forms render" in done.stdout


@pytest.mark.slow
def test_doctor_under_an_old_python_says_which_python_is_needed():
    def runs(python: str | None) -> bool:  # a pyenv shim may name one that is not installed
        return python is not None and subprocess.run([python, "-c", ""]).returncode == 0

    old = next((p for p in map(shutil.which, ("python3.10", "python3.9")) if runs(p)), None)
    if old is None:
        pytest.skip("no Python older than 3.11 on this machine")
    done = run_kit("doctor", python=old)
    assert done.returncode == 1
    assert "FAIL  python: 3.1" in done.stdout or "FAIL  python: 3.9" in done.stdout
    assert "fix: install Python 3.11 or newer" in done.stdout


# -- the lessons as committed, and reset --------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def scratch_clone(tmp_path):
    """A git repository with the kit's script and a small lesson, committed."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "kit"
    (repo / "tools").mkdir(parents=True)
    (repo / "notebooks" / "01-first" / "solutions").mkdir(parents=True)
    shutil.copy(KIT, repo / "tools" / "kit.py")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    lesson = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {"id": "a", "cell_type": "code", "metadata": {}, "execution_count": 1,
             "source": "print('the lesson')", "outputs": [
                 {"output_type": "stream", "name": "stdout", "text": "the lesson\n"}]},
        ],
    }  # fmt: skip
    (repo / "notebooks" / "01-first" / "01-first.ipynb").write_text(json.dumps(lesson, indent=1))
    (repo / "notebooks" / "01-first" / "solutions" / "01_a.py").write_text("answer = 42\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=kit", "-c", "user.email=kit@example.invalid", "commit", "-qm", "l")
    return repo


def learner_saves(path: Path) -> bytes:
    """What JupyterLab's autosave does after a learner ran and edited a cell."""
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"] = "print('my answer')"
    nb["cells"][0]["outputs"][0]["text"] = "my answer\n"
    nb["cells"][0]["execution_count"] = 7
    path.write_text(json.dumps(nb, indent=1))
    return path.read_bytes()


@pytest.mark.slow
def test_test_reads_the_lessons_as_committed_not_the_learners_copy(monkeypatch, scratch_clone):
    committed = (scratch_clone / "notebooks" / "01-first" / "01-first.ipynb").read_bytes()
    learner_saves(scratch_clone / "notebooks" / "01-first" / "01-first.ipynb")
    kit = load_kit(monkeypatch, scratch_clone / "tools" / "kit.py")
    assert kit.edited_lessons() == ["notebooks/01-first/01-first.ipynb"]
    folder = kit.lessons_to_test(working_copy=False)
    assert folder == scratch_clone / ".jupyter-test" / "lessons" / "notebooks"
    assert (folder / "01-first" / "01-first.ipynb").read_bytes() == committed
    assert (folder / "01-first" / "solutions" / "01_a.py").read_text() == "answer = 42\n"
    assert kit.lessons_to_test(working_copy=True) == scratch_clone / "notebooks"


@pytest.mark.slow
def test_without_git_the_lessons_are_tested_as_they_are(monkeypatch, scratch_clone):
    shutil.rmtree(scratch_clone / ".git")
    kit = load_kit(monkeypatch, scratch_clone / "tools" / "kit.py")
    assert kit.lessons_to_test(working_copy=False) == scratch_clone / "notebooks"


@pytest.mark.slow
def test_reset_restores_the_lesson_and_keeps_the_learners_copy(scratch_clone):
    lesson = scratch_clone / "notebooks" / "01-first" / "01-first.ipynb"
    committed = lesson.read_bytes()
    mine = learner_saves(lesson)
    done = run_kit("reset", "01", cwd=scratch_clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert lesson.read_bytes() == committed
    (kept,) = (scratch_clone / "notebooks" / "saved").glob("01-first-*.ipynb")
    assert kept.read_bytes() == mine
    assert f"your copy is saved as notebooks/saved/{kept.name}" in done.stdout
    assert "notebooks/01-first/01-first.ipynb: restored as committed" in done.stdout
    assert git(scratch_clone, "status", "--porcelain", "--untracked-files=no") == ""
    again = run_kit("reset", cwd=scratch_clone)  # nothing edited any more
    assert "every lesson is as committed" in again.stdout


@pytest.mark.slow
def test_reset_of_an_unknown_lesson_names_the_lessons(scratch_clone):
    done = run_kit("reset", "09", cwd=scratch_clone)
    assert done.returncode == 2
    assert "no lesson matches '09'; the lessons: 01-first" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("remote", "code", "said"),
    [
        ("git@github.com:ada/mrtr-kit.git", 0, LAUNCH),
        ("https://gitlab.com/ada/mrtr-kit.git", 2, "not a GitHub repository"),
        (None, 2, "no remote named origin"),
    ],
)
def test_binder_url_reads_the_origin_remote(scratch_clone, remote, code, said):
    if remote:
        git(scratch_clone, "remote", "add", "origin", remote)
    done = run_kit("binder-url", cwd=scratch_clone)
    assert done.returncode == code, done.stdout
    assert said in done.stdout
    if code == 0:
        assert (
            f"[![Launch on Binder](https://mybinder.org/badge_logo.svg)]({LAUNCH})" in done.stdout
        )


def test_kit_module_needs_only_the_standard_library():
    """kit.py runs before anything is installed: every import it makes is in the stdlib."""
    import ast

    tree = ast.parse(KIT.read_text())
    names = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert names - {"__future__"} <= sys.stdlib_module_names, names - sys.stdlib_module_names


# -- which files are lessons ----------------------------------------------------------------------


def test_the_test_command_runs_every_lesson_and_reset_names_each_one(monkeypatch):
    """``kit.py test`` runs every lesson under nbval, the optional 01b among them, and ``reset``
    finds each by its number: "01" is 01-the-basic-flow, "01b" the optional one."""
    kit = load_kit(monkeypatch)
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("*/*.ipynb"))
    assert sorted(p.name for p in (ROOT / "notebooks").glob(kit.LESSON_GLOB)) == lessons
    assert "01b-more-ways-to-ask-OPTIONAL.ipynb" in lessons
    for name in lessons:
        number, folder = name.split("-", 1)[0], name.removesuffix(".ipynb")
        notebook = ROOT / "notebooks" / folder / name
        assert kit.resolve_lesson(number) == notebook, number
        assert kit.resolve_lesson(f"notebooks/{folder}") == notebook, folder


# -- inspector: MCP Inspector 2.12 on a kit server ------------------------------------------------


def test_inspector_is_pinned_and_runs_in_the_modern_era_on_an_http_or_a_stdio_server(monkeypatch):
    kit = load_kit(monkeypatch)
    assert kit.INSPECTOR_PACKAGES == ("node@22", "@modelcontextprotocol/inspector@2.12.0")
    folder = ROOT / ".inspector"
    node, launcher = kit.inspector_paths(folder)
    http = kit.inspector_command(url="http://127.0.0.1:8000/mcp", folder=folder)
    assert http == [
        str(node),
        str(launcher),
        "--web",
        "--protocol-era",
        "modern",
        "--server-url",
        "http://127.0.0.1:8000/mcp",
        "--transport",
        "http",
    ]
    serve = ["/venv/bin/python", "-m", "mrtr_kit", "serve", "--stdio", "--example", "weather"]
    stdio = kit.inspector_command(stdio=serve, env={"PYTHONPATH": "/src"}, folder=folder)
    # Everything after `--` is the server's command line, never read as Inspector's flags.
    assert stdio[:5] == http[:5] and stdio[stdio.index("--") + 1 :] == serve
    assert stdio[5 : stdio.index("--")] == ["--cwd", str(ROOT), "-e", "PYTHONPATH=/src"]
    with pytest.raises(ValueError):
        kit.inspector_command(folder=folder)
    # era=None: Inspector's own default era (legacy, 2025-11-25), no flag at all
    default = kit.inspector_command(url="http://127.0.0.1:8000/mcp", folder=folder, era=None)
    assert default == [*http[:3], *http[5:]]


def test_inspector_env_is_quiet_private_and_puts_node_22_first(monkeypatch, tmp_path):
    kit = load_kit(monkeypatch)
    env = kit.inspector_env("t0ken", tmp_path / "home", 6300, folder=tmp_path / "ins")
    assert env["MCP_INSPECTOR_API_TOKEN"] == "t0ken"
    assert env["MCP_AUTO_OPEN_ENABLED"] == "false"
    assert env["MCP_INSPECTOR_SECRET_STORE"] == "memory"
    assert env["HOME"] == str(tmp_path / "home") and (tmp_path / "home").is_dir()
    assert env["CLIENT_PORT"] == "6300"
    assert len({env["CLIENT_PORT"], env["MCP_SANDBOX_PORT"], env["MCP_APP_ORIGIN_PORT"]}) == 3
    assert env["PATH"].split(os.pathsep)[0] == str(tmp_path / "ins/node_modules/node/bin")
    url = kit.inspector_url(6300, "t0ken")
    assert url == "http://127.0.0.1:6300/?MCP_INSPECTOR_API_TOKEN=t0ken"


def test_inspector_counts_as_installed_only_with_node_and_the_pinned_version(monkeypatch, tmp_path):
    kit = load_kit(monkeypatch)
    assert not kit.inspector_installed(tmp_path)
    node, launcher = kit.inspector_paths(tmp_path)
    for path in (node, launcher):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    package = launcher.parents[3] / "package.json"
    package.write_text(json.dumps({"version": "2.11.0"}))
    assert not kit.inspector_installed(tmp_path)  # another version: installs the pinned one
    package.write_text(json.dumps({"version": kit.INSPECTOR_VERSION}))
    assert kit.inspector_installed(tmp_path)


def test_inspector_without_npm_says_what_to_install(monkeypatch, tmp_path):
    kit = load_kit(monkeypatch)
    monkeypatch.setattr(kit.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="inspector needs npm"):
        kit.install_inspector(tmp_path / "ins")


def test_doctor_cuts_a_long_flow_line_between_words(monkeypatch):
    """The MRTR flow line shows the forecast cut between two words, never inside one (issue 19:
    it cut the forecast at 50 characters, mid-word)."""
    kit = load_kit(monkeypatch)
    forecast = (
        "Hello doctor! Weather now in Paris: 18 °C, light rain, wind from the west at 12 km/h."
    )
    detail = f"2 rounds over http://127.0.0.1:40123/mcp in 0.4 s, asked ['login']: {forecast}"
    for width in range(40, len(detail) + 2):
        shown = kit.clip(detail, width)
        assert len(shown) <= width
        if shown == detail:
            continue
        assert shown.endswith("…")
        words = shown[:-1].split()
        whole = detail.split()[: len(words)]
        assert words[:-1] == whole[:-1], (width, shown)
        assert words[-1] == whole[-1].rstrip(",;:"), (width, shown)  # a whole word, no comma
    assert kit.clip("short", 120) == "short"


def test_lab_serves_the_repository_and_opens_on_the_lessons(monkeypatch):
    """``kit.py lab`` roots JupyterLab at the repository (so the lessons' ../docs/ and
    ../README.md links open) with the file browser on notebooks/; the browser test
    (tests/course/test_browser_links.py) starts its lab with the same ``lab_arguments``."""
    kit = load_kit(monkeypatch)
    ran = []

    class Done:
        returncode = 0

    monkeypatch.setattr(kit.subprocess, "run", lambda command, **kw: ran.append(command) or Done())
    assert kit.run_lab([]) == 0
    [command] = ran
    assert f"--ServerApp.root_dir={kit.ROOT}" in command
    assert "--ContentsManager.preferred_dir=notebooks" in command
    assert kit.lab_arguments() == [
        a for a in command if a.startswith(("--ServerApp.root", "--Con"))
    ]
