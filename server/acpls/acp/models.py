"""attrs models of the ACP messages acpls sends and receives, for ACP v1 and v2: those it decodes
or builds. Session updates that translate/session_updates.py checks by hand on the hot path
(plan, usage, notice, state, modes, commands, config options, terminals) have no model here.

Wire names are camelCase; attribute names are their snake_case form (`_meta` is `meta`). The
converter in `acpls.acp.converter` derives one from the other, so a field only has to be declared.

Three rules keep every message lossless:

- Optional fields distinguish "absent" from JSON `null`: they default to `OMITTED` (absent on the
  wire), `None` is an explicit `null`, anything else is a value. That is exactly the patch
  semantics of ACP v2 upserts (omitted = unchanged, null = cleared) and makes round trips exact.
- Enums are open: kinds, statuses, stop reasons... are plain `str`. The classes below only name
  the known values; `_custom` and future values pass through untouched.
- Unknown payloads survive: a content block, tool-call content item or permission outcome of an
  unknown `type` is kept as a `RawItem` holding the agent's dict, and
  unknown keys of known objects land in `extra` and are written back by `unstructure`.
"""

from __future__ import annotations

import enum
from typing import Any, Final, TypeAlias

import attrs

JsonObject: TypeAlias = dict[str, Any]


class AcpModelError(ValueError):
    """An ACP payload does not fit its model; the message names the field that was wrong."""


class Omitted(enum.Enum):
    """The type of `OMITTED`: a field that is absent on the wire (not the same as JSON null)."""

    OMITTED = "OMITTED"

    def __repr__(self) -> str:
        return "OMITTED"

    def __bool__(self) -> bool:
        return False


OMITTED: Final = Omitted.OMITTED


# --------------------------------------------------------------------------- open enums


class _OpenEnum:
    """Names of the known values of an open ACP enum; any other string is valid too."""

    KNOWN: frozenset[str] = frozenset()

    @classmethod
    def is_known(cls, value: str) -> bool:
        return value in cls.KNOWN


class ToolKind(_OpenEnum):
    READ: Final = "read"
    EDIT: Final = "edit"
    DELETE: Final = "delete"
    MOVE: Final = "move"
    SEARCH: Final = "search"
    EXECUTE: Final = "execute"
    THINK: Final = "think"
    FETCH: Final = "fetch"
    SWITCH_MODE: Final = "switch_mode"
    OTHER: Final = "other"
    KNOWN = frozenset({READ, EDIT, DELETE, MOVE, SEARCH, EXECUTE, THINK, FETCH, SWITCH_MODE, OTHER})


class ToolCallStatus(_OpenEnum):
    PENDING: Final = "pending"
    IN_PROGRESS: Final = "in_progress"
    PAUSED: Final = "paused"  # v2: started, not running now, not finished
    COMPLETED: Final = "completed"
    FAILED: Final = "failed"
    CANCELLED: Final = "cancelled"
    KNOWN = frozenset({PENDING, IN_PROGRESS, PAUSED, COMPLETED, FAILED, CANCELLED})


class SessionState(_OpenEnum):
    RUNNING: Final = "running"
    IDLE: Final = "idle"
    REQUIRES_ACTION: Final = "requires_action"
    KNOWN = frozenset({RUNNING, IDLE, REQUIRES_ACTION})


