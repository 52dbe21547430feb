"""JSON on the wire, both ways, with explicit limits (docs/architecture.md §6, CORE-1).
Pure: no I/O.

``decode_body(data)`` turns one request body into a JSON value, or raises ``McpError`` -32700
(HTTP 400). It accepts I-JSON (RFC 7493: the interoperable subset of JSON) within the kit's
limits, and refuses, each with its own message:

============================================  ================================================
refused                                        why
============================================  ================================================
not UTF-8: invalid bytes, a byte-order mark,   CORE-1 ("UTF-8 encoded"); RFC 8259 §8.1 forbids
UTF-16 or UTF-32, encoded surrogates           the BOM and other encodings between systems
nesting deeper than ``MAX_DEPTH`` (64)         Python's parser recurses and would hit its
                                               recursion limit (a crash, not an answer); so do
                                               the validators and encoders after it
an integer literal of more than                converting decimal text to an int costs time
``MAX_INT_DIGITS`` (100) digits                that grows faster than its length; Python itself
                                               refuses 4,300 digits with a ValueError
``NaN``, ``Infinity``, ``-Infinity``           not JSON (RFC 8259 §6); Python accepts them
a number that overflows a double (``1e400``)   it would become ``inf``, which JSON cannot carry
                                               back out (I-JSON §2.2)
a lone surrogate escape (``"\\ud800"``)        I-JSON §2.1; it has no UTF-8 encoding, so any
                                               echo of it (the id, an error message, a
                                               progress token) could not be sent
a key twice in one object                      I-JSON §2.3; parsers differ on which one wins,
                                               so a proxy and this server could read different
                                               methods or names
============================================  ================================================

The body-size cap is not here: it must be enforced while reading, before there are bytes
to decode (``server/http.py``).

**One code for all of them: -32700 Parse error.** The decoder's job is to turn bytes into a
value the server can handle; whatever it cannot turn into such a value did not parse, by our
rules. -32600 Invalid Request is kept for a value that decoded but is not a JSON-RPC request
(a batch, a wrong ``jsonrpc``, a null id), which ``server.core.parse_message`` decides. A body
that did not decode has no readable id, so the error carries none (§2.1).

The limits are generous for MCP: real messages nest less than 15 deep, and 100 digits hold
any id or count (2**256 has 78). 64 levels keep every recursive step after decoding
(pydantic, jsonschema, the canonical JSON of ``request_digest``, encoding the reply) far
inside Python's recursion limit of 1,000 frames.

``encode_message(message)`` is the other way: single-line UTF-8 JSON, or ``Unencodable`` for
anything a peer could not decode (NaN, a lone surrogate, a non-JSON type, an integer too long
to print). After ``decode_body``, nothing from a request can cause that, so the caller treats
it as a server bug (-32603).
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

from . import errors

MAX_DEPTH = 64
MAX_INT_DIGITS = 100
# The largest message read from a peer: an HTTP request body, a stdio line (docs/architecture.md
# §6). 1 MB is far more than any MCP request needs (a tools/call with a large argument is
# kilobytes).
MAX_MESSAGE_BYTES = 1_000_000

_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
# A string from its opening quote to its closing quote, or to the end of the text when it is
# unterminated (then the JSON is invalid anyway). Possessive, so it never backtracks: linear.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.?+)*+"?+', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENERS = frozenset(b"[{")
# A \uD800-\uDFFF escape. It may be half of a valid pair: only a hint to look closer.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # after decoding, a pair is one character


class _Refused(ValueError):
    """Raised from inside json.loads by the hooks below; becomes -32700."""


def decode_body(
    data: bytes, *, max_depth: int = MAX_DEPTH, max_int_digits: int = MAX_INT_DIGITS
) -> Any:
    """The JSON value of one request body, or ``McpError`` -32700 (see the module docstring)."""
    if data.startswith(_BOMS) or b"\x00" in data[:4]:
        # RFC 8259 §8.1: JSON between systems is UTF-8 without a BOM; NUL in the first four
        # bytes is how a UTF-16 or UTF-32 text begins.
        raise errors.parse_error("the body must be UTF-8 without a byte-order mark (CORE-1)")
    try:
        text = data.decode("utf-8")  # strict: invalid bytes and encoded surrogates fail here
    except UnicodeDecodeError as exc:
        detail = f"the body is not valid UTF-8 at byte {exc.start} (CORE-1)"
        raise errors.parse_error(detail) from None
    # Nesting cannot be deeper than the number of brackets that open: most bodies have far
    # fewer than ``max_depth`` of them, and need no closer look. Buys ~20 us a body (~3% of
    # the server's CPU per two-round flow, benchmarks/bench_flows.py, 2026-12-03).
    openers = data.count(b"{") + data.count(b"[")
    if openers > max_depth and nesting_depth(data, stop_after=max_depth) > max_depth:
        raise errors.parse_error(f"JSON nested more than {max_depth} deep")

    try:
        value = _decoder(max_int_digits).decode(text)
    except json.JSONDecodeError as exc:
        raise errors.parse_error(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except _Refused as exc:
        raise errors.parse_error(str(exc)) from None
    # Strict UTF-8 decoding let no surrogate through, so only a \uD8xx-style escape can have
    # made one: without such an escape there is nothing to walk (~20 us a body, ~3%, as above).
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise errors.parse_error("a string holds a lone surrogate escape, which UTF-8 cannot carry")
    return value


@functools.cache  # one decoder per digit limit, not one per body (json.loads shares its own)
def _decoder(max_int_digits: int) -> json.JSONDecoder:
    """The decoder with the hooks below, for one digit limit."""

    def bounded_int(literal: str) -> int:
        if len(literal.lstrip("-")) > max_int_digits:
            raise _Refused(f"an integer literal has more than {max_int_digits} digits")
        return int(literal)

    return json.JSONDecoder(
        parse_int=bounded_int,
        parse_float=_finite_float,
        parse_constant=_no_constant,
        object_pairs_hook=_unique_keys,
    )


def nesting_depth(data: bytes, *, stop_after: int | None = None) -> int:
    """How deep ``[`` and ``{`` nest in ``data``, ignoring brackets inside strings.

    Linear in the length of ``data`` and never recursive, so it is safe on any input; it stops
    counting once the depth passes ``stop_after``. Meant to run before ``json.loads``.
    """
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        depth += 1 if byte in _OPENERS else -1
        if depth > deepest:
            deepest = depth
            if stop_after is not None and deepest > stop_after:
                break
    return deepest


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _Refused("a number is too large for a double (it would be infinite)")
    return value


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not JSON (RFC 8259)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Refused(f"the key {key[:40]!a} appears twice in one object")
        obj[key] = value
    return obj


def _has_lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:  # iterative: the depth is bounded, but a loop needs no argument for that
        item = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# -- encoding ----------------------------------------------------------------------------------


class Unencodable(ValueError):
    """A message that has no JSON text in UTF-8 (see ``encode_message``)."""


# Built once: json.dumps with options builds a new encoder on every call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def encode_message(message: Any) -> bytes:
    """Single-line UTF-8 JSON (newline-delimited readers split on newlines, docs/conformance.md §3).

    Raises ``Unencodable`` rather than emit something a peer cannot read: NaN or infinity
    (``allow_nan=False``; Python would write the bare word ``NaN``), a lone surrogate, a value
    that is not JSON, a circular or too-deep structure, an integer too long to print.
    """
    try:
        return _ENCODER.encode(message).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
        raise Unencodable(f"{type(exc).__name__}: {str(exc)[:200]}") from None
