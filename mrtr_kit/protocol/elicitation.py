"""The form-mode ``requestedSchema`` subset (ELIC-5, digest §9.2) and answer validation.

``check_requested_schema`` says whether a schema stays inside the subset a client can render
as a flat form; the server checks its own schemas before sending and the client refuses others.
``validate_content`` checks an accepted form's content against such a schema (ELIC-14), field by
field, so the server can re-ask and the form can show each problem beside its field;
``checked_content`` also returns the part of the content a handler may act on, and
``explain`` says in one sentence what was wrong, for the message of the re-ask (MRTR-E4).

Formats are checked as JSON Schema defines them: ``date`` and ``date-time`` are RFC 3339's
``full-date`` and ``date-time`` exactly, not everything ISO 8601 (or Python's
``fromisoformat``) accepts: no ``20260901``, no week dates, no space for ``T``, no missing offset.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

STRING_FORMATS = ("email", "uri", "date", "date-time")
_COMMON = {"type", "title", "description", "default"}
_ALLOWED = {
    "string": _COMMON | {"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"},
    "number": _COMMON | {"minimum", "maximum"},
    "integer": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "array": _COMMON | {"minItems", "maxItems", "items"},
}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
# RFC 3339 §5.6; [0-9], not \d, which also matches other scripts' digits. ABNF literals ignore
# case, so "t" and "z" are allowed (RFC 3339 §5.6 NOTE).
_FULL_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATE_TIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"([Zz]|[+-]([0-9]{2}):([0-9]{2}))"
)


class SchemaOutsideSubset(ValueError):
    """A requestedSchema that is not a flat form-mode schema."""


def _options(prop: dict[str, Any]) -> list[str] | None:
    """The allowed string values of a single- or multi-select property, else None."""
    if "enum" in prop:
        return list(prop["enum"])
    if "oneOf" in prop:
        return [o["const"] for o in prop["oneOf"]]
    items = prop.get("items")
    if isinstance(items, dict):
        if "enum" in items:
            return list(items["enum"])
        if "anyOf" in items:
            return [o["const"] for o in items["anyOf"]]
    return None


def choice_options(prop: dict[str, Any]) -> list[tuple[str, str]] | None:
    """(value, label) pairs of a single- or multi-select property, else None.

    Labels come from ``oneOf``/``anyOf`` titles, or the legacy ``enumNames``; a plain ``enum``
    value is its own label. A form shows the label and sends the value (ELIC-4).
    """
    values = _options(prop)
    if values is None:
        return None
    if "oneOf" in prop:
        titled = prop["oneOf"]
    elif isinstance(prop.get("items"), dict) and "anyOf" in prop["items"]:
        titled = prop["items"]["anyOf"]
    else:
        names = prop.get("enumNames") or values
        return [(v, str(n)) for v, n in zip(values, names, strict=False)]
    return [(o["const"], str(o.get("title", o["const"]))) for o in titled]


def _check_titled(options: Any, where: str) -> None:
    if not isinstance(options, list) or not options:
        raise SchemaOutsideSubset(f"{where}: needs a non-empty list of options")
    for o in options:
        if not (isinstance(o, dict) and isinstance(o.get("const"), str)):
            raise SchemaOutsideSubset(f"{where}: every option needs a string const")


def check_property(name: str, prop: Any) -> None:
    """Check one property of a requested schema against the flat elicitation subset.

    Raises ``SchemaOutsideSubset`` naming the property when its type, keywords, string format,
    choice values (ELIC-4) or options fall outside the subset; returns None otherwise."""
    where = f"property {name!r}"
    if not isinstance(prop, dict):
        raise SchemaOutsideSubset(f"{where}: must be an object")
    kind = prop.get("type")
    if kind not in _ALLOWED:
        raise SchemaOutsideSubset(
            f"{where}: type {kind!r} is not one of string, number, integer, boolean, array"
        )
    extra = set(prop) - _ALLOWED[kind]
    if extra:
        raise SchemaOutsideSubset(f"{where}: keywords {sorted(extra)} are outside the subset")
    _check_constraint_types(prop, where)
    if kind == "string":
        if "format" in prop and prop["format"] not in STRING_FORMATS:
            raise SchemaOutsideSubset(f"{where}: format {prop['format']!r} is not supported")
        if "enum" in prop and not (
            isinstance(prop["enum"], list)
            and prop["enum"]
            and all(isinstance(v, str) for v in prop["enum"])
        ):
            raise SchemaOutsideSubset(f"{where}: enum values must be strings (ELIC-4)")
        if "enumNames" in prop and len(prop.get("enumNames", [])) != len(prop.get("enum", [])):
            raise SchemaOutsideSubset(f"{where}: enumNames must match enum")
        if "oneOf" in prop:
            _check_titled(prop["oneOf"], where)
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, dict):
            raise SchemaOutsideSubset(f"{where}: arrays are only multi-selects with items")
        if "anyOf" in items:
            _check_titled(items["anyOf"], where)
        elif not (
            items.get("type") == "string"
            and isinstance(items.get("enum"), list)
            and items["enum"]
            and all(isinstance(v, str) for v in items["enum"])
        ):
            raise SchemaOutsideSubset(f"{where}: items must be a string enum or titled anyOf")
    if "default" in prop:
        problem = validate_value(prop, prop["default"])
        if problem:
            raise SchemaOutsideSubset(f"{where}: default is invalid: {problem}")


def _check_constraint_types(prop: dict[str, Any], where: str) -> None:
    """Constraints a form turns into checks must have the types the table in §9.2 gives."""
    for key in ("minLength", "maxLength", "minItems", "maxItems"):
        value = prop.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise SchemaOutsideSubset(f"{where}: {key} must be a whole number")
        if isinstance(value, int) and value < 0:
            raise SchemaOutsideSubset(f"{where}: {key} must not be negative")
    for key in ("minimum", "maximum"):
        value = prop.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise SchemaOutsideSubset(f"{where}: {key} must be a number")
    for key in ("title", "description"):
        if key in prop and not isinstance(prop[key], str):
            raise SchemaOutsideSubset(f"{where}: {key} must be text")


def check_requested_schema(schema: Any) -> None:
    """Raise ``SchemaOutsideSubset`` unless ``schema`` is a flat form-mode schema (§9.2)."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise SchemaOutsideSubset('requestedSchema must be an object schema ("type": "object")')
    props = schema.get("properties")
    if not isinstance(props, dict):
        raise SchemaOutsideSubset("requestedSchema needs a properties object")
    extra = set(schema) - {"$schema", "type", "properties", "required", "title", "description"}
    if extra:
        raise SchemaOutsideSubset(
            f"requestedSchema keywords {sorted(extra)} are outside the subset"
        )
    for name, prop in props.items():
        check_property(name, prop)
    required = schema.get("required", [])
    if not isinstance(required, list) or any(r not in props for r in required):
        raise SchemaOutsideSubset("required must list names of properties")


