#!/usr/bin/env python3
"""Mutation run over the protocol core: does the test suite notice when the code is wrong?

    .venv/bin/python tools/mutate.py             # the CI check (a few minutes on 2 cores)
    .venv/bin/python tools/mutate.py --recheck   # ... re-running the justified survivors too
    .venv/bin/python tools/mutate.py --update    # --recheck, then rewrite the survivors file
    .venv/bin/python tools/mutate.py --files server/state.py --only verify --recheck
    .venv/bin/python tools/mutate.py --list      # the mutants, without running anything

A *mutant* is the code with one small deliberate bug. Each is run against the tests that
execute its line; a test that fails *kills* it. A mutant no test kills is a *survivor*: a bug
the suite would let through. Each survivor is either killed by a new test or listed, with a
one-line reason, in ``tools/mutation-survivors.toml``. A killing test cites the rule it pins and
lives with that rule's other tests (``tests/library/test_<area>.py``), not in a file of its own
for mutation kills. The run fails when a survivor appears that the file does not list (or lists
with a reason starting ``TODO``). A listed survivor cannot fail the run, so CI does not spend
minutes re-running it: it is shown as kept, with its reason. ``--recheck`` runs it anyway and
reports entries that no longer survive (``--update`` then drops them and adds new survivors as
``TODO``).

Files
    ``mrtr_kit/server/core.py``, ``server/state.py``, ``server/codecs.py`` and the client
    modules that hold a call's logic (``client/transitions.py``, ``call.py``, ``answers.py``,
    ``results.py``, ``steps.py``, ``factory.py``, ``encoding.py``, ``cache.py``): the sans-IO
    protocol core, where every MRTR rule lives once.

Never in place
    Other people edit the working tree while this runs, so nothing under ``mrtr_kit/`` or
    ``tests/`` is touched. The working tree (without ``.git``, ``.venv``, caches and build
    output) is copied once into a temporary directory; that snapshot is what the baseline
    measures and what every mutant is cut from. Each worker gets its own copy of the snapshot,
    with ``PYTHONPATH`` and its working directory there, and checks before serving any mutant
    that ``mrtr_kit`` and the target modules were imported from inside that copy (``.venv``
    holds an editable install that points back at the checkout). Bytecode caches of the target
    modules are deleted from the copies and workers write none, so a stale ``.pyc`` can never
    stand in for a mutant.

Mutation operators (AST-based; every mutant is spliced into the original text at the node's
position and re-parsed, and the result must equal the intended AST, so a mutant is exactly one
change)
    ``flip``          ``==``/``!=``, ``<``/``>=``, ``>``/``<=``, ``in``/``not in``,
                      ``is``/``is not``
    ``boundary``      ``<``/``<=``, ``>``/``>=``
    ``and/or``        swap the operator of a boolean expression
    ``drop-operand``  remove one operand of an ``and``/``or`` (a condition dropped)
    ``not``           remove a ``not``
    ``negate``        ``if x`` -> ``if not x`` for a plain truth test (comparisons, ``not`` and
                      ``and``/``or`` tests are covered by the operators above)
    ``constant``      ``True``/``False`` swapped; ``0`` -> ``1``, ``1`` -> ``0``, n -> n+1;
                      a float f -> f+1; a string or bytes -> empty (an empty one -> ``"X"``)
    ``arith``         ``+``/``-``, ``*``/``/``, ``**`` -> ``*`` (not on strings); unary ``-``
                      removed
    ``return-none``   ``return x`` -> ``return None``
    ``remove-raise``  a ``raise`` statement becomes ``pass``
    ``remove-call``   a call made for its effect (an expression statement) becomes ``pass``
    ``remove-assign`` an assignment to an attribute or item, an augmented assignment, or the
                      *re*-binding of a name already bound in the function becomes ``pass``
                      (a first binding would only raise NameError)
    ``unwrap-call``   ``f(x)`` -> ``x`` for a one-argument conversion, copy or sort
                      (``dict``, ``list``, ``str``, ``sorted``, ``copy.deepcopy`` ...)
    ``min/max``       ``min(...)`` <-> ``max(...)``
    ``drop-entry``    one ``key: value`` pair removed from a dict display
    ``drop-filter``   the ``if`` of a comprehension removed
    ``narrow-except`` one exception type removed from an ``except (A, B)``

Not mutated, by design: docstrings, type annotations, decorators, f-strings, ``__all__``,
``__repr__`` (debug text), the message strings of a ``raise``'d exception and the arguments of
logging calls (wording, not behaviour; removing the whole ``raise`` or log call is still a
mutant), ``None`` and ``...``. Two mutants that produce the same AST are run once.

Mutant identity
    ``<file> | <function qualname> | <operator> | <before> => <after>``, where before/after
    are short source snippets of the changed expression (``ast.unparse``, so formatting and
    comments do not matter); ``#2``, ``#3`` ... tell apart identical ones in one function, in
    source order. No line numbers: edits elsewhere in a file do not rename its mutants.

Test selection
    One baseline run of the suite in the snapshot under ``coverage``, with the current test's
    node id as coverage's *context*, gives for every line the tests that execute it (and shows
    the suite passes unmutated: a test failing there is left out of every selection and makes
    the run fail). A mutant runs only the tests that execute the lines of the changed node,
    fastest first, with ``-x``. A line that runs only at import (a module constant, a class
    attribute, a default argument) runs no test's code: such a mutant runs the tests that
    execute the lines using the name (or the body of the function whose default it is) plus
    the tests whose own source names it; with neither, every test that runs any line of the
    file. The order: tests under 50 ms, under 0.5 s, under 2 s, then the rest, by node id
    within each class. A mutant whose lines no test executes is a survivor ("uncovered")
    without running. The suite here is ``tests/`` without the ``slow`` and ``browser`` marks,
    and without any test slower than 60 s in the baseline (listed in the output): the core
    does no I/O, so fast in-process tests are the ones that must catch its bugs (slow tests start
    subprocesses, which coverage here does not follow).

Running a mutant
    A worker (``--jobs`` of them, 2 by default) is a pytest process in its own copy that
    collects the selected tests once. For each mutant it writes the mutated file into its copy
    (for anything that imports it afresh, such as a subprocess) and forks; the child swaps the
    mutated module's code objects into the already imported functions and methods (every
    reference to them now runs the mutant; behind a wrapping decorator such as
    ``@contextmanager``, the function it wraps, ``__wrapped__``), then runs the mutant's tests
    with pytest's own run protocol. A mutant outside any function body (a module constant, a
    class attribute, an Enum value, a default argument) is grafted: the mutated module runs in
    a scratch namespace and the names the mutant binds replace the old values, in every module
    that imported them, and so do default argument values. Values other modules computed from
    them at import time are not recomputed; objects a test module built at import time keep
    what they were built with (functions they call still run the mutant). A failing test kills
    the mutant. A child still running after ``60 s + 10 x`` the baseline time of its tests is
    killed with its whole process group: a mutant that hangs counts as killed (``timeouts``).

Determinism
    No randomness: mutants, their order and their test selections follow from the source and
    the baseline. Hypothesis runs under a profile ``mutate`` (derandomized, no example
    database, no deadline, no ``too_slow`` health check; the suite's ``conftest.py`` loads the
    profile named by ``HYPOTHESIS_PROFILE``), so a loaded machine cannot turn a deadline into
    a kill. Only the *order* of tests within one mutant's run follows measured times (in
    coarse classes), which can change which test kills a mutant first (or whether a hanging
    one meets it first and it counts under timeouts), never whether it is killed; and which
    worker runs a mutant does not matter, since each child starts from the same collected
    state.

Equivalent mutants
    Some mutants cannot be told apart from the original by any test (``x < y`` vs ``x <= y``
    where equality cannot happen, a cache whose removal only costs time). Nothing detects
    them automatically: each is listed in the survivors file with its reason, starting
    ``equivalent:`` (or ``logging only:`` ...), where a reviewer can check the claim.

Output: a table (file, mutants, killed, survived (justified), timeouts, seconds, where seconds
is the sum of that file's mutant runs over all workers), the kept survivors with their
reasons, then every survivor not justified in the survivors file, with its line and the
number of tests that ran. ``--report FILE`` writes every
mutant's outcome and the test that killed it as JSON. Exit status 0 only when every survivor
is justified, the baseline is green and no mutant run went wrong.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import inspect
import json
import os
import re
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "mrtr_kit"
TARGETS = (
    "server/core.py",
    "server/state.py",
    "server/codecs.py",
    "client/transitions.py",
    "client/call.py",
    "client/answers.py",
    "client/results.py",
    "client/steps.py",
    "client/factory.py",
    "client/encoding.py",
    "client/cache.py",
)
SURVIVORS = ROOT / "tools" / "mutation-survivors.toml"
# The snapshot is the working tree minus what is big, built or private to one machine.
NOT_COPIED = (
    ".git",
    ".venv",
    ".conformance",
    ".inspector",
    ".sdk1",
    ".jupyter-test",
    "node_modules",
    "screenshots",
)
IGNORED = shutil.ignore_patterns(
    *NOT_COPIED,
    ".hypothesis",
    ".pytest_cache",
    ".ruff_cache",
    "*.egg-info",
    "*.pyc",
    ".ipynb_checkpoints",
)
MARKERS = "not slow and not browser"
HYPOTHESIS_PROFILE = "mutate"
# A test slower than this in the baseline is left out of selections. Measured under coverage
# on a machine that may be busy: a few-second test must not cross it and leave the mutants
# only it kills as survivors, so it is far above any in-process test's time.
SLOW_TEST_S = 60.0
# A mutant's run may take this long before it counts as hanging (killed, under timeouts): a
# hang only costs time, but a slow run cut short would count a survivor as killed, so the
# margin is one a busy machine cannot break (the baseline's times were measured under
# coverage, and another worker shares the machine).
TIMEOUT_BASE_S = 60.0
TIMEOUT_FACTOR = 10.0
SNIPPET = 70  # characters of source shown per side of a mutant's description
# Calls that convert, copy or sort their argument: without them the code often still runs,
# which is exactly the bug a test must notice.
UNWRAPPED = {"dict", "list", "set", "frozenset", "tuple", "sorted", "str", "int", "float", "bool"}
UNWRAPPED |= {"deepcopy", "copy"}
LOG_CALLS = {"debug", "info", "warning", "error", "exception", "critical", "getLogger", "warn"}


# --- mutants --------------------------------------------------------------------------------


@dataclass
class Mutant:
    file: str  # relative to mrtr_kit/, e.g. "server/codecs.py"
    qualname: str
    operator: str
    description: str
    lineno: int  # for people reading the output; never part of the identity
    lines: frozenset[int]  # lines of the original whose tests this mutant runs
    names: frozenset[str]  # names bound or used at import time by the changed node
    default_of: tuple[int, int] | None  # body lines of the function whose default it changes
    at_import: bool  # outside any function body: runs when the module is imported
    source: bytes
    ident: str = ""

    @property
    def key(self) -> str:
        return f"{self.file} | {self.qualname} | {self.operator} | {self.description}"


def _short(node: ast.AST, limit: int = SNIPPET) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_FLIP = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_ARITH = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.Pow: ast.Mult,
}


def _is_docstring(node: ast.AST, parent: ast.AST | None) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and isinstance(parent, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and parent.body[0] is node
    )


def _is_log_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in LOG_CALLS
    )


@dataclass
class _Site:
    """A place in the tree: the node, its parent, and where in the parent it sits."""

    node: ast.AST
    parent: ast.AST | None
    field: str
    index: int | None
    qualname: str
    stmt: ast.stmt | None  # the innermost statement holding the node
    function: ast.FunctionDef | ast.AsyncFunctionDef | None  # the function it runs in
    default_of: ast.FunctionDef | ast.AsyncFunctionDef | None  # a default argument of this one
    skip_strings: bool  # a raise'd message or a logging argument: strings not mutated
    ancestors: tuple[ast.AST, ...]


Function = ast.FunctionDef | ast.AsyncFunctionDef


def sites(tree: ast.Module) -> Iterator[_Site]:
    """Every node that may be mutated, in source order, with where it sits."""
    stack: list[_Site] = [_Site(tree, None, "", None, "<module>", None, None, None, False, ())]
    while stack:
        site = stack.pop()
        node = site.node
        if _is_docstring(node, site.parent) or isinstance(node, ast.JoinedStr):
            continue
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            continue
        yield site
        if isinstance(node, Function) and node.name == "__repr__":
            continue  # debug text
        children: list[_Site] = []
        for name, value in ast.iter_fields(node):
            if name in ("decorator_list", "returns", "annotation"):
                continue
            items = value if isinstance(value, list) else [value]
            for i, child in enumerate(items):
                if isinstance(child, ast.AST):
                    children.append(
                        _child_site(site, name, i if isinstance(value, list) else None, child)
                    )
        stack.extend(reversed(children))


def _child_site(site: _Site, name: str, index: int | None, child: ast.AST) -> _Site:
    node = site.node
    qualname, function, default_of = site.qualname, site.function, site.default_of
    if isinstance(node, Function | ast.ClassDef) and name in ("body", "args"):
        qualname = node.name if qualname == "<module>" else f"{qualname}.{node.name}"
        if name == "body":  # default values run in the enclosing scope, the body in this one
            function = node if isinstance(node, Function) else None
    if isinstance(node, ast.arguments) and name in ("defaults", "kw_defaults"):
        default_of = site.parent  # type: ignore[assignment]
    skip = site.skip_strings or (_is_log_call(node) and name in ("args", "keywords"))
    if (
        isinstance(node, ast.Call)
        and isinstance(site.parent, ast.Raise)
        and name == "args"
        and isinstance(child, ast.Constant)
    ):
        skip = True  # the message of a raise'd exception
    stmt = child if isinstance(child, ast.stmt) else site.stmt
    return _Site(
        child,
        node,
        name,
        index,
        qualname,
        stmt,
        function,
        default_of,
        skip,
        (*site.ancestors, node),
    )


def _bound_before(function: Function, stmt: ast.stmt) -> frozenset[str]:
    """Parameters and names assigned in ``function`` by statements before ``stmt``."""
    args = function.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    names.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    for node in ast.walk(function):
        if isinstance(node, ast.stmt) and node is not function and node.lineno < stmt.lineno:
            for target in _targets(node):
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return frozenset(names)


def _targets(node: ast.stmt) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
        return [node.target]
    if isinstance(node, ast.With | ast.AsyncWith):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    return []


def _candidates(site: _Site) -> Iterator[tuple[str, ast.AST]]:
    """(operator, replacement node) pairs for one site; ``ast.Pass`` replaces a statement."""
    node, parent = site.node, site.parent
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for table, name in ((_FLIP, "flip"), (_BOUNDARY, "boundary")):
                if type(op) in table:
                    new = copy.deepcopy(node)
                    new.ops[i] = table[type(op)]()
                    yield name, new
    elif isinstance(node, ast.BoolOp):
        swapped = copy.deepcopy(node)
        swapped.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "and/or", swapped
        for i in range(len(node.values)):
            rest = [copy.deepcopy(v) for j, v in enumerate(node.values) if j != i]
            yield "drop-operand", rest[0] if len(rest) == 1 else ast.BoolOp(node.op, rest)
    elif isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            yield "not", copy.deepcopy(node.operand)
        elif isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
            yield "arith", copy.deepcopy(node.operand)
    elif isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        textual = any(
            isinstance(side, ast.JoinedStr)
            or (isinstance(side, ast.Constant) and isinstance(side.value, str | bytes))
            for side in (node.left, node.right)
        )
        if not textual:
            new = copy.deepcopy(node)
            new.op = _ARITH[type(node.op)]()
            yield "arith", new
    elif isinstance(node, ast.Constant):
        new_value = _mutate_constant(node.value, site.skip_strings)
        if new_value is not _NO_CHANGE:
            if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub):
                pass  # -1 -> -0 etc. is fine: the constant alone changes
            yield "constant", ast.Constant(new_value)
    elif isinstance(node, ast.Call):
        yield from _call_candidates(node, site)
    elif isinstance(node, ast.Dict):
        for i, key in enumerate(node.keys):
            if key is None:
                continue
            new = copy.deepcopy(node)
            del new.keys[i], new.values[i]
            yield "drop-entry", new
    elif isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        for g, gen in enumerate(node.generators):
            for i in range(len(gen.ifs)):
                new = copy.deepcopy(node)
                del new.generators[g].ifs[i]
                yield "drop-filter", new
    elif (
        isinstance(node, ast.ExceptHandler)
        and isinstance(node.type, ast.Tuple)
        and len(node.type.elts) > 1
    ):
        for i in range(len(node.type.elts)):
            new = copy.deepcopy(node.type)
            del new.elts[i]
            yield "narrow-except", new
    if (
        isinstance(parent, ast.If | ast.While | ast.IfExp)
        and site.field == "test"
        and isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
    ):
        yield "negate", ast.UnaryOp(ast.Not(), copy.deepcopy(node))
    if isinstance(node, ast.stmt):
        yield from _statement_candidates(node, site)


_NO_CHANGE = object()


def _mutate_constant(value: Any, skip_strings: bool) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return {0: 1, 1: 0}.get(value, value + 1)
    if isinstance(value, float):
        return value + 1.0
    if isinstance(value, str | bytes) and not skip_strings:
        if value:
            return value[:0]
        return "X" if isinstance(value, str) else b"X"
    return _NO_CHANGE


def _call_candidates(node: ast.Call, site: _Site) -> Iterator[tuple[str, ast.AST]]:
    if _is_log_call(node) or isinstance(site.parent, ast.Raise | ast.Expr):
        return  # a raise'd or discarded call: removing the statement is the mutant
    func = node.func
    if isinstance(func, ast.Name) and func.id in ("min", "max"):
        new = copy.deepcopy(node)
        new.func = ast.Name("max" if func.id == "min" else "min", ast.Load())
        yield "min/max", new
        return
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if (
        name in UNWRAPPED
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        yield "unwrap-call", copy.deepcopy(node.args[0])


def _statement_candidates(node: ast.stmt, site: _Site) -> Iterator[tuple[str, ast.AST]]:
    if isinstance(node, ast.Raise):
        yield "remove-raise", ast.Pass()
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await):
        yield "remove-call", ast.Pass()
    elif isinstance(node, ast.Return) and node.value is not None:
        if not (isinstance(node.value, ast.Constant) and node.value.value is None):
            yield "return-none", ast.Return(ast.Constant(None))
    elif isinstance(node, ast.AugAssign):
        yield "remove-assign", ast.Pass()
    elif isinstance(node, ast.Assign | ast.AnnAssign) and site.function is not None:
        targets = _targets(node)
        if isinstance(node, ast.AnnAssign) and node.value is None:
            return
        if all(isinstance(t, ast.Attribute | ast.Subscript) for t in targets) or all(
            isinstance(t, ast.Name) and t.id in _bound_before(site.function, node) for t in targets
        ):
            yield "remove-assign", ast.Pass()


def _context(site: _Site) -> ast.AST:
    """The largest expression around the node (up to its statement) that reads in a line."""
    best: ast.AST = site.node
    for anc in reversed(site.ancestors):
        if isinstance(anc, ast.stmt) and not isinstance(
            anc, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Return | ast.Expr | ast.Raise
        ):
            break
        if not isinstance(anc, ast.expr | ast.stmt | ast.keyword):
            break
        if len(" ".join(ast.unparse(anc).split())) > SNIPPET:
            break
        best = anc
        if isinstance(anc, ast.stmt):
            break
    return best


def _replace(site: _Site, new: ast.AST) -> None:
    parent = site.parent
    assert parent is not None
    if site.index is None:
        setattr(parent, site.field, new)
    else:
        getattr(parent, site.field)[site.index] = new


def _line_offsets(source: bytes) -> list[int]:
    offsets, pos = [0, 0], 0  # 1-based lines
    for line in source.splitlines(keepends=True):
        pos += len(line)
        offsets.append(pos)
    return offsets


def _splice(source: bytes, offsets: list[int], node: ast.AST, text: str) -> bytes:
    """Replace ``node``'s source (byte offsets, as ast reports them) by ``text``, keeping the
    number of lines, so later line numbers stay those of the original."""
    start = offsets[node.lineno] + node.col_offset  # type: ignore[attr-defined]
    end = offsets[node.end_lineno] + node.end_col_offset  # type: ignore[attr-defined]
    pad = "\n" * (node.end_lineno - node.lineno)  # type: ignore[attr-defined]
    replacement = text + pad if isinstance(node, ast.stmt) else f"({text}{pad})"
    return source[:start] + replacement.encode() + source[end:]


def generate(relpath: str, source: bytes) -> tuple[list[Mutant], list[str]]:
    """Every mutant of one file, in source order, and problems (mutants that did not splice)."""
    tree = ast.parse(source)
    offsets = _line_offsets(source)
    seen = {ast.dump(tree)}
    mutants: list[Mutant] = []
    problems: list[str] = []
    for site in sites(tree):
        if site.parent is None:
            continue
        for operator, new in _candidates(site):
            target = site
            if isinstance(site.node, ast.ExceptHandler):  # the clause's type expression changes
                target = _Site(
                    site.node.type,  # type: ignore[arg-type]
                    site.node,
                    "type",
                    None,
                    site.qualname,
                    site.stmt,
                    site.function,
                    site.default_of,
                    site.skip_strings,
                    (*site.ancestors, site.node),
                )
            context = _context(target)
            before = _short(context)
            _replace(target, new)
            try:
                expected = ast.dump(tree)
                after = _short(new if context is target.node else context)
            finally:
                _replace(target, target.node)
            if expected in seen:
                continue  # the same program as the original or as an earlier mutant
            seen.add(expected)
            mutated = _splice(source, offsets, target.node, _text(new))
            try:
                ok = ast.dump(ast.parse(mutated)) == expected
            except SyntaxError:
                ok = False
            mutant = Mutant(
                file=relpath,
                qualname=site.qualname,
                operator=operator,
                description=_describe(site, operator, new, before, after),
                lineno=getattr(site.node, "lineno", 0),
                lines=_lines_of(site.node, site.stmt),
                names=_import_time_names(site),
                default_of=_body_range(site.default_of),
                at_import=site.function is None,
                source=mutated,
            )
            if ok:
                mutants.append(mutant)
            else:
                problems.append(f"{mutant.key}: the spliced text is not the intended AST")
    counts: dict[str, int] = defaultdict(int)
    for m in mutants:
        counts[m.key] += 1
        m.ident = m.key if counts[m.key] == 1 else f"{m.key} #{counts[m.key]}"
    return mutants, problems


def _text(new: ast.AST) -> str:
    return "pass" if isinstance(new, ast.Pass) else ast.unparse(new)


def _describe(site: _Site, operator: str, new: ast.AST, before: str, after: str) -> str:
    node = site.node
    if isinstance(new, ast.Pass):
        return _short(node)
    if operator == "drop-operand" and isinstance(node, ast.BoolOp):
        kept = new.values if isinstance(new, ast.BoolOp) else [new]
        dropped = next(v for v in node.values if not any(ast.dump(v) == ast.dump(k) for k in kept))
        word = "and" if isinstance(node.op, ast.And) else "or"
        return f"drop {_short(dropped, 60)} from {_short(node, 40)} ({word})"
    if operator == "drop-entry" and isinstance(node, ast.Dict) and isinstance(new, ast.Dict):
        kept_keys = {ast.dump(k) for k in new.keys if k is not None}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is not None and ast.dump(k) not in kept_keys:
                return f"drop {_short(k, 30)}: {_short(v, 40)}"
    if operator == "drop-filter":
        return f"drop a filter: {before} => {after}"
    if before == after:  # the change is past the snippet's end: describe the node alone
        return f"{_short(node)} => {_short(new)}"
    return f"{before} => {after}"


def _lines_of(node: ast.AST, stmt: ast.stmt | None) -> frozenset[int]:
    """Lines of the original whose tests a mutant of ``node`` runs: the node's own lines, plus
    its statement's first line (a compound statement: just its header)."""
    lines: set[int] = set()
    if hasattr(node, "lineno") and not isinstance(
        node, ast.If | ast.While | ast.For | ast.With | ast.Try | ast.FunctionDef | ast.ClassDef
    ):
        lines.update(range(node.lineno, node.end_lineno + 1))  # type: ignore[attr-defined]
    elif isinstance(node, ast.If | ast.While):
        lines.update(range(node.lineno, node.test.end_lineno + 1))  # type: ignore[operator]
    if stmt is not None:
        lines.add(stmt.lineno)
    return frozenset(lines)


