"""``x-mcp-header`` annotations: which ones are valid (HTTP-13), and where they point.

A tool's ``inputSchema`` may mark a property with ``"x-mcp-header": "<Name>"``; a client then
mirrors that argument into an ``Mcp-Param-<Name>`` header (HTTP-12) and the server checks the
two agree (HTTP-14). The validity rules are the same on both sides, so they live here: the
client drops a tool whose annotations break them, the server refuses to register one.
"""

from __future__ import annotations

from typing import Any

# A property path from the schema root, e.g. ("region",) or ("target", "region").
PropertyPath = tuple[str, ...]
# What a valid tool's annotations give: property path -> header suffix (``Mcp-Param-<suffix>``).
HeaderMap = dict[PropertyPath, str]

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_HEADER_TYPES = ("string", "integer", "boolean")
# JSON Schema keywords whose values are subschemas. An annotation found under any of them is
# not reachable "purely through properties" (HTTP-13). Data keywords (default, const, enum,
# examples) are never walked: a key named x-mcp-header inside data is not an annotation.
_SUBSCHEMA_KEYWORDS = frozenset(
    [
        "items",
        "prefixItems",
        "contains",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
    ]
)
_SUBSCHEMA_MAPS = frozenset(["$defs", "definitions", "patternProperties", "dependentSchemas"])


class InvalidHeaderAnnotation(ValueError):
    """A tool's ``x-mcp-header`` annotation breaks HTTP-13; ``str(exc)`` is the reason."""


def _check_header_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or name == "":
        raise InvalidHeaderAnnotation(f"{where}: x-mcp-header must be a non-empty string")
    bad = [ch for ch in name if ch not in _TCHAR]
    if bad:
        raise InvalidHeaderAnnotation(
            f"{where}: x-mcp-header {name!r} is not an HTTP token (bad character {bad[0]!r})"
        )
    return name


Found = list[tuple[PropertyPath | None, dict[str, Any]]]


def _walk(schema: Any, path: PropertyPath | None, found: Found) -> None:
    """Collect every annotated subschema with its property path; the path is ``None`` once
    the walk has gone through any keyword other than ``properties``."""
    if isinstance(schema, list):
        for item in schema:
            _walk(item, None, found)
        return
    if not isinstance(schema, dict):
        return
    if "x-mcp-header" in schema:
        found.append((path, schema))
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                _walk(sub, (*path, prop) if path is not None else None, found)
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                _walk(sub, None, found)
        elif key in _SUBSCHEMA_KEYWORDS:
            _walk(value, None, found)


def annotated_properties(input_schema: Any) -> dict[PropertyPath, tuple[str, str]]:
    """Property path -> (header suffix, JSON type) for every ``x-mcp-header`` in a tool's
    ``inputSchema``; raises ``InvalidHeaderAnnotation`` as ``header_annotations`` does."""
    found: Found = []
    _walk(input_schema, (), found)
    result: dict[PropertyPath, tuple[str, str]] = {}
    seen: dict[str, PropertyPath] = {}
    for path, prop in found:
        if not path:  # None (under items, anyOf, $ref target, ...) or the root itself
            raise InvalidHeaderAnnotation(
                "x-mcp-header must sit on a property reachable from the root through "
                "'properties' only"
            )
        where = "property " + ".".join(path)
        name = _check_header_name(prop["x-mcp-header"], where)
        kind = prop.get("type")
        if kind not in _HEADER_TYPES:
            raise InvalidHeaderAnnotation(
                f"{where}: x-mcp-header on type {kind!r}; only string, integer or boolean"
            )
        if name.lower() in seen:
            raise InvalidHeaderAnnotation(
                f"{where}: x-mcp-header {name!r} is used twice, also on property "
                f"{'.'.join(seen[name.lower()])} (names are case-insensitive)"
            )
        seen[name.lower()] = path
        result[path] = (name, kind)
    return result


def header_annotations(input_schema: Any) -> HeaderMap:
    """Property path -> header suffix for every ``x-mcp-header`` in a tool's ``inputSchema``.

    Raises ``InvalidHeaderAnnotation`` when any annotation breaks HTTP-13: empty or not an
    RFC 9110 token (which also excludes space, ``:``, CR/LF, control and non-ASCII
    characters); a case-insensitive duplicate; on a type other than string, integer or
    boolean (``number`` is rejected, as the conformance suite requires, CONFORMANCE §2.1);
    or not reachable from the root through ``properties`` alone.
    """
    return {path: name for path, (name, _kind) in annotated_properties(input_schema).items()}
