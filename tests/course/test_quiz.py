"""Self-check quizzes: the data holds together, a click gives the right feedback, and the text
and HTML forms (what GitHub shows) list every question.

Clicks are ``button.click()``: the same kernel-side handler a person's click runs (the browser
test in ``test_browser_form.py`` clicks one quiz for real).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from lesson_files import LESSONS

from mrtr_kit.course.lessons.quizzes import LETTERS, QUIZZES, Option, Question, quiz
from mrtr_kit.course.widgets.quiz import QuizView, inline_html, quiz_html, show_quiz

ROOT = Path(__file__).resolve().parents[2]
ALL_QUESTIONS = [
    pytest.param(lesson, n, q, id=f"{lesson}-q{n}")
    for lesson, qz in sorted(QUIZZES.items())
    for n, q in enumerate(qz.questions, 1)
]
CITED = re.compile(r"\b[A-Z]+-[A-Z]?\d+[a-z]?\b|\(KIT\)")


@pytest.mark.parametrize("lesson", ["00", "01", "02", "03", "04", "05"])
def test_every_lesson_has_a_quiz(lesson):
    assert any(qz.lesson == lesson for qz in QUIZZES.values()), lesson


@pytest.mark.parametrize("key", sorted(QUIZZES))
def test_each_quiz_has_the_size_of_its_kind(key):
    """A lesson-end quiz has 3 to 5 questions; a section quiz ("03.2") 2 or 3."""
    qz = QUIZZES[key]
    assert qz.key == key and key.split(".")[0] == qz.lesson
    low, high = (2, 3) if qz.section else (3, 5)
    assert low <= len(qz.questions) <= high, key


def test_lessons_04_and_05_check_each_main_section():
    """04: one quiz before the port (section 2, the checklist); 05: after section 1 (the
    hosts) and section 3 (the server's view)."""
    assert {"04.2", "05.1", "05.3"} <= set(QUIZZES)


def test_an_unknown_key_says_which_keys_there_are():
    with pytest.raises(KeyError, match="no quiz for lesson '09'"):
        quiz("09")


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
    qz = quiz("02")
    view = QuizView(qz)
    assert [len(q.buttons) for q in view.questions] == [len(q.options) for q in qz.questions]
    assert [b.description for b in view.questions[1].buttons] == ["a", "b", "c", "d"]
    assert "mrtr-quiz-02" in view.widget._dom_classes


def test_a_notebook_quiz_cell_shows_the_quiz_of_its_own_lesson():
    """A notebook's quiz cells call show_quiz with its own number, or its own number and a
    section ("03.2"), each quiz once (KIT layout)."""
    for path in sorted(LESSONS.glob("[0-9][0-9]*-*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        calls = [
            m.group(1)
            for c in cells
            if c["cell_type"] == "code"
            for m in re.finditer(r"show_quiz\(\"(\d\d(?:\.\d+)?)\"\)", "".join(c["source"]))
        ]
        assert all(key.split(".")[0] == path.name[:2] for key in calls), path.name
        assert all(key in QUIZZES for key in calls), path.name
        assert len(calls) == len(set(calls)), path.name  # each quiz shown once
