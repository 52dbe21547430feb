"""The instructors' answer key (issue 21) is in step with the checkpoint tests: regenerating it
from them (tools/answer_key.py, which runs tests/course/test_lesson_0*.py with a recording
plugin) gives the committed page, and every exercise of every lesson has wrong answers in it."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.lesson_files import LESSONS as LESSON_DIR
from tests.lesson_files import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import answer_key

KEY = ROOT / "instructors" / "answer-key.md"


def test_every_exercise_with_a_checkpoint_has_wrong_answers_in_the_key():
    text = KEY.read_text(encoding="utf-8")
    exercises = answer_key.exercises(LESSON_DIR)
    assert len(exercises) >= 10
    for check, (lesson, heading) in exercises.items():
        line = re.search(rf"^- .*\(`{check}`\): (\d+) wrong answers$", text, re.M)
        assert line, f"{lesson}, {heading}: not in {KEY.name}"
        assert int(line[1]) >= 2, f"{lesson}, {heading}: fewer than 2 wrong answers are tested"


@pytest.mark.slow
def test_the_key_is_what_the_checkpoint_tests_say_today():
    env = {**os.environ, "MRTR_KIT_LESSONS": str(LESSON_DIR)}
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "answer_key.py"), "--check"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
