"""Every lesson's quizzes, by key ("01", "01.2", ...), from the lessons tested
(``tests.lesson_files.LESSONS``). Here, not in ``tests/lesson_files.py``: that module serves the
library's tests too, which never import the course."""

from __future__ import annotations

from mrtr_course.quizzes import Quiz, collect
from tests.lesson_files import LESSONS

QUIZZES: dict[str, Quiz] = collect(LESSONS)
