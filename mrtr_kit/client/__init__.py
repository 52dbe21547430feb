"""The MRTR client, a module per job: the sans-IO call and its rounds (``call``), whose states
move by one table (``transitions``); the requests it builds (``factory``), the results it reads
(``results``), the steps it returns (``steps``), the answers it checks and the handlers that
produce them (``answers``), the bytes it sends (``encoding``), what a cache may keep
(``cache``), which era a server speaks (``eras``, VER-4); HTTP headers (``headers``), the httpx
session (``session``) and the 2025-11-25 session it falls back to (``legacy``).

Quick start::

    from mrtr_kit.client import ElicitResult, McpClient

    async with McpClient("http://127.0.0.1:8765/mcp",
                         elicitation=lambda req, ctx: ElicitResult(action="decline")) as client:
        await client.list_tools()
        result = await client.call_tool("book_table", {"restaurant": "Luigi's"})

Without the session (sans-IO), a call is a loop over what ``MrtrCall`` says to do next::

    call = MrtrCall.tool(RequestFactory(capabilities=client_capabilities(form=True)), "t")
    step = call.receive(post(call.first_request()))
    while not isinstance(step, Done):   # AnswerThese / RetryStateOnly / Resend / GiveUp
        ...

The names below are what a user of the client needs; the rest (``interpret_result``,
``choose_version``, the cache keys, header encoding, ...) stays in its module.
"""

from ..protocol.models import CreateMessageResult, ElicitResult, ListRootsResult, Root
from .answers import AnswerHandlers, check_answer
from .cache import ResultCache
from .call import MrtrCall
from .encoding import encode_request
from .eras import EraCache
from .errors import (
    HeaderValueError,
    InputDeclined,
    InvalidAnswers,
    LegacyServer,
    McpClientError,
    McpRemoteError,
    NoMutualVersion,
    NotJson,
    ProtocolViolation,
    ToolRejected,
    TooManyRounds,
    TransportError,
)
from .factory import RequestFactory, client_capabilities
from .headers import request_headers
from .session import McpClient, TraceRecord
from .steps import AnswerContext, AnswerThese, Done, GiveUp, Question, Resend, RetryStateOnly, Step
from .transitions import CallStatus

__all__ = [
    "AnswerContext",
    "AnswerHandlers",
    "AnswerThese",
    "CallStatus",
    "CreateMessageResult",
    "Done",
    "ElicitResult",
    "EraCache",
    "GiveUp",
    "HeaderValueError",
    "InputDeclined",
    "InvalidAnswers",
    "LegacyServer",
    "ListRootsResult",
    "McpClient",
    "McpClientError",
    "McpRemoteError",
    "MrtrCall",
    "NoMutualVersion",
    "NotJson",
    "ProtocolViolation",
    "Question",
    "RequestFactory",
    "Resend",
    "ResultCache",
    "RetryStateOnly",
    "Root",
    "Step",
    "TooManyRounds",
    "ToolRejected",
    "TraceRecord",
    "TransportError",
    "check_answer",
    "client_capabilities",
    "encode_request",
    "request_headers",
]
