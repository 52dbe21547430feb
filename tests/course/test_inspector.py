"""A real MCP host, MCP Inspector 2.12 (``@modelcontextprotocol/inspector``), drives the kit's
lesson server through lesson 01's form: Playwright for Python clicks through Inspector's web UI
in Debian's headless Chromium (``/usr/bin/chromium``; never ``playwright install``).

Set-up, shared with ``python3 tools/kit.py inspector`` (the same functions of ``tools/kit.py``):
``serve --example lessons --port 0 --trace PATH`` in a child process (its URL read from its first
line; its trace: the server's view of each round, one JSON line per request), then Inspector's
web UI, pinned to 2.12.0 and installed in ``.inspector/``, in the 2026-07-28 ("modern") protocol
era, on free loopback ports, with a token of its own and its HOME in the test's temp folder. The
page may reach loopback only: a Playwright route aborts everything else (the one outside request
is a web-font stylesheet; the fallback font renders).

The tests, each in a fresh browser context: connect, Tools, ``get_weather``, Execute Tool; the
form appears in Inspector's elicitation dialog (badge ``input_required``); then

* fill the login and Submit: the forecast for that login shows;
* Decline: the tool respects the "no" and offers the public forecast instead, without asking
  again (ELIC-6);
* ``book_table``, which carries its progress in a sealed requestState: Decline, and the tool says
  nothing was booked.

What the server received is read from its trace (``serve --trace``): each retry a new id, the
answers keyed as asked, and for ``book_table`` the state Inspector echoed verified.

One more test has Inspector spawn ``serve --stdio --example weather`` itself (as
``kit.py inspector --stdio`` does) and fills the form over stdio. Two more start Inspector
in its own default era (no ``--protocol-era``: ``legacy``, 2025-11-25), as most users start it,
on the lessons' server over HTTP and spawning ``serve --stdio``: the form comes as a pushed
``elicitation/create`` (issue 29).

Without ``.inspector/`` the tests skip, naming the command that installs it; under CI (``CI``
set, as ``.ci/run`` sets it, and installs Inspector first) they fail instead. A screenshot of the
form dialog goes to ``screenshots/browser/inspector-form.png``, of book_table's to
``inspector-book-table-form.png``, and of the legacy era's to ``inspector-legacy-form.png``
(gitignored); the tests print where.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lesson05_lab import check_host_flow

from mrtr_course.plain.server_trace import ServerTrace
from tests.browser_support import (
    CHROMIUM_FLAGS,
    SCREENSHOTS,
    isolated_env,
    load_kit,
    playwright_sync_api,
    short_temp_dir,
)
from tests.conftest import system_binary

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "@modelcontextprotocol/inspector"
# Caps, not speed claims: every wait ends as soon as its text is on the page. Generous, because
# Inspector, the server and Chromium share a machine that may be busy.
EVENTUALLY_MS = 60_000
CITY = "Lisbon"
QUESTION = f"Sign in to see the weather for {CITY}: which login should I use?"
# Anything but loopback: the page must not need the network (fonts fall back at once).
OUTSIDE = re.compile(r"^(?!https?://(127\.0\.0\.1|localhost)[:/])[a-z-]+://")


kit = load_kit(ROOT)  # tools/kit.py, the code behind `kit.py inspector`


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must install it")
    pytest.skip(message)


@dataclass
class Server:
    url: str
    trace: Path  # serve --trace: one JSON line per request the server answered

    def calls(self, tool: str) -> list[dict[str, Any]]:
        """The server's record of each tools/call of ``tool``, oldest first."""
        lines = self.trace.read_text().splitlines() if self.trace.exists() else []
        rounds = [json.loads(line) for line in lines]
        return [r for r in rounds if r["method"] == "tools/call" and r["target"] == tool]


@pytest.fixture(scope="module", autouse=True)
def _inspector_installed() -> None:
    """First of all (before any server or browser starts): skip, or fail under CI, without it."""
    if not kit.inspector_installed():
        _missing(
            f"MCP Inspector ({PACKAGE}@{kit.INSPECTOR_VERSION}) is not installed in "
            f".inspector/: run `{kit.INSPECTOR_INSTALL} --install-only` (or without "
            "--install-only, to try it by hand) once"
        )


