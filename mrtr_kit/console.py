"""Answering form elicitations in a terminal: the client side of the ``demo`` command.

``ConsoleForm`` is a form-elicitation handler for ``McpClient``: it shows who is asking and
why (ELIC-15), offers accept / decline / cancel, then asks field by field from the
``requestedSchema``, saying for each field whether it is required and what fits (the same
hints as the notebook's forms, from ``jupyter.formspec``, which needs no widgets), with the
defaults pre-filled (ELIC-3), checking each value before it is sent (ELIC-14). The user
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

from .client import AnswerContext, ElicitResult
from .jupyter.formspec import FormSpec, SchemaOutsideSubset
from .protocol.elicitation import choice_options, validate_value
from .protocol.models import ElicitRequestFormParams

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


def _convert(prop: dict[str, Any], text: str, options: list[tuple[str, str]]) -> Any:
    """The typed value of ``text`` for ``prop``; ValueError if it cannot be one."""
    kind = prop.get("type")
    if kind in ("integer", "number"):
        try:
            return int(text) if kind == "integer" else float(text)
        except ValueError:
            raise ValueError(
                "must be a number" if kind == "number" else "must be a whole number"
            ) from None
    if kind == "boolean":
        lowered = text.lower()
        if lowered in ("y", "yes", "true"):
            return True
        if lowered in ("n", "no", "false"):
            return False
        raise ValueError("answer y or n")

    def pick(token: str) -> str:  # an option by its number or its value
        token = token.strip()
        if token.isdigit() and 1 <= int(token) <= len(options):
            return options[int(token) - 1][0]
        return token

    if kind == "array":
        return [pick(t) for t in text.split(",") if t.strip()]
    return pick(text) if options else text


class ConsoleForm:
    """A form-elicitation handler that asks in the terminal."""

    def __init__(self, read: ReadLine | None = None, write: Callable[[str], Any] = print) -> None:
        self.read = read or stdin_reader()
        self.write = write

    def __call__(self, params: ElicitRequestFormParams, ctx: AnswerContext) -> ElicitResult:
        server = (ctx.server_info or {}).get("name", "the server")  # ELIC-15: who asks
        self.write(f"\n{server} asks ({ctx.key!r}): {params.message}")
        try:
            action = self._choose("Answer? [a]ccept, [d]ecline, [c]ancel (default a): ", "adc")
            content: dict[str, Any] | None = None
            while action == "a":
                if content is not None:
                    self.write("  editing: Enter keeps the answer in [brackets]")
                content = self._fill(params.requested_schema, content)
                # ELIC-15: the user reviews the answer, and may edit it, before it is sent.
                self.write(f"  answer: {json.dumps(content, ensure_ascii=False)}")
                action = self._choose("Send it? [s]end, [e]dit, [c]ancel (default s): ", "sec")
                if action == "s":
                    return ElicitResult(action="accept", content=content)
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

    def _fill(
        self, schema: dict[str, Any], previous: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        required = set(schema.get("required", []))
        try:  # the same "what fits" hints as the notebook's forms
            hints = {f.name: f.hint() for f in FormSpec.from_schema(schema).fields}
        except SchemaOutsideSubset:
            hints = {}
        content: dict[str, Any] = {}
        for name, prop in schema["properties"].items():
            value = self._ask(name, prop, name in required, hints.get(name), previous)
            if value is not None:
                content[name] = value
        return content

    def _ask(
        self,
        name: str,
        prop: dict[str, Any],
        required: bool,
        hint: str | None = None,
        previous: dict[str, Any] | None = None,
    ) -> Any:
        options = choice_options(prop) or []
        if options:
            listing = ", ".join(f"{n}) {label}" for n, (_, label) in enumerate(options, 1))
            many = " (several, comma-separated)" if prop.get("type") == "array" else ""
            self.write(f"  choices{many}: {listing}")
        needs = "required" if required else "optional"
        label = f"{prop.get('title', name)} ({needs}{'; ' + hint if hint else ''})"
        if "description" in prop:
            self.write(f"  {prop['description']}")
        # Enter gives: the previous answer when editing, else the schema's default (ELIC-3).
        if previous is not None and name in previous:
            keep, has_keep = previous[name], True
        elif "default" in prop:
            keep, has_keep = prop["default"], True
        else:
            keep, has_keep = None, False
        shown = f" [{_shown(keep)}]" if has_keep else ""
        while True:
            text = self.read(f"  {label}{shown}: ").strip()
            if not text:
                if has_keep:
                    return keep
                if not required:
                    return None
                self.write("    this field is required")
                continue
            try:
                value = _convert(prop, text, options)
            except ValueError as exc:
                self.write(f"    {exc}")
                continue
            problem = validate_value(prop, value)
            if problem is None:
                return value
            self.write(f"    {problem}")  # ELIC-14: check before sending
