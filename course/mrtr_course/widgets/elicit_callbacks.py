"""The kit's forms for other MCP clients: the official SDK's ``Client`` and FastMCP's ``Client``.

Both libraries answer an elicitation by awaiting a function of yours:

* the SDK (``mcp`` 2.3): ``Client(..., elicitation_callback=sdk_elicitation_callback(panel))``;
  the callback gets ``(context, params)`` and returns ``mcp_types.ElicitResult`` or
  ``mcp_types.ErrorData``;
* FastMCP (4.x): ``fastmcp.Client(..., elicitation_handler=fastmcp_elicitation_handler(panel))``;
  the handler gets ``(message, response_type, params, context)`` and returns
  ``fastmcp.client.elicitation.ElicitResult`` (it may only raise to refuse).

Either way the kit's widgets do the work: ``ElicitationPanel.ask`` shows an
``ElicitationForm`` (form mode) or a ``UrlCard`` (URL mode) for the request, waits for the
click that answers it, and returns the ``ElicitResult`` the form engine built (``mrtr_kit.forms``
parses and validates; ELIC-14). The two adapters below only convert to and from each library's
types. Both libraries run the 2026-07-28 retry loop themselves (MRTR-C1) and call the same
function for a 2025-11-25 server's ``elicitation/create`` request.

Waiting for a click (docs/architecture.md §3): the wait is an ``await`` on a future the click
resolves, always with a timeout (``timeout``; when it passes, the form presses its own Cancel,
ELIC-6). Run the client's call with ``panel.start(coro)``: the call becomes a task on the kernel's
loop, the cell ends at once, and the learner's click, handled while no cell runs, lets it go on
(lesson 03 does this; a test sends the click to a real kernel as a comm message). Awaiting the call
in the cell itself needs a kernel that handles comm messages while an async cell waits: ipykernel
7.4 does; on 6.x the click waits for the cell, so the form times out (docs/architecture.md §3).
Tests and nbval press the buttons from code: ``(await panel.asked()).fill(...).accept()`` runs a
real click's handler.

A ``requestedSchema`` outside the form subset is shown as "cannot be shown" and refused with a
protocol error (ELIC-5 (KIT)): ``-32602`` from the SDK callback; FastMCP turns the handler's
exception into its own ``-32603``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import ipywidgets as w

from mrtr_course.widgets.answer_widget import ERROR_STYLE, MUTED_STYLE, AnswerWidget, esc
from mrtr_course.widgets.flow import TEXT_COPY_NOTE
from mrtr_course.widgets.form_widgets import ElicitationForm
from mrtr_course.widgets.url_card import UrlCard
from mrtr_kit.forms import SchemaOutsideSubset

DEFAULT_WAIT_S = 600.0  # how long a form waits for a person before it cancels itself
# how long ``asked()`` and ``result()`` wait for the *server* (a cap for one that hangs: a
# busy machine must not turn a slow round trip into a TimeoutError)
DEFAULT_ASKED_S = 60.0
REFUSED = "requestedSchema outside the form subset:"  # the error's message, then the reason

__all__ = [
    "DEFAULT_WAIT_S",
    "ElicitationPanel",
    "fastmcp_elicitation_handler",
    "sdk_elicitation_callback",
]


class ElicitationPanel:
    """Where one client's elicitations appear, one form or URL card each, in order.

    ``label`` heads the panel; ``timeout`` is how long each form waits for its answer.
    ``display_on_first_ask`` shows the panel (IPython ``display``) when the first form arrives,
    for a client whose call runs in the cell itself.
    """

    def __init__(
        self,
        label: str = "",
        *,
        timeout: float = DEFAULT_WAIT_S,
        display_on_first_ask: bool = False,
    ) -> None:
        self.label = label
        self.timeout = timeout
        self.shown: list[AnswerWidget] = []  # every form and card, in the order asked
        self.task: asyncio.Task[Any] | None = None
        self.error: str | None = None
        self.status_message = ""
        self._display_on_first_ask = display_on_first_ask
        self._changed = asyncio.Event()  # set whenever a form appears or the call ends
        self._body = w.VBox([])
        self._status = w.HTML("")
        self._status.add_class("mrtr-status")
        self._result = w.HTML("")
        self._result.add_class("mrtr-result")
        parts: list[w.Widget] = [self._body, self._status, self._result]
        if label:
            parts.insert(0, w.HTML(f"<b>{esc(label)}</b>"))
        self.widget = w.VBox(parts)
        self.widget.add_class("mrtr-elicitation-panel")

    # -- the library-neutral core ------------------------------------------------------------

    async def ask(
        self, params: Mapping[str, Any], *, asker: str | None = None, key: str | None = None
    ) -> dict[str, Any]:
        """Show the form (or URL card) for ``params`` (``elicitation/create`` params, wire
        names) and wait for its answer: the ``ElicitResult`` as sent, e.g. ``{"action":
        "accept", "content": {...}}``.

        Raises ``SchemaOutsideSubset`` when the form cannot be shown (ELIC-5 (KIT)). After
        ``timeout`` seconds without an answer the form presses its own Cancel (ELIC-6)."""
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[dict[str, Any] | None] = loop.create_future()

        def on_answer(answer: dict[str, Any] | None) -> None:
            # A click may be handled off the loop's thread; hand the answer to the loop.
            def settle() -> None:
                if not answered.done():
                    answered.set_result(answer)

            try:
                here = asyncio.get_running_loop() is loop
            except RuntimeError:
                here = False
            if here:
                settle()
            else:
                loop.call_soon_threadsafe(settle)

        widget: AnswerWidget
        if params.get("mode") == "url":
            widget = UrlCard(params, asker=asker, key=key, on_answer=on_answer)
        else:
            widget = ElicitationForm(params, asker=asker, key=key, on_answer=on_answer)
        self._show(widget)
        if isinstance(widget, ElicitationForm) and widget.schema_problem is not None:
            self._set_status(f"Refused {key or 'the request'}: the form cannot be shown.")
            raise SchemaOutsideSubset(widget.schema_problem)
        try:
            answer = await asyncio.wait_for(asyncio.shield(answered), self.timeout)
        except asyncio.CancelledError:
            # The client stopped waiting (the call ended, e.g. another question was refused):
            # lock the form, so that no click looks as if it sent something.
            for button in widget.buttons:
                button.disabled = True
            widget.status.value = (
                f"<span style='{MUTED_STYLE}'>The client stopped waiting: nothing sent.</span>"
            )
            raise
        except TimeoutError:
            widget.cancel()  # type: ignore[attr-defined]  # both widgets have a Cancel button
            widget.status.value = (
                f"<span style='{MUTED_STYLE}'>No answer within {self.timeout:g} s: "
                "sent cancel.</span>"
            )
            answer = await answered
        self._set_status(f"Answered {key or 'the request'}: {(answer or {}).get('action')}.")
        assert answer is not None  # forms and URL cards always answer (ELIC-15)
        return answer

    def _show(self, widget: AnswerWidget) -> None:
        self.shown.append(widget)
        self._body.children = (*self._body.children, widget.widget)
        self._set_status("Waiting for your answer.")
        if self._display_on_first_ask and len(self.shown) == 1:
            from IPython.display import display

            display(self)  # with its first form: the text copy shows the question
        self._changed.set()

    # -- running a client's call --------------------------------------------------------------

    def start(self, call: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``call`` (a client's ``call_tool`` and the rest) as a task on this loop and show
        its outcome here. Returns at once: clicks answer the forms while no cell runs."""
        if self.task is not None:
            raise RuntimeError("this panel runs a call already; make a new panel")
        self._set_status("Sending …")
        self.task = asyncio.get_running_loop().create_task(self._run(call))
        return self.task

    async def _run(self, call: Coroutine[Any, Any, Any]) -> Any:
        try:
            outcome = await call
        except BaseException as exc:  # a task must never die silently: show what broke
            self.error = _error_text(exc)
            self._set_status(f"The call stopped: {self.error}", error=True)
            if not isinstance(exc, Exception):
                raise
            return None
        else:
            self._set_status("Complete.")
            self._result.value = f"<pre>{esc(outcome)}</pre>"
            return outcome
        finally:
            self._changed.set()

    async def asked(self, timeout: float = DEFAULT_ASKED_S) -> Any:
        """The first form or card not answered yet, once the server has asked for it.

        It waits for the server, never for a person, and gives up after ``timeout`` seconds;
        it raises ``RuntimeError`` when the call ended without asking again."""

        async def first_open() -> AnswerWidget:
            while True:
                for widget in self.shown:
                    if _is_open(widget):
                        return widget
                if self.task is not None and self.task.done():
                    raise RuntimeError(f"the call ended without another question: {self.text}")
                self._changed.clear()
                await self._changed.wait()

        try:
            return await asyncio.wait_for(first_open(), timeout)
        except TimeoutError:
            raise TimeoutError(f"no question from the server within {timeout} s") from None

    async def result(self, timeout: float = DEFAULT_ASKED_S) -> Any:
        """What the call returned, waiting at most ``timeout`` seconds (a request on its way,
        never a person: answer the forms first). Raises if the call failed."""
        if self.task is None:
            raise RuntimeError("no call started: use panel.start(...)")
        outcome = await asyncio.wait_for(asyncio.shield(self.task), timeout)
        if self.error is not None:
            raise RuntimeError(self.error)
        return outcome

    @property
    def text(self) -> str:
        """The call's outcome as text: its result, its error, or its state."""
        if self.error is not None:
            return f"error: {self.error}"
        if self.task is not None and self.task.done():
            return str(self.task.result())
        return "not finished"

    # -- display ---------------------------------------------------------------------------

    def _set_status(self, text: str, *, error: bool = False) -> None:
        self.status_message = text
        style = ERROR_STYLE if error else MUTED_STYLE
        self._status.value = f"<span style='{style}'>{esc(text)}</span>"

    def describe(self) -> str:
        lines = [self.label] if self.label else []
        lines += [widget.describe() for widget in self.shown]
        if not self.shown:
            lines.append("(no question yet)")
        if any(_is_open(widget) for widget in self.shown):
            lines.append(TEXT_COPY_NOTE)
        if self.task is not None and self.task.done():
            lines.append(f"result: {self.text}")
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.describe()
        return bundle

    def __repr__(self) -> str:
        return self.describe()


