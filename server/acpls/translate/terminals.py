"""The terminals of every session, as the editor should see them (editors/protocol.md section 6).

`TerminalStore` keeps, per `(sessionId, terminalId)`, the terminal's state (command, cwd, exit
status, the tool call that shows it, owner) and its output bytes, and turns them into the two
editor notifications of editors/protocol.md 5.5 (`acpls/terminalUpdate`) and 5.6
(`acpls/terminalOutput`). It is pure: no I/O, no clock. The server pulls what changed with
`take_output()` and `take_state_changes()` every ~16 ms, so a burst of chunks becomes one
notification per terminal.

Where terminals come from:

- ACP v2 display-only terminals: `terminal_update` (an upsert, `apply_update`) and
  `terminal_output_chunk` (`apply_output_chunk` / `append_chunk`), plus `{type: "terminal"}`
  references in tool calls (`set_tool_call`). References and updates may come in either order; a
  first-seen id creates the terminal with every field unknown.
- Client-owned terminals (ACP v1 `terminal/create`, run by acpls): `open_client_terminal`,
  `append_bytes`, `set_exit_status`, `release`.
- The ACP v1 `_meta` terminal extension (`apply_v1_meta`), which agents send on `tool_call` /
  `tool_call_update` when the client advertises `clientCapabilities._meta.terminal_output: true`
  (claude-agent-acp; codex-acp uses `terminal_output_delta`). No ACP schema defines it; the shapes
  accepted here are what those agents send:

  - `terminal_info: {terminal_id, cwd?, command?}`: the tool call shows this terminal.
  - `terminal_output: {terminal_id, data}` and `terminal_output_delta: {terminal_id, data}`:
    `data` is UTF-8 *text* (not base64) appended to the output, as Zed treats it. An item with
    `"snapshot": true` replaces the output instead. The text comes from a pipe, not a pty, so a
    bare LF becomes CR LF (a terminal would otherwise draw a staircase).
  - `terminal_exit: {terminal_id, exit_code?, signal?}`: the terminal exited.

  `terminalId` / `exitCode` are accepted for the snake-case keys, and a missing terminal id means
  the tool call's id (claude-agent-acp uses the tool call id as terminal id).

  codex-acp 0.16 sends `terminal_info` and `terminal_exit` but never any output: the command's
  output is only in the tool call's `rawOutput` (`formatted_output` / `aggregated_output` /
  `stdout` + `stderr`). `fill_from_raw_output` puts that text into an agent terminal of the tool
  call that has received no output at all, once, when the call ends, so the terminal does not
  stay empty.

Output handling: every chunk is appended as bytes (v1 `_meta` text is kept as text until the
next pull, then turned into CR LF bytes once over the joined text, byte for byte what converting
each chunk on its own gave: `_Output.append_text`); at each pull the bytes not sent yet are
decoded with one incremental UTF-8 decoder per terminal (a code point split across chunks or
pulls comes out whole) and passed through one `TerminalSanitizer` per terminal (an escape sequence
split across chunks comes out whole), once per pull rather than once per chunk. A snapshot makes
the next batch a reset, and so does trimming the scrollback when it cuts bytes not sent yet: that
batch is decoded afresh from the retained bytes, so a flood that trims many times between two
pulls costs one decode.

Scrollback: at most `scrollback_bytes` bytes are kept per terminal. Past that, the oldest bytes
are dropped down to `trim_to` of the limit (a line start if one is near, else a UTF-8 character
boundary), so trimming happens once per `(1 - trim_to) * scrollback_bytes` of output, not once
per chunk. Trimming bytes the editor already has changes nothing it shows (no reset, nothing
sent twice). Pending text never exceeds the scrollback either: text comes from bytes appended
since the last pull, and once a trim cuts into those the batch becomes a reset.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import logging
from collections.abc import Mapping
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Literal, NamedTuple

from attrs import define

from acpls.speedups import b64decode
from acpls.translate.sanitize import TerminalSanitizer

__all__ = [
    "DEFAULT_SCROLLBACK_BYTES",
    "MAX_OUTPUT_CHARS",
    "ExitStatus",
    "OutputBatch",
    "Owner",
    "StateUpdate",
    "TerminalState",
    "TerminalStore",
    "V1OutputSink",
    "split_output",
]

logger = logging.getLogger(__name__)

DEFAULT_SCROLLBACK_BYTES = 4 * 1024 * 1024
DEFAULT_TRIM_TO = 0.5
# Text per `acpls/terminalOutput` at most (editors/protocol.md 5.6): an editor decodes and shows
# one message in one go, so a 1.7 MB message blocked Neovim's loop for a quarter of a second.
MAX_OUTPUT_CHARS = 64 * 1024

Owner = Literal["agent", "client"]

_Utf8Decoder = codecs.getincrementaldecoder("utf-8")
_V1_OUTPUT_KEYS = ("terminal_output", "terminal_output_delta")
# v1 text is converted in batches of about this many bytes: enough to share the per-call costs
# of a chunk, small enough to stay in the CPU cache (one pass over a pull's megabytes was slower
# than converting each 4 KiB chunk on its own).
_PENDING_FLUSH_BYTES = 64 * 1024
_MISSING: Any = object()


@define(slots=True)
class ExitStatus:
    """How a terminal's process ended; any part may be unknown."""

    exit_code: int | None = None
    signal: str | None = None
    meta: dict[str, Any] | None = None

    def to_editor(self) -> dict[str, Any]:
        shown: dict[str, Any] = {}
        if self.exit_code is not None:
            shown["exitCode"] = self.exit_code
        if self.signal is not None:
            shown["signal"] = self.signal
        return shown


