"""Lesson 04 — the capstone: port a 2025-11-25 server to MRTR, and the gate that accepts it.

The learner's server is a Python file (or a notebook cell) with a ``build_server()`` function:
the 2025-11-25 pizzeria of ``pizzeria_2025.py`` (beside this file) before the port, an
``McpServer`` after it. ``await gate(target)`` checks it and prints a checklist, one line per
item, ✔ or ✘ and why (``fleet=False``, exercise 1's checkpoint, leaves item 7 out;
``await check_fleet(target)``, exercise 2's, runs them all and names the fleet's verdict):

1. it is a 2026-07-28 server (``McpServer``), not a ``LegacyServer``;
2. ``tools/list`` has both tools with the original input schemas;
3. ``order_pizza`` asks the original question with a form, and answers like the original;
4. ``book_table`` asks people, then time, then books a table (a reference ``T-n`` from the
   restaurant's ``TableBook``); a decline books nothing;
5. a client without forms gets ``-32021`` (CAP-2, MIG-4);
6. the kit's MRTR checks, modelled on the official suite's ``input-required-result-*``
   scenarios but run on the pizzeria's tools: ``resultType``, a tampered ``requestState``
   refused (MRTR-S4a), a missing answer asked again (MRTR-E4), unknown answers ignored
   (MRTR-E3), a malformed answer never completing (MRTR-E1), an answer that does not fit the
   form and an ``accept`` with no content asked again (ELIC-14, MRTR-E4), ``book_table``'s
   round 3 served by a second instance built afresh with the same keys (MIG-2), and its
   final retry sent twice booking one table, not two (MIG-3, HTTP-26);
7. the fleet test: two real server processes behind the kit's round robin, each round of a
   call on the other instance, so the state must travel in ``requestState``, not memory;
8. the official suite's scenarios that apply to any server (``tools-list``,
   ``input-required-result-unsupported-methods``), when Node 22 and the suite are installed in
   ``.conformance/`` (the CI conformance stage installs them); skipped, saying so, when not.

Serving a file as a process (what the fleet test starts, and what you can run yourself)::

    python notebooks/04-port-your-own-server/lesson04_gate.py PATH [PATH ...] \
        [--port 0] [--instance-name NAME]

prints ``Serving PATH at http://127.0.0.1:PORT/mcp``. Several files are served as one, in
order, as a kernel runs cells: a later ``build_server`` replaces an earlier one (exercise 2's
solution is such a file, given after exercise 1's). The keys that seal ``requestState`` are
the server's own: the command reads ``MRTR_KIT_STATE_KEYS`` / ``MRTR_KIT_STATE_KEY`` (as
``python -m mrtr_kit serve`` does; without them, a fresh key that only this process knows) and
passes the ring to ``build_server(state_keys=...)``. Every instance of a fleet needs the same
ring, since any of them must open a state another sealed (CORE-8, CORE-9): the fleet test gives
both processes one key in ``MRTR_KIT_STATE_KEY``, and the in-kernel checks give the server a ring
generated for the run. A ``build_server()`` without a ``state_keys`` parameter (the unported
scaffold, or exercise 1's port, whose key is its own process's) is called with no arguments;
item 6's second instance is then given the first one's keys, so that it checks memory, not
keys, and item 7 finds the missing shared key.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import inspect
import json
import linecache
import logging
import os
import re
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.fleet import (
    FRONT_URL,
    INSTANCE_HEADER,
    STATE_KEY_ENV,
    RoundRobin,
    start_processes,
)
from mrtr_course.legacy import LegacyServer
from mrtr_course.users import scripted_user
from mrtr_kit.client import McpClient, McpClientError, McpRemoteError, TooManyRounds
from mrtr_kit.protocol.constants import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
)
from mrtr_kit.protocol.models import ElicitRequestFormParams, ElicitResult
from mrtr_kit.server import McpServer
from mrtr_kit.server.codecs import PlainStateCodec, b64url, unb64url
from mrtr_kit.server.http import create_app
from mrtr_kit.server.keyring import KeyRing

HERE = Path(__file__).resolve().parent  # the lesson's folder: the scaffold and the solution
SCAFFOLD = HERE / "pizzeria_2025.py"
SOLUTION = HERE / "solutions" / "04_pizzeria.py"  # exercise 1: the port, one process's key
FLEET_SOLUTION = HERE / "solutions" / "04_fleet.py"  # exercise 2: build_server, the fleet's keys
# The repository's root, where the suite is installed: the first folder up with tools/ in it
# (`kit.py test` runs a copy of the lessons under .jupyter-test/, inside the repository).
ROOT = next(
    (p for p in HERE.parents if (p / "tools" / "run_conformance.py").exists()), HERE.parents[1]
)
SUITE_DIR = ROOT / ".conformance"
# Paths from the repository root, the folder JupyterLab's file browser opens on (kit.py lab).
SUITE_INSTALL = (
    "tools/run_conformance.py, in the repository's root folder, says how to install it "
    "(npm install node@22 @modelcontextprotocol/conformance)"
)
OFFICIAL_SCENARIOS = ("tools-list", "input-required-result-unsupported-methods")

# -- what the original does (pizzeria_2025.py, beside this file; a test keeps them in step) ---

SIZE_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "size": {"type": "string", "title": "Size", "enum": ["small", "medium", "large"]}
    },
    "required": ["size"],
}
PEOPLE_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"people": {"type": "integer", "title": "People", "minimum": 1, "maximum": 12}},
    "required": ["people"],
}
TIME_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "time": {"type": "string", "title": "Time", "enum": ["19:00", "20:00", "21:00"]}
    },
    "required": ["time"],
}
INPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "order_pizza": {
        "type": "object",
        "properties": {"pizza": {"type": "string", "minLength": 1}},
        "required": ["pizza"],
    },
    "book_table": {
        "type": "object",
        "properties": {"date": {"type": "string", "format": "date"}},
        "required": ["date"],
    },
}
PIZZA = {"pizza": "margherita"}
TABLE = {"date": "2026-12-24"}


def pizza_text(size: str, pizza: str = "margherita") -> str:
    return f"One {size} {pizza}, ready in 20 minutes."


def table_text(people: int, time: str, date: str = "2026-12-24") -> str:
    """What ``book_table`` answers, up to the table's reference (``T-1``, ``T-2``, ...)."""
    return f"Table for {people} on {date} at {time}, reference T-…"