class SessionUpdateKind(_OpenEnum):
    """The `sessionUpdate` discriminator values of both versions."""

    USER_MESSAGE_CHUNK: Final = "user_message_chunk"
    AGENT_MESSAGE_CHUNK: Final = "agent_message_chunk"
    AGENT_THOUGHT_CHUNK: Final = "agent_thought_chunk"
    USER_MESSAGE: Final = "user_message"  # v2
    AGENT_MESSAGE: Final = "agent_message"  # v2
    AGENT_THOUGHT: Final = "agent_thought"  # v2
    TOOL_CALL: Final = "tool_call"  # v1
    TOOL_CALL_UPDATE: Final = "tool_call_update"
    TOOL_CALL_CONTENT_CHUNK: Final = "tool_call_content_chunk"  # v2
    TERMINAL_UPDATE: Final = "terminal_update"  # v2
    TERMINAL_OUTPUT_CHUNK: Final = "terminal_output_chunk"  # v2
    PLAN: Final = "plan"  # v1
    PLAN_UPDATE: Final = "plan_update"  # v2
    AVAILABLE_COMMANDS_UPDATE: Final = "available_commands_update"
    CURRENT_MODE_UPDATE: Final = "current_mode_update"  # v1
    CONFIG_OPTION_UPDATE: Final = "config_option_update"
    SESSION_INFO_UPDATE: Final = "session_info_update"
    USAGE_UPDATE: Final = "usage_update"
    NOTICE: Final = "notice"
    STATE_UPDATE: Final = "state_update"  # v2
    COMPACTION_UPDATE: Final = "compaction_update"
    COMPACTION_SUMMARY_CHUNK: Final = "compaction_summary_chunk"
    KNOWN = frozenset(
        {
            USER_MESSAGE_CHUNK,
            AGENT_MESSAGE_CHUNK,
            AGENT_THOUGHT_CHUNK,
            USER_MESSAGE,
            AGENT_MESSAGE,
            AGENT_THOUGHT,
            TOOL_CALL,
            TOOL_CALL_UPDATE,
            TOOL_CALL_CONTENT_CHUNK,
            TERMINAL_UPDATE,
            TERMINAL_OUTPUT_CHUNK,
            PLAN,
            PLAN_UPDATE,
            AVAILABLE_COMMANDS_UPDATE,
            CURRENT_MODE_UPDATE,
            CONFIG_OPTION_UPDATE,
            SESSION_INFO_UPDATE,
            USAGE_UPDATE,
            NOTICE,
            STATE_UPDATE,
            COMPACTION_UPDATE,
            COMPACTION_SUMMARY_CHUNK,
        }
    )


# --------------------------------------------------------------------------- base types


@attrs.define(kw_only=True)
class AcpModel:
    """Base of every ACP object model.

    `extra` holds the keys of the wire object that the model does not declare (None when there
    were none, so the common case allocates nothing); `unstructure` writes them back.
    `wire_order` is the key order of the object it was structured from, so `unstructure` writes
    the same bytes back whatever order the sender used (None: declaration order).
    """

    extra: JsonObject | None = attrs.field(default=None, repr=False)
    wire_order: tuple[str, ...] | None = attrs.field(default=None, repr=False, eq=False)


@attrs.define
class RawItem:
    """A payload of a type acpls does not know, kept as the agent's JSON object."""

    data: JsonObject

    @property
    def type(self) -> Any:
        return self.data.get("type")


# --------------------------------------------------------------------------- content blocks


@attrs.define(kw_only=True)
class TextContent(AcpModel):
    type: str = "text"
    text: str
    annotations: JsonObject | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class ImageContent(AcpModel):
    type: str = "image"
    data: str
    mime_type: str
    uri: str | Omitted | None = OMITTED
    annotations: JsonObject | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class AudioContent(AcpModel):
    type: str = "audio"
    data: str
    mime_type: str
    annotations: JsonObject | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class ResourceLink(AcpModel):
    type: str = "resource_link"
    name: str
    uri: str
    title: str | Omitted | None = OMITTED
    description: str | Omitted | None = OMITTED
    mime_type: str | Omitted | None = OMITTED
    size: int | Omitted | None = OMITTED
    icons: list[JsonObject] | Omitted | None = OMITTED  # v2
    annotations: JsonObject | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class TextResourceContents(AcpModel):
    uri: str
    text: str
    mime_type: str | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class BlobResourceContents(AcpModel):
    uri: str
    blob: str
    mime_type: str | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


EmbeddedResourceResource: TypeAlias = TextResourceContents | BlobResourceContents | RawItem


@attrs.define(kw_only=True)
class EmbeddedResource(AcpModel):
    type: str = "resource"
    resource: EmbeddedResourceResource
    annotations: JsonObject | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | RawItem
)

# --------------------------------------------------------------------------- tool calls


@attrs.define(kw_only=True)
class ToolCallLocation(AcpModel):
    path: str
    line: int | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


Location: TypeAlias = ToolCallLocation


@attrs.define(kw_only=True)
class ContentToolCallContent(AcpModel):
    """`{"type": "content", "content": ContentBlock}`."""

    type: str = "content"
    content: ContentBlock
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class DiffV1(AcpModel):
    """ACP v1 diff: one file's whole old and new text."""

    type: str = "diff"
    path: str
    old_text: str | Omitted | None = OMITTED
    new_text: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class DiffV2(AcpModel):
    """ACP v2 diff: authoritative `changes` (kept raw, their operations are open) and a patch."""

    type: str = "diff"
    changes: list[JsonObject]
    patch: JsonObject | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class TerminalToolCallContent(AcpModel):
    """`{"type": "terminal", "terminalId"}`: a terminal shown inside a tool call."""

    type: str = "terminal"
    terminal_id: str
    meta: JsonObject | Omitted | None = OMITTED


