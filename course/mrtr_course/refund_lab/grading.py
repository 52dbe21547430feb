"""What the refund lab's checkpoints share (lessons 02 and 02a): a learner's function is put
into a real refund server, each case is sent as a real round 2, and the first wrong outcome is
reported as "not yet" with the mistake named.

The checkpoints themselves belong to the lessons and sit beside their notebooks
(``notebooks/02-securing-request-state/lesson02_checkpoints.py``, ...).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.refund_lab.attacks import redeem
from mrtr_course.refund_lab.lab import ORDER, RefundLab, ServerAnswer, logged_reason


def not_done(name: str) -> Checkpoint:
    return Checkpoint(
        "not done", f"{name}() still raises NotImplementedError. Fill it in and run again."
    )


async def redeem_answer(
    lab: RefundLab, token: str, user: str = "alice", order: str = ORDER
) -> tuple[ServerAnswer, str | None]:
    """Round 2 with ``token``; the answer and the reason the server logged, if it rejected."""
    attempt = await redeem(lab, token, user, order)
    return attempt.answer, logged_reason(attempt.log)


@contextmanager
def quiet_server_errors() -> Iterator[list[str]]:
    """Keep the tracebacks of a crashing learner function out of the notebook: the checkpoint
    reports the exception itself."""
    logger = logging.getLogger("mrtr_kit.server")
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler, propagate = Keep(logging.ERROR), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


class NotYet(Exception):
    """A case the learner's code got wrong: ``message`` says which and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def described(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"
