"""A pytest plugin that records what the lessons' checkpoints say, for the instructors' answer key.

Loaded only by ``tools/answer_key.py`` (``-p answer_key_plugin``), never by a normal run. While the
lesson tests run, every ``Checkpoint`` a ``check_*`` function builds is written down with the test
that caused it and the wrong answer that test tried (its parameters), so the answer key is what
the checkpoint tests really do, not a copy of them that could drift.

Lesson 04's checkpoint is not a ``check_*`` function but the capstone's gate
(``await capstone.gate(build_server)``, ``lesson04_gate.py``): each report it gives is written
down too, with its items, the test's docstring (what the half-port is) and the source it gated,
so the key can show the fix as a diff against the worked solution. New gate items and new
half-ports in ``tests/course/test_lesson_04.py`` show up when the key is regenerated.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
import textwrap
from pathlib import Path
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


GATE_MODULE = "lesson04_gate"  # the capstone's gate, beside lesson 04's notebook
GATE = "gate"  # its name in the records, as check_* names are for the other exercises


def _gated_source(module: Any, target: Any) -> str:
    """The source the gate checked: the file, or the cell that defines ``build_server``."""
    try:
        if callable(target):
            return str(module.cell_source(target))
        return Path(target).read_text(encoding="utf-8")
    except (OSError, TypeError):
        return ""


def _record_gate_reports() -> None:
    """Wrap the gate once its module is imported (the lesson tests import it by name)."""
    module = sys.modules.get(GATE_MODULE)
    if module is None or getattr(module.gate, "_recorded", False):
        return
    original = module.gate

    @functools.wraps(original)
    async def recording(target: Any, **kwargs: Any) -> Any:
        report = await original(target, **kwargs)
        if _item is not None:
            params = getattr(getattr(_item, "callspec", None), "params", {})
            doc = getattr(getattr(_item, "function", None), "__doc__", None) or ""
            _records.append(
                {
                    "test": _item.nodeid.split("[")[0],
                    "id": _item.nodeid,
                    "checkpoint": GATE,
                    "status": "passed" if report.passed else "not yet",
                    "message": repr(report),
                    "attempt": {k: describe(v) for k, v in params.items()},
                    "doc": " ".join(doc.split()),
                    "source": _gated_source(module, target),
                    "items": [[i.title, i.status, i.why] for i in report.items],
                    "gate_doc": module.__doc__ or "",
                }
            )
        return report

    recording._recorded = True  # type: ignore[attr-defined]
    module.gate = recording


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):  # type: ignore[no-untyped-def]
    global _item
    _item = item
    _record_gate_reports()
    try:
        return (yield)
    finally:
        _item = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get(OUT)
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(_records, out, indent=1)
