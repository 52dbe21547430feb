"""A pytest plugin that records what the lessons' checkpoints say, for the instructors' answer key.

Loaded only by ``tools/answer_key.py`` (``-p answer_key_plugin``), never by a normal run. While the
lesson tests run, every ``Checkpoint`` a ``check_*`` function builds is written down with the test
that caused it and the wrong answer that test tried (its parameters), so the answer key is what
the checkpoint tests really do, not a copy of them that could drift.
"""

from __future__ import annotations

import inspect
import json
import os
import textwrap
from typing import Any

import pytest

from mrtr_course.checkpoints import Checkpoint

OUT = "MRTR_KIT_ANSWER_KEY"  # where to write the records (JSON)
_records: list[dict[str, Any]] = []
_item: pytest.Item | None = None


def _checkpoint_name() -> str | None:
    """The ``check_*`` function of the lessons that is building this checkpoint, if any: a
    lesson's own modules sit beside its notebook, named ``lessonNN_*`` (lesson01_checkpoints)."""
    for frame in inspect.stack(context=0):
        module = frame.frame.f_globals.get("__name__", "")
        if frame.function.startswith("check_") and module.startswith("lesson"):
            return frame.function
    return None


def describe(value: Any) -> dict[str, str]:
    """A wrong answer as an instructor reads it: a function's source, or a value's repr."""
    if callable(value):
        try:
            source = textwrap.dedent(inspect.getsource(value)).strip()
        except (OSError, TypeError):
            source = getattr(value, "__name__", repr(value))
        return {"kind": "code", "text": source}
    return {"kind": "value", "text": json.dumps(value, indent=1, default=repr, sort_keys=True)}


def pytest_configure(config: pytest.Config) -> None:
    original = Checkpoint.__init__

    def recording(self: Checkpoint, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        name = _checkpoint_name()
        if _item is None or name is None:
            return
        params = getattr(getattr(_item, "callspec", None), "params", {})
        _records.append(
            {
                "test": _item.nodeid.split("[")[0],
                "id": _item.nodeid,
                "checkpoint": name,
                "status": self.status,
                "message": repr(self),
                "attempt": {k: describe(v) for k, v in params.items()},
            }
        )

    Checkpoint.__init__ = recording  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    global _item
    _item = item
    try:
        return (yield)
    finally:
        _item = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get(OUT)
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(_records, out, indent=1)