def is_table(text: str, people: int, time: str, date: str = "2026-12-24") -> bool:
    """Whether ``text`` is ``book_table``'s answer for this booking, with any reference."""
    return re.fullmatch(re.escape(table_text(people, time, date)[:-1]) + r"\d+\.", text) is not None


def reference(text: str) -> str | None:
    """The table reference in a ``book_table`` answer, if any."""
    found = re.search(r"reference (T-\d+)", text)
    return found.group(1) if found else None


NO_PIZZA = "No pizza ordered."
NO_TABLE = "No table booked."

# -- loading the learner's server -------------------------------------------------------------


def load_module(path: str | Path) -> ModuleType:
    """Import ``path`` as a fresh module (a new one on every call: no state carried over)."""
    path = Path(path).resolve()
    name = f"capstone_{path.stem}_{secrets.token_hex(4)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def takes_keys(build: Callable[..., Any]) -> bool:
    """Whether ``build`` accepts ``state_keys=`` (by name, or through ``**options``)."""
    try:
        parameters = inspect.signature(build).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.kind is p.VAR_KEYWORD
        or (p.name == "state_keys" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
        for p in parameters
    )


def build_from(path: str | Path, state_keys: KeyRing | None = None) -> Any:
    """The server that ``path``'s ``build_server`` builds, given ``state_keys`` if it takes
    them; ``None`` leaves the choice of a key to the learner's code."""
    module = load_module(path)
    build = getattr(module, "build_server", None)
    if not callable(build):
        raise AttributeError(f"{Path(path).name} has no build_server() function")
    return build(state_keys=state_keys) if takes_keys(build) else build()


def _source_file(fn: Callable[..., Any]) -> str:
    return inspect.getsourcefile(fn) or inspect.getfile(fn)


def cell_source(fn: Callable[..., Any]) -> str:
    """The whole source of the notebook cell (or file) that defined ``fn``, after the cells of
    the functions it uses that another cell of the same module defined, as the kernel ran them:
    exercise 2's cell redefines ``build_server`` alone, and the tools stay in exercise 1's."""
    own = _source_file(fn)
    files: list[str] = []
    code = getattr(fn, "__code__", None)
    for name in code.co_names if code is not None else ():
        used = getattr(fn, "__globals__", {}).get(name)
        if not inspect.isfunction(used) or used.__module__ != fn.__module__:
            continue  # the kit's and other imported code is not the learner's to serve
        where = _source_file(used)
        if where != own and where not in files and linecache.getlines(where):
            files.append(where)
    parts = []
    for filename in [*files, own]:
        lines = linecache.getlines(filename)
        if not lines:
            raise OSError(f"no source for {fn.__name__} ({filename})")
        parts.append("".join(lines))
    return "\n\n".join(part.rstrip("\n") + "\n" for part in parts) if files else parts[0]


