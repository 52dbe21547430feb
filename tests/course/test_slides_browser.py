"""Every deck ``tools/slides.py build`` writes, opened as a file in Chromium at 1280×720 with the
network blocked (issue 32, B1 of the instructor review): nothing is requested from outside, the
diagrams are drawn, reveal's navigation moves between slides, and no slide and no code block
overflows its box.

Every request that is not a file or loopback is aborted and counted: a deck that needs a CDN
fails here, as it would in a room without Wi-Fi. Each slide is visited with reveal's API
(``Reveal.slide(h, v)``) and measured: the slide's content against reveal's 1280×720 canvas,
and every ``pre`` (code and output) against its own box. The figures are printed (``-s``).
Measured on 2026-12-06 (issue 32): the decks ``build`` wrote before this test existed made 6
requests each (reveal.js 4.0.2, require.js, jQuery, MathJax, Mermaid, a theme) and, offline,
were one long page with no navigation; with those files served from their npm packages,
64 of their 161 slides overflowed reveal's 960×700 canvas and 34 code blocks were cut. Now:
171 slides, 0 overflowing, 0 code blocks cut, 0 requests.

Two screenshots are kept in ``screenshots/slides/`` (gitignored): a slide with code, and the
slide after it, reached with the arrow key; from there the speaker view (**S**) opens, offline,
with the text the slide left out.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_support import CHROMIUM_FLAGS, isolated_env, playwright_sync_api, short_temp_dir
from tests.conftest import system_binary
from tests.lesson_files import LESSONS as LESSON_DIR
from tests.lesson_files import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import slides

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSONS = sorted(LESSON_DIR.glob(slides.LESSON_GLOB))
SHOTS = ROOT / "screenshots" / "slides"
EVENTUALLY_MS = 60_000  # a cap: every wait ends as soon as what it waits for is there

# Visit every slide and measure it: reveal's canvas is WIDTH×HEIGHT whatever the window, so the
# slide's content must fit in it, and each <pre> must show all its text without scrolling.
MEASURE = """() => {
  const config = Reveal.getConfig();
  const found = [];
  const horizontal = Reveal.getHorizontalSlides();
  horizontal.forEach((stack, h) => {
    const below = stack.querySelectorAll(":scope > section");
    const count = below.length || 1;
    for (let v = 0; v < count; v++) {
      Reveal.slide(h, v);
      const slide = Reveal.getCurrentSlide();
      const title = (slide.querySelector("h1, h2, h3") || {}).textContent || "";
      const code = [];
      for (const pre of slide.querySelectorAll("pre")) {
        if (pre.closest("aside.notes") || !pre.offsetParent) continue;
        if (pre.scrollWidth > pre.clientWidth + 1 || pre.scrollHeight > pre.clientHeight + 1) {
          code.push({ text: pre.textContent.slice(0, 60),
                      width: pre.scrollWidth, box: pre.clientWidth,
                      height: pre.scrollHeight, boxHeight: pre.clientHeight });
        }
      }
      found.push({ h, v, title: title.replace("¶", "").trim().slice(0, 70),
                   height: slide.scrollHeight, width: slide.scrollWidth,
                   tooTall: slide.scrollHeight > config.height + 1,
                   tooWide: slide.scrollWidth > config.width + 1, code });
    }
  });
  Reveal.slide(0, 0);
  return found;
}"""


def overflowing(measured: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The slides that overflow the canvas, and the code blocks that overflow their box."""
    slides_out = [
        f"#/{m['h']}/{m['v']} {m['title']!r}: {m['width']}×{m['height']} px"
        for m in measured
        if m["tooTall"] or m["tooWide"]
    ]
    code_out = [
        f"#/{m['h']}/{m['v']} {c['text']!r}: {c['width']}×{c['height']} px"
        f" in {c['box']}×{c['boxHeight']}"
        for m in measured
        for c in m["code"]
    ]
    return slides_out, code_out


TOTALS = {"decks": 0, "slides": 0, "overflowing": 0, "code blocks cut": 0, "blocked": 0}


