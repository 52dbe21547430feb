"""Self-check quizzes: a few multiple-choice questions at the end of each lesson.

Plain data and logic, no widgets (``mrtr_kit.course.widgets.quiz`` renders them). Every option
carries its explanation, and every explanation cites the rule it rests on: a spec rule ID from
the MRTR digest, or "(KIT)" for the kit's own conventions. ``Question`` refuses to exist unless
exactly one option is right and every option explains itself, so a quiz cannot ship half-written.

A quiz has a key: ``"01"`` for the one at a lesson's end, ``"01.2"`` for the one after its
section 2. Each lesson keeps its quizzes in its own module here (``lesson_01.py`` exports
``QUIZZES``, a tuple of ``Quiz``), found by name, so lessons can be added or split without
editing this file. ``quiz("01.2")`` returns one; ``Quiz.text()`` is its plain-text form (the
questions, then the answers), which is what a stored notebook shows where widgets do not render
(GitHub). A question may carry ``code``: a retry to inspect, or a cell whose output to predict,
shown as a code block under the question.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass

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


def _collect() -> dict[str, Quiz]:
    found: dict[str, Quiz] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("lesson_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            for q in module.QUIZZES:
                if q.key in found:
                    raise ValueError(f"two quizzes have the key {q.key!r}")
                found[q.key] = q
    return found


QUIZZES: dict[str, Quiz] = _collect()


def quiz(key: str) -> Quiz:
    """The quiz of ``key``: ``"01"`` (a lesson's end) or ``"01.2"`` (after its section 2)."""
    try:
        return QUIZZES[key]
    except KeyError:
        raise KeyError(f"no quiz for lesson {key!r}; there are {sorted(QUIZZES)}") from None
