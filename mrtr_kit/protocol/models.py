"""Pydantic v2 models for the 2026-07-28 messages the kit sends or accepts.

Wire names are camelCase (``inputRequests``), Python names snake_case (``input_requests``);
``_meta`` is ``meta`` in Python. Unknown fields are kept (``extra="allow"``) so that a message
passes through the kit unchanged, as the spec asks of fields a receiver does not know.
``to_wire()`` (the method, or ``to_wire(model)`` for any pydantic model) gives the JSON-ready
dict; ``Model.model_validate(obj)`` parses one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from .constants import (
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROGRESS_TOKEN,
    META_PROTOCOL_VERSION,
    RESULT_COMPLETE,
    RESULT_INPUT_REQUIRED,
)


class WireModel(BaseModel):
    """Base of every message model: camelCase wire aliases, snake_case Python names, unknown fields
    kept (``extra="allow"``)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=False,
        defer_build=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The message as JSON-ready data, wire names, unset optional fields left out."""
        return to_wire(self)


def to_wire(model: BaseModel) -> dict[str, Any]:
    """Any pydantic model (the kit's, the official SDK's, a handler's own) as wire data.

    The one recipe for turning a model into a message: JSON types, wire (alias) names, and
    fields that are ``None`` left out, as the spec leaves out absent optional fields.
    """
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


JSONObject = dict[str, Any]
RequestId = Annotated[str | int, Field(union_mode="left_to_right")]


# --- identity and capabilities (CORE-12, CORE-16, §2.9) -----------------------------------


class Implementation(WireModel):
    """``clientInfo`` / ``serverInfo``: a peer's name and version, with optional title,
    description, website and icons."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    website_url: str | None = None
    icons: list[JSONObject] | None = None


class ElicitationCapability(WireModel):
    """The client's ``elicitation`` capability: ``form`` and/or ``url`` mode."""

    form: JSONObject | None = None
    url: JSONObject | None = None


class SamplingCapability(WireModel):
    """The client's ``sampling`` capability (deprecated): optional ``tools`` and ``context``."""

    tools: JSONObject | None = None
    context: JSONObject | None = None


class ClientCapabilities(WireModel):
    """``_meta`` clientCapabilities: what the client declared in this request (CAP-1)."""

    elicitation: ElicitationCapability | None = None
    sampling: SamplingCapability | None = None
    roots: JSONObject | None = None
    experimental: dict[str, JSONObject] | None = None
    extensions: dict[str, JSONObject] | None = None

    def supports_elicitation(self, mode: str = "form") -> bool:
        """Form mode is declared by ``elicitation.form`` or by an empty ``elicitation: {}``."""
        e = self.elicitation
        if e is None:
            return False
        if mode == "url":
            return e.url is not None
        return e.form is not None or (e.url is None and not e.model_extra)

    def supports_sampling(self, *, tools: bool = False, context: bool = False) -> bool:
        """True when ``sampling`` is declared, and also its ``tools`` / ``context`` parts when asked
        for."""
        s = self.sampling
        if s is None:
            return False
        return (not tools or s.tools is not None) and (not context or s.context is not None)

    def supports_roots(self) -> bool:
        """True when the ``roots`` capability is declared."""
        return self.roots is not None


class RequestMeta(WireModel):
    """``params._meta`` of every 2026-07-28 request (CORE-10)."""

    protocol_version: str = Field(alias=META_PROTOCOL_VERSION)
    client_capabilities: ClientCapabilities = Field(alias=META_CLIENT_CAPABILITIES)
    client_info: Implementation | None = Field(default=None, alias=META_CLIENT_INFO)
    log_level: Literal[LOG_LEVELS] | None = Field(  # type: ignore[valid-type]
        default=None, alias=META_LOG_LEVEL
    )
    progress_token: RequestId | None = Field(default=None, alias=META_PROGRESS_TOKEN)


# --- JSON-RPC envelope (§2.1) ---------------------------------------------------------------


class JSONRPCRequest(WireModel):
    """A JSON-RPC 2.0 request: ``id``, ``method``, ``params`` (an object, empty by default)."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: JSONObject = Field(default_factory=dict)


class JSONRPCNotification(WireModel):
    """A JSON-RPC 2.0 notification: a ``method`` and optional ``params``, no ``id``."""

    jsonrpc: Literal["2.0"] = "2.0"
    method: str
    params: JSONObject | None = None


# --- content blocks -------------------------------------------------------------------------


class TextContent(WireModel):
    """A ``text`` content block."""

    type: Literal["text"] = "text"
    text: str
    annotations: JSONObject | None = None


class ImageContent(WireModel):
    """An ``image`` content block: base64 ``data`` and its ``mimeType``."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: JSONObject | None = None


class AudioContent(WireModel):
    """An ``audio`` content block: base64 ``data`` and its ``mimeType``."""

    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: JSONObject | None = None


class TextResourceContents(WireModel):
    """The text contents of a resource at ``uri``."""

    uri: str
    text: str
    mime_type: str | None = None


class BlobResourceContents(WireModel):
    """The binary contents of a resource at ``uri``, base64 in ``blob``."""

    uri: str
    blob: str
    mime_type: str | None = None


ResourceContents = TextResourceContents | BlobResourceContents


class EmbeddedResource(WireModel):
    """A ``resource`` content block: a resource's contents embedded in a result."""

    type: Literal["resource"] = "resource"
    resource: ResourceContents
    annotations: JSONObject | None = None


class ResourceLink(WireModel):
    """A ``resource_link`` content block: a pointer to a resource by ``uri`` and ``name``."""

    type: Literal["resource_link"] = "resource_link"
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


ContentBlock = Annotated[
    TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink,
    Field(discriminator="type"),
]


# --- elicitation (§9) -----------------------------------------------------------------------


class ElicitRequestFormParams(WireModel):
    """Params of a form-mode ``elicitation/create``: a message and a ``requestedSchema``; ``mode``
    absent means form (ELIC-1)."""

    mode: Literal["form"] | None = None  # ELIC-1: absent means form
    message: str
    requested_schema: JSONObject


class ElicitRequestURLParams(WireModel):
    """Params of a URL-mode ``elicitation/create``: a message and the ``url`` to open."""

    mode: Literal["url"]
    message: str
    url: str


class ElicitResult(WireModel):
    """An ``inputResponses`` value answering ``elicitation/create`` (ELIC-6, ELIC-7)."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | None = None


# --- sampling (§10, deprecated) -------------------------------------------------------------


class ToolUseContent(WireModel):
    """A ``tool_use`` block in sampling: the model asks for tool ``name`` with ``input``."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: JSONObject


class ToolResultContent(WireModel):
    """A ``tool_result`` block in sampling: the result of the tool use ``toolUseId``."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ContentBlock]
    structured_content: Any = None
    is_error: bool | None = None


SamplingContentBlock = Annotated[
    TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent,
    Field(discriminator="type"),
]


class SamplingMessage(WireModel):
    """One message of a sampling conversation: a role and one or more content blocks."""

    role: Literal["user", "assistant"]
    content: SamplingContentBlock | list[SamplingContentBlock]


class ModelHint(WireModel):
    """A sampling model hint: a (sub)string of a model name."""

    name: str | None = None


class ModelPreferences(WireModel):
    """Sampling model preferences: hints and cost/speed/intelligence priorities in 0..1."""

    hints: list[ModelHint] | None = None
    cost_priority: float | None = Field(default=None, ge=0, le=1)
    speed_priority: float | None = Field(default=None, ge=0, le=1)
    intelligence_priority: float | None = Field(default=None, ge=0, le=1)


class ToolChoice(WireModel):
    """Sampling ``toolChoice``: ``auto``, ``required`` or ``none``."""

    mode: Literal["auto", "required", "none"] | None = None


class CreateMessageRequestParams(WireModel):
    """Params of ``sampling/createMessage`` (deprecated; SAMP-2, SAMP-3)."""

    messages: list[SamplingMessage]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    metadata: JSONObject | None = None
    model_preferences: ModelPreferences | None = None
    include_context: Literal["none", "thisServer", "allServers"] | None = None
    tools: list[JSONObject] | None = None
    tool_choice: ToolChoice | None = None


class CreateMessageResult(WireModel):
    """An ``inputResponses`` value answering ``sampling/createMessage`` (SAMP-1)."""

    role: Literal["user", "assistant"]
    content: SamplingContentBlock | list[SamplingContentBlock]
    model: str
    stop_reason: str | None = None


# --- roots (§11, deprecated) ----------------------------------------------------------------


class Root(WireModel):
    """A root the client exposes: a ``file://`` ``uri`` (ROOTS-1, checked) and an optional name."""

    uri: str
    name: str | None = None

    @field_validator("uri")
    @classmethod
    def _file_uri(cls, v: str) -> str:
        if not v.startswith("file://"):  # ROOTS-1: a root URI MUST be a file:// URI
            raise ValueError("a root uri must start with file://")
        return v


class ListRootsResult(WireModel):
    """An ``inputResponses`` value answering ``roots/list``."""

    roots: list[Root]


# --- MRTR (§4) ------------------------------------------------------------------------------


class ElicitRequest(WireModel):
    """An ``elicitation/create`` input request, bare ``{method, params}`` (MRTR-S2b)."""

    method: Literal["elicitation/create"] = "elicitation/create"
    params: ElicitRequestURLParams | ElicitRequestFormParams


class CreateMessageRequest(WireModel):
    """A ``sampling/createMessage`` input request, bare ``{method, params}`` (MRTR-S2b)."""

    method: Literal["sampling/createMessage"] = "sampling/createMessage"
    params: CreateMessageRequestParams


class ListRootsRequest(WireModel):
    """A ``roots/list`` input request, bare ``{method, params}`` (MRTR-S2b)."""

    method: Literal["roots/list"] = "roots/list"
    params: JSONObject | None = None


# MRTR-S2b: an input request is exactly one of these three; values are bare {method, params}.
InputRequest = Annotated[
    ElicitRequest | CreateMessageRequest | ListRootsRequest, Field(discriminator="method")
]


class InputRequiredResult(WireModel):
    """``resultType: "input_required"``: a round's input requests and/or its ``requestState``."""

    result_type: Literal["input_required"] = RESULT_INPUT_REQUIRED
    input_requests: dict[str, InputRequest] | None = None
    request_state: str | None = None
    meta: JSONObject | None = Field(default=None, alias="_meta")


# --- features: tools, prompts, resources ----------------------------------------------------


class ToolAnnotations(WireModel):
    """Hints about a tool's behaviour (read-only, destructive, idempotent, open world)."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class Tool(WireModel):
    """A tool as ``tools/list`` shows it; ``inputSchema`` defaults to ``{"type": "object"}``."""

    name: str
    title: str | None = None
    description: str | None = None
    input_schema: JSONObject = Field(default_factory=lambda: {"type": "object"})
    output_schema: JSONObject | None = None
    annotations: ToolAnnotations | None = None


class PromptArgument(WireModel):
    """One argument of a prompt, as ``prompts/list`` shows it."""

    name: str
    title: str | None = None
    description: str | None = None
    required: bool | None = None


class Prompt(WireModel):
    """A prompt as ``prompts/list`` shows it."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] | None = None


class PromptMessage(WireModel):
    """One message of a ``prompts/get`` result: a role and one content block."""

    role: Literal["user", "assistant"]
    content: ContentBlock


class Resource(WireModel):
    """A resource as ``resources/list`` shows it."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None


class ResourceTemplate(WireModel):
    """A resource template as ``resources/templates/list`` shows it (``uriTemplate``)."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


class Result(WireModel):
    """Base of complete results: ``resultType`` (``"complete"`` by default) and ``_meta``."""

    result_type: str = RESULT_COMPLETE
    meta: JSONObject | None = Field(default=None, alias="_meta")


class CacheableResult(Result):
    """A result with the caching fields ``ttlMs`` (>= 0) and ``cacheScope`` (CACHE-1)."""

    ttl_ms: int | None = Field(default=None, ge=0)
    cache_scope: Literal["public", "private"] | None = None


class CallToolResult(Result):
    """The complete result of ``tools/call``: content, optional structured content, ``isError``."""

    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = None
    is_error: bool | None = None


class GetPromptResult(Result):
    """The complete result of ``prompts/get``: an optional description and the messages."""

    description: str | None = None
    messages: list[PromptMessage] = Field(default_factory=list)


class ReadResourceResult(CacheableResult):
    """The complete result of ``resources/read``: the contents, with the caching fields."""

    contents: list[ResourceContents] = Field(default_factory=list)


# --- request params -------------------------------------------------------------------------


class CallToolRequestParams(WireModel):
    """Params of ``tools/call``: ``_meta``, tool name, arguments, and on a retry
    ``inputResponses`` and ``requestState``."""

    meta: RequestMeta = Field(alias="_meta")
    name: str
    arguments: JSONObject | None = None
    input_responses: dict[str, JSONObject] | None = None
    request_state: str | None = None


class GetPromptRequestParams(WireModel):
    """Params of ``prompts/get``: ``_meta``, prompt name, string arguments, and on a retry
    ``inputResponses`` and ``requestState``."""

    meta: RequestMeta = Field(alias="_meta")
    name: str
    arguments: dict[str, str] | None = None
    input_responses: dict[str, JSONObject] | None = None
    request_state: str | None = None


class ReadResourceRequestParams(WireModel):
    """Params of ``resources/read``: ``_meta``, the URI, and on a retry ``inputResponses`` and
    ``requestState``."""

    meta: RequestMeta = Field(alias="_meta")
    uri: str
    input_responses: dict[str, JSONObject] | None = None
    request_state: str | None = None


class PaginatedRequestParams(WireModel):
    """Params of the list methods: ``_meta`` and an optional ``cursor``."""

    meta: RequestMeta = Field(alias="_meta")
    cursor: str | None = None


class PromptReference(WireModel):
    """``ref/prompt``: completion for an argument of the prompt ``name``."""

    type: Literal["ref/prompt"] = "ref/prompt"
    name: str
    title: str | None = None


class ResourceTemplateReference(WireModel):
    """``ref/resource``: completion for a variable of the resource template ``uri``."""

    type: Literal["ref/resource"] = "ref/resource"
    uri: str


class CompleteArgument(WireModel):
    """The argument being completed: its name and the value typed so far."""

    name: str
    value: str


class CompleteContext(WireModel):
    """Completion context: the values of arguments already filled in."""

    arguments: dict[str, str] | None = None


class CompleteRequestParams(WireModel):
    """Params of ``completion/complete``: ``_meta``, the reference, the argument and its context."""

    meta: RequestMeta = Field(alias="_meta")
    ref: Annotated[PromptReference | ResourceTemplateReference, Field(discriminator="type")]
    argument: CompleteArgument
    context: CompleteContext | None = None
