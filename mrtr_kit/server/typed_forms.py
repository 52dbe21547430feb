"""Typed forms: a pydantic model as a form's ``requestedSchema`` (ELIC-5) and its answer.

``form_schema(Model)`` derives the flat form schema from ``Model.model_json_schema()``: a
``$ref`` to an enum is inlined, ``X | None`` becomes ``X`` (not required, no ``None``
default), an integer's ``gt``/``lt`` become ``minimum``/``maximum``; titles, descriptions,
enums, the ``date``/``date-time``/``email``/``uri`` formats, bounds and defaults are kept. The
result is checked with ``check_requested_schema``, so a model a flat form cannot show (a nested
model, a list of objects, a ``pattern``) raises ``SchemaOutsideSubset`` naming the field.

``ctx.form(key, message, Model)`` uses it, and ``FormAnswer.value`` is the answer as a
``Model`` (``server.context``). The same idea as the official SDK's and FastMCP's
``ctx.elicit(message, Model)``, written for this kit's subset and re-asks.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, ValidationError

from ..protocol.elicitation import SchemaOutsideSubset, check_requested_schema

__all__ = ["form_schema", "model_problems"]

_SCHEMAS: dict[type[BaseModel], dict[str, Any]] = {}


def form_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The flat ``requestedSchema`` for ``model``, checked against the form subset (ELIC-5).

    Computed once per model class (a copy is returned each time). Call it at module level,
    next to the model (``SCHEMA = form_schema(Booking)``), to check the model when the
    module is imported: a model outside the subset then fails at import, not on the first
    request. ``ctx.form(key, message, Model)`` calls it too.
    """
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"form_schema takes a pydantic model class, not {model!r}")
    schema = _SCHEMAS.get(model)
    if schema is None:
        schema = _flatten(model)
        check_requested_schema(schema)
        _SCHEMAS[model] = schema
    return copy.deepcopy(schema)


def model_problems(exc: ValidationError) -> dict[str, str]:
    """A model's validation errors as ``{field: what was wrong}``, as a re-ask says them."""
    problems: dict[str, str] = {}
    for error in exc.errors():
        loc = error["loc"]
        name = str(loc[0]) if loc else ""
        message = str(error["msg"])
        # pydantic's "Value error, must be ..." -> "must be ..."
        message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
        problems.setdefault(name, message)
    return problems


def _flatten(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs: dict[str, Any] = raw.get("$defs", {})
    props: dict[str, Any] = {}
    for name, prop in raw.get("properties", {}).items():
        props[name] = _field(name, prop, defs)
    schema: dict[str, Any] = {"type": "object", "properties": props}
    for key in ("title", "description"):
        if key in raw:
            schema[key] = raw[key]
    if raw.get("required"):
        schema["required"] = list(raw["required"])
    return schema


def _resolve(
    name: str, node: Any, defs: dict[str, Any], what: str = "a nested model"
) -> dict[str, Any]:
    """``node`` with a ``$ref`` replaced by its definition's type keywords."""
    if not isinstance(node, dict) or "$ref" not in node:
        return dict(node) if isinstance(node, dict) else node
    ref = str(node["$ref"])
    target = defs.get(ref.rsplit("/", 1)[-1])
    if not isinstance(target, dict):
        raise SchemaOutsideSubset(f"property {name!r}: cannot resolve {ref}")
    if target.get("type") == "object" or "properties" in target:
        raise SchemaOutsideSubset(
            f"property {name!r}: {what} ({target.get('title', ref)}) is outside the "
            "flat form subset: forms take only text, numbers, booleans and choices (ELIC-5)"
        )
    # The definition's title and description describe the type, not this field.
    merged = {k: v for k, v in target.items() if k not in ("title", "description")}
    merged.update({k: v for k, v in node.items() if k != "$ref"})
    return merged


def _field(name: str, prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    prop = _resolve(name, prop, defs)
    variants = prop.get("anyOf")
    if isinstance(variants, list):
        # ``X | None``: a field that may stay empty; an absent answer is the None.
        kept = [v for v in variants if v != {"type": "null"}]
        if len(kept) != 1 or len(kept) == len(variants):
            raise SchemaOutsideSubset(
                f"property {name!r}: a union of types is outside the flat form subset (ELIC-5)"
            )
        inner = _resolve(name, kept[0], defs)
        outer = {k: v for k, v in prop.items() if k != "anyOf"}
        prop = {**inner, **outer}
    if "const" in prop and "enum" not in prop:
        prop["enum"] = [prop.pop("const")]  # ``Literal["x"]``: a choice of one
    if prop.get("default", 0) is None:
        del prop["default"]  # "no answer" is the None default; null is not a form value
    if "title" not in prop:
        prop["title"] = name.replace("_", " ").title()
    if prop.get("type") == "integer":
        if isinstance(prop.get("exclusiveMinimum"), int):
            prop["minimum"] = prop.pop("exclusiveMinimum") + 1
        if isinstance(prop.get("exclusiveMaximum"), int):
            prop["maximum"] = prop.pop("exclusiveMaximum") - 1
    for bound in ("exclusiveMinimum", "exclusiveMaximum"):
        if bound in prop:
            raise SchemaOutsideSubset(
                f"property {name!r}: {bound} (gt/lt) is outside the subset; use ge/le (ELIC-5)"
            )
    if prop.get("type") == "array":
        items = _resolve(name, prop.get("items"), defs, "a list of nested models")
        if isinstance(items, dict):
            items.pop("title", None)
            prop["items"] = items
    return prop
