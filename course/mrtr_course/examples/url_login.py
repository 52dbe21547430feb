"""Lesson: URL-mode elicitation — the user finishes a step on a web page the client never sees.

``connect_calendar`` reads a pretend calendar, which needs the user to sign in to the calendar
provider first. A password must never travel through a form (ELIC-14) nor through the client
(ELIC-13), so the tool returns ``input_required`` with a **URL-mode** request: a link to a
sign-in page that this same Starlette app serves on loopback. The flow (ELIC-9, ELIC-11):

1. round 1 — the server opens a pending sign-in under a random id, puts the link in a URL-mode
   request and the id in ``requestState`` (the spec has no ``elicitationId`` any more);
2. the client shows the full link and asks the user; once the user agrees to go, the client
   opens the page and retries **at once** with ``{"action": "accept"}``. ``accept`` means
   "the user agreed to go", not "it is done";
3. the user signs in on the page; the page records completion in the server's store under
   that id. The client sees none of it;
4. the retry looks the id up. The server may block a while (ELIC-9): this example waits up to
   ``wait_s`` seconds (``SIGNIN_WAIT_S``, a KIT choice kept well under the kit client's 30 s
   HTTP timeout) for the sign-in to finish, then completes — or, if it is still not done,
   answers ``input_required`` again with the same link, and the client may retry by hand
   (ELIC-10).

Decline and cancel end the call politely (ELIC-8). The id in the URL is unguessable and names
no user (ELIC-12: no credentials or personal data in URLs); the state that carries it is
sealed by the core, bound to this tool call and principal (MRTR-S4, MRTR-S5). The pending
sign-in remembers the principal that started it, so another principal's retry cannot use it
(SEC-9, ELIC-16).

In practice (ELIC-12): a real page must check that the person who opens the link is the user
the request was made for — e.g. by having them log in to the server's own site first and
comparing identities. This demo has no users, so anyone holding the link could finish it.
Serve the page over HTTPS anywhere but loopback.

``UrlLoginExample(public_url).app()`` is the whole Starlette app: the MCP endpoint at
``/mcp`` (``create_app``) plus the sign-in page at ``/signin/{id}``. ``build_server()`` gives
only the MCP server (for ``EXAMPLES``); its links then point at ``DEFAULT_PUBLIC_URL``.

Behind Jupyter (Binder, JupyterHub): the app listens on the kernel machine's loopback, which
the learner's browser cannot reach. ``UrlLoginExample.behind_jupyter(served_at)`` puts links
through the Jupyter server's ``jupyter-server-proxy`` instead (``<jupyter>/proxy/<port>``,
derived from the environment by ``mrtr_course.plain.proxy``), and the page accepts that host.
The page has only relative links and a form that posts to its own URL, so it works under any
path prefix; the proxy strips its prefix before forwarding, so the routes stay the same.
"""

from __future__ import annotations

import asyncio
import html
import importlib.util
import os
import re
import secrets
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route

from mrtr_course.plain.proxy import PageAddress, page_address
from mrtr_kit.protocol.models import ElicitRequest
from mrtr_kit.server import KeyRing, McpServer, RequestContext
from mrtr_kit.server.context import elicit_url
from mrtr_kit.server.http import create_app

DEFAULT_PUBLIC_URL = "http://127.0.0.1:8765"
SIGNIN_TTL_S = 15 * 60  # as long as a requestState lives (SEC-4, KIT)
SIGNIN_WAIT_S = 15.0  # how long an accept waits for the page to be done (ELIC-9, KIT)
POLL_S = 0.1  # how often a waiting accept looks at the store
LOOPBACK_NAMES = ["127.0.0.1", "localhost"]
_OUTCOME = re.compile(r'<p id="outcome">(.*?)</p>', re.S)
NEXT_EVENT = "Team lunch, Friday 12:30"


@dataclass
class SignIn:
    """One pending (or finished) sign-in on the provider's page."""

    principal: str | None  # who started it; only they may use it (SEC-9)
    expires_at: float
    account: str | None = None  # set once the user signed in on the page

    @property
    def done(self) -> bool:
        return self.account is not None


