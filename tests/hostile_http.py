"""Hostile requests for the two HTTP fuzzers, and the table their answers are judged by.

``tests/library/test_http_fuzz.py`` draws with hypothesis against the app in process;
``benchmarks/fuzz_http.py`` draws with a seeded ``random.Random`` against a real server process.
Both build a valid request, then break it with the pieces here, so they break requests the same
ways and hold the answers to the same rule (docs/architecture.md §6: never a 500, the right status
per code). The benchmark imports this module from ``tests/``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

# Which HTTP statuses each JSON-RPC code may come with (§2.6, KIT-HTTP-B, the adapter's limits;
# 401 is the authenticator's; 429 the legacy era's sessions bound, ``server/era2025_http.py``).
# A code not listed comes with 200.
STATUS_OF_CODE: dict[int, set[int]] = {
    -32700: {400},
    -32600: {400, 401, 403, 404, 408, 413, 429},
    -32601: {404},
    -32602: {200, 400},
    -32603: {200},
    -32020: {400},
    -32021: {400},
    -32022: {400},
}

# What a request may ask for; tools/call three times, as it is what most requests are.
METHODS = [
    "tools/call",
    "tools/call",
    "tools/call",
    "tools/list",
    "prompts/get",
    "prompts/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "server/discover",
    "completion/complete",
    "initialize",
    "ping",
    "no/such/method",
]

# JSON text no valid request holds (or, last, one that is fine), to put in a field's place.
HOSTILE_VALUES: list[bytes] = [
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"-1e999",
    b"9" * 5000,
    b"-" + b"9" * 101,
    b'"\\ud800"',
    b'"ab\\udfffcd"',
    b'{"\\udc00": 1}',
    b'["\\ud83d"]',
    b"[" * 65 + b"]" * 65,
    b"[" * 1000 + b"]" * 1000,
    b'{"a":' * 100 + b"1" + b"}" * 100,
    b'"\\u0000"',
    b'"\\ud83d\\ude00"',  # a valid pair: accepted
]

# A field's value while the message is JSON-encoded; ``with_hostile`` swaps in the raw bytes.
PLACEHOLDER = "\u2603hostile\u2603"


def with_hostile(body: bytes, value: bytes) -> bytes:
    """``body`` (JSON with ``PLACEHOLDER`` as some field's value) with ``value`` there instead."""
    return body.replace(json.dumps(PLACEHOLDER).encode(), value)


Damage = Literal["flip", "truncate", "insert"]


def damage(body: bytes, kind: Damage, at: int, *, bit: int = 0, insert: bytes = b"") -> bytes:
    """One byte-level break at offset ``at``: flip ``bit`` of that byte, cut there, or insert.

    A flip at or past the end changes nothing (there is no byte to flip)."""
    if kind == "flip":
        if at >= len(body):
            return body
        return body[:at] + bytes([body[at] ^ (1 << bit)]) + body[at + 1 :]
    if kind == "truncate":
        return body[:at]
    return body[:at] + insert + body[at:]


def strict_json(data: str | bytes) -> Any:
    """Parse an answer as JSON proper: NaN and Infinity are not JSON, so no answer may hold one."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} in a response")

    return json.loads(data, parse_constant=refuse)
