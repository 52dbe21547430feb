"""The MRTR server: a sans-IO core (``core``), handler context, requestState protection and the
transports: Streamable HTTP (``http``) and stdio (``stdio``)."""

from .context import InputRequired, RequestContext
from .core import McpServer, Reply
from .keyring import KeyRing
from .typed_forms import form_schema

__all__ = ["InputRequired", "KeyRing", "McpServer", "Reply", "RequestContext", "form_schema"]
