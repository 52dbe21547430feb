"""Slide decks from the lessons, for an instructor to talk over (issues 21 and 32).

    .venv/bin/python tools/slides.py build [--out slides] [notebooks/NN-name/NN-name.ipynb ...]
    .venv/bin/python tools/slides.py mark [notebooks/NN-name/NN-name.ipynb ...]
    .venv/bin/python tools/slides.py titles notebooks/NN-name/NN-name.ipynb
    python3 tools/slides.py vendor [--out slides]    # only fetch and copy reveal.js and Mermaid

(``python3 tools/kit.py slides`` runs ``vendor`` then ``build`` with the kit's environment.)

**Which cells are slides** is marked in each notebook's cell metadata, ``"slideshow":
{"slide_type": ...}``: the field both nbconvert's reveal.js decks and RISE (live slides inside
JupyterLab, the ``jupyterlab-rise`` extension the lab extra installs, which needs no network)
read. ``mark`` writes those marks by the rules below into cells that have none (a mark set by
hand is kept), so a lesson's author runs it after adding cells; ``tests/course/test_slides.py``
fails when a lesson has an unmarked cell. The rules follow the lessons' layout, one concept a
cell:

* the header cell and every ``## `` section opens a slide;
* every other markdown cell (one concept) opens a subslide below it, and the code cells after it
  stay on that subslide (``-``);
* what a talk does not show is skipped: the set-up code, an exercise's own cells after its task
  (the learner's cell, the hint, the ``%load`` solution, the checkpoint).

**What a deck shows** (``build``): a lesson is written to be read, a deck to be talked over on a
1280×720 projector. ``build`` does not print the marked cells as they are: it makes each
slide or subslide *slide-sized* (``slide_notebook``), by these rules, on a copy (the lesson is
not changed, nothing is executed, stored outputs are used as they are):

* **Summary.** From each shown markdown cell: its first heading, then its first paragraph cut
  after the last whole sentence that fits ``SUMMARY_CHARS`` (at least one sentence), or, when the
  text opens with a list (a "Key points" section), that list. A whole first paragraph that ends
  in a colon keeps what it announces: the list (its first items up to ``COLON_CHARS``) or the
  code block (up to ``CODE_LINES`` lines) right after it. The lesson's first cell also keeps its
  first list ("What you will learn"). The **whole** cell goes to the slide's speaker notes
  (press **S** in the deck), so nothing the lesson says is lost.
* **Diagram.** A ```` ```mermaid ```` block gets a subslide of its own after its cell's slide.
* **Key code.** Every shown code cell but one that only imports, without prompts, up to
  ``CODE_LINES`` lines (longer cells end in ``# … N more lines in the notebook``).
* **Key output.** Each output as text: ``text/plain`` (widgets show their text copy, as on
  GitHub), an error as ``Name: message``. Lines are cut at ``OUTPUT_COLUMNS`` characters, and
  the output at the lines the slide has room for (``OUTPUT_LINES`` at most), ending in
  ``… N more lines in the notebook``. With fewer than ``OUTPUT_MIN`` lines of room beside its
  code, the output moves to a continuation subslide under the code's last line.
* **Room.** A slide holds ``PAGE_UNITS`` units, one unit a code line (17 px code at 1280×720;
  a heading and every text line count more, see ``units``). When the next code cell does not fit
  beside what a slide already shows, it opens a continuation subslide ("… (continued)").

``tests/course/test_slides_browser.py`` opens every deck in Chromium at 1280×720 with the network
blocked and fails on a slide or a code block that overflows its box, so the figures above are
checked, not hoped for.

**Offline.** A deck loads nothing from the network: reveal.js and Mermaid are copied beside the
decks (``OUT/vendor/``) from their npm packages, pinned in ``ASSETS`` by version and sha512 (the
integrity npm records). ``vendor`` fetches the two tarballs once with ``npm pack`` (npm checks them
against the registry, this file checks them against ``ASSETS``) into ``.slides-vendor/`` and copies
only what a deck uses, with each package's licence. There is no jQuery, require.js or MathJax
(the lessons use no maths), and no web font (reveal's theme embeds its own). Build the decks
before the workshop; ``slides/`` then works from a USB stick, opened as files.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
VENDOR_CACHE = ROOT / ".slides-vendor"  # the npm tarballs, fetched once (gitignored)
LESSON_GLOB = "[0-9][0-9]*-*/[0-9][0-9]*-*.ipynb"  # as tools/kit.py: 01-..., 01b-...-OPTIONAL
EXERCISE = re.compile(r"^### Exercise \d+ · ", re.M)
CHECKPOINT = re.compile(r"(await )?[\w.]*check_\w+\(.*\)")  # as benchmarks/reading_time.py
SECTION = re.compile(r"^## ", re.M)
SETUP = "## Setup"

# The layout a deck is fitted to (the CSS in TEMPLATE uses the same figures).
WIDTH, HEIGHT = 1280, 720
SUMMARY_CHARS = 420  # the first paragraph, cut at a sentence end: about five lines of 24 px text
LIST_CHARS = 1100  # an opening list ("Key points") is shown whole up to this (14 lines)
COLON_CHARS = 600  # the list a summary announces with a colon: its first items up to this
TEXT_COLUMNS = 92  # characters in one line of 24 px text, 1200 px wide (code spans are wider)
CODE_LINES = 22
OUTPUT_LINES = 16
OUTPUT_MIN = 6  # fewer lines than this beside the code: the output gets a subslide of its own
OUTPUT_COLUMNS = 108  # 17 px monospace in a 1190 px box: about 115 characters
PAGE_UNITS = 32  # 720 px less the margins and the controls, in code lines (21 px each)


@dataclass(frozen=True)
class Asset:
    """One npm package a deck uses: which version, its sha512 integrity, and the files copied."""

    package: str
    version: str
    integrity: str
    files: tuple[str, ...]  # paths inside the package, copied to OUT/vendor/<package>/<path>

    @property
    def tarball(self) -> str:
        return f"{self.package}-{self.version}.tgz"


ASSETS = (
    Asset(
        "reveal.js",
        "6.0.2",
        "sha512-JYIg5D9aoxoaLeb84O+OvAwsKWdIavVgEDScxtYEXFCT6t6TQrhNtSgogcjdCpdLsWglhJn3zyE3fUOwiH5KEg==",
        (
            "LICENSE",
            "dist/reveal.js",
            "dist/reveal.css",
            "dist/theme/white.css",
            "dist/plugin/notes.js",
        ),
    ),
    Asset(
        "mermaid",
        "12.4.0",
        "sha512-j2gvsGUFeS/53WdYLl9H5G2YtMZX9G/PlCvV3E5Pf4j5XSnK19DwazU6wki7OTcKeYKed7+qujRDLhy8NV2zBg==",
        ("LICENSE", "dist/mermaid.min.js"),  # one classic script: file:// pages load no modules
    ),
)


def lessons(paths: list[str] | None = None) -> list[Path]:
    if paths:
        return [Path(p).resolve() for p in paths]
    return sorted(NOTEBOOKS.glob(LESSON_GLOB))


def slide_type(cell: Any) -> str | None:
    return cell.get("metadata", {}).get("slideshow", {}).get("slide_type")


def planned_types(nb: Any) -> list[str]:
    """The slide type the rules give each cell of ``nb``, in order."""
    types: list[str] = []
    in_exercise = in_setup = False
    for i, cell in enumerate(nb.cells):
        source = cell.source
        if cell.cell_type == "markdown":
            in_setup = source.lstrip().startswith(SETUP)
            if in_setup:
                types.append("skip")
                continue
            if i == 0 or SECTION.match(source.lstrip()):
                in_exercise = False
                types.append("slide")
                continue
            if EXERCISE.search(source):
                in_exercise = True
                types.append("subslide")
                continue
            types.append("skip" if in_exercise else "subslide")
            continue
        if in_exercise:
            types.append("skip")
            if CHECKPOINT.fullmatch(source.strip()):
                in_exercise = False
            continue
        types.append("skip" if in_setup else "-")
    return types


def mark(path: Path) -> int:
    """Mark the cells of ``path`` that have no slide type; return how many were marked."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    marked = 0
    for cell, planned in zip(nb.cells, planned_types(nb), strict=True):
        if slide_type(cell) is None:
            cell.metadata["slideshow"] = {"slide_type": planned}
            marked += 1
    if marked:
        nbformat.write(nb, path)
    return marked


