"""Sphinx configuration of the kit's docs site: ``python3 tools/kit.py docs`` builds it into site/.

Why Sphinx + MyST-NB + autodoc rather than MkDocs (material + mkdocstrings + mkdocs-jupyter):

* Links inside the lessons are checked. MyST-NB parses a notebook's markdown cells as MyST, so
  a lesson's ``../docs/cheatsheet.md`` is a cross-reference Sphinx resolves and, under ``-W``,
  fails the build when it breaks. mkdocs-jupyter turns a notebook into finished HTML that
  MkDocs' link validation never reads.
* Stored outputs are rendered, never executed (``nb_execution_mode = "off"``): no kernel, no
  servers, a few seconds on CI.
* Strict mode is one flag (``-W``, with ``--keep-going`` to list every warning at once), and
  the docstrings, written with reStructuredText literals (````name````), render as they are.
* The source folder is the repository itself: the lessons stay in notebooks/ and the pages in
  docs/, so every relative link works on GitHub, in JupyterLab and on the site alike.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sphinx import addnodes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # autodoc imports the kit from this checkout

project = "mrtr-kit"
author = "mrtr-kit contributors"
copyright = "mrtr-kit contributors (MIT)"

extensions = [
    "myst_nb",  # Markdown pages and notebooks (parses .md too: no separate myst_parser)
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinxcontrib.mermaid",  # the lessons' sequence diagrams
]

# The whole repository is the source folder, but only these are pages: the lessons as
# discovered (every notebooks/NN-name/NN-name.ipynb), docs/, the README the lessons link to and
# the changelog the policy page links to.
root_doc = "docs/index"
include_patterns = [
    "README.md",
    "CHANGELOG.md",
    "instructors/**",
    "docs/**",
    "notebooks/*/*.ipynb",
]
exclude_patterns = [
    "docs/_templates/**",
    "docs/_root/**",
    "docs/deploy/*.conf",
    # pruned before the walk, so it never descends into them
    "site",
    ".venv",
    ".git",
    ".jupyter-test",
    ".conformance",
    ".inspector",
    ".sdk1",
    "build",
]
# autosummary reads this relative to the source folder (the repository), HTML relative to docs/.
templates_path = ["docs/_templates"]

# Notebooks: the stored outputs, as committed; nothing is executed.
nb_execution_mode = "off"
myst_heading_anchors = 3  # links such as cheatsheet.md#two-rounds-side-by-side resolve
myst_enable_extensions = ["colon_fence"]
myst_fence_as_directive = ["mermaid"]  # ```mermaid fences are diagrams, not code
nb_render_markdown_format = "myst"  # ... in markdown outputs too (01b draws its trace)

# API reference: docs/api.md lists the four packages; autosummary writes one page per module
# (docs/api/, generated at each build, .gitignore'd) from docs/_templates/autosummary.
autosummary_generate = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"

html_theme = "furo"
html_title = "mrtr-kit"
html_extra_path = ["_root"]  # site/index.html: a link to the front page, docs/index.html


def _folder_links_as_text(app: Any, doctree: Any) -> None:
    """A link to a folder of the repository (``../notebooks/``) has no page on the site, so it
    is shown as its text. Any other link that resolves to nothing still fails the build."""
    for node in list(doctree.findall(addnodes.pending_xref)):
        target = node.get("reftarget", "")
        if node.get("reftype") != "myst" or not target.endswith("/"):
            continue
        folder = ((ROOT / app.env.docname).parent / target).resolve()
        if folder.is_dir() and folder.is_relative_to(ROOT):
            node.replace_self(node.children)


def setup(app: Any) -> None:
    app.connect("doctree-read", _folder_links_as_text)
