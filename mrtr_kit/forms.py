"""The form engine for form-mode elicitation, in plain Python: no widgets, no terminal.

``FormSpec.from_schema`` turns a ``requestedSchema`` (ELIC-5, digest §9.2) into one
``FieldSpec`` per property. Each field parses what a person gave it (``parse`` for a widget's
value, ``parse_text`` for a typed line) and checks the typed value (``problem``), with the
rules of ``protocol.elicitation``; ``FormSpec.respond`` and ``FormSpec.accept`` turn a whole
answer into the ``ElicitResult`` to send, or into one problem per field when it does not fit
(ELIC-14). The course's notebook widgets (``mrtr_course.widgets.form_widgets``) and terminal form
(``mrtr_course.console``) only render these fields and collect what was typed; every rule lives here
or in ``protocol.elicitation``, so tests check them without a browser, a kernel or a terminal. The
server reads answers with the same rules: ``RequestContext.form`` (``server.context``).

Raw values are what a widget holds: text for text, number, date-time and email fields (an empty
string means "not answered"), a ``datetime.date`` or text for a date, ``True``/``False`` for a
checkbox, the chosen value or ``None`` for a single-select, a list of values for a multi-select.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from .protocol.elicitation import (
    SchemaOutsideSubset,
    check_requested_schema,
    checked_content,
    choice_options,
    validate_value,
)
from .protocol.models import ElicitResult

Action = Literal["accept", "decline", "cancel"]
FieldKind = Literal[
    "text", "email", "uri", "date", "date-time", "integer", "number", "boolean", "choice", "choices"
]

__all__ = [
    "MISSING",
    "Action",
    "Choice",
    "FieldKind",
    "FieldSpec",
    "FormOutcome",
    "FormSpec",
    "SchemaOutsideSubset",
]

_FORMAT_HINTS = {
    "email": "an email address",
    "uri": "a link such as https://example.com",
    "date": "a date, sent as YYYY-MM-DD",  # a picker shows the browser's own format
    "date-time": "a date and time, e.g. 2026-09-01T18:30:00Z",
}


class _Missing:
    """The field was left empty (distinct from ``None``, ``False`` or ``0``)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Choice:
    """One option of a choice field: the ``value`` sent (a string, ELIC-4), the ``label`` shown."""

    value: str  # what is sent (ELIC-4: always a string)
    label: str  # what the person sees


