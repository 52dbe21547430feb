"""The ``Mcp-*`` request headers of 2026-07-28 (digest §3.2, §3.3), for both sides. Pure
functions, no I/O; the client builds headers with them, the server checks them.

* values (HTTP-9, HTTP-10): ``encode_value`` / ``param_value`` write a value, plain or as the
  ``=?base64?<base64 of UTF-8>?=`` sentinel; ``decode_value`` reads one back
* ``x-mcp-header`` annotations (HTTP-12, HTTP-13): ``annotated_properties`` and
  ``header_annotations`` find them and refuse invalid ones (the client drops such a tool,
  the server refuses to register it); ``checked_param_headers`` adds the server's own limit
* one request's headers (HTTP-4, HTTP-7, HTTP-11, HTTP-12): ``request_headers``
* the server's checks (HTTP-7, HTTP-8, HTTP-10, HTTP-14, HTTP-15): ``check_present`` and
  ``check_matches_body``, which raise -32020 (``errors.header_mismatch``)

``Host`` and ``Origin`` are not MCP headers: the HTTP edge reads them (``server.hosts``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from . import errors
from .constants import (
    HEADER_METHOD,
    HEADER_NAME,
    HEADER_PARAM_PREFIX,
    HEADER_PROTOCOL_VERSION,
    META_PROTOCOL_VERSION,
    MRTR_METHODS,
)

SENTINEL_START, SENTINEL_END = "=?base64?", "?="
MAX_SAFE_INTEGER = 2**53 - 1  # HTTP-13: integers must survive a JavaScript number
_DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


class UnencodableHeaderValue(ValueError):
    """A value that no ``Mcp-Name`` / ``Mcp-Param-*`` header can carry (HTTP-9, HTTP-13)."""


# --- HTTP-9 / HTTP-10: values ---------------------------------------------------------------


def _is_plain(value: str) -> bool:
    """What a sender may write verbatim: printable 0x20-0x7E, no leading or trailing space.

    HTTP-9 also lets a tab through, but the conformance suite expects tabs encoded
    (docs/conformance.md §7.4) and encoding is always safe, so a tab makes a value non-plain here.
    """
    printable = all(0x20 <= ord(ch) <= 0x7E for ch in value)
    return printable and value == value.strip(" ")


def _looks_encoded(value: str) -> bool:
    # Markers that overlap ("=?base64?=") count too: a sender encodes whatever might be read
    # as the sentinel.
    return value.startswith(SENTINEL_START) and value.endswith(SENTINEL_END)


# HTTP-9: what a receiver accepts: visible ASCII 0x21-0x7E plus space and tab.
_VALID_CHARS = re.compile(r"[ \t\x21-\x7e]*")


def _valid_chars(value: str) -> bool:
    return _VALID_CHARS.fullmatch(value) is not None  # a regex: one C call, not one per char


def encode_value(value: str) -> str:
    """``value`` as it goes into ``Mcp-Name`` or ``Mcp-Param-*`` (HTTP-9).

    Plain ASCII passes unchanged (``""`` stays an empty, present header). Anything else -
    non-ASCII, control characters, tab, CR/LF, leading/trailing space, or a plain value that
    itself looks like the sentinel - is sent as ``=?base64?<base64 of UTF-8>?=``.
    """
    if _is_plain(value) and not _looks_encoded(value):
        return value
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError:
        raise UnencodableHeaderValue(
            f"{value!r} holds a lone surrogate: it has no UTF-8 form"
        ) from None
    return SENTINEL_START + base64.b64encode(raw).decode("ascii") + SENTINEL_END


def param_value(value: Any) -> str | None:
    """An argument value as an ``Mcp-Param-*`` value; ``None`` means "send no header" (HTTP-12).

    Strings are encoded per HTTP-9, integers in decimal, booleans as ``true``/``false``.
    """
    if value is None:
        return None  # HTTP-12: absent or null -> no header
    if isinstance(value, bool):  # before int: True is an int in Python
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 42.0 in a JSON body is the integer 42
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise UnencodableHeaderValue(f"integer {value} is outside ±(2^53-1) (HTTP-13)")
        return str(value)
    if isinstance(value, str):
        return encode_value(value)
    raise UnencodableHeaderValue(
        f"a {type(value).__name__} cannot go into an Mcp-Param header; "
        "only strings, integers and booleans can (HTTP-9)"
    )


def decode_value(name: str, value: str) -> str:
    """The body-comparable value of a received ``Mcp-Name`` / ``Mcp-Param-*`` header (HTTP-9,
    HTTP-10); -32020 for invalid characters or an invalid sentinel."""
    value = value.strip(" \t")  # optional whitespace around a field value is not part of it
    if not _valid_chars(value):
        raise errors.header_mismatch(f"{name} header has characters outside visible ASCII")
    if _looks_encoded(value) and len(value) >= len(SENTINEL_START + SENTINEL_END):
        encoded = value[len(SENTINEL_START) : -len(SENTINEL_END)]
        try:
            if len(encoded) % 4:
                raise ValueError("bad padding")
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise errors.header_mismatch(f"{name} header has an invalid base64 value") from None
    return value  # "=?base64?abc" without the closing marker is a literal (HTTP-9)


# --- HTTP-12 / HTTP-13: x-mcp-header annotations --------------------------------------------

# A property path from the schema root, e.g. ("region",) or ("target", "region").
PropertyPath = tuple[str, ...]
# What a valid tool's annotations give: property path -> header suffix (``Mcp-Param-<suffix>``).
HeaderMap = dict[PropertyPath, str]

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_HEADER_TYPES = ("string", "integer", "boolean")
# JSON Schema keywords whose values are subschemas. An annotation found under any of them is
# not reachable "purely through properties" (HTTP-13). Data keywords (default, const, enum,
# examples) are never walked: a key named x-mcp-header inside data is not an annotation.
_SUBSCHEMA_KEYWORDS = frozenset(
    [
        "items",
        "prefixItems",
        "contains",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
    ]
)
_SUBSCHEMA_MAPS = frozenset(["$defs", "definitions", "patternProperties", "dependentSchemas"])


class InvalidHeaderAnnotation(ValueError):
    """A tool's ``x-mcp-header`` annotation breaks HTTP-13; ``str(exc)`` is the reason."""


