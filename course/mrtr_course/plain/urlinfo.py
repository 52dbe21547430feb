"""What a URL-mode card must tell the user before they open a link (ELIC-13, ELIC-15).

The client shows the full URL, highlights the host it leads to, and warns about links that
deserve a second look. Plain Python, so the checks are tested without widgets.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost",)


@dataclass(frozen=True)
class UrlFacts:
    url: str
    scheme: str
    host: str
    openable: bool  # an http(s) link a browser may open; anything else is shown as text only
    warnings: tuple[str, ...]

    @property
    def is_loopback(self) -> bool:
        return _is_loopback(self.host)


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def inspect_url(url: str) -> UrlFacts:
    """The host to highlight and the warnings to show for ``url``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    scheme = parts.scheme.lower()
    warnings: list[str] = []
    openable = scheme in ("http", "https") and bool(host)
    if not openable:
        warnings.append("this is not a web link; it will not be opened")
    if parts.username or parts.password:
        # ELIC-12: no credentials in URLs; "user@" can also hide the real host from a reader.
        warnings.append("the link carries a user name or password before the host")
    if any(label.startswith("xn--") for label in host.split(".")):
        warnings.append("the host is an internationalised (punycode) name: check it carefully")
    if scheme == "http" and host and not _is_loopback(host):
        warnings.append("the link is not HTTPS")
    return UrlFacts(url=url, scheme=scheme, host=host, openable=openable, warnings=tuple(warnings))
