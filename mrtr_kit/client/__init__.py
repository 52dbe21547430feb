"""The MRTR client: sans-IO rounds (``rounds``), HTTP headers (``headers``), answer handlers
(``answers``) and the httpx session (``session``).

Quick start::

    from mrtr_kit.client import ElicitResult, McpClient

    async with McpClient("http://127.0.0.1:8765/mcp",
                         elicitation=lambda req, ctx: ElicitResult(action="decline")) as client:
        await client.list_tools()
        result = await client.call_tool("book_table", {"restaurant": "Luigi's"})
"""

from ..protocol.models import CreateMessageResult, ElicitResult, ListRootsResult, Root
from .answers import AnswerContext, AnswerHandlers, check_answer, parse_input_request
from .errors import (
    HeaderValueError,
    InputDeclined,
    InvalidAnswers,
    McpClientError,
    McpRemoteError,
    NoMutualVersion,
    NotJson,
    ProtocolViolation,
    ToolRejected,
    TooManyRounds,
    TransportError,
)
from .headers import (
    InvalidHeaderAnnotation,
    RejectedTool,
    encode_header_value,
    filter_tools,
    header_annotations,
    param_header_value,
    request_headers,
)
from .rounds import (
    DEFAULT_MAX_ROUNDS,
    CallStatus,
    Complete,
    MrtrCall,
    NeedsInput,
    RequestFactory,
    ResultCache,
    cache_key,
    choose_version,
    client_capabilities,
    encode_request,
    fresh_for_ms,
    interpret_result,
    may_cache,
    result_of,
    state_only_delay,
)
from .session import McpClient, TraceRecord
from .sse import SseDecoder, sse_events

__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "AnswerContext",
    "AnswerHandlers",
    "CallStatus",
    "Complete",
    "CreateMessageResult",
    "ElicitResult",
    "HeaderValueError",
    "InputDeclined",
    "InvalidAnswers",
    "InvalidHeaderAnnotation",
    "ListRootsResult",
    "McpClient",
    "McpClientError",
    "McpRemoteError",
    "MrtrCall",
    "NeedsInput",
    "NoMutualVersion",
    "NotJson",
    "ProtocolViolation",
    "RejectedTool",
    "RequestFactory",
    "ResultCache",
    "Root",
    "SseDecoder",
    "TooManyRounds",
    "ToolRejected",
    "TraceRecord",
    "TransportError",
    "cache_key",
    "check_answer",
    "choose_version",
    "client_capabilities",
    "encode_header_value",
    "encode_request",
    "filter_tools",
    "fresh_for_ms",
    "header_annotations",
    "interpret_result",
    "may_cache",
    "param_header_value",
    "parse_input_request",
    "request_headers",
    "result_of",
    "sse_events",
    "state_only_delay",
]
