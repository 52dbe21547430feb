"""Answering form elicitations in a terminal: the client side of the ``demo`` command.

``ConsoleForm`` is a form-elicitation handler for ``McpClient``: it shows who is asking and
why (ELIC-15), offers accept / decline / cancel, then asks field by field from the
``requestedSchema``, saying for each field whether it is required and what fits, with the
defaults pre-filled (ELIC-3), checking each value before it is sent (ELIC-14). It only renders:
the fields, their hints, the parsing of what is typed, the checks and the ``ElicitResult``
come from the form engine (``mrtr_kit.forms``), the same as the notebook's widgets use. The user
reviews the answer before it is sent and may edit it; editing offers each previous answer,
which Enter keeps (ELIC-15). It reads from a TTY with ``input()``; with piped stdin it reads
one line per question and echoes it, so a script or a test can answer for the user. End of
input cancels.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from mrtr_kit.client import AnswerContext, ElicitResult
from mrtr_kit.forms import MISSING, FieldSpec, FormSpec
from mrtr_kit.protocol.elicitation import explain
from mrtr_kit.protocol.models import ElicitRequestFormParams

ReadLine = Callable[[str], str]  # prompt -> the line typed, without newline; EOFError at end


def stdin_reader(stdin: TextIO | None = None, stdout: TextIO | None = None) -> ReadLine:
    """``input()`` on a terminal; otherwise read one line from the pipe and echo it."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if stdin.isatty():
        return input

    def read(prompt: str) -> str:
        stdout.write(prompt)
        line = stdin.readline()
        if not line:
            stdout.write("\n")
            raise EOFError
        line = line.rstrip("\r\n")
        stdout.write(line + "\n")  # echo, so the transcript reads like a session
        return line

    return read


def _shown(value: Any) -> str:
    """A value as a person would type it: text bare, a multi-select comma-separated."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return json.dumps(value)


class ConsoleForm:
    """A form-elicitation handler that asks in the terminal."""

    def __init__(self, read: ReadLine | None = None, write: Callable[[str], Any] = print) -> None:
        self.read = read or stdin_reader()
        self.write = write

    def __call__(self, params: ElicitRequestFormParams, ctx: AnswerContext) -> ElicitResult:
        server = (ctx.server_info or {}).get("name", "the server")  # ELIC-15: who asks
        self.write(f"\n{server} asks ({ctx.key!r}): {params.message}")
        # The client has checked the schema against the form subset (ELIC-5) before this runs.
        form = FormSpec.from_schema(params.requested_schema, params.message)
        try:
            action = self._choose("Answer? [a]ccept, [d]ecline, [c]ancel (default a): ", "adc")
            content: dict[str, Any] | None = None
            while action == "a":
                if content is not None:
                    self.write("  editing: Enter keeps the answer in [brackets]")
                content = self._fill(form, content)
                # ELIC-15: the user reviews the answer, and may edit it, before it is sent.
                self.write(f"  answer: {json.dumps(content, ensure_ascii=False)}")
                action = self._choose("Send it? [s]end, [e]dit, [c]ancel (default s): ", "sec")
                if action == "s":
                    outcome = form.accept(content)  # the engine's last check (ELIC-14)
                    if outcome.result is not None:
                        return outcome.result
                    self.write(f"    {explain(outcome.problems)}")
                    action = "e"
                if action == "e":
                    action = "a"
            return ElicitResult(action="decline" if action == "d" else "cancel")
        except EOFError:
            return ElicitResult(action="cancel")  # no more input: dismissed (ELIC-6)

    def _choose(self, prompt: str, letters: str) -> str:
        """One of ``letters`` (by first letter; empty = the first one), asked until valid."""
        while True:
            choice = self.read(prompt).strip().lower()[:1] or letters[0]
            if choice in letters:
                return choice
            self.write(f"    please type one of: {', '.join(letters)}")

    def _fill(self, form: FormSpec, previous: dict[str, Any] | None = None) -> dict[str, Any]:
        content: dict[str, Any] = {}
        for field in form.fields:
            value = self._ask(field, previous)
            if value is not MISSING:
                content[field.name] = value
        return content

    def _ask(self, field: FieldSpec, previous: dict[str, Any] | None = None) -> Any:
        """One field's typed value, asked until it fits (ELIC-14); ``MISSING`` if left out."""
        if field.choices:
            listing = ", ".join(f"{n}) {c.label}" for n, c in enumerate(field.choices, 1))
            many = " (several, comma-separated)" if field.kind == "choices" else ""
            self.write(f"  choices{many}: {listing}")
        needs = "required" if field.required else "optional"
        label = f"{field.schema.get('title', field.name)} ({needs}; {field.hint()})"
        if field.description:
            self.write(f"  {field.description}")
        # Enter gives: the previous answer when editing, else the schema's default (ELIC-3).
        if previous is not None and field.name in previous:
            keep, has_keep = previous[field.name], True
        elif field.has_default:
            keep, has_keep = field.default, True
        else:
            keep, has_keep = MISSING, False
        shown = f" [{_shown(keep)}]" if has_keep else ""
        while True:
            text = self.read(f"  {label}{shown}: ").strip()
            if not text and has_keep:
                return keep
            value, problem = field.parse_text(text)
            problem = problem or field.problem(value)
            if problem is None:
                return value
            # Nothing typed: the engine says "is required"; a terminal says it as a sentence.
            self.write(f"    {'this field is required' if not text else problem}")