def _check_header_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or name == "":
        raise InvalidHeaderAnnotation(f"{where}: x-mcp-header must be a non-empty string")
    bad = [ch for ch in name if ch not in _TCHAR]
    if bad:
        raise InvalidHeaderAnnotation(
            f"{where}: x-mcp-header {name!r} is not an HTTP token (bad character {bad[0]!r})"
        )
    return name


Found = list[tuple[PropertyPath | None, dict[str, Any]]]


def _walk(schema: Any, path: PropertyPath | None, found: Found) -> None:
    """Collect every annotated subschema with its property path; the path is ``None`` once
    the walk has gone through any keyword other than ``properties``."""
    if isinstance(schema, list):
        for item in schema:
            _walk(item, None, found)
        return
    if not isinstance(schema, dict):
        return
    if "x-mcp-header" in schema:
        found.append((path, schema))
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                _walk(sub, (*path, prop) if path is not None else None, found)
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                _walk(sub, None, found)
        elif key in _SUBSCHEMA_KEYWORDS:
            _walk(value, None, found)


def annotated_properties(input_schema: Any) -> dict[PropertyPath, tuple[str, str]]:
    """Property path -> (header suffix, JSON type) for every ``x-mcp-header`` in a tool's
    ``inputSchema``; raises ``InvalidHeaderAnnotation`` as ``header_annotations`` does."""
    found: Found = []
    _walk(input_schema, (), found)
    result: dict[PropertyPath, tuple[str, str]] = {}
    seen: dict[str, PropertyPath] = {}
    for path, prop in found:
        if not path:  # None (under items, anyOf, $ref target, ...) or the root itself
            raise InvalidHeaderAnnotation(
                "x-mcp-header must sit on a property reachable from the root through "
                "'properties' only"
            )
        where = "property " + ".".join(path)
        name = _check_header_name(prop["x-mcp-header"], where)
        kind = prop.get("type")
        if kind not in _HEADER_TYPES:
            raise InvalidHeaderAnnotation(
                f"{where}: x-mcp-header on type {kind!r}; only string, integer or boolean"
            )
        if name.lower() in seen:
            raise InvalidHeaderAnnotation(
                f"{where}: x-mcp-header {name!r} is used twice, also on property "
                f"{'.'.join(seen[name.lower()])} (names are case-insensitive)"
            )
        seen[name.lower()] = path
        result[path] = (name, kind)
    return result


