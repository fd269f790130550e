"""Merged tool-call state per session, from ACP v1 and v2 tool-call updates.

- v1 `tool_call` creates (or replaces) the whole call.
- v1 `tool_call_update` and v2 `tool_call_update` are patches: an omitted field is unchanged,
  null clears it, a value replaces it; `content` and `locations` replace the whole collection
  (null and [] both clear it); `_meta` patches by top-level key (a key set to null is removed).
  A first-seen id creates the call (v2 upsert; v1 agents that skip `tool_call` get the same).
- v2 `tool_call_content_chunk` appends one content item (first-seen id creates the call).

Kinds, statuses and content items acpls does not know are kept verbatim. `ToolCallState.to_editor()`
is the merged `toolCall` JSON of editors/protocol.md section 5.4.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import attrs

from acpls.acp.converter import unstructure
from acpls.acp.models import (
    OMITTED,
    DiffV1,
    DiffV2,
    JsonObject,
    TerminalToolCallContent,
    ToolCall,
    ToolCallContent,
    ToolCallContentChunk,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
)

log = logging.getLogger(__name__)

Location = ToolCallLocation

_FINISHED = frozenset({ToolCallStatus.COMPLETED, ToolCallStatus.FAILED, ToolCallStatus.CANCELLED})

DEFAULT_KIND = ToolKind.OTHER
DEFAULT_STATUS = ToolCallStatus.PENDING
DEFAULT_MAX_TOOL_CALLS = 4096


def is_finished(status: str) -> bool:
    """completed, failed or cancelled: the tool call will not change any more."""
    return status in _FINISHED


def is_terminal_status(status: str) -> bool:
    """Same as `is_finished` (a final status, in the state-machine sense)."""
    return status in _FINISHED


def is_in_progress(status: str) -> bool:
    """Not finished: pending, in_progress, paused, and any `_custom` or future status."""
    return status not in _FINISHED


ToolCallMessage = ToolCall | ToolCallUpdate | ToolCallContentChunk


@attrs.define(kw_only=True)
class ToolCallState:
    """One tool call as merged so far. `raw_input`/`raw_output` are OMITTED while unknown."""

    tool_call_id: str
    title: str | None = None
    kind: str = DEFAULT_KIND
    status: str = DEFAULT_STATUS
    name: str | None = None
    content: list[ToolCallContent] = attrs.field(factory=list)
    locations: list[ToolCallLocation] = attrs.field(factory=list)
    raw_input: Any = OMITTED
    raw_output: Any = OMITTED
    capabilities: JsonObject | None = None
    meta: JsonObject | None = None
    # Keys of the agent's tool-call object that ACP does not define, merged by key.
    extra: JsonObject | None = None
    # to_editor() of `content`, kept in step so appending chunks stays O(1) per chunk.
    _content_json: list[Any] | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def finished(self) -> bool:
        return is_finished(self.status)

    def terminal_ids(self) -> list[str]:
        return [c.terminal_id for c in self.content if isinstance(c, TerminalToolCallContent)]

    def diffs(self) -> list[DiffV1 | DiffV2]:
        return [c for c in self.content if isinstance(c, DiffV1 | DiffV2)]

    def copy(self) -> ToolCallState:
        """An independent copy (lists and `_meta` copied; content items are shared, and never
        mutated by the store)."""
        return attrs.evolve(
            self,
            content=list(self.content),
            locations=list(self.locations),
            meta=dict(self.meta) if self.meta is not None else None,
            extra=dict(self.extra) if self.extra is not None else None,
            content_json=list(self._content_json) if self._content_json is not None else None,
        )

    def content_json(self) -> list[Any]:
        if self._content_json is None:
            self._content_json = [unstructure(item) for item in self.content]
        return self._content_json

    def to_editor(self) -> JsonObject:
        """The merged `toolCall` of editors/protocol.md 5.4: keys are absent when unknown."""
        out: JsonObject = {"toolCallId": self.tool_call_id}
        if self.title is not None:
            out["title"] = self.title
        out["kind"] = self.kind
        out["status"] = self.status
        out["content"] = list(self.content_json())
        out["locations"] = [unstructure(location) for location in self.locations]
        if self.raw_input is not OMITTED:
            out["rawInput"] = self.raw_input
        if self.raw_output is not OMITTED:
            out["rawOutput"] = self.raw_output
        if self.name is not None:
            out["name"] = self.name
        if self.capabilities is not None:
            out["capabilities"] = self.capabilities
        if self.meta:
            out["_meta"] = dict(self.meta)
        if self.extra:
            for key, value in self.extra.items():
                out.setdefault(key, value)
        parent = parent_tool_call_id(out)
        if parent is not None:
            out.setdefault("parentToolCallId", parent)
        return out

    def _set_content(self, items: list[ToolCallContent]) -> None:
        self.content = items
        self._content_json = None

    def _append_content(self, item: ToolCallContent) -> None:
        self.content.append(item)
        if self._content_json is not None:
            self._content_json.append(unstructure(item))


@attrs.define
class AppliedToolCall:
    """What one update did: the merged state, and what the follow / terminal code acts on.

    `new_locations`: the update's locations whenever it carried any (each such update moves
    follow). `terminal_ids`: terminal ids this update added to the call's content.
    `diffs_changed`: the call's diff items differ from before the update."""

    state: ToolCallState
    new_locations: list[ToolCallLocation]
    terminal_ids: list[str]
    diffs_changed: bool


