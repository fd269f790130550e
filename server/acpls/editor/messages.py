"""The custom `acpls/*` messages, as attrs classes, and the one table of method names.

Field names are the JSON names on the wire (so no renaming layer can drift). A field whose value
is `None` is left out of the JSON: in this protocol an absent key means "unknown"
(editors/protocol.md).
Every class here is documented in editors/protocol.md and has golden fixtures in editors/fixtures/;
tests/unit/test_editor_protocol.py fails when the three disagree.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
import cattrs

FOLLOW_AGENT = "acpls/followAgent"
FOLLOW_STATE = "acpls/followState"
REQUEST_PERMISSION = "acpls/requestPermission"
SESSION_UPDATE = "acpls/sessionUpdate"
SESSION_UPDATES = "acpls/sessionUpdates"
TERMINAL_UPDATE = "acpls/terminalUpdate"
TERMINAL_OUTPUT = "acpls/terminalOutput"
CHANGES = "acpls/changes"
AGENT_STATUS = "acpls/agentStatus"
ELICITATION = "acpls/elicitation"
AUTH_ENV = "acpls/authEnv"
RUN_LOGIN = "acpls/runLogin"
ELICITATION_COMPLETE = "acpls/elicitationComplete"
RESOLVE_CONFLICT = "acpls/resolveConflict"


@attrs.define(kw_only=True)
class FollowAgentParams:
    sessionId: str
    toolCallId: str
    uri: str
    range: dict[str, Any] | None = None
    kind: str | None = None


@attrs.define(kw_only=True)
class FollowStateParams:
    enabled: bool
    reason: Literal["command", "userEdit"] = "command"


@attrs.define(kw_only=True)
class RequestPermissionParams:
    sessionId: str
    toolCall: dict[str, Any]
    options: list[dict[str, Any]]
    title: str | None = None
    description: str | None = None
    subject: dict[str, Any] | None = None
    preview: dict[str, Any] | None = None
    previewProblems: list[str] | None = None
    # What an `allow_always` / `reject_always` answer records (protocol.md 5.3); [] records
    # nothing, absent when no option is an "always" one or rules are off.
    rememberAs: list[dict[str, Any]] | None = None


@attrs.define(kw_only=True)
class RequestPermissionResult:
    optionId: str | None = None


@attrs.define(kw_only=True)
class SessionUpdateParams:
    sessionId: str
    update: dict[str, Any]


@attrs.define(kw_only=True)
class SessionUpdatesParams:
    """Several `acpls/sessionUpdate` updates of one session, in order (editors that declare
    `sessionUpdates`, editors/protocol.md 5.4.1)."""

    sessionId: str
    updates: list[dict[str, Any]]


@attrs.define(kw_only=True)
class TerminalUpdateParams:
    sessionId: str
    terminalId: str
    command: str | None = None
    cwd: str | None = None
    exitStatus: dict[str, Any] | None = None
    toolCallId: str | None = None
    owner: str | None = None
    released: bool | None = None


@attrs.define(kw_only=True)
class TerminalOutputParams:
    sessionId: str
    terminalId: str
    text: str
    reset: bool | None = None
    dropped: int | None = None


@attrs.define(kw_only=True)
class ChangesParams:
    files: list[dict[str, Any]]


@attrs.define(kw_only=True)
class AgentStatusParams:
    state: str
    agent: str
    command: list[str] | None = None
    protocolVersion: int | None = None
    agentInfo: dict[str, Any] | None = None
    message: str | None = None
    # The running agent takes `acpls.steer` (else the front ends only queue).
    canSteer: bool | None = None
    # The running agent takes images in prompts (its promptCapabilities.image), so front ends
    # can refuse a pasted image at once instead of at send time.
    images: bool | None = None
    # Whether this is the default agent (the `agent` setting's); several agents can run at once,
    # each with its own status (editors/protocol.md section 13).
    default: bool | None = None


@attrs.define(kw_only=True)
class ElicitationParams:
    mode: str
    message: str
    sessionId: str | None = None
    elicitationId: str | None = None
    requestedSchema: dict[str, Any] | None = None
    fieldOrder: list[str] | None = None
    url: str | None = None
    requestId: str | None = None


@attrs.define(kw_only=True)
class ElicitationResult:
    action: str
    content: dict[str, Any] | None = None


@attrs.define(kw_only=True)
class ElicitationCompleteParams:
    elicitationId: str
    sessionId: str | None = None


@attrs.define(kw_only=True)
class AuthEnvParams:
    """`acpls/authEnv`: the variables an `env_var` sign-in method needs (section 5.10)."""

    methodId: str
    agent: str
    name: str
    vars: list[dict[str, Any]]
    link: str | None = None


@attrs.define(kw_only=True)
class AuthEnvResult:
    values: dict[str, str]


@attrs.define(kw_only=True)
class RunLoginParams:
    """`acpls/runLogin`: the agent's login command for a `terminal` sign-in method."""

    methodId: str
    name: str
    command: list[str]
    env: dict[str, str]
    cwd: str