@pytest.fixture(scope="module")
def decks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every lesson's deck, with vendor/ beside them, as ``kit.py slides`` writes them; the
    figures of all decks are printed at the end (``-s``)."""
    out = tmp_path_factory.mktemp("decks")
    try:
        slides.vendor(out)
    except slides.VendorError as exc:
        message = f"reveal.js and Mermaid: {exc}"
        if os.environ.get("CI"):  # .ci/run fetches them first ("slides assets")
            pytest.fail(message)
        pytest.skip(message)
    for lesson in LESSONS:
        slides.build(lesson, out)
    yield out
    print("\nall decks: " + ", ".join(f"{value} {name}" for name, value in TOTALS.items()))


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = playwright_sync_api()
    executable = system_binary("chromium", paths=("/usr/bin/chromium",))
    tmp = short_temp_dir()
    env = isolated_env(tmp_path_factory.mktemp("slides-home"), tmp)
    try:
        with sync_api.sync_playwright() as playwright:
            launched = playwright.chromium.launch(
                executable_path=executable, args=CHROMIUM_FLAGS, env=env
            )
            try:
                yield launched
            finally:
                launched.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Offline:
    """A 1280×720 page on which every request but file:// and loopback is aborted and kept."""

    LOCAL = ("file://", "http://127.0.0.1", "http://localhost", "data:", "blob:")

    def __init__(self, browser: Any) -> None:
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 720})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(EVENTUALLY_MS)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.LOCAL):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def open(self, deck: Path) -> None:
        self.page.goto(deck.as_uri())
        self.page.wait_for_function("() => window.Reveal && Reveal.isReady()")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_the_deck_works_offline_and_fits_the_screen(decks: Path, browser: Any, lesson: Path):
    deck = decks / f"{lesson.stem}.slides.html"
    offline = Offline(browser)
    try:
        offline.open(deck)
        page = offline.page
        diagrams = page.locator(".mrtr-diagram svg").count()
        sources = deck.read_text("utf-8").count('<pre class="mermaid">')
        measured = page.evaluate(MEASURE)
        too_big, code_cut = overflowing(measured)
        print(
            f"\n{deck.name}: {len(measured)} slides, {len(too_big)} overflowing, "
            f"{len(code_cut)} code blocks cut, {len(offline.blocked)} requests blocked, "
            f"{diagrams}/{sources} diagrams drawn"
        )
        counts = (1, len(measured), len(too_big), len(code_cut), len(offline.blocked))
        for name, value in zip(TOTALS, counts, strict=True):
            TOTALS[name] += value
        assert offline.blocked == [], f"the deck asks the network: {offline.blocked}"
        assert offline.errors == [], offline.errors
        assert sources >= 1 and diagrams == sources, (diagrams, sources)
        assert too_big == [], "slides taller or wider than 1280×720:\n" + "\n".join(too_big)
        assert code_cut == [], "code blocks cut:\n" + "\n".join(code_cut)
        # Navigation: reveal's API and the keyboard both move; the speaker notes stay hidden.
        assert page.evaluate("() => Reveal.getIndices()")["h"] == 0
        page.evaluate("() => Reveal.next()")
        after_next = page.evaluate("() => Reveal.getIndices()")
        assert (after_next["h"], after_next.get("v") or 0) != (0, 0)
        page.evaluate("() => Reveal.prev()")
        assert page.evaluate("() => Reveal.getIndices()")["h"] == 0
        page.keyboard.press("ArrowRight")
        assert page.evaluate("() => Reveal.getIndices()")["h"] == 1
        page.wait_for_function("() => location.hash === '#/1'")  # a slide can be linked
        notes = page.locator("aside.notes")
        assert notes.count() >= len(measured) // 2 and not notes.first.is_visible()
    finally:
        offline.context.close()


def test_screenshots_of_a_code_slide_and_the_next(decks: Path, browser: Any):
    """Lesson 01 offline: the first slide with code, then ArrowRight (the slide counter moves)."""
    offline = Offline(browser)
    try:
        offline.open(decks / "01-the-basic-flow.slides.html")
        page = offline.page
        found = page.evaluate(
            """() => { const all = Reveal.getSlides();
                 const i = all.findIndex((s) => s.querySelector('.jp-CodeCell pre'));
                 const where = Reveal.getIndices(all[i]); Reveal.slide(where.h, where.v);
                 return where; }"""
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "01-code-slide.png"))
        number = page.locator(".slide-number").inner_text()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => Reveal.getIndices().h !== {found['h']}")
        assert page.locator(".slide-number").inner_text() != number
        page.screenshot(path=str(SHOTS / "01-after-arrow-right.png"))
        # The speaker view (S) on the title slide: the header's whole text, which the slide
        # only summarises ("How long" is in every lesson's header, never on its first slide).
        page.evaluate("() => Reveal.slide(0, 0)")
        assert "How long" not in page.evaluate("() => Reveal.getCurrentSlide().innerText")
        with offline.context.expect_page() as opened:
            page.keyboard.press("s")
        notes = opened.value.locator(".speaker-controls-notes")
        notes.get_by_text("How long").wait_for()
        assert offline.blocked == []
    finally:
        offline.context.close()
