"""Shared test set-up.

Markers (pyproject.toml): ``slow`` for a test that starts a real process (a uvicorn server, a
fleet, ``redis-server``, nginx, a kernel, a subprocess client or checker), ``browser`` for the
real-browser tests. The fast lane (``python3 tools/kit.py test --fast``) leaves both out, so a
test that starts a process without the ``slow`` mark fails here, at once, saying so.

``system_binary`` finds a program a test needs (redis-server, nginx, chromium). On a learner's
machine a missing one skips the test with a hint; under CI (``CI`` set, as ``.ci/run`` runs)
it fails, because CI installs them and a skipped test there would hide a broken set-up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, settings

# Property tests explore the same examples on every run: a run that fails, fails every time, and
# a test can never fail only because a random draw hit something new. (Widen the search on
# purpose with HYPOTHESIS_PROFILE=explore, and turn what it finds into a fixed test.)
# Nor because the machine is slow: no per-example deadline (200 ms by default, which coverage
# on a busy machine can exceed) and no "too slow to generate" health check.
NO_CLOCK = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("kit", derandomize=True, database=None, **NO_CLOCK)
settings.register_profile("explore", derandomize=False, max_examples=2000, **NO_CLOCK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "kit"))

# A lesson's own code (its lab, attacks, checkpoints, quiz) is plain modules beside its notebook,
# named after it (notebooks/02-…/lesson02_attacks.py), imported by the notebook as the kernel's
# working directory is the lesson's folder. Tests import them from the lessons they check
# (lesson_files.LESSONS: the committed copy under `kit.py test`), never from the course package,
# which must not import notebooks/.
from tests.lesson_files import LESSONS  # noqa: E402  (after the profiles: it imports the course)

for _folder in sorted(LESSONS.glob("[0-9][0-9]*-*/")):
    sys.path.insert(0, str(_folder))

INSTALL_HINT = "sudo apt-get install -y {package}"


def system_binary(name: str, package: str | None = None, *, paths: tuple[str, ...] = ()) -> str:
    """Path of ``name`` (on PATH or at one of ``paths``); skip, or fail under CI, if absent."""
    found = shutil.which(name) or next((p for p in paths if os.access(p, os.X_OK)), None)
    if found:
        return found
    message = f"{name} is not installed ({INSTALL_HINT.format(package=package or name)})"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must install it")
    pytest.skip(message)


@pytest.fixture(autouse=True)
def _processes_only_in_slow_tests(request: pytest.FixtureRequest, monkeypatch) -> None:
    """Keep the markers true: outside ``slow``/``browser`` tests, starting a process fails.

    Every way the tests start one (``subprocess.run``, ``Popen``, asyncio's subprocesses, the
    ledger and fleet helpers) goes through ``subprocess.Popen``."""
    if request.node.get_closest_marker("slow") or request.node.get_closest_marker("browser"):
        return

    def refuse(self: subprocess.Popen[bytes], args: object, *rest: object, **kw: object) -> None:
        pytest.fail(f"this test starts a process ({args!r}): mark it @pytest.mark.slow")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