def joined(paths: Sequence[str | Path]) -> str:
    """Several files as one source, in order (a later definition replaces an earlier one)."""
    return "\n\n".join(Path(p).read_text(encoding="utf-8").rstrip("\n") + "\n" for p in paths)


# -- serving a file as a process --------------------------------------------------------------


def serve_command(path: str | Path, instance: str) -> list[str]:
    command = [sys.executable, __file__, str(Path(path).resolve())]
    return [*command, "--port", "0", "--instance-name", instance]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve a capstone server file on loopback.")
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a .py file with a build_server() function; several are served as one, in order",
    )
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--instance-name", default="capstone")
    args = parser.parse_args(argv)
    shown = " ".join(args.paths)
    with tempfile.TemporaryDirectory(prefix="capstone-serve-") as scratch:
        path = Path(args.paths[0])
        if len(args.paths) > 1:  # as a kernel runs cells: a later definition replaces one
            path = Path(scratch) / "served.py"
            path.write_text(joined(args.paths), encoding="utf-8")
        # The fleet's shared keys from the environment, so that every instance opens the
        # others' states (CORE-8, CORE-9); without them, a key for this process alone.
        server = build_from(path, KeyRing.from_env() or KeyRing.generate())
        _serve(server, shown, args.port, args.instance_name)
    return 0


def _serve(server: Any, shown: str, port: int, instance: str) -> None:
    from mrtr_course.legacy import create_legacy_app
    from mrtr_kit.server.http import LOOPBACK_HOSTS, bind_tcp, run_announced, uvicorn_config

    if isinstance(server, LegacyServer):  # the unported scaffold still runs, 2025-11-25 style
        app: Any = create_legacy_app(server, instance=instance)
    else:
        app = create_app(
            server, allowed_hosts=LOOPBACK_HOSTS, response_headers={INSTANCE_HEADER: instance}
        )
    sock = bind_tcp("127.0.0.1", port)
    line = f"Serving {shown} at http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    # Ctrl-C is how the lesson says to stop: one line, no traceback (uvicorn re-raises it).
    # The address shows once uvicorn accepts connections and handles Ctrl-C itself.
    with contextlib.suppress(KeyboardInterrupt):
        run_announced(uvicorn_config(app, log_level="warning"), sock, line)
    print(f"Stopped serving {shown}.", flush=True)


# -- the checklist ----------------------------------------------------------------------------

# "wait": not checked, because an item it builds on failed; it neither passes nor fails.
_MARK = {"pass": "✔", "fail": "✘", "skip": "–", "wait": "·"}


@dataclass(frozen=True)
class Item:
    title: str
    status: str  # "pass", "fail", "skip" (optional, not run) or "wait" (not checked yet)
    why: str

    def __repr__(self) -> str:
        return f"{_MARK[self.status]} {self.title}: {self.why}"


@dataclass
class GateReport:
    """The gate's checklist; its repr is what the notebook shows."""

    target: str
    items: list[Item] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(item.status not in ("fail", "wait") for item in self.items)

    @property
    def failed(self) -> list[str]:
        return [item.title for item in self.items if item.status == "fail"]

    def item(self, title: str) -> Item:
        return next(item for item in self.items if item.title == title)

    def __repr__(self) -> str:
        lines = [f"Gate for {self.target}", *map(repr, self.items), self.summary]
        return "\n".join(lines)

    @property
    def summary(self) -> str:
        """The last line: counts only the items that were checked, and says what was not."""
        checked = [item for item in self.items if item.status in ("pass", "fail")]
        skipped = sum(item.status == "skip" for item in self.items)
        waiting = sum(item.status == "wait" for item in self.items)
        notes = [f"{skipped} skipped"] if skipped else []
        if waiting:
            notes.append(f"{waiting} not checked until item 1 passes")  # the only item they wait on
        note = f" ({'; '.join(notes)})" if notes else ""
        if self.passed and not waiting:
            return f"✔ Passed: all {_items(len(checked))} checked pass{note}."
        fail = "fails" if len(self.failed) == 1 else "fail"
        return f"✘ Not yet: {len(self.failed)} of {_items(len(checked))} checked {fail}{note}."


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


class _Fail(Exception):
    """One item fails, with this reason."""


def _with(action: str) -> Callable[[ElicitRequestFormParams, Any], ElicitResult]:
    return lambda params, ctx: ElicitResult(action=action)  # type: ignore[arg-type]


def _text(result: dict[str, Any]) -> str:
    if result.get("resultType") == "input_required":
        return "input_required"
    return " ".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")


