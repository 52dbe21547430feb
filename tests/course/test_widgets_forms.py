"""The answer widgets, driven as nbval drives them: fill from code, press with ``button.click()``.

No kernel and no browser are needed: ipywidgets objects work in a plain Python process, and a
click runs the same kernel-side handler a person's click runs.
"""

from __future__ import annotations

import datetime as dt

import ipywidgets as w
import pytest

from mrtr_course.examples import booking, travel_guide, weather
from mrtr_course.plain.standin import STAND_IN_MODEL, draft_reply
from mrtr_course.plain.urlinfo import inspect_url
from mrtr_course.widgets.form_widgets import ElicitationForm
from mrtr_course.widgets.panels import RootsPanel, SamplingPanel, safe_root
from mrtr_course.widgets.url_card import UrlCard
from mrtr_kit.protocol.models import CreateMessageRequestParams, Root


def login_form(**kw):
    sent = []
    params = {"message": "Which login?", "requestedSchema": weather.LOGIN_FORM}
    form = ElicitationForm(params, asker="weather", key="login", on_answer=sent.append, **kw)
    return form, sent


def texts(widget):
    """Every HTML/Label value inside a widget tree."""
    found = []
    if isinstance(widget, w.HTML | w.Label):
        found.append(widget.value)
    for child in getattr(widget, "children", ()):
        found += texts(child)
    return found


def test_form_renders_each_field_with_title_required_mark_description_and_default():
    form, _ = login_form()
    assert list(form.fields) == ["login", "units"]
    login, units = form.fields["login"], form.fields["units"]
    assert isinstance(login.input, w.Text) and login.input.placeholder == "text, 3–32 characters"
    assert "Your login" in login.label.value and "*" in login.label.value
    assert "no password" in login.label.value
    assert isinstance(units.input, w.Dropdown)
    assert units.input.options == (
        ("— none —", ""),
        ("Celsius (°C)", "celsius"),
        ("Fahrenheit (°F)", "fahrenheit"),
    )
    assert units.input.value == "celsius"  # the default is pre-filled (ELIC-3)
    assert "weather" in texts(form.widget)[0] and "Which login?" in texts(form.widget)[0]
    assert [b.description for b in form.buttons] == ["Accept", "Decline", "Cancel"]


def test_each_kind_gets_a_fitting_input_widget():
    params = {"message": "m", "requestedSchema": booking.DETAILS_FORM}
    form = ElicitationForm(params)
    assert isinstance(form.fields["when"].input, w.DatePicker)
    assert isinstance(form.fields["party"].input, w.Text) and form.fields["party"].get() == "2"
    style = ElicitationForm({"message": "m", "requestedSchema": travel_guide.STYLE_FORM})
    interests = style.fields["interests"]
    assert [b.description for b in interests.checkboxes] == [
        "food",
        "museums",
        "outdoors",
        "nightlife",
    ]
    assert interests.get() == ["food"]  # default ticked
    confirm = ElicitationForm({"message": "m", "requestedSchema": booking.CONFIRM_FORM})
    assert isinstance(confirm.fields["ok"].input, w.Checkbox) and confirm.fields["ok"].get()


def test_a_date_field_says_the_browser_shows_its_own_format_and_previews_what_is_sent():
    """Issue 9, item 14: the picker shows e.g. mm/dd/yyyy; the label must not claim otherwise."""
    form = ElicitationForm({"message": "m", "requestedSchema": booking.DETAILS_FORM})
    when = form.fields["when"]
    assert "your browser shows the date in its own format" in when.label.value
    assert "sent as YYYY-MM-DD" in when.label.value
    assert "nothing chosen yet" in when.preview.value
    form.fill(when="2026-09-01")
    assert "will be sent as <code>2026-09-01</code>" in when.preview.value
    when.input.value = None  # the person clears the picker
    assert "nothing chosen yet" in when.preview.value


def test_accept_with_a_problem_shows_it_beside_the_field_and_sends_nothing():
    form, sent = login_form()
    outcome = form.fill(login="al").accept()
    assert outcome is not None and not outcome.ok
    assert sent == [] and not form.answered
    assert "must be at least 3 characters" in form.fields["login"].error.value
    assert form.fields["units"].error.value == ""
    assert "Nothing was sent: 1 field to fix." in form.status.value
    assert not form.accept_button.disabled  # the person can fix it and try again


def test_accept_sends_the_elicit_result_once_and_locks_the_form():
    form, sent = login_form()
    form.fill(login="al").accept()
    form.fill(login="ada", units="fahrenheit").accept()
    assert sent == [{"action": "accept", "content": {"login": "ada", "units": "fahrenheit"}}]
    assert form.fields["login"].error.value == ""  # the earlier problem is cleared
    assert all(b.disabled for b in form.buttons)
    form.accept()
    form.decline()
    assert len(sent) == 1  # a second press sends nothing more


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_send_only_the_action_even_with_invalid_fields(action):
    form, sent = login_form()
    form.fill(login="x")
    getattr(form, action)()
    assert sent == [{"action": action}]
    assert f"Sent: {action}" in form.status.value


