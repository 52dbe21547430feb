"""The Jupyter layer: MRTR input requests as forms, cards and panels, and the wire trace.

Plain-Python modules (no ipywidgets needed, tested without a kernel):

* ``trace_view`` — each round's request and response, what changed from the round before
  (``round_changes``, ``RoundDiff``), and a Mermaid sequence diagram;
* ``proxy`` — the address a learner's browser can open for a page served in the kernel
  (loopback locally, Jupyter's proxy on JupyterHub and Binder);
* ``urlinfo`` — what a URL-mode card must tell the user about a link (ELIC-13);
* ``standin`` — the local stand-in "model" that drafts sampling answers (not an LLM).

``FormSpec``, ``FieldSpec`` and ``FormOutcome`` come from the form engine, ``mrtr_kit.forms``
(``requestedSchema`` -> fields -> parse -> validate -> ``ElicitResult``), which the widgets and
the terminal form only render.

Widget modules (import ipywidgets): ``answer_widget`` (what they share), ``form_widgets``
(``ElicitationForm``), ``url_card`` (``UrlCard``), ``panels`` (``SamplingPanel``,
``RootsPanel``) and ``flow`` (``CallFlow``, the non-blocking driver: a button's click sends the
retry, nothing ever waits in a cell; ``widget_client`` and ``start_tool_call`` /
``start_prompt`` / ``start_resource``), ``round_view`` (``RoundDiffView``), ``quiz``
(``show_quiz``, the self-checks; questions in ``mrtr_kit.lessons.quizzes``) and
``elicit_callbacks`` (the kit's forms answering the official SDK's and FastMCP's clients).

The names below are loaded on first use, so ``import mrtr_kit.jupyter`` never needs ipywidgets.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "FormSpec": "..forms",
    "FieldSpec": "..forms",
    "FormOutcome": "..forms",
    "TraceView": ".trace_view",
    "Mermaid": ".trace_view",
    "sequence_diagram": ".trace_view",
    "diagram": ".trace_view",
    "short_state": ".trace_view",
    "wire_json": ".trace_view",
    "result_text": ".trace_view",
    "RoundDiff": ".trace_view",
    "round_changes": ".trace_view",
    "RoundDiffView": ".round_view",
    "show_quiz": ".quiz",
    "sdk_elicitation_callback": ".elicit_callbacks",
    "fastmcp_elicitation_handler": ".elicit_callbacks",
    "ElicitationForm": ".form_widgets",
    "UrlCard": ".url_card",
    "SamplingPanel": ".panels",
    "RootsPanel": ".panels",
    "CallFlow": ".flow",
    "AnsweredByWidgets": ".flow",
    "widget_client": ".flow",
    "start_tool_call": ".flow",
    "start_prompt": ".flow",
    "start_resource": ".flow",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mrtr_kit.jupyter' has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
