"""The live markdown transcript of a session, for editors without the acpls protocol.

Generic-mode editors (Helix, eglot, Kakoune) open this file with `window/showDocument` and read the
conversation there. It lives in acpls' state directory, never in the workspace, and is written
append-only (a long session costs no rewrites); writes are batched per pump flush. The file is
private (0600 in a 0700 folder, services/private_files.py), and each write passes through the
redactor of the secrets acpls knows (core/secrets.py): a terminal that prints an API key leaves
`[redacted: NAME]` here, even when the key arrives split across two writes.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from acpls.services import private_files
from acpls.translate import usage
from acpls.translate.redact import RedactingStream, Redactor

logger = logging.getLogger(__name__)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
TERMINAL_TEXT_LIMIT = 64 * 1024
# The text a tool call shows as its content (a command's output for Qwen Code and Copilot CLI),
# written once when the call ends, at most this much of it.
TOOL_TEXT_LIMIT = 8 * 1024
ENDED = frozenset({"completed", "failed", "cancelled"})
STATUS_MARK = {
    "pending": "…",
    "in_progress": "⟳",
    "completed": "✓",
    "failed": "✗",
    "cancelled": "⊘",
    "paused": "⏸",
}


def _safe_name(session_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", session_id)[:120] or "session"


_HEADER = re.compile(r"^# acpls session (\S+) \((.*)\)$")


def stored_transcripts(state_dir: Path, limit: int = 20) -> list[tuple[str, str, Path]]:
    """`(session id, "agent, time", path)` of the transcripts on disk, newest first: sessions
    acpls no longer has open (an agent restarted or switched) can still be handed on."""
    directory = state_dir / "transcripts"
    try:
        files = sorted(directory.glob("*.md"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return []
    out: list[tuple[str, str, Path]] = []
    for path in files:
        try:
            with path.open(encoding="utf-8", errors="replace") as handle:
                first = handle.readline().rstrip("\n")
        except OSError:
            continue
        match = _HEADER.match(first)
        if match is not None:
            out.append((match.group(1), match.group(2), path))
        if len(out) >= limit:
            break
    return out


def stored_transcript(state_dir: Path, session_id: str) -> tuple[str, Path] | None:
    """The transcript on disk of `session_id` and its "agent, time" label, if there is one."""
    path = state_dir / "transcripts" / f"{_safe_name(session_id)}.md"
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            match = _HEADER.match(handle.readline().rstrip("\n"))
    except OSError:
        return None
    if match is None or match.group(1) != session_id:
        return None
    return match.group(2), path


class Transcript:
    def __init__(
        self, path: Path, agent: str, redactor: Callable[[], Redactor] | None = None
    ) -> None:
        self.path = path
        self.agent = agent
        # Everything written is redacted: each text the agent streams in pieces (a role's
        # message chunks, a terminal's output) through its own stream, which holds back what
        # could begin a secret until its next piece, even when other blocks come between them
        # in the file (a terminal's output is written when the pump flushes); the rest whole.
        no_secrets = Redactor()
        self._redactor = redactor or (lambda: no_secrets)
        self._streams: dict[str, RedactingStream] = {}
        self._pending: list[str] = []
        self._role: str | None = None
        self._tool_status: dict[str, str] = {}
        self._terminal_bytes: dict[str, int] = {}
        self._usage: str | None = None
        self._usage_warning = usage.WarnOnce()
        self._mode: str | None = None

    @classmethod
    def create(
        cls,
        state_dir: Path,
        session_id: str,
        agent: str,
        redactor: Callable[[], Redactor] | None = None,
    ) -> Transcript:
        directory = state_dir / "transcripts"
        try:
            private_files.make_dir(directory)
        except OSError as exc:
            logger.warning("cannot make the transcripts folder %s: %s", directory, exc)
        path = directory / f"{_safe_name(session_id)}.md"
        transcript = cls(path, agent, redactor)
        stamp = time.strftime("%Y-%m-%d %H:%M")
        header = f"# acpls session {session_id} ({agent}, {stamp})\n"
        transcript._write(transcript._redactor().redact(header), "w")
        return transcript

    def _append(self, text: str) -> None:
        self._pending.append(self._redactor().redact(text))

    def _streamed(self, source: str, piece: str) -> str:
        """`piece` of the text `source` streams, redacted; may hold back its end."""
        stream = self._streams.get(source)
        if stream is None:
            stream = self._streams[source] = RedactingStream(self._redactor)
        return stream.feed(piece)

    def _streams_ended(self) -> None:
        """What every stream still holds, written: its text is complete."""
        for stream in self._streams.values():
            if rest := stream.end():
                self._pending.append(rest)

    def _block(self, role: str) -> None:
        if self._role != role:
            label = {"user": "You", "agent": self.agent, "thought": f"{self.agent} (thinking)"}
            self._append(f"\n\n**{label.get(role, role)}:** ")
            self._role = role

    def user_prompt(self, text: str) -> None:
        self._block("user")
        self._append(text)
        self._role = None

    def add_update(self, update: dict[str, Any]) -> str | None:
        """Write the update; returns a warning for the user when the context gets nearly full."""
        kind = update.get("sessionUpdate")
        if kind == "message_chunk":
            content = update.get("content")
            if update.get("role") == "user":
                return None  # the prompt is written by user_prompt
            role = str(update.get("role", "agent"))
            self._block(role)
            self._pending.append(self._streamed(f"message:{role}", _content_text(content)))
        elif kind == "message":
            if update.get("role") == "user":
                return None  # the prompt is written by user_prompt
            self._block(str(update.get("role", "agent")))
            self._append(_blocks_text(update.get("content") or []))
        elif kind == "tool_call":
            self._tool_call(update.get("toolCall") or {})
        elif kind == "plan":
            entries = update.get("entries") or []
            lines = [
                f"- [{'x' if e.get('status') == 'completed' else ' '}] {e.get('content', '')}"
                for e in entries
                if isinstance(e, dict)
            ]
            self._role = None
            self._append("\n\n**Plan:**\n" + "\n".join(lines))
        elif kind == "usage":
            self._usage = usage.describe(update) or self._usage
            if self._usage is not None and self._usage_warning.crossed(update):
                warning = f"the agent's context is nearly full ({self._usage})"
                self._role = None
                self._append(f"\n\n> warning: {warning}")
                return warning
        elif kind in ("modes", "config_options"):
            self._mode_shown(update)
        elif kind == "notice":
            self._role = None
            self._append(f"\n\n> {update.get('severity', 'info')}: {update.get('title', '')}")
        return None

    def _mode_shown(self, update: dict[str, Any]) -> None:
        """A line when the session's mode changes (generic editors have no other place that
        shows it): `modes` (v1) or the config option of category `mode`."""
        current, name = _current_mode(update)
        if current is None or current == self._mode:
            return
        self._mode = current
        self._role = None
        shown = f"{name} (`{current}`)" if name and name != current else f"`{current}`"
        self._append(f"\n\n> mode: {shown}")

    def _tool_call(self, call: dict[str, Any]) -> None:
        call_id = str(call.get("toolCallId", ""))
        status = str(call.get("status") or "pending")
        if self._tool_status.get(call_id) == status:
            return
        self._tool_status[call_id] = status
        mark = STATUS_MARK.get(status, "•")
        title = call.get("title") or call_id
        kind = call.get("kind")
        self._role = None
        self._append(f"\n\n{mark} `{kind or 'tool'}` {title} — {status}")
        if status in ENDED:
            text = _ANSI.sub("", _tool_text(call.get("content"))).replace("\r\n", "\n").strip()
            if len(text) > TOOL_TEXT_LIMIT:
                text = text[:TOOL_TEXT_LIMIT] + "\n…"
            if text:
                self._append(f"\n\n```text\n{text}\n```")

    def terminal_output(self, terminal_id: str, text: str) -> None:
        used = self._terminal_bytes.get(terminal_id, 0)
        if used >= TERMINAL_TEXT_LIMIT:
            return
        clean = _ANSI.sub("", text).replace("\r\n", "\n")
        clean = clean[: TERMINAL_TEXT_LIMIT - used]
        self._terminal_bytes[terminal_id] = used + len(clean)
        shown = self._streamed(f"terminal:{terminal_id}", clean)
        if shown:
            self._role = None
            self._pending.append(f"\n\n```text\n{shown.rstrip()}\n```")

    def turn_ended(self, stop_reason: str, tokens: dict[str, Any] | None = None) -> None:
        self._streams_ended()
        self._role = None
        counted = usage.tokens_text(tokens) if tokens else None
        meter = "".join(f" · {part}" for part in (counted, self._usage) if part)
        self._append(f"\n\n---\n*turn ended: {stop_reason}{meter}*\n")
        self.flush()

    def flush(self) -> None:
        if self._pending:
            text = "".join(self._pending)
            self._pending.clear()
            self._write(text)

    def _write(self, text: str, mode: Literal["w", "a"] = "a") -> None:
        try:
            with private_files.open_file(self.path, mode) as handle:
                handle.write(text)
        except OSError as exc:
            logger.warning("cannot write the transcript %s: %s", self.path, exc)

    def close(self) -> None:
        self._streams_ended()
        self.flush()


def _tool_text(content: Any) -> str:
    """The text of a tool call's `content` items (`{type: "content", content: {type: "text"}}`);
    diffs and terminals are shown elsewhere."""
    items = content if isinstance(content, list) else []
    texts = [
        _content_text(item.get("content"))
        for item in items
        if isinstance(item, dict) and item.get("type") == "content"
    ]
    return "\n".join(t for t in texts if t)


def _blocks_text(blocks: list[Any]) -> str:
    """`_content_text` of each block, joined; a plain text block (nearly every block of a
    loaded session's messages) is read in place: this runs for each replayed message."""
    return "".join(
        [
            block["text"]
            if type(block) is dict
            and block.get("type") == "text"
            and type(block.get("text")) is str
            else _content_text(block)
            for block in blocks
        ]
    )


def _content_text(content: Any) -> str:
    if not isinstance(content, dict):
        return ""
    kind = content.get("type")
    if kind == "text":
        return str(content.get("text", ""))
    if kind == "resource_link":
        return f"[{content.get('name', 'link')}]({content.get('uri', '')})"
    if kind == "resource":
        resource = content.get("resource") or {}
        return f"\n```\n{resource.get('text', '')}\n```\n"
    return f"[{kind}]"


def _current_mode(update: dict[str, Any]) -> tuple[str | None, str | None]:
    """The current mode id of a `modes` or `config_options` update, and its name."""
    if update.get("sessionUpdate") == "modes":
        current = update.get("currentModeId")
        choices = [(m.get("id"), m.get("name")) for m in update.get("availableModes") or []
                   if isinstance(m, dict)]  # fmt: skip
    else:
        option = next(
            (o for o in update.get("configOptions") or []
             if isinstance(o, dict) and o.get("category") == "mode"),
            None,
        )  # fmt: skip
        if option is None:
            return None, None
        current = option.get("currentValue")
        choices = [(v.get("value"), v.get("name")) for v in option.get("options") or []
                   if isinstance(v, dict)]  # fmt: skip
    if not isinstance(current, str):
        return None, None
    name = next((n for i, n in choices if i == current and isinstance(n, str)), None)
    return current, name
