"""KIT: the docs site (``python3 tools/kit.py docs``, docs/conf.py) builds clean and complete.

One build, with the flags ``kit.py docs`` uses, into a temporary folder: no warning (a broken
internal link is one: MyST resolves every link of a page or a lesson at build time), and,
checked again on the HTML it wrote, no relative link to a missing page or anchor. Every lesson
(``notebooks/NN-name/NN-name.ipynb``, as found) is a page with its stored outputs, none executed;
every public name of the library is on an API page; the deployment guide shows the nginx file the
tests run. A browser opens an API page and the guide. Prints the page count and the API coverage.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from functools import partial
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from tests.browser_support import load_kit

ROOT = Path(__file__).resolve().parents[1]
from tests.library.test_docstrings import public_definitions  # noqa: E402  (the one list)

pytestmark = pytest.mark.slow  # a Sphinx build in a subprocess, about 20 s


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """(the built site, what the build printed)."""
    if importlib.util.find_spec("sphinx") is None or importlib.util.find_spec("myst_nb") is None:
        message = "Sphinx and MyST-NB are not installed (the `docs` extra)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI must install it")
        pytest.skip(message)
    out = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "sphinx", *load_kit(ROOT).SPHINX_FLAGS, ".", str(out)]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    yield out, run.stdout + run.stderr + f"\nexit status {run.returncode}"


class _Page(HTMLParser):
    """The ids a page defines and the hrefs it links to."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name == "href" and value and tag == "a":
                self.hrefs.append(value)


def broken_links(site: Path) -> list[str]:
    """Every relative link of the site's pages whose file or anchor is not there."""
    pages: dict[Path, _Page] = {}
    for path in site.rglob("*.html"):
        if "_sources" in path.parts or "_static" in path.parts:
            continue
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        pages[path.resolve()] = page
    broken = []
    for path, page in pages.items():
        for href in page.hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue  # external: not checked (no network)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(site)} -> {href} (no such file)")
            elif parts.fragment and target in pages and parts.fragment not in pages[target].ids:
                broken.append(f"{path.relative_to(site)} -> {href} (no such anchor)")
    return broken


def inventory_names(site: Path) -> set[str]:
    """The Python objects the site documents (from its objects.inv)."""
    from sphinx.util.inventory import InventoryFile

    with (site / "objects.inv").open("rb") as stream:
        inventory = InventoryFile.load(stream, "", lambda base, uri: uri)
    return {
        name for kind, entries in inventory.items() if kind.startswith("py:") for name in entries
    }


def dotted(definition: str) -> str:
    """``mrtr_kit/server/core.py:McpServer.handle`` -> ``mrtr_kit.server.core.McpServer.handle``."""
    path, _, qualname = definition.partition(":")
    module = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return f"{module}.{qualname}" if qualname else module


def api_coverage(names: set[str]) -> tuple[list[str], int]:
    """(public names not on an API page or without a docstring, how many public names)."""
    found = public_definitions()
    missing = []
    for definition, has_doc in found:
        name = dotted(definition)
        # __init__ is listed only when the class docstring does not cover its arguments;
        # autodoc shows it as the class's signature and docstring, not an entry of its own.
        shown = name.removesuffix(".__init__") if name.endswith(".__init__") else name
        if not has_doc or shown not in names:
            missing.append(name)
    return missing, len(found)


def test_the_site_builds_without_a_warning(site):
    _, log = site
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert not warnings, "\n".join(warnings)
    assert log.endswith("exit status 0"), log[-3000:]


def test_no_internal_link_is_broken(site):
    out, _ = site
    broken = broken_links(out)
    pages = [p for p in out.rglob("*.html") if "_sources" not in p.parts]
    print(f"\ndocs site: {len(pages)} pages, {len(broken)} broken internal links")
    assert len(pages) > 40
    assert not broken, "\n".join(broken)


def test_the_changelog_and_the_policy_are_pages_and_name_this_version(site):
    """Issue 30, item 7: CHANGELOG.md (Keep a Changelog) with an entry for the version the code
    reports, and the versioning and deprecation policy, both on the site."""
    from mrtr_kit import __version__

    out, _ = site
    changelog = (out / "CHANGELOG.html").read_text(encoding="utf-8")
    policy = (out / "docs" / "policy.html").read_text(encoding="utf-8")
    assert f"[{__version__}] - " in html.unescape(changelog)
    assert "docs/policy.html" in changelog  # the changelog points at the policy
    assert "What is public API" in policy and "CHANGELOG.html" in policy


