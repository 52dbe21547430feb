"""``CallFlow``: drive one MRTR call from widgets, without ever blocking the kernel.

The cell that starts a flow awaits only round 1 (a plain HTTP exchange). When the server
answers ``input_required``, the flow shows one answer widget per input request, one after
another (MRTR-C1: every request is answered before the retry). The last answer's button click
schedules the retry as a task on the kernel's event loop and returns at once; the task sends
the round and shows what came back in the same widget. Nothing waits for a click, so the flow
works the same with a person clicking in JupyterLab and with ``button.click()`` in a test or
an nbval run (docs/architecture.md §3).

A cell that needs the outcome of a programmatic click awaits ``flow.settled(timeout=...)``:
it waits for a request already on its way, never for a person, and always has a timeout.

Status values: ``sending``, ``input_required`` (waiting for an answer), ``complete``,
``stopped`` (the learner refused a sampling or roots request: nothing is sent, MRTR-C8) and
``failed`` (a JSON-RPC error, a protocol violation, or a form outside the subset).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any

import ipywidgets as w

from mrtr_course.plain.trace_view import Mermaid, TraceView, result_text, sequence_diagram
from mrtr_course.widgets.answer_widget import ERROR_STYLE, MUTED_STYLE, AnswerWidget, esc
from mrtr_course.widgets.form_widgets import ElicitationForm
from mrtr_course.widgets.panels import RootsPanel, SamplingPanel
from mrtr_course.widgets.url_card import UrlCard
from mrtr_kit.client import (
    AnswerContext,
    AnswerThese,
    Done,
    GiveUp,
    InputDeclined,
    McpClient,
    McpClientError,
    MrtrCall,
    Question,
)
from mrtr_kit.client.answers import parse_input_request
from mrtr_kit.protocol.models import (
    CreateMessageRequest,
    ElicitRequest,
    ElicitRequestURLParams,
    Root,
)

# settled()'s cap: it only ends a wait for a request already sent (a server that hangs), so it
# is generous: a slow or busy machine must not turn a round trip into a TimeoutError.
DEFAULT_TIMEOUT_S = 60.0
TEXT_COPY_NOTE = "(A text copy of the widget: when the cell runs, the live widget shows here.)"
WAIT_NOTE = " The server may take a while: it can wait for the step on the page (ELIC-9)."


def _article(noun: str) -> str:
    return "an" if noun[:1] in "AEIOU" else "a"


class CallFlow:
    """One logical ``tools/call`` / ``prompts/get`` / ``resources/read`` and its widget."""

    def __init__(
        self,
        client: McpClient,
        begin: Callable[[], Awaitable[MrtrCall]],
        *,
        label: str,
        roots: Sequence[Root | Mapping[str, Any]] = (),
        show_trace: bool = True,
    ) -> None:
        self.client = client
        self.label = label
        self.roots = list(roots)
        self.call: MrtrCall | None = None
        self.status = "new"
        self.status_message = ""  # the status line, as plain text
        self.error: str | None = None
        self.current: AnswerWidget | None = None
        self._begin = begin
        self._queue: list[Question] = []
        self._answers: dict[str, dict[str, Any]] = {}
        self._agreed: set[str] = set()  # URLs the user agreed to go to in this call (ELIC-9)
        self._url_accepted = False  # this round answers a URL request with accept
        self._concluded: UrlCard | None = None  # the URL card shrunk to its answer at the end
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle = asyncio.Event()
        self._tasks: set[asyncio.Future[Any] | concurrent.futures.Future[Any]] = set()
        self._first_record = len(client.trace)
        self._last_sent = ""  # the answers of the latest round, e.g. "login: decline"

        self._status = w.HTML("")
        self._status.add_class("mrtr-status")
        self._result = w.HTML("")
        self._result.add_class("mrtr-result")
        self._body = w.VBox([])
        self._trace_html = w.HTML("")
        self._trace: w.Accordion | None = None
        parts: list[w.Widget] = [
            w.HTML(f"<b>{esc(label)}</b>"),
            self._body,
            self._status,
            self._result,
        ]
        if show_trace:
            self._trace = w.Accordion(
                children=[self._trace_html], titles=("Wire trace of this call (_meta shown as …)",)
            )
            self._trace.selected_index = None
            # Rendered only while open: a closed trace costs nothing, in the page or the file.
            self._trace.observe(lambda _change: self._refresh_trace(), names="selected_index")
            parts.append(self._trace)
        self.widget = w.VBox(parts)
        self.widget.add_class("mrtr-flow")

    # -- what the flow knows --------------------------------------------------------------

    @property
    def result(self) -> dict[str, Any] | None:
        return self.call.result if self.call is not None else None

    @property
    def text(self) -> str:
        """The readable text of the final result (empty until complete)."""
        return result_text(self.result)

    @property
    def rounds(self) -> int:
        return self.call.rounds if self.call is not None else 0

    @property
    def form(self) -> ElicitationForm:
        return self._current(ElicitationForm)

    @property
    def card(self) -> UrlCard:
        return self._current(UrlCard)

    @property
    def sampling(self) -> SamplingPanel:
        return self._current(SamplingPanel)

    @property
    def roots_panel(self) -> RootsPanel:
        return self._current(RootsPanel)

    def _current(self, kind: type[Any]) -> Any:
        if not isinstance(self.current, kind):
            raise RuntimeError(self._not_showing(kind.__name__))
        return self.current

    def _not_showing(self, wanted: str) -> str:
        """Why there is no ``wanted`` to use, and what to do: most often the learner answered
        this call by hand already, so a cell written for round 1 finds a later round."""
        shown = type(self.current).__name__ if self.current else "nothing"
        said = f"{self.label}: the call shows {shown}, not {_article(wanted)} {wanted}"
        said += f" (status {self.status}, round {self.rounds})"
        if self.status in ("complete", "stopped") or (
            self.current is not None and self.current.answered
        ):
            return (
                f"{said}. This call was answered already (by a click on its widget, or by an "
                "earlier cell), so it has moved on. To run this cell, first re-run the cell "
                "that started the call: it begins a new call."
            )
        if self.status == "failed":
            return f"{said}. The call failed: {self.error}"
        return f"{said}. Answer what it shows now, or re-run the cell that started the call."

    @property
    def records(self) -> list[Any]:
        """The trace records of this call's rounds (``client.trace`` holds every call's)."""
        mine = self.client.trace[self._first_record :]
        return [r for r in mine if r.call == mine[0].call] if mine else []

    def trace(self, *, hide_meta: bool = False) -> TraceView:
        return TraceView(self.records, hide_meta=hide_meta)

    def diagram(self) -> Mermaid:
        return Mermaid(sequence_diagram(self.records))

    # -- running --------------------------------------------------------------------------

    async def start(self) -> CallFlow:
        """Send round 1 and show what the server answered. Awaited in the starting cell."""
        if self._loop is not None:
            raise RuntimeError("this flow was started already")
        self._loop = asyncio.get_running_loop()
        await self._round(None, first=True)
        return self

    async def settled(self, timeout: float = DEFAULT_TIMEOUT_S) -> str:
        """Wait until no request of this flow is on its way; return the status.

        Use it after a programmatic click. It never waits for a person: when nothing is being
        sent it returns at once, and it gives up after ``timeout`` seconds.
        """
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            raise TimeoutError(
                f"{self.label}: still {self.status} after {timeout} s (is the server running?)"
            ) from None
        return self.status

    async def _round(
        self, answers: dict[str, dict[str, Any]] | None, *, first: bool = False
    ) -> None:
        self._idle.clear()
        # What this round sends, for the text copy once the call is over ("Sent: decline").
        self._last_sent = ", ".join(
            f"{key}: {answer.get('action', 'an answer')}" for key, answer in (answers or {}).items()
        )
        wait = WAIT_NOTE if self._url_accepted else ""
        self._set_status("sending", f"Sending round {self.rounds + 1} …{wait}")
        try:
            if first:
                self.call = await self._begin()
            else:
                assert self.call is not None
                await self.client.continue_call(self.call, answers)
            # The call says what comes next; state-only rounds are sent without asking anyone.
            step = await self.client.retry_state_only(self.call)
            if isinstance(step, GiveUp):
                raise step.error
        except McpClientError as exc:
            self._fail(str(exc))
        except Exception as exc:  # a task must never die silently: show what broke
            self._fail(f"{type(exc).__name__}: {exc}")
        else:
            self._present(step)
        finally:
            self._refresh_trace()
            self._idle.set()

    def _present(self, step: Done | AnswerThese) -> None:
        assert self.call is not None
        if isinstance(step, Done):
            # The last question stays in view, locked, showing what was answered; a URL card
            # shrinks to its answer, as its message may be a stale "not finished yet".
            if isinstance(self.current, UrlCard):
                self.current.conclude()
                self._concluded = self.current
            self.current = None
            self._set_status("complete", f"Complete after {self.rounds} round(s).")
            text = result_text(step.result) or json.dumps(step.result, indent=2)
            self._result.value = f"<pre>{esc(text)}</pre>"
            return
        self._url_accepted = False
        self._queue = list(step.questions)  # MRTR-C1: all of them, one after another
        self._answers = {}
        self._next_question()

    def _next_question(self) -> None:
        question = self._queue.pop(0)
        key, request = question.key, question.request
        try:
            parsed = parse_input_request(request)
        except McpClientError as exc:
            self._fail(str(exc))
            return
        info = question.context.server_info or {}
        asker = info.get("name") if isinstance(info.get("name"), str) else None

        def on_answer(answer: dict[str, Any] | None) -> None:
            if isinstance(widget, UrlCard) and (answer or {}).get("action") == "accept":
                self._agreed.add(widget.params.url)
                self._url_accepted = True
            self._on_answer(key, answer)

        widget: AnswerWidget
        if isinstance(parsed, ElicitRequest) and isinstance(parsed.params, ElicitRequestURLParams):
            # Asked again for a URL the user agreed to go to: no second consent, a manual retry.
            agreed = parsed.params.url in self._agreed
            widget = UrlCard(
                parsed.params, asker=asker, key=key, agreed=agreed, on_answer=on_answer
            )
        elif isinstance(parsed, ElicitRequest):
            widget = ElicitationForm(request["params"], asker=asker, key=key, on_answer=on_answer)
        elif isinstance(parsed, CreateMessageRequest):
            widget = SamplingPanel(parsed.params, asker=asker, key=key, on_answer=on_answer)
        else:
            widget = RootsPanel(self.roots, asker=asker, key=key, on_answer=on_answer)
        self.current = widget
        self._body.children = (widget.widget,)
        total = len(self._answers) + len(self._queue) + 1
        where = f" ({len(self._answers) + 1} of {total})" if total > 1 else ""
        self._set_status(
            "input_required", f"Round {self.rounds}: the server needs input {key!r}{where}."
        )

    def _on_answer(self, key: str, answer: dict[str, Any] | None) -> None:
        """Called by the answer widget's click handler: never blocks, never awaits."""
        if answer is None:
            assert self.call is not None
            refused = self.call.refuse(key)  # MRTR-C8 / SAMP-6: no answer means no retry
            if isinstance(refused, InputDeclined):
                self._set_status(
                    "stopped", f"You refused {key!r}: nothing was sent; the call ends."
                )
            else:
                self._fail(str(refused))
            return
        self._answers[key] = answer
        if self._queue:
            self._next_question()
            return
        self._idle.clear()  # now, so that a settled() right after the click waits for the task
        wait = WAIT_NOTE if self._url_accepted else ""
        self._set_status("sending", f"Sending round {self.rounds + 1} …{wait}")
        self._schedule(self._round(dict(self._answers)))

    def _schedule(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` on the kernel's loop without waiting for it (docs/architecture.md §3)."""
        assert self._loop is not None
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        future: asyncio.Future[Any] | concurrent.futures.Future[Any]
        if running is self._loop:
            future = self._loop.create_task(coro)
        else:  # a click handled outside the loop's thread: hand the round to the loop
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        self._tasks.add(future)  # keep a reference until done, or the task may vanish
        future.add_done_callback(self._tasks.discard)

    def _refresh_trace(self) -> None:
        if self._trace is not None and self._trace.selected_index == 0:
            self._trace_html.value = self.trace(hide_meta=True).html()

    def _fail(self, message: str) -> None:
        self.error = message
        self._set_status("failed", f"The call stopped: {message}")

    def _set_status(self, status: str, text: str) -> None:
        self.status, self.status_message = status, text
        style = ERROR_STYLE if status == "failed" else MUTED_STYLE
        self._status.value = f"<span style='{style}'>{esc(text)}</span>"

    # -- display ------------------------------------------------------------------------------

    def describe(self) -> str:
        lines = [f"{self.label} — {self.status}, round {self.rounds}"]
        if self.current is not None and self.status in ("input_required", "sending", "stopped"):
            lines.append(self.current.describe())
        if self.status == "input_required":
            # Where widgets do not render (a stored notebook, GitHub) this text is what shows.
            lines.append(TEXT_COPY_NOTE)
        if self.status == "complete":
            if self._concluded is not None:
                lines.append(self._concluded.describe())
            elif self._last_sent:
                lines.append(f"Sent: {self._last_sent}")
            lines.append(f"result: {self.text}")
        if self.error:
            lines.append(f"error: {self.error}")
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.describe()
        return bundle


class AnsweredByWidgets(McpClientError):
    """The automatic loop (``client.call_tool``) asked a widget client to answer by itself."""


def _by_widgets(params: Any, ctx: AnswerContext) -> Any:
    # The client can answer these requests (so it declares them), but only through a person at
    # a widget, which the automatic loop cannot wait for without blocking the kernel.
    raise AnsweredByWidgets(
        f"{ctx.key!r} is answered in a widget: start the call with start_tool_call, "
        "start_prompt or start_resource instead of the automatic call_tool loop"
    )


def widget_client(
    target: Any,
    *,
    form: bool = True,
    url: bool = False,
    sampling: bool = False,
    roots: bool = False,
    **options: Any,
) -> McpClient:
    """An ``McpClient`` whose input requests are answered by the learner in widgets.

    ``target`` is an ASGI app (served in this process) or an ``http://.../mcp`` URL. The client
    declares exactly the kinds of input it can show a widget for (§2.9, MRTR-S7).
    """
    handlers = {
        "elicitation": _by_widgets if form else None,
        "url_elicitation": _by_widgets if url else None,
        "sampling": _by_widgets if sampling else None,
        "roots": _by_widgets if roots else None,
    }
    if isinstance(target, str):
        return McpClient(target, **handlers, **options)
    return McpClient.for_app(target, **handlers, **options)


def _label(method: str, target: str, arguments: Mapping[str, Any] | None) -> str:
    args = f" {json.dumps(dict(arguments), ensure_ascii=False)}" if arguments else ""
    return f"{method} {target}{args}"


async def start_tool_call(
    client: McpClient, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
) -> CallFlow:
    """Send ``tools/call`` round 1 and return its flow (display it to see the form)."""
    flow = CallFlow(
        client,
        lambda: client.begin_tool_call(name, arguments),
        label=_label("tools/call", name, arguments),
        **options,
    )
    return await flow.start()


async def start_prompt(
    client: McpClient, name: str, arguments: Mapping[str, str] | None = None, **options: Any
) -> CallFlow:
    flow = CallFlow(
        client,
        lambda: client.begin_get_prompt(name, arguments),
        label=_label("prompts/get", name, arguments),
        **options,
    )
    return await flow.start()


async def start_resource(client: McpClient, uri: str, **options: Any) -> CallFlow:
    flow = CallFlow(
        client,
        lambda: client.begin_read_resource(uri),
        label=_label("resources/read", uri, None),
        **options,
    )
    return await flow.start()
