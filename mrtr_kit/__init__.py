"""mrtr_kit: MCP Multi Round-Trip Requests (protocol revision 2026-07-28), a spec-exact server and
client.

The protocol core (``mrtr_kit.protocol``, ``mrtr_kit.server.core``, ``mrtr_kit.client.call``
and the client modules it uses) does no I/O; HTTP, processes and widgets sit at the edges.
"""

# The one place the version is written: pyproject.toml reads it ([tool.setuptools.dynamic]), so
# the wheel's version and this are the same. What it promises: docs/policy.md; what changed:
# CHANGELOG.md.
__version__ = "0.2.0"
