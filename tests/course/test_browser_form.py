"""A person fills the elicitation form of notebook 01, and the URL-mode card of 01b, in a real
JupyterLab.

JupyterLab runs on loopback (``browser_support.start_lab``); Playwright for Python drives
Debian's headless Chromium (``/usr/bin/chromium``; never ``playwright install``). Each test
opens a notebook in a fresh workspace and kernel and runs all cells from the Run menu. The form
tests then type into notebook 01's "try it yourself" form (the ``get_weather`` call for Lisbon,
which no cell answers) and click its buttons; the URL-mode test opens the link of notebook 01b's
URL-mode card in a new tab and signs in on the page the example serves on loopback. What the
tests assert can only appear if the browser sent the typed values and the click to the kernel,
the kernel's click handler sent the retry to the server, and the server's answer came back into
the widget.

Two more tests use a page of their own (``WIDGETS_NOTEBOOK``, written into the lab's scratch
folder): the round-diff view of a three-round call, where a click opens one round's full JSON,
and lesson 01's quiz, where a click on a wrong option shows why it is wrong (only the kernel's
click handler writes that text) and a click on the right one says so.

One more test plays Binder or a JupyterHub: its own JupyterLab lives under ``/user/learner/``
with ``jupyter-server-proxy`` enabled and ``JUPYTERHUB_PUBLIC_URL`` set, as a hub sets it.
Its page (``PROXY_NOTEBOOK``) runs the URL-mode flow as lesson 01 does; the card's link must
go through the lab's own port and the proxy path, never straight to the page's loopback port.

Screenshots go to ``screenshots/browser/`` (gitignored).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from mrtr_course.quizzes import LETTERS, quiz
from tests.browser_support import (
    CHROMIUM_FLAGS,
    SCREENSHOTS,
    Lab,
    free_loopback_port,
    isolated_env,
    playwright_sync_api,
    short_temp_dir,
    start_lab,
    write_notebook,
)
from tests.conftest import system_binary

pytestmark = pytest.mark.browser

NOTEBOOK = "01-the-basic-flow/01-the-basic-flow.ipynb"
OPTIONAL = "01b-more-ways-to-ask-OPTIONAL/01b-more-ways-to-ask-OPTIONAL.ipynb"
# Each notebook's last printed output: once it is there, Run All has finished.
LAST_OUTPUT = {
    NOTEBOOK: "Not done yet: call_with_mrtr() still raises NotImplementedError.",
    OPTIONAL: "stopped - requests sent: 1",
}
# Caps, not speed claims: every wait below ends as soon as what it waits for is on the page.
# They are generous, because JupyterLab, a kernel and Chromium share a machine that may be busy.
RUN_ALL_TIMEOUT_MS = 300_000
EVENTUALLY_MS = 60_000  # a click's round trip to the kernel and a server, shown in a widget

# In lesson 01's folder: the quiz comes from lesson01_quiz.py there, the kernel's folder.
WIDGETS_NOTEBOOK = "01-the-basic-flow/browser-trace-and-quiz.ipynb"
WIDGETS_DONE = "trace and quiz page ready"
WIDGETS_CELLS = [
    ("markdown", "The rounds of `book_table`, as the round-diff view shows them."),
    (
        "code",
        """from mrtr_kit.client import McpClient
from mrtr_course.examples import booking
from mrtr_course.widgets.round_view import RoundDiffView
from mrtr_kit.server.http import create_app

DETAILS = {"details": {"action": "accept", "content": {"party": 2, "when": "2026-09-01"}}}
CONFIRM = {"confirm": {"action": "accept", "content": {"ok": True}}}
async with McpClient.for_app(
    create_app(booking.build_server()), elicitation=lambda p, c: None
) as client:
    call = await client.begin_tool_call("book_table", {"restaurant": "Luigi's"})
    await client.continue_call(call, DETAILS)
    await client.continue_call(call, CONFIRM)