def _is_open(widget: AnswerWidget) -> bool:
    """Waiting for a click (a form that cannot be shown has no buttons to click)."""
    unshowable = isinstance(widget, ElicitationForm) and widget.schema_problem is not None
    return not widget.answered and not unshowable


def _error_text(exc: BaseException) -> str:
    """One readable line, also for the exception groups of anyio task groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _request(params: Any) -> dict[str, Any]:
    """A library's ``ElicitRequestParams`` as the wire params the kit's widgets read."""
    if getattr(params, "mode", None) == "url":
        return {"mode": "url", "message": params.message, "url": params.url}
    return {"mode": "form", "message": params.message, "requestedSchema": params.requested_schema}


def _who(context: Any) -> tuple[str | None, str | None]:
    """(the server's name, the question's key) from the SDK's ``ClientRequestContext``: the
    form says who asks (ELIC-15). Under 2026-07-28 the request id is the ``inputRequests``
    key; a 2025-11-25 server request has a JSON-RPC id instead, which is not shown."""
    info = getattr(getattr(context, "session", None), "server_info", None)
    key = getattr(context, "request_id", None)
    return getattr(info, "name", None), key if isinstance(key, str) else None


SdkCallback = Callable[[Any, Any], Awaitable[Any]]
FastMcpHandler = Callable[[str, Any, Any, Any], Awaitable[Any]]


def sdk_elicitation_callback(panel: ElicitationPanel | None = None) -> SdkCallback:
    """An ``elicitation_callback`` for the official SDK's ``Client`` / ``ClientSession``.

    Without ``panel``, a new one is shown in the running cell when the first form arrives; the
    callback's ``panel`` attribute is the panel either way."""
    panel = panel or ElicitationPanel(display_on_first_ask=True)

    async def elicitation_callback(context: Any, params: Any) -> Any:
        from mcp_types import INVALID_PARAMS, ElicitResult, ErrorData

        asker, key = _who(context)
        try:
            answer = await panel.ask(_request(params), asker=asker, key=key)
        except SchemaOutsideSubset as exc:
            return ErrorData(code=INVALID_PARAMS, message=f"{REFUSED} {exc}")
        return ElicitResult.model_validate(answer)

    elicitation_callback.panel = panel  # type: ignore[attr-defined]  # its forms, for code
    return elicitation_callback


def fastmcp_elicitation_handler(panel: ElicitationPanel | None = None) -> FastMcpHandler:
    """An ``elicitation_handler`` for FastMCP's ``Client``.

    Without ``panel``, a new one is shown in the running cell when the first form arrives; the
    handler's ``panel`` attribute is the panel either way."""
    panel = panel or ElicitationPanel(display_on_first_ask=True)

    async def elicitation_handler(
        message: str, response_type: Any, params: Any, context: Any
    ) -> Any:
        from fastmcp.client.elicitation import ElicitResult

        asker, key = _who(context)
        try:
            answer = await panel.ask(_request(params), asker=asker, key=key)
        except SchemaOutsideSubset as exc:  # FastMCP turns it into its error response
            raise SchemaOutsideSubset(f"{REFUSED} {exc}") from None
        return ElicitResult(action=answer["action"], content=answer.get("content"))

    elicitation_handler.panel = panel  # type: ignore[attr-defined]  # its forms, for code
    return elicitation_handler
