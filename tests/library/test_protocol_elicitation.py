"""The form-mode answer checks of ``mrtr_kit.protocol.elicitation`` (ELIC-14, digest §9.2).

These run on the server (``ctx.form``), in the client (``check_answer``) and in the Jupyter
form, so one strict check serves all three.
"""

from __future__ import annotations

import pytest

from mrtr_kit.protocol.elicitation import (
    SchemaOutsideSubset,
    check_requested_schema,
    checked_content,
    validate_value,
)

DATE = {"type": "string", "format": "date"}
DATE_TIME = {"type": "string", "format": "date-time"}


@pytest.mark.parametrize("good", ["2026-09-01", "2024-02-29", "0001-01-01", "9999-12-31"])
def test_elic_14_date_accepts_rfc_3339_full_dates(good):
    """ELIC-14: ``format: date`` is RFC 3339 ``full-date``: YYYY-MM-DD."""
    assert validate_value(DATE, good) is None


@pytest.mark.parametrize(
    "bad",
    [
        "20260901",  # ISO 8601 basic format: Python's fromisoformat takes it
        "2026-W36-2",  # ISO week date: Python's fromisoformat takes it too
        "2026-244",  # ordinal date
        "2026-09-1",
        "2026-9-01",
        "2026-02-30",
        "2025-02-29",
        "2026-13-01",
        "2026-09-01T00:00:00Z",
        " 2026-09-01",
        "2026-09-01\n",
        "２０２６-09-01",  # fullwidth digits are digits to Python's str.isdigit
        "",
    ],
)
def test_elic_14_date_refuses_what_rfc_3339_does_not_allow(bad):
    assert validate_value(DATE, bad) is not None


@pytest.mark.parametrize(
    "good",
    [
        "2026-09-01T18:30:00Z",
        "2026-09-01t18:30:00z",  # RFC 3339 §5.6: T and Z may be lower case
        "2026-09-01T18:30:00.123456789+02:00",
        "2026-09-01T18:30:00-05:30",
        "1998-12-31T23:59:60Z",  # a leap second, at the end of a UTC day
        "1998-12-31T15:59:60-08:00",  # the same leap second, in another offset
    ],
)
def test_elic_14_date_time_accepts_rfc_3339_date_times(good):
    """ELIC-14: ``format: date-time`` is RFC 3339 ``date-time``, offset included."""
    assert validate_value(DATE_TIME, good) is None


@pytest.mark.parametrize(
    "bad",
    [
        "2026-09-01 18:30:00Z",  # a space for T
        "2026-09-01T18:30:00",  # no offset
        "2026-09-01T18:30Z",  # no seconds
        "20260901T183000Z",  # basic format
        "2026-W36-2T18:30:00Z",
        "2026-09-01T24:00:00Z",
        "2026-09-01T18:60:00Z",
        "2026-09-01T18:30:61Z",
        "2026-09-01T18:30:60Z",  # a leap second that is not at 23:59:60 UTC
        "2026-09-01T18:30:00+24:00",
        "2026-09-01T18:30:00+0200",
        "2026-09-01T18:30:00.Z",
        "2026-09-31T18:30:00Z",
    ],
)
def test_elic_14_date_time_refuses_what_rfc_3339_does_not_allow(bad):
    assert validate_value(DATE_TIME, bad) is not None


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_elic_14_numbers_must_be_finite(bad):
    """ELIC-14: NaN passes every ``<``/``>`` bound check, so it is refused first."""
    for prop in ({"type": "number"}, {"type": "number", "minimum": 0, "maximum": 10}):
        assert validate_value(prop, bad) is not None
    assert validate_value({"type": "integer"}, bad) is not None


def test_elic_14_checked_content_keeps_only_valid_form_fields():
    """ELIC-14: what a handler may act on: the form's own fields, valid, integers as int."""
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "ok": {"type": "boolean"},
        },
        "required": ["n"],
    }
    assert checked_content(schema, {"n": 3.0, "ok": False, "extra": "x"}) == (
        {"n": 3, "ok": False},
        {},
    )
    content, problems = checked_content(schema, {"n": 0, "ok": "false"})
    assert content == {} and set(problems) == {"n", "ok"}
    assert checked_content(schema, None)[1] == {"n": "is required"}


def test_elic_5_a_schema_that_passed_is_checked_again_once_changed():
    """ELIC-5 (KIT): a form that passed and is then changed in place is checked again and
    refused, even for a value that is == the old one (True and 1.0 are 1 to Python, not whole
    numbers to the subset) or a tuple where a list was (a cache keyed by value would miss it)."""
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "minLength": 1}},
        "required": ["name"],
    }
    check_requested_schema(schema)
    for equal_but_not_int in (True, 1.0):
        schema["properties"]["name"]["minLength"] = equal_but_not_int
        with pytest.raises(SchemaOutsideSubset, match="minLength must be a whole number"):
            check_requested_schema(schema)
    schema["properties"]["name"]["minLength"] = 1
    schema["required"] = ("name",)
    with pytest.raises(SchemaOutsideSubset, match="required must list"):
        check_requested_schema(schema)
    schema["required"] = ["name"]
    check_requested_schema(schema)  # as it was: passes again


def test_elic_5_a_schema_that_is_not_plain_data_is_checked_too():
    """ELIC-5 (KIT): a schema that is not plain data (a dict subclass, say) is checked like
    any other: refused when outside the subset, accepted inside it."""

    class Form(dict):
        pass

    with pytest.raises(SchemaOutsideSubset, match="properties object"):
        check_requested_schema(Form(type="object"))
    check_requested_schema(Form(type="object", properties={"ok": {"type": "boolean"}}))