RoundDiffView(client.trace)""",
    ),
    ("markdown", "Lesson 01's quiz."),
    ("code", 'from mrtr_course.widgets.quiz import show_quiz\n\nshow_quiz("01")'),
    ("markdown", "The end."),
    ("code", 'print("trace and quiz", "page ready")'),  # the source is not the output
]


HUB_PREFIX = "/user/learner/"
PROXY_NOTEBOOK = "browser-url-mode-behind-a-proxy.ipynb"
PROXY_DONE = "proxy page ready"
PROXY_CELLS = [
    ("markdown", "Lesson 01's URL-mode flow, with the links where the learner's browser is."),
    (
        "code",
        """from mrtr_course.examples.url_login import UrlLoginExample
from mrtr_course.widgets.flow import start_tool_call, widget_client
from mrtr_kit.server.loopback import LoopbackServer

# wait_s=0: the server asks again at once, so the test's path does not depend on timing.
site = LoopbackServer.start(
    lambda base_url: UrlLoginExample.behind_jupyter(base_url, wait_s=0).app()
)
url_client = widget_client(f"{site.url}/mcp", form=False, url=True)
calendar = await start_tool_call(url_client, "connect_calendar")
calendar""",
    ),
    ("code", 'print("proxy page", "ready")'),  # the source is not the output
]


@pytest.fixture(scope="module")
def jupyter_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = short_temp_dir()
    try:
        yield isolated_env(tmp_path_factory.mktemp("browser-home"), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium_browser(jupyter_env: dict[str, str]) -> Iterator[Any]:
    sync_api = playwright_sync_api()
    executable = system_binary("chromium", paths=("/usr/bin/chromium",))
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_FLAGS, env=jupyter_env
        )
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def lab(
    chromium_browser: Any, tmp_path_factory: pytest.TempPathFactory, jupyter_env: dict[str, str]
) -> Iterator[Lab]:
    server = start_lab(tmp_path_factory.mktemp("jupyterlab"), jupyter_env)
    write_notebook(server.root / WIDGETS_NOTEBOOK, WIDGETS_CELLS)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def hub_lab(
    chromium_browser: Any, tmp_path_factory: pytest.TempPathFactory, jupyter_env: dict[str, str]
) -> Iterator[Lab]:
    """A JupyterLab as a hub runs it: under /user/learner/, jupyter-server-proxy enabled,
    and the hub's variables set for its kernels."""
    if importlib.util.find_spec("jupyter_server_proxy") is None:
        message = "jupyter-server-proxy is not installed (it is in the lab extra)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must install it")
        pytest.skip(message)
    port = free_loopback_port()
    env = dict(
        jupyter_env,
        JUPYTERHUB_SERVICE_PREFIX=HUB_PREFIX,
        JUPYTERHUB_PUBLIC_URL=f"http://127.0.0.1:{port}{HUB_PREFIX}",
    )
    env.pop("MRTR_KIT_JUPYTER_URL", None)  # it would win over the hub's variable
    server = start_lab(tmp_path_factory.mktemp("hub-lab"), env, port=port, base_url=HUB_PREFIX)
    write_notebook(server.root / PROXY_NOTEBOOK, PROXY_CELLS)
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def notebook_run(
    browser: Any, lab: Lab, notebook: str = NOTEBOOK, last_output: str | None = None
) -> Iterator[tuple[Any, Any]]:
    """A fresh browser context and kernel with ``notebook`` run top to bottom: (page, panel)."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(EVENTUALLY_MS)
    try:
        yield page, run_notebook(page, lab, notebook, last_output)
    finally:
        context.close()
        lab.shutdown_kernels()  # kernels outlive their tab; the next run gets a fresh one


@pytest.fixture
def fresh_run(chromium_browser: Any, lab: Lab) -> Iterator[tuple[Any, Any]]:
    with notebook_run(chromium_browser, lab) as run:
        yield run


@pytest.fixture(scope="module")
def shared_run(chromium_browser: Any, lab: Lab) -> Iterator[tuple[Any, Any]]:
    """One run for the tests below that each use a different, untouched flow of it."""
    with notebook_run(chromium_browser, lab) as run:
        yield run


@pytest.fixture
def optional_run(chromium_browser: Any, lab: Lab) -> Iterator[tuple[Any, Any]]:
    """Notebook 01b, with the URL-mode section, run top to bottom."""
    with notebook_run(chromium_browser, lab, OPTIONAL) as run:
        yield run


def run_notebook(
    page: Any, lab: Lab, notebook: str = NOTEBOOK, last_output: str | None = None
) -> Any:
    """Open ``notebook``, run every cell, return the locator of its panel. ``last_output``
    (default: the notebook's entry in LAST_OUTPUT) shows that Run All has finished."""
    expect = playwright_sync_api().expect
    page.goto(lab.notebook_url(notebook))
    panel = page.locator(".jp-NotebookPanel:visible")
    panel.locator(".jp-Notebook").wait_for()
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=2 * EVENTUALLY_MS)
    # JupyterLab 4 has no default shortcut for Run All Cells: use the Run menu.
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first.click()
    # Looked for in the outputs only: a cell's source may hold the same words.
    outputs = panel.locator(".jp-OutputArea-output")
    done = last_output or LAST_OUTPUT[notebook]
    expect(outputs.get_by_text(done)).to_be_attached(timeout=RUN_ALL_TIMEOUT_MS)
    return panel