@pytest.fixture(scope="module")
def lessons(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The lessons' server (get_weather, book_table, ...), tracing what it receives."""
    work = tmp_path_factory.mktemp("lessons")
    trace = work / "rounds.jsonl"
    options = ["--trace", str(trace)]
    process, url = kit.start_example(sys.executable, "lessons", work / "serve.log", options=options)
    try:
        yield Server(url, trace)
    finally:
        kit.stop(process)


@pytest.fixture(scope="module")
def inspector(lessons: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Inspector's UI on the weather server: the URL to open, token included."""
    work = tmp_path_factory.mktemp("inspector")
    token, port = secrets.token_hex(16), kit.free_port()
    env = kit.inspector_env(token, work / "home", port)
    process = kit.start_inspector(kit.inspector_command(url=lessons.url), env, work / "log.txt")
    try:
        yield kit.inspector_url(port, token)
    finally:
        kit.stop(process)  # by its PID; closing the browser would not disconnect its backend


@contextmanager
def inspector_on_stdio(work: Path, era: str | None) -> Iterator[Server]:
    """Inspector spawning ``serve --stdio --example weather`` itself, as ``kit.py inspector
    --stdio`` has it do, in protocol ``era`` (None: Inspector's default, legacy). Inspector
    hands a stdio server only a few variables (PATH, HOME...): PYTHONPATH is passed on, so the
    server is this checkout's kit. Yields Inspector's URL and the server's trace."""
    token, port = secrets.token_hex(16), kit.free_port()
    env = kit.inspector_env(token, work / "home", port)
    trace = work / "rounds.jsonl"
    serve = [sys.executable, "-m", "mrtr_kit", "serve", "--stdio", "--example", "weather"]
    serve += ["--trace", str(trace)]
    passed = {k: os.environ[k] for k in ("PYTHONPATH",) if os.environ.get(k)}
    command = kit.inspector_command(stdio=serve, env=passed, era=era)
    process = kit.start_inspector(command, env, work / "log.txt")
    try:
        yield Server(kit.inspector_url(port, token), trace)
    finally:
        kit.stop(process)  # it ends its stdio child too


@pytest.fixture(scope="module")
def inspector_stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with inspector_on_stdio(tmp_path_factory.mktemp("inspector-stdio"), "modern") as server:
        yield server


@pytest.fixture(scope="module")
def inspector_stdio_legacy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with inspector_on_stdio(tmp_path_factory.mktemp("inspector-stdio-legacy"), None) as server:
        yield server


@pytest.fixture(scope="module")
def chromium_browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = playwright_sync_api()
    executable = system_binary("chromium", paths=("/usr/bin/chromium",))
    tmp = short_temp_dir()
    env = isolated_env(tmp_path_factory.mktemp("inspector-browser"), tmp)
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=executable, args=CHROMIUM_FLAGS, env=env
            )
            yield browser
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def inspector_legacy(lessons: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Inspector's UI on the same server in Inspector's DEFAULT era (no ``--protocol-era``):
    ``legacy``, 2025-11-25, as a user who starts Inspector without the flag gets it."""
    work = tmp_path_factory.mktemp("inspector-legacy")
    token, port = secrets.token_hex(16), kit.free_port()
    env = kit.inspector_env(token, work / "home", port)
    command = kit.inspector_command(url=lessons.url, era=None)
    assert "--protocol-era" not in command
    process = kit.start_inspector(command, env, work / "log.txt")
    try:
        yield kit.inspector_url(port, token)
    finally:
        kit.stop(process)


@contextmanager
def tool_page(
    browser: Any,
    inspector_url: str,
    tool: str = "get_weather",
    argument: tuple[str, str] = ("city", CITY),
    era: str = "MCP 2026-07-28",
) -> Iterator[Any]:
    """A fresh page of Inspector, connected to its server, on ``tool`` with its one argument;
    the server card shows ``era``, the protocol version it negotiated."""
    expect = playwright_sync_api().expect
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(EVENTUALLY_MS)
    context.route(OUTSIDE, lambda route: route.abort())
    try:
        page = context.new_page()
        page.goto(inspector_url)
        # The server card's toggle: its checkbox is drawn invisible (sometimes with no size at
        # all, which fails even a forced click), so click what a user clicks, the label around
        # it that holds the track; Playwright waits until that is visible and steady, and finds
        # it again if the page draws the card anew (which also gives the checkbox a new id).
        page.locator("label").filter(has=page.get_by_role("switch")).first.click()
        # exact: "Disconnected" contains "Connected".
        expect(page.get_by_text("Connected", exact=True)).to_be_visible(timeout=EVENTUALLY_MS)
        expect(page.get_by_text(era)).to_be_visible()  # the era it negotiated
        page.get_by_text("Tools", exact=True).first.click()
        page.get_by_role("button", name=tool, exact=True).click()
        page.get_by_role("textbox", name=argument[0], exact=True).fill(argument[1])
        yield page
    finally:
        context.close()


@pytest.fixture
def page(inspector: str, chromium_browser: Any) -> Iterator[Any]:
    with tool_page(chromium_browser, inspector) as page:
        yield page


def form_dialog(page: Any, text: str, *, mrtr: bool = True) -> Any:
    """Inspector's elicitation dialog showing ``text``, once it is there: with the badge
    ``input_required`` when the question came in an MRTR round (``mrtr``), without it when it
    came as a server-to-client request (2025-11-25)."""
    expect = playwright_sync_api().expect
    dialog = page.get_by_role("dialog").filter(has_text=text)
    expect(dialog).to_be_visible(timeout=EVENTUALLY_MS)
    expect(dialog).to_contain_text("Elicitation Request")
    if mrtr:
        expect(dialog).to_contain_text("input_required")
    else:
        expect(dialog).not_to_contain_text("input_required")
    return dialog


def result_text(page: Any, text: str) -> None:
    expect = playwright_sync_api().expect
    expect(page.locator("pre").filter(has_text=text).first).to_be_visible(timeout=EVENTUALLY_MS)


def test_inspector_fills_the_weather_form_and_shows_the_forecast(
    page: Any, lessons: Server
) -> None:
    """MRTR-C1, MRTR-C3, MRTR-C4: a real host answers the form and retries; the server saw a new
    id and the answer under the key it asked."""
    before = len(lessons.calls("get_weather"))
    page.get_by_role("button", name="Execute Tool").click()
    dialog = form_dialog(page, QUESTION)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / "inspector-form.png"
    page.screenshot(path=str(shot), animations="disabled")
    print(f"\nInspector's form for get_weather: {shot}")

    # Fields are named by their title (the label also holds a hidden "*" for required ones).
    dialog.get_by_role("textbox", name="Your login", exact=True).fill("grace")
    dialog.get_by_role("button", name="Submit").click()
    result_text(page, f"Hello grace! Weather now in {CITY}")
    expect = playwright_sync_api().expect
    expect(page.get_by_role("dialog").filter(has_text=QUESTION)).to_have_count(0)
    first, retry = lessons.calls("get_weather")[before:]  # exactly two rounds
    assert (first["outcome"], first["asked"], first["answers"]) == ("input_required", ["login"], {})
    assert retry["id"] != first["id"]  # MRTR-C3: a new id for the retry
    assert retry["answers"] == {"login": "accept"}  # MRTR-C4: keyed as asked
    assert retry["outcome"] == "complete"


def test_inspector_declines_and_the_tool_offers_the_public_forecast(
    page: Any, lessons: Server
) -> None:
    """MRTR-C8: decline is an answer, sent in a retry with a new id; ELIC-6: the tool respects
    the "no" with an alternative and does not ask again."""
    before = len(lessons.calls("get_weather"))
    page.get_by_role("button", name="Execute Tool").click()
    form_dialog(page, QUESTION).get_by_role("button", name="Decline").click()
    result_text(page, f"You chose not to sign in, so no personal forecast for {CITY}.")
    # Round 1, then the retry carrying decline, which completes.
    rounds = lessons.calls("get_weather")[before:]
    assert [r["answers"] for r in rounds] == [{}, {"login": "decline"}]
    assert len({r["id"] for r in rounds}) == 2
    assert [r["outcome"] for r in rounds] == ["input_required", "complete"]


def test_inspector_echoes_book_tables_request_state_and_the_server_verifies_it(
    inspector: str, chromium_browser: Any, lessons: Server
) -> None:
    """MRTR-C2, MRTR-S4a: book_table carries its progress in a sealed requestState; Inspector
    echoes it in the retry and the server verifies it (its trace says so)."""
    before = len(lessons.calls("book_table"))
    with tool_page(chromium_browser, inspector, "book_table", ("restaurant", "Luigi's")) as page:
        page.get_by_role("button", name="Execute Tool").click()
        dialog = form_dialog(page, "Booking Luigi's")
        shot = SCREENSHOTS / "inspector-book-table-form.png"
        page.screenshot(path=str(shot), animations="disabled")
        print(f"\nInspector's form for book_table: {shot}")
        dialog.get_by_role("button", name="Decline").click()
        result_text(page, "Nothing was booked at Luigi's.")
    # Lesson 05's checkpoint also wants a form submitted: the details, then the confirmation,
    # over three rounds whose state Inspector echoes each time (a fresh page: the first one
    # now shows its result where the tool's form was).
    with tool_page(chromium_browser, inspector, "book_table", ("restaurant", "Luigi's")) as page:
        page.get_by_role("button", name="Execute Tool").click()
        details = form_dialog(page, "Booking Luigi's")
        details.get_by_label("Date", exact=False).first.fill("2026-09-01")
        details.get_by_role("button", name="Submit").click()
        confirm = form_dialog(page, "Book Luigi's for")
        confirm.get_by_role("button", name="Submit").click()
        result_text(page, "Booked Luigi's for")
    first, retry = lessons.calls("book_table")[before : before + 2]
    assert (first["outcome"], first["state_issued"]) == ("input_required", True)
    assert retry["id"] != first["id"]
    assert retry["answers"] == {"details": "decline"}
    assert (retry["state"], retry["state_problem"]) == ("verified", None)
    assert retry["outcome"] == "complete"
    booked = lessons.calls("book_table")[before + 2 :]
    assert [r["outcome"] for r in booked] == ["input_required", "input_required", "complete"]
    assert [r["state"] for r in booked[1:]] == ["verified", "verified"]  # echoed, MRTR-C2
    print("\nthe server's trace of book_table:\n" + ServerTrace(lessons.trace).text())
    # Lesson 05's checkpoint, on what a real host did: it is the one the learner runs.
    verdict = check_host_flow(lessons.trace)
    assert verdict.passed, verdict


def test_inspector_in_its_default_era_gets_the_form_pushed_and_the_forecast(
    inspector_legacy: str, chromium_browser: Any, lessons: Server
) -> None:
    """Issue 29: Inspector 2.12 started with no ``--protocol-era`` speaks 2025-11-25 (VER-4's
    older side: ``initialize``, then a session). ``serve``'s default serves it from the same
    MRTR handler: the form arrives as a server-to-client ``elicitation/create`` on the call's
    stream (KIT: the 2025-11-25 adapter), and the answer completes the call. In the server's
    trace, the adapter ran the handler's two rounds in-process, the answer keyed as asked."""
    expect = playwright_sync_api().expect
    before = len(lessons.calls("get_weather"))
    with tool_page(chromium_browser, inspector_legacy, era="MCP 2025-11-25") as page:
        legacy = page.get_by_text(re.compile(r"^legacy$", re.IGNORECASE))
        expect(legacy.first).to_be_visible()  # Inspector's era badge
        page.get_by_role("button", name="Execute Tool").click()
        dialog = form_dialog(page, QUESTION, mrtr=False)
        # Inspector's message log: a request from the server to the client, 2025-11-25's wire
        pushed = page.get_by_text(re.compile(r"^elicitation/create$", re.IGNORECASE))
        expect(pushed.first).to_be_visible()
        expect(
            page.get_by_text(re.compile(r"^server → client$", re.IGNORECASE)).first
        ).to_be_visible()
        shot = SCREENSHOTS / "inspector-legacy-form.png"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), animations="disabled")
        print(f"\nInspector's form for get_weather, default (legacy) era: {shot}")
        dialog.get_by_role("textbox", name="Your login", exact=True).fill("grace")
        dialog.get_by_role("button", name="Submit").click()
        result_text(page, f"Hello grace! Weather now in {CITY}")
    first, retry = lessons.calls("get_weather")[before:]  # exactly two rounds, in-process
    assert (first["outcome"], first["asked"], first["answers"]) == ("input_required", ["login"], {})
    assert (retry["answers"], retry["outcome"]) == ({"login": "accept"}, "complete")