def validate_value(prop: dict[str, Any], value: Any) -> str | None:
    """The problem with one answer value, or None when it fits the property."""
    kind = prop.get("type")
    if kind == "boolean":
        return None if isinstance(value, bool) else "must be true or false"
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "must be a number"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be a finite number"  # NaN would pass every bound check below
        if kind == "integer" and not (isinstance(value, int) or float(value).is_integer()):
            return "must be a whole number"
        if "minimum" in prop and value < prop["minimum"]:
            return f"must be at least {prop['minimum']}"
        if "maximum" in prop and value > prop["maximum"]:
            return f"must be at most {prop['maximum']}"
        return None
    options = _options(prop)
    if kind == "array":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "must be a list of choices"
        bad = [v for v in value if options is not None and v not in options]
        if bad:
            return f"{bad[0]!r} is not one of the choices"
        if "minItems" in prop and len(value) < prop["minItems"]:
            return f"choose at least {prop['minItems']}"
        if "maxItems" in prop and len(value) > prop["maxItems"]:
            return f"choose at most {prop['maxItems']}"
        return None
    if kind == "string":
        if not isinstance(value, str):
            return "must be text"
        if options is not None:
            return None if value in options else f"{value!r} is not one of the choices"
        if "minLength" in prop and len(value) < prop["minLength"]:
            return f"must be at least {prop['minLength']} characters"
        if "maxLength" in prop and len(value) > prop["maxLength"]:
            return f"must be at most {prop['maxLength']} characters"
        return _check_format(prop.get("format"), value)
    return f"unsupported type {kind!r}"


