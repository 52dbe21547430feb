"""What every answer widget (form, URL card, sampling and roots panels) has in common.

An answer widget shows one input request and produces one ``inputResponses`` value. It never
waits: a button's kernel-side click handler calls ``on_answer(value)`` (``None`` = "I will
not answer", for sampling and roots, MRTR-C8), and the flow driver sends the retry from there.
A test or an nbval run presses the same buttons with ``button.click()``.

The ``text/plain`` form of each widget describes it in words, so a stored notebook reads well
where widgets do not render (GitHub), and nbval compares something meaningful.
"""

from __future__ import annotations

import html
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import ipywidgets as w

OnAnswer = Callable[[dict[str, Any] | None], None]

ERROR_STYLE = "color:#b00020"
MUTED_STYLE = "color:#555"


def esc(text: Any) -> str:
    return html.escape(str(text))


def asker_line(asker: str | None, key: str | None, message: str) -> str:
    """ELIC-15: say which server is asking, and why."""
    who = esc(asker or "The server")
    about = f" <code>{esc(key)}</code>" if key else ""
    return f"<b>{who}</b> asks{about}: {esc(message)}"


class AnswerWidget(ABC):
    """Base class: a container widget, buttons that can be pressed once, a status line."""

    css_class = "mrtr-answer"

    def __init__(self, *, on_answer: OnAnswer | None = None) -> None:
        self.on_answer = on_answer
        self.answered = False
        self.answer: dict[str, Any] | None = None
        self.status = w.HTML("")
        self.status.add_class("mrtr-answer-status")
        self.buttons: list[w.Button] = []
        self.widget = w.VBox([])
        self.widget.add_class(self.css_class)
        self.widget.add_class("mrtr-answer")

    def _button(self, label: str, style: str, handler: Callable[[], None]) -> w.Button:
        # Wide enough for its label: a truncated "Go to the p…" helps nobody.
        width = "auto" if len(label) > 16 else None
        button = w.Button(description=label, button_style=style, layout=w.Layout(width=width))
        button.on_click(lambda _b: handler())
        self.buttons.append(button)
        return button

    def _finish(self, answer: dict[str, Any] | None, note: str) -> None:
        """Record the answer once, lock the buttons, hand the answer on."""
        self.answered = True
        self.answer = answer
        for button in self.buttons:
            button.disabled = True
        self.status.value = f"<span style='{MUTED_STYLE}'>{esc(note)}</span>"
        if self.on_answer is not None:
            self.on_answer(answer)

    @abstractmethod
    def describe(self) -> str:
        """The widget in words: its ``text/plain`` form."""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.describe()
        return bundle
