"""instructors/quiz-answers.md (issue 32: the quiz answers were only in the quiz files) is what
tools/quiz_answers.py makes from the lessons' quizzes today: every question, its right answer
and each wrong option's misconception (KIT)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.course.lesson_quizzes import QUIZZES
from tests.lesson_files import LESSONS, ROOT

sys.path.insert(0, str(ROOT / "tools"))
import quiz_answers

PAGE = ROOT / "instructors" / "quiz-answers.md"


def test_the_page_is_what_the_quizzes_say_today():
    assert PAGE.read_text(encoding="utf-8") == quiz_answers.render(QUIZZES), (
        "instructors/quiz-answers.md is out of step: run .venv/bin/python tools/quiz_answers.py"
    )


@pytest.mark.slow
def test_check_passes_from_the_command_line():
    run = [sys.executable, str(ROOT / "tools" / "quiz_answers.py"), "--check"]
    env = {"MRTR_KIT_LESSONS": str(LESSONS), "PATH": ""}
    done = subprocess.run(run, capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_question_has_its_answer_and_every_wrong_option_its_misconception():
    text = PAGE.read_text(encoding="utf-8")
    for key, quiz in QUIZZES.items():
        assert f"## {key} · {quiz.title}" in text, key
        for n, question in enumerate(quiz.questions, 1):
            start = text.index(f"### {key} Q{n}. ")
            end = text.find("\n### ", start + 1)
            entry = text[start : end if end > 0 else len(text)]
            right = question.options[question.answer]
            assert "✔ **(" in entry and right.why in entry, (key, n)
            wrong = [o for o in question.options if not o.right]
            assert entry.count("*Misconception*: ") == len(wrong), (key, n)
            for option in wrong:
                assert option.why in entry, (key, n, option.text)


def test_a_changed_explanation_is_caught():
    """Break it: an option's explanation reworded in a quiz file changes the page."""
    from dataclasses import replace

    key = sorted(QUIZZES)[0]
    quiz = QUIZZES[key]
    first = quiz.questions[0]
    options = (replace(first.options[0], why=first.options[0].why + " (MRTR-C2)"),)
    changed = replace(quiz, questions=(replace(first, options=options + first.options[1:]),))
    assert quiz_answers.render({**QUIZZES, key: changed}) != PAGE.read_text(encoding="utf-8")
