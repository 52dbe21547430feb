"""Calling user code that may be plain or ``async``: server handlers, client answer handlers.

One helper for both sides, so a handler written either way behaves the same. Pure: no I/O.
"""

from __future__ import annotations

import inspect
from typing import Any


async def maybe_await(value: Any) -> Any:
    """``value`` itself, or what it resolves to if it is awaitable (a coroutine, a future)."""
    return await value if inspect.isawaitable(value) else value
