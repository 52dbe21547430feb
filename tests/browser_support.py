"""A private JupyterLab for real-browser tests (used by ``test_browser_form.py``).

``start_lab`` serves a **scratch copy** of ``notebooks/`` (JupyterLab's autosave would otherwise
write a run's outputs back into the lessons) from a child process on a free loopback port with
a random token. HOME, the Jupyter and IPython folders and TMPDIR point into the test's temp
folder, so neither the server, its kernels nor Chromium write into the real home directory.
``Lab.stop()`` ends the server by its PID (SIGTERM; it shuts its kernels down), killing it only
if it has not exited in time. Recipe: ``shared/recipes/JUPYTER-TESTING.md`` §7.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.lesson_files import LESSONS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = LESSONS
SCREENSHOTS = ROOT / "screenshots" / "browser"  # gitignored
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# JupyterLab user settings for a quiet, predictable page: no news toast, and every cell kept in
# the DOM (no windowing), so locators find outputs that are scrolled out of view.
USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def isolated_env(base: Path, tmp: Path) -> dict[str, str]:
    """``os.environ`` with every per-user Jupyter, IPython and browser folder under ``base``.

    ``tmp`` should be a short path: Chromium puts a Unix socket in TMPDIR, and socket paths
    are limited to about 100 bytes (a deep pytest temp folder is too long).
    """
    home = base / "home"
    env = dict(
        os.environ,
        HOME=str(home),
        TMPDIR=str(tmp),
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        JUPYTER_DATA_DIR=str(home / ".local" / "share" / "jupyter"),
        JUPYTER_RUNTIME_DIR=str(home / ".local" / "share" / "jupyter" / "runtime"),
        IPYTHONDIR=str(home / ".ipython"),
        PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    for key in ("HOME", "TMPDIR"):
        Path(env[key]).mkdir(parents=True, exist_ok=True)
    return env


def short_temp_dir() -> Path:
    """A new folder with a short path (under /tmp where there is one), for TMPDIR."""
    root = "/tmp" if os.path.isdir("/tmp") else None
    return Path(tempfile.mkdtemp(prefix="mrtr-browser-", dir=root))


def free_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Lab:
    base: str  # http://127.0.0.1:<port>, then the base URL without its last "/"
    token: str
    root: Path  # the scratch copy of notebooks/
    log: Path  # the server's log: read it when a browser test fails
    process: subprocess.Popen[bytes]

    def api(self, path: str, method: str = "GET") -> Any:
        request = urllib.request.Request(f"{self.base}{path}?token={self.token}", method=method)
        with urllib.request.urlopen(request, timeout=60) as response:
            body = response.read()
        return json.loads(body) if body else None

    def notebook_url(self, relpath: str) -> str:
        # A fresh workspace per page, or JupyterLab restores the previous test's tabs.
        workspace = f"test-{secrets.token_hex(4)}"
        return (
            f"{self.base}/lab/workspaces/{workspace}/tree/{urllib.parse.quote(relpath)}"
            f"?token={self.token}&reset"
        )

    def shutdown_kernels(self) -> None:
        """Kernels outlive their browser tab: end every session the server started."""
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)  # by PID; the server ends its kernels
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def write_notebook(path: Path, cells: Sequence[tuple[str, str]]) -> Path:
    """Write a notebook of ``(kind, source)`` cells (kind ``"markdown"`` or ``"code"``): a page
    for widgets no lesson shows in a fixed state, put into the lab's scratch folder."""
    import nbformat

    make = {"markdown": nbformat.v4.new_markdown_cell, "code": nbformat.v4.new_code_cell}
    nb = nbformat.v4.new_notebook(cells=[make[kind](source) for kind, source in cells])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(nb, path)
    return path


def copy_repository(target: Path) -> Path:
    """The repository's tracked files as they are in the work tree (uncommitted edits too), as
    a clone would have them: no venv, no caches, no outputs of other runs."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def load_kit(root: Path) -> Any:
    """``root``'s tools/kit.py as a module (its ROOT is ``root``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("kit_in_copy", root / "tools" / "kit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def start_lab(
    work: Path,
    env: dict[str, str],
    *,
    timeout: float = 180.0,  # a cap: JupyterLab takes seconds to start, more on a busy machine
    port: int | None = None,
    base_url: str = "/",
    whole_repo: bool = False,
) -> Lab:
    """``port``: one chosen beforehand (the caller needs it in ``env``); ``base_url``: the
    path prefix the server lives under, as ``/user/<name>/`` on a JupyterHub; ``whole_repo``:
    serve a copy of the repository's files with the options ``tools/kit.py lab`` uses (root the
    repository, the file browser on notebooks/), where ``Lab.root`` is the copy's root."""
    if whole_repo:
        root = copy_repository(work / "repo")
        options = load_kit(root).lab_arguments(root)
    else:
        root = work / "notebooks"
        shutil.copytree(
            NOTEBOOKS, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
        )
        options = [f"--ServerApp.root_dir={root}"]
    settings = work / "user-settings"
    for name, values in USER_SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = port or free_loopback_port(), secrets.token_hex(16)
    prefix = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",  # fail rather than move to another port
        f"--IdentityProvider.token={token}",
        "--allow-root",
        *options,
        f"--LabApp.user_settings_dir={settings}",
        f"--LabApp.workspaces_dir={work / 'workspaces'}",
        "--LabApp.news_url=None",
        f"--ServerApp.base_url={prefix}",
    ]
    log = work / "lab.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=root, env=env)
    lab = Lab(f"http://127.0.0.1:{port}{prefix.rstrip('/')}", token, root, log, process)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited early (rc={process.returncode}); see {log}")
        try:
            urllib.request.urlopen(f"{lab.base}/api/status?token={token}", timeout=1).close()
            return lab
        except OSError as exc:
            if time.monotonic() > deadline:
                lab.stop()
                raise RuntimeError(f"jupyter lab did not answer in {timeout} s; see {log}") from exc
            time.sleep(0.1)


def playwright_sync_api() -> Any:
    """Playwright's sync API; a missing playwright skips the test, or fails it under CI."""
    try:
        from playwright import sync_api
    except ImportError:
        message = "playwright is not installed (it is in the test extra)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must install it")
        pytest.skip(message)
    return sync_api
