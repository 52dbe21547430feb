"""Wire-level vocabulary of MCP 2026-07-28: constants, error codes, pydantic models, and the
two helpers both sides share (``models.to_wire``, ``aio.maybe_await``)."""