def _check_format(fmt: str | None, value: str) -> str | None:
    if fmt == "email" and not _EMAIL.match(value):
        return "must be an email address"
    if fmt == "uri" and not _URI.match(value):
        return "must be a URI such as https://example.com"
    if fmt == "date" and not _is_full_date(value):
        return "must be a date such as 2026-09-01"
    if fmt == "date-time" and not _is_date_time(value):
        return "must be a date and time with its offset, such as 2026-09-01T18:30:00Z"
    return None


def _is_full_date(value: str) -> bool:
    """RFC 3339 ``full-date``: YYYY-MM-DD, a real day of a real month."""
    m = _FULL_DATE.fullmatch(value)
    if m is None:
        return False
    try:
        dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


def _is_date_time(value: str) -> bool:
    """RFC 3339 ``date-time``: full-date "T" hh:mm:ss[.frac] ("Z" / +hh:mm / -hh:mm).

    A leap second (ss = 60) is allowed only where one can happen: at 23:59:60 UTC.
    """
    m = _DATE_TIME.fullmatch(value)
    if m is None or not _is_full_date(m[1]):
        return False
    hour, minute, second = int(m[2]), int(m[3]), int(m[4])
    offset = 0
    if m[6] not in ("Z", "z"):
        off_h, off_m = int(m[7]), int(m[8])
        if off_h > 23 or off_m > 59:
            return False
        offset = (off_h * 60 + off_m) * (1 if m[6][0] == "+" else -1)
    if hour > 23 or minute > 59 or second > 60:
        return False
    if second == 60:
        utc_minutes = (hour * 60 + minute - offset) % (24 * 60)
        return utc_minutes == 23 * 60 + 59
    return True


def validate_content(schema: dict[str, Any], content: Any) -> dict[str, str]:
    """Problems keyed by field name; an empty dict means the content fits the schema."""
    if not isinstance(content, dict):
        return {"": "content must be an object"}
    props: dict[str, Any] = schema.get("properties", {})
    problems: dict[str, str] = {}
    for name in schema.get("required", []):
        if content.get(name) is None:
            problems[name] = "is required"
    for name, value in content.items():
        if name not in props:
            continue  # unknown fields are ignored, as with any JSON object
        if value is None:
            continue
        problem = validate_value(props[name], value)
        if problem:
            problems[name] = problem
    return problems


def checked_content(schema: dict[str, Any], content: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """``(usable, problems)`` for an accepted form's content (ELIC-14).

    With no problems, ``usable`` holds only the form's own fields, each valid, a whole-number
    ``integer`` answer as an ``int`` (JSON's ``3.0`` is the integer 3). With problems it is
    empty: nothing of an answer that does not fit may be acted on. An ``accept`` without
    content is checked as ``{}``.
    """
    content = {} if content is None else content
    problems = validate_content(schema, content)
    if problems:
        return {}, problems
    props: dict[str, Any] = schema.get("properties", {})
    usable: dict[str, Any] = {}
    for name, value in content.items():
        if name not in props or value is None:
            continue
        if props[name].get("type") == "integer":
            value = int(value)
        usable[name] = value
    return usable, {}


def explain(problems: dict[str, str]) -> str:
    """``{"party": "must be at most 12"}`` -> ``"Please check your answer: party must be at
    most 12."``, said before the question when it is asked again (ELIC-14, MRTR-E4)."""
    parts = [f"{name} {problem}" if name else problem for name, problem in problems.items()]
    return "Please check your answer: " + "; ".join(parts) + "."