@pytest.fixture(scope="module")
def widgets_run(chromium_browser: Any, lab: Lab) -> Iterator[tuple[Any, Any]]:
    """The page with the round-diff view and a quiz, run once for the tests that use it."""
    with notebook_run(chromium_browser, lab, WIDGETS_NOTEBOOK, WIDGETS_DONE) as run:
        yield run


def try_it_flow(panel: Any) -> Any:
    flow = panel.locator(".mrtr-flow", has_text='"city": "Lisbon"')
    playwright_sync_api().expect(flow).to_have_count(1)
    flow.scroll_into_view_if_needed()
    return flow


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def test_a_field_that_fails_validation_then_a_valid_accept_completes_the_call(
    fresh_run: tuple[Any, Any],
) -> None:
    expect = playwright_sync_api().expect
    page, panel = fresh_run
    flow = try_it_flow(panel)
    status = flow.locator(".mrtr-status")
    expect(status).to_contain_text("Round 1: the server needs input 'login'")

    # Too short for minLength 3: the problem shows beside the field, nothing is sent.
    flow.locator(".mrtr-field-login input").fill("al")
    flow.get_by_role("button", name="Accept").click()
    expect(flow.locator(".mrtr-field-login .mrtr-field-error")).to_contain_text(
        "must be at least 3 characters"
    )
    expect(flow.locator(".mrtr-answer-status")).to_contain_text("Nothing was sent")
    expect(status).to_contain_text("Round 1:")
    expect(flow.locator(".mrtr-result")).to_have_text("")
    screenshot(page, "01-form-invalid")

    # A valid login and another unit: Accept sends round 2, the server's answer comes back.
    flow.locator(".mrtr-field-login input").fill("grace")
    flow.locator(".mrtr-field-units select").select_option(label="Fahrenheit (°F)")
    flow.get_by_role("button", name="Accept").click()
    result = flow.locator(".mrtr-result")
    expect(result).to_contain_text("Hello grace! Weather now in Lisbon:", timeout=EVENTUALLY_MS)
    expect(result).to_contain_text("°F")  # the unit chosen in the dropdown reached the server
    expect(status).to_contain_text("Complete after 2 round(s).")
    expect(flow.locator(".mrtr-field-login .mrtr-field-error")).to_have_text("")  # fixed
    screenshot(page, "01-form-accepted")


def test_declining_is_sent_and_the_tool_offers_the_public_forecast_without_asking_again(
    shared_run: tuple[Any, Any],
) -> None:
    """ELIC-6: a decline is an explicit "no": the weather tool completes with an alternative."""
    expect = playwright_sync_api().expect
    page, panel = shared_run
    flow = try_it_flow(panel)

    flow.get_by_role("button", name="Decline").click()
    expect(flow.locator(".mrtr-result")).to_contain_text(
        "You chose not to sign in, so no personal forecast for Lisbon.", timeout=EVENTUALLY_MS
    )
    expect(flow.locator(".mrtr-status")).to_contain_text("Complete after 2 round(s).")
    screenshot(page, "01-form-declined")