def _asked(record: Any) -> list[dict[str, Any]]:
    result = ((record.response or {}).get("result")) or {}
    return list((result.get("inputRequests") or {}).values())


class _Raw:
    """Bare JSON-RPC rounds to an app in this process, for answers a real client would not
    send (a tampered state, a malformed answer)."""

    def __init__(self, app: Any) -> None:
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app), timeout=30)
        self.ids = 0

    async def call(
        self, name: str, arguments: dict[str, Any], caps: dict[str, Any] | None = None, **extra: Any
    ) -> dict[str, Any]:
        self.ids += 1
        meta = {
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: {"elicitation": {"form": {}}} if caps is None else caps,
        }
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta, **extra},
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            HEADER_PROTOCOL_VERSION: PROTOCOL_VERSION,
            HEADER_METHOD: "tools/call",
            HEADER_NAME: name,
        }
        response = await self.http.post("http://localhost/mcp", json=body, headers=headers)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
            text = data[-1] if data else "{}"
        reply: dict[str, Any] = json.loads(text)
        return reply

    async def aclose(self) -> None:
        await self.http.aclose()


async def _check_tools(app: Any) -> str:
    async with McpClient.for_app(app) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
    for name, schema in INPUT_SCHEMAS.items():
        if name not in tools:
            raise _Fail(f"tools/list has no {name!r} (it lists {sorted(tools)})")
        if tools[name].get("inputSchema") != schema:
            raise _Fail(f"{name}'s inputSchema is not the original's: keep {schema}")
    return "order_pizza and book_table, with the original input schemas."


async def _first_round(app: Any, name: str, arguments: dict[str, Any]) -> Any:
    """Round 1 from a client that can show forms and nothing else, as the original needs."""
    async with McpClient.for_app(app, elicitation=scripted_user()) as client:
        try:
            return await client.begin_tool_call(name, arguments)
        except McpRemoteError as exc:
            needed = sorted((exc.data or {}).get("requiredCapabilities") or {})
            if exc.code == -32021 and "elicitation" not in needed:
                raise _Fail(
                    f"round 1 asks for the client capability {', '.join(needed)}; the original "
                    "asked with a form (elicitation/create): use ctx.form(...)"
                ) from None
            raise _Fail(f"round 1 failed: {exc}") from None
        except McpClientError as exc:
            raise _Fail(f"round 1 failed: {exc}") from None


def _same_question(asked: dict[str, Any], message: str, form: dict[str, Any], where: str) -> None:
    method = asked.get("method")
    if method != "elicitation/create":
        raise _Fail(
            f"{where} asks with {method}; the original asked with a form (elicitation/create): "
            "use ctx.form(...)"
        )
    params = asked.get("params") or {}
    if params.get("message") != message or params.get("requestedSchema") != form:
        raise _Fail(f"{where} does not ask the original question ({message!r} and its form)")


async def _check_pizza(app: Any) -> str:
    first = await _first_round(app, "order_pizza", PIZZA)
    if first.input_required is None:
        raise _Fail(f"round 1 should ask for the size; it returned {_text(first.result or {})!r}")
    asked = list(first.input_required.input_requests.values())
    if len(asked) != 1:
        raise _Fail(f"round 1 asks {len(asked)} questions; the original asks one")
    _same_question(asked[0], "What size of margherita?", SIZE_FORM, "round 1")
    cases = [
        ("large", scripted_user(size="large"), pizza_text("large")),
        ("decline", _with("decline"), NO_PIZZA),
        ("cancel", _with("cancel"), NO_PIZZA),
    ]
    for label, user, want in cases:
        async with McpClient.for_app(app, elicitation=user, max_rounds=4) as client:
            try:
                got = _text(await client.call_tool("order_pizza", PIZZA))
            except McpClientError as exc:
                raise _Fail(f"with the answer {label!r} the call failed: {exc}") from None
        if got != want:
            raise _Fail(f"with the answer {label!r}: got {got!r}, want {want!r}")
    return "one question, the original's form; large, decline and cancel answered as before."


