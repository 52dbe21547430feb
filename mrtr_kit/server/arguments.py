"""A tool's ``inputSchema``, checked and compiled once when the tool is registered.

JSON Schema validation is a library's job, not the subject the kit teaches: the kit uses
``jsonschema-rs`` (maintained, Draft 2020-12 by default as MCP specifies, ``$schema`` honoured).
It imports in ~20 ms, compiles a tool's schema in well under a millisecond and checks a call's
arguments in about a microsecond. The pure-Python ``jsonschema`` package costs ~1 s at import
(its format checker builds the ``rfc3987_syntax`` grammar), in every server process of a fleet,
and building its validator per call was the largest piece of the kit's own time per request.
``format`` stays an annotation, as Draft 2020-12 says (the kit never asserted it).
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs


class InvalidSchema(ValueError):
    """A tool's inputSchema is not a valid JSON Schema: refused at registration (KIT)."""


class ArgumentsSchema:
    """One tool's input schema, compiled: ``problem(arguments)`` says what is wrong, or None."""

    __slots__ = ("_validator",)

    def __init__(self, schema: dict[str, Any]) -> None:
        try:
            self._validator = jsonschema_rs.validator_for(schema, validate_formats=False)
        except jsonschema_rs.ValidationError as exc:  # the meta-schema refused it, or a $ref
            where = _path(exc)
            raise InvalidSchema(
                f"invalid inputSchema{' at ' + where if where else ''}: {exc.message}"
            ) from None
        except (ValueError, jsonschema_rs.ReferencingError) as exc:  # e.g. a $ref to nowhere
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InvalidSchema(f"invalid inputSchema: {first_line}") from None

    def problem(self, arguments: dict[str, Any]) -> str | None:
        """``"where: message"`` for the most relevant violation, None when ``arguments`` fit.

        The most relevant one is the shallowest, first in schema order (as ``jsonschema``'s
        ``best_match`` prefers errors higher up in the instance); ``where`` is the dotted
        path inside the arguments (``tags.0``), or ``arguments`` for the object itself.
        """
        try:
            if self._validator.is_valid(arguments):  # the common case, builds no errors
                return None
            errors = list(self._validator.iter_errors(arguments))
        except ValueError:  # bytes, a non-string key, a lone surrogate: no JSON value
            return "arguments: not JSON values (MRTR-E2)"
        best = min(errors, key=lambda e: len(e.instance_path))
        return f"{_path(best) or 'arguments'}: {best.message}"


def _path(error: jsonschema_rs.ValidationError) -> str:
    return ".".join(str(p) for p in error.instance_path)
