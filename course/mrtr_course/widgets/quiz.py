"""A lesson's self-check quiz as widgets: click an option, see right or wrong and why.

``show_quiz("01")`` returns a ``QuizView`` of ``mrtr_course.quizzes.quiz("01")``. Each
question has one lettered button per option; a click (a real one, or ``button.click()`` in a
test) colours that button, shows the verdict and the option's explanation, and keeps the other
buttons live so the learner can try again. The questions and their logic live in
``lessons/quizzes/``; this module only draws them.

Where widgets do not render (a stored notebook on GitHub), the output bundle still holds the
quiz as ``text/html`` (options, then each answer in a collapsed ``<details>``) and as
``text/plain`` (``Quiz.text()``).
"""

from __future__ import annotations

import html
import re
from typing import Any

import ipywidgets as w

from mrtr_course.quizzes import LETTERS, Feedback, Question, Quiz, quiz

RIGHT_STYLE = "color:#1b5e20"
WRONG_STYLE = "color:#b00020"
_CODE = re.compile(r"`([^`]+)`")


def inline_html(text: str) -> str:
    """Escaped text with `backticks` as <code>: the only markup the quiz texts use."""
    return _CODE.sub(r"<code>\1</code>", html.escape(text))


def code_html(code: str) -> str:
    """A question's code block (a retry to inspect, a cell to predict), or nothing."""
    return f"<pre class='mrtr-quiz-code'>{html.escape(code)}</pre>" if code else ""


def feedback_html(feedback: Feedback) -> str:
    style = RIGHT_STYLE if feedback.right else WRONG_STYLE
    verdict = "✔ Right." if feedback.right else "✘ Not quite."
    return (
        f"<span style='{style}'><b>{verdict}</b></span> "
        f"({feedback.letter}) {inline_html(feedback.why)}"
    )


def quiz_html(q: Quiz) -> str:
    """The whole quiz as static HTML: what GitHub shows. Answers are folded away."""
    parts = [f"<div class='mrtr-quiz'><h4>Self-check · {html.escape(q.title)}</h4><ol>"]
    for question in q.questions:
        options = "".join(f"<li>{inline_html(o.text)}</li>" for o in question.options)
        right = question.options[question.answer]
        parts.append(
            f"<li><p>{inline_html(question.ask)}</p>{code_html(question.code)}"
            f"<ol type='a'>{options}</ol>"
            f"<details><summary>Answer</summary><p><b>{LETTERS[question.answer]})</b> "
            f"{inline_html(right.why)}</p></details></li>"
        )
    parts.append("</ol></div>")
    return "".join(parts)


class QuestionView:
    """One question: its text, a button per option, and the feedback line."""

    def __init__(self, number: int, question: Question) -> None:
        self.question = question
        self.chosen: list[int] = []  # every option clicked, in order
        self.last: Feedback | None = None
        self.feedback = w.HTML("")
        self.feedback.add_class("mrtr-quiz-feedback")
        self.buttons: list[w.Button] = []
        rows: list[w.Widget] = [
            w.HTML(f"<b>{number}.</b> {inline_html(question.ask)}{code_html(question.code)}")
        ]
        for i, option in enumerate(question.options):
            button = w.Button(description=LETTERS[i], layout=w.Layout(width="3em"))
            button.on_click(lambda _b, i=i: self.choose(i))
            self.buttons.append(button)
            label = w.HTML(inline_html(option.text), layout=w.Layout(flex="1"))
            row = w.HBox([button, label])
            row.add_class("mrtr-quiz-option")
            rows.append(row)
        rows.append(self.feedback)
        self.widget = w.VBox(rows)
        self.widget.add_class("mrtr-quiz-question")

    @property
    def solved(self) -> bool:
        return self.last is not None and self.last.right

    def choose(self, index: int) -> Feedback:
        """What a click on option ``index`` does: colour it, show the verdict and why."""
        feedback = self.question.check(index)
        self.chosen.append(index)
        self.last = feedback
        self.buttons[index].button_style = "success" if feedback.right else "danger"
        self.feedback.value = feedback_html(feedback)
        return feedback


class QuizView:
    """The quiz of one lesson, as widgets, with a text and an HTML form for static viewers."""

    def __init__(self, q: Quiz) -> None:
        self.quiz = q
        self.questions = [QuestionView(n, question) for n, question in enumerate(q.questions, 1)]
        header = w.HTML(
            f"<h4>Self-check · {html.escape(q.title)}</h4>"
            "<i>Click a letter: each option says why it is right or wrong.</i>"
        )
        self.widget = w.VBox([header, *(v.widget for v in self.questions)])
        self.widget.add_class("mrtr-quiz")
        self.widget.add_class(f"mrtr-quiz-{q.key.replace('.', '-')}")

    @property
    def score(self) -> int:
        """Questions whose latest click is the right option."""
        return sum(v.solved for v in self.questions)

    def describe(self) -> str:
        return self.quiz.text()

    def html(self) -> str:
        return quiz_html(self.quiz)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.describe()
        bundle["text/html"] = self.html()
        return bundle


def show_quiz(key: str) -> QuizView:
    """The quiz ``key`` ("01" at a lesson's end, "01.2" after its section 2), ready to display
    as a cell's value."""
    return QuizView(quiz(key))
