"""What the porting checkpoints share (lessons 03 and 03c): the learner's handler run inside a
real server, on a fresh instance per round when asked, and the probes every port is sent.

* ``LearnerCode`` runs the learner's handler inside a real ``McpServer`` and keeps its
  exceptions for the report; ``FreshInstances`` runs it as a newly started process would, its
  module-level containers as at import (the next round behind round robin);
* ``serve_tool`` and ``instance_per_request``: the handler served in this process, on one
  server or on a new one per request (one state key for all: a fleet);
* ``probe_unfit``: answers that do not fit the form, which must be asked again (ELIC-14
  SHOULD, MRTR-E4 SHOULD); ``final_twice`` and ``acted_twice``: the final retry sent a second
  time, as a client does whose response was lost (HTTP-26 MUST), and what to say when the port
  acts twice (MIG-3).

The checkpoints themselves stay beside their notebooks (``lesson03_checkpoints.py``,
``lesson03c_checkpoints.py``): the kernel's working directory is the lesson's folder, and this
package is what both can import.
"""

from __future__ import annotations

import copy
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any

from mrtr_course.checkpoints import Checkpoint
from mrtr_course.refund_lab.lab import RawCaller, ServerAnswer
from mrtr_kit.protocol.errors import McpError
from mrtr_kit.protocol.models import ElicitRequestFormParams, ElicitResult
from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.http import create_app

# -- running the learner's code --------------------------------------------------------------------


def _names(code: types.CodeType) -> set[str]:
    """The global names ``code`` (and the functions nested in it) may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _from_another_module(name: str, value: Any, own: dict[str, Any]) -> bool:
    """Whether ``value`` is something imported (a form schema, say), not the learner's own."""
    return any(
        getattr(module, "__dict__", own) is not own and vars(module).get(name) is value
        for module in list(sys.modules.values())
    )


class FreshInstances:
    """Runs ``fn`` as newly started server processes would, one per ``new()``.

    The dicts, lists and sets ``fn`` reads from its own module (and its mutable defaults) start
    every instance as they were when this object was made, like a fresh import: what a handler
    kept in memory between rounds is gone, as when the balancer sends the next round to another
    instance. Containers imported from other modules (the lesson's forms) are left alone.
    ``memory`` names the containers a run changed: memory kept in the process.
    """

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.snapshot: dict[str, Any] = {}
        self._instances: list[dict[str, Any]] = []
        if not isinstance(fn, types.FunctionType):
            return
        own = fn.__globals__
        for name in sorted(_names(fn.__code__)):
            value = own.get(name)
            if isinstance(value, dict | list | set) and not _from_another_module(name, value, own):
                try:
                    self.snapshot[name] = copy.deepcopy(value)
                except Exception:  # a container that cannot be copied stays shared
                    continue

    def new(self) -> Any:
        fn = self.fn
        if not isinstance(fn, types.FunctionType):
            return fn
        fresh = copy.deepcopy(self.snapshot)
        self._instances.append(fresh)
        defaults = copy.deepcopy(fn.__defaults__)
        run = types.FunctionType(
            fn.__code__, {**fn.__globals__, **fresh}, fn.__name__, defaults, fn.__closure__
        )
        run.__kwdefaults__ = fn.__kwdefaults__
        return run

    @property
    def memory(self) -> list[str]:
        return [
            name
            for name, start in self.snapshot.items()
            if any(instance[name] != start for instance in self._instances)
        ]


class LearnerCode:
    """Runs the learner's handler inside a real server, keeping its exceptions for the report
    (the server would otherwise turn them into an internal error and log a traceback)."""

    def __init__(self, handler: Callable[..., Any], *extra: Any, fresh: bool = False) -> None:
        self.handler = handler
        self.extra = extra
        self.instances = FreshInstances(handler) if fresh else None  # a new one each run
        self.states: list[dict[str, Any] | None] = []  # the verified state of each run
        self.error: BaseException | None = None
        self.error_case: str | None = None  # the case the checkpoint was running then
        self.case: str | None = None  # set by the checkpoint before each call
        self.runs = 0

    async def __call__(self, ctx: RequestContext) -> Any:
        self.runs += 1
        self.states.append(ctx.state)
        handler = self.instances.new() if self.instances else self.handler
        try:
            outcome = handler(ctx, *self.extra)
            return await outcome if inspect.isawaitable(outcome) else outcome
        except McpError:  # a protocol error the handler means to send, e.g. -32021
            raise
        except Exception as exc:
            if self.error is None:
                self.error, self.error_case = exc, self.case
            return f"(the handler raised {type(exc).__name__})"

    def problem(self, name: str) -> Checkpoint | None:
        if isinstance(self.error, NotImplementedError):
            return Checkpoint("not done", f"{name}() still raises NotImplementedError.")
        if self.error is None:
            return None
        raised = f"{name}() raised {type(self.error).__name__}: {self.error}"
        if self.error_case == "decline":
            return Checkpoint(
                "not yet",
                f"with a declined answer, {raised}. A decline carries no content: check "
                "answer.action before reading answer.content.",
            )
        if self.error_case is not None:
            return Checkpoint("not yet", f"with {self.error_case}, {raised}")
        return Checkpoint("not yet", raised)