ToolCallContent: TypeAlias = (
    ContentToolCallContent | DiffV1 | DiffV2 | TerminalToolCallContent | RawItem
)


@attrs.define(kw_only=True)
class ToolCall(AcpModel):
    """ACP v1 `tool_call`: creates (or replaces) a whole tool call."""

    session_update: str | Omitted = OMITTED
    tool_call_id: str
    title: str | Omitted | None = OMITTED
    name: str | Omitted | None = OMITTED
    kind: str | Omitted | None = OMITTED
    status: str | Omitted | None = OMITTED
    content: list[ToolCallContent] | Omitted | None = OMITTED
    locations: list[ToolCallLocation] | Omitted | None = OMITTED
    raw_input: Any = OMITTED
    raw_output: Any = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class ToolCallUpdate(AcpModel):
    """v1 `tool_call_update` (a patch) and v2 `tool_call_update` (an upsert), and the `toolCall`
    of a permission request. Every field but the id is a patch: OMITTED = unchanged, None =
    cleared, a value replaces. `session_update` is OMITTED where the object is not an update."""

    session_update: str | Omitted = OMITTED
    tool_call_id: str
    name: str | Omitted | None = OMITTED
    title: str | Omitted | None = OMITTED
    kind: str | Omitted | None = OMITTED
    status: str | Omitted | None = OMITTED
    content: list[ToolCallContent] | Omitted | None = OMITTED
    locations: list[ToolCallLocation] | Omitted | None = OMITTED
    raw_input: Any = OMITTED
    raw_output: Any = OMITTED
    capabilities: JsonObject | Omitted | None = OMITTED  # v2
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class ToolCallContentChunk(AcpModel):
    """v2: one content item appended to a tool call (first-seen id creates it)."""

    session_update: str = SessionUpdateKind.TOOL_CALL_CONTENT_CHUNK
    tool_call_id: str
    content: ToolCallContent
    meta: JsonObject | Omitted | None = OMITTED


# --------------------------------------------------------------------------- other session updates


@attrs.define(kw_only=True)
class ContentChunk(AcpModel):
    """`user_message_chunk`, `agent_message_chunk`, `agent_thought_chunk` (v1 id optional)."""

    session_update: str
    content: ContentBlock
    message_id: str | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class MessageUpsert(AcpModel):
    """v2 `user_message`, `agent_message`, `agent_thought`: content replaces the whole message."""

    session_update: str
    message_id: str
    content: list[ContentBlock] | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class SessionInfoUpdate(AcpModel):
    """Patch of the session's title / last activity (null clears)."""

    session_update: str = SessionUpdateKind.SESSION_INFO_UPDATE
    title: str | Omitted | None = OMITTED
    updated_at: str | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class CompactionUpdate(AcpModel):
    session_update: str = SessionUpdateKind.COMPACTION_UPDATE
    compaction_id: str
    status: str
    summary: list[ContentBlock] | Omitted | None = OMITTED
    error: str | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class CompactionSummaryChunk(AcpModel):
    session_update: str = SessionUpdateKind.COMPACTION_SUMMARY_CHUNK
    compaction_id: str
    content: ContentBlock
    meta: JsonObject | Omitted | None = OMITTED


# --------------------------------------------------------------------------- shared objects


@attrs.define(kw_only=True)
class Implementation(AcpModel):
    name: str
    version: str
    title: str | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class EnvVariable(AcpModel):
    name: str
    value: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class PermissionOption(AcpModel):
    option_id: str
    name: str
    kind: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class SelectedPermissionOutcome(AcpModel):
    outcome: str = "selected"
    option_id: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class CancelledPermissionOutcome(AcpModel):
    outcome: str = "cancelled"
    meta: JsonObject | Omitted | None = OMITTED


RequestPermissionOutcome: TypeAlias = (
    SelectedPermissionOutcome | CancelledPermissionOutcome | RawItem
)


# --------------------------------------------------------------------------- sent by acpls


