"""KIT: every public name of the library is documented (issue 20).

Walks the library's modules (``mrtr_kit/protocol``, ``mrtr_kit/server``, ``mrtr_kit/client`` and
``mrtr_kit/forms.py``) with :mod:`ast`, without importing them, and lists every public definition
that has no docstring. Public: modules, classes, functions, methods and properties whose name does
not start with ``_``, inside no private class. Dunder methods are exempt, except ``__init__``, and
``__init__`` too when the class docstring names each of its arguments. A property is documented
on its getter (setters and deleters are exempt), an ``@overload``ed function on its
implementation (the stubs are exempt).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = [ROOT / "mrtr_kit" / d for d in ("protocol", "server", "client")] + [
    ROOT / "mrtr_kit" / "forms.py"
]


def library_files() -> list[Path]:
    """Every ``.py`` file of the library, in a stable order."""
    files: list[Path] = []
    for entry in LIBRARY:
        files.extend(sorted(entry.rglob("*.py")) if entry.is_dir() else [entry])
    return files


def _init_covered(init: ast.FunctionDef | ast.AsyncFunctionDef, class_doc: str | None) -> bool:
    """Whether the class docstring names every argument of ``__init__``."""
    if not class_doc:
        return False
    a = init.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)][1:]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return all(n in class_doc for n in names)


def _is_variant(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A property's setter or deleter, or an ``@overload`` stub."""
    for d in node.decorator_list:
        if isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter", "overload"):
            return True
        if isinstance(d, ast.Name) and d.id == "overload":
            return True
    return False


def _walk(body: list[ast.stmt], prefix: str, class_doc: str | None) -> Iterator[tuple[str, bool]]:
    """(qualified name, has a docstring) for the public definitions in ``body``, recursively."""
    for node in body:
        if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        name = node.name
        doc = ast.get_docstring(node)
        if name.startswith("__") and name.endswith("__"):
            if name == "__init__" and not _init_covered(node, class_doc):  # type: ignore[arg-type]
                yield f"{prefix}{name}", doc is not None
            continue
        if name.startswith("_"):
            continue
        if not isinstance(node, ast.ClassDef) and _is_variant(node):
            continue
        yield f"{prefix}{name}", doc is not None
        if isinstance(node, ast.ClassDef):
            yield from _walk(node.body, f"{prefix}{name}.", doc)


def public_definitions() -> list[tuple[str, bool]]:
    """(qualified name, has a docstring) for every public definition of the library."""
    found: list[tuple[str, bool]] = []
    for path in library_files():
        rel = path.relative_to(ROOT).as_posix()
        if path.stem.startswith("_") and path.name != "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found.append((rel, ast.get_docstring(tree) is not None))
        found.extend(_walk(tree.body, f"{rel}:", None))
    return found


def test_every_public_name_of_the_library_is_documented():
    """KIT: every public name of the library is documented (issue 20)."""
    found = public_definitions()
    assert len(found) > 100, "the walk found too little; is LIBRARY right?"
    missing = [name for name, has_doc in found if not has_doc]
    assert not missing, (
        f"KIT: every public name of the library is documented (issue 20); "
        f"{len(missing)} of {len(found)} have no docstring:\n  " + "\n  ".join(missing)
    )
