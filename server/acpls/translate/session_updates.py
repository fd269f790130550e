"""ACP `session/update` notifications -> the normalised editor updates of editors/protocol.md 5.4.

One `SessionUpdateNormalizer` per session. `normalize(update)` takes the raw `update` object of
one notification and returns the editor updates to send plus the side effects the caller routes
elsewhere (the merged tool call for follow/permissions/diffs, terminal state and output for the
terminal store). Terminal updates never become editor updates here.

Replays (`session/load`, or `session/resume` with replay) are de-duplicated: between
`replay_mode(True)` and `replay_mode(False)`, messages and tool calls the editor already has are
compared with what the replay rebuilds, and only what differs is sent, when the replay ends.
Anything the editor has not seen yet is sent at once, as live updates are.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Any

import attrs

from acpls.acp.converter import structure
from acpls.acp.models import (
    OMITTED,
    AcpModelError,
    CompactionSummaryChunk,
    CompactionUpdate,
    ContentChunk,
    JsonObject,
    MessageUpsert,
    SessionInfoUpdate,
    SessionState,
    ToolCall,
    ToolCallContentChunk,
    ToolCallUpdate,
)
from acpls.speedups import SORT_KEYS, json_dumps
from acpls.translate.tool_calls import AppliedToolCall, ToolCallStore, editor_tool_call

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGES = 5000
AUTO_ID_PREFIX = "acpls-"

_CHUNK_KINDS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})

_ROLES: dict[str, str] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "user_message": "user",
    "agent_message": "agent",
    "agent_thought": "thought",
}


@attrs.define
class Normalized:
    """The result of one `normalize` call.

    `editor_updates`: `acpls/sessionUpdate` `update` objects to send, in order.
    `tool_call`: what a tool-call update did (None when the update was not one, or when it was
    a replayed update of a call the editor already has). `terminal_update`: the raw v2
    `terminal_update` object. `terminal_chunk`: (terminalId, base64 data) of a v2
    `terminal_output_chunk`. `replayed`: the update arrived while replaying."""

    editor_updates: list[JsonObject] = attrs.field(factory=list)
    tool_call: AppliedToolCall | None = None
    terminal_update: JsonObject | None = None
    terminal_chunk: tuple[str, str] | None = None
    replayed: bool = False


class _Fingerprint:
    """A digest of a message's content that does not depend on how it was chunked: runs of
    plain text blocks hash as their concatenated text, other blocks as canonical JSON."""

    __slots__ = ("_done", "_frozen", "_run")

    def __init__(self, blocks: list[Any] | None = None) -> None:
        # Made when first needed: most messages are one run of text and never need it (a
        # replay makes one fingerprint per message, thousands in a row).
        self._done: Any = None
        self._run: Any = None
        self._frozen: bytes | None = None
        for block in blocks or ():
            self.add(block)

    def freeze(self) -> None:
        """The message is whole: keep only its 16-byte digest. The hash objects take about
        900 bytes, and a session remembers thousands of messages."""
        if self._frozen is None:
            self._frozen = self.digest()
            self._done = self._run = None

    def add(self, block: Any) -> None:
        text = _plain_text(block)
        if text is not None:
            self.add_text(text)
            return
        self._thaw()
        self._close_run()
        self._started().update(b"B" + _canonical_json(block))

    def add_text(self, text: str) -> None:
        """`add` of a plain text block, for a caller that has already checked it is one (a
        replayed chunk: `_plain_text_chunk`)."""
        self._thaw()
        if self._run is None:
            self._run = hashlib.blake2b(digest_size=16)
        self._run.update(text.encode("utf-8", "surrogatepass"))

    def _thaw(self) -> None:
        if self._frozen is not None:  # not expected: continue from the digest so far
            self._done = hashlib.blake2b(self._frozen, digest_size=16)
            self._frozen = None

    def _started(self) -> Any:
        if self._done is None:
            self._done = hashlib.blake2b(digest_size=16)
        return self._done

    def _close_run(self) -> None:
        if self._run is not None:
            self._started().update(b"T" + self._run.digest())
            self._run = None

    def digest(self) -> bytes:
        if self._frozen is not None:
            return self._frozen
        done = self._done
        total = done.copy() if done is not None else hashlib.blake2b(digest_size=16)
        if self._run is not None:
            total.update(b"T" + self._run.digest())
        return total.digest()


_PLAIN_CHUNK_KEYS = frozenset({"sessionUpdate", "content", "messageId"})
_TEXT_BLOCK_KEYS = frozenset({"type", "text"})


def _plain_text_chunk(update: JsonObject) -> bool:
    """A chunk `structure(update, ContentChunk)` accepts for sure: a `{"type": "text", "text"}`
    block, a string `messageId` or none, and no other key."""
    content = update.get("content")
    return (
        type(content) is dict
        and content.keys() == _TEXT_BLOCK_KEYS
        and content["type"] == "text"
        and type(content["text"]) is str
        and update.keys() <= _PLAIN_CHUNK_KEYS
        and type(update.get("messageId", "")) is str
    )


# The keys of a tool-call update whose values are plain strings: a call's first line and its
# status changes, nearly all of what a replay holds.
_PLAIN_TOOL_CALL_FIELDS: dict[str, str] = {
    "sessionUpdate": "session_update",
    "toolCallId": "tool_call_id",
    "title": "title",
    "name": "name",
    "kind": "kind",
    "status": "status",
}


def _plain_tool_call(
    update: JsonObject, model: type[ToolCall] | type[ToolCallUpdate]
) -> ToolCall | ToolCallUpdate | None:
    """The model `structure(update, model)` makes, built directly when every key is one of
    `_PLAIN_TOOL_CALL_FIELDS` with a string value (None: any other update, for `structure`).
    cattrs' generated structuring costs about as much as the rest of a tool call's routing."""
    fields = _PLAIN_TOOL_CALL_FIELDS
    kwargs: dict[str, Any] = {}  # strings only, for fields typed `str | ...`
    for key, value in update.items():
        name = fields.get(key)
        if name is None or type(value) is not str:
            return None
        kwargs[name] = value
    if "tool_call_id" not in kwargs:
        return None
    built = model(**kwargs)
    built.wire_order = tuple(update)
    return built


def _plain_text(block: Any) -> str | None:
    if type(block) is dict and block.get("type") == "text" and len(block) == 2:
        text = block.get("text")
        if type(text) is str:
            return text
    return None


def _canonical_json(value: Any) -> bytes:
    try:
        return json_dumps(value, option=SORT_KEYS)
    except TypeError:  # e.g. integers beyond 64 bits: the slow path handles them
        return json.dumps(value, sort_keys=True).encode()


@attrs.define
class _Message:
    role: str
    fingerprint: _Fingerprint


@attrs.define
class _ReplayedMessage:
    """A message rebuilt during a replay, held back until it can be compared."""

    role: str
    blocks: list[Any]
    fingerprint: _Fingerprint


@attrs.define
class _Chain:
    """The message that chunks without a `messageId` continue (v1)."""

    role: str
    message_id: str | None  # None: a replayed message not yet matched or given an id
    auto: bool
    replay: _ReplayedMessage | None = None


class SessionUpdateNormalizer:
    """Normalises the session updates of one session for the negotiated ACP `version`."""

    def __init__(
        self,
        version: int,
        *,
        tool_calls: ToolCallStore | None = None,
        max_messages: int = DEFAULT_MAX_MESSAGES,
    ) -> None:
        self.version = version
        self.tool_calls = tool_calls if tool_calls is not None else ToolCallStore(version)
        self._max_messages = max_messages
        self._next_auto_id = 1
        self._chain: _Chain | None = None
        # Ordered so forgetting the oldest is O(1): a plain dict's first key is found by
        # skipping every slot deleted before it (0.65 against 0.23 us a message, 15,000 in a
        # 20,000-update load).
        self._messages: OrderedDict[str, _Message] = OrderedDict()
        # Whole messages with acpls-made ids, by (role, digest): what a v1 replay can match.
        self._finished: Counter[tuple[str, bytes]] = Counter()
        self._available_modes: list[Any] = []
        # The last snapshot-like editor update sent, by key (plan, usage, state, ...).
        self._snapshots: dict[str, JsonObject] = {}
        self._replay: _Replay | None = None
        self._handlers: dict[str, Callable[[JsonObject, Normalized], None]] = {
            "user_message_chunk": self._chunk,
            "agent_message_chunk": self._chunk,
            "agent_thought_chunk": self._chunk,
            "user_message": self._message,
            "agent_message": self._message,
            "agent_thought": self._message,
            "tool_call": self._tool_call,
            "tool_call_update": self._tool_call,
            "tool_call_content_chunk": self._tool_call,
            "plan": self._plan,
            "plan_update": self._plan_update,
            "available_commands_update": self._available_commands,
            "current_mode_update": self._current_mode,
            "config_option_update": self._config_options,
            "session_info_update": self._session_info,
            "usage_update": self._usage,
            "notice": self._notice,
            "state_update": self._state,
            "compaction_update": self._compaction,
            "compaction_summary_chunk": self._compaction,
            "terminal_update": self._terminal_update,
            "terminal_output_chunk": self._terminal_chunk,
        }

    # ----------------------------------------------------------------------- public API

    @property
    def replaying(self) -> bool:
        return self._replay is not None

    def normalize(self, update: JsonObject) -> Normalized:
        """One `session/update` `update` object -> editor updates and side effects."""
        result = Normalized(replayed=self._replay is not None)
        kind = update.get("sessionUpdate")
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if not isinstance(kind, str) or kind not in _CHUNK_KINDS:
            # Any other update ends the message that id-less chunks were continuing.
            result.editor_updates.extend(self._end_chain())
        if handler is None:
            if _forwardable(kind, "an update of unknown type"):
                result.editor_updates.append(update)  # unknown: forwarded unchanged
            return result
        try:
            handler(update, result)
        except AcpModelError as exc:
            if _forwardable(kind, f"a malformed update ({exc})"):
                log.warning("forwarding a malformed %s update unchanged: %s", kind, exc)
                result.editor_updates.append(update)
        return result

    def begin_turn(self) -> list[JsonObject]:
        """A prompt was sent. v1: the synthetic `running` state (v2 agents report it)."""
        updates = self._end_chain()
        if self.version < 2:
            updates.extend(self._snapshot("state", {"state": SessionState.RUNNING}))
        return updates

    def end_turn(self, stop_reason: str | None) -> list[JsonObject]:
        """The prompt was answered. v1: the synthetic `idle` state with its stop reason."""
        updates = self._end_chain()
        if self.version < 2:
            fields: JsonObject = {"state": SessionState.IDLE}
            if stop_reason is not None:
                fields["stopReason"] = stop_reason
            updates.extend(self._snapshot("state", fields))
        return updates

    def user_prompt(self, content: list[JsonObject]) -> list[JsonObject]:
        """The user's prompt as a `message` (v1 agents do not echo it; v2 agents report it
        with its id, so nothing is made up for them). Recorded so a later replay matches it."""
        updates = self._end_chain()
        if self.version >= 2:
            return updates
        message_id = self._new_auto_id()
        fingerprint = _Fingerprint(content)
        self._remember(message_id, "user", fingerprint)
        self._count_finished("user", fingerprint)
        updates.append(_message_update("user", message_id, list(content)))
        return updates

    def session_setup(self, result: JsonObject) -> list[JsonObject]:
        """Editor updates from a `session/new`, `session/load` or `session/resume` result:
        `modes` (v1), `config_options`, `available_commands` (v2)."""
        updates = self._end_chain()
        modes = result.get("modes")
        if isinstance(modes, dict):
            available = modes.get("availableModes")
            self._available_modes = list(available) if isinstance(available, list) else []
            current = modes.get("currentModeId")
            updates.extend(
                self._snapshot(
                    "modes", {"currentModeId": current, "availableModes": self._available_modes}
                )
            )
        options = result.get("configOptions")
        if isinstance(options, list):
            updates.extend(
                self._snapshot("config_options", {"configOptions": _config_ids(options)})
            )
        commands = result.get("availableCommands")
        if isinstance(commands, list):
            updates.extend(self._snapshot("available_commands", {"availableCommands": commands}))
        return updates

    def replay_mode(self, enabled: bool) -> list[JsonObject]:
        """Start (True) or end (False) a replay. Ending it returns the editor updates for what
        the replay changed in messages, tool calls and session state the editor already had."""
        updates = self._end_chain()
        if enabled:
            if self._replay is None:
                self._replay = _Replay(self.version, Counter(self._finished))
            return updates
        replay, self._replay = self._replay, None
        if replay is not None:
            updates.extend(self._flush_replay(replay))
        return updates

    # ----------------------------------------------------------------------- messages

    def _chunk(self, update: JsonObject, result: Normalized) -> None:
        plain = _plain_text_chunk(update)
        if not plain:
            # Validates; the editor gets the agent's own objects. A plain text chunk (nearly all
            # of a replay) is checked by `_plain_text_chunk` alone: structuring it costs more
            # than everything else acpls does with it.
            structure(update, ContentChunk)
        kind = update["sessionUpdate"]
        role = _ROLES[kind]
        block = update["content"]
        explicit = update.get("messageId")
        out = result.editor_updates
        if isinstance(explicit, str):
            out.extend(self._end_chain())
            self._chain = _Chain(role, explicit, auto=False)
            self._add_block(role, explicit, block, out)
            return
        chain = self._chain
        if chain is None or chain.role != role:
            out.extend(self._end_chain())
            chain = self._start_auto_chain(role)
        held = chain.replay
        if held is not None:
            held.blocks.append(block)
            if plain:
                held.fingerprint.add_text(block["text"])
            else:
                held.fingerprint.add(block)
            return
        assert chain.message_id is not None
        if chain.auto:
            record = self._messages.get(chain.message_id)
            if record is None:  # forgotten by the memory bound: start remembering again
                record = _Message(role, _Fingerprint())
                self._remember(chain.message_id, role, record.fingerprint)
            record.fingerprint.add(block)
            out.append(_chunk_update(role, chain.message_id, block))
        else:
            self._add_block(role, chain.message_id, block, out)

    def _start_auto_chain(self, role: str) -> _Chain:
        if self._replay is not None:
            # Held back until the message is whole: it may be one the editor already has.
            self._chain = _Chain(
                role, None, auto=True, replay=_ReplayedMessage(role, [], _Fingerprint())
            )
        else:
            message_id = self._new_auto_id()
            self._remember(message_id, role, _Fingerprint())
            self._chain = _Chain(role, message_id, auto=True)
        return self._chain

    def _add_block(self, role: str, message_id: str, block: Any, out: list[JsonObject]) -> None:
        """A chunk of a message with a known id (the agent's)."""
        replay = self._replay
        if replay is not None and self._is_old_message(message_id):
            held = replay.messages.get(message_id)
            if held is None:
                held = replay.messages[message_id] = _ReplayedMessage(role, [], _Fingerprint())
            held.blocks.append(block)
            held.fingerprint.add(block)
            return
        record = self._messages.get(message_id)
        if record is None:
            self._remember(message_id, role, _Fingerprint([block]))
        else:
            record.fingerprint.add(block)
        if replay is not None:
            replay.new_messages.add(message_id)
        out.append(_chunk_update(role, message_id, block))

    def _message(self, update: JsonObject, result: Normalized) -> None:
        model = structure(update, MessageUpsert)
        if model.content is OMITTED:
            return  # only metadata changed: nothing the editor shows
        role = _ROLES[model.session_update]
        message_id = model.message_id
        blocks = list(update["content"] or [])
        replay = self._replay
        if replay is not None and self._is_old_message(message_id):
            replay.messages[message_id] = _ReplayedMessage(role, blocks, _Fingerprint(blocks))
            return
        self._remember(message_id, role, _Fingerprint(blocks))
        if replay is not None:
            replay.new_messages.add(message_id)
        result.editor_updates.append(_message_update(role, message_id, blocks))

    def _is_old_message(self, message_id: str) -> bool:
        assert self._replay is not None
        return message_id in self._messages and message_id not in self._replay.new_messages

    def _end_chain(self) -> list[JsonObject]:
        """Close the message id-less chunks were continuing; a replayed one is sent now
        unless the editor already has an identical message."""
        chain, self._chain = self._chain, None
        if chain is None or not chain.auto:
            return []
        if chain.replay is None:
            assert chain.message_id is not None
            record = self._messages.get(chain.message_id)
            if record is not None:
                self._count_finished(chain.role, record.fingerprint)
                record.fingerprint.freeze()  # an acpls-made id gets no more chunks
            return []
        held = chain.replay
        # Whole now (an acpls-made id gets no more chunks): frozen, its digest is made once for
        # the match and the count below, and it drops its hash objects (~900 bytes a message).
        held.fingerprint.freeze()
        key = (held.role, held.fingerprint.digest())
        replay = self._replay
        if replay is not None and replay.finished[key] > 0:
            replay.finished[key] -= 1
            return []
        message_id = self._new_auto_id()
        self._remember(message_id, held.role, held.fingerprint)
        self._count_finished(held.role, held.fingerprint)
        return [_message_update(held.role, message_id, held.blocks)]

    def _new_auto_id(self) -> str:
        message_id = f"{AUTO_ID_PREFIX}{self._next_auto_id}"
        self._next_auto_id += 1
        return message_id

    def _remember(self, message_id: str, role: str, fingerprint: _Fingerprint) -> None:
        messages = self._messages
        if message_id not in messages and len(messages) >= self._max_messages:
            messages.popitem(last=False)  # bounded: forget the oldest
        messages[message_id] = _Message(role, fingerprint)

    def _count_finished(self, role: str, fingerprint: _Fingerprint) -> None:
        key = (role, fingerprint.digest())
        if key in self._finished or len(self._finished) < self._max_messages:
            self._finished[key] += 1

    # ----------------------------------------------------------------------- tool calls

    def _tool_call(self, update: JsonObject, result: Normalized) -> None:
        kind = update["sessionUpdate"]
        model: ToolCall | ToolCallUpdate | ToolCallContentChunk
        if kind == "tool_call":
            model = _plain_tool_call(update, ToolCall) or structure(update, ToolCall)
        elif kind == "tool_call_update":
            model = _plain_tool_call(update, ToolCallUpdate) or structure(update, ToolCallUpdate)
        else:
            model = structure(update, ToolCallContentChunk)
        replay = self._replay
        tool_call_id = model.tool_call_id
        if (
            replay is not None
            and tool_call_id in self.tool_calls
            and tool_call_id not in replay.new_tool_calls
        ):
            if tool_call_id not in replay.tool_calls:
                existing = self.tool_calls.get(tool_call_id)
                assert existing is not None
                replay.tool_calls.put(existing.copy())
            replay.tool_calls.apply(model)
            return
        applied = self.tool_calls.apply(model)
        if replay is not None:
            replay.new_tool_calls.add(tool_call_id)
        result.tool_call = applied
        result.editor_updates.append(_tool_call_update(applied.state.to_editor()))

    # ----------------------------------------------------------------------- session state

    def _plan(self, update: JsonObject, result: Normalized) -> None:
        entries = update.get("entries")
        if not isinstance(entries, list):
            raise AcpModelError("invalid Plan: expected an array @ Plan.entries")
        result.editor_updates.extend(self._snapshot("plan", {"entries": entries}))

    def _plan_update(self, update: JsonObject, result: Normalized) -> None:
        plan = update.get("plan")
        if not isinstance(plan, dict):
            raise AcpModelError("invalid PlanUpdate: expected an object @ PlanUpdate.plan")
        plan_id = plan.get("planId")
        entries = plan.get("entries")
        if plan.get("type") != "items" or not isinstance(plan_id, str):
            result.editor_updates.append(update)  # a plan content kind acpls does not know
            return
        if not isinstance(entries, list):
            raise AcpModelError("invalid PlanItems: expected an array @ PlanItems.entries")
        fields = {"entries": entries, "planId": plan_id}
        result.editor_updates.extend(self._snapshot(f"plan:{plan_id}", fields, kind="plan"))

    def _available_commands(self, update: JsonObject, result: Normalized) -> None:
        commands = update.get("availableCommands")
        if not isinstance(commands, list):
            raise AcpModelError("invalid AvailableCommandsUpdate: expected an array")
        result.editor_updates.extend(
            self._snapshot("available_commands", {"availableCommands": commands})
        )

    def _current_mode(self, update: JsonObject, result: Normalized) -> None:
        current = update.get("currentModeId")
        if not isinstance(current, str):
            raise AcpModelError("invalid CurrentModeUpdate: expected a string @ currentModeId")
        fields = {"currentModeId": current, "availableModes": self._available_modes}
        result.editor_updates.extend(self._snapshot("modes", fields))

    def _config_options(self, update: JsonObject, result: Normalized) -> None:
        options = update.get("configOptions")
        if not isinstance(options, list):
            raise AcpModelError("invalid ConfigOptionUpdate: expected an array @ configOptions")
        result.editor_updates.extend(
            self._snapshot("config_options", {"configOptions": _config_ids(options)})
        )

    def _session_info(self, update: JsonObject, result: Normalized) -> None:
        model = structure(update, SessionInfoUpdate)
        merged = self._current("session_info")
        for key, value in (("title", model.title), ("updatedAt", model.updated_at)):
            if value is None:
                merged.pop(key, None)
            elif value is not OMITTED:
                merged[key] = value
        result.editor_updates.extend(self._snapshot("session_info", merged))

    def _usage(self, update: JsonObject, result: Normalized) -> None:
        fields = _pick(update, ("used", "size"), ("cost",))
        if type(fields.get("used")) is not int or type(fields.get("size")) is not int:
            raise AcpModelError("invalid UsageUpdate: `used` and `size` must be integers")
        result.editor_updates.extend(self._snapshot("usage", fields))

    def _notice(self, update: JsonObject, result: Normalized) -> None:
        fields = _pick(update, ("severity", "title"), ("description",))
        if not isinstance(fields.get("severity"), str) or not isinstance(fields.get("title"), str):
            raise AcpModelError("invalid Notice: `severity` and `title` must be strings")
        result.editor_updates.append({"sessionUpdate": "notice", **fields})

    def _state(self, update: JsonObject, result: Normalized) -> None:
        fields = _pick(update, ("state",), ("stopReason", "error"))
        if not isinstance(fields.get("state"), str):
            raise AcpModelError("invalid StateUpdate: `state` must be a string")
        result.editor_updates.extend(self._snapshot("state", fields))

    def _compaction(self, update: JsonObject, result: Normalized) -> None:
        if update["sessionUpdate"] == "compaction_update":
            model = structure(update, CompactionUpdate)
            key = f"compaction:{model.compaction_id}"
            merged = self._current(key)
            merged["compactionId"] = model.compaction_id
            merged["status"] = model.status
            for name, value in (
                ("summary", update.get("summary", OMITTED)),
                ("error", model.error),
            ):
                if value is None:
                    merged.pop(name, None)
                elif value is not OMITTED:
                    merged[name] = list(value) if name == "summary" else value
        else:
            chunk = structure(update, CompactionSummaryChunk)
            key = f"compaction:{chunk.compaction_id}"
            merged = self._current(key)
            merged["compactionId"] = chunk.compaction_id
            # A first-seen id creates the compaction: it is running until told otherwise.
            merged.setdefault("status", "in_progress")
            merged["summary"] = [*merged.get("summary", ()), update["content"]]
        # Keep the editor's field order stable whichever update came first.
        ordered = _pick(merged, ("compactionId", "status"), ("summary", "error"))
        result.editor_updates.extend(self._snapshot(key, ordered, kind="compaction"))

    def _current(self, key: str) -> JsonObject:
        """A copy of the state last sent (or replayed) under `key`, without `sessionUpdate`."""
        last = None
        if self._replay is not None:
            last = self._replay.snapshots.get(key)
        if last is None:
            last = self._snapshots.get(key)
        if last is None:
            return {}
        return {k: v for k, v in last.items() if k != "sessionUpdate"}

    def _snapshot(
        self, key: str, fields: JsonObject, *, kind: str | None = None
    ) -> list[JsonObject]:
        """Send a state-like update now; while replaying, keep only the latest per key."""
        update = {"sessionUpdate": kind or key, **fields}
        if self._replay is not None:
            self._replay.snapshots[key] = update
            return []
        self._snapshots[key] = update
        return [update]

    # ----------------------------------------------------------------------- terminals

    def _terminal_update(self, update: JsonObject, result: Normalized) -> None:
        if not isinstance(update.get("terminalId"), str):
            raise AcpModelError("invalid TerminalUpdate: `terminalId` must be a string")
        result.terminal_update = update

    def _terminal_chunk(self, update: JsonObject, result: Normalized) -> None:
        terminal_id = update.get("terminalId")
        data = update.get("data")
        if not isinstance(terminal_id, str) or not isinstance(data, str):
            raise AcpModelError("invalid TerminalOutputChunk: `terminalId`, `data` must be strings")
        result.terminal_chunk = (terminal_id, data)

    # ----------------------------------------------------------------------- replay end

    def _flush_replay(self, replay: _Replay) -> list[JsonObject]:
        updates: list[JsonObject] = []
        for message_id, held in replay.messages.items():
            record = self._messages.get(message_id)
            if record is not None and record.fingerprint.digest() == held.fingerprint.digest():
                continue
            self._remember(message_id, held.role, held.fingerprint)
            updates.append(_message_update(held.role, message_id, held.blocks))
        for state in replay.tool_calls:
            current = self.tool_calls.get(state.tool_call_id)
            editor_state = state.to_editor()
            if current is not None and current.to_editor() == editor_state:
                continue
            self.tool_calls.put(state)
            updates.append(_tool_call_update(editor_state))
        for key, update in replay.snapshots.items():
            if self._snapshots.get(key) != update:
                self._snapshots[key] = update
                updates.append(update)
        return updates


@attrs.define
class _Replay:
    """What a replay rebuilt for things the editor already had, compared when it ends."""

    version: int
    finished: Counter[tuple[str, bytes]]  # whole v1 messages still unmatched by the replay
    messages: dict[str, _ReplayedMessage] = attrs.field(factory=dict)
    new_messages: set[str] = attrs.field(factory=set)
    tool_calls: ToolCallStore = attrs.field(init=False)
    new_tool_calls: set[str] = attrs.field(factory=set)
    snapshots: dict[str, JsonObject] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        self.tool_calls = ToolCallStore(self.version)


def _chunk_update(role: str, message_id: str, block: Any) -> JsonObject:
    return {
        "sessionUpdate": "message_chunk",
        "role": role,
        "messageId": message_id,
        "content": block,
    }


# The `sessionUpdate` names of editors/protocol.md 5.4: an editor trusts their shape, so a raw
# update is never forwarded under one of them (v1 `tool_call` and `plan`, `notice`, or an agent
# using a name its version does not define).
EDITOR_KINDS = frozenset(
    {
        "message_chunk",
        "message",
        "tool_call",
        "plan",
        "available_commands",
        "modes",
        "config_options",
        "session_info",
        "usage",
        "state",
        "notice",
        "compaction",
        "auto_permission",
    }
)


def _forwardable(kind: Any, what: str) -> bool:
    """Whether a raw update may reach the editor unchanged; logs why not."""
    if kind is not None and not isinstance(kind, str):
        log.warning("dropping %s: sessionUpdate is %s, not a string", what, type(kind).__name__)
        return False
    if kind in EDITOR_KINDS:
        log.warning("dropping %s named %r: that name is a normalised editor update", what, kind)
        return False
    return True


def _message_update(role: str, message_id: str, blocks: list[Any]) -> JsonObject:
    return {"sessionUpdate": "message", "role": role, "messageId": message_id, "content": blocks}


def _tool_call_update(tool_call: JsonObject) -> JsonObject:
    return {"sessionUpdate": "tool_call", "toolCall": editor_tool_call(tool_call)}


def _pick(source: JsonObject, required: tuple[str, ...], optional: tuple[str, ...]) -> JsonObject:
    """The named keys of `source`, required ones always (None when missing), optional ones
    only when present and not null."""
    fields = {key: source.get(key) for key in required}
    for key in optional:
        value = source.get(key)
        if value is not None:
            fields[key] = value
    return fields


def _config_ids(options: list[Any]) -> list[Any]:
    """One shape for editors: v2 names an option's id `configId`, v1 `id`; give every option a
    `configId` (the agent's other keys, `id` included, stay as sent)."""
    return [
        {**o, "configId": o["id"]}
        if isinstance(o, dict) and "configId" not in o and "id" in o
        else o
        for o in options
    ]
