"""Small helpers the example handlers share for form answers (digest §6.3, §9)."""

from __future__ import annotations


def explain(problems: dict[str, str]) -> str:
    """``{"party": "must be at most 12"}`` -> ``"party must be at most 12."`` for a re-ask."""
    parts = [f"{field} {problem}" if field else problem for field, problem in problems.items()]
    return "Please check your answer: " + "; ".join(parts) + "."