def test_fill_converts_like_typing_and_rejects_unknown_fields_and_choices():
    form = ElicitationForm({"message": "m", "requestedSchema": booking.DETAILS_FORM})
    form.fill(party=4, when="2026-09-01")
    assert form.values() == {"party": "4", "when": dt.date(2026, 9, 1)}
    assert form.accept().to_wire() == {
        "action": "accept",
        "content": {"party": 4, "when": "2026-09-01"},
    }
    with pytest.raises(KeyError, match="no field 'size'"):
        form.fill(size=3)
    style = ElicitationForm({"message": "m", "requestedSchema": travel_guide.STYLE_FORM})
    with pytest.raises(ValueError, match="not among the choices"):
        style.fill(interests=["shopping"])


def test_a_schema_outside_the_subset_shows_a_message_not_a_form():
    bad = {"type": "object", "properties": {"address": {"type": "object"}}}
    form = ElicitationForm({"message": "Where do you live?", "requestedSchema": bad})
    assert form.spec is None and form.fields == {} and form.buttons == []
    assert "cannot be shown" in form.status.value and "address" in form.status.value
    assert "This form cannot be shown" in form.describe()
    with pytest.raises(RuntimeError, match="cannot be shown"):
        form.accept()


def test_the_text_form_of_a_form_reads_well_where_widgets_do_not_render():
    form, _ = login_form()
    bundle = form._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == form.describe()
    assert form.describe().splitlines() == [
        "weather asks (login): Which login?",
        "  Your login * (text, 3–32 characters): ___",
        "      The user name you use with the weather service (no password).",
        "  Units (choose one): Celsius (°C)  (options: Celsius (°C) | Fahrenheit (°F))",
        "  [Accept] [Decline] [Cancel]   (* = required)",
    ]
    form.fill(login="ada").accept()
    assert form.describe().endswith(
        "answered: {'action': 'accept', 'content': {'login': 'ada', 'units': 'celsius'}}"
    )


# -- URL mode ------------------------------------------------------------------------------------


def test_url_card_shows_the_full_url_and_host_and_asks_consent_before_any_link():
    """ELIC-13: the full URL and its host first; nothing to open before the user agrees."""
    sent = []
    params = {"mode": "url", "message": "Sign in, please.", "url": "https://id.example.com/s/1"}
    card = UrlCard(params, asker="calendar", key="signin", on_answer=sent.append)
    html = "".join(texts(card.widget))
    assert (
        "<code>https://<b><u>id.example.com</u></b>/s/1</code>" in html
    )  # host highlighted (ELIC-13)
    assert "<a " not in html  # no link to open before consent (KIT)
    assert [b.description for b in card.buttons] == ["Go to the page", "Decline", "Cancel"]
    assert card.describe().splitlines()[-1] == "  [Go to the page] [Decline] [Cancel]"


def test_going_to_the_page_sends_accept_at_once_and_only_then_shows_the_link():
    """ELIC-9: consent, open, retry at once with accept ("the user agreed to go")."""
    sent = []
    params = {"mode": "url", "message": "Sign in, please.", "url": "https://id.example.com/s/1"}
    card = UrlCard(params, asker="calendar", key="signin", on_answer=sent.append)
    card.go()
    assert sent == [{"action": "accept"}]  # URL-mode accept has no content (ELIC-7)
    link = card.link.value
    assert "href='https://id.example.com/s/1'" in link
    assert "target='_blank'" in link and "noopener" in link  # opened by the user's click only
    assert "you agreed to go" in card.status.value and "open the page" in card.status.value
    assert all(b.disabled for b in card.buttons)
    with pytest.raises(RuntimeError, match="retry"):
        UrlCard(params, agreed=True).go()


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_url_card_declines_and_cancels_without_showing_the_link(action):
    params = {"mode": "url", "message": "m", "url": "https://id.example.com/s/1"}
    sent = []
    card = UrlCard(params, on_answer=sent.append)
    getattr(card, action)()
    assert sent == [{"action": action}] and card.link.value == ""


def test_a_card_asked_again_after_consent_offers_a_manual_retry_and_the_link_at_once():
    """ELIC-10: the client should offer manual retry and cancel controls."""
    params = {"mode": "url", "message": "Not done yet.", "url": "https://id.example.com/s/1"}
    sent = []
    card = UrlCard(params, key="signin", agreed=True, on_answer=sent.append)
    assert [b.description for b in card.buttons] == ["Retry now", "Decline", "Cancel"]
    assert "href='https://id.example.com/s/1'" in card.link.value
    assert "manual retry, ELIC-10" in card.describe()
    with pytest.raises(RuntimeError, match="consent"):
        UrlCard(params).retry()
    card.retry()
    assert sent == [{"action": "accept"}]
    assert "manual retry" in card.status.value


