"""Self-check quizzes: the data holds together, a click gives the right feedback, and the text
and HTML forms (what GitHub shows) list every question.

Clicks are ``button.click()``: the same kernel-side handler a person's click runs (the browser
test in ``test_browser_form.py`` clicks one quiz for real).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mrtr_course.examples import lessons
from mrtr_course.quizzes import LETTERS, Option, Question, quiz
from mrtr_course.widgets.flow import start_tool_call, widget_client
from mrtr_course.widgets.quiz import QuizView, inline_html, quiz_html, show_quiz
from mrtr_kit.server.http import create_app
from tests.course.lesson_quizzes import QUIZZES
from tests.lesson_files import LESSON_GLOB, LESSONS

ROOT = Path(__file__).resolve().parents[2]
ALL_QUESTIONS = [
    pytest.param(lesson, n, q, id=f"{lesson}-q{n}")
    for lesson, qz in sorted(QUIZZES.items())
    for n, q in enumerate(qz.questions, 1)
]
CITED = re.compile(r"\b[A-Z]+-[A-Z]?\d+[a-z]?\b|\(KIT\)")


def lesson_of(path: Path) -> str:
    """A notebook's lesson id: the part of its name before the first '-' ("02b")."""
    return path.name.split("-", 1)[0]


NOTEBOOK_LESSONS = sorted(lesson_of(p) for p in LESSONS.glob(LESSON_GLOB))


@pytest.mark.parametrize("key", sorted(QUIZZES))
def test_each_quiz_belongs_to_a_lesson_and_has_its_size(key):
    """A quiz at a lesson's end has 2 to 5 questions; one after a section, 2 or 3 (issue 19)."""
    qz = QUIZZES[key]
    assert qz.key == key and qz.lesson in NOTEBOOK_LESSONS, key
    low, high = (2, 3) if qz.section else (2, 5)
    assert low <= len(qz.questions) <= high, key


def test_lessons_04_and_05_check_each_main_section():
    """04: one quiz before the port (section 2, the checklist); 05: after section 1 (the
    hosts) and section 3 (the server's view)."""
    assert {"04.2", "05.1", "05.3"} <= set(QUIZZES)


def test_an_unknown_quiz_is_a_key_error():
    """A lesson with no quiz module beside it, and a quiz key its module does not have."""
    with pytest.raises(KeyError, match=r"no quizzes for lesson '09': lesson09_quiz\.py is not"):
        quiz("09")
    with pytest.raises(KeyError, match=r"no quiz for lesson '01\.9'; there are \['01', "):
        quiz("01.9")


def _lesson_client_namespace() -> dict[str, Any]:
    """What a "predict the output" question of lessons 01 and 01b runs with: the lesson
    server's widget client, as in the notebooks."""
    return {
        "client": widget_client(create_app(lessons.build_server())),
        "start_tool_call": start_tool_call,
    }


# Per lesson, the names its "predict the output" code needs (add a line for a new lesson).
PREDICT_SETUP: dict[str, Callable[[], dict[str, Any]]] = {
    "01": _lesson_client_namespace,
    "01b": _lesson_client_namespace,
}
PREDICT = [
    pytest.param(key, n, q, id=f"{key}-q{n}")
    for key, qz in sorted(QUIZZES.items())
    for n, q in enumerate(qz.questions, 1)
    if q.ask.startswith("Predict the output")
]
# Plain code runs as it is; a question on a lesson's own client runs with that client.
PREDICT_PLAIN = [p for p in PREDICT if quiz(p.values[0]).lesson not in PREDICT_SETUP]
PREDICT_CLIENT = [p for p in PREDICT if quiz(p.values[0]).lesson in PREDICT_SETUP]


