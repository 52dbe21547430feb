"""Names and numbers fixed by the 2026-07-28 specification (see MRTR-DIGEST §2, §5, §13)."""

from typing import Final

PROTOCOL_VERSION: Final = "2026-07-28"
SUPPORTED_VERSIONS: Final = (PROTOCOL_VERSION,)

# Reserved request `_meta` keys (CORE-10..12).
META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_PROGRESS_TOKEN: Final = "progressToken"
# Result `_meta` key (CORE-16).
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

# resultType values (RT-1).
RESULT_COMPLETE: Final = "complete"
RESULT_INPUT_REQUIRED: Final = "input_required"

# The only requests that may answer input_required (MRTR-R1, MRTR-R2).
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})

# The only kinds of input request a server may put in inputRequests (MRTR-S2b).
ELICITATION_CREATE: Final = "elicitation/create"
SAMPLING_CREATE_MESSAGE: Final = "sampling/createMessage"
ROOTS_LIST: Final = "roots/list"
INPUT_REQUEST_METHODS: Final = frozenset({ELICITATION_CREATE, SAMPLING_CREATE_MESSAGE, ROOTS_LIST})

# Methods whose complete results must carry ttlMs and cacheScope (CACHE-1).
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)

# Methods that existed in 2025-11-25 and are gone in 2026-07-28 (§12): answered -32601 / 404.
REMOVED_METHODS: Final = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)

# Streamable HTTP header names (§3.2). Compared case-insensitively (HTTP-8).
HEADER_PROTOCOL_VERSION: Final = "MCP-Protocol-Version"
HEADER_METHOD: Final = "Mcp-Method"
HEADER_NAME: Final = "Mcp-Name"
HEADER_PARAM_PREFIX: Final = "Mcp-Param-"