@define(slots=True, eq=False)
class TerminalState:
    """Everything known about one terminal except its output (see `TerminalStore`)."""

    session_id: str
    terminal_id: str
    owner: Owner = "agent"
    command: str | None = None
    cwd: str | None = None
    exit_status: ExitStatus | None = None
    size: dict[str, Any] | None = None
    capabilities: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    # `_meta` of the latest output snapshot (scoped to that snapshot, so replaced with it).
    output_meta: dict[str, Any] | None = None
    tool_call_id: str | None = None
    released: bool = False

    @property
    def exited(self) -> bool:
        return self.exit_status is not None

    def to_editor(self, session_id: str | None = None) -> dict[str, Any]:
        """The `acpls/terminalUpdate` params: the whole state, unknown keys left out."""
        shown: dict[str, Any] = {
            "sessionId": self.session_id if session_id is None else session_id,
            "terminalId": self.terminal_id,
        }
        if self.command is not None:
            shown["command"] = self.command
        if self.cwd is not None:
            shown["cwd"] = self.cwd
        if self.exit_status is not None:
            shown["exitStatus"] = self.exit_status.to_editor()
        if self.tool_call_id is not None:
            shown["toolCallId"] = self.tool_call_id
        shown["owner"] = self.owner
        if self.released:
            shown["released"] = True
        return shown


class OutputBatch(NamedTuple):
    """Output of one terminal since the last pull; `reset` means: replace what was shown.
    `dropped` (on a reset only): bytes of the terminal's output before `text` that are not kept
    (the scrollback bound), so the editor can say the pane does not start at the beginning."""

    session_id: str
    terminal_id: str
    text: str
    reset: bool
    dropped: int = 0

    def to_editor(self) -> dict[str, Any]:
        """The `acpls/terminalOutput` params."""
        shown: dict[str, Any] = {
            "sessionId": self.session_id,
            "terminalId": self.terminal_id,
            "text": self.text,
        }
        if self.reset:
            shown["reset"] = True
        if self.dropped:
            shown["dropped"] = self.dropped
        return shown


class StateUpdate(NamedTuple):
    """The `acpls/terminalUpdate` params of one terminal, as of this pull."""

    params: dict[str, Any]