async def _check_table(app: Any) -> str:
    user = scripted_user(people=4, time="20:00")
    async with McpClient.for_app(app, elicitation=user, max_rounds=5) as client:
        try:
            result = await client.call_tool("book_table", TABLE)
        except TooManyRounds:
            result = None
        except McpClientError as exc:
            raise _Fail(f"the call failed: {exc}") from None
        rounds = [_asked(record) for record in client.trace if record.method == "tools/call"]
    if result is None:
        raise _Fail(
            "the call never finished: it kept asking. The number of people answered in round 2 "
            "must ride along in requestState to round 3 (MIG-2)"
        )
    if not is_table(_text(result), 4, "20:00"):
        raise _Fail(f"got {_text(result)!r}, want {table_text(4, '20:00')!r}")
    if len(rounds) != 3 or not all(len(r) == 1 for r in rounds[:2]):
        raise _Fail(f"expected 3 rounds (people, then time, then the booking); saw {len(rounds)}")
    _same_question(rounds[0][0], "How many people on 2026-12-24?", PEOPLE_FORM, "round 1")
    _same_question(rounds[1][0], "What time on 2026-12-24, for 4?", TIME_FORM, "round 2")
    for label, who in (
        ("people", _with("decline")),
        ("time", scripted_user(people=2)),  # accepts the people, declines the time
    ):
        async with McpClient.for_app(app, elicitation=who, max_rounds=5) as client:
            got = _text(await client.call_tool("book_table", TABLE))
        if got != NO_TABLE:
            raise _Fail(f"a decline of the {label} question: got {got!r}, want {NO_TABLE!r}")
    return "people, then time, then the booking, in 3 rounds; a decline at either books nothing."


async def _check_no_forms(app: Any) -> str:
    for name, arguments in (("order_pizza", PIZZA), ("book_table", TABLE)):
        async with McpClient.for_app(app) as no_forms:
            try:
                result = await no_forms.call_tool(name, arguments)
            except McpRemoteError as exc:
                if exc.code != -32021:
                    raise _Fail(
                        f"{name}: a client without forms got {exc.code}, not -32021"
                    ) from None
                continue
        raise _Fail(f"{name}: a client without forms got {_text(result)!r}, not -32021")
    return "both tools answer -32021 with requiredCapabilities."


async def _round_two(raw: _Raw) -> dict[str, Any]:
    """book_table's round 2 (people answered): the input_required that asks for the time."""
    first = (await raw.call("book_table", TABLE)).get("result") or {}
    key = next(iter(first.get("inputRequests") or {}), "people")
    extra: dict[str, Any] = {
        "inputResponses": {key: {"action": "accept", "content": {"people": 4}}}
    }
    if first.get("requestState"):
        extra["requestState"] = first["requestState"]
    second: dict[str, Any] = (await raw.call("book_table", TABLE, **extra)).get("result") or {}
    return second


def _outcome(reply: dict[str, Any]) -> str:
    if "error" in reply:
        return f"error {reply['error'].get('code')}"
    return repr(_text(reply.get("result") or {}))


def _forged(state: str) -> str | None:
    """The kit's unprotected codec (``plain1.<base64url JSON>``, lessons only) is readable,
    so a client can rewrite it: the same state with 99 people, or None for any other codec."""
    prefix = PlainStateCodec.format + "."
    if not state.startswith(prefix):
        return None
    try:
        claims = unb64url(state.removeprefix(prefix)).decode()
    except ValueError:
        return None
    if '"people":4' not in claims:
        return None
    return prefix + b64url(claims.replace('"people":4', '"people":99').encode())


def _twin(path: Path, keys: KeyRing, first: McpServer) -> Any:
    """A second instance of the server in ``path``: a freshly loaded module (none of the first
    instance's memory) given the same keys. A ``build_server()`` that takes no keys makes its
    own (exercise 1's port): the twin is then handed the first instance's, as a fleet shares
    them, so this item checks memory alone and item 7 reports the key."""
    build = getattr(load_module(path), "build_server", None)
    if not callable(build):
        return None
    if takes_keys(build):
        return create_app(build(state_keys=keys))
    server = build()
    if not isinstance(server, McpServer):
        return None
    server.states = first.states  # the same keys (and audience) as the first instance
    return create_app(server)


