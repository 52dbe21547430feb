"""``ElicitationForm``: a form-mode ``elicitation/create`` request as ipywidgets.

The widgets only render the fields of a ``FormSpec`` and collect raw values; the form engine
(``mrtr_kit.forms``) decides what is valid and builds the ``ElicitResult``. Accept checks the
answer first and, when it does not fit, shows each problem beside its field and sends nothing
(ELIC-14); Decline and Cancel always answer (ELIC-15: the user must be able to refuse).

For tests and nbval, ``form.fill(login="ada").accept()`` presses the same Accept button a
person would press (``button.click()`` runs the kernel-side handler).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

import ipywidgets as w

from mrtr_course.widgets.answer_widget import (
    ERROR_STYLE,
    MUTED_STYLE,
    AnswerWidget,
    OnAnswer,
    asker_line,
    esc,
)
from mrtr_kit.forms import Action, FieldSpec, FormOutcome, FormSpec, SchemaOutsideSubset
from mrtr_kit.protocol.models import ElicitRequestFormParams

NO_CHOICE = ""  # the Dropdown value of "— choose —"; parsed as "not answered"
INPUT_WIDTH = "20em"


def css_name(name: str) -> str:
    """A property name as a CSS class suffix (browser tests select fields by it)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


class FieldWidget:
    """One field: its label, its input widget(s) and the place its problem is shown."""

    def __init__(self, spec: FieldSpec) -> None:
        self.spec = spec
        mark = " <span style='color:#b00020'>*</span>" if spec.required else ""
        hint = f"<span style='{MUTED_STYLE}'>— {esc(spec.hint())}</span>"
        if spec.kind == "date":
            # The picker shows the date in the browser's own format (mm/dd/yyyy in en-US), so
            # say so, and preview the exact text that will be sent.
            hint = (
                f"<span style='{MUTED_STYLE}'>— your browser shows the date in its own format; "
                "it is sent as YYYY-MM-DD</span>"
            )
        label = f"<b>{esc(spec.title)}</b>{mark} {hint}"
        if spec.description:
            label += f"<br><small>{esc(spec.description)}</small>"
        self.label = w.HTML(label)
        self.error = w.HTML("")
        self.error.add_class("mrtr-field-error")
        self.checkboxes: list[w.Checkbox] = []
        self.input = self._make_input()
        row: list[w.Widget] = [self.input]
        self.preview: w.HTML | None = None
        if spec.kind == "date":
            self.preview = w.HTML("")
            self.preview.add_class("mrtr-date-preview")
            self.input.observe(lambda _change: self._show_preview(), names="value")
            self._show_preview()
            row.append(self.preview)
        self.box = w.VBox([self.label, w.HBox([*row, self.error])])
        self.box.add_class("mrtr-field")
        self.box.add_class(f"mrtr-field-{css_name(spec.name)}")

    def _make_input(self) -> w.Widget:
        spec, initial = self.spec, self.spec.initial()
        layout = w.Layout(width=INPUT_WIDTH)
        if spec.kind == "boolean":
            return w.Checkbox(value=initial, description="yes", indent=False)
        if spec.kind == "date":
            return w.DatePicker(value=initial or None, layout=layout)
        if spec.kind == "choice":
            options = [(c.label, c.value) for c in spec.choices]
            if not spec.required:
                options.insert(0, ("— none —", NO_CHOICE))
            elif not spec.has_default:
                options.insert(0, ("— choose —", NO_CHOICE))
            return w.Dropdown(options=options, value=initial or NO_CHOICE, layout=layout)
        if spec.kind == "choices":
            for choice in spec.choices:
                box = w.Checkbox(value=choice.value in initial, description=choice.label)
                box.indent = False
                box.add_class(f"mrtr-choice-{css_name(choice.value)}")
                self.checkboxes.append(box)
            return w.VBox(self.checkboxes)
        return w.Text(value=initial, placeholder=spec.hint(), layout=layout)

    def _show_preview(self) -> None:
        assert self.preview is not None
        value = self.input.value  # type: ignore[attr-defined]
        text = (
            f"will be sent as <code>{esc(value.isoformat())}</code>"
            if isinstance(value, dt.date)
            else "nothing chosen yet"
        )
        self.preview.value = f"<span style='{MUTED_STYLE}'>{text}</span>"

    def get(self) -> Any:
        if self.spec.kind == "choices":
            return [
                c.value
                for c, box in zip(self.spec.choices, self.checkboxes, strict=True)
                if box.value
            ]
        return self.input.value  # type: ignore[attr-defined]

    def set(self, raw: Any) -> None:
        kind = self.spec.kind
        if kind == "choices":
            wanted = set(raw)
            unknown = wanted - {c.value for c in self.spec.choices}
            if unknown:
                raise ValueError(f"{self.spec.name}: {sorted(unknown)} are not among the choices")
            for choice, box in zip(self.spec.choices, self.checkboxes, strict=True):
                box.value = choice.value in wanted
        elif kind == "date":
            self.input.value = dt.date.fromisoformat(raw) if isinstance(raw, str) else raw  # type: ignore[attr-defined]
        elif kind == "choice":
            self.input.value = NO_CHOICE if raw is None else raw  # type: ignore[attr-defined]
        elif kind in ("integer", "number") and not isinstance(raw, str):
            self.input.value = str(raw)  # type: ignore[attr-defined]
        else:
            self.input.value = raw  # type: ignore[attr-defined]

    def show_problem(self, problem: str | None) -> None:
        self.error.value = f"<span style='{ERROR_STYLE}'>⚠ {esc(problem)}</span>" if problem else ""


