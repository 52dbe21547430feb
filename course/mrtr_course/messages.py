"""Wire messages built and shown by hand, as lessons 01, 01b and 05 do.

* ``meta`` — the ``_meta`` every 2026-07-28 request carries, for a request written out in full;
* ``show`` — print a message as readable wire JSON (``requestState`` shortened);
* ``FORM_CAPS`` — the client capabilities of a client that answers forms;
* ``LESSON_CLIENT`` — the ``clientInfo`` those hand-built requests declare.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from mrtr_course.plain.trace_view import wire_json
from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
)

FORM_CAPS: dict[str, Any] = {"elicitation": {"form": {}}}
LESSON_CLIENT = {"name": "lesson-01", "version": "1"}


def meta(capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``_meta`` every 2026-07-28 request carries (CORE-10, CORE-12)."""
    return {
        META_PROTOCOL_VERSION: PROTOCOL_VERSION,
        META_CLIENT_CAPABILITIES: copy.deepcopy(dict(capabilities or {})),
        META_CLIENT_INFO: dict(LESSON_CLIENT),
    }


def show(message: Any, *, hide_meta: bool = False) -> None:
    """Print a message as indented JSON, with any ``requestState`` shortened for reading."""
    print(wire_json(message, hide_meta=hide_meta))