class SignInPages:
    """The out-of-band side: pending sign-ins keyed by an unguessable id, and the page.

    Thread-safe, because a notebook may serve the app from a background thread while the
    lesson's code looks at the store.
    """

    def __init__(self, *, ttl_s: float = SIGNIN_TTL_S, now: Callable[[], float] = time.time):
        self.ttl_s = ttl_s
        self._now = now
        self._lock = threading.Lock()
        self._pending: dict[str, SignIn] = {}

    def start(self, principal: str | None) -> str:
        sid = secrets.token_urlsafe(16)  # 128 random bits: the link cannot be guessed
        with self._lock:
            self._purge()
            self._pending[sid] = SignIn(principal, self._now() + self.ttl_s)
        return sid

    def lookup(self, sid: str, principal: str | None) -> SignIn | None:
        """The sign-in ``sid`` if it is alive and was started by ``principal``."""
        with self._lock:
            self._purge()
            found = self._pending.get(sid)
        return found if found is not None and found.principal == principal else None

    async def wait_until_done(
        self, sid: str, principal: str | None, wait_s: float
    ) -> SignIn | None:
        """``lookup``, but give the user up to ``wait_s`` seconds to finish on the page.

        Polls the store, so it also works when the page is served by another process that
        shares it; ``asyncio.sleep`` leaves the server free to serve the page meanwhile.
        """
        deadline = asyncio.get_running_loop().time() + wait_s
        while True:
            found = self.lookup(sid, principal)
            if found is None or found.done or asyncio.get_running_loop().time() >= deadline:
                return found
            await asyncio.sleep(POLL_S)

    def complete(self, sid: str, account: str) -> bool:
        with self._lock:
            self._purge()
            found = self._pending.get(sid)
            if found is None:
                return False
            found.account = account
            return True

    def _purge(self) -> None:
        now = self._now()
        for sid in [s for s, p in self._pending.items() if p.expires_at < now]:
            del self._pending[sid]

    # -- the page -----------------------------------------------------------------------------

    async def page(self, request: Request) -> HTMLResponse:
        sid = request.path_params["sid"]
        with self._lock:
            self._purge()
            found = self._pending.get(sid)
        if found is None:
            return _page("Unknown link", "This sign-in link is unknown or has expired.", 404)
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
                return _page("Refused", "Sign-in forms are only accepted from this page.", 403)
            form = parse_qs((await request.body()).decode("utf-8", "replace"))
            account = (form.get("account") or [""])[0].strip()
            password = (form.get("password") or [""])[0]
            if not account or not password:
                return _page("Sign in", "Both fields are needed.", 400, form_for=sid)
            # A pretend provider: any password is accepted, and it is not kept anywhere.
            self.complete(sid, account)
            return _page(
                "Signed in", f"Signed in as {account}. You can close this tab and go back."
            )
        if found.done:
            return _page("Signed in", f"Signed in as {found.account} already.")
        return _page(
            "Sign in to Pretend Calendar",
            "The mrtr-kit calendar tool wants to read your calendar.",
            form_for=sid,
        )

    def routes(self) -> list[Route]:
        return [Route("/signin/{sid}", self.page, methods=["GET", "POST"])]


def _page(
    title: str, outcome: str, status: int = 200, *, form_for: str | None = None
) -> HTMLResponse:
    form = ""
    if form_for is not None:
        form = (
            '<form method="post">'
            '<p><label>Account <input name="account" autocomplete="username"></label></p>'
            '<p><label>Password <input name="password" type="password" '
            'autocomplete="current-password"></label></p>'
            '<p><button type="submit">Sign in</button></p></form>'
            "<p><small>Pretend provider: any password works and is forgotten at once."
            "</small></p>"
        )
    body = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        "</head><body style='font-family:sans-serif;max-width:32em;margin:2em auto'>"
        f'<h1>{html.escape(title)}</h1><p id="outcome">{html.escape(outcome)}</p>{form}'
        "</body></html>"
    )
    return HTMLResponse(body, status_code=status)


def signin_url(public_url: str, sid: str) -> str:
    return f"{public_url.rstrip('/')}/signin/{sid}"


def signin_id(url: str) -> str:
    """The id at the end of a sign-in link (whatever prefix a proxy put before it)."""
    path = urlsplit(url).path
    if "/signin/" not in path:
        raise ValueError(f"not a sign-in link: {url!r}")
    return path.rsplit("/signin/", 1)[1]


def register(
    server: McpServer,
    pages: SignInPages,
    public_url: str = DEFAULT_PUBLIC_URL,
    *,
    wait_s: float = SIGNIN_WAIT_S,
) -> None:
    def ask(sid: str, why: str | None = None) -> ElicitRequest:
        message = "Sign in to Pretend Calendar so I can read your calendar."
        return elicit_url(f"{why} {message}" if why else message, signin_url(public_url, sid))

    async def connect_calendar(ctx: RequestContext) -> Any:
        if ctx.state is None:  # round 1: open a sign-in and send its link
            sid = pages.start(ctx.principal)
            return ctx.input_required({"signin": ask(sid)}, {"sid": sid})
        sid = ctx.state["sid"]
        answer = ctx.elicitation("signin")
        if answer is None:  # the answer went missing: ask again (MRTR-E4)
            return ctx.input_required({"signin": ask(sid)}, {"sid": sid})
        if answer.action == "decline":
            return "Calendar not connected: you declined to sign in."
        if answer.action == "cancel":
            return "Calendar not connected: sign-in was cancelled."
        # accept: the user agreed to go (ELIC-9). Give them a while to finish on the page.
        signin = await pages.wait_until_done(sid, ctx.principal, wait_s)
        if signin is None:  # expired, or started by someone else: start over with a new link
            sid = pages.start(ctx.principal)
            why = "That sign-in expired."
            return ctx.input_required({"signin": ask(sid, why)}, {"sid": sid})
        if not signin.done:  # still not done after the wait: ask again, same link (ELIC-9)
            why = "You have not finished signing in yet."
            return ctx.input_required({"signin": ask(sid, why)}, {"sid": sid})
        return f"Calendar connected as {signin.account}. Next event: {NEXT_EVENT}."

    server.tool(
        "connect_calendar",
        description="Reads your (pretend) calendar. Asks you to sign in on a web page first "
        "(URL-mode elicitation).",
        annotations={"readOnlyHint": True},
    )(connect_calendar)