def _import_time_names(site: _Site) -> frozenset[str]:
    """Names a module- or class-level statement binds (their uses select the tests)."""
    if site.function is not None or site.stmt is None:
        return frozenset()
    return frozenset(
        n.id if isinstance(n, ast.Name) else n.attr
        for t in _targets(site.stmt)
        for n in ast.walk(t)
        if isinstance(n, ast.Name | ast.Attribute)
    )


def _body_range(function: Function | None) -> tuple[int, int] | None:
    if function is None:
        return None
    return function.body[0].lineno, function.end_lineno or function.body[-1].lineno


# --- the snapshot, the baseline and test selection ------------------------------------------


def snapshot(into: Path) -> Path:
    """Copy the project into ``into/base`` (the one snapshot every worker copies)."""
    base = into / "base"
    shutil.copytree(ROOT, base, symlinks=True, ignore=IGNORED)
    return base


def child_env(copy_dir: Path) -> dict[str, str]:
    """The snapshot's library and its course (``course/``, a distribution of its own that .venv
    installs from the checkout) come first, so a test that checks where a module lives finds
    the copy's."""
    env = dict(os.environ)
    path = os.pathsep.join([str(copy_dir), str(copy_dir / "course")])
    env.update(PYTHONPATH=path, HYPOTHESIS_PROFILE=HYPOTHESIS_PROFILE)
    return env