async def _check_mrtr(app: Any, twin: Any = None) -> str:
    """``twin``: a second instance of the same server (``_twin``), for round 3 of book_table."""
    raw = _Raw(app)
    state_log = logging.getLogger("mrtr_kit.state")
    level = state_log.level
    state_log.setLevel(logging.CRITICAL)  # the tampered state below is refused on purpose
    try:
        reply = await raw.call("order_pizza", PIZZA)
        if "error" in reply:
            raise _Fail(f"round 1 of order_pizza, from a client with forms: {_outcome(reply)}")
        first = reply.get("result") or {}
        if first.get("resultType") != "input_required":
            raise _Fail("round 1 of order_pizza has no resultType 'input_required' (MIG-5)")
        key = next(iter(first.get("inputRequests") or {}))
        # Each retry below echoes round 1's state, as a client does (MRTR-C2): a server may
        # ignore answers that come with no state of its own (the kit's does, MRTR-E3).
        echo = {"requestState": first["requestState"]} if first.get("requestState") else {}
        answer = {"action": "accept", "content": {"size": "small"}}
        junk = {"action": "accept", "content": {"x": 1}}
        extra = await raw.call(
            "order_pizza", PIZZA, inputResponses={key: answer, "unexpected_key": junk}, **echo
        )
        if _text(extra.get("result") or {}) != pizza_text("small"):
            raise _Fail(
                "an unknown answer next to the right one was not ignored (MRTR-E3): it got "
                f"{_outcome(extra)}"
            )
        missing = await raw.call("order_pizza", PIZZA, inputResponses={"wrong_key": answer}, **echo)
        if (missing.get("result") or {}).get("resultType") != "input_required":
            raise _Fail(
                "with the answer missing, order_pizza must ask again (MRTR-E4); it answered "
                f"{_outcome(missing)}"
            )
        bad = await raw.call("order_pizza", PIZZA, inputResponses={key: 12345}, **echo)
        if "error" not in bad and (bad.get("result") or {}).get("resultType") != "input_required":
            raise _Fail("a malformed answer (12345) completed the call (MRTR-E1)")
        for label, unfit in (
            ("the size 'huge' (not one of the form's choices)", {"content": {"size": "huge"}}),
            ("an accept with no content", {}),
        ):
            reply = await raw.call(
                "order_pizza", PIZZA, inputResponses={key: {"action": "accept", **unfit}}, **echo
            )
            asked = (reply.get("result") or {}).get("inputRequests") or {}
            if key not in asked:
                raise _Fail(
                    f"with {label}, order_pizza answered {_outcome(reply)}: an answer that does "
                    "not fit the form is asked again, saying what was wrong (ELIC-14 SHOULD, "
                    "MRTR-E4 SHOULD), never used and never an error. ctx.form(...) checks it: "
                    "return answer.ask() while answer.needs_asking"
                )
        second = await _round_two(raw)
        state = second.get("requestState")
        if second.get("resultType") != "input_required" or not state:
            raise _Fail(
                "round 2 of book_table (asking the time) carries no requestState: where is the "
                "number of people kept? In the sealed state, not in memory (MIG-2)"
            )
        time_key = next(iter(second.get("inputRequests") or {}), "time")
        at_seven = {time_key: {"action": "accept", "content": {"time": "19:00"}}}
        third: dict[str, Any] = {}
        if twin is not None:
            other = _Raw(twin)
            try:
                third = await other.call(
                    "book_table", TABLE, requestState=state, inputResponses=at_seven
                )
            finally:
                await other.aclose()
        if twin is not None and not is_table(_text(third.get("result") or {}), 4, "19:00"):
            raise _Fail(
                "round 3 of book_table, sent to a second instance of your server (same keys, "
                f"its own memory), got {_outcome(third)}, not the booking: where is the number "
                "of people kept? In the sealed state, not in memory (MIG-2)"
            )
        tampered = await raw.call(
            "book_table",
            TABLE,
            requestState=state + "-TAMPERED",
            inputResponses={time_key: {"action": "accept", "content": {"time": "19:00"}}},
        )
        if "error" not in tampered:
            raise _Fail("a tampered requestState was accepted (MRTR-S4a)")
        if (forged := _forged(state)) is not None:
            rewritten = await raw.call(
                "book_table",
                TABLE,
                requestState=forged,
                inputResponses={time_key: {"action": "accept", "content": {"time": "19:00"}}},
            )
            if "error" not in rewritten:
                raise _Fail(
                    "a client rewrote the number of people in requestState and the server "
                    "believed it: the state is not integrity-protected (MRTR-S4a). Use the "
                    "default aead codec, or hmac"
                )
        # The final retry twice, as a client sends it again whose response was lost (HTTP-26).
        final = {"requestState": state, "inputResponses": at_seven}
        once = _text((await raw.call("book_table", TABLE, **final)).get("result") or {})
        again = await raw.call("book_table", TABLE, **final)
        first_ref, again_ref = reference(once), reference(_text(again.get("result") or {}))
        if first_ref is not None and again_ref is not None and again_ref != first_ref:
            raise _Fail(
                f"book_table's final retry, sent a second time as a client does whose response "
                f"was lost (HTTP-26 MUST: the same answers and state under a new id), booked a "
                f"second table: {first_ref}, then {again_ref}. The last round runs once per "
                "retry that arrives (MIG-3): book under a key made on an earlier round and "
                "sealed in the state (state['key'] = secrets.token_urlsafe(16)), with "
                "TABLES.book(..., key=state['key']), so a repeat gets the same table back"
            )
    finally:
        state_log.setLevel(level)
        await raw.aclose()
    return (
        "resultType present; unknown answers ignored (MRTR-E3); a missing answer asked again "
        "(MRTR-E4); a malformed one refused (MRTR-E1); 'huge' and an accept with no content "
        "asked again (ELIC-14); round 3 served by a second instance (MIG-2); a tampered "
        "requestState refused (MRTR-S4a); the final retry sent twice booked one table (MIG-3)."
    )


