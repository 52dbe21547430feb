"""Sessions of a 2025-11-25 server: what ``initialize`` fixed for the rest of the conversation.

In 2025-11-25 the ``initialize`` handshake negotiates the protocol version and the client's
capabilities once; the server hands out an ``Mcp-Session-Id`` and reads everything else from
the session (§12 of the digest: the first row of the migration table). Two ways to keep them:

* ``LocalSessions`` — a dict in this process, as the official SDK's session manager does.
  Another instance has never heard of the id and answers ``404`` (2025-11-25 transport rule).
* ``SignedSessions`` — the session travels inside its own id, signed with a key the whole fleet
  shares. Any instance accepts it: the usual first fix for "sessions behind a load balancer".

Neither can share what the lesson is about: a tool that is *waiting* for the client's answer
is a suspended coroutine in one process (see ``server.PendingRequests``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol

MAX_SESSION_ID_CHARS = 4096


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class Session:
    """What the handshake negotiated, read by every later request of the session."""

    id: str
    protocol_version: str
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    client_info: dict[str, Any] = field(default_factory=dict)

    def supports_elicitation(self) -> bool:
        """The session's answer, fixed at ``initialize`` (the check MIG-4 replaces)."""
        return isinstance(self.client_capabilities.get("elicitation"), dict)


class SessionStore(Protocol):
    def create(
        self, protocol_version: str, capabilities: dict[str, Any], info: dict[str, Any]
    ) -> Session: ...

    def get(self, session_id: str) -> Session | None: ...


class LocalSessions:
    """Sessions in this process's memory: unknown to every other instance."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    def create(
        self, protocol_version: str, capabilities: dict[str, Any], info: dict[str, Any]
    ) -> Session:
        session = Session(secrets.token_hex(16), protocol_version, capabilities, info)
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)


class SignedSessions:
    """Self-contained session ids, ``<payload>.<HMAC-SHA256>``, valid on every instance that
    holds ``key``. The id uses only visible ASCII, as 2025-11-25 requires of session ids."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 32:
            raise ValueError("the session key needs at least 32 bytes")
        self._key = key

    def _tag(self, payload: str) -> str:
        return _b64url(hmac.new(self._key, payload.encode(), hashlib.sha256).digest())

    def create(
        self, protocol_version: str, capabilities: dict[str, Any], info: dict[str, Any]
    ) -> Session:
        body = {"n": secrets.token_hex(8), "v": protocol_version, "c": capabilities, "i": info}
        payload = _b64url(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
        return Session(f"{payload}.{self._tag(payload)}", protocol_version, capabilities, info)

    def get(self, session_id: str) -> Session | None:
        if len(session_id) > MAX_SESSION_ID_CHARS or session_id.count(".") != 1:
            return None
        payload, tag = session_id.split(".")
        if not hmac.compare_digest(tag, self._tag(payload)):
            return None
        try:
            body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except (binascii.Error, ValueError):
            return None
        return Session(session_id, body["v"], body["c"], body["i"])