class ToolCallStore:
    """The tool calls of one session. `version` is the negotiated ACP version (1 or 2): v1
    leaves a name unchanged on `name: null`, v2 clears it."""

    def __init__(self, version: int, *, max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS) -> None:
        self.version = version
        self._max = max_tool_calls
        self._calls: dict[str, ToolCallState] = {}

    def __contains__(self, tool_call_id: object) -> bool:
        return tool_call_id in self._calls

    def __len__(self) -> int:
        return len(self._calls)

    def __iter__(self) -> Iterator[ToolCallState]:
        return iter(list(self._calls.values()))

    def get(self, tool_call_id: str) -> ToolCallState | None:
        return self._calls.get(tool_call_id)

    def put(self, state: ToolCallState) -> None:
        """Store `state` as the whole current state of its call (replay merge, restore)."""
        if state.tool_call_id not in self._calls:
            self._make_room()
        self._calls[state.tool_call_id] = state

    def apply(self, update: ToolCallMessage) -> AppliedToolCall:
        """Merge one tool-call update into the store and report what it changed."""
        previous = self._calls.get(update.tool_call_id)
        if isinstance(update, ToolCallContentChunk):
            return self._append(previous, update)
        # A v1 `tool_call` replaces the whole call, content included even when it has none.
        carries_content = isinstance(update, ToolCall) or update.content is not OMITTED
        old_diffs = previous.diffs() if previous is not None and carries_content else None
        old_terminals = previous.terminal_ids() if previous is not None and carries_content else []
        state = _merged(previous, update, self.version)
        if old_diffs and isinstance(update, ToolCallUpdate) and update.content:
            _keep_wiped_diffs(state, old_diffs)
        self._store(previous, state)
        added_terminals: list[str] = []
        if isinstance(update.content, list):
            for item in update.content:
                if isinstance(item, TerminalToolCallContent):
                    terminal_id = item.terminal_id
                    if terminal_id not in old_terminals and terminal_id not in added_terminals:
                        added_terminals.append(terminal_id)
        if old_diffs is None:
            diffs_changed = carries_content and bool(state.diffs())
        else:
            diffs_changed = old_diffs != state.diffs()
        locations = list(update.locations) if isinstance(update.locations, list) else []
        return AppliedToolCall(state, locations, added_terminals, diffs_changed)

    def _append(
        self, previous: ToolCallState | None, chunk: ToolCallContentChunk
    ) -> AppliedToolCall:
        item = chunk.content
        added_terminals: list[str] = []
        if isinstance(item, TerminalToolCallContent) and (
            previous is None or item.terminal_id not in previous.terminal_ids()
        ):
            added_terminals.append(item.terminal_id)
        state = _merged(previous, chunk, self.version)
        self._store(previous, state)
        return AppliedToolCall(state, [], added_terminals, isinstance(item, DiffV1 | DiffV2))

    def _store(self, previous: ToolCallState | None, state: ToolCallState) -> None:
        if previous is None:
            self._make_room()
        if state is not previous:
            self._calls[state.tool_call_id] = state

    def preview(self, update: ToolCallMessage) -> ToolCallState:
        """The state `update` would produce, without storing it (e.g. the `toolCall` of a v1
        permission request, shown merged with what the call already was)."""
        previous = self._calls.get(update.tool_call_id)
        return _merged(previous.copy() if previous else None, update, self.version)

    def _make_room(self) -> None:
        """Bound memory: past the limit, forget the oldest finished call (or the oldest)."""
        if len(self._calls) < self._max:
            return
        victim = next((s.tool_call_id for s in self._calls.values() if s.finished), None)
        if victim is None:
            victim = next(iter(self._calls))
        log.debug("forgetting tool call %s (more than %d in the session)", victim, self._max)
        del self._calls[victim]


