"""Typed forms: ``ctx.form(key, message, Model)`` with a pydantic model (``server.typed_forms``).

The model becomes a flat ``requestedSchema`` checked against the form subset (ELIC-5) by
``form_schema``, at import when a module calls it; an accepted answer is checked by the schema,
then by the model, and is asked again naming the field when it does not fit (ELIC-14, MRTR-E4);
``answer.value`` is the ``Model``, ``answer.content`` stays the dict; decline and cancel are as
with a dict schema (ELIC-6). Dict schemas are covered by ``test_form_answer.py``.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

from mrtr_kit.protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    RESULT_INPUT_REQUIRED,
)
from mrtr_kit.protocol.elicitation import SchemaOutsideSubset, check_requested_schema
from mrtr_kit.protocol.models import ElicitRequestFormParams, RequestMeta
from mrtr_kit.server import McpServer, RequestContext, form_schema
from mrtr_kit.server.context import FormAnswer
from tests.helpers import request, result, run


class Seating(StrEnum):
    inside = "inside"
    terrace = "terrace"


class Booking(BaseModel):
    """A table for a party."""

    name: str = Field(description="Whose name the table is under", min_length=1, max_length=40)
    party: int = Field(ge=1, le=12, description="How many people")
    when: dt.date = Field(description="The day")
    seating: Seating = Seating.inside
    meal: Literal["lunch", "dinner"] = "dinner"
    high_chair: bool = False
    email: str | None = Field(default=None, json_schema_extra={"format": "email"})
    note: str | None = None

    @field_validator("when")
    @classmethod
    def not_sunday(cls, value: dt.date) -> dt.date:
        if value.weekday() == 6:
            raise ValueError("must not be a Sunday: we are closed")
        return value


BOOKING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Booking",
    "description": "A table for a party.",
    "properties": {
        "name": {
            "type": "string",
            "title": "Name",
            "description": "Whose name the table is under",
            "minLength": 1,
            "maxLength": 40,
        },
        "party": {
            "type": "integer",
            "title": "Party",
            "description": "How many people",
            "minimum": 1,
            "maximum": 12,
        },
        "when": {"type": "string", "title": "When", "description": "The day", "format": "date"},
        "seating": {
            "type": "string",
            "title": "Seating",
            "enum": ["inside", "terrace"],
            "default": "inside",
        },
        "meal": {
            "type": "string",
            "title": "Meal",
            "enum": ["lunch", "dinner"],
            "default": "dinner",
        },
        "high_chair": {"type": "boolean", "title": "High Chair", "default": False},
        "email": {"type": "string", "title": "Email", "format": "email"},
        "note": {"type": "string", "title": "Note"},
    },
    "required": ["name", "party", "when"],
}
MESSAGE = "Which table?"
GOOD = {"name": "Ada", "party": 3.0, "when": "2026-09-01", "seating": "terrace", "extra": 1}


def context(answers: dict[str, Any]) -> RequestContext:
    meta = RequestMeta.model_validate(
        {
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
        }
    )
    return RequestContext("tools/call", "t", {}, meta, None, answers, None)


def read(answer: Any = None) -> FormAnswer[Booking]:
    answers = {} if answer is None else {"table": answer}
    return context(answers).form("table", MESSAGE, Booking, state={"step": 1})


def test_elic_5_form_schema_of_a_model_is_flat_with_titles_descriptions_enums_formats_bounds():
    schema = form_schema(Booking)
    assert schema == BOOKING_SCHEMA
    check_requested_schema(schema)  # inside the subset
    assert "$defs" not in str(schema) and "$ref" not in str(schema)
    schema["title"] = "changed"  # a copy: the cached schema stays as it was
    assert form_schema(Booking) == BOOKING_SCHEMA


def test_elic_5_integer_gt_lt_become_minimum_maximum():
    class Nights(BaseModel):
        nights: int = Field(gt=0, lt=15)

    assert form_schema(Nights)["properties"]["nights"] == {
        "type": "integer",
        "title": "Nights",
        "minimum": 1,
        "maximum": 14,
    }


class Address(BaseModel):
    street: str


class WithNested(BaseModel):
    address: Address


class WithList(BaseModel):
    stops: list[Address]


class WithExclusiveFloat(BaseModel):
    price: float = Field(gt=0)


class WithPattern(BaseModel):
    code: str = Field(pattern=r"^[A-Z]{3}$")


class WithUnion(BaseModel):
    size: int | str


@pytest.mark.parametrize(
    ("model", "says"),
    [
        (WithNested, "property 'address': a nested model (Address) is outside"),
        (WithList, "property 'stops': a list of nested models (Address) is outside"),
        (WithExclusiveFloat, "property 'price': exclusiveMinimum (gt/lt) is outside"),
        (WithPattern, "property 'code': keywords ['pattern'] are outside"),
        (WithUnion, "property 'size': a union of types is outside"),
    ],
)
def test_elic_5_a_model_outside_the_subset_fails_at_form_schema_naming_the_field(model, says):
    with pytest.raises(SchemaOutsideSubset) as info:
        form_schema(model)
    assert str(info.value).startswith(says)
    with pytest.raises(SchemaOutsideSubset):  # and where a handler asks with it
        context({}).form("k", "?", model)


def test_form_schema_takes_only_a_model_class():
    with pytest.raises(TypeError):
        form_schema(Booking(name="a", party=1, when=dt.date(2026, 9, 1)))  # type: ignore[arg-type]


def test_mrtr_e4_no_answer_yet_asks_with_the_models_schema_and_the_state():
    answer = read()
    assert answer.needs_asking and answer.action is None
    ask = answer.ask()
    params = ask.requests["table"].params
    assert isinstance(params, ElicitRequestFormParams)
    assert params.requested_schema == BOOKING_SCHEMA and params.message == MESSAGE
    assert ask.state == {"step": 1}
    with pytest.raises(ValueError, match="no accepted answer"):
        _ = answer.value


def test_elic_14_an_accepted_answer_is_a_model_instance_with_typed_values():
    answer = read({"action": "accept", "content": GOOD})
    assert answer.accepted and not answer.needs_asking
    booking = answer.value
    assert isinstance(booking, Booking)
    assert booking == Booking(
        name="Ada", party=3, when=dt.date(2026, 9, 1), seating=Seating.terrace
    )
    assert type(booking.when) is dt.date and type(booking.party) is int
    assert booking.seating is Seating.terrace and booking.meal == "dinner"  # default filled
    assert booking.high_chair is False and booking.note is None
    # content stays the checked dict, as with a dict schema
    assert answer.content == {"name": "Ada", "party": 3, "when": "2026-09-01", "seating": "terrace"}


@pytest.mark.parametrize(
    ("content", "problems"),
    [
        ({"name": "Ada", "party": 13, "when": "2026-09-01"}, {"party": "must be at most 12"}),
        (
            {"name": "Ada", "party": 2, "when": "1 Sept"},
            {"when": "must be a date such as 2026-09-01"},
        ),
        (
            {"name": "Ada", "party": 2, "when": "2026-09-01", "meal": "tea"},
            {"meal": "'tea' is not one of the choices"},
        ),
        ({"party": 2, "when": "2026-09-01"}, {"name": "is required"}),
        # the schema lets it through, the model's own validator does not
        (
            {"name": "Ada", "party": 2, "when": "2026-09-06"},
            {"when": "must not be a Sunday: we are closed"},
        ),
    ],
)
def test_elic_14_mrtr_e4_a_bad_answer_asks_again_naming_the_field(content, problems):
    answer = read({"action": "accept", "content": content})
    assert answer.needs_asking and not answer.accepted
    assert answer.problems == problems and answer.content == {}
    with pytest.raises(ValueError):
        _ = answer.value
    ((name, problem),) = problems.items()
    params = answer.ask().requests["table"].params
    assert isinstance(params, ElicitRequestFormParams)
    assert params.message == f"Please check your answer: {name} {problem}. {MESSAGE}"


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_elic_6_decline_and_cancel_are_unchanged_with_a_model(action):
    answer = read({"action": action})
    assert answer.declined == (action == "decline") and answer.cancelled == (action == "cancel")
    assert not answer.needs_asking and answer.content == {} and answer.problems == {}
    with pytest.raises(ValueError):
        _ = answer.value


def test_a_dict_schema_value_is_its_content():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    answer = context({"k": {"action": "accept", "content": {"n": 2.0}}}).form("k", "?", schema)
    assert answer.accepted and answer.value == answer.content == {"n": 2}


# -- through the core: two rounds ------------------------------------------------------------


def booking_server() -> McpServer:
    server = McpServer("typed-forms-test", state_key=b"t" * 32)

    @server.tool(description="Books a table from a typed form.")
    def book(ctx: RequestContext) -> Any:
        table = ctx.form("table", MESSAGE, Booking, state={"asked": True})
        if table.needs_asking:
            return table.ask()
        if not table.accepted:
            return f"no booking ({table.action})"
        b = table.value
        return f"{b.name}: {b.party} on {b.when:%A %d %B}, {b.seating.value}, {b.meal}"

    return server


def call(server: McpServer, **params: Any) -> Any:
    body = {"name": "book", "arguments": {}, **params}
    return run(server, request("tools/call", body, capabilities={"elicitation": {"form": {}}}))


def test_mrtr_e4_elic_14_a_typed_form_through_mcpserver_handle_in_two_rounds():
    server = booking_server()
    first = result(call(server))
    assert first["resultType"] == RESULT_INPUT_REQUIRED and first["requestState"]
    asked = first["inputRequests"]["table"]["params"]
    assert asked["requestedSchema"] == BOOKING_SCHEMA and asked["message"] == MESSAGE

    answer = {"table": {"action": "accept", "content": GOOD}}
    done = result(call(server, inputResponses=answer, requestState=first["requestState"]))
    assert done["content"][0]["text"] == "Ada: 3 on Tuesday 01 September, terrace, dinner"


def test_elic_14_a_strict_model_reads_the_answer_as_json():
    """The content is JSON data: a strict model's date field takes "2026-09-01"."""

    class Strict(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")
        when: dt.date
        kind: Literal["table"] = "table"

    assert form_schema(Strict)["properties"]["kind"] == {
        "type": "string",
        "title": "Kind",
        "enum": ["table"],
        "default": "table",
    }
    answers = {"k": {"action": "accept", "content": {"when": "2026-09-01"}}}
    answer = context(answers).form("k", "?", Strict)
    assert answer.accepted and answer.value == Strict(when=dt.date(2026, 9, 1))