def register_hypothesis_profile() -> None:
    with contextlib.suppress(ImportError):
        from hypothesis import HealthCheck, settings

        settings.register_profile(
            HYPOTHESIS_PROFILE,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        )


class _BaselineRecorder:
    """pytest plugin for the baseline: per-test coverage context, time and outcome."""

    def __init__(self, cov: Any) -> None:
        self.cov = cov
        self.tests: dict[str, dict[str, Any]] = {}
        self.words: dict[str, list[str]] = {}

    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> None:
        self.cov.switch_context(item.nodeid)
        try:  # the names a test's own code mentions (see select_tests)
            source = inspect.getsource(getattr(item, "obj", None))
        except (TypeError, OSError):
            source = ""
        self.words[item.nodeid] = sorted(set(re.findall(r"[A-Za-z_]\w*", source)))

    def pytest_runtest_logreport(self, report: Any) -> None:
        entry = self.tests.setdefault(report.nodeid, {"seconds": 0.0, "outcome": "passed"})
        entry["seconds"] += report.duration
        if report.failed:
            entry["outcome"] = "failed"
        elif report.skipped and entry["outcome"] == "passed":
            entry["outcome"] = "skipped"
        if report.when == "teardown":
            self.cov.switch_context("")


def baseline_worker(base: Path, out: Path) -> int:
    """In a subprocess: the suite under coverage, one context per test."""
    import coverage

    register_hypothesis_profile()
    include = [str(base / PACKAGE / t) for t in TARGETS]
    cov = coverage.Coverage(data_file=str(out / "coverage.db"), include=include, config_file=False)
    cov.start()
    recorder = _BaselineRecorder(cov)
    args = ["-q", "-p", "no:cacheprovider", "-m", MARKERS, f"--basetemp={out / 'pt'}", "tests"]
    code = pytest.main(args, plugins=[recorder])
    cov.stop()
    cov.save()
    for nodeid, entry in recorder.tests.items():
        entry["words"] = recorder.words.get(nodeid, [])
    (out / "baseline.json").write_text(json.dumps({"code": int(code), "tests": recorder.tests}))
    return 0


