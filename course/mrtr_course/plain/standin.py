"""A local stand-in for the client's language model, for the deprecated sampling lesson.

It is **not an LLM**: a few lines of string handling that draft a reply so the learner can
approve or edit it, as a real client would (SAMP-5), with no API key and no network
(docs/architecture.md §4). It honours ``maxTokens`` the only way a word-counting stand-in can
(SAMP-2).
"""

from __future__ import annotations

import re
from collections import Counter

from mrtr_kit.protocol.models import (
    CreateMessageRequestParams,
    CreateMessageResult,
    SamplingMessage,
    TextContent,
)

STAND_IN_MODEL = "kit-stand-in (not an LLM)"
_DAY = re.compile(r"(?P<city>[A-Z][\w .'-]*): (?P<temp>-?\d+) °[CF], (?P<sky>[a-z ]+)")


def _text_of(message: SamplingMessage) -> str:
    blocks = message.content if isinstance(message.content, list) else [message.content]
    return " ".join(b.text for b in blocks if isinstance(b, TextContent))


def limit_tokens(text: str, max_tokens: int) -> str:
    """At most ``max_tokens`` words (the stand-in's idea of a token)."""
    words = text.split()
    return text if len(words) <= max_tokens else " ".join(words[:max_tokens]) + " …"


def draft_reply(params: CreateMessageRequestParams) -> str:
    """A deterministic draft: a one-line forecast summary, or a plain acknowledgement."""
    prompt = " ".join(_text_of(m) for m in params.messages if m.role == "user")
    days = [m.groupdict() for m in _DAY.finditer(prompt)]
    if days:
        temps = [int(d["temp"]) for d in days]
        sky = Counter(d["sky"].strip() for d in days).most_common(1)[0][0]
        unit = "°F" if "°F" in prompt else "°C"
        text = (
            f"{days[0]['city']}: mostly {sky}, between {min(temps)} and "
            f"{max(temps)} {unit} over the next {len(days)} days."
        )
    else:
        text = f"(stand-in reply) I read {len(prompt.split())} words and have nothing to add."
    return limit_tokens(text, params.max_tokens)


def stand_in_result(text: str) -> CreateMessageResult:
    """The ``inputResponses`` value for an approved (possibly edited) reply (SAMP-1)."""
    return CreateMessageResult(
        role="assistant",
        content=TextContent(text=text),
        model=STAND_IN_MODEL,
        stop_reason="endTurn",
    )