def test_inspector_spawns_serve_stdio_and_the_form_flow_completes(
    inspector_stdio: Server, chromium_browser: Any
) -> None:
    """STDIO-1: the same flow with Inspector's own child process; its trace has the rounds."""
    with tool_page(chromium_browser, inspector_stdio.url) as page:
        page.get_by_role("button", name="Execute Tool").click()
        dialog = form_dialog(page, QUESTION)
        dialog.get_by_role("textbox", name="Your login", exact=True).fill("ada")
        dialog.get_by_role("button", name="Submit").click()
        result_text(page, f"Hello ada! Weather now in {CITY}")
    first, retry = inspector_stdio.calls("get_weather")
    assert (first["outcome"], first["asked"]) == ("input_required", ["login"])
    assert retry["id"] != first["id"]
    assert (retry["answers"], retry["outcome"]) == ({"login": "accept"}, "complete")


def test_inspector_in_its_default_era_spawns_serve_stdio_and_the_form_is_pushed(
    inspector_stdio_legacy: Server, chromium_browser: Any
) -> None:
    """Issue 29, over stdio: Inspector's first message to ``serve --stdio`` is a 2025-11-25
    ``initialize``, which makes the connection a legacy session; the form comes as a pushed
    ``elicitation/create`` line, and the handler's two rounds run in-process."""
    with tool_page(chromium_browser, inspector_stdio_legacy.url, era="MCP 2025-11-25") as page:
        page.get_by_role("button", name="Execute Tool").click()
        dialog = form_dialog(page, QUESTION, mrtr=False)
        dialog.get_by_role("textbox", name="Your login", exact=True).fill("ada")
        dialog.get_by_role("button", name="Submit").click()
        result_text(page, f"Hello ada! Weather now in {CITY}")
    first, retry = inspector_stdio_legacy.calls("get_weather")
    assert (first["outcome"], first["asked"]) == ("input_required", ["login"])
    assert (retry["answers"], retry["outcome"]) == ({"login": "accept"}, "complete")
