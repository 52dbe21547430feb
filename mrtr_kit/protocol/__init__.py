"""Wire-level vocabulary of MCP 2026-07-28: constants, error codes and pydantic models."""
