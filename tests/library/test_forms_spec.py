"""The form engine without widgets (``mrtr_kit.forms``): every property kind and
constraint of the form-mode subset (digest §9.2), valid and invalid answers, and the exact
``ElicitResult`` of each of the three actions (ELIC-6, ELIC-7).
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest

from mrtr_kit.forms import MISSING, FormSpec, SchemaOutsideSubset


def form(**props):
    """A one-or-more-field form; a property named with a trailing ``_req`` is required."""
    properties = {name.removesuffix("_req"): p for name, p in props.items()}
    required = [name.removesuffix("_req") for name in props if name.endswith("_req")]
    return FormSpec.from_schema({"type": "object", "properties": properties, "required": required})


def accept(spec, **raw):
    return spec.respond("accept", raw)


# -- which widget kind each property becomes ------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "kind"),
    [
        ({"type": "string"}, "text"),
        ({"type": "string", "format": "email"}, "email"),
        ({"type": "string", "format": "uri"}, "uri"),
        ({"type": "string", "format": "date"}, "date"),
        ({"type": "string", "format": "date-time"}, "date-time"),
        ({"type": "integer"}, "integer"),
        ({"type": "number"}, "number"),
        ({"type": "boolean"}, "boolean"),
        ({"type": "string", "enum": ["a", "b"]}, "choice"),
        ({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}, "choice"),
        ({"type": "string", "enum": ["a"], "enumNames": ["Label A"]}, "choice"),
        ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, "choices"),
        ({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}, "choices"),
    ],
)
def test_each_property_kind_becomes_one_field_kind(prop, kind):
    assert form(x=prop).field("x").kind == kind


def test_titles_descriptions_required_marks_and_labels_are_kept():
    spec = form(
        login_req={"type": "string", "title": "Your login", "description": "No password."},
        units={
            "type": "string",
            "oneOf": [{"const": "c", "title": "Celsius"}, {"const": "f", "title": "Fahrenheit"}],
        },
        legacy={"type": "string", "enum": ["x", "y"], "enumNames": ["Ex", "Why"]},
        plain={"type": "string"},
    )
    login, units = spec.field("login"), spec.field("units")
    assert (login.title, login.description, login.required) == ("Your login", "No password.", True)
    assert not units.required
    assert [(c.value, c.label) for c in units.choices] == [("c", "Celsius"), ("f", "Fahrenheit")]
    assert [(c.value, c.label) for c in spec.field("legacy").choices] == [("x", "Ex"), ("y", "Why")]
    assert spec.field("plain").title == "plain"  # no title: the property name is shown
    text = spec.describe()
    assert "Your login * (text)" in text and "No password." in text
    assert "Celsius | Fahrenheit" in text


def test_defaults_prefill_the_form():
    spec = form(
        name={"type": "string", "default": "Ada"},
        when={"type": "string", "format": "date", "default": "2026-09-01"},
        party={"type": "integer", "default": 2},
        ok={"type": "boolean", "default": True},
        pace={"type": "string", "enum": ["slow", "fast"], "default": "fast"},
        tags={"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["b"]},
    )
    assert spec.initial_values() == {
        "name": "Ada",
        "when": dt.date(2026, 9, 1),
        "party": "2",
        "ok": True,
        "pace": "fast",
        "tags": ["b"],
    }
    # ELIC-3: accepting the untouched form sends exactly the defaults.
    assert spec.respond("accept").to_wire() == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "when": "2026-09-01",
            "party": 2,
            "ok": True,
            "pace": "fast",
            "tags": ["b"],
        },
    }


def test_fields_without_defaults_start_empty():
    spec = form(
        a={"type": "string"},
        b={"type": "integer"},
        c={"type": "boolean"},
        d={"type": "string", "enum": ["x"]},
        e={"type": "array", "items": {"type": "string", "enum": ["x"]}},
    )
    assert spec.initial_values() == {"a": "", "b": "", "c": False, "d": None, "e": []}


# -- strings ------------------------------------------------------------------------------------


def test_string_length_limits():
    spec = form(login_req={"type": "string", "minLength": 3, "maxLength": 5})
    assert accept(spec, login="ada").ok
    assert accept(spec, login="abcde").ok
    assert accept(spec, login="al").problems == {"login": "must be at least 3 characters"}
    assert accept(spec, login="abcdef").problems == {"login": "must be at most 5 characters"}
    assert spec.field("login").hint() == "text, 3–5 characters"


@pytest.mark.parametrize(
    ("fmt", "good", "bad", "problem"),
    [
        ("email", "ada@example.org", "ada.example.org", "must be an email address"),
        ("uri", "https://example.org/x", "example dot org", "must be a URI"),
        ("date", "2026-09-01", "01/09/2026", "must be a date"),
        ("date-time", "2026-09-01T18:30:00Z", "tomorrow at six", "must be a date and time"),
    ],
)
def test_string_formats(fmt, good, bad, problem):
    spec = form(v_req={"type": "string", "format": fmt})
    assert accept(spec, v=good).ok
    assert accept(spec, v=bad).problems["v"].startswith(problem)


def test_a_date_field_takes_a_date_object_from_its_picker():
    spec = form(when_req={"type": "string", "format": "date"})
    assert accept(spec, when=dt.date(2026, 9, 1)).to_wire() == {
        "action": "accept",
        "content": {"when": "2026-09-01"},
    }


def test_a_date_hint_names_the_format_that_is_sent_not_the_one_a_browser_shows():
    """A date picker shows the browser's local format (mm/dd/yyyy in en-US); the answer is
    always sent as YYYY-MM-DD (issue 9, item 14)."""
    spec = form(when_req={"type": "string", "format": "date"})
    assert spec.field("when").hint() == "a date, sent as YYYY-MM-DD"


def test_empty_or_blank_text_is_not_an_answer():
    spec = form(name_req={"type": "string"}, note={"type": "string"})
    assert accept(spec, name="  ", note="").problems == {"name": "is required"}
    outcome = accept(spec, name="Ada", note="")
    assert outcome.to_wire() == {"action": "accept", "content": {"name": "Ada"}}  # note omitted


# -- numbers ------------------------------------------------------------------------------------


def test_integer_range_and_whole_numbers():
    spec = form(party_req={"type": "integer", "minimum": 1, "maximum": 12})
    assert accept(spec, party="4").to_wire()["content"] == {"party": 4}
    assert accept(spec, party="3.0").to_wire()["content"] == {"party": 3}
    assert accept(spec, party=12).ok
    assert accept(spec, party="0").problems == {"party": "must be at least 1"}
    assert accept(spec, party="13").problems == {"party": "must be at most 12"}
    assert accept(spec, party="2.5").problems == {"party": "must be a whole number"}
    assert accept(spec, party="four").problems == {"party": "must be a whole number"}
    assert accept(spec, party="").problems == {"party": "is required"}
    assert spec.field("party").hint() == "a whole number from 1 to 12"


def test_number_accepts_decimals_and_checks_bounds():
    spec = form(temp={"type": "number", "minimum": -10.5, "maximum": 40})
    assert accept(spec, temp="21.5").to_wire()["content"] == {"temp": 21.5}
    assert accept(spec, temp="-10.5").ok
    assert accept(spec, temp="-11").problems == {"temp": "must be at least -10.5"}
    assert accept(spec, temp="nan").problems == {"temp": "must be a number"}
    assert accept(spec, temp="inf").problems == {"temp": "must be a number"}
    assert accept(spec, temp=True).problems == {"temp": "must be a number"}
    assert accept(spec, temp="").ok  # optional and empty: simply not sent


@pytest.mark.parametrize(
    ("prop", "hint"),
    [
        ({"type": "number"}, "a number"),
        ({"type": "number", "minimum": 0}, "a number, at least 0"),
        ({"type": "integer", "maximum": 9}, "a whole number, at most 9"),
    ],
)
def test_number_hints(prop, hint):
    assert form(n=prop).field("n").hint() == hint


# -- booleans and choices -----------------------------------------------------------------------


def test_boolean_sends_true_and_false():
    spec = form(ok_req={"type": "boolean"})
    assert accept(spec, ok=True).to_wire()["content"] == {"ok": True}
    assert accept(spec, ok=False).to_wire()["content"] == {"ok": False}
    assert accept(spec, ok="yes").problems == {"ok": "must be true or false"}


def test_single_select_plain_and_titled():
    plain = form(u_req={"type": "string", "enum": ["celsius", "fahrenheit"]})
    assert accept(plain, u="celsius").to_wire()["content"] == {"u": "celsius"}
    assert accept(plain, u="kelvin").problems == {"u": "'kelvin' is not one of the choices"}
    assert accept(plain, u=None).problems == {"u": "is required"}
    titled = form(p={"type": "string", "oneOf": [{"const": "slow", "title": "Relaxed"}]})
    assert accept(titled, p="slow").to_wire()["content"] == {"p": "slow"}  # value, not label
    assert accept(titled, p="Relaxed").problems == {"p": "'Relaxed' is not one of the choices"}
    assert accept(titled, p="").ok  # optional, nothing chosen


def test_multi_select_plain_and_titled_with_item_limits():
    plain = form(
        tags={
            "type": "array",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["food", "museums", "outdoors"]},
        }
    )
    assert accept(plain, tags=["food"]).to_wire()["content"] == {"tags": ["food"]}
    assert accept(plain, tags=["food", "museums", "outdoors"]).problems == {
        "tags": "choose at most 2"
    }
    assert accept(plain, tags=["shopping"]).problems == {
        "tags": "'shopping' is not one of the choices"
    }
    assert accept(plain, tags=[]).ok  # optional and empty: not sent, so minItems does not apply
    assert plain.field("tags").hint() == "choose 1 to 2"
    titled = form(
        tags_req={
            "type": "array",
            "minItems": 1,
            "items": {"anyOf": [{"const": "v", "title": "Vegan"}, {"const": "g", "title": "GF"}]},
        }
    )
    assert accept(titled, tags=["v", "g"]).to_wire()["content"] == {"tags": ["v", "g"]}
    assert accept(titled, tags=[]).problems == {"tags": "choose at least 1"}
    assert titled.field("tags").hint() == "choose at least 1"


# -- the three actions --------------------------------------------------------------------------


def test_decline_and_cancel_send_only_the_action():
    spec = form(login_req={"type": "string", "minLength": 3})
    # Even with an invalid or empty form, refusing is always possible (ELIC-15).
    for action in ("decline", "cancel"):
        outcome = spec.respond(action, {"login": "x"})
        assert outcome.ok and outcome.problems == {}
        assert outcome.to_wire() == {"action": action}  # no content (ELIC-7)


def test_accept_with_problems_sends_nothing_and_names_every_field():
    spec = form(
        login_req={"type": "string", "minLength": 3},
        party_req={"type": "integer", "maximum": 12},
        mail={"type": "string", "format": "email"},
    )
    outcome = accept(spec, login="", party="20", mail="nope")
    assert outcome.result is None and outcome.to_wire() is None
    assert outcome.problems == {
        "login": "is required",
        "party": "must be at most 12",
        "mail": "must be an email address",
    }


def test_accept_content_has_exactly_the_spec_shape():
    spec = form(login_req={"type": "string"}, units={"type": "string", "enum": ["c", "f"]})
    wire = accept(spec, login="ada", units="f").to_wire()
    assert wire == {"action": "accept", "content": {"login": "ada", "units": "f"}}
    assert set(wire) == {"action", "content"}


def test_unknown_action_and_unknown_field_are_programming_errors():
    spec = form(a={"type": "string"})
    with pytest.raises(ValueError, match="accept, decline or cancel"):
        spec.respond("maybe", {})  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="no such fields"):
        spec.respond("accept", {"b": "x"})
    with pytest.raises(KeyError, match="no field 'b'"):
        spec.field("b")


def test_parse_keeps_missing_apart_from_falsy_answers():
    spec = form(n={"type": "integer"}, b={"type": "boolean"})
    assert spec.field("n").parse("") == (MISSING, None)
    assert spec.field("n").parse("0") == (0, None)
    assert spec.field("b").parse(False) == (False, None)


# -- schemas outside the subset ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "array"}, 'must be an object schema ("type": "object")'),
        ({"type": "object"}, "needs a properties object"),
        (
            {"type": "object", "properties": {"addr": {"type": "object"}}},
            "type 'object' is not one of",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "string", "pattern": "^a"}}},
            "keywords ['pattern'] are outside the subset",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "string", "format": "ipv4"}}},
            "format 'ipv4' is not supported",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "array", "items": {"type": "string"}}}},
            "items must be a string enum or titled anyOf",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "integer", "minimum": "1"}}},
            "minimum must be a number",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "string", "maxLength": 2.5}}},
            "maxLength must be a whole number",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "string", "minLength": -1}}},
            "minLength must not be negative",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "string", "default": 3}}},
            "default is invalid",
        ),
        (
            {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["y"]},
            "required must list names of properties",
        ),
        (
            {"type": "object", "properties": {}, "allOf": []},
            "keywords ['allOf'] are outside the subset",
        ),
    ],
)
def test_a_schema_outside_the_subset_gets_a_clear_message(schema, message):
    with pytest.raises(SchemaOutsideSubset) as info:
        FormSpec.from_schema(schema)
    assert message in str(info.value)


@pytest.mark.slow  # a fresh interpreter, so ipywidgets is truly absent
def test_form_logic_imports_without_ipywidgets():
    # docs/architecture.md §3: the form logic is plain Python; only widgets need ipywidgets.
    code = (
        "import sys; sys.modules['ipywidgets'] = None\n"
        "import mrtr_kit.forms, mrtr_kit.server, mrtr_kit.client\n"
        "print(sorted(m for m in sys.modules if m.startswith('mrtr_course')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"  # and the library pulls in nothing of the course


def test_a_date_time_needs_its_offset():
    """JSON Schema's date-time is RFC 3339's: 18:30 without Z or +hh:mm is not one."""
    spec = form(v_req={"type": "string", "format": "date-time"})
    assert accept(spec, v="2026-09-01T18:30:00+02:00").ok
    assert accept(spec, v="2026-09-01T18:30:00").problems["v"].startswith("must be a date and time")


# -- typed lines (the terminal form), typed content, and the server's check -----------------------

CHOICES = {"type": "string", "enum": ["a", "b", "c"]}
MANY = {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}


@pytest.mark.parametrize(
    ("prop", "text", "value", "problem"),
    [
        ({"type": "boolean"}, "y", True, None),
        ({"type": "boolean"}, "Yes", True, None),
        ({"type": "boolean"}, "false", False, None),
        ({"type": "boolean"}, "N", False, None),
        ({"type": "boolean"}, "maybe", MISSING, "answer y or n"),
        ({"type": "integer"}, " 3 ", 3, None),
        ({"type": "integer"}, "3.0", 3, None),
        ({"type": "integer"}, "2.5", MISSING, "must be a whole number"),
        ({"type": "number"}, "2.5", 2.5, None),
        ({"type": "number"}, "nan", MISSING, "must be a number"),
        (CHOICES, "2", "b", None),  # by its number in the list
        (CHOICES, "c", "c", None),  # or by its value
        (CHOICES, "9", "9", None),  # not a choice: ``problem`` says so
        (MANY, "1, c", ["a", "c"], None),
        ({"type": "string", "format": "date"}, "2026-09-01", "2026-09-01", None),
        ({"type": "string"}, "  hi  ", "hi", None),
        ({"type": "string"}, "   ", MISSING, None),
    ],
)
def test_elic_14_parse_text_turns_a_typed_line_into_a_typed_value(prop, text, value, problem):
    """ELIC-14 (KIT: the terminal's way of typing): the console only reads lines; the engine
    turns them into values of the field's type, or says why it cannot."""
    assert form(x=prop).field("x").parse_text(text) == (value, problem)


@pytest.mark.parametrize(
    ("prop", "value", "problem"),
    [
        ({"type": "string"}, MISSING, None),
        (CHOICES, "9", "'9' is not one of the choices"),
        ({"type": "integer", "maximum": 5}, 6, "must be at most 5"),
        ({"type": "string", "format": "date"}, "20260901", "must be a date such as 2026-09-01"),
        (MANY, ["a"], None),
    ],
)
def test_elic_14_problem_checks_a_typed_value_against_its_field(prop, value, problem):
    assert form(x=prop).field("x").problem(value) == problem
    assert form(x_req=prop).field("x").problem(MISSING) == "is required"


def test_elic_14_accept_builds_the_elicit_result_from_typed_content_or_names_the_problems():
    spec = form(party_req={"type": "integer", "minimum": 1}, note={"type": "string"})
    sent = spec.accept({"party": 3.0, "other": "x"})
    assert sent.to_wire() == {"action": "accept", "content": {"party": 3}}
    assert type(sent.result.content["party"]) is int
    refused = spec.accept({"party": 0, "note": 5})
    assert refused.result is None
    assert refused.problems == {"party": "must be at least 1", "note": "must be text"}
    assert spec.accept({}).problems == {"party": "is required"}


@pytest.mark.parametrize(
    "raw",
    [
        {"party": "4", "when": "2026-09-01"},
        {"party": "4.0", "when": dt.date(2026, 9, 1), "tags": ["b"]},
        {"party": "0", "when": "2026-09-01"},
        {"party": "4", "when": "1 Sept"},
        {"party": "", "when": "2026-09-01"},
        {"party": "4", "when": "2026-09-01", "tags": ["a", "b", "c"]},
    ],
)
def test_elic_14_a_form_sends_exactly_what_the_server_accepts(raw):
    """One engine: what the widget form sends, the server's ``ctx.form`` reads back unchanged;
    what it refuses to send, the server would refuse with the same problems."""
    from mrtr_kit.protocol.elicitation import checked_content

    schema = {
        "type": "object",
        "properties": {
            "party": {"type": "integer", "minimum": 1},
            "when": {"type": "string", "format": "date"},
            "tags": {**MANY, "maxItems": 2},
        },
        "required": ["party", "when"],
    }
    spec = FormSpec.from_schema(schema)
    outcome = spec.respond("accept", raw)
    if outcome.ok:
        wire = outcome.to_wire()
        assert checked_content(schema, wire["content"]) == (wire["content"], {})
        assert spec.accept(wire["content"]).to_wire() == wire
    else:
        assert outcome.problems
        typed = {n: spec.field(n).parse(v)[0] for n, v in raw.items()}
        typed = {n: v for n, v in typed.items() if v is not MISSING}
        if all(spec.field(n).parse(v)[1] is None for n, v in raw.items()):
            assert checked_content(schema, typed)[1] == outcome.problems
