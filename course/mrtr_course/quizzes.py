"""Self-check quizzes: a few multiple-choice questions at the end of each lesson.

Plain data and logic, no widgets (``mrtr_course.widgets.quiz`` renders them). Every option
carries its explanation, and every explanation cites the rule it rests on: a spec rule ID from
the MRTR digest, or "(KIT)" for the kit's own conventions. ``Question`` refuses to exist unless
exactly one option is right and every option explains itself, so a quiz cannot ship half-written.

A quiz has a key: ``"01"`` for the one at a lesson's end, ``"01.2"`` for the one after its
section 2. Each lesson keeps its quizzes beside its notebook (``notebooks/01-…/lesson01_quiz.py``
exports ``QUIZZES``, a tuple of ``Quiz``), found by name, so lessons can be added or split without
editing this file. ``quiz("01.2")`` returns one, from the module ``lesson01_quiz`` (the
notebook's kernel imports it from the lesson's folder, its working directory);
``collect(notebooks)`` gathers every lesson's (the tests and the answer key); ``Quiz.text()`` is its
plain-text form (the questions, then the answers), which is what a stored notebook shows where
widgets do not render (GitHub). A question may carry ``code``: a retry to inspect, or a cell whose
output to predict, shown as a code block under the question.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

LETTERS = "abcdefgh"
# A rule ID as the digest writes them (MRTR-C2, MRTR-S5a, CACHE-3, ...), or the kit's "(KIT)".
_CITATION = re.compile(
    r"\b(?:CACHE|CAP|CORE|DISC|ELIC|ERR|HTTP|MIG|MRTR|ROOTS|RT|SAMP|SCH|SEC|VER|STDIO)"
    r"-[A-Z]?\d+[a-z]?\b|\(KIT\)"
)


@dataclass(frozen=True)
class Option:
    """One answer to choose. ``why`` says why it is right or wrong, citing its rule."""

    text: str
    why: str
    right: bool = False


@dataclass(frozen=True)
class Feedback:
    """What a learner sees after choosing an option."""

    right: bool
    letter: str
    why: str

    @property
    def message(self) -> str:
        verdict = "✔ Right." if self.right else "✘ Not quite."
        return f"{verdict} ({self.letter}) {self.why}"


@dataclass(frozen=True)
class Question:
    ask: str
    options: tuple[Option, ...]
    code: str = ""  # shown as a code block under the question ("spot the bug", "predict")

    def __post_init__(self) -> None:
        if len(self.options) < 2 or len(self.options) > len(LETTERS):
            raise ValueError(f"{self.ask!r}: a question needs 2 to {len(LETTERS)} options")
        if sum(o.right for o in self.options) != 1:
            raise ValueError(f"{self.ask!r}: exactly one option must be right")
        for option in self.options:
            if not option.why.strip():
                raise ValueError(f"{self.ask!r}: option {option.text!r} explains nothing")
            if not _CITATION.search(option.why):
                raise ValueError(f"{self.ask!r}: option {option.text!r} cites no rule")

    @property
    def answer(self) -> int:
        """The index of the right option."""
        return next(i for i, o in enumerate(self.options) if o.right)

    def check(self, choice: int) -> Feedback:
        option = self.options[choice]  # IndexError for a choice that is not there
        return Feedback(option.right, LETTERS[choice], option.why)


@dataclass(frozen=True)
class Quiz:
    lesson: str  # "00", "01", ...
    title: str
    questions: tuple[Question, ...]
    section: str = ""  # "2" for the quiz after section 2; "" for the one at the lesson's end

    @property
    def key(self) -> str:
        return f"{self.lesson}.{self.section}" if self.section else self.lesson

    def text(self, *, answers: bool = True) -> str:
        """The quiz as plain text: numbered questions, lettered options, then the answers."""
        lines = [f"Self-check · {self.title}", ""]
        for n, q in enumerate(self.questions, 1):
            lines.append(f"{n}. {q.ask}")
            lines.extend(f"     {line}" for line in q.code.splitlines())
            lines.extend(f"   {LETTERS[i]}) {o.text}" for i, o in enumerate(q.options))
            lines.append("")
        if answers:
            lines.append("Answers:")
            for n, q in enumerate(self.questions, 1):
                right = q.options[q.answer]
                lines.append(f"{n}. {LETTERS[q.answer]}) {right.why}")
        return "\n".join(lines).rstrip()


def _q(ask: str, *options: Option, code: str = "") -> Question:
    return Question(ask, options, code)


def _right(text: str, why: str) -> Option:
    return Option(text, why, right=True)


def module_name(lesson: str) -> str:
    """The module holding lesson ``"01"``'s quizzes: ``lesson01_quiz``."""
    return f"lesson{lesson}_quiz"


def _quizzes_of(module: object) -> dict[str, Quiz]:
    found: dict[str, Quiz] = {}
    for q in module.QUIZZES:  # type: ignore[attr-defined]
        if q.key in found:
            raise ValueError(f"two quizzes have the key {q.key!r}")
        found[q.key] = q
    return found


def collect(notebooks: Path) -> dict[str, Quiz]:
    """Every lesson's quizzes under ``notebooks`` (``*/lesson*_quiz.py``), by key. Each module
    is loaded from its file under its own name, once: a later ``import lesson01_quiz`` (or
    ``quiz("01")``) gets the same module."""
    found: dict[str, Quiz] = {}
    for path in sorted(notebooks.glob("*/lesson*_quiz.py")):
        module = sys.modules.get(path.stem)
        if module is None:
            spec = importlib.util.spec_from_file_location(path.stem, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        for key, q in _quizzes_of(module).items():
            if key in found:
                raise ValueError(f"two quizzes have the key {key!r}")
            found[key] = q
    return found


def quiz(key: str) -> Quiz:
    """The quiz of ``key``: ``"01"`` (a lesson's end) or ``"01.2"`` (after its section 2),
    from the lesson's own module (``module_name``)."""
    lesson = key.split(".", 1)[0]
    try:
        module = importlib.import_module(module_name(lesson))
    except ModuleNotFoundError:
        raise KeyError(
            f"no quizzes for lesson {lesson!r}: {module_name(lesson)}.py is not in this folder"
        ) from None
    quizzes = _quizzes_of(module)
    try:
        return quizzes[key]
    except KeyError:
        raise KeyError(f"no quiz for lesson {key!r}; there are {sorted(quizzes)}") from None
