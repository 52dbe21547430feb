"""``UrlCard``: a URL-mode ``elicitation/create`` request as a card.

Under 2026-07-28 the flow is (ELIC-9): show the message and the full URL, let the user open it
themselves, then retry the original request with ``{"action": "accept"}``. ``accept`` means
"I went there", not "it is done": the server checks its own records and either completes or
asks again. So the card offers

* a link the user clicks to open the page in a new browser tab — the click is the consent, the
  kit never opens or prefetches the URL itself (ELIC-13);
* "I have finished — retry" (accept), "Decline" and "Cancel" (ELIC-10, ELIC-15).

The host is highlighted and suspicious links get a warning (ELIC-13), from ``urlinfo.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as w

from ..protocol.models import ElicitRequestURLParams, ElicitResult
from .answer_widget import ERROR_STYLE, MUTED_STYLE, AnswerWidget, OnAnswer, asker_line, esc
from .urlinfo import UrlFacts, inspect_url


def _url_html(facts: UrlFacts) -> str:
    url = facts.url
    at = url.find(facts.host) if facts.host else -1
    if at < 0:
        shown = f"<code>{esc(url)}</code>"
    else:
        end = at + len(facts.host)
        shown = f"<code>{esc(url[:at])}<b><u>{esc(url[at:end])}</u></b>{esc(url[end:])}</code>"
    lines = [f"Link: {shown}", f"It leads to <b>{esc(facts.host or '?')}</b>."]
    lines += [f"<span style='{ERROR_STYLE}'>⚠ {esc(warning)}</span>" for warning in facts.warnings]
    if facts.openable:
        lines.append(
            f"<a href='{esc(url)}' target='_blank' rel='noopener noreferrer' "
            "class='mrtr-url-open' style='color:#1565c0;text-decoration:underline'>"
            "Open the page in a new tab ↗</a>"
        )
    return "<br>".join(lines)


class UrlCard(AnswerWidget):
    """A card for one URL-mode elicitation; answers once, through ``on_answer``."""

    css_class = "mrtr-url-card"

    def __init__(
        self,
        params: ElicitRequestURLParams | Mapping[str, Any],
        *,
        asker: str | None = None,
        key: str | None = None,
        note: str | None = None,
        on_answer: OnAnswer | None = None,
    ) -> None:
        super().__init__(on_answer=on_answer)
        if not isinstance(params, ElicitRequestURLParams):
            params = ElicitRequestURLParams.model_validate(params)
        self.params = params
        self.asker, self.key, self.note = asker, key, note
        self.facts = inspect_url(params.url)
        self.done_button = self._button("I have finished — retry", "success", self._done)
        self.decline_button = self._button("Decline", "warning", lambda: self._refuse("decline"))
        self.cancel_button = self._button("Cancel", "", lambda: self._refuse("cancel"))
        if not self.facts.openable:
            self.done_button.disabled = True  # nothing the user could have opened
        parts: list[w.Widget] = [w.HTML(asker_line(asker, key, params.message))]
        if note:
            parts.append(w.HTML(f"<span style='{MUTED_STYLE}'>{esc(note)}</span>"))
        parts += [w.HTML(_url_html(self.facts)), w.HBox(self.buttons), self.status]
        self.widget.children = tuple(parts)

    def done(self) -> None:
        """Press "I have finished — retry" (the programmatic path)."""
        self.done_button.click()

    def decline(self) -> None:
        self.decline_button.click()

    def cancel(self) -> None:
        self.cancel_button.click()

    def _done(self) -> None:
        if not self.answered:
            # URL-mode accept carries no content (ELIC-7).
            self._finish(ElicitResult(action="accept").to_wire(), "Sent: accept (retrying)")

    def _refuse(self, action: str) -> None:
        if not self.answered:
            self._finish(
                ElicitResult.model_validate({"action": action}).to_wire(), f"Sent: {action}"
            )

    def describe(self) -> str:
        who = f"{self.asker or 'The server'} asks" + (f" ({self.key})" if self.key else "")
        lines = [f"{who}: {self.params.message}"]
        if self.note:
            lines.append(f"  {self.note}")
        lines.append(f"  Link: {self.facts.url}")
        lines.append(f"  It leads to: {self.facts.host or '?'}")
        lines += [f"  ⚠ {warning}" for warning in self.facts.warnings]
        if self.answered:
            lines.append(f"  answered: {self.answer}")
        else:
            lines.append("  [Open the page ↗] [I have finished — retry] [Decline] [Cancel]")
        return "\n".join(lines)
