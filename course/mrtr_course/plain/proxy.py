"""Where the learner's browser can open a page the kernel serves on loopback.

A notebook's helper server (the URL-mode sign-in page of lesson 01b) listens on the kernel
machine's ``127.0.0.1``. On a laptop the learner's browser runs there too, so the direct
loopback URL works. On Binder or a JupyterHub the browser is elsewhere: the page must be
reached through the Jupyter server, whose ``jupyter-server-proxy`` extension forwards
``<jupyter url>proxy/<port>/<path>`` to ``127.0.0.1:<port>/<path>`` (it **strips** the prefix;
``proxy/absolute/<port>/`` would keep it) and asks for the learner's Jupyter login first.

The public URL of *this Jupyter* cannot be seen from the kernel; it comes from the
environment, first match wins:

1. ``MRTR_KIT_JUPYTER_URL`` — set it yourself (a workshop host, Jupyter in Docker or over an
   SSH tunnel): the address of Jupyter in your browser, up to its base URL, e.g.
   ``https://hub.example.org/user/ada/``;
2. ``JUPYTERHUB_PUBLIC_URL`` — JupyterHub (4.1+) sets it for your server when the hub knows
   its public address;
3. ``JUPYTERHUB_HOST`` + ``JUPYTERHUB_SERVICE_PREFIX`` — a hub on subdomains sets both.

A hub that sets only ``JUPYTERHUB_SERVICE_PREFIX`` (its public address unknown) keeps the
loopback URL and says what to set. The environment is read by the caller (the example's
``behind_jupyter``) and passed in, so this module is plain functions, tested without Jupyter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

ENV_JUPYTER_URL = "MRTR_KIT_JUPYTER_URL"
HUB_PUBLIC_URL = "JUPYTERHUB_PUBLIC_URL"
HUB_HOST = "JUPYTERHUB_HOST"
HUB_PREFIX = "JUPYTERHUB_SERVICE_PREFIX"


@dataclass(frozen=True)
class PageAddress:
    """The base URL a page's links must use, and why."""

    url: str  # what the learner's browser opens: goes into the elicitation
    served_at: str  # where the app itself listens (loopback)
    source: str  # the setting it came from, for the lesson to print
    warning: str | None = None  # set when the browser probably cannot open ``url``

    @property
    def proxied(self) -> bool:
        return self.url != self.served_at


def jupyter_url(env: Mapping[str, str]) -> tuple[str, str] | None:
    """(the URL of this Jupyter in the learner's browser, ending in "/"; its variable)."""
    explicit = env.get(ENV_JUPYTER_URL, "").strip()
    if explicit:
        return _slash(explicit), ENV_JUPYTER_URL
    public = env.get(HUB_PUBLIC_URL, "").strip()
    if public:
        return _slash(public), HUB_PUBLIC_URL
    host, prefix = env.get(HUB_HOST, "").strip(), env.get(HUB_PREFIX, "").strip()
    if host and prefix:
        origin = host if "://" in host else f"https://{host}"  # a hub on subdomains is HTTPS
        return _slash(f"{origin.rstrip('/')}/{prefix.lstrip('/')}"), f"{HUB_HOST} + {HUB_PREFIX}"
    return None


def proxy_url(jupyter: str, port: int) -> str:
    """``jupyter-server-proxy``'s path to ``127.0.0.1:<port>`` (prefix stripped), no end "/"."""
    return f"{_slash(jupyter)}proxy/{port}"


def page_address(
    served_at: str, env: Mapping[str, str], *, proxy_installed: bool = True
) -> PageAddress:
    """The base URL for links to an app served at ``served_at`` (``http://127.0.0.1:<port>``)."""
    served_at = served_at.rstrip("/")
    port = urlsplit(served_at).port
    found = jupyter_url(env)
    if found is None:
        if env.get(HUB_PREFIX):
            return PageAddress(
                served_at,
                served_at,
                "loopback",
                "this Jupyter runs on a hub whose public address is unknown: set "
                f"{ENV_JUPYTER_URL} to the address of Jupyter in your browser "
                "(up to and including /user/<name>/) and restart the kernel",
            )
        return PageAddress(served_at, served_at, "loopback")  # a local Jupyter: as it is
    if port is None:
        raise ValueError(f"{served_at!r} names no port to proxy to")
    jupyter, source = found
    if not proxy_installed:
        return PageAddress(
            served_at,
            served_at,
            "loopback",
            f"{source} says Jupyter is at {jupyter}, but jupyter-server-proxy is not "
            "installed, so pages are not reachable through it: pip install jupyter-server-proxy",
        )
    return PageAddress(proxy_url(jupyter, port), served_at, source)


def _slash(url: str) -> str:
    return url.rstrip("/") + "/"