@dataclass
class Baseline:
    code: int
    tests: dict[str, dict[str, Any]]
    contexts: dict[str, dict[int, set[str]]]  # file -> line -> test node ids
    imported: dict[str, set[int]]  # file -> lines run at import (no test context)
    seconds: float

    @property
    def failed(self) -> list[str]:
        return sorted(t for t, e in self.tests.items() if e["outcome"] == "failed")

    @property
    def too_slow(self) -> list[str]:
        return sorted(
            t
            for t, e in self.tests.items()
            if e["outcome"] == "passed" and e["seconds"] > SLOW_TEST_S
        )

    @property
    def usable(self) -> list[str]:
        slow = set(self.too_slow)
        return [t for t, e in self.tests.items() if e["outcome"] == "passed" and t not in slow]


def run_baseline(base: Path, work: Path) -> Baseline:
    from coverage import CoverageData

    out = work / "baseline"
    out.mkdir()
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--baseline-worker", str(base), str(out)],
        cwd=base,
        env=child_env(base),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seconds = time.monotonic() - started
    result_file = out / "baseline.json"
    (out / "pytest.log").write_text(proc.stdout)
    if proc.returncode != 0 or not result_file.exists():
        print(proc.stdout[-6000:])
        raise SystemExit("mutate: the baseline run did not complete")
    raw = json.loads(result_file.read_text())
    data = CoverageData(basename=str(out / "coverage.db"))
    data.read()
    contexts: dict[str, dict[int, set[str]]] = {}
    imported: dict[str, set[int]] = {}
    for rel in TARGETS:
        path = str(base / PACKAGE / rel)
        by_line = data.contexts_by_lineno(path)
        contexts[rel] = {ln: {c for c in ctxs if c} for ln, ctxs in by_line.items()}
        imported[rel] = {ln for ln, ctxs in by_line.items() if "" in ctxs}
    if raw["code"] not in (0, 1):
        print(proc.stdout[-6000:])
        raise SystemExit(f"mutate: the baseline pytest run ended with code {raw['code']}")
    return Baseline(raw["code"], raw["tests"], contexts, imported, seconds)