def test_every_lesson_is_a_page_with_its_stored_outputs(site):
    """Every notebooks/NN-name/NN-name.ipynb, found, not listed: one output block per code cell that
    has stored outputs (nothing executed: ``nb_execution_mode = "off"``)."""
    out, _ = site
    lessons = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
    assert len(lessons) >= 7
    for lesson in lessons:
        page = out / "notebooks" / lesson.parent.name / f"{lesson.stem}.html"
        assert page.exists(), f"no page for {lesson.name}"
        stored = sum(
            1 for c in nbformat.read(lesson, 4).cells if c.cell_type == "code" and c.outputs
        )
        shown = page.read_text(encoding="utf-8").count('class="cell_output')
        assert shown == stored, f"{lesson.name}: {shown} outputs shown, {stored} stored"


def test_every_public_name_of_the_library_is_on_an_api_page(site):
    out, _ = site
    names = inventory_names(out)
    missing, total = api_coverage(names)
    documented = total - len(missing)
    print(f"\nAPI coverage: {documented}/{total} public names with docstrings on the site")
    assert (out / "docs" / "api.html").exists()
    for package in ("protocol", "server", "client"):
        assert (out / "docs" / "api" / f"mrtr_kit.{package}.html").exists()
    assert (out / "docs" / "api" / "mrtr_kit.forms.html").exists()
    assert not missing, "not on the site, or without a docstring:\n  " + "\n  ".join(missing)


def test_the_deployment_guide_shows_the_nginx_file_the_tests_run(site):
    """The guide includes mrtr_kit/server/nginx.conf (what ``server.nginx.Nginx`` runs) whole."""
    out, _ = site
    page = (out / "docs" / "deploy.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    template = (ROOT / "mrtr_kit" / "server" / "nginx.conf").read_text(encoding="utf-8")
    absent = [line for line in template.splitlines() if line.strip() not in text]
    assert not absent, "lines of nginx.conf the guide does not show:\n" + "\n".join(absent)
    assert "Deploying an MRTR server" in text


# -- in a browser ----------------------------------------------------------------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # no line per request
        pass


@pytest.fixture(scope="module")
def served(site) -> Iterator[str]:
    """The built site over HTTP on 127.0.0.1, from a thread (listening before it starts)."""
    out, _ = site
    handler = partial(_QuietHandler, directory=str(out))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_an_api_page_and_the_deployment_guide_in_a_browser(served, tmp_path):
    from tests.browser_support import CHROMIUM_FLAGS, isolated_env, short_temp_dir
    from tests.conftest import system_binary

    try:
        from playwright import sync_api
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is not installed; CI must install it")
        pytest.skip("playwright is not installed (it is in the test extra)")
    executable = system_binary("chromium", paths=("/usr/bin/chromium",))
    temp = short_temp_dir()
    env = isolated_env(tmp_path, temp)
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=executable, args=CHROMIUM_FLAGS, env=env
            )
            try:
                page = browser.new_page()
                page.goto(f"{served}/index.html")  # the root page links to the front page
                page.wait_for_url("**/docs/index.html")
                page.goto(f"{served}/docs/api/mrtr_kit.server.keyring.html")
                heading = page.get_by_role("heading", name="mrtr_kit.server.keyring", exact=False)
                sync_api.expect(heading.first).to_be_visible()
                sync_api.expect(
                    page.locator("#mrtr_kit\\.server\\.keyring\\.KeyRing")
                ).to_be_visible()
                page.goto(f"{served}/docs/deploy.html")
                title = page.get_by_role("heading", name="Deploying an MRTR server")
                sync_api.expect(title).to_be_visible()
                # The guide's link to the key ring lands on its entry in the API reference.
                page.get_by_role("link", name="key ring").first.click()
                page.wait_for_url("**/mrtr_kit.server.keyring.html#mrtr_kit.server.keyring.KeyRing")
                sync_api.expect(
                    page.locator("#mrtr_kit\\.server\\.keyring\\.KeyRing")
                ).to_be_visible()
            finally:
                browser.close()
    finally:
        import shutil

        shutil.rmtree(temp, ignore_errors=True)
