"""``Host`` and ``Origin``, read strictly, for the DNS-rebinding check at the HTTP edge
(HTTP-27, HTTP-29; digest §3.6). Pure functions; ``http.HostOriginGuard`` calls
``host_and_origin_problem`` before any routing. The ``Mcp-*`` headers are not read here
but in ``protocol.headers``, by the core.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

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
    hosts: list[str] = []
    origins: list[str] = []
    for name, value in headers:  # one pass over the headers, on every request
        name = name.lower()
        if name == b"host":
            hosts.append(value.decode("latin-1"))
        elif name == b"origin":
            origins.append(value.decode("latin-1"))
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