@attrs.define(kw_only=True)
class RunLoginResult:
    exitCode: int | None = None


@attrs.define(kw_only=True)
class ResolveConflictParams:
    kind: str
    path: str
    uri: str
    message: str
    mine: str | None = None
    theirs: str | None = None
    sessionId: str | None = None
    requestId: str | None = None


@attrs.define(kw_only=True)
class ResolveConflictResult:
    choice: str | None = None


@attrs.frozen
class MethodSpec:
    method: str
    params: type
    kind: Literal["notification", "request"]
    result: type | None = None


METHODS: dict[str, MethodSpec] = {
    spec.method: spec
    for spec in (
        MethodSpec(FOLLOW_AGENT, FollowAgentParams, "notification"),
        MethodSpec(FOLLOW_STATE, FollowStateParams, "notification"),
        MethodSpec(REQUEST_PERMISSION, RequestPermissionParams, "request", RequestPermissionResult),
        MethodSpec(SESSION_UPDATE, SessionUpdateParams, "notification"),
        MethodSpec(SESSION_UPDATES, SessionUpdatesParams, "notification"),
        MethodSpec(TERMINAL_UPDATE, TerminalUpdateParams, "notification"),
        MethodSpec(TERMINAL_OUTPUT, TerminalOutputParams, "notification"),
        MethodSpec(CHANGES, ChangesParams, "notification"),
        MethodSpec(AGENT_STATUS, AgentStatusParams, "notification"),
        MethodSpec(ELICITATION, ElicitationParams, "request", ElicitationResult),
        MethodSpec(ELICITATION_COMPLETE, ElicitationCompleteParams, "notification"),
        MethodSpec(AUTH_ENV, AuthEnvParams, "request", AuthEnvResult),
        MethodSpec(RUN_LOGIN, RunLoginParams, "request", RunLoginResult),
        MethodSpec(RESOLVE_CONFLICT, ResolveConflictParams, "request", ResolveConflictResult),
    )
}


def _omit_none(converter: cattrs.Converter, cls: type) -> None:
    names = [a.name for a in attrs.fields(cls)]

    def unstructure(obj: Any) -> dict[str, Any]:
        out = {}
        for name in names:
            value = getattr(obj, name)
            if value is not None:
                out[name] = value
        return out

    converter.register_unstructure_hook(cls, unstructure)


def register_message_hooks(converter: cattrs.Converter) -> None:
    """Teach a converter (pygls' own, or a test's) to write these messages without null keys."""
    for spec in METHODS.values():
        _omit_none(converter, spec.params)
        if spec.result is not None:
            _omit_none(converter, spec.result)


def to_json(message: Any) -> dict[str, Any]:
    return {k: v for k, v in attrs.asdict(message, recurse=False).items() if v is not None}


def from_json(method: str, params: dict[str, Any]) -> Any:
    """Parse the params of an `acpls/*` message (used by tests and fixtures)."""
    spec = METHODS[method]
    return _converter.structure(params, spec.params)


_converter = cattrs.Converter(forbid_extra_keys=True)
register_message_hooks(_converter)