@dataclass(frozen=True)
class FieldSpec:
    """One property of a ``requestedSchema``, ready to render."""

    name: str
    kind: FieldKind
    title: str
    description: str | None
    required: bool
    schema: Mapping[str, Any]
    choices: tuple[Choice, ...] = ()

    @property
    def has_default(self) -> bool:
        """True when the schema gives this field a ``default`` (ELIC-3)."""
        return "default" in self.schema

    @property
    def default(self) -> Any:
        """The schema's ``default`` for this field, or None."""
        return self.schema.get("default")

    def hint(self) -> str:
        """What a valid answer looks like, e.g. ``"a whole number from 1 to 12"``."""
        s = self.schema
        if self.kind in ("integer", "number"):
            what = "a whole number" if self.kind == "integer" else "a number"
            low, high = s.get("minimum"), s.get("maximum")
            if low is not None and high is not None:
                return f"{what} from {low} to {high}"
            if low is not None:
                return f"{what}, at least {low}"
            if high is not None:
                return f"{what}, at most {high}"
            return what
        if self.kind == "choices":
            low, high = s.get("minItems"), s.get("maxItems")
            if low is not None and high is not None:
                return f"choose {low} to {high}"
            if high is not None:
                return f"choose up to {high}"
            if low is not None:
                return f"choose at least {low}"
            return "choose any"
        if self.kind == "choice":
            return "choose one"
        if self.kind == "boolean":
            return "yes or no"
        parts = [_FORMAT_HINTS.get(self.kind, "text")]
        low, high = s.get("minLength"), s.get("maxLength")
        if low is not None and high is not None:
            parts.append(f"{low}–{high} characters")
        elif low is not None:
            parts.append(f"at least {low} characters")
        elif high is not None:
            parts.append(f"at most {high} characters")
        return ", ".join(parts)

    def initial(self) -> Any:
        """The raw value a fresh form shows: the default when there is one (ELIC-3)."""
        if self.kind == "boolean":
            return bool(self.default) if self.has_default else False
        if self.kind == "choices":
            return list(self.default) if self.has_default else []
        if self.kind == "choice":
            return self.default if self.has_default else None
        if not self.has_default:
            return ""
        if self.kind == "date":
            return dt.date.fromisoformat(self.default)
        return str(self.default)

    def parse(self, raw: Any) -> tuple[Any, str | None]:
        """(typed value or ``MISSING``, problem or ``None``) for one raw widget value."""
        if self.kind == "boolean":
            return (raw, None) if isinstance(raw, bool) else (MISSING, "must be true or false")
        if self.kind == "choice":
            return (MISSING, None) if raw is None or raw == "" else (raw, None)
        if self.kind == "choices":
            values = list(raw or ())
            return (MISSING, None) if not values and not self.required else (values, None)
        if self.kind == "date" and isinstance(raw, dt.date):
            return raw.isoformat(), None
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            return MISSING, None
        if self.kind in ("integer", "number"):
            return _parse_number(raw, whole=self.kind == "integer")
        return (raw, None) if isinstance(raw, str) else (MISSING, "must be text")

    def parse_text(self, text: str) -> tuple[Any, str | None]:
        """(typed value or ``MISSING``, problem or ``None``) for one line typed at a terminal.

        ``y``/``n`` answer a yes-or-no field; a choice is picked by its number in the list or
        by its value; several choices are separated by commas.
        """
        text = text.strip()
        if not text:
            return MISSING, None
        if self.kind == "boolean":
            lowered = text.lower()
            if lowered in ("y", "yes", "true"):
                return True, None
            if lowered in ("n", "no", "false"):
                return False, None
            return MISSING, "answer y or n"
        if self.kind == "choices":
            return [self._pick(t) for t in text.split(",") if t.strip()], None
        if self.kind == "choice":
            return self._pick(text), None
        return self.parse(text)

    def _pick(self, token: str) -> str:
        """An option by its number (1, 2, ...) or by its value."""
        token = token.strip()
        if token.isdigit() and 1 <= int(token) <= len(self.choices):
            return self.choices[int(token) - 1].value
        return token

    def problem(self, value: Any) -> str | None:
        """What is wrong with a parsed value (``MISSING`` = left empty), or ``None`` (ELIC-14)."""
        if value is MISSING:
            return "is required" if self.required else None
        return validate_value(dict(self.schema), value)


def _parse_number(raw: Any, *, whole: bool) -> tuple[Any, str | None]:
    problem = "must be a whole number" if whole else "must be a number"
    if isinstance(raw, bool):
        return MISSING, problem
    if isinstance(raw, int | float):
        value: int | float = raw
    else:
        text = str(raw).strip()
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                return MISSING, problem
    if isinstance(value, float) and value.is_integer() and whole:
        value = int(value)  # "3.0" typed into a whole-number field is 3
    if whole and not isinstance(value, int):
        return MISSING, problem
    if isinstance(value, float) and not math.isfinite(value):  # "nan", "inf": not usable
        return MISSING, problem
    return value, None


def _kind(prop: Mapping[str, Any]) -> FieldKind:
    """The field kind of a property already checked against the subset (ELIC-5)."""
    kind = prop["type"]
    if kind == "array":
        return "choices"
    if kind == "string":
        if choice_options(dict(prop)) is not None:
            return "choice"
        return cast(FieldKind, prop.get("format", "text"))
    return cast(FieldKind, kind)


