"""A small bearer-token authenticator, so requestState has real principals to bind to.

``BearerTokens({"alice": "<token>", "bob": "<token>"})`` is a ``principal_of`` for
``create_app``: it reads ``Authorization: Bearer <token>`` and returns the principal the
token belongs to, or raises ``Unauthenticated`` (the adapter answers 401). Every request is
checked, since there is no handshake to authenticate once (HTTP-29), and the principal is
derived from the credential, never from anything the client asserts in the body (SEC-9).

A fixed table of tokens suits lessons, tests and a loopback demo. A real deployment would
validate OAuth access tokens here instead (MCP authorization) and return their ``sub``.
Configure the table from the environment for ``python -m mrtr_kit serve``::

    MRTR_KIT_BEARER_TOKENS="alice:<token>,bob:<token>"

Your own check (an OAuth introspection, a JWT verification) is a function of the request's
headers that returns the principal, or None to refuse: ``FromHeaders(check)`` makes it a
``principal_of``, and ``serve --principal-of module:attribute`` loads it.
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import os
from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request

ENV_TOKENS = "MRTR_KIT_BEARER_TOKENS"

# A check of the request's headers: the principal, or None (401). Sync or async.
HeadersCheck = Callable[[Mapping[str, str]], str | Awaitable[str | None] | None]


class Unauthenticated(Exception):
    """No valid credential. ``reason`` goes to the server log, never to the client."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class BearerTokens:
    """Maps bearer tokens to principals, comparing tokens in constant time."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        """``tokens`` maps each principal to its token."""
        if not tokens:
            raise ValueError("give at least one principal and token")
        if len(set(tokens.values())) != len(tokens):
            raise ValueError("two principals share a token")
        for principal, token in tokens.items():
            if not principal or not token or any(ch.isspace() for ch in token):
                raise ValueError(f"principal {principal!r} needs a non-empty token without spaces")
        # Digests of equal length, so compare_digest's timing depends on no part of a token.
        self._table = [(_digest(token), principal) for principal, token in tokens.items()]

    @property
    def principals(self) -> list[str]:
        """The principals that have a token, in the order given."""
        return [principal for _, principal in self._table]

    def principal_for(self, token: str) -> str | None:
        """The principal of ``token``, or None. Compares against every entry, every time."""
        given = _digest(token)
        found = None
        for known, principal in self._table:
            if hmac.compare_digest(given, known):  # no early exit: timing leaks nothing
                found = principal
        return found

    def __call__(self, request: Request) -> str:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("no bearer token")
        principal = self.principal_for(token.strip())
        if principal is None:
            raise Unauthenticated("unknown bearer token")
        return principal

    @classmethod
    def parse(cls, spec: str) -> BearerTokens:
        """``"alice:<token>,bob:<token>"``."""
        tokens: dict[str, str] = {}
        for item in spec.split(","):
            principal, sep, token = item.strip().partition(":")
            if not sep:
                raise ValueError("write each entry as principal:token, separated by commas")
            if principal in tokens:
                raise ValueError(f"principal {principal!r} is listed twice")
            tokens[principal] = token
        return cls(tokens)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> BearerTokens | None:
        """The table in ``MRTR_KIT_BEARER_TOKENS``, or None when it is not set."""
        spec = (os.environ if environ is None else environ).get(ENV_TOKENS, "").strip()
        return cls.parse(spec) if spec else None


class FromHeaders:
    """A ``principal_of`` for ``create_app`` made of ``check(headers)``: a sync or async callable
    given the request's headers (a case-insensitive mapping: ``headers["authorization"]``) that
    returns the principal (a non-empty ``str``), or None to refuse with 401. Raising
    ``Unauthenticated`` refuses too; what ``check`` returns besides a ``str`` or None is refused
    and logged. ``serve --principal-of module:attribute`` wraps the callable it loads in this.

    Only the headers: a check never sees the body (strangers' bodies are not even read), and
    the principal comes from the credential, never from what the client asserts (SEC-9)."""

    def __init__(self, check: HeadersCheck, name: str | None = None) -> None:
        """``name`` says which check refused, in the server log (default: its qualified name)."""
        self.check = check
        self.name = name or getattr(check, "__qualname__", repr(check))

    async def __call__(self, request: Request) -> str:
        """The principal ``check`` finds in ``request``'s headers, or ``Unauthenticated``."""
        found = self.check(request.headers)
        if inspect.isawaitable(found):
            found = await found
        if found is None:
            raise Unauthenticated(f"{self.name} returned None")
        if not isinstance(found, str) or not found:
            raise Unauthenticated(
                f"{self.name} returned {type(found).__name__} {found!r:.40}, not a principal"
            )
        return found
