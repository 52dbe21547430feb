"""mrtr_kit: learn MCP Multi Round-Trip Requests (protocol revision 2026-07-28).

The protocol core (``mrtr_kit.protocol``, ``mrtr_kit.server.core``, ``mrtr_kit.client.call``
and the client modules it uses) does no I/O; HTTP, processes and widgets sit at the edges.
"""

__version__ = "0.1.0"