@attrs.define(kw_only=True)
class InitializeRequest(AcpModel):
    """`initialize` params. v1 reads `clientCapabilities`/`clientInfo`, v2 `capabilities`/`info`;
    acpls' "auto" mode sends both sets (see `acpls.acp.converter.initialize_params`)."""

    protocol_version: int
    client_capabilities: JsonObject | Omitted = OMITTED  # v1
    client_info: Implementation | Omitted | None = OMITTED  # v1
    capabilities: JsonObject | Omitted = OMITTED  # v2
    info: Implementation | Omitted = OMITTED  # v2 (required there)
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class SetSessionConfigOptionRequest(AcpModel):
    """`session/set_config_option`. `type`: v1 sends "boolean" for booleans and nothing for
    value ids; v2 always sends it ("id" or "boolean"). Use `set_config_option_params`."""

    session_id: str
    config_id: str
    type: str | Omitted = OMITTED
    value: Any
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class RequestPermissionResponse(AcpModel):
    outcome: RequestPermissionOutcome
    meta: JsonObject | Omitted | None = OMITTED


# --------------------------------------------------------------------------- received by acpls


@attrs.define(kw_only=True)
class SetSessionConfigOptionResponse(AcpModel):
    """The full set of the session's config options after the change, each kept as the agent's
    object (the editor shows them; acpls reads only the mode option's id and values)."""

    config_options: list[JsonObject]
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class RequestPermissionRequest(AcpModel):
    """`session/request_permission`. v1 carries `toolCall`; v2 `title`, `description` and an
    open `subject` (kept raw; `acpls.acp.converter.permission_tool_call` reads the tool call of
    either version)."""

    session_id: str
    options: list[PermissionOption]
    tool_call: ToolCallUpdate | Omitted | None = OMITTED  # v1
    title: str | Omitted | None = OMITTED  # v2
    description: str | Omitted | None = OMITTED  # v2
    subject: JsonObject | Omitted | None = OMITTED  # v2
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class ReadTextFileRequest(AcpModel):
    session_id: str
    path: str
    line: int | Omitted | None = OMITTED
    limit: int | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class WriteTextFileRequest(AcpModel):
    session_id: str
    path: str
    content: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class CreateTerminalRequest(AcpModel):
    session_id: str
    command: str
    args: list[str] | Omitted | None = OMITTED
    env: list[EnvVariable] | Omitted | None = OMITTED
    cwd: str | Omitted | None = OMITTED
    output_byte_limit: int | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class TerminalOutputRequest(AcpModel):
    session_id: str
    terminal_id: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class WaitForTerminalExitRequest(AcpModel):
    session_id: str
    terminal_id: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class KillTerminalRequest(AcpModel):
    session_id: str
    terminal_id: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class ReleaseTerminalRequest(AcpModel):
    session_id: str
    terminal_id: str
    meta: JsonObject | Omitted | None = OMITTED


# --------------------------------------------------------------------------- questions

RequestId: TypeAlias = int | str
"""A JSON-RPC request id (`RequestId` in the schema: an integer or a string)."""


@attrs.define(kw_only=True)
class CreateElicitationRequest(AcpModel):
    """`elicitation/create` (v1 unstable, v2). `mode` is an open enum ("form", "url"); a form's
    `requestedSchema` is a JSON Schema the editor renders, kept as the agent's object. Scope:
    a session (`sessionId`, optionally `toolCallId`) or a request outside any (`requestId`)."""

    message: str
    mode: str | Omitted = OMITTED
    requested_schema: JsonObject | Omitted = OMITTED  # form
    url: str | Omitted = OMITTED  # url
    elicitation_id: str | Omitted = OMITTED  # url
    session_id: str | Omitted = OMITTED
    tool_call_id: str | Omitted | None = OMITTED
    request_id: RequestId | Omitted | None = OMITTED
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class CompleteElicitationNotification(AcpModel):
    """`elicitation/complete`: the agent's word that a URL question's outside flow is done."""

    elicitation_id: str
    meta: JsonObject | Omitted | None = OMITTED


@attrs.define(kw_only=True)
class CreateElicitationResponse(AcpModel):
    """The answer to `elicitation/create`: `action` is an open enum ("accept", "decline",
    "cancel"); `content` (field name -> value) comes only with "accept"."""

    action: str
    content: JsonObject | Omitted = OMITTED
    meta: JsonObject | Omitted | None = OMITTED