def _keep_wiped_diffs(state: ToolCallState, old_diffs: list[DiffV1 | DiffV2]) -> None:
    """An update that replaced a call's content with other content (its output, say) and no diff
    would take the edit away from the user's review: agents do this in the wild. The earlier diffs
    stay first, before the new content. An explicit clear (`null` or `[]`) still clears."""
    if state.diffs():
        return
    state._set_content([*old_diffs, *state.content])
    log.warning(
        "tool call %s: an update replaced its content and dropped its diff; the diff is kept",
        state.tool_call_id,
    )


V1_TERMINAL_OUTPUT_META = ("terminal_output", "terminal_output_delta")


def parent_tool_call_id(tool_call: JsonObject) -> str | None:
    """The tool call a sub-agent's tool call belongs to: `parentToolCallId`, or where Claude Code
    puts it (`_meta.claudeCode.parentToolUseId`, the Task tool call's id), so editors need read
    only `parentToolCallId`."""
    parent = tool_call.get("parentToolCallId")
    if isinstance(parent, str) and parent:
        return parent
    meta = tool_call.get("_meta")
    if not isinstance(meta, dict):
        return None
    for value in (meta, *meta.values()):
        if isinstance(value, dict):
            for key in ("parentToolUseId", "parentToolCallId"):
                found = value.get(key)
                if isinstance(found, str) and found:
                    return found
    return None


def editor_tool_call(tool_call: JsonObject) -> JsonObject:
    """`to_editor()` JSON as the editor gets it in a session update: without the v1 `_meta`
    terminal output, which reaches the editor (sanitised) as terminal output instead."""
    meta = tool_call.get("_meta")
    if not isinstance(meta, dict) or not any(k in meta for k in V1_TERMINAL_OUTPUT_META):
        return tool_call
    kept = {k: v for k, v in meta.items() if k not in V1_TERMINAL_OUTPUT_META}
    out = {k: v for k, v in tool_call.items() if k != "_meta"}
    if kept:
        out["_meta"] = kept
    return out


def _merged(previous: ToolCallState | None, update: ToolCallMessage, version: int) -> ToolCallState:
    """`previous` patched in place (or a new state when there is none or `update` is a whole
    v1 `tool_call`)."""
    if isinstance(update, ToolCall):
        return _from_tool_call(update)
    state = previous if previous is not None else ToolCallState(tool_call_id=update.tool_call_id)
    if isinstance(update, ToolCallContentChunk):
        state._append_content(update.content)
    else:
        _patch(state, update, version)
    return state


def _from_tool_call(call: ToolCall) -> ToolCallState:
    state = ToolCallState(tool_call_id=call.tool_call_id)
    _patch(state, call, version=1)
    if isinstance(call.meta, dict):
        state.meta = dict(call.meta)  # a whole call's `_meta` is kept as sent, null values too
    return state


def _patch(state: ToolCallState, update: ToolCall | ToolCallUpdate, version: int) -> None:
    if update.title is not OMITTED:
        state.title = update.title
    # v1: "omitting it or sending null both mean that the existing name is left unchanged".
    if update.name is not OMITTED and (update.name is not None or version >= 2):
        state.name = update.name
    if update.kind is not OMITTED:
        state.kind = DEFAULT_KIND if update.kind is None else update.kind
    if update.status is not OMITTED:
        state.status = DEFAULT_STATUS if update.status is None else update.status
    if update.content is not OMITTED:
        state._set_content(list(update.content) if update.content else [])
    if update.locations is not OMITTED:
        state.locations = list(update.locations) if update.locations else []
    if update.raw_input is not OMITTED:
        state.raw_input = OMITTED if update.raw_input is None else update.raw_input
    if update.raw_output is not OMITTED:
        state.raw_output = OMITTED if update.raw_output is None else update.raw_output
    if isinstance(update, ToolCallUpdate) and update.capabilities is not OMITTED:
        state.capabilities = update.capabilities
    if update.meta is not OMITTED:
        state.meta = _patch_meta(state.meta, update.meta)
    if update.extra:
        state.extra = {**state.extra, **update.extra} if state.extra else dict(update.extra)


def _patch_meta(stored: JsonObject | None, patch: JsonObject | None) -> JsonObject | None:
    """ACP metadata patch: null clears; an object patches by top-level key, a key set to null
    is removed, other values replace the key's value (nested objects are not merged)."""
    if patch is None:
        return None
    merged = dict(stored) if stored else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged or None