async def _check_fleet(path: Path) -> str:
    key = secrets.token_hex(32)  # one key for both instances: each opens the other's states
    keyless = not takes_keys(load_module(path).build_server)
    commands = {name: serve_command(path, name) for name in ("capstone-a", "capstone-b")}
    # 120 s: a cap on a process that hangs; each returns once it prints its URL (a busy
    # machine may take well over the few seconds two Python servers need to start).
    fleet = await asyncio.to_thread(
        start_processes, commands, env={STATE_KEY_ENV: key}, timeout=120
    )
    routes: dict[str, str] = {}
    try:
        for name, arguments, want in (
            ("book_table", TABLE, table_text(4, "20:00")),
            ("order_pizza", PIZZA, pizza_text("large")),
        ):
            balancer = RoundRobin(fleet.urls)
            transport = balancer.transport()
            user = scripted_user(people=4, time="20:00", size="large")
            async with McpClient(
                FRONT_URL, elicitation=user, transport=transport, max_rounds=5
            ) as client:
                try:
                    got = _text(await client.call_tool(name, arguments))
                except McpClientError as exc:
                    where = " → ".join(hit.instance or "?" for hit in transport.hits)
                    why = (
                        "build_server() takes no state_keys: if each instance makes its own "
                        "key, none opens the requestState another sealed (CORE-8, CORE-9). "
                        "Take build_server(state_keys=None) and pass them to McpServer"
                        if keyless
                        else "something is kept in memory instead of requestState (MIG-2)"
                    )
                    raise _Fail(
                        f"{name} failed on the fleet ({where}): {exc}. It works in one process: "
                        + why
                    ) from None
            served = [hit.instance or "?" for hit in transport.hits]
            routes[name] = " → ".join(served)
            if not (is_table(got, 4, "20:00") if name == "book_table" else got == want):
                raise _Fail(
                    f"{name} on the fleet ({' → '.join(served)}): got {got!r}, want {want!r}"
                )
            if len(set(served)) < 2:
                raise _Fail(f"{name}: every round went to {served[0]}; the test needs two")
    finally:
        await asyncio.to_thread(fleet.stop)
    return f"each round on the other instance: book_table {routes['book_table']}."


def suite_cli(suite_dir: Path = SUITE_DIR) -> Path | None:
    cli = suite_dir / "node_modules" / ".bin" / "conformance"
    return cli if cli.exists() else None


