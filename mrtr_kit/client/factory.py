"""Every request the client sends: a fresh JSON-RPC id and a fresh ``_meta`` each time, and the
protocol version it speaks after negotiation. No I/O.

* ``client_capabilities`` — the ``clientCapabilities`` object for the inputs a client answers
  (CAP-3);
* ``RequestFactory`` — ids never used before (CORE-3, MRTR-C3), a new ``_meta`` per request
  (CORE-7, CORE-10, CORE-12), and ``negotiate`` after ``-32022`` (VER-2);
* ``choose_version`` — which of our versions to switch to (VER-2).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from .. import __version__
from ..protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
)
from ..protocol.errors import UNSUPPORTED_PROTOCOL_VERSION
from ..protocol.models import Implementation, to_wire
from .errors import McpRemoteError, NoMutualVersion, ProtocolViolation

DEFAULT_CLIENT_INFO = Implementation(name="mrtr-kit-client", version=__version__)


def client_capabilities(
    *, form: bool = False, url: bool = False, sampling: bool = False, roots: bool = False
) -> dict[str, Any]:
    """The ``clientCapabilities`` object for the input kinds a client can answer (§2.9).

    Every value is a JSON object (``{}``), never ``true``: servers and the conformance suite
    read the object form. ``elicitation`` is declared only with at least one mode (CAP-3).
    """
    caps: dict[str, Any] = {}
    modes: dict[str, Any] = {name: {} for name, on in (("form", form), ("url", url)) if on}
    if modes:
        caps["elicitation"] = modes
    if sampling:
        caps["sampling"] = {}
    if roots:
        caps["roots"] = {}
    return caps


class RequestFactory:
    """Builds the JSON-RPC requests of one client: a fresh id and a fresh ``_meta`` each time.

    ``protocol_version`` may change after version negotiation (``negotiate``, VER-2); every
    later request then carries the new one. ``supported_versions`` are the versions this
    client speaks, in preference order. ``client_info=None`` sends no ``clientInfo``
    (CORE-12 allows a client to be configured not to).
    """

    def __init__(
        self,
        *,
        protocol_version: str = PROTOCOL_VERSION,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Implementation | Mapping[str, Any] | None = DEFAULT_CLIENT_INFO,
        supported_versions: Sequence[str] = SUPPORTED_VERSIONS,
        first_id: int = 1,
    ) -> None:
        """``capabilities`` (each a JSON object, else ``ValueError``) go into every request's
        ``_meta``; ``first_id`` is the first request id."""
        caps = dict(capabilities or {})
        for name, value in caps.items():
            if not isinstance(value, dict):
                raise ValueError(f"capability {name!r} must be a JSON object such as {{}}")
        self.protocol_version = protocol_version
        self.supported_versions = tuple(supported_versions)
        self.capabilities = caps
        if isinstance(client_info, BaseModel):
            client_info = to_wire(client_info)
        self.client_info = dict(client_info) if client_info is not None else None
        self._ids: Iterator[int] = itertools.count(first_id)

    def negotiate(self, error: McpRemoteError) -> str:
        """VER-2: after ``-32022``, switch every later request to the first of our versions
        the server supports (``choose_version``); return it."""
        self.protocol_version = choose_version(error, self.supported_versions)
        return self.protocol_version

    def next_id(self) -> int:
        """A JSON-RPC id never used before by this client (CORE-3, MRTR-C3)."""
        return next(self._ids)

    def meta(self) -> dict[str, Any]:
        """A new ``_meta`` object (CORE-10, CORE-12); deep copies, so no two requests share
        a mutable part."""
        meta: dict[str, Any] = {
            META_PROTOCOL_VERSION: self.protocol_version,
            META_CLIENT_CAPABILITIES: copy.deepcopy(self.capabilities),
        }
        if self.client_info is not None:
            meta[META_CLIENT_INFO] = copy.deepcopy(self.client_info)
        return meta

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        extra_meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """``{"jsonrpc", "id", "method", "params": {"_meta": ..., **params}}``.

        ``params`` always exists because ``_meta`` is required (CORE-7). ``extra_meta`` adds
        optional keys such as ``progressToken`` or ``io.modelcontextprotocol/logLevel``.
        """
        meta = self.meta()
        for key, value in (extra_meta or {}).items():
            if key in (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES):
                raise ValueError(f"{key} is set by the client itself (CORE-10)")
            meta[key] = copy.deepcopy(value)
        body = {k: v for k, v in (params or {}).items() if k != "_meta"}
        return {
            "jsonrpc": "2.0",
            "id": self.next_id(),
            "method": method,
            "params": {"_meta": meta, **body},
        }


def choose_version(error: McpRemoteError, ours: Sequence[str]) -> str:
    """After ``-32022``: the first of our versions (in preference order) the server lists in
    ``data.supported`` (VER-2). Raises ``NoMutualVersion`` when none fits."""
    if error.code != UNSUPPORTED_PROTOCOL_VERSION:
        raise ValueError(f"not an UnsupportedProtocolVersion error: {error.code}")
    data = error.data if isinstance(error.data, dict) else {}
    supported = data.get("supported")
    if not isinstance(supported, list) or not all(isinstance(v, str) for v in supported):
        raise ProtocolViolation("-32022 error without a data.supported string list (ERR-1)")
    for version in ours:
        if version in supported:
            return version
    raise NoMutualVersion(ours, supported)
