"""A learner clicks lesson 01's cheat-sheet link in a real JupyterLab, and the cheat-sheet
opens in a tab (issue 19: the lessons' 14 links to ../docs/ and ../README.md did nothing while
the lab served notebooks/ only).

The lab is started the way ``python3 tools/kit.py lab`` starts it (``kit.lab_arguments``: the
repository as root, the file browser on notebooks/), on a copy of the repository's files
(``browser_support.copy_repository``), so JupyterLab's autosave never writes into the lessons.
Chromium is Debian's ``/usr/bin/chromium``, driven by Playwright for Python.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser_support import (
    CHROMIUM_FLAGS,
    SCREENSHOTS,
    Lab,
    isolated_env,
    playwright_sync_api,
    short_temp_dir,
    start_lab,
)
from tests.conftest import system_binary

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "notebooks/01-the-basic-flow/01-the-basic-flow.ipynb"
CHEATSHEET = "../../docs/cheatsheet.md"
EVENTUALLY_MS = 60_000  # a cap: every wait ends as soon as what it waits for is there


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = short_temp_dir()
    try:
        yield isolated_env(tmp_path_factory.mktemp("links-home"), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def repo_lab(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Iterator[Lab]:
    server = start_lab(tmp_path_factory.mktemp("repo-lab"), env, whole_repo=True)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def page(env: dict[str, str], repo_lab: Lab) -> Iterator[Any]:
    sync_api = playwright_sync_api()
    executable = system_binary("chromium", paths=("/usr/bin/chromium",))
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_FLAGS, env=env
        )
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(EVENTUALLY_MS)
        try:
            yield page
        finally:
            context.close()
            browser.close()
            repo_lab.shutdown_kernels()


def test_the_lab_serves_the_repository_and_opens_on_notebooks(repo_lab: Lab):
    """Root = the repository (docs/ and README.md are in it), preferred folder notebooks/."""
    names = {item["name"] for item in repo_lab.api("/api/contents")["content"]}
    assert {"docs", "notebooks", "README.md"} <= names, names
    assert repo_lab.api("/api/contents/docs/cheatsheet.md")["type"] == "file"


@pytest.mark.parametrize(
    ("notebook", "text", "tab", "heading"),
    [
        (
            "01-the-basic-flow/01-the-basic-flow.ipynb",
            "docs/cheatsheet.md",
            "cheatsheet.md",
            "MRTR cheat-sheet",
        ),
        (
            "04-port-your-own-server/04-port-your-own-server.ipynb",
            "README.md",
            "README.md",
            "mrtr-kit",
        ),
    ],
    ids=["01 cheat-sheet", "04 README"],
)
def test_a_lessons_link_opens_the_page_rendered_in_a_tab(
    repo_lab: Lab, page: Any, notebook: str, text: str, tab: str, heading: str
):
    """Lesson 01's cheat-sheet link (the README says to keep the page at hand) and lesson 04's
    link back to the README: a click opens the file in a JupyterLab tab, rendered (its first
    heading is an <h1>, not a line of Markdown source in an editor)."""
    expect = playwright_sync_api().expect
    page.goto(repo_lab.notebook_url(f"notebooks/{notebook}"))
    panel = page.locator(".jp-NotebookPanel:visible")
    panel.locator(".jp-Notebook").wait_for()
    # JupyterLab rewrites a relative href to the file's URL: find the link by its text.
    link = panel.locator(".jp-RenderedMarkdown a", has_text=text).last
    link.scroll_into_view_if_needed()
    link.click()
    tabs = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=tab)
    expect(tabs).to_have_count(1)
    opened = page.locator(".jp-MainAreaWidget:visible .jp-RenderedMarkdown h1").first
    expect(opened).to_contain_text(heading)  # JupyterLab adds a "¶" anchor link
    expect(opened).to_be_visible()


def test_a_learner_finds_all_of_lesson_02_in_its_folder(repo_lab: Lab, page: Any):
    """Issue 28's walk: from JupyterLab's file browser (on notebooks/, as `kit.py lab` opens it),
    lesson 02's folder holds its notebook, its attacks, its checkpoints, its quiz and its
    solutions, each named after the lesson; its lab is the course's shared refund lab."""
    expect = playwright_sync_api().expect
    workspace = "walk-02"
    page.goto(f"{repo_lab.base}/lab/workspaces/{workspace}/tree/notebooks?token={repo_lab.token}")
    listing = page.locator(".jp-DirListing-content")
    folder = listing.locator(".jp-DirListing-item", has_text="02-securing-request-state")
    folder.dblclick()
    names = listing.locator(".jp-DirListing-itemName")
    expect(listing.locator(".jp-DirListing-item", has_text="lesson02_attacks.py")).to_have_count(1)
    shown = set(names.all_inner_texts())
    assert {
        "02-securing-request-state.ipynb",
        "lesson02_attacks.py",
        "lesson02_checkpoints.py",
        "lesson02_quiz.py",
        "solutions",
    } <= shown, shown
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "02-folder.png"))
    listing.locator(".jp-DirListing-item", has_text="solutions").dblclick()
    expect(listing.locator(".jp-DirListing-item", has_text="02_unseal.py")).to_have_count(1)
    shown = set(names.all_inner_texts())
    assert {"02_forge_admin.py", "02_unseal.py"} <= shown, shown
    assert "02_verify_claims.py" not in shown  # the claim checks are lesson 02a's