def _run_official(cli: Path, url: str) -> str:
    env = {**os.environ, "PATH": f"{cli.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="capstone-suite-") as out:
        for scenario in OFFICIAL_SCENARIOS:
            target = Path(out) / scenario
            command = [str(cli), "server", "--url", url, "--scenario", scenario]
            command += ["--spec-version", "2026-07-28", "-o", str(target)]
            subprocess.run(command, env=env, capture_output=True, timeout=180, check=False)
            checks = [
                check
                for found in sorted(target.rglob("checks.json"))
                for check in json.loads(found.read_text())
            ]
            if not checks:
                problems.append(f"{scenario}: no checks.json")
            for check in checks:
                if check.get("status") in ("FAILURE", "WARNING"):
                    message = check.get("errorMessage") or check.get("description", "")
                    problems.append(f"{scenario} [{check.get('id')}]: {message}")
    if problems:
        raise _Fail("; ".join(problems))
    return f"{', '.join(OFFICIAL_SCENARIOS)}: no FAILURE, no WARNING."


async def _check_official(path: Path, suite_dir: Path) -> Item:
    title = "8. the official suite's scenarios for any server"
    cli = suite_cli(suite_dir)
    if cli is None:
        why = (
            f"optional, skipped: the official suite is not installed in {suite_dir.name}/ "
            f"(the gate passes without it; {SUITE_INSTALL})"
        )
        return Item(title, "skip", why)
    fleet = await asyncio.to_thread(start_processes, {"capstone-suite": serve_command(path, "s")})
    try:
        why = await asyncio.to_thread(_run_official, cli, fleet.urls[0])
    except _Fail as failure:
        return Item(title, "fail", str(failure))
    finally:
        await asyncio.to_thread(fleet.stop)
    return Item(title, "pass", why)


CHECKS: list[tuple[str, Callable[..., Any]]] = [
    ("2. tools/list", _check_tools),
    ("3. order_pizza", _check_pizza),
    ("4. book_table", _check_table),
    ("5. a client without forms (CAP-2)", _check_no_forms),
    ("6. the kit's MRTR checks", _check_mrtr),
]
TITLES = [
    "1. a 2026-07-28 server",
    *(title for title, _ in CHECKS),
    "7. the fleet: round 2 on another instance",
    "8. the official suite's scenarios for any server",
]


async def gate(
    target: str | Path | Sequence[str | Path] | Callable[..., Any],
    *,
    fleet: bool = True,
    official: bool = True,
    suite_dir: Path = SUITE_DIR,
) -> GateReport:
    """Check a capstone server: a file path (or several, served as one), or its
    ``build_server`` function defined in a notebook cell (the cell, and the cell of the tools
    it registers when that is another, saved to a temporary file that processes can serve)."""
    with tempfile.TemporaryDirectory(prefix="capstone-") as scratch:
        if callable(target):
            path = Path(scratch) / "my_server.py"
            path.write_text(cell_source(target))
            label = f"the cell that defines {target.__name__}()"
        elif not isinstance(target, str | Path):
            path = Path(scratch) / "my_server.py"
            path.write_text(joined(target))
            label = " + ".join(Path(p).name for p in target)
        else:
            path = Path(target).resolve()
            label = path.name
        return await _gate(path, label, fleet=fleet, official=official, suite_dir=suite_dir)


async def _gate(
    path: Path, label: str, *, fleet: bool, official: bool, suite_dir: Path
) -> GateReport:
    report = GateReport(label)
    not_run = "not checked until item 1 passes"
    try:
        # One ring for this run's in-kernel checks; the fleet gets its own shared key.
        keys = KeyRing.generate()
        server = build_from(path, keys)
    except Exception as exc:  # the learner's file: any error is a finding, not a crash
        report.items.append(Item(TITLES[0], "fail", f"build_server() raised {exc!r}"))
        server = None
    else:
        if isinstance(server, McpServer):
            report.items.append(Item(TITLES[0], "pass", "build_server() returns an McpServer."))
        elif isinstance(server, LegacyServer):
            why = (
                "build_server() returns a LegacyServer: 2025-11-25, sessions and requests sent "
                "to the client mid-tool (MIG-1). Port it to McpServer"
            )
            report.items.append(Item(TITLES[0], "fail", why))
            server = None
        else:
            why = f"build_server() returns {type(server).__name__}, not an McpServer"
            report.items.append(Item(TITLES[0], "fail", why))
            server = None
    if server is None:
        report.items += [Item(title, "wait", not_run) for title in TITLES[1:]]
        return report
    app = create_app(server)
    for title, check in CHECKS:
        try:
            if check is _check_mrtr:  # round 3 goes to a second instance: its own memory
                twin = _twin(path, keys, server)
                report.items.append(Item(title, "pass", await _check_mrtr(app, twin)))
            else:
                report.items.append(Item(title, "pass", await check(app)))
        except _Fail as failure:
            report.items.append(Item(title, "fail", str(failure)))
    if fleet:
        try:
            report.items.append(Item(TITLES[6], "pass", await _check_fleet(path)))
        except _Fail as failure:
            report.items.append(Item(TITLES[6], "fail", str(failure)))
    else:
        why = "skipped (fleet=False): exercise 2's check_fleet runs it"
        report.items.append(Item(TITLES[6], "skip", why))
    if official:
        report.items.append(await _check_official(path, suite_dir))
    else:
        report.items.append(Item(TITLES[7], "skip", "skipped (official=False)"))
    return report


async def check_fleet(
    target: str | Path | Sequence[str | Path] | Callable[..., Any], **options: Any
) -> Checkpoint:
    """Exercise 2's checkpoint: the whole gate, the fleet (item 7) included, with a verdict
    that says first what the fleet found; ``options`` go to ``gate``."""
    report = await gate(target, **options)
    fleet = report.item(TITLES[6])
    if report.passed:
        return Checkpoint("passed", f"the port runs on the fleet, {fleet.why}\n\n{report!r}")
    if fleet.status == "fail":
        first = f"item 7, the fleet: {fleet.why}"
    elif fleet.status == "wait":
        first = "item 1 fails, so nothing else was checked: exercise 1 first"
    else:
        failed = ", ".join(report.failed)
        first = f"{failed} fails (exercise 1's checkpoint gives the same lines)"
    return Checkpoint("not yet", f"{first}\n\n{report!r}")


if __name__ == "__main__":
    sys.exit(main())