def split_output(batch: OutputBatch, max_chars: int = MAX_OUTPUT_CHARS) -> list[OutputBatch]:
    """`batch` as pieces of at most `max_chars` characters, in order; only the first one keeps
    `reset`. A piece ends after a line break when one is in its last quarter, so a piece rarely
    splits a line (an escape sequence split across pieces is fine: a terminal joins them)."""
    text = batch.text
    if len(text) <= max_chars:
        return [batch]
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, not {max_chars}")
    pieces: list[OutputBatch] = []
    start, reset, dropped = 0, batch.reset, batch.dropped
    while start < len(text):
        end = start + max_chars
        if end < len(text):
            newline = text.rfind("\n", end - max_chars // 4, end)
            if newline != -1:
                end = newline + 1
        pieces.append(batch._replace(text=text[start:end], reset=reset, dropped=dropped))
        start, reset, dropped = end, False, 0
    return pieces


class _Output:
    """One terminal's retained bytes and how many of them the editor has not been sent yet.

    Appending is just bytes: the unsent tail of `data` is decoded and sanitised once per pull,
    not once per chunk, so a flood of small chunks costs one decode per ~16 ms.
    """

    __slots__ = (
        "data",
        "decoder",
        "dropped",
        "limit",
        "pending",
        "pending_bytes",
        "rebuild",
        "received",
        "reset",
        "sanitizer",
        "trim_to",
        "unsent",
    )

    def __init__(self, limit: int, trim_to: float, sanitize: bool) -> None:
        self.data = bytearray()
        self.decoder = _Utf8Decoder(errors="replace")
        self.sanitizer: TerminalSanitizer | None = TerminalSanitizer() if sanitize else None
        self.unsent = 0  # bytes at the end of `data` that no pull has taken yet
        self.reset = False  # the next batch replaces everything shown so far
        self.rebuild = False  # the next batch is decoded afresh from all of `data`
        self.dropped = 0  # bytes trimmed off the front, ever
        self.limit = limit
        self.trim_to = trim_to
        self.received = False  # any output (even empty snapshot) ever came
        # v1 pipe text not turned into bytes yet (`append_text`), and at most how many bytes it
        # becomes.
        self.pending: list[str] = []
        self.pending_bytes = 0

    def append_text(self, text: str) -> None:
        """Append pipe text whose bare LFs become CR LF, exactly as if each chunk were converted
        and encoded on its own (`_crlf`), but with the conversion done once over the joined
        text when the bytes are next needed (`flush`): per chunk it is only a list append.

        The one place where converting the joined text differs from converting each chunk is a
        chunk ending in CR followed by one starting with LF: per chunk that LF is bare (CR CR
        LF), joined it is not (CR LF). An extra CR between them keeps the per-chunk bytes.
        """
        self.received = True
        if not text:
            return  # nothing to add; skipping it keeps the CR check below on the real neighbour
        # At most the bytes this chunk becomes, without a scan (counting LFs cost as much as
        # converting): ASCII (`isascii` reads a flag) at most doubles (every character an LF),
        # any character is at most 4 UTF-8 bytes.
        size = len(text) * (2 if text.isascii() else 4)
        if len(self.data) + self.pending_bytes + size > self.limit:
            # This chunk may make the scrollback trim: convert and append it on its own, as
            # before, so that trimming cuts at the same byte (the pending text alone never
            # trims: its bytes are within the bound).
            self.flush()
            self._append(_crlf(text).encode("utf-8", "replace"))
            return
        pending = self.pending
        if pending and text[0] == "\n" and pending[-1][-1] == "\r":
            pending.append("\r")  # becomes the CR of this LF's CR LF, as per chunk: no size
        pending.append(text)
        self.pending_bytes += size
        if self.pending_bytes >= _PENDING_FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Turn the pending text into bytes (one CR LF pass, one encode, one append)."""
        pending = self.pending
        if not pending:
            return
        text = pending[0] if len(pending) == 1 else "".join(pending)
        self.pending = []
        self.pending_bytes = 0
        self._append(_crlf(text).encode("utf-8", "replace"))  # JSON text may hold lone surrogates

    def append(self, chunk: bytes) -> None:
        self.received = True
        if self.pending:
            self.flush()
        self._append(chunk)

    def _append(self, chunk: bytes) -> None:
        self.data += chunk
        self.unsent += len(chunk)
        if len(self.data) > self.limit:
            self._trim()

    def replace(self, snapshot: bytes) -> None:
        self.received = True
        self.pending = []  # replaced along with everything before it
        self.pending_bytes = 0
        self.data = bytearray(snapshot)
        self.dropped = 0  # a snapshot is the complete output: nothing before it was cut off
        self._start_reset()
        if len(self.data) > self.limit:
            self._trim()

    def set_sanitize(self, sanitize: bool) -> None:
        self.flush()
        if sanitize == (self.sanitizer is not None):
            return
        self.sanitizer = TerminalSanitizer() if sanitize else None
        self._start_reset()  # the view changes as a whole: show it again, filtered the new way

    def set_limit(self, limit: int) -> None:
        self.flush()
        self.limit = limit
        if len(self.data) > limit:
            self._trim()
            self._start_reset()  # a smaller scrollback setting shrinks the editor's view too

    def take(self) -> tuple[str, bool, int] | None:
        """The text since the last take, whether it is a reset and, for a reset, how many bytes
        before the text are not kept; None if there is nothing."""
        if self.pending:
            self.flush()
        if self.rebuild:
            self.decoder = _Utf8Decoder(errors="replace")
            if self.sanitizer is not None:
                self.sanitizer.reset()
            fresh = self.data
        elif self.unsent:
            fresh = self.data[len(self.data) - self.unsent :]
        elif self.reset:
            fresh = b""
        else:
            return None
        text = self.decoder.decode(fresh)
        if self.sanitizer is not None:
            text = self.sanitizer.feed(text)
        self.unsent = 0
        self.rebuild = False
        reset = self.reset
        self.reset = False
        return text, reset, self.dropped if reset else 0

    def tail(self, byte_limit: int | None) -> tuple[str, bool]:
        """The last `byte_limit` retained bytes (cut at a character boundary) as text."""
        self.flush()
        start = 0
        if byte_limit is not None and len(self.data) > byte_limit:
            start = _char_boundary_at_or_after(self.data, len(self.data) - byte_limit)
        text = bytes(self.data[start:]).decode("utf-8", "replace")
        return text, bool(start or self.dropped)

    def _trim(self) -> None:
        data = self.data
        cut = len(data) - int(self.limit * self.trim_to)
        # Start the kept text on a line if one starts soon: no half-line, no half escape sequence.
        newline = data.find(b"\n", cut, min(len(data), cut + max(1, self.limit // 16)))
        cut = newline + 1 if newline != -1 else _char_boundary_at_or_after(data, cut)
        sent = len(data) - self.unsent
        del data[:cut]
        self.dropped += cut
        # Bytes the editor already has may go: its view stays right. Only when unsent bytes are
        # cut off must the editor start over from what is kept.
        if cut > sent:
            self._start_reset()

    def _start_reset(self) -> None:
        self.unsent = 0
        self.reset = True
        self.rebuild = True


def _char_boundary_at_or_after(data: bytes | bytearray, index: int) -> int:
    """`index` moved past UTF-8 continuation bytes (at most 3), so no character is split."""
    stop = min(len(data), index + 3)
    while index < stop and data[index] & 0xC0 == 0x80:
        index += 1
    return index


class _Terminal:
    __slots__ = ("announced", "out", "state")

    def __init__(self, state: TerminalState, out: _Output) -> None:
        self.state = state
        self.out = out
        self.announced = False  # an `acpls/terminalUpdate` of it was pulled (take_in_order)


class V1OutputSink:
    """Appends v1 pipe text to one terminal, as `TerminalStore._v1_output` does."""

    __slots__ = ("_dirty", "terminal")

    def __init__(self, terminal: _Terminal, dirty: dict[_Terminal, None]) -> None:
        self.terminal = terminal
        self._dirty = dirty

    def append(self, text: str) -> None:
        self.terminal.out.append_text(text)
        self._dirty.setdefault(self.terminal)


class TerminalStore:
    """All terminals of all sessions, keyed by (sessionId, terminalId)."""

    def __init__(
        self,
        *,
        scrollback_bytes: int = DEFAULT_SCROLLBACK_BYTES,
        sanitize: bool = True,
        trim_to: float = DEFAULT_TRIM_TO,
    ) -> None:
        _check_limits(scrollback_bytes, trim_to)
        self._scrollback = scrollback_bytes
        self._sanitize = sanitize
        self._trim_to = trim_to
        self._sessions: dict[str, dict[str, _Terminal]] = {}
        # Terminals with output / state not pulled yet, in order of first activity.
        self._output_dirty: dict[_Terminal, None] = {}
        self._state_dirty: dict[_Terminal, None] = {}

    # -- settings -------------------------------------------------------------------------

    @property
    def scrollback_bytes(self) -> int:
        return self._scrollback

    @property
    def sanitize(self) -> bool:
        return self._sanitize

    def configure(
        self, *, scrollback_bytes: int | None = None, sanitize: bool | None = None
    ) -> None:
        """Apply new settings to every terminal now (`terminal.scrollbackBytes`, `rawOutput`)."""
        if scrollback_bytes is not None:
            _check_limits(scrollback_bytes, self._trim_to)
            self._scrollback = scrollback_bytes
        if sanitize is not None:
            self._sanitize = sanitize
        for terminals in self._sessions.values():
            for terminal in terminals.values():
                terminal.out.set_limit(self._scrollback)
                terminal.out.set_sanitize(self._sanitize)
                if terminal.out.reset:
                    self._output_dirty.setdefault(terminal)

    # -- ACP v2 display-only terminals ----------------------------------------------------

    def apply_update(self, session_id: str, update: Mapping[str, Any]) -> None:
        """Apply a v2 `terminal_update`: an upsert where null clears and omitted keeps."""
        terminal_id = update.get("terminalId")
        if not isinstance(terminal_id, str):
            logger.error("terminal_update without a string terminalId ignored: %r", terminal_id)
            return
        terminal = self._terminal(session_id, terminal_id)
        state = terminal.state
        before = state.to_editor()
        self._patch_command(state, update.get("command", _MISSING))
        self._patch_cwd(state, update.get("cwd", _MISSING))
        self._patch_exit_status(state, update.get("exitStatus", _MISSING))
        self._patch_object(state, "size", update.get("size", _MISSING))
        self._patch_object(state, "capabilities", update.get("capabilities", _MISSING))
        self._patch_meta(state, update.get("_meta", _MISSING))
        output = update.get("output", _MISSING)
        if output is not _MISSING:
            self._apply_snapshot(terminal, output)
        if state.to_editor() != before:
            self._state_dirty.setdefault(terminal)

    def apply_output_chunk(self, session_id: str, update: Mapping[str, Any]) -> bool:
        """Apply a v2 `terminal_output_chunk`; False (logged) when it is malformed."""
        terminal_id = update.get("terminalId")
        data = update.get("data")
        if not isinstance(terminal_id, str) or not isinstance(data, str):
            logger.error(
                "terminal_output_chunk needs string terminalId and data; ignored (terminalId=%r)",
                terminal_id,
            )
            return False
        return self.append_chunk(session_id, terminal_id, data)

    def append_chunk(self, session_id: str, terminal_id: str, data_b64: str) -> bool:
        """Append one base64 chunk, decoded on its own. Invalid base64 is logged and dropped."""
        try:
            chunk = b64decode(data_b64)
        except (binascii.Error, ValueError, TypeError) as error:
            logger.error(
                "terminal %s in session %s: output chunk is not valid base64 (%s); dropped",
                terminal_id,
                session_id,
                error,
            )
            return False
        terminal = self._terminal(session_id, terminal_id)
        terminal.out.append(chunk)
        self._output_dirty.setdefault(terminal)
        return True

    def set_tool_call(self, session_id: str, terminal_id: str, tool_call_id: str) -> None:
        """Record that a tool call shows this terminal (the first reference is kept)."""
        terminal = self._terminal(session_id, terminal_id)
        if terminal.state.tool_call_id is None:
            terminal.state.tool_call_id = tool_call_id
            self._state_dirty.setdefault(terminal)

    # -- client-owned terminals -----------------------------------------------------------

    def open_client_terminal(
        self,
        session_id: str,
        terminal_id: str,
        *,
        command: str | None = None,
        cwd: str | None = None,
        tool_call_id: str | None = None,
    ) -> TerminalState:
        """Register a terminal that acpls runs for the agent (ACP v1 `terminal/create`)."""
        terminal = self._terminal(session_id, terminal_id, owner="client")
        state = terminal.state
        state.owner = "client"
        state.command = command
        state.cwd = cwd
        if tool_call_id is not None:
            state.tool_call_id = tool_call_id
        self._state_dirty.setdefault(terminal)
        return state

    def append_bytes(self, session_id: str, terminal_id: str, data: bytes) -> None:
        """Append raw output bytes (client terminals' pty output, decoded v2 chunks)."""
        terminal = self._terminal(session_id, terminal_id)
        terminal.out.append(data)
        self._output_dirty.setdefault(terminal)

    def set_exit_status(
        self,
        session_id: str,
        terminal_id: str,
        *,
        exit_code: int | None = None,
        signal: str | None = None,
    ) -> None:
        """Mark the terminal exited (a client terminal's process ended)."""
        terminal = self._terminal(session_id, terminal_id)
        status = ExitStatus(exit_code=exit_code, signal=signal)
        if terminal.state.exit_status != status:
            terminal.state.exit_status = status
            self._state_dirty.setdefault(terminal)

    def recent_output(
        self, terminal_id: str, session_id: str | None, byte_limit: int
    ) -> tuple[str | None, str, bool] | None:
        """(command, the last `byte_limit` bytes of output as text, whether that is cut) of a
        terminal, released or not; with no `session_id`, of any session. None if unknown."""
        sessions = [session_id] if session_id is not None else list(self._sessions)
        for sid in sessions:
            terminal = self._sessions.get(sid, {}).get(terminal_id)
            if terminal is not None:
                text, truncated = terminal.out.tail(byte_limit)
                return terminal.state.command, text, truncated
        return None

    def release(self, session_id: str, terminal_id: str) -> bool:
        """Mark a terminal released; its output stays. False if the terminal is unknown."""
        terminal = self._sessions.get(session_id, {}).get(terminal_id)
        if terminal is None:
            return False
        if not terminal.state.released:
            terminal.state.released = True
            self._state_dirty.setdefault(terminal)
        return True

    # -- ACP v1 `_meta` terminal extension ------------------------------------------------

    def apply_v1_meta(self, session_id: str, tool_call_id: str, meta: Mapping[str, Any]) -> None:
        """Apply the `terminal_*` keys of a v1 tool call's `_meta` (see the module docstring)."""
        if not isinstance(meta, Mapping):
            logger.error("tool call %s: _meta must be an object; ignored", tool_call_id)
            return
        info = meta.get("terminal_info")
        if info is not None:
            self._v1_info(session_id, tool_call_id, info)
        for key in _V1_OUTPUT_KEYS:
            item = meta.get(key)
            if item is not None:
                self._v1_output(session_id, tool_call_id, key, item)
        exit_item = meta.get("terminal_exit")
        if exit_item is not None:
            self._v1_exit(session_id, tool_call_id, exit_item)

    def v1_output_sink(
        self, session_id: str, tool_call_id: str, meta: Mapping[str, Any]
    ) -> V1OutputSink | None:
        """What `apply_v1_meta(session_id, tool_call_id, {key: {...meta's item, "data": text}})`
        does to the terminal, as one call per text, for a `meta` that holds only one plain
        (not snapshot) output item of a terminal that already shows a tool call; else None.
        The line fast path (core/routing.py) uses it while `current` says it is still the
        store's terminal."""
        if len(meta) != 1:
            return None
        key, item = next(iter(meta.items()))
        if key not in _V1_OUTPUT_KEYS or not isinstance(item, Mapping):
            return None
        terminal_id = _v1_terminal_id(item, tool_call_id, key)
        if terminal_id is None or item.get("snapshot") is True:
            return None
        terminal = self._sessions.get(session_id, {}).get(terminal_id)
        if terminal is None or terminal.state.tool_call_id is None:
            return None
        return V1OutputSink(terminal, self._output_dirty)

    def current(self, sink: V1OutputSink) -> bool:
        """Whether `sink`'s terminal is still this store's (not dropped with its session)."""
        state = sink.terminal.state
        return self._sessions.get(state.session_id, {}).get(state.terminal_id) is sink.terminal

    def _v1_info(self, session_id: str, tool_call_id: str, info: Any) -> None:
        terminal_id = _v1_terminal_id(info, tool_call_id, "terminal_info")
        if terminal_id is None:
            return
        terminal = self._terminal(session_id, terminal_id)
        state = terminal.state
        before = state.to_editor()
        state.tool_call_id = state.tool_call_id or tool_call_id
        self._patch_command(state, info.get("command", _MISSING))
        self._patch_cwd(state, info.get("cwd", _MISSING))
        if state.to_editor() != before:
            self._state_dirty.setdefault(terminal)

    def _v1_output(self, session_id: str, tool_call_id: str, key: str, item: Any) -> None:
        terminal_id = _v1_terminal_id(item, tool_call_id, key)
        if terminal_id is None:
            return
        data = item.get("data")
        if not isinstance(data, str):
            logger.error("%s for terminal %s has no string data; ignored", key, terminal_id)
            return
        terminal = self._terminal(session_id, terminal_id)
        if terminal.state.tool_call_id is None:
            terminal.state.tool_call_id = tool_call_id
            self._state_dirty.setdefault(terminal)
        # The text comes from pipes, not a pty: a bare LF would make a terminal staircase.
        if item.get("snapshot") is True:
            terminal.out.replace(_crlf(data).encode("utf-8", "replace"))
        else:
            terminal.out.append_text(data)  # converted once per pull, not once per chunk
        self._output_dirty.setdefault(terminal)

    def _v1_exit(self, session_id: str, tool_call_id: str, item: Any) -> None:
        terminal_id = _v1_terminal_id(item, tool_call_id, "terminal_exit")
        if terminal_id is None:
            return
        self.set_tool_call(session_id, terminal_id, tool_call_id)
        code = item.get("exit_code", item.get("exitCode"))
        signal = item.get("signal")
        self.set_exit_status(
            session_id,
            terminal_id,
            exit_code=_int_or_none(code, "terminal_exit.exit_code"),
            signal=_str_or_none(signal, "terminal_exit.signal"),
        )

    def fill_from_raw_output(self, session_id: str, tool_call_id: str, raw_output: Any) -> bool:
        """An ended tool call's `rawOutput` text goes into each agent terminal it shows that got
        no output of its own (codex-acp reports output only there); True if any was filled."""
        text = raw_output_text(raw_output)
        if not text:
            return False
        filled = False
        for terminal in self._sessions.get(session_id, {}).values():
            state = terminal.state
            if state.tool_call_id != tool_call_id or state.owner != "agent":
                continue
            if terminal.out.received:
                continue
            terminal.out.append(_crlf(text).encode("utf-8", "replace"))
            self._output_dirty.setdefault(terminal)
            filled = True
        return filled

    # -- queries --------------------------------------------------------------------------

    def state(self, session_id: str, terminal_id: str) -> TerminalState | None:
        terminal = self._sessions.get(session_id, {}).get(terminal_id)
        return terminal.state if terminal else None

    def terminals(self, session_id: str) -> list[TerminalState]:
        return [terminal.state for terminal in self._sessions.get(session_id, {}).values()]

    def output_bytes(self, session_id: str, terminal_id: str) -> bytes:
        """The retained output bytes (empty for an unknown terminal)."""
        terminal = self._sessions.get(session_id, {}).get(terminal_id)
        if terminal is None:
            return b""
        terminal.out.flush()
        return bytes(terminal.out.data)

    def output_text(self, session_id: str, terminal_id: str) -> str:
        """The retained output as text, unsanitised (invalid UTF-8 shows as U+FFFD)."""
        return self.output_bytes(session_id, terminal_id).decode("utf-8", "replace")

    def output_tail(
        self, session_id: str, terminal_id: str, byte_limit: int | None = None
    ) -> tuple[str, bool]:
        """At most `byte_limit` of the newest retained bytes as text, and whether any output
        was cut off (by this limit or by scrollback trimming): the v1 `terminal/output` answer.
        """
        terminal = self._sessions.get(session_id, {}).get(terminal_id)
        if terminal is None:
            return "", False
        return terminal.out.tail(byte_limit)

    def drop_session(self, session_id: str) -> None:
        """Forget every terminal of a session, pending output and state included."""
        for terminal in self._sessions.pop(session_id, {}).values():
            self._output_dirty.pop(terminal, None)
            self._state_dirty.pop(terminal, None)

    # -- pulling changes for the editor ---------------------------------------------------

    def has_changes(self) -> bool:
        return bool(self._output_dirty or self._state_dirty)

    def take_output(self) -> list[OutputBatch]:
        """One batch per terminal with output since the last call, in order of first activity."""
        batches: list[OutputBatch] = []
        for terminal in self._output_dirty:
            taken = terminal.out.take()
            if taken is not None:
                state = terminal.state
                batches.append(OutputBatch(state.session_id, state.terminal_id, *taken))
        self._output_dirty.clear()
        return batches

    def take_in_order(self, max_chars: int = MAX_OUTPUT_CHARS) -> list[OutputBatch | StateUpdate]:
        """Everything the editor has not been sent yet, terminal by terminal, in the order the
        editor must show it: a terminal's output comes before the state update that ends it
        (its exit status), so an editor that writes "process exited" when it learns of the exit
        writes it after the last output line. A terminal the editor has never been told about
        is announced first (without its exit status and release, which follow its output).
        Output comes in pieces of at most `max_chars` characters (`split_output`)."""
        terminals = dict.fromkeys(self._state_dirty)
        terminals.update(dict.fromkeys(self._output_dirty))
        events = self._events(terminals, max_chars)
        self._output_dirty.clear()
        self._state_dirty.clear()
        return events

    def take_session_in_order(
        self, session_id: str, max_chars: int = MAX_OUTPUT_CHARS
    ) -> list[OutputBatch | StateUpdate]:
        """`take_in_order` for one session's terminals, the others' changes left waiting: what
        a session that ends still owes the editor (its terminals' last output and exit)."""
        terminals = {
            t: None
            for t in (*self._state_dirty, *self._output_dirty)
            if t.state.session_id == session_id
        }
        events = self._events(terminals, max_chars)
        for terminal in terminals:
            self._output_dirty.pop(terminal, None)
            self._state_dirty.pop(terminal, None)
        return events

    def _events(
        self, terminals: Mapping[_Terminal, None], max_chars: int
    ) -> list[OutputBatch | StateUpdate]:
        """The editor's events for `terminals` (dirty ones), in order (`take_in_order`)."""
        events: list[OutputBatch | StateUpdate] = []
        for terminal in terminals:
            state = terminal.state
            taken = terminal.out.take() if terminal in self._output_dirty else None
            state_changed = terminal in self._state_dirty
            if taken is not None and state_changed and not terminal.announced:
                early = state.to_editor()
                early.pop("exitStatus", None)
                early.pop("released", None)
                events.append(StateUpdate(early))
                terminal.announced = True
                if early == state.to_editor():
                    state_changed = False
            if taken is not None:
                batch = OutputBatch(state.session_id, state.terminal_id, *taken)
                events.extend(split_output(batch, max_chars))
            if state_changed:
                events.append(StateUpdate(state.to_editor()))
                terminal.announced = True
        return events

    def take_state_changes(self) -> list[TerminalState]:
        """Terminals whose editor-visible state changed since the last call (first-seen ones
        included), in order of first change. Send each as `state.to_editor()`."""
        changed = [terminal.state for terminal in self._state_dirty]
        self._state_dirty.clear()
        return changed

    # -- internals ------------------------------------------------------------------------

    def _terminal(self, session_id: str, terminal_id: str, owner: Owner = "agent") -> _Terminal:
        terminals = self._sessions.get(session_id)
        if terminals is None:
            terminals = self._sessions[session_id] = {}
        terminal = terminals.get(terminal_id)
        if terminal is None:
            # A first-seen id: every field starts unknown, the editor learns of the terminal.
            state = TerminalState(session_id=session_id, terminal_id=terminal_id, owner=owner)
            out = _Output(self._scrollback, self._trim_to, self._sanitize)
            terminal = terminals[terminal_id] = _Terminal(state, out)
            self._state_dirty.setdefault(terminal)
        return terminal

    def _apply_snapshot(self, terminal: _Terminal, output: Any) -> None:
        state = terminal.state
        if output is None:  # null clears the output: an empty snapshot
            snapshot = b""
            state.output_meta = None
        elif isinstance(output, Mapping) and isinstance(output.get("data"), str):
            try:
                snapshot = base64.b64decode(output["data"], validate=True)
            except (binascii.Error, ValueError) as error:
                logger.error(
                    "terminal %s: output snapshot is not valid base64 (%s); output kept as it was",
                    state.terminal_id,
                    error,
                )
                return
            meta = output.get("_meta")
            state.output_meta = dict(meta) if isinstance(meta, Mapping) else None
        else:
            logger.error("terminal %s: output must be {data: base64}; ignored", state.terminal_id)
            return
        terminal.out.replace(snapshot)
        self._output_dirty.setdefault(terminal)

    @staticmethod
    def _patch_command(state: TerminalState, value: Any) -> None:
        if value is _MISSING:
            return
        if value is None or isinstance(value, str):
            state.command = value
        else:
            logger.error("terminal %s: command must be a string; ignored", state.terminal_id)

    @staticmethod
    def _patch_cwd(state: TerminalState, value: Any) -> None:
        if value is _MISSING:
            return
        if value is None:
            state.cwd = None
        elif isinstance(value, str) and _is_absolute(value):
            state.cwd = value
        else:
            logger.error(
                "terminal %s: cwd must be an absolute path; %r ignored", state.terminal_id, value
            )

    @staticmethod
    def _patch_exit_status(state: TerminalState, value: Any) -> None:
        if value is _MISSING:
            return
        if value is None:
            state.exit_status = None
        elif isinstance(value, Mapping):
            meta = value.get("_meta")
            state.exit_status = ExitStatus(
                exit_code=_int_or_none(value.get("exitCode"), "exitStatus.exitCode"),
                signal=_str_or_none(value.get("signal"), "exitStatus.signal"),
                meta=dict(meta) if isinstance(meta, Mapping) else None,
            )
        else:
            logger.error("terminal %s: exitStatus must be an object; ignored", state.terminal_id)

    @staticmethod
    def _patch_object(state: TerminalState, name: str, value: Any) -> None:
        if value is _MISSING:
            return
        if value is None or isinstance(value, Mapping):
            setattr(state, name, None if value is None else dict(value))
        else:
            logger.error("terminal %s: %s must be an object; ignored", state.terminal_id, name)

    @staticmethod
    def _patch_meta(state: TerminalState, value: Any) -> None:
        if value is _MISSING:
            return
        if value is None:
            state.meta = None
        elif isinstance(value, Mapping):
            meta = dict(state.meta or {})
            for key, item in value.items():
                if item is None:
                    meta.pop(key, None)
                else:
                    meta[key] = item
            state.meta = meta
        else:
            logger.error("terminal %s: _meta must be an object; ignored", state.terminal_id)


# Where agents put a finished command's output in `rawOutput`, best first: codex-acp's
# `formatted_output` / `aggregated_output` (stdout and stderr interleaved), then separate
# `stdout` / `stderr`, then a plain `output` (Qwen Code's `shell_result`).
_RAW_OUTPUT_WHOLE = ("formatted_output", "aggregated_output")


def raw_output_text(raw_output: Any) -> str | None:
    """The command output a tool call's `rawOutput` holds, or None if it holds none."""
    if isinstance(raw_output, str):
        return raw_output
    if not isinstance(raw_output, Mapping):
        return None
    for key in _RAW_OUTPUT_WHOLE:
        value = raw_output.get(key)
        if isinstance(value, str):
            return value
    parts = [raw_output.get(k) for k in ("stdout", "stderr")]
    if any(isinstance(p, str) for p in parts):
        return "".join(p for p in parts if isinstance(p, str))
    output = raw_output.get("output")
    return output if isinstance(output, str) else None


def _crlf(text: str) -> str:
    """Every LF not after a CR becomes CR LF. Only one-character searches where it can: CPython
    finds "\\r\\n" about 3x slower than "\\n" (the look-behind regex that says the same was
    slower still). Without CR one replace does it; with long lines (a Python step per line is
    then cheap, judged on the first `_CRLF_SAMPLE_CHARS`) walk from LF to LF and add the CR
    where one is missing, copying nothing when none is; else two replaces."""
    first = text.find("\n")
    if first < 0:
        return text
    if "\r" not in text:
        return text.replace("\n", "\r\n")
    sample = min(len(text), _CRLF_SAMPLE_CHARS)
    if text.count("\n", 0, sample) * _CRLF_SPLIT_LINE_CHARS <= sample:
        return _crlf_long_lines(text, first)
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _crlf_long_lines(text: str, at: int) -> str:
    """`_crlf` for text of long lines whose first LF is at `at`: text that already has a CR
    before every LF (a pty's output, P1's 4 KiB chunks) is returned as it is, 64 KiB in ~4 us
    against ~40 us for splitting it at LF and joining it again."""
    find = text.find
    pieces: list[str] = []
    start = 0
    while at >= 0:
        if text[at - 1 : at] != "\r":  # at 0 the slice is empty: a bare LF
            pieces.append(text[start:at])
            pieces.append("\r")
            start = at
        at = find("\n", at + 1)
    if not pieces:
        return text
    pieces.append(text[start:])
    return "".join(pieces)


# Lines at least this long on average go through `_crlf_long_lines` (measured: at 4 KiB lines
# it is ~10x faster than the two replaces; at a few characters a line it is slower).
_CRLF_SPLIT_LINE_CHARS = 64
_CRLF_SAMPLE_CHARS = 4096


def _check_limits(scrollback_bytes: int, trim_to: float) -> None:
    if scrollback_bytes < 1:
        raise ValueError(f"scrollback_bytes must be positive, not {scrollback_bytes}")
    if not 0.0 <= trim_to < 1.0:
        raise ValueError(f"trim_to must be in [0, 1), not {trim_to}")


def _is_absolute(path: str) -> bool:
    return PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute()


def _v1_terminal_id(item: Any, tool_call_id: str, key: str) -> str | None:
    if not isinstance(item, Mapping):
        logger.error("_meta.%s must be an object; ignored", key)
        return None
    terminal_id = item.get("terminal_id", item.get("terminalId", tool_call_id))
    if not isinstance(terminal_id, str):
        logger.error("_meta.%s.terminal_id must be a string; ignored", key)
        return None
    return terminal_id


def _int_or_none(value: Any, what: str) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    logger.warning("%s must be an integer; %r treated as unknown", what, value)
    return None


def _str_or_none(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    logger.warning("%s must be a string; %r treated as unknown", what, value)
    return None
