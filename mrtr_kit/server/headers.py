"""Streamable HTTP request headers of 2026-07-28 (digest §3.2, §3.3): presence, value syntax,
the ``=?base64?…?=`` sentinel, and comparison with the JSON-RPC body; and the strict reading
of ``Host`` and ``Origin`` for the DNS-rebinding check (§3.6). Pure functions; the Starlette
adapter calls them in the order of its pipeline.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..protocol import constants as c
from ..protocol import errors

_SENTINEL_START, _SENTINEL_END = "=?base64?", "?="
_DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


def _valid_chars(value: str) -> bool:
    # HTTP-9: visible ASCII 0x21-0x7E plus space and tab; nothing else.
    return all(ch in " \t" or 0x21 <= ord(ch) <= 0x7E for ch in value)


def decode_header_value(name: str, value: str) -> str:
    """The body-comparable value of an Mcp-Name / Mcp-Param-* header (HTTP-9, HTTP-10)."""
    value = value.strip(" \t")  # optional whitespace around a field value is not part of it
    if not _valid_chars(value):
        raise errors.header_mismatch(f"{name} header has characters outside visible ASCII")
    if value.startswith(_SENTINEL_START) and value.endswith(_SENTINEL_END) and len(value) >= 11:
        encoded = value[len(_SENTINEL_START) : -len(_SENTINEL_END)]
        try:
            if len(encoded) % 4:
                raise ValueError("bad padding")
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise errors.header_mismatch(f"{name} header has an invalid base64 value") from None
    return value  # "=?base64?abc" without the closing marker is a literal (HTTP-9)


def required_headers(method: str) -> tuple[str, ...]:
    """HTTP-15: headers a request for ``method`` must carry."""
    base = (c.HEADER_PROTOCOL_VERSION, c.HEADER_METHOD)
    return (*base, c.HEADER_NAME) if method in c.MRTR_METHODS else base


def check_present(headers: Mapping[str, str], method: str) -> None:
    for name in required_headers(method):
        if headers.get(name) is None:  # Mapping lookups of Starlette headers ignore case (HTTP-8)
            raise errors.header_mismatch(f"Missing required {name} header")


def _mismatch(name: str, header: str, body: Any) -> errors.McpError:
    return errors.header_mismatch(f"{name} header {header!r} does not match body value {body!r}")


def check_matches_body(
    headers: Mapping[str, str],
    request_method: str,
    params: dict[str, Any],
    meta_version: str,
    header_params: Mapping[str, tuple[str, str]],
) -> None:
    """HTTP-7, HTTP-10, HTTP-14, HTTP-15: header values equal what the body says."""
    method_header = headers[c.HEADER_METHOD].strip(" \t")
    if method_header != request_method:  # values are case-sensitive (HTTP-8)
        raise _mismatch(c.HEADER_METHOD, method_header, request_method)
    version_header = headers[c.HEADER_PROTOCOL_VERSION].strip(" \t")
    if version_header != meta_version:
        raise _mismatch(c.HEADER_PROTOCOL_VERSION, version_header, meta_version)
    if request_method in c.MRTR_METHODS:
        body_name = params.get("uri" if request_method == "resources/read" else "name")
        header_name = decode_header_value(c.HEADER_NAME, headers[c.HEADER_NAME])
        if isinstance(body_name, str) and header_name != body_name:
            raise _mismatch(c.HEADER_NAME, header_name, body_name)
    if request_method == "tools/call":
        arguments = params.get("arguments")
        _check_param_headers(
            headers, arguments if isinstance(arguments, dict) else {}, header_params
        )


def _check_param_headers(
    headers: Mapping[str, str],
    arguments: dict[str, Any],
    header_params: Mapping[str, tuple[str, str]],
) -> None:
    for header, (arg, _kind) in header_params.items():
        full = c.HEADER_PARAM_PREFIX + header
        raw = headers.get(full)
        value = arguments.get(arg)
        if value is None:
            if raw is not None:
                raise errors.header_mismatch(f"{full} header sent for an absent argument {arg!r}")
            continue
        if raw is None:
            raise errors.header_mismatch(f"Missing {full} header for argument {arg!r}")
        decoded = decode_header_value(full, raw)
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


# -- Host and Origin (HTTP-27, HTTP-29) ------------------------------------------------------

# host [":" port] exactly (RFC 9110 §7.2, RFC 6454 §6.2): a DNS name or IPv4 address, or an
# IPv6 address in brackets; a port of 1-5 digits without a leading zero. No userinfo, path,
# query, fragment, trailing dot or spaces: nothing a browser puts in Host or Origin.
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_AUTHORITY = re.compile(
    rf"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>{_LABEL}(?:\.{_LABEL})*))"
    r"(?::(?P<port>[1-9][0-9]{0,4}))?",
    re.IGNORECASE,
)
_ORIGIN = re.compile(r"(?P<scheme>https?)://(?P<authority>.*)", re.IGNORECASE | re.DOTALL)


def parse_host(value: str) -> str | None:
    """The host named by a ``Host`` value, lower-cased (``localhost``, ``127.0.0.1``,
    ``[::1]``), or None when the value is not exactly ``host[:port]``.

    Strict on purpose: ``127.0.0.1:80.evil.com``, ``[::1].evil.com``, ``127.0.0.1:evil.com``,
    ``127.0.0.1:0`` and ``127.0.0.1:99999`` are None, never "127.0.0.1". IPv6 addresses are
    written in their canonical short form, so ``[0:0:0:0:0:0:0:1]`` is ``[::1]``.
    """
    match = _AUTHORITY.fullmatch(value)
    if match is None or (match["port"] and int(match["port"]) > 65535):
        return None
    if match["ipv6"] is not None:
        try:
            return f"[{ipaddress.IPv6Address(match['ipv6']).compressed}]"
        except ValueError:
            return None
    return match["name"].lower()


def parse_origin(value: str) -> str | None:
    """The host of a serialized ``Origin`` (``http(s)://host[:port]``, RFC 6454 §6.2), or None
    for ``null``, another scheme, or anything more or less than that (a path, even ``/``)."""
    match = _ORIGIN.fullmatch(value)
    return parse_host(match["authority"]) if match else None


def host_and_origin_problem(
    headers: Iterable[tuple[bytes, bytes]], allowed_hosts: frozenset[str]
) -> str | None:
    """Why a request fails the DNS-rebinding check, or None if it passes (HTTP-27, HTTP-29).

    ``headers`` are the raw ASGI header pairs. Exactly one ``Host`` naming an allowed host; at
    most one ``Origin``, and if present, naming an allowed host too (a request without Origin
    comes from a non-browser client: allowed, KIT). ``"*"`` in ``allowed_hosts`` allows any
    host, but the values must still be well formed. The reason is for the server log only.
    """
    hosts = [v.decode("latin-1") for k, v in headers if k.lower() == b"host"]
    origins = [v.decode("latin-1") for k, v in headers if k.lower() == b"origin"]
    if len(hosts) != 1:
        return f"{len(hosts)} Host headers"
    if len(origins) > 1:
        return f"{len(origins)} Origin headers"
    host = parse_host(hosts[0])
    if host is None or ("*" not in allowed_hosts and host not in allowed_hosts):
        return f"Host {hosts[0][:100]!r} not allowed"
    if origins:
        origin_host = parse_origin(origins[0])
        if origin_host is None or ("*" not in allowed_hosts and origin_host not in allowed_hosts):
            return f"Origin {origins[0][:100]!r} not allowed"
    return None