def _uses(tree: ast.Module, names: frozenset[str]) -> set[int]:
    """Lines that read one of ``names``; a read inside a default argument stands for the
    whole body of that function (the default is used whenever the function runs)."""
    lines: set[int] = set()
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            defaults = [*func.args.defaults, *(d for d in func.args.kw_defaults if d)]
            for d in defaults:
                if any(
                    (isinstance(n, ast.Name) and n.id in names)
                    or (isinstance(n, ast.Attribute) and n.attr in names)
                    for n in ast.walk(d)
                ):
                    lines.update(range(func.body[0].lineno, (func.end_lineno or 0) + 1))
    for node in ast.walk(tree):
        hit = (isinstance(node, ast.Name) and node.id in names) or (
            isinstance(node, ast.Attribute) and node.attr in names
        )
        if hit:
            lines.add(node.lineno)
    return lines


def select_tests(mutant: Mutant, baseline: Baseline, tree: ast.Module) -> tuple[list[str], str]:
    """The tests to run for a mutant, fastest first, and how they were chosen."""
    contexts = baseline.contexts[mutant.file]
    good = set(baseline.usable)

    def tests_of(lines: set[int] | frozenset[int]) -> set[str]:
        found: set[str] = set()
        for ln in lines:
            found |= contexts.get(ln, set())
        return found & good

    how = "line"
    tests = tests_of(mutant.lines)
    if not tests and mutant.default_of is not None:
        how = "function"
        tests = tests_of(set(range(mutant.default_of[0], mutant.default_of[1] + 1)))
    if not tests and mutant.lines & baseline.imported[mutant.file]:
        if mutant.names:
            # A test that reads the constant or class attribute itself runs no line of the
            # file for it: tests whose code names it are chosen too.
            how = "uses"
            tests = tests_of(_uses(tree, mutant.names)) | {
                t for t in good if mutant.names & set(baseline.tests[t].get("words", ()))
            }
        if not tests:
            how = "file"
            tests = tests_of(set(contexts))
    return sorted(tests, key=lambda t: (_speed_class(baseline.tests[t]["seconds"]), t)), how


def _speed_class(seconds: float) -> int:
    """Fast tests first, but in coarse classes ordered by node id within each, so that the
    order (and so which test meets a mutant first) rarely depends on timing noise."""
    return sum(seconds >= limit for limit in (0.05, 0.5, 2.0))


# --- running mutants ------------------------------------------------------------------------
#
# A worker is a subprocess (``--worker``) that runs pytest in its own copy of the snapshot and
# collects every baseline test once. Its ``pytest_runtestloop`` then serves mutants: for each,
# it writes the mutant into its copy (for anything that imports it afresh, such as a test's
# subprocess), forks, and the child swaps the mutated code in and runs the chosen tests.