@dataclass(frozen=True)
class FormOutcome:
    """What pressing a button gives: an answer to send, or problems to show (nothing sent)."""

    result: ElicitResult | None
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when there is an answer to send (no problems)."""
        return self.result is not None

    def to_wire(self) -> dict[str, Any] | None:
        """The ``inputResponses`` value, exactly as sent (ELIC-6, ELIC-7)."""
        return self.result.to_wire() if self.result is not None else None


@dataclass(frozen=True)
class FormSpec:
    """A whole form: the server's message and one ``FieldSpec`` per property, in order."""

    message: str
    schema: Mapping[str, Any]
    fields: tuple[FieldSpec, ...]

    @classmethod
    def from_schema(cls, schema: Any, message: str = "") -> FormSpec:
        """Raises ``SchemaOutsideSubset`` with a readable reason for a schema no flat form can
        show (ELIC-5): nested objects, free arrays, unknown keywords or formats."""
        check_requested_schema(schema)
        required = set(schema.get("required", []))
        fields = []
        for name, prop in schema["properties"].items():
            options = choice_options(prop) or []
            fields.append(
                FieldSpec(
                    name=name,
                    kind=_kind(prop),
                    title=prop.get("title") or name,
                    description=prop.get("description"),
                    required=name in required,
                    schema=prop,
                    choices=tuple(Choice(value, label) for value, label in options),
                )
            )
        return cls(message=message, schema=schema, fields=tuple(fields))

    def field(self, name: str) -> FieldSpec:
        """The field ``name``; ``KeyError`` if the form has none."""
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(f"no field {name!r}; the form has {[f.name for f in self.fields]}")

    def initial_values(self) -> dict[str, Any]:
        """The raw value each field shows on a fresh form, by field name."""
        return {f.name: f.initial() for f in self.fields}

    def collect(self, raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """(content, problems) for raw values; a field absent from ``raw`` keeps its initial
        value. ``problems`` is keyed by field name, ready to show beside each field."""
        unknown = set(raw) - {f.name for f in self.fields}
        if unknown:
            raise KeyError(f"no such fields: {sorted(unknown)}")
        content: dict[str, Any] = {}
        problems: dict[str, str] = {}
        for spec in self.fields:
            value, problem = spec.parse(raw.get(spec.name, spec.initial()))
            problem = problem or spec.problem(value)  # ELIC-14: check before sending
            if problem is not None:
                problems[spec.name] = problem
            elif value is not MISSING:
                content[spec.name] = value
        # Each field passed the checks a server runs on receipt (``checked_content``), so the
        # form never sends what the server rejects (tests/library/test_forms_spec.py: they agree).
        return ({}, problems) if problems else (content, {})

    def respond(self, action: Action, raw: Mapping[str, Any] | None = None) -> FormOutcome:
        """The ``ElicitResult`` for a button press. ``content`` only for ``accept`` (ELIC-7);
        an ``accept`` that does not fit the schema gives problems and no result."""
        if action in ("decline", "cancel"):
            return FormOutcome(ElicitResult(action=action))
        if action != "accept":
            raise ValueError(f"action must be accept, decline or cancel, not {action!r}")
        return self._accepted(*self.collect(raw or {}))

    def accept(self, content: Mapping[str, Any]) -> FormOutcome:
        """The ``accept`` answer for already typed values (from ``parse_text``, say): the
        ``ElicitResult`` to send, or the problems when ``content`` does not fit (ELIC-14)."""
        return self._accepted(*checked_content(dict(self.schema), dict(content)))

    @staticmethod
    def _accepted(content: dict[str, Any], problems: dict[str, str]) -> FormOutcome:
        if problems:
            return FormOutcome(None, problems)
        return FormOutcome(ElicitResult(action="accept", content=content))

    def describe(self, raw: Mapping[str, Any] | None = None) -> str:
        """The form as plain text (how a stored notebook shows it on GitHub)."""
        values = {**self.initial_values(), **(raw or {})}
        lines = []
        for spec in self.fields:
            mark = " *" if spec.required else ""
            shown = _shown(spec, values[spec.name])
            lines.append(f"  {spec.title}{mark} ({spec.hint()}): {shown}")
            if spec.description:
                lines.append(f"      {spec.description}")
        return "\n".join(lines)


def _shown(spec: FieldSpec, raw: Any) -> str:
    if spec.kind == "boolean":
        return "[x]" if raw else "[ ]"
    labels = {c.value: c.label for c in spec.choices}
    if spec.kind == "choices":
        options = " | ".join(f"[{'x' if c.value in raw else ' '}] {c.label}" for c in spec.choices)
        return options
    if spec.kind == "choice":
        picked = labels.get(raw, "—") if raw is not None else "—"
        return f"{picked}  (options: {' | '.join(labels.values())})"
    if isinstance(raw, dt.date):
        return raw.isoformat()
    if raw in ("", None):
        return "___"
    return str(raw) if spec.kind in ("integer", "number") else repr(raw)