class UrlLoginExample:
    """The MCP server and its sign-in pages, sharing one store and one public URL."""

    def __init__(
        self,
        public_url: str = DEFAULT_PUBLIC_URL,
        *,
        wait_s: float = SIGNIN_WAIT_S,
        state_keys: KeyRing | None = None,
        **server_options: Any,
    ) -> None:
        """``state_keys`` seal the server's requestState: a fresh key for this process unless
        given; ``server_options`` go to ``McpServer`` (codec, ledger, ...)."""
        self.public_url = public_url.rstrip("/")
        self.address: PageAddress | None = None  # set by behind_jupyter
        self.pages = SignInPages()
        self.server = McpServer(
            "url-login-example",
            instructions="Connects your calendar after a web sign-in.",
            state_keys=state_keys or KeyRing.generate(),
            **server_options,
        )
        register(self.server, self.pages, self.public_url, wait_s=wait_s)

    @classmethod
    def behind_jupyter(
        cls,
        served_at: str,
        *,
        env: Mapping[str, str] | None = None,
        wait_s: float = SIGNIN_WAIT_S,
    ) -> UrlLoginExample:
        """The example served at ``served_at`` (loopback), its links where the browser is.

        Reads ``os.environ`` unless ``env`` is given: on Binder or a JupyterHub the links go
        through ``jupyter-server-proxy``; in a local Jupyter they stay ``served_at``. When the
        browser probably cannot open them, says why (a ``UserWarning``).
        """
        installed = importlib.util.find_spec("jupyter_server_proxy") is not None
        address = page_address(
            served_at, os.environ if env is None else env, proxy_installed=installed
        )
        if address.warning:
            warnings.warn(f"sign-in links stay on loopback: {address.warning}", stacklevel=2)
        example = cls(address.url, wait_s=wait_s)
        example.address = address
        return example

    def app(self, **http_options: Any) -> Starlette:
        """``/mcp`` for the client, ``/signin/{id}`` for the browser; loopback Host names only
        (plus the public host behind a proxy: ``page_hosts``).

        ``http_options`` go to ``create_app`` for the MCP endpoint (hosts, principal, ...).
        """
        mcp = create_app(self.server, **http_options)
        return Starlette(
            routes=[*self.pages.routes(), Mount("/", app=mcp)],
            # DNS-rebinding defence for the page too (the MCP endpoint checks Host itself).
            middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=self.page_hosts())],
        )

    def page_hosts(self) -> list[str]:
        """Loopback, and the public host: ``jupyter-server-proxy`` forwards the browser's Host."""
        public = urlsplit(self.public_url).hostname
        return [*LOOPBACK_NAMES, *([public] if public and public not in LOOPBACK_NAMES else [])]


def build_server(state_keys: KeyRing | None = None, **options: Any) -> McpServer:
    return UrlLoginExample(state_keys=state_keys, **options).server


def build_with_pages(base_url: str, **options: Any) -> UrlLoginExample:
    """What ``mrtr-kit serve --example url-login`` serves: the server and its sign-in pages,
    whose links name ``base_url`` (the address ``serve`` bound)."""
    return UrlLoginExample(base_url, **options)


async def sign_in(
    url: str,
    account: str,
    password: str,
    *,
    http: httpx.AsyncClient | None = None,
    served_at: str | None = None,
) -> str:
    """Do what the user does in their browser: open the sign-in page and submit it.

    Returns the page's one-line outcome. A test shortcut: the lesson calls it to finish the
    out-of-band step from code, posting the password from the notebook's own process. A real
    client never sees the page or the password; in a real session the user clicks the link.

    ``served_at``: where the app listens, when ``url`` goes through Jupyter's proxy, which
    wants the learner's Jupyter login that the kernel does not have: the same page is opened
    there directly.
    """
    if served_at is not None:
        url = signin_url(served_at, signin_id(url))
    own = http is None
    client = http or httpx.AsyncClient(timeout=10)
    try:
        await client.get(url)
        response = await client.post(url, data={"account": account, "password": password})
    finally:
        if own:
            await client.aclose()
    found = _OUTCOME.search(response.text)
    outcome = html.unescape(found.group(1)) if found else response.text[:80]
    return f"HTTP {response.status_code}: {outcome}"