def test_url_mode_consent_sends_accept_then_a_manual_retry_after_signing_in_completes_the_call(
    optional_run: tuple[Any, Any],
) -> None:
    """ELIC-9: consent sends accept at once; the server waits for the page (15 s in the
    lesson), then asks again; the learner signs in on the page and presses the manual retry
    (ELIC-10). The sign-in happens only after the server asked again, so the path is fixed."""
    expect = playwright_sync_api().expect
    page, panel = optional_run
    # The "try it yourself" card: the first connect_calendar flow, which no cell answers.
    flow = panel.locator(".mrtr-flow", has_text="tools/call connect_calendar").first
    flow.scroll_into_view_if_needed()
    card = flow.locator(".mrtr-url-card")
    expect(card).to_contain_text("It leads to 127.0.0.1.")  # the host, shown before consent
    expect(flow.get_by_role("link", name="Open the page in a new tab")).to_have_count(0)

    # Consent: accept goes out at once, and only now does the link appear.
    flow.get_by_role("button", name="Go to the page").click()
    expect(flow.locator(".mrtr-answer-status")).to_contain_text("you agreed to go")
    expect(flow.locator(".mrtr-status")).to_contain_text("The server may take a while")
    # Nobody signs in: after its wait (SIGNIN_WAIT_S, 15 s) the server asks again, and the
    # card offers a retry.
    expect(card).to_contain_text("You have not finished signing in yet.", timeout=2 * EVENTUALLY_MS)
    expect(flow.get_by_role("button", name="Retry now")).to_be_visible()
    screenshot(page, "01-url-mode-asked-again")

    # The learner opens the link: a new tab with the server's own page, outside the client.
    with page.context.expect_page() as opened:
        flow.get_by_role("link", name="Open the page in a new tab").click()
    signin = opened.value
    signin.wait_for_load_state()
    assert "/signin/" in signin.url and signin.url.startswith("http://127.0.0.1:")
    signin.locator("input[name=account]").fill("grace")
    signin.locator("input[name=password]").fill("a secret the client never sees")
    signin.get_by_role("button", name="Sign in").click()
    expect(signin.locator("#outcome")).to_contain_text("Signed in as grace.")
    screenshot(signin, "01-url-signin-page")
    signin.close()

    flow.get_by_role("button", name="Retry now").click()
    expect(flow.locator(".mrtr-result")).to_contain_text(
        "Calendar connected as grace. Next event:", timeout=EVENTUALLY_MS
    )
    expect(flow.locator(".mrtr-status")).to_contain_text("Complete after 3 round(s).")
    # Issue 9, item 12: no stale "not finished" message or "Sent:" line above the result.
    expect(card).not_to_contain_text("not finished")
    expect(card).not_to_contain_text("Sent:")
    expect(card).to_contain_text("Answered: accept (you agreed to go to 127.0.0.1)")
    screenshot(page, "01-url-mode-complete")


def test_the_round_diff_view_shows_each_rounds_changes_and_opens_its_full_json_on_a_click(
    widgets_run: tuple[Any, Any],
) -> None:
    """Collapsed by default: each round shows what changed (a new id, MRTR-C3; the state echoed,
    MRTR-C2); one click on a round's summary shows its full request and response."""
    expect = playwright_sync_api().expect
    page, panel = widgets_run
    view = panel.locator(".widget-vbox.mrtr-round-diff")
    expect(view).to_have_count(1)
    view.scroll_into_view_if_needed()
    rounds = view.locator(".mrtr-round-block")
    expect(rounds).to_have_count(3)
    second = rounds.nth(1)
    expect(second).to_contain_text("call 1 · round 2 · tools/call book_table → HTTP 200")
    expect(second).to_contain_text("id 2 (new; round 1 had id 1)")
    expect(second).to_contain_text("+ inputResponses.details: accept (party, when)")
    expect(second).to_contain_text("requestState: echoed from round 1, unchanged")
    expect(rounds.nth(2)).to_contain_text("← complete")
    request_json = second.locator("pre").first
    expect(request_json).to_be_hidden()  # folded away until asked for
    screenshot(page, "trace-round-diff-collapsed")

    second.get_by_text("full JSON of this round").click()
    expect(request_json).to_be_visible()
    expect(request_json).to_contain_text('"inputResponses": {')
    expect(request_json).to_contain_text('"name": "book_table"')
    expect(second.locator("pre").nth(1)).to_contain_text('"resultType": "input_required"')
    expect(rounds.nth(0).locator("pre").first).to_be_hidden()  # the other rounds stay shut
    screenshot(page, "trace-round-diff-open")