@pytest.mark.parametrize(("key", "n", "question"), PREDICT_PLAIN)
def test_a_predict_the_output_answer_is_what_its_code_prints(
    key, n, question, tmp_path, capsys, monkeypatch
):
    """The right option is the code's output, computed here by running the code shown: its
    lines joined by " · " (each may be in backticks). So the answer cannot drift from Python."""
    monkeypatch.chdir(tmp_path)  # code that writes a file writes it here
    exec(compile(question.code, f"<quiz {key} q{n}>", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    right = question.options[question.answer].text.replace("`", "")
    assert right == " · ".join(printed)
    for option in question.options:
        if not option.right:
            assert option.text != question.options[question.answer].text


def _printed(lesson: str, code: str) -> str:
    """Run ``code`` (top-level ``await`` allowed, as in a notebook cell); what it printed."""
    namespace = PREDICT_SETUP[lesson]()
    body = "".join(f"    {line}\n" for line in code.splitlines())
    exec(f"async def _cell():\n{body}", namespace)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        asyncio.run(namespace["_cell"]())
    return out.getvalue().strip()


def test_there_are_predict_the_output_questions():
    assert len(PREDICT) >= 2


@pytest.mark.parametrize(("key", "n", "question"), PREDICT_CLIENT)
def test_a_predict_the_output_questions_right_answer_is_what_its_code_prints(key, n, question):
    """Issue 19: the right option is computed by running the shown code, so it cannot drift;
    every wrong option predicts something else."""
    lesson = quiz(key).lesson
    assert question.code, "a predict-the-output question shows its code"
    printed = _printed(lesson, question.code)
    predicted = [re.match(r"`([^`]+)`", o.text) for o in question.options]
    assert all(predicted), "each option starts with the output it predicts, in backticks"
    right = predicted[question.answer][1]
    assert printed == right, (printed, right)
    assert sorted(p[1] for p in predicted).count(printed) == 1


@pytest.mark.parametrize(("lesson", "n", "question"), ALL_QUESTIONS)
def test_each_question_has_one_right_option_and_every_option_explains_itself(lesson, n, question):
    """Every explanation cites the rule it rests on: a digest ID, or (KIT) for the kit's own."""
    assert sum(o.right for o in question.options) == 1
    assert question.options[question.answer].right
    for option in question.options:
        assert option.text.strip() and option.why.strip()
        assert CITED.search(option.why), option.why
    assert len({o.text for o in question.options}) == len(question.options)  # no duplicates


def test_the_right_answer_is_not_always_in_the_same_place():
    positions = {q.answer for qz in QUIZZES.values() for q in qz.questions}
    assert len(positions) >= 3


def test_a_question_refuses_zero_or_two_right_options_and_an_unexplained_one():
    right, wrong = Option("yes", "because (KIT)", right=True), Option("no", "why not (KIT)")
    Question("ok?", (right, wrong))
    with pytest.raises(ValueError, match="exactly one option must be right"):
        Question("none?", (wrong, Option("no 2", "neither (KIT)")))
    with pytest.raises(ValueError, match="exactly one option must be right"):
        Question("two?", (right, Option("yes 2", "also (KIT)", right=True)))
    with pytest.raises(ValueError, match="explains nothing"):
        Question("why?", (right, Option("no", "  ")))
    with pytest.raises(ValueError, match="cites no rule"):
        Question("cite?", (right, Option("no", "because I say so")))
    with pytest.raises(ValueError, match="2 to"):
        Question("one?", (right,))


@pytest.mark.parametrize(("lesson", "n", "question"), ALL_QUESTIONS)
def test_clicking_each_option_shows_right_or_wrong_with_that_options_explanation(
    lesson, n, question
):
    view = show_quiz(lesson).questions[n - 1]
    assert view.feedback.value == "" and not view.solved
    for i, option in enumerate(question.options):
        view.buttons[i].click()
        shown = view.feedback.value
        assert inline_html(option.why) in shown
        assert f"({LETTERS[i]})" in shown
        if option.right:
            assert "✔ Right." in shown and "Not quite" not in shown
            assert view.buttons[i].button_style == "success" and view.solved
        else:
            assert "✘ Not quite." in shown and "Right." not in shown
            assert view.buttons[i].button_style == "danger" and not view.solved
    assert view.chosen == list(range(len(question.options)))


def test_a_wrong_click_after_the_right_one_is_wrong_again_and_the_score_follows():
    view = show_quiz("01")
    first = view.questions[0]
    wrong = next(i for i, o in enumerate(first.question.options) if not o.right)
    first.buttons[first.question.answer].click()
    assert view.score == 1
    first.buttons[wrong].click()
    assert view.score == 0 and "Not quite" in first.feedback.value
    for q in view.questions:
        q.buttons[q.question.answer].click()
    assert view.score == len(view.questions)


@pytest.mark.parametrize("lesson", sorted(QUIZZES))
def test_the_text_form_lists_every_question_and_option_then_the_answers(lesson):
    qz = quiz(lesson)
    text = qz.text()
    questions_part, answers_part = text.split("\nAnswers:\n")
    for n, q in enumerate(qz.questions, 1):
        assert f"{n}. {q.ask}" in questions_part
        for i, o in enumerate(q.options):
            assert f"   {LETTERS[i]}) {o.text}" in questions_part
        right = q.options[q.answer]
        assert f"{n}. {LETTERS[q.answer]}) {right.why}" in answers_part
    assert "Answers:" not in qz.text(answers=False)


@pytest.mark.parametrize("lesson", sorted(QUIZZES))
def test_the_output_bundle_holds_the_widget_the_text_and_the_html(lesson):
    view = show_quiz(lesson)
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == quiz(lesson).text()
    page = bundle["text/html"]
    assert page == quiz_html(quiz(lesson))
    assert page.count("<details><summary>Answer</summary>") == len(view.questions)
    for q in quiz(lesson).questions:
        assert inline_html(q.ask) in page
        for o in q.options:
            assert f"<li>{inline_html(o.text)}</li>" in page


def test_quiz_text_is_escaped_and_backticks_become_code():
    assert inline_html("a `<b>` & c") == "a <code>&lt;b&gt;</code> &amp; c"
    assert html.escape("<") not in inline_html("plain")


def test_the_view_is_built_from_the_data_only():
    qz = quiz("02b.2")
    view = QuizView(qz)
    assert [len(q.buttons) for q in view.questions] == [len(q.options) for q in qz.questions]
    assert [b.description for b in view.questions[0].buttons] == ["a", "b", "c", "d"]
    assert "mrtr-quiz-02b-2" in view.widget._dom_classes


def quiz_calls(path: Path) -> list[str]:
    """The keys a notebook's code cells pass to show_quiz, in order."""
    cells = json.loads(path.read_text())["cells"]
    return [
        m.group(1)
        for c in cells
        if c["cell_type"] == "code"
        for m in re.finditer(r"show_quiz\(\"([^\"]+)\"\)", "".join(c["source"]))
    ]


def test_a_notebook_quiz_cell_shows_the_quiz_of_its_own_lesson():
    """A notebook's quiz cells call show_quiz with keys of its own lesson ("02b" or "02b.1"),
    each once (KIT layout)."""
    for path in sorted(LESSONS.glob(LESSON_GLOB)):
        calls = quiz_calls(path)
        assert len(calls) == len(set(calls)), path.name
        for key in calls:
            assert key.split(".")[0] == lesson_of(path), (path.name, key)
            assert key in QUIZZES, (path.name, key)


@pytest.mark.parametrize("lesson", NOTEBOOK_LESSONS)
def test_every_lesson_has_quizzes(lesson):
    """Issue 19: quizzes after each main section of every lesson, 01b's too."""
    assert any(qz.lesson == lesson for qz in QUIZZES.values()), lesson


def test_every_quiz_is_shown_by_its_lesson():
    """No quiz is written and then left out of its notebook."""
    shown = {key for path in LESSONS.glob(LESSON_GLOB) for key in quiz_calls(path)}
    assert set(QUIZZES) <= shown, set(QUIZZES) - shown


@pytest.mark.parametrize(
    "path",
    sorted(LESSONS.glob(LESSON_GLOB)),
    ids=lambda p: p.name.split("-")[0],
)
def test_a_notebook_shows_only_its_own_lessons_quizzes_each_once(path):
    """A notebook's quiz cells show quizzes of its own lesson ("01b.2" in 01b-…), each once and
    in section order, and every quiz of the lesson is shown (KIT layout)."""
    lesson = path.name.split("-")[0]
    cells = json.loads(path.read_text())["cells"]
    calls = [
        m.group(1)
        for c in cells
        if c["cell_type"] == "code"
        for m in re.finditer(r"show_quiz\(\"([^\"]+)\"\)", "".join(c["source"]))
    ]
    assert all(key.split(".")[0] == lesson for key in calls), (path.name, calls)
    mine = [qz for qz in QUIZZES.values() if qz.lesson == lesson]
    assert sorted(calls) == sorted(qz.key for qz in mine), path.name
    sections = [quiz(key).section or "~" for key in calls]  # the lesson's end quiz comes last
    assert sections == sorted(sections), calls
