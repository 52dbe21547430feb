"""Is a decoded value JSON the kit can handle? (docs/architecture.md §6, MRTR-E2)

The HTTP adapter decodes bodies itself and refuses what is not JSON there. But the core is also
called with Python dicts directly (``McpServer.handle`` in a notebook), and Python can hold what
no JSON text can: NaN and Infinity, strings with lone surrogates (which cannot be encoded as
UTF-8, so could never be echoed back), keys that are not strings, bytes, sets, and nesting deep
enough to exhaust the interpreter's recursion limit in ``json.dumps`` or a schema validator.
``json_problem`` finds the first such value without recursing, and says where it is.
"""

from __future__ import annotations

import math
from typing import Any

# Deeper than any message the kit expects, far below the interpreter's recursion limit.
MAX_JSON_DEPTH = 100


def has_lone_surrogate(text: str) -> bool:
    """True when ``text`` cannot be encoded as UTF-8 (it holds a surrogate code point)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_problem(
    value: Any, where: str = "params", *, max_depth: int = MAX_JSON_DEPTH
) -> str | None:
    """``"<path>: <what is wrong>"`` for the first non-JSON part of ``value``, else None."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > max_depth:
            return f"{path}: nested deeper than {max_depth} levels"
        if item is None or isinstance(item, bool | int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{path}: {item!r} is not a JSON number"
            continue
        if isinstance(item, str):
            if has_lone_surrogate(item):
                return f"{path}: text holds a lone surrogate (not UTF-8)"
            continue
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    return f"{path}: object key {key!r} is not a string"
                if has_lone_surrogate(key):
                    return f"{path}: object key holds a lone surrogate (not UTF-8)"
                stack.append((sub, f"{path}.{key}", depth + 1))
            continue
        if isinstance(item, list):
            stack.extend((sub, f"{path}[{i}]", depth + 1) for i, sub in enumerate(item))
            continue
        return f"{path}: a Python {type(item).__name__} is not a JSON value"
    return None