def titles(nb: Any) -> list[str]:
    """The first line of every cell that opens a slide: what a deck's outline shows."""
    found = []
    for cell in nb.cells:
        if slide_type(cell) == "slide" and cell.cell_type == "markdown":
            first = next((line for line in cell.source.splitlines() if line.strip()), "")
            found.append(first.lstrip("#").strip())
    return found


# --- What a slide shows ------------------------------------------------------------------------

FENCE = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.M | re.S)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(*`\"“])")  # "e.g. x" does not end one
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Summary:
    heading: str  # "## 1. A section", or ""
    text: str  # the first paragraph, shortened, or the opening list
    diagrams: list[str]  # the bodies of the cell's ```mermaid blocks


def blocks(markdown: str) -> list[str]:
    """The cell's blocks (paragraphs, lists, headings, fences), in order; a heading is a block
    of its own even with text right under it."""
    found: list[str] = []
    rest = markdown
    while rest:
        fence = FENCE.search(rest)
        head = rest[: fence.start()] if fence else rest
        for chunk in re.split(r"\n[ \t]*\n", head):
            lines = chunk.strip("\n").splitlines()
            while lines and lines[0].startswith("#"):
                found.append(lines.pop(0).strip())
            if any(line.strip() for line in lines):
                found.append("\n".join(lines).strip())
        if not fence:
            break
        found.append(fence.group(0).strip())
        rest = rest[fence.end() :]
    return found


def shorten(paragraph: str, limit: int = SUMMARY_CHARS) -> str:
    """Whole sentences from the start while they fit ``limit`` (the first one always)."""
    sentences = SENTENCE_END.split(" ".join(paragraph.split()))
    kept = sentences[0]
    for sentence in sentences[1:]:
        if len(kept) + 1 + len(sentence) > limit:
            break
        kept += " " + sentence
    return kept


def is_list(block: str) -> bool:
    return bool(re.match(r"^([-*+]|\d+\.)\s", block))


def summarize(markdown: str, *, opening: bool = False) -> Summary:
    """A markdown cell's slide: its first heading, its first paragraph or list, its diagrams;
    the lesson's ``opening`` cell also keeps its first list ("What you will learn")."""
    heading, text, diagrams = "", "", []
    found = blocks(markdown)
    for at, block in enumerate(found):
        fence = FENCE.fullmatch(block)
        if fence and fence.group(1) == "mermaid":
            diagrams.append(fence.group(2).rstrip())
        elif block.startswith("#"):
            heading = heading or block
        elif not text and not fence and not block.startswith(("<", "|")):
            if is_list(block):
                text = block if len(block) <= LIST_CHARS else shorten_list(block)
            else:
                text = shorten(block)
                if opening:
                    text += opening_list(found[at + 1 :])
                elif text.endswith(":") and text == " ".join(block.split()):
                    text += what_follows(found[at + 1 :])
    return Summary(heading, text, diagrams)


def what_follows(rest: list[str]) -> str:
    """What a summary ending in a colon announces: the list or the code right after it."""
    block = next((b for b in rest if not b.startswith("#")), "")
    fence = FENCE.fullmatch(block)
    if fence and fence.group(1) != "mermaid" and len(block.splitlines()) <= CODE_LINES:
        return f"\n\n{block}"
    if is_list(block):
        return "\n\n" + (block if len(block) <= COLON_CHARS else shorten_list(block, COLON_CHARS))
    return ""


def opening_list(rest: list[str]) -> str:
    """The first list after the opening paragraph, with its label ("**What you will learn**")."""
    for at, block in enumerate(rest):
        if is_list(block):
            before = rest[at - 1] if at else ""
            label = before if re.fullmatch(r"\*\*[^*]{1,60}\*\*:?", before) else ""
            kept = block if len(block) <= LIST_CHARS else shorten_list(block)
            return "".join(f"\n\n{part}" for part in (label, kept) if part)
    return ""


def shorten_list(block: str, limit: int = LIST_CHARS) -> str:
    """The first items of a list while they fit ``limit`` (the first one always)."""
    items = re.split(r"\n(?=[-*+]\s|\d+\.\s)", block)
    kept: list[str] = []
    for item in items:
        if kept and sum(map(len, kept)) + len(item) > limit:
            break
        kept.append(item)
    return "\n".join(kept)


def text_lines(text: str) -> int:
    return sum(max(1, -(-len(line) // TEXT_COLUMNS)) for line in text.splitlines() or [""])


def units(summary: Summary) -> float:
    """The room a summary takes, in code lines: a heading about 3, a text line 1.5."""
    used = 3.0 if summary.heading else 0.0
    if summary.text:
        used += 1.5 * text_lines(summary.text) + 0.5
    return used


def only_imports(source: str) -> bool:
    """A cell that only imports: the lesson's set-up, not what a slide is about."""
    lines = [line for line in source.splitlines() if line.strip() and not line.startswith("#")]
    return bool(lines) and all(
        line.startswith(("import ", "from ")) or line.startswith((" ", ")")) for line in lines
    )


def output_text(output: Any) -> str:
    """One output as a slide shows it: text, as the notebook's text copy reads."""
    kind = output.get("output_type")
    if kind == "stream":
        return str(output.get("text", ""))
    if kind == "error":
        return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    data = output.get("data", {})
    if "text/plain" in data:
        text = data["text/plain"]
        return text if isinstance(text, str) else "".join(text)
    return ""  # an image or HTML with no text copy: the lessons have none


def trim_output(text: str, room: int) -> str:
    """``text`` cut to ``room`` lines of ``OUTPUT_COLUMNS`` characters, saying what was cut."""
    lines = [
        line if len(line) <= OUTPUT_COLUMNS else line[: OUTPUT_COLUMNS - 1] + "…"
        for line in ANSI.sub("", text).rstrip("\n").splitlines()
    ]
    if len(lines) <= room:
        return "\n".join(lines)
    kept = room - 1
    return "\n".join([*lines[:kept], f"… {len(lines) - kept} more lines in the notebook"])


def trim_code(source: str) -> str:
    lines = source.rstrip("\n").splitlines()
    if len(lines) <= CODE_LINES:
        return "\n".join(lines)
    kept = CODE_LINES - 1
    return "\n".join([*lines[:kept], f"# … {len(lines) - kept} more lines in the notebook"])


def continued(title: str) -> str:
    return f"### {title} (continued)" if title else ""


def slide_notebook(nb: Any) -> Any:
    """A copy of ``nb`` whose cells are the deck: slide-sized pages, by the rules above."""
    import nbformat

    new = nbformat.v4.new_notebook(metadata=nb.metadata)
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell

    def marked(cell: Any, kind: str) -> Any:
        cell.metadata["slideshow"] = {"slide_type": kind}
        return cell

    section = ""  # the current "## " heading, to title a continuation
    used = 0.0  # room used on the page being filled
    has_code = False
    title = ""
    for cell in nb.cells:
        kind = slide_type(cell) or "-"
        if kind == "skip":
            continue
        if cell.cell_type == "markdown":
            summary = summarize(cell.source, opening=cell is nb.cells[0])
            if summary.heading.startswith(("# ", "## ")):
                section = summary.heading.lstrip("#").strip()
            title = summary.heading.lstrip("#").strip() or section
            shown = "\n\n".join(part for part in (summary.heading, summary.text) if part)
            opens = kind in ("slide", "subslide")
            new.cells.append(marked(md(shown), kind if opens else "-"))
            new.cells.append(marked(md(cell.source), "notes"))
            used = (units(summary) if opens else used + units(summary)) + 1.0
            has_code = has_code and not opens
            for diagram in summary.diagrams:
                label = f"### {title}" if title else ""
                new.cells.append(marked(md(f"{label}\n\n```mermaid\n{diagram}\n```"), "subslide"))
                used, has_code = float(PAGE_UNITS), True  # code after it: a page of its own
            continue
        if only_imports(cell.source):
            continue
        source = trim_code(cell.source)
        need = len(source.splitlines()) + 2.0  # the box's padding and margin
        texts = [t for t in map(output_text, cell.get("outputs", [])) if t.strip()]
        text = "\n".join(t.rstrip("\n") for t in texts)
        least = min(len(text.splitlines()), OUTPUT_MIN) + 1.0 if texts else 0.0
        if kind in ("slide", "subslide") or (has_code and used + need + least > PAGE_UNITS):
            new.cells.append(marked(md(continued(title)), "subslide"))
            used = 3.0
        used += need
        if texts and used + least > PAGE_UNITS:
            # No room for the output beside its code: the code's last line and the output
            # go on a continuation subslide of their own, rather than three lines of output.
            new.cells.append(marked(code(source), "-"))
            new.cells.append(marked(md(continued(title)), "subslide"))
            source = source.splitlines()[-1]
            used = 3.0 + 3.0
        outputs = []
        if texts:
            room = min(OUTPUT_LINES, int(PAGE_UNITS - used - 1.0))
            shown_text = trim_output(text, room)
            outputs = [nbformat.v4.new_output("stream", name="stdout", text=shown_text + "\n")]
            used += len(shown_text.splitlines()) + 1.0
        new.cells.append(marked(code(source, outputs=outputs), "-"))
        has_code = True
    return new


# --- The deck's page ---------------------------------------------------------------------------

# nbconvert's reveal template, with its CDN scripts (jQuery, require.js, MathJax, Mermaid's ES
# module, the widgets' manager) replaced by the copies in vendor/, loaded as classic scripts:
# a deck opened as a file (file://) may not load ES modules.
TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{% block notebook_css %}
{{ super() }}
<style type="text/css">
:root {
  --jp-content-font-size1: 24px;
  --jp-content-line-height: 1.35;
  --jp-code-font-size: 17px;
  --jp-code-line-height: 1.3;
  --jp-cell-padding: 0px;
}
.reveal { font-size: 24px; }
.reveal .slides { text-align: left; }
.reveal .slides section { padding: 0; }
.reveal .jp-Cell { padding: 0; margin: 0 0 10px 0; }
.reveal .jp-RenderedHTMLCommon { padding-right: 0; }
.reveal .jp-RenderedHTMLCommon :is(h1, h2, h3) { text-transform: none; }
.reveal .jp-RenderedHTMLCommon h1 { font-size: 44px; margin: 0 0 16px 0; }
.reveal .jp-RenderedHTMLCommon h2 { font-size: 36px; margin: 0 0 14px 0; }
.reveal .jp-RenderedHTMLCommon h3 { font-size: 30px; margin: 0 0 12px 0; }
.reveal .jp-RenderedHTMLCommon p, .reveal .jp-RenderedHTMLCommon li { margin: 0 0 8px 0; }
.reveal pre, .reveal .jp-RenderedText pre, .reveal .highlight pre {
  margin: 0; box-shadow: none; width: auto; white-space: pre; overflow: auto;
}
.reveal .jp-InputArea-editor, .reveal .highlight { margin: 0; padding: 4px 8px; }
.reveal .jp-OutputArea-output pre { padding: 4px 8px; background: #f4f6f8; }
.reveal .mrtr-diagram svg { display: block; margin: 0 auto; max-width: 100%; max-height: 560px; }
.reveal .jp-Mermaid pre.mermaid { display: none; }
</style>
{% endblock notebook_css %}
{% block footer_js %}
<script src="vendor/reveal.js/dist/reveal.js"></script>
<script src="vendor/reveal.js/dist/plugin/notes.js"></script>
<script src="vendor/mermaid/dist/mermaid.min.js"></script>
<script>
// Diagrams first, while their text can still be measured (hidden slides measure 0), then reveal.
async function drawDiagrams() {
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  const pending = Array.from(document.querySelectorAll("pre.mermaid"));
  for (const [i, pre] of pending.entries()) {
    const { svg } = await mermaid.render(`mrtr-diagram-${i}`, pre.textContent);
    const box = document.createElement("div");
    box.className = "mrtr-diagram";
    box.innerHTML = svg;
    pre.replaceWith(box);
  }
}
drawDiagrams().catch((error) => console.error("diagram:", error)).finally(() => {
  Reveal.initialize({
    width: {{ resources.reveal.width }},
    height: {{ resources.reveal.height }},
    margin: 0.04,
    center: false,
    hash: true,
    controls: true,
    progress: true,
    slideNumber: "h.v",
    transition: "none",  // a projector, not a show: and a screenshot never catches a half slide
    plugins: [RevealNotes],
  });
});
</script>
{% endblock footer_js %}
"""


def build(path: Path, out: Path) -> Path:
    """Write ``out/NN-name.slides.html`` for the lesson at ``path`` (vendor/ must be there)."""
    import jinja2
    import nbformat
    from nbconvert import SlidesExporter  # heavy: only when a deck is built

    nb = slide_notebook(nbformat.read(path, as_version=4))
    exporter = SlidesExporter(
        template_file="mrtr-deck.html.j2",
        extra_loaders=[jinja2.DictLoader({"mrtr-deck.html.j2": TEMPLATE})],
        reveal_url_prefix="vendor/reveal.js",
        reveal_theme="white",
        reveal_width=str(WIDTH),
        reveal_height=str(HEIGHT),
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        anchor_link_text="",  # no "¶" after each heading (the speaker notes would show it)
    )
    body, _ = exporter.from_notebook_node(
        nb, resources={"metadata": {"name": path.stem, "path": str(path.parent)}}
    )
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{path.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


# --- reveal.js and Mermaid beside the decks ----------------------------------------------------


class VendorError(RuntimeError):
    """The decks' scripts could not be had: the message says what to do."""


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def tarball(asset: Asset, cache: Path = VENDOR_CACHE) -> bytes:
    """The package's tarball from ``cache``, fetched with ``npm pack`` the first time; its
    sha512 must be the one pinned in ``ASSETS``."""
    path = cache / asset.tarball
    if not path.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise VendorError(
                f"npm is needed once, to fetch {asset.package}@{asset.version} (install Node.js),"
                f" or copy {path.name} from another clone's {cache.name}/ into {cache}"
            )
        cache.mkdir(parents=True, exist_ok=True)
        spec = f"{asset.package}@{asset.version}"
        command = [npm, "pack", spec, "--pack-destination", str(cache), "--loglevel=error"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 or not path.exists():
            raise VendorError(f"npm pack {spec} failed: {done.stderr.strip()[-400:]}")
    data = path.read_bytes()
    if integrity(data) != asset.integrity:
        raise VendorError(f"{path}: sha512 is not the one pinned in tools/slides.py; delete it")
    return data


def vendor(out: Path, cache: Path = VENDOR_CACHE) -> list[Path]:
    """Copy the files a deck loads into ``out/vendor/`` (from the pinned tarballs)."""
    copied = []
    for asset in ASSETS:
        with tarfile.open(fileobj=io.BytesIO(tarball(asset, cache)), mode="r:gz") as archive:
            for name in asset.files:
                member = archive.extractfile(f"package/{name}")
                if member is None:
                    raise VendorError(f"{asset.tarball} has no {name}")
                target = out / "vendor" / asset.package / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(member.read())
                copied.append(target)
    versions = {a.package: a.version for a in ASSETS}
    (out / "vendor" / "versions.json").write_text(json.dumps(versions, indent=2) + "\n")
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="one reveal.js deck per lesson, with vendor/ beside them")
    b.add_argument("--out", type=Path, default=ROOT / "slides")
    b.add_argument("notebooks", nargs="*")
    v = sub.add_parser("vendor", help="fetch reveal.js and Mermaid (once) and copy them to OUT")
    v.add_argument("--out", type=Path, default=ROOT / "slides")
    m = sub.add_parser("mark", help="mark unmarked cells by the rules")
    m.add_argument("notebooks", nargs="*")
    t = sub.add_parser("titles", help="the slide titles of one lesson")
    t.add_argument("notebook")
    args = parser.parse_args(argv)
    if args.command == "mark":
        for path in lessons(args.notebooks):
            print(f"{path.name}: {mark(path)} cells marked")
        return 0
    if args.command == "titles":
        import nbformat

        for title in titles(nbformat.read(args.notebook, as_version=4)):
            print(title)
        return 0
    try:
        copied = vendor(args.out)
    except VendorError as exc:
        print(f"slides: {exc}", file=sys.stderr)
        return 1
    if args.command == "vendor":
        size = sum(p.stat().st_size for p in copied)
        print(f"{args.out / 'vendor'}: {len(copied)} files, {size / 1e6:.1f} MB")
        return 0
    import nbformat

    for path in lessons(args.notebooks):
        deck = build(path, args.out)
        kinds = [slide_type(c) for c in slide_notebook(nbformat.read(path, as_version=4)).cells]
        where = deck.relative_to(ROOT) if deck.is_relative_to(ROOT) else deck
        below = kinds.count("subslide")
        print(f"{where}: {kinds.count('slide')} slides, {below} subslides below them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