def header_annotations(input_schema: Any) -> HeaderMap:
    """Property path -> header suffix for every ``x-mcp-header`` in a tool's ``inputSchema``.

    Raises ``InvalidHeaderAnnotation`` when any annotation breaks HTTP-13: empty or not an
    RFC 9110 token (which also excludes space, ``:``, CR/LF, control and non-ASCII
    characters); a case-insensitive duplicate; on a type other than string, integer or
    boolean (``number`` is rejected, as the conformance suite requires, docs/conformance.md §2.1);
    or not reachable from the root through ``properties`` alone.
    """
    return {path: name for path, (name, _kind) in annotated_properties(input_schema).items()}


def checked_param_headers(input_schema: Any) -> dict[str, tuple[str, str]]:
    """Header suffix -> (argument, JSON type): the ``Mcp-Param-*`` headers a server checks
    (HTTP-14) for a tool it registers.

    Refuses (``InvalidHeaderAnnotation``) what every client must drop (HTTP-13), and
    annotations on nested properties: those are valid, but this kit's server compares
    ``Mcp-Param-*`` headers with top-level arguments only, and an annotation the server does
    not check breaks HTTP-14 (a server need not use x-mcp-header at all).
    """
    found: dict[str, tuple[str, str]] = {}
    for path, (header, kind) in annotated_properties(input_schema).items():
        if len(path) > 1:
            raise InvalidHeaderAnnotation(
                f"x-mcp-header on nested property {'.'.join(path)!r}: this kit's server checks "
                "Mcp-Param-* headers against top-level arguments only (HTTP-14)"
            )
        found[header] = (path[0], kind)
    return found


# --- HTTP-4 / HTTP-7 / HTTP-11 / HTTP-12: the headers of one request -----------------------


def _target(method: str, params: Mapping[str, Any]) -> Any:
    """What ``Mcp-Name`` names: ``params.uri`` for resources/read, else ``params.name``."""
    return params.get("uri" if method == "resources/read" else "name")


def _lookup(arguments: Any, path: PropertyPath) -> Any:
    value = arguments
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def request_headers(
    request: Mapping[str, Any], header_map: HeaderMap | None = None
) -> dict[str, str]:
    """The MCP headers for one JSON-RPC request.

    Every request: ``MCP-Protocol-Version`` (equal to ``_meta``'s, HTTP-7) and ``Mcp-Method``.
    ``tools/call``, ``prompts/get``, ``resources/read`` - first attempts and retries alike
    (HTTP-11) - add ``Mcp-Name``; ``tools/call`` adds one ``Mcp-Param-<Name>`` per annotated
    argument present and non-null in the body (HTTP-12), using the tool's ``header_map``.
    Raises ``UnencodableHeaderValue`` for a value no header can carry.
    """
    params = request.get("params") or {}
    meta = params.get("_meta") or {}
    method = request["method"]
    headers = {
        HEADER_PROTOCOL_VERSION: str(meta.get(META_PROTOCOL_VERSION, "")),
        HEADER_METHOD: str(method),
    }
    if method in MRTR_METHODS:
        target = _target(method, params)
        if isinstance(target, str):
            headers[HEADER_NAME] = encode_value(target)
    if method == "tools/call" and header_map:
        arguments = params.get("arguments") or {}
        for path, suffix in header_map.items():
            value = param_value(_lookup(arguments, path))
            if value is not None:
                headers[HEADER_PARAM_PREFIX + suffix] = value
    return headers