def serve_tool(
    name: str,
    code: Any,
    schema: dict[str, Any],
    keys: KeyRing | None = None,
    server_name: str = "lesson-checkpoint",
) -> Any:
    """An ASGI app: a real ``McpServer`` serving ``code`` as the tool ``name``."""
    server = McpServer(server_name, state_keys=keys or KeyRing.generate())
    server.tool(name, description="The learner's port.", input_schema=schema)(code)
    return create_app(server)


def instance_per_request(
    name: str, code: LearnerCode, schema: dict[str, Any], server_name: str = "lesson-checkpoint"
) -> Any:
    """An ASGI app that serves every request on a newly built server sharing one state key:
    a fleet where each round lands on another instance, as behind round robin."""
    keys = KeyRing.generate()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await serve_tool(name, code, schema, keys, server_name)(scope, receive, send)

    return app


def decline(params: ElicitRequestFormParams, ctx: Any) -> ElicitResult:
    return ElicitResult(action="decline")


# -- answers that do not fit, and a final retry sent twice -----------------------------------------

NO_CONTENT: dict[str, Any] = {"action": "accept"}  # an accept that carries no content at all


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


async def probe_unfit(
    app: Any,
    code: LearnerCode,
    name: str,
    arguments: dict[str, Any],
    key: str,
    unfit: dict[str, dict[str, Any]],
    before: tuple[tuple[str, dict[str, Any]], ...] = (),
) -> Checkpoint | None:
    """Answer the question ``key`` with each answer in ``unfit`` (after answering ``before``,
    the questions on the way to it) and expect it asked again, not completed, not an error."""
    caller = RawCaller.for_app(app)
    try:
        reply = await caller.call_tool(name, arguments)
        for asked, answer in before:
            reply = await caller.call_tool(
                name, arguments, request_state=reply.request_state, input_responses={asked: answer}
            )
        state = reply.request_state
        for label, answer in unfit.items():
            code.error, code.case = None, label
            got = await caller.call_tool(
                name, arguments, request_state=state, input_responses={key: answer}
            )
            if code.error is not None and not isinstance(code.error, NotImplementedError):
                return Checkpoint(
                    "not yet",
                    f"with {label} under {key!r}, {name}() raised "
                    f"{type(code.error).__name__}: {code.error}. A server answers that with "
                    "-32603, an internal error, for an answer the user can fix. Read the answer "
                    f"with ctx.form({key!r}, message, form): it checks the answer against the "
                    "form (ELIC-14 SHOULD), and needs_asking is then True: return .ask(), "
                    "which asks again saying what was wrong (MRTR-E4 SHOULD).",
                )
            if got.kind != "input_required" or key not in (got.result.get("inputRequests") or {}):
                return Checkpoint(
                    "not yet",
                    f"with {label} under {key!r}, {name} answered {got!s:.120} -- an answer "
                    "that does not fit the form must not be used: the server validates "
                    "answers against its form (ELIC-14 SHOULD) and asks again, saying what "
                    f"was wrong (MRTR-E4 SHOULD). Read it with ctx.form({key!r}, message, "
                    "form) and return .ask() when .needs_asking.",
                )
    finally:
        await caller.aclose()
    code.error = None
    return None


async def final_twice(
    app: Any,
    name: str,
    arguments: dict[str, Any],
    answers: tuple[tuple[str, dict[str, Any]], ...],
) -> tuple[ServerAnswer, ServerAnswer]:
    """Answer each question in turn, then send the final retry a second time, under a new id,
    as a client does whose response was lost (HTTP-26). The two final answers."""
    caller = RawCaller.for_app(app)
    try:
        reply = await caller.call_tool(name, arguments)
        for asked, answer in answers[:-1]:
            reply = await caller.call_tool(
                name, arguments, request_state=reply.request_state, input_responses={asked: answer}
            )
        last_key, last = answers[-1]
        final = {"request_state": reply.request_state, "input_responses": {last_key: last}}
        first = await caller.call_tool(name, arguments, **final)
        again = await caller.call_tool(name, arguments, **final)
    finally:
        await caller.aclose()
    return first, again


def acted_twice(what: str, first: ServerAnswer, again: ServerAnswer) -> str:
    return (
        f"the final retry, sent a second time as a client does whose response was lost "
        f"(HTTP-26 MUST: it re-sends the same answers and state under a new id), {what} "
        f"(first: {first} | the repeat: {again}). A handler runs once per round that "
        "arrives, the last one too (MIG-3): do the side effect under a key sealed in the state "
        "(a random one made on the first round, as lesson 02b does with the booking nonce), so "
        "a repeat gets back what the first one did."
    )