def _code_objects(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _code_objects(const)


def _functions(module: ModuleType) -> Iterator[tuple[Any, str, FunctionType]]:
    """(owner, attribute, function) for every function a module defines, methods included."""
    path = module.__file__
    seen: set[int] = set()

    def visit(owner: Any, depth: int) -> Iterator[tuple[Any, str, FunctionType]]:
        for name, value in list(vars(owner).items()):
            funcs: list[Any] = []
            if isinstance(value, staticmethod | classmethod):
                funcs = [value.__func__]
            elif isinstance(value, property):
                funcs = [value.fget, value.fset, value.fdel]
            elif isinstance(value, FunctionType):
                # A decorator that wraps (``contextlib.contextmanager``, ``functools.wraps``)
                # leaves a function of its own module here and calls ours, ``__wrapped__``:
                # that one's code is what a mutant must change.
                funcs = [value, getattr(value, "__wrapped__", None)]
            elif (
                isinstance(value, type)
                and depth < 3
                and value.__module__ == module.__name__
                and id(value) not in seen
            ):
                seen.add(id(value))
                yield from visit(value, depth + 1)
            for f in funcs:
                if (
                    isinstance(f, FunctionType)
                    and f.__code__.co_filename == path
                    and id(f) not in seen
                ):
                    seen.add(id(f))
                    yield owner, name, f

    yield from visit(module, 0)


def _key(code: CodeType) -> tuple[str, int]:
    return code.co_qualname, code.co_firstlineno  # the splice keeps every line number


def _swap_code(module: ModuleType, code: CodeType) -> None:
    """Give every function of ``module`` its code from ``code`` (the mutated module)."""
    new = {_key(c): c for c in _code_objects(code)}
    for owner, name, func in _functions(module):
        mutated = new.get(_key(func.__code__))
        if mutated is None or mutated is func.__code__:
            continue
        if mutated.co_freevars == func.__code__.co_freevars:
            func.__code__ = mutated  # every reference to the function now runs the mutant
            continue
        # Fewer free variables (a super() call removed drops the __class__ cell): a new
        # function object with the cells it still needs, in the owner's slot.
        cells = dict(zip(func.__code__.co_freevars, func.__closure__ or (), strict=True))
        replacement = FunctionType(
            mutated,
            func.__globals__,
            func.__name__,
            func.__defaults__,
            tuple(cells[v] for v in mutated.co_freevars),
        )
        replacement.__kwdefaults__ = func.__kwdefaults__
        replacement.__qualname__ = func.__qualname__
        current = vars(owner)[name]
        if isinstance(current, staticmethod | classmethod):
            replacement = type(current)(replacement)  # type: ignore[assignment]
        setattr(owner, name, replacement)


class _ImportFails(Exception):
    """The mutated module cannot even be imported: as a fresh import would, that kills it."""


def _graft(module: ModuleType, code: CodeType, qualname: str, names: list[str]) -> None:
    """A mutant outside any function body changes what the module computes at import: run
    the mutated module in a scratch namespace and carry over what the mutant changed - the
    names it binds (in every module that imported them) and default argument values."""
    scratch: dict[str, Any] = {
        "__name__": module.__name__,
        "__package__": module.__package__,
        "__file__": module.__file__,
        "__builtins__": __builtins__,
    }
    try:
        exec(code, scratch)
    except Exception as exc:
        raise _ImportFails(repr(exc)) from exc
    fresh = ModuleType(module.__name__)
    fresh.__dict__.update(scratch)
    old_funcs = {_key(f.__code__): f for _, _, f in _functions(module)}
    for _, _, f in _functions(fresh):
        old = old_funcs.get(_key(f.__code__))
        if old is not None:
            old.__defaults__, old.__kwdefaults__ = f.__defaults__, f.__kwdefaults__
    if qualname == "<module>":
        for name in names:
            if name not in scratch:
                continue
            old_value = module.__dict__.get(name)
            for other in list(sys.modules.values()):
                space = getattr(other, "__dict__", None)
                if space is not None and name in space and space[name] is old_value:
                    space[name] = scratch[name]
        return
    owner: Any = module
    new_owner: Any = fresh
    for part in qualname.split("."):
        owner, new_owner = getattr(owner, part, None), getattr(new_owner, part, None)
    if not isinstance(owner, type) or not isinstance(new_owner, type):
        return  # a default argument of a method: carried over above
    members = getattr(owner, "__members__", {})
    for name in names:
        if name in members:  # an Enum member: change its value in place
            old_value, new_value = members[name].value, new_owner[name].value
            members[name]._value_ = new_value
            owner._value2member_map_.pop(old_value, None)
            owner._value2member_map_[new_value] = members[name]
        elif name in vars(new_owner):
            setattr(owner, name, vars(new_owner)[name])
            fields = getattr(owner, "__dataclass_fields__", {})
            if name in fields:
                fields[name].default = vars(new_owner)[name]
    if hasattr(owner, "__dataclass_fields__"):  # defaults live in the generated __init__
        owner.__init__.__defaults__ = new_owner.__init__.__defaults__
        owner.__init__.__kwdefaults__ = new_owner.__init__.__kwdefaults__


def apply_mutant(
    module_name: str, source: bytes, qualname: str, names: list[str], graft: bool
) -> None:
    module = sys.modules.get(module_name)
    if module is None:
        return  # not imported yet: it will be, from the mutated file
    code = compile(source, str(module.__file__), "exec")
    if graft:
        _graft(module, code, qualname, names)
    _swap_code(module, code)


class _Server:
    """pytest plugin in a worker: collect once, then run mutants from the command pipe."""

    def __init__(self, slot: Path, commands: int, replies: int) -> None:
        self.slot = slot
        self.commands = os.fdopen(commands, "r")
        self.replies = os.fdopen(replies, "w")
        self.killer: str | None = None
        self.durations: dict[str, float] = {}

    def _reply(self, message: dict[str, Any]) -> None:
        self.replies.write(json.dumps(message) + "\n")
        self.replies.flush()

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed and self.killer is None:
            self.killer = report.nodeid
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: Any) -> bool:
        inside = str(self.slot) + os.sep
        stray = [
            str(getattr(m, "__file__", ""))
            for n, m in list(sys.modules.items())
            if (n == PACKAGE or n.startswith(PACKAGE + "."))
            and getattr(m, "__file__", None)
            and not str(m.__file__).startswith(inside)
        ]
        if stray:  # .venv's editable install points at the checkout, never at this copy
            self._reply({"error": f"mrtr_kit imported from outside the copy: {stray[:3]}"})
            return True
        items = {item.nodeid: item for item in session.items}
        self._reply({"ready": len(items), "threads": threading.active_count()})
        for line in self.commands:
            command = json.loads(line)
            self._reply(self._run(session, items, command))
        return True

    def _run(self, session: Any, items: dict[str, Any], command: dict[str, Any]) -> dict[str, Any]:
        target = self.slot / PACKAGE / command["file"]
        original = target.read_bytes()
        source = Path(command["source"]).read_bytes()
        target.write_bytes(source)
        result = Path(command["result"])
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            self._child(session, items, command, source, result)
        try:
            timed_out = not _wait_for(pid, command["timeout"])
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # the child and whatever it started
            _, status = os.waitpid(pid, 0)
            target.write_bytes(original)
        seconds = time.monotonic() - started
        if timed_out:
            return {"status": "timeout", "seconds": seconds}
        try:
            data = json.loads(result.read_text())
        except (OSError, ValueError):
            if os.WIFSIGNALED(status):
                return {"status": "killed", "killer": "crashed", "seconds": seconds}
            return {
                "status": "error",
                "detail": f"no result (wait status {status})",
                "seconds": seconds,
            }
        data["seconds"] = seconds
        return data

    def _child(
        self,
        session: Any,
        items: dict[str, Any],
        command: dict[str, Any],
        source: bytes,
        result: Path,
    ) -> None:
        try:
            os.setsid()  # its own process group, so a timeout can kill all of it
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            self.commands.close()
            self.replies.close()
            module = f"{PACKAGE}." + command["file"][:-3].replace("/", ".")
            try:
                apply_mutant(
                    module, source, command["qualname"], command["names"], command["graft"]
                )
            except _ImportFails as exc:
                result.write_text(json.dumps({"status": "killed", "killer": f"import: {exc}"}))
                return
            self.killer = None
            chosen = [items[t] for t in command["tests"]]
            for i, item in enumerate(chosen):
                nextitem = chosen[i + 1] if i + 1 < len(chosen) else None
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                if session.shouldfail or session.shouldstop:
                    break
            slowest = sorted(self.durations.items(), key=lambda kv: -kv[1])[:3]
            if self.killer is not None:
                outcome = {"status": "killed", "killer": self.killer, "slowest": slowest}
            else:
                outcome = {"status": "survived", "slowest": slowest}
            result.write_text(json.dumps(outcome))
        except BaseException as exc:  # an error in applying the mutant is the tool's, not a kill
            with contextlib.suppress(Exception):
                result.write_text(json.dumps({"status": "error", "detail": repr(exc)}))
        finally:
            os._exit(0)


