"""The verdict of an exercise checkpoint, shared by every lesson."""

from __future__ import annotations

from dataclasses import dataclass

_PREFIX = {"passed": "✔ Passed", "not done": "… Not done yet", "not yet": "✘ Not yet"}


@dataclass(frozen=True)
class Checkpoint:
    """What a checkpoint found: ``passed``, ``not done`` (still the stub) or ``not yet``.

    Its repr is what the notebook shows, so a stub left as it is still lets the notebook run.
    """

    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __repr__(self) -> str:
        return f"{_PREFIX[self.status]}: {self.message}"