def test_a_quiz_explains_a_wrong_option_and_confirms_the_right_one(
    widgets_run: tuple[Any, Any],
) -> None:
    expect = playwright_sync_api().expect
    page, panel = widgets_run
    question = quiz("01").questions[0]
    wrong = next(i for i, o in enumerate(question.options) if not o.right)
    block = panel.locator(".mrtr-quiz-01 .mrtr-quiz-question").first
    block.scroll_into_view_if_needed()
    feedback = block.locator(".mrtr-quiz-feedback")
    expect(block).to_contain_text(question.ask.replace("`", ""))
    expect(feedback).to_have_text("")

    # Only the kernel's click handler writes the feedback: the click went there and back.
    block.get_by_role("button", name=LETTERS[wrong], exact=True).click()
    expect(feedback).to_contain_text("✘ Not quite.")
    expect(feedback).to_contain_text(question.options[wrong].why)
    screenshot(page, "quiz-wrong-option")

    block.get_by_role("button", name=LETTERS[question.answer], exact=True).click()
    expect(feedback).to_contain_text("✔ Right.")
    expect(feedback).to_contain_text(question.options[question.answer].why)
    expect(feedback).not_to_contain_text("Not quite")
    screenshot(page, "quiz-right-option")


def test_url_mode_behind_a_hub_the_cards_link_opens_the_page_through_jupyters_proxy(
    chromium_browser: Any, hub_lab: Lab
) -> None:
    """ELIC-13: the full URL the card shows is the one the learner's browser opens. Behind a
    hub that is ``<jupyter>/proxy/<port>/signin/<id>`` on the lab's own port (the proxy strips
    its prefix and demands the Jupyter login: without it the link leads to the login page);
    the learner signs in there, presses the manual retry (ELIC-10), and the call completes."""
    expect = playwright_sync_api().expect
    with notebook_run(chromium_browser, hub_lab, PROXY_NOTEBOOK, PROXY_DONE) as (page, panel):
        flow = panel.locator(".mrtr-flow", has_text="tools/call connect_calendar")
        expect(flow).to_have_count(1)
        card = flow.locator(".mrtr-url-card")
        proxied = f"{hub_lab.base}/proxy/"  # http://127.0.0.1:<lab port>/user/learner/proxy/
        expect(card).to_contain_text(f"Link: {proxied}")  # shown in full before consent
        expect(card).to_contain_text("It leads to 127.0.0.1.")

        flow.get_by_role("button", name="Go to the page").click()
        # wait_s=0: the server asks again at once; the card shows the link and a retry.
        expect(card).to_contain_text("You have not finished signing in yet.", timeout=EVENTUALLY_MS)
        link = flow.get_by_role("link", name="Open the page in a new tab")
        href = link.get_attribute("href")
        assert href is not None and href.startswith(proxied), href
        page_port = href.removeprefix(proxied).split("/", 1)[0]
        assert page_port.isdigit() and f":{page_port}/" not in href  # not the loopback port
        assert href.removeprefix(proxied).split("/", 1)[1].startswith("signin/")
        screenshot(page, "url-mode-proxy-asked-again")

        with page.context.expect_page() as opened:
            link.click()
        signin = opened.value
        signin.wait_for_load_state()
        assert signin.url == href  # through the proxy, no redirect
        signin.locator("input[name=account]").fill("grace")
        signin.locator("input[name=password]").fill("a secret the client never sees")
        signin.get_by_role("button", name="Sign in").click()
        expect(signin.locator("#outcome")).to_contain_text("Signed in as grace.")
        assert signin.url == href  # the form posted to its own, proxied, URL
        screenshot(signin, "url-mode-proxy-signin-page")
        signin.close()

        flow.get_by_role("button", name="Retry now").click()
        expect(flow.locator(".mrtr-result")).to_contain_text(
            "Calendar connected as grace. Next event:", timeout=EVENTUALLY_MS
        )
        expect(flow.locator(".mrtr-status")).to_contain_text("Complete after 3 round(s).")
        screenshot(page, "url-mode-proxy-complete")

    # Someone holding the link but not logged in to this Jupyter does not reach the page.
    stranger = chromium_browser.new_context()
    try:
        other = stranger.new_page()
        other.goto(href)
        assert "/login" in other.url and other.locator("#outcome").count() == 0
    finally:
        stranger.close()