def _wait_for(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` ended within ``timeout`` seconds (it is not reaped here)."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)


def worker(slot: Path, tests_file: Path) -> int:
    """``--worker``: pytest in ``slot`` over the baseline's passing tests, serving mutants."""
    register_hypothesis_profile()
    # pytest captures fds 0-2 while tests run: the command and reply pipes move elsewhere.
    commands, replies = os.dup(0), os.dup(1)
    sys.dont_write_bytecode = True
    log = os.open(slot / ".worker.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    tests = json.loads(tests_file.read_text())
    args = ["-x", "-q", "-p", "no:cacheprovider", f"--basetemp={slot / '.pt'}", *tests]
    pytest.main(args, plugins=[_Server(slot, commands, replies)])
    return 0


@dataclass
class Outcome:
    status: str  # killed, timeout, survived, uncovered, error
    seconds: float = 0.0
    killer: str | None = None
    tests: int = 0
    how: str = ""
    detail: str = ""


def make_slot(base: Path, work: Path, index: int) -> Path:
    path = work / f"w{index}"
    shutil.copytree(base, path, symlinks=True)
    for rel in TARGETS:  # no cached bytecode may stand in for a mutated module
        cache = (path / PACKAGE / rel).parent / "__pycache__"
        for pyc in cache.glob(Path(rel).stem + ".*.pyc"):
            pyc.unlink()
    return path


class _Worker:
    def __init__(self, slot: Path, tests_file: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", str(slot), str(tests_file)],
            cwd=slot,
            env={**child_env(slot), "PYTHONDONTWRITEBYTECODE": "1"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.slot = slot
        self.job: tuple[Mutant, list[str], str, float] | None = None

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            tail = (self.slot / ".worker.log").read_text(errors="replace")[-3000:]
            raise SystemExit(f"mutate: a worker ended unexpectedly:\n{tail}")
        return json.loads(line)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_mutants(
    todo: list[tuple[Mutant, list[str], str]],
    base: Path,
    baseline: Baseline,
    work: Path,
    jobs: int,
    progress: bool,
) -> dict[str, Outcome]:
    (work / "runs").mkdir()
    tests_file = work / "tests.json"
    tests_file.write_text(json.dumps(sorted({t for _, tests, _ in todo for t in tests})))
    workers = [_Worker(make_slot(base, work, i), tests_file) for i in range(jobs)]
    outcomes: dict[str, Outcome] = {}
    pending = list(reversed(todo))
    try:
        for w in workers:
            hello = w.receive()
            if "error" in hello:
                raise SystemExit(f"mutate: {hello['error']}")
            if hello["threads"] > 1:
                print(f"mutate: warning: {hello['threads']} threads in a worker before forking")
        idle = list(workers)
        by_fd = {w.process.stdout.fileno(): w for w in workers}  # type: ignore[union-attr]
        sel = selectors.DefaultSelector()
        for fd, w in by_fd.items():
            sel.register(fd, selectors.EVENT_READ, w)
        n = 0
        while pending or len(idle) < len(workers):
            while pending and idle:
                w = idle.pop(0)
                mutant, tests, how = pending.pop()
                n += 1
                source = work / "runs" / f"{n}.py"
                source.write_bytes(mutant.source)
                budget = sum(baseline.tests[t]["seconds"] for t in tests)
                w.job = (mutant, tests, how, time.monotonic())
                w.send(
                    {
                        "file": mutant.file,
                        "source": str(source),
                        "result": str(work / "runs" / f"{n}.json"),
                        "tests": tests,
                        "timeout": TIMEOUT_BASE_S + TIMEOUT_FACTOR * budget,
                        "qualname": mutant.qualname,
                        "names": sorted(mutant.names),
                        "graft": mutant.at_import,
                    }
                )
            for key, _ in sel.select():
                w = key.data
                reply = w.receive()
                assert w.job is not None
                mutant, tests, how, _ = w.job
                w.job = None
                idle.append(w)
                o = Outcome(
                    reply["status"],
                    reply.get("seconds", 0.0),
                    reply.get("killer"),
                    len(tests),
                    how,
                    reply.get("detail", ""),
                )
                outcomes[mutant.ident] = o
                if progress:
                    print(
                        f"  [{len(outcomes)}/{len(todo)}] {o.status:8} {o.seconds:5.1f}s "
                        f"{mutant.ident[:110]}",
                        flush=True,
                    )
    finally:
        for w in workers:
            w.close()
    return outcomes


# --- the survivors file ---------------------------------------------------------------------

SURVIVORS_HEADER = """\
# Surviving mutants of tools/mutate.py, each kept for a reason (issue 8, item 9).
#
# A survivor is a deliberate bug in server/core.py, server/state.py, server/codecs.py or one
# of the client modules of a call (client/transitions.py, call.py, answers.py, results.py,
# steps.py, factory.py, encoding.py, cache.py) that no test notices. Each one here is either
# equivalent to the original (no test can tell them apart) or outside what the tests should
# judge; the reason says which and why, in one line. A survivor that is not listed here fails
# CI: kill it with a test that checks real behaviour (and cites its rule ID), or add it here
# with its reason.
#
# `.venv/bin/python tools/mutate.py --update` adds new survivors with a TODO reason (which
# still fails CI until replaced) and removes entries that no longer survive.
"""


def load_survivors(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return {entry["id"]: entry.get("reason", "") for entry in data.get("survivor", [])}


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def write_survivors(path: Path, entries: dict[str, str]) -> None:
    def order(ident: str) -> tuple[int, str]:
        file = ident.split(" | ", 1)[0]
        return (TARGETS.index(file) if file in TARGETS else len(TARGETS), ident)

    parts = [SURVIVORS_HEADER]
    for ident in sorted(entries, key=order):
        parts.append(
            f"\n[[survivor]]\nid = {_toml_string(ident)}\nreason = {_toml_string(entries[ident])}\n"
        )
    path.write_text("".join(parts))


def _unjustified(reason: str) -> bool:
    return not reason.strip() or reason.strip().upper().startswith("TODO")


# --- main -----------------------------------------------------------------------------------


def print_table(
    mutants: list[Mutant],
    outcomes: dict[str, Outcome],
    justified: dict[str, str],
    files: list[str],
) -> None:
    header = ("file", "mutants", "killed", "survived (justified)", "timeouts", "seconds")
    rows = []
    totals = [0, 0, 0, 0, 0, 0.0]
    for rel in files:
        mine = [outcomes[m.ident] for m in mutants if m.file == rel and m.ident in outcomes]
        idents = [m.ident for m in mutants if m.file == rel and m.ident in outcomes]
        survived = [i for i, o in zip(idents, mine, strict=True) if o.status in SURVIVING]
        ok = [i for i in survived if i in justified and not _unjustified(justified[i])]
        row = [
            len(mine),
            sum(o.status == "killed" for o in mine),
            len(survived),
            len(ok),
            sum(o.status == "timeout" for o in mine),
            sum(o.seconds for o in mine),
        ]
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        rows.append((rel, row))
    rows.append(("total", totals))
    print(
        f"{header[0]:<20} {header[1]:>7} {header[2]:>7} {header[3]:>21} "
        f"{header[4]:>8} {header[5]:>8}"
    )
    for name, (n, killed, surv, ok, tmo, secs) in rows:
        print(f"{name:<20} {n:>7} {killed:>7} {f'{surv} ({ok})':>21} {tmo:>8} {secs:>8.1f}")


SURVIVING = ("survived", "uncovered", "justified")  # justified: listed, and not re-run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Mutation run over the MRTR protocol core (see the module docstring)."
    )
    parser.add_argument("--files", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--only", help="run only mutants whose id contains this text")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="also re-run the survivors the file justifies (and report entries now killed)",
    )
    parser.add_argument(
        "--update", action="store_true", help="--recheck, then rewrite the survivors file"
    )
    parser.add_argument("--report", type=Path, help="write every mutant's outcome as JSON")
    parser.add_argument("--survivors", type=Path, default=SURVIVORS)
    parser.add_argument("--progress", action="store_true", help="a line per finished mutant")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--baseline-worker", nargs=2, metavar=("BASE", "OUT"), help=argparse.SUPPRESS
    )
    parser.add_argument("--worker", nargs=2, metavar=("SLOT", "TESTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline_worker:
        return baseline_worker(Path(args.baseline_worker[0]), Path(args.baseline_worker[1]))
    if args.worker:
        return worker(Path(args.worker[0]), Path(args.worker[1]))

    started = time.monotonic()
    justified = load_survivors(args.survivors)
    recheck = args.recheck or args.update
    work = Path(tempfile.mkdtemp(prefix="mrtr-mutate-"))
    try:
        base = snapshot(work)
        originals = {rel: (base / PACKAGE / rel).read_bytes() for rel in TARGETS}
        trees = {rel: ast.parse(originals[rel]) for rel in TARGETS}
        mutants: list[Mutant] = []
        problems: list[str] = []
        for rel in args.files:
            found, bad = generate(rel, originals[rel])
            mutants += found
            problems += bad
        if args.only:
            mutants = [m for m in mutants if args.only in m.ident]
        if args.list:
            for m in mutants:
                print(f"{m.lineno:>5}  {m.ident}")
            print(f"{len(mutants)} mutants")
            return 0
        print(f"mutate: {len(mutants)} mutants in {', '.join(args.files)}; snapshot in {work}")
        baseline = run_baseline(base, work)
        print(
            f"mutate: baseline: {len(baseline.tests)} tests in {baseline.seconds:.0f}s, "
            f"{len(baseline.failed)} failing"
        )
        for t in baseline.failed:
            print(f"  FAILING WITHOUT ANY MUTANT (left out of every selection): {t}")
        for t in baseline.too_slow:
            seconds = baseline.tests[t]["seconds"]
            print(f"  over {SLOW_TEST_S:.0f}s ({seconds:.0f}s), left out of every selection: {t}")
        todo: list[tuple[Mutant, list[str], str]] = []
        outcomes: dict[str, Outcome] = {}
        for m in mutants:
            tests, how = select_tests(m, baseline, trees[m.file])
            if not recheck and m.ident in justified and not _unjustified(justified[m.ident]):
                outcomes[m.ident] = Outcome("justified", tests=len(tests), how=how)
            elif tests:
                todo.append((m, tests, how))
            else:
                outcomes[m.ident] = Outcome("uncovered", how=how)
        outcomes.update(run_mutants(todo, base, baseline, work, max(1, args.jobs), args.progress))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    elapsed = time.monotonic() - started

    surviving = {m.ident: m for m in mutants if outcomes[m.ident].status in SURVIVING}
    errors = {i: o for i, o in outcomes.items() if o.status == "error"}
    print()
    print_table(mutants, outcomes, justified, args.files)
    print(f"\nwall time {elapsed:.0f}s with {args.jobs} workers (baseline {baseline.seconds:.0f}s)")

    new = [i for i in surviving if i not in justified]
    todo_reasons = [i for i in surviving if i in justified and _unjustified(justified[i])]
    in_scope = {
        i
        for i in justified
        if i.split(" | ", 1)[0] in args.files and (not args.only or args.only in i)
    }
    # Without --recheck only entries naming no mutant at all are known to be stale.
    stale = sorted(in_scope - set(surviving if recheck else outcomes))
    kept = [i for i in surviving if i in justified and not _unjustified(justified[i])]
    if kept:
        not_rerun = sum(outcomes[i].status == "justified" for i in kept)
        note = f"; {not_rerun} not re-run, see --recheck" if not_rerun else ""
        print(
            f"\n{len(kept)} survivor(s) kept, each for its reason in {args.survivors.name}{note}:"
        )
        for i in kept:
            print(f"  {i}\n      {justified[i]}")
    if new or todo_reasons:
        print(f"\n{len(new) + len(todo_reasons)} survivor(s) neither killed nor justified:")
        for i in [*new, *todo_reasons]:
            m, o = surviving[i], outcomes[i]
            ran = (
                "no test runs this line"
                if o.status == "uncovered"
                else f"{o.tests} tests ({o.how})"
            )
            print(f"  {m.file}:{m.lineno}  {i}\n      {ran}")
    if stale:
        print(
            f"\n{len(stale)} entr(y/ies) in {args.survivors.name} no longer survive (--update"
            " removes them):"
        )
        for i in stale:
            print(f"  {i}")
    for i, o in errors.items():
        print(f"\nERROR running {i}:\n{o.detail}")
    for p in problems:
        print(f"\nERROR generating: {p}")

    if args.update:
        entries = {i: r for i, r in justified.items() if i not in stale}
        for i in surviving:
            entries.setdefault(i, "TODO: kill with a test or justify")
        write_survivors(args.survivors, entries)
        print(f"\nwrote {args.survivors}")
    if args.report:
        report = [
            {
                "id": m.ident,
                "line": m.lineno,
                "status": outcomes[m.ident].status,
                "killer": outcomes[m.ident].killer,
                "tests": outcomes[m.ident].tests,
                "selection": outcomes[m.ident].how,
                "seconds": round(outcomes[m.ident].seconds, 2),
            }
            for m in mutants
        ]
        args.report.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    failed = bool(new or todo_reasons or errors or problems or baseline.failed)
    print("\nmutation run:", "FAILED" if failed else "ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