class NoSuchField(KeyError):
    """``fill`` named a field the form does not have; printed as a sentence, not a repr."""

    def __str__(self) -> str:
        return str(self.args[0])


class ElicitationForm(AnswerWidget):
    """A form for one form-mode elicitation; answers once, through ``on_answer``."""

    css_class = "mrtr-form"

    def __init__(
        self,
        params: ElicitRequestFormParams | Mapping[str, Any],
        *,
        asker: str | None = None,
        key: str | None = None,
        on_answer: OnAnswer | None = None,
    ) -> None:
        super().__init__(on_answer=on_answer)
        if not isinstance(params, ElicitRequestFormParams):
            params = ElicitRequestFormParams.model_validate(params)
        self.params = params
        self.asker, self.key = asker, key
        self.outcome: FormOutcome | None = None
        self.fields: dict[str, FieldWidget] = {}
        header = w.HTML(asker_line(asker, key, params.message))
        try:
            self.spec: FormSpec | None = FormSpec.from_schema(
                params.requested_schema, params.message
            )
            self.schema_problem: str | None = None
        except SchemaOutsideSubset as exc:
            # ELIC-5 (KIT): a schema outside the subset is the server's error. Say so plainly
            # instead of rendering a form that could not hold a valid answer.
            self.spec, self.schema_problem = None, str(exc)
            self.status.value = (
                f"<span style='{ERROR_STYLE}'>This form cannot be shown: {esc(exc)}. "
                "Only flat forms of strings, numbers, booleans and choices are allowed "
                "(form-mode subset).</span>"
            )
            self.widget.children = (header, self.status)
            return
        self.fields = {spec.name: FieldWidget(spec) for spec in self.spec.fields}
        self.accept_button = self._button("Accept", "success", lambda: self._press("accept"))
        self.decline_button = self._button("Decline", "warning", lambda: self._press("decline"))
        self.cancel_button = self._button("Cancel", "", lambda: self._press("cancel"))
        self.widget.children = (
            header,
            *(f.box for f in self.fields.values()),
            w.HBox(self.buttons),
            self.status,
        )

    # -- the programmatic path (tests, nbval, "show me" cells) --------------------------------

    def fill(self, **values: Any) -> ElicitationForm:
        """Set fields as a person would type them; unknown names raise ``NoSuchField``."""
        for name, raw in values.items():
            if name not in self.fields:
                # Most often a learner answered an earlier form of the call by hand, so the
                # call moved on to this question: say so, and what to do (issue 19).
                raise NoSuchField(
                    f"no field {name!r} in this form: it asks {self.key or 'this'!r} "
                    f"({self.params.message!r}) with the fields {list(self.fields)}. If you "
                    "answered an earlier form of this call by hand, the call has moved on to "
                    "this question: answer it here, or re-run the cell that started the call "
                    "to begin a new one."
                )
            self.fields[name].set(raw)
        return self

    def values(self) -> dict[str, Any]:
        return {name: f.get() for name, f in self.fields.items()}

    def accept(self) -> FormOutcome | None:
        self._require_form().accept_button.click()
        return self.outcome

    def decline(self) -> FormOutcome | None:
        self._require_form().decline_button.click()
        return self.outcome

    def cancel(self) -> FormOutcome | None:
        self._require_form().cancel_button.click()
        return self.outcome

    def _require_form(self) -> ElicitationForm:
        if self.spec is None:
            raise RuntimeError(f"this form cannot be shown: {self.schema_problem}")
        return self

    # -- the click handler ------------------------------------------------------------------

    def _press(self, action: Action) -> None:
        if self.answered or self.spec is None:
            return
        outcome = self.spec.respond(action, self.values())
        self.outcome = outcome
        for name, f in self.fields.items():
            f.show_problem(outcome.problems.get(name))
        if not outcome.ok:
            count = len(outcome.problems)
            self.status.value = (
                f"<span style='{ERROR_STYLE}'>Nothing was sent: {count} field"
                f"{'s' if count != 1 else ''} to fix.</span>"
            )
            return
        wire = outcome.to_wire()
        self._finish(wire, f"Sent: {action}")

    def describe(self) -> str:
        lines = [f"{self.asker or 'The server'} asks" + (f" ({self.key})" if self.key else "")]
        lines[0] += f": {self.params.message}"
        if self.spec is None:
            lines.append(f"  This form cannot be shown: {self.schema_problem}")
            return "\n".join(lines)
        lines.append(self.spec.describe(self.values()))
        if self.answered:
            lines.append(f"  answered: {self.answer}")
        else:
            lines.append("  [Accept] [Decline] [Cancel]   (* = required)")
        return "\n".join(lines)
