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

Screenshots go to ``screenshots/browser/`` (gitignored).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from browser_support import (
    CHROMIUM_FLAGS,
    SCREENSHOTS,
    Lab,
    isolated_env,
    short_temp_dir,
    start_lab,
)
from conftest import system_binary

pytestmark = pytest.mark.browser

NOTEBOOK = "01-the-basic-flow.ipynb"
OPTIONAL = "01b-more-ways-to-ask-OPTIONAL.ipynb"
# Each notebook's last printed output: once it is there, Run All has finished.
LAST_OUTPUT = {
    NOTEBOOK: "call_with_mrtr() still raises NotImplementedError: do exercise 3 first.",
    OPTIONAL: "stopped - requests sent: 1",
}
RUN_ALL_TIMEOUT_MS = 90_000


def _sync_api() -> Any:
    try:
        from playwright import sync_api
    except ImportError:
        message = "playwright is not installed (it is in the test extra)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must install it")
        pytest.skip(message)
    return sync_api


@pytest.fixture(scope="module")
def jupyter_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = short_temp_dir()
    try:
        yield isolated_env(tmp_path_factory.mktemp("browser-home"), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def chromium_browser(jupyter_env: dict[str, str]) -> Iterator[Any]:
    sync_api = _sync_api()
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
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def notebook_run(browser: Any, lab: Lab, notebook: str = NOTEBOOK) -> Iterator[tuple[Any, Any]]:
    """A fresh browser context and kernel with ``notebook`` run top to bottom: (page, panel)."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page, run_notebook(page, lab, notebook)
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


def run_notebook(page: Any, lab: Lab, notebook: str = NOTEBOOK) -> Any:
    """Open ``notebook``, run every cell, return the locator of its panel."""
    expect = _sync_api().expect
    page.goto(lab.notebook_url(notebook))
    panel = page.locator(".jp-NotebookPanel:visible")
    panel.locator(".jp-Notebook").wait_for()
    expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=60_000)
    # JupyterLab 4 has no default shortcut for Run All Cells: use the Run menu.
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first.click()
    expect(panel.get_by_text(LAST_OUTPUT[notebook])).to_be_attached(timeout=RUN_ALL_TIMEOUT_MS)
    return panel


def try_it_flow(panel: Any) -> Any:
    flow = panel.locator(".mrtr-flow", has_text='"city": "Lisbon"')
    _sync_api().expect(flow).to_have_count(1)
    flow.scroll_into_view_if_needed()
    return flow


def screenshot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def test_a_field_that_fails_validation_then_a_valid_accept_completes_the_call(
    fresh_run: tuple[Any, Any],
) -> None:
    expect = _sync_api().expect
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
    expect(result).to_contain_text("Hello grace! Weather now in Lisbon:", timeout=20_000)
    expect(result).to_contain_text("°F")  # the unit chosen in the dropdown reached the server
    expect(status).to_contain_text("Complete after 2 round(s).")
    expect(flow.locator(".mrtr-field-login .mrtr-field-error")).to_have_text("")  # fixed
    screenshot(page, "01-form-accepted")


def test_declining_gets_the_servers_new_question_and_cancel_ends_the_call(
    shared_run: tuple[Any, Any],
) -> None:
    expect = _sync_api().expect
    page, panel = shared_run
    flow = try_it_flow(panel)

    flow.get_by_role("button", name="Decline").click()
    # The weather server answers a decline with input_required again, saying why.
    expect(flow.locator(".mrtr-form")).to_contain_text(
        "The weather service only answers signed-in users.", timeout=20_000
    )
    expect(flow.locator(".mrtr-status")).to_contain_text("Round 2:")
    screenshot(page, "01-form-declined")

    flow.get_by_role("button", name="Cancel").click()
    expect(flow.locator(".mrtr-result")).to_contain_text(
        "No forecast for Lisbon: sign-in was cancelled.", timeout=20_000
    )
    expect(flow.locator(".mrtr-status")).to_contain_text("Complete after 3 round(s).")
    screenshot(page, "01-form-cancelled")


def test_url_mode_consent_sends_accept_then_a_manual_retry_after_signing_in_completes_the_call(
    optional_run: tuple[Any, Any],
) -> None:
    """ELIC-9: consent sends accept at once; the server waits for the page (15 s in the
    lesson), then asks again; the learner signs in on the page and presses the manual retry
    (ELIC-10). The sign-in happens only after the server asked again, so the path is fixed."""
    expect = _sync_api().expect
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
    # Nobody signs in: after its wait the server asks again, and the card offers a retry.
    expect(card).to_contain_text("You have not finished signing in yet.", timeout=40_000)
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
        "Calendar connected as grace. Next event:", timeout=20_000
    )
    expect(flow.locator(".mrtr-status")).to_contain_text("Complete after 3 round(s).")
    # Issue 9, item 12: no stale "not finished" message or "Sent:" line above the result.
    expect(card).not_to_contain_text("not finished")
    expect(card).not_to_contain_text("Sent:")
    expect(card).to_contain_text("Answered: accept (you agreed to go to 127.0.0.1)")
    screenshot(page, "01-url-mode-complete")