def test_a_concluded_card_keeps_only_what_was_answered():
    params = {"mode": "url", "message": "You have not finished.", "url": "https://a.example/s"}
    card = UrlCard(params, asker="calendar", key="signin", agreed=True)
    card.retry()
    card.conclude()
    shown = "".join(texts(card.widget))
    assert (
        "not finished" not in shown
        and "Sent:" not in shown
        and card.buttons[0] not in [*card.widget.children]
    )
    assert card.describe() == (
        "calendar asked (signin) for a step on a web page. Answered: accept "
        "(you agreed to go to a.example). The call is complete."
    )


def test_url_card_warns_about_suspicious_links_and_never_links_non_web_urls():
    params = {"mode": "url", "message": "m", "url": "http://xn--pple-43d.com/login"}
    card = UrlCard(params)
    assert "punycode" in card.describe() and "not HTTPS" in card.describe()
    odd = UrlCard({"mode": "url", "message": "m", "url": "javascript:alert(1)"})
    assert odd.accept_button.disabled
    odd.accept_button.disabled = False
    odd.go()  # even if it were pressed: no link to a non-web URL
    assert "<a " not in "".join(texts(odd.widget))


@pytest.mark.parametrize(
    ("url", "warnings"),
    [
        ("https://example.com/x", ()),
        ("http://127.0.0.1:8765/signin/abc", ()),
        ("http://localhost/signin/abc", ()),
        ("http://example.com/x", ("the link is not HTTPS",)),
        (
            "https://user:pw@example.com/",
            ("the link carries a user name or password before the host",),
        ),
        ("ftp://example.com/f", ("this is not a web link; it will not be opened",)),
    ],
)
def test_inspect_url(url, warnings):
    facts = inspect_url(url)
    assert facts.warnings == warnings
    assert facts.openable == url.startswith("http")


# -- sampling and roots (deprecated) ---------------------------------------------------------------


def sampling_params(max_tokens=60):
    return CreateMessageRequestParams.model_validate(
        {
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": "Summarise: Oslo: 4 °C, windy; Oslo: 9 °C, windy; "
                        "Oslo: 7 °C, sunny",
                    },
                }
            ],
            "maxTokens": max_tokens,
        }
    )


def test_stand_in_drafts_a_deterministic_summary_within_max_tokens():
    assert draft_reply(sampling_params()) == (
        "Oslo: mostly windy, between 4 and 9 °C over the next 3 days."
    )
    assert draft_reply(sampling_params(max_tokens=3)) == "Oslo: mostly windy, …"


def test_sampling_panel_sends_the_edited_reply_or_nothing():
    sent = []
    panel = SamplingPanel(sampling_params(max_tokens=5), asker="s", on_answer=sent.append)
    assert "Deprecated in 2026-07-28" in panel.describe()
    panel.edit("Cold and windy all week, so pack a coat").approve()
    assert sent == [
        {
            "role": "assistant",
            "content": {"type": "text", "text": "Cold and windy all week, …"},  # SAMP-2
            "model": STAND_IN_MODEL,
            "stopReason": "endTurn",
        }
    ]
    refused = []
    SamplingPanel(sampling_params(), on_answer=refused.append).refuse()
    assert refused == [None]  # no answer: the flow will not retry (MRTR-C8)


def test_roots_panel_offers_only_safe_roots_and_shares_the_selection():
    sent = []
    panel = RootsPanel(
        [
            {"uri": "file:///home/ann/site", "name": "Site"},
            {"uri": "file:///home/ann/notes"},
            {"uri": "file:///home/ann/../../etc"},
        ],
        on_answer=sent.append,
    )
    assert [r.uri for r in panel.roots] == ["file:///home/ann/site", "file:///home/ann/notes"]
    assert "not offered (unsafe): file:///home/ann/../../etc" in panel.describe()
    with pytest.raises(ValueError, match="not among the offered roots"):
        panel.select("file:///etc")
    panel.select("file:///home/ann/notes").share()
    assert sent == [{"roots": [{"uri": "file:///home/ann/notes"}]}]
    refused = []
    RootsPanel([], on_answer=refused.append).refuse()
    assert refused == [None]


@pytest.mark.parametrize(
    ("uri", "safe"),
    [
        ("file:///home/ann/site", True),
        ("file:///home/ann/./site", False),
        ("file:///home/ann/%2e%2e/etc", False),
    ],
)
def test_safe_root(uri, safe):
    assert safe_root(Root(uri=uri)) is safe


@pytest.mark.slow  # a fresh interpreter, so ipywidgets is truly absent
def test_the_course_outside_its_widgets_imports_without_ipywidgets():
    # docs/architecture.md §3 and the plain-course contract: only the front ends need ipywidgets.
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['ipywidgets'] = None\n"
        "import mrtr_course.plain.trace_view, mrtr_course.plain.urlinfo\n"
        "import mrtr_course.plain.standin, mrtr_course.messages, mrtr_course.examples\n"
        "import mrtr_course.fleet, mrtr_course.legacy, mrtr_course.quizzes, mrtr_course.widgets\n"
        "try:\n    import mrtr_course.widgets.form_widgets\n"
        "except ImportError:\n    print('widgets need ipywidgets')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "widgets need ipywidgets"
