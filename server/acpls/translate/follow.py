"""Follow-along rules, pure: which agent locations move the editor, and how often.

Rules (editors/protocol.md section 4, Zed's behaviour where it is silent):
- every location on a tool call or tool-call update counts, and so do v1 fs reads (start of the
  range) and writes (first changed line); the last one wins;
- a move backwards on the same line of the same file is ignored (an edit update would otherwise
  jump to the start of a line already shown), and so is a line-less location in the file already
  shown;
- only top-level sessions move it (a sub-agent's tool calls do not);
- the editor gets at most one move per ~16 ms: the first goes out at once, later ones wait for the
  end of the window, and a newer one replaces a waiting one.
"""

from __future__ import annotations

import os

import attrs

from acpls.translate.tool_calls import parent_tool_call_id

FOLLOW_INTERVAL = 0.016


@attrs.frozen
class FollowTarget:
    session_id: str
    tool_call_id: str
    # `..` is resolved away (textually) so the editor is shown the file's own path.
    path: str = attrs.field(converter=lambda p: _normalised(p))
    # ACP line, 1-based. Anything but an int (an omitted line arrives as the models' OMITTED
    # sentinel, or an agent sends a string) means "no line".
    line: int | None = attrs.field(default=None, converter=lambda v: _line_or_none(v))
    kind: str | None = None

    def lsp_range(self) -> dict[str, dict[str, int]] | None:
        if self.line is None:
            return None
        pos = {"line": max(self.line - 1, 0), "character": 0}
        return {"start": pos, "end": dict(pos)}


def _normalised(path: str) -> str:
    return os.path.normpath(path) if isinstance(path, str) and os.path.isabs(path) else path


def _line_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class FollowTracker:
    """Decides which targets are moves, then throttles them to one per interval."""

    def __init__(self, *, enabled: bool = True, interval: float = FOLLOW_INTERVAL) -> None:
        self.enabled = enabled
        self.paused_by_user = False
        self.interval = interval
        self.current: FollowTarget | None = None
        self._last_sent_at: float | None = None
        self._waiting: FollowTarget | None = None
        # The newest location of a block of agent output, offered before the block's older ones
        # (`lead`): until the block reaches it, those older ones are not moves.
        self.ahead: FollowTarget | None = None

    @property
    def active(self) -> bool:
        return self.enabled and not self.paused_by_user

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        self.paused_by_user = False
        if not enabled:
            self._waiting = None

    def pause_for_user_edit(self) -> bool:
        """The user edited a document; returns True when this changed anything."""
        if not self.active:
            return False
        self.paused_by_user = True
        self._waiting = None
        return True

    def is_move(self, target: FollowTarget) -> bool:
        current = self.current
        if current is None or current.path != target.path:
            return True
        if target.line is None:
            return False
        if current.line is None:
            return True
        return target.line != current.line

    def lead(
        self, target: FollowTarget, now: float, *, urgent: bool = False
    ) -> tuple[FollowTarget | None, float | None]:
        """The newest location of a block of output, seen before the block is handled: offered
        now, and the block's older locations, handled after it, are passed over until the block
        reaches this one (or ends: `block_done`). `urgent` (a large block, whose handling no
        timer can interrupt) sends it at once even inside the window: one per such block."""
        if not self.active:
            return None, None
        if urgent and self.is_move(target):
            self._last_sent_at = None
        # A block seen while an earlier one is still handled (acp/delivery.py) is newer than
        # that block's lead: it replaces it, and is offered rather than passed over.
        self.ahead = None
        answer = self.offer(target, now)
        self.ahead = target
        return answer

    def block_done(self) -> None:
        self.ahead = None

    def offer(self, target: FollowTarget, now: float) -> tuple[FollowTarget | None, float | None]:
        """Returns (send now, or None) and (wake-up time for a waiting target, or None)."""
        ahead = self.ahead
        if ahead is not None:
            if _same_place(ahead, target):
                self.ahead = None  # the block reached its newest location: already offered
            return None, None
        if not self.active or not self.is_move(target):
            return None, None
        self.current = target
        if self._last_sent_at is None or now - self._last_sent_at >= self.interval:
            self._last_sent_at = now
            self._waiting = None
            return target, None
        self._waiting = target
        return None, self._last_sent_at + self.interval

    def due(self, now: float) -> FollowTarget | None:
        """The waiting target, if its window has passed (called at the wake-up time)."""
        if self._waiting is None or not self.active:
            return None
        if self._last_sent_at is not None and now - self._last_sent_at < self.interval:
            return None
        target, self._waiting = self._waiting, None
        self._last_sent_at = now
        return target

    def hold(self, target: FollowTarget) -> None:
        """A target `offer` or `due` gave to send, that could not go yet (the session's message
        budget): it waits, a newer one replaces it, and `due` gives it again."""
        if self.active:
            self._waiting = target

    def waiting_until(self) -> float | None:
        """When the waiting target is due (None: nothing waits). A wake-up that came early asks
        again, so the newest location of a burst is never dropped."""
        if self._waiting is None or not self.active:
            return None
        return (self._last_sent_at or 0.0) + self.interval

    def flush(self, now: float) -> FollowTarget | None:
        """The waiting target at once, whatever the window (the turn ended: it is the newest)."""
        if self._waiting is None or not self.active:
            return None
        target, self._waiting = self._waiting, None
        self._last_sent_at = now
        return target

    def end_turn(self) -> None:
        self.current = None

    def forget_session(self, session_id: str) -> None:
        """The session ended: nothing of it is followed any more."""
        if self._waiting is not None and self._waiting.session_id == session_id:
            self._waiting = None
        if self.current is not None and self.current.session_id == session_id:
            self.current = None


def _same_place(one: FollowTarget, other: FollowTarget) -> bool:
    return (one.session_id, one.tool_call_id, one.path, one.line) == (
        other.session_id,
        other.tool_call_id,
        other.path,
        other.line,
    )


def is_subagent_tool_call(tool_call: dict) -> bool:
    """Sub-agent tool calls carry their parent's id (claude-agent-acp puts it in `_meta`)."""
    return parent_tool_call_id(tool_call) is not None
