"""Panels where the learner plays the client's side of the two DEPRECATED input requests.

Both ``sampling/createMessage`` and ``roots/list`` are deprecated in 2026-07-28 (SEP-2577);
they still travel exactly like elicitation under MRTR, which is why the lesson shows them.

* ``SamplingPanel``: the server's prompt, and a draft reply from a local stand-in model (not an
  LLM). The learner approves it, edits it first (SAMP-5: a human reviews what is sent), or
  refuses. A refusal sends nothing: there is no error slot, the client just does not retry
  (MRTR-C8, SAMP-6).
* ``RootsPanel``: candidate roots with checkboxes. Only ``file://`` URIs without ``..``
  segments are offered (ROOTS-1, ROOTS-3); the learner shares a selection or refuses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

import ipywidgets as w

from mrtr_course.plain.standin import STAND_IN_MODEL, draft_reply, limit_tokens, stand_in_result
from mrtr_course.widgets.answer_widget import (
    MUTED_STYLE,
    AnswerWidget,
    OnAnswer,
    asker_line,
    esc,
)
from mrtr_kit.protocol.models import CreateMessageRequestParams, ListRootsResult, Root, TextContent

DEPRECATED_NOTE = "Deprecated in 2026-07-28 (SEP-2577): shown because it still travels over MRTR."


def _prompt_text(params: CreateMessageRequestParams) -> str:
    lines = []
    if params.system_prompt:
        lines.append(f"system: {params.system_prompt}")
    for m in params.messages:
        blocks = m.content if isinstance(m.content, list) else [m.content]
        text = " ".join(b.text if isinstance(b, TextContent) else f"[{b.type}]" for b in blocks)
        lines.append(f"{m.role}: {text}")
    lines.append(f"maxTokens: {params.max_tokens}")
    return "\n".join(lines)


class SamplingPanel(AnswerWidget):
    """Approve, edit or refuse the stand-in model's reply to a sampling request."""

    css_class = "mrtr-sampling"

    def __init__(
        self,
        params: CreateMessageRequestParams | Mapping[str, Any],
        *,
        asker: str | None = None,
        key: str | None = None,
        on_answer: OnAnswer | None = None,
    ) -> None:
        super().__init__(on_answer=on_answer)
        if not isinstance(params, CreateMessageRequestParams):
            params = CreateMessageRequestParams.model_validate(params)
        self.params = params
        self.asker, self.key = asker, key
        self.reply = w.Textarea(value=draft_reply(params), layout=w.Layout(width="36em"))
        self.approve_button = self._button("Approve and send", "success", self._approve)
        self.refuse_button = self._button("Refuse", "warning", self._refuse)
        header = asker_line(asker, key, "a completion from your model")
        self.widget.children = (
            w.HTML(f"{header}<br><i style='{MUTED_STYLE}'>{esc(DEPRECATED_NOTE)}</i>"),
            w.HTML(f"<pre>{esc(_prompt_text(params))}</pre>"),
            w.HTML(f"Draft by <b>{esc(STAND_IN_MODEL)}</b>; edit it before sending if you like:"),
            self.reply,
            w.HBox(self.buttons),
            self.status,
        )

    def edit(self, text: str) -> SamplingPanel:
        self.reply.value = text
        return self

    def approve(self) -> None:
        self.approve_button.click()

    def refuse(self) -> None:
        self.refuse_button.click()

    def _approve(self) -> None:
        if self.answered:
            return
        text = limit_tokens(self.reply.value.strip(), self.params.max_tokens)  # SAMP-2
        self._finish(stand_in_result(text).to_wire(), "Sent the approved reply")

    def _refuse(self) -> None:
        if not self.answered:
            self._finish(None, "Refused: nothing is sent and the call stops here (MRTR-C8)")

    def describe(self) -> str:
        lines = [
            f"{self.asker or 'The server'} asks"
            + (f" ({self.key})" if self.key else "")
            + ": a completion from your model",
            f"  {DEPRECATED_NOTE}",
            *("  " + line for line in _prompt_text(self.params).splitlines()),
            f"  draft by {STAND_IN_MODEL}: {self.reply.value}",
        ]
        if self.answered:
            lines.append(f"  answered: {self.answer}")
        else:
            lines.append("  [Approve and send] [Refuse]")
        return "\n".join(lines)


def safe_root(root: Root) -> bool:
    """ROOTS-3: offer only plain ``file://`` directories, never paths that climb with ``..``."""
    parts = urlsplit(root.uri)
    segments = unquote(parts.path).split("/")
    return parts.scheme == "file" and ".." not in segments and "." not in segments


class RootsPanel(AnswerWidget):
    """Pick which of the candidate roots to share with the server, or refuse."""

    css_class = "mrtr-roots"

    def __init__(
        self,
        candidates: Sequence[Root | Mapping[str, Any]],
        *,
        asker: str | None = None,
        key: str | None = None,
        on_answer: OnAnswer | None = None,
    ) -> None:
        super().__init__(on_answer=on_answer)
        roots = [r if isinstance(r, Root) else Root.model_validate(r) for r in candidates]
        self.rejected = [r for r in roots if not safe_root(r)]
        self.roots = [r for r in roots if safe_root(r)]
        self.asker, self.key = asker, key
        self.boxes = [
            w.Checkbox(value=False, description=f"{r.name or r.uri} — {r.uri}", indent=False)
            for r in self.roots
        ]
        self.share_button = self._button("Share selected", "success", self._share)
        self.refuse_button = self._button("Refuse", "warning", self._refuse)
        header = asker_line(asker, key, "the folders (roots) you work in")
        parts: list[w.Widget] = [
            w.HTML(f"{header}<br><i style='{MUTED_STYLE}'>{esc(DEPRECATED_NOTE)}</i>"),
            *self.boxes,
        ]
        if self.rejected:
            names = ", ".join(r.uri for r in self.rejected)
            parts.append(w.HTML(f"<i style='{MUTED_STYLE}'>Not offered (unsafe): {esc(names)}</i>"))
        parts += [w.HBox(self.buttons), self.status]
        self.widget.children = tuple(parts)

    def select(self, *uris: str) -> RootsPanel:
        known = {r.uri for r in self.roots}
        unknown = set(uris) - known
        if unknown:
            raise ValueError(f"not among the offered roots: {sorted(unknown)}")
        for root, box in zip(self.roots, self.boxes, strict=True):
            box.value = root.uri in uris
        return self

    def share(self) -> None:
        self.share_button.click()

    def refuse(self) -> None:
        self.refuse_button.click()

    def _share(self) -> None:
        if self.answered:
            return
        chosen = [r for r, box in zip(self.roots, self.boxes, strict=True) if box.value]
        result = ListRootsResult(roots=chosen)
        self._finish(result.to_wire(), f"Shared {len(chosen)} root(s)")

    def _refuse(self) -> None:
        if not self.answered:
            self._finish(None, "Refused: nothing is sent and the call stops here (MRTR-C8)")

    def describe(self) -> str:
        lines = [
            f"{self.asker or 'The server'} asks"
            + (f" ({self.key})" if self.key else "")
            + ": the folders (roots) you work in",
            f"  {DEPRECATED_NOTE}",
        ]
        lines += [
            f"  [{'x' if box.value else ' '}] {r.name or r.uri} — {r.uri}"
            for r, box in zip(self.roots, self.boxes, strict=True)
        ]
        lines += [f"  not offered (unsafe): {r.uri}" for r in self.rejected]
        if self.answered:
            lines.append(f"  answered: {self.answer}")
        else:
            lines.append("  [Share selected] [Refuse]")
        return "\n".join(lines)