# --- HTTP-7 / HTTP-10 / HTTP-14 / HTTP-15: the server's checks -----------------------------


class Received(dict[str, str]):
    """Headers as ``received`` gives them: lower-case names, one value each."""


def received(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> Received:
    """Received headers with lower-case names (HTTP-8: names are case-insensitive); of a
    repeated header, the first value counts."""
    if isinstance(headers, Received):
        return headers  # read once already (the HTTP adapter's, passed on to the core)
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out = Received()
    for name, value in pairs:
        out.setdefault(name.lower(), value)
    return out


def required_headers(method: str) -> tuple[str, ...]:
    """HTTP-15: headers a request for ``method`` must carry."""
    base = (HEADER_PROTOCOL_VERSION, HEADER_METHOD)
    return (*base, HEADER_NAME) if method in MRTR_METHODS else base


def check_present(headers: Mapping[str, str], method: str) -> None:
    """HTTP-15: every required header is there (``headers`` as ``received`` gives them)."""
    for name in required_headers(method):
        if name.lower() not in headers:
            raise errors.header_mismatch(f"Missing required {name} header")


def _mismatch(name: str, header: str, body: Any) -> errors.McpError:
    return errors.header_mismatch(f"{name} header {header!r} does not match body value {body!r}")


def check_matches_body(
    headers: Mapping[str, str],
    method: str,
    params: Mapping[str, Any],
    meta_version: str,
    tool_param_headers: Callable[[str], Mapping[str, tuple[str, str]]],
) -> None:
    """HTTP-7, HTTP-10, HTTP-14, HTTP-15: header values equal what the body says.

    ``headers`` as ``received`` gives them, after ``check_present``. ``tool_param_headers``
    gives, for a tool's name, the ``Mcp-Param-*`` headers it declares, as
    ``checked_param_headers`` found them at registration (``McpServer.tool_header_params``).
    """
    method_header = headers[HEADER_METHOD.lower()].strip(" \t")
    if method_header != method:  # values are case-sensitive (HTTP-8)
        raise _mismatch(HEADER_METHOD, method_header, method)
    version_header = headers[HEADER_PROTOCOL_VERSION.lower()].strip(" \t")
    if version_header != meta_version:
        raise _mismatch(HEADER_PROTOCOL_VERSION, version_header, meta_version)
    if method in MRTR_METHODS:
        body_name = _target(method, params)
        header_name = decode_value(HEADER_NAME, headers[HEADER_NAME.lower()])
        if isinstance(body_name, str) and header_name != body_name:
            raise _mismatch(HEADER_NAME, header_name, body_name)
    tool = params.get("name")
    if method == "tools/call" and isinstance(tool, str):
        # A name that is no string is not a tool's: the method refuses it (-32602).
        arguments = params.get("arguments")
        _check_param_headers(
            headers, arguments if isinstance(arguments, dict) else {}, tool_param_headers(tool)
        )


def _check_param_headers(
    headers: Mapping[str, str],
    arguments: dict[str, Any],
    param_headers: Mapping[str, tuple[str, str]],
) -> None:
    for header, (arg, _kind) in param_headers.items():
        full = HEADER_PARAM_PREFIX + header
        raw = headers.get(full.lower())
        value = arguments.get(arg)
        if value is None:
            if raw is not None:
                raise errors.header_mismatch(f"{full} header sent for an absent argument {arg!r}")
            continue
        if raw is None:
            raise errors.header_mismatch(f"Missing {full} header for argument {arg!r}")
        decoded = decode_value(full, raw)
        if not _same_param(decoded, value):
            raise _mismatch(full, decoded, value)


def _same_param(header: str, value: Any) -> bool:
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, int | float):
        # HTTP-14: compare numbers numerically, so "42" matches 42.0; only plain decimals,
        # never "1e3", "nan" or "inf".
        return _DECIMAL.match(header) is not None and float(header) == float(value)
    return header == str(value)
