"""``UrlCard``: a URL-mode ``elicitation/create`` request as a card.

Under 2026-07-28 the flow is (ELIC-9): show the message and the full URL, get the user's
consent, open the page, and **at once** retry the original request with ``{"action":
"accept"}``. ``accept`` means "the user agreed to go", not "it is done": the server decides from
``requestState`` or its own store whether the step on the page is finished, and then completes
(it may block a while first) or asks again. So the card offers

* the full link with its host highlighted, and a warning for suspicious links (ELIC-13, from
  ``urlinfo.py``), before anything else;
* "Go to the page": the consent. It sends ``accept`` at once and only then shows the link that
  opens the page in a new browser tab. The kernel cannot open the learner's browser itself,
  so the learner's click on that link is the "open" step; the kit never opens or prefetches
  the URL (ELIC-13). Showing the link only after consent is the kit's choice (KIT);
* "Decline" and "Cancel" (ELIC-15).

When the server asks again for the same URL in the same call, the user has agreed already:
that card shows the link at once and offers "Retry now" instead — the manual retry control a
client should offer (ELIC-10) — beside Decline and Cancel.

When the call completes, ``conclude()`` shrinks the card to what was answered, so no stale
"not finished yet" message stays above the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as w

from mrtr_course.plain.urlinfo import UrlFacts, inspect_url
from mrtr_course.widgets.answer_widget import (
    ERROR_STYLE,
    MUTED_STYLE,
    AnswerWidget,
    OnAnswer,
    asker_line,
    esc,
)
from mrtr_kit.protocol.models import ElicitRequestURLParams, ElicitResult

GO_LABEL = "Go to the page"
RETRY_LABEL = "Retry now"


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
    return "<br>".join(lines)


def _open_link_html(facts: UrlFacts) -> str:
    return (
        f"<a href='{esc(facts.url)}' target='_blank' rel='noopener noreferrer' "
        "class='mrtr-url-open' style='color:#1565c0;text-decoration:underline'>"
        "Open the page in a new tab ↗</a>"
    )


class UrlCard(AnswerWidget):
    """A card for one URL-mode elicitation; answers once, through ``on_answer``.

    ``agreed``: the user already agreed to go to this very URL earlier in the same call (the
    server asked again), so the link is shown at once and the accept button is a manual retry.
    """

    css_class = "mrtr-url-card"

    def __init__(
        self,
        params: ElicitRequestURLParams | Mapping[str, Any],
        *,
        asker: str | None = None,
        key: str | None = None,
        note: str | None = None,
        agreed: bool = False,
        on_answer: OnAnswer | None = None,
    ) -> None:
        super().__init__(on_answer=on_answer)
        if not isinstance(params, ElicitRequestURLParams):
            params = ElicitRequestURLParams.model_validate(params)
        self.params = params
        self.asker, self.key, self.note = asker, key, note
        self.agreed = agreed
        self.concluded = False
        self.facts = inspect_url(params.url)
        if agreed:
            self.accept_button = self._button(RETRY_LABEL, "success", self._accept)
        else:
            self.accept_button = self._button(GO_LABEL, "success", self._accept)
        self.decline_button = self._button("Decline", "warning", lambda: self._refuse("decline"))
        self.cancel_button = self._button("Cancel", "", lambda: self._refuse("cancel"))
        if not self.facts.openable:
            self.accept_button.disabled = True  # nothing the user could open
        self.link = w.HTML(_open_link_html(self.facts) if agreed and self.facts.openable else "")
        self.link.add_class("mrtr-url-link")
        parts: list[w.Widget] = [w.HTML(asker_line(asker, key, params.message))]
        if note:
            parts.append(w.HTML(f"<span style='{MUTED_STYLE}'>{esc(note)}</span>"))
        parts.append(w.HTML(_url_html(self.facts)))
        if agreed:
            parts.append(w.HTML(f"<span style='{MUTED_STYLE}'>{esc(self._agreed_note())}</span>"))
        parts += [self.link, w.HBox(self.buttons), self.status]
        self.widget.children = tuple(parts)

    @staticmethod
    def _agreed_note() -> str:
        return (
            "You agreed to go to this page already. Finish there; then press "
            f"“{RETRY_LABEL}” to ask the server again (manual retry, ELIC-10)."
        )

    # -- the programmatic path (tests, nbval) ---------------------------------------------------

    def go(self) -> None:
        """Press "Go to the page" (consent: accept is sent at once, then the link appears)."""
        if self.agreed:
            raise RuntimeError(f"this card offers “{RETRY_LABEL}”: call retry()")
        self.accept_button.click()

    def retry(self) -> None:
        """Press "Retry now" (the manual retry of a card the user agreed to already)."""
        if not self.agreed:
            raise RuntimeError(f"this card asks for consent first: call go() ({GO_LABEL})")
        self.accept_button.click()

    def decline(self) -> None:
        self.decline_button.click()

    def cancel(self) -> None:
        self.cancel_button.click()

    # -- click handlers -------------------------------------------------------------------------

    def _accept(self) -> None:
        if self.answered:
            return
        if self.agreed:
            note = "Sent: accept again (manual retry)."
        else:
            note = "Sent: accept (you agreed to go). Now open the page and finish there."
            if self.facts.openable:  # never a link to a javascript:, file: or other URL
                self.link.value = _open_link_html(self.facts)
        # URL-mode accept carries no content (ELIC-7).
        self._finish(ElicitResult(action="accept").to_wire(), note)

    def _refuse(self, action: str) -> None:
        if not self.answered:
            self._finish(
                ElicitResult.model_validate({"action": action}).to_wire(), f"Sent: {action}"
            )

    def conclude(self) -> None:
        """The call is complete: keep only what was answered (no stale question, no buttons)."""
        self.concluded = True
        self.widget.children = (w.HTML(self._summary()),)

    def _summary(self) -> str:
        who = f"{self.asker or 'The server'} asked" + (f" ({self.key})" if self.key else "")
        action = (self.answer or {}).get("action", "nothing")
        went = (
            f" (you agreed to go to {self.facts.host or 'the page'})" if action == "accept" else ""
        )
        return f"{who} for a step on a web page. Answered: {action}{went}. The call is complete."

    def describe(self) -> str:
        if self.concluded:
            return self._summary()
        who = f"{self.asker or 'The server'} asks" + (f" ({self.key})" if self.key else "")
        lines = [f"{who}: {self.params.message}"]
        if self.note:
            lines.append(f"  {self.note}")
        lines.append(f"  Link: {self.facts.url}")
        lines.append(f"  It leads to: {self.facts.host or '?'}")
        lines += [f"  ⚠ {warning}" for warning in self.facts.warnings]
        if self.agreed:
            lines.append(f"  {self._agreed_note()}")
        if self.answered:
            lines.append(f"  answered: {self.answer}")
        else:
            first = RETRY_LABEL if self.agreed else GO_LABEL
            lines.append(f"  [{first}] [Decline] [Cancel]")
        return "\n".join(lines)
