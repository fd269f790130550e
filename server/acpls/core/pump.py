"""Coalesced delivery to the editor: at most one flush per ~16 ms, and nothing lost.

Session updates wait in an ordered map per session: a tool call's newer whole state replaces its
waiting older state, consecutive text chunks of one message are joined, and state-like updates
(plan, usage, commands…) keep only the latest. A flush sends what waits, in order of first arrival.
The first item after a quiet period goes out at once; within a window, items wait for its end,
so a burst never floods the editor (about 60 flushes a second at most).

A flush sends one message per waiting item, so a burst that touches many tool calls at once
would still be many messages a flush. Each session therefore also has a message budget
(`SESSION_MESSAGES_PER_SECOND`, with a small burst allowance): a session over budget keeps
coalescing until it may send again, so the editor gets at most ~60 `acpls/sessionUpdate` a
second per session (editors/protocol.md 5.4). `FlushScheduler.flush_now` (the end of a turn)
sends everything regardless: the turn's result must follow all of its updates.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

FLUSH_INTERVAL = 0.016
# Budget and allowance stay below the protocol's ~60 messages in any second with room for the
# end of a turn, which sends whatever waits at once.
SESSION_MESSAGES_PER_SECOND = 40.0
SESSION_MESSAGE_BURST = 10.0

_LATEST_ONLY = frozenset(
    {"plan", "available_commands", "modes", "config_options", "session_info", "usage"}
)


class UpdateQueue:
    """The waiting updates of one session."""

    def __init__(
        self,
        rate: float = SESSION_MESSAGES_PER_SECOND,
        burst: float = SESSION_MESSAGE_BURST,
    ) -> None:
        self._items: dict[Any, dict[str, Any]] = {}
        self._serial = itertools.count()
        self._last_chunk_key: Any = None
        self._rate = rate
        self._burst = burst
        self._credit = burst  # messages this session may send now (negative: in debt)
        self._credit_at = 0.0

    def __bool__(self) -> bool:
        return bool(self._items)

    def add(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind == "tool_call":
            key: Any = ("tool_call", update["toolCall"].get("toolCallId"))
            self._items.pop(key, None)  # re-insert: its newest state goes where it now belongs
            self._items[key] = update
            self._last_chunk_key = None
            return
        if kind == "message_chunk" and self._join_chunk(update):
            return
        if kind in _LATEST_ONLY:
            key = ("latest", kind)
            self._items.pop(key, None)
            self._items[key] = update
            self._last_chunk_key = None
            return
        key = ("item", next(self._serial))
        self._items[key] = update
        self._last_chunk_key = key if kind == "message_chunk" else None

    def _join_chunk(self, update: dict[str, Any]) -> bool:
        """Append text to the previous waiting chunk of the same message, if it is the last item."""
        key = self._last_chunk_key
        if key is None or key not in self._items:
            return False
        previous = self._items[key]
        content, prev_content = update.get("content"), previous.get("content")
        if (
            previous.get("messageId") != update.get("messageId")
            or previous.get("role") != update.get("role")
            or not _is_plain_text(content)
            or not _is_plain_text(prev_content)
        ):
            return False
        assert isinstance(content, dict) and isinstance(prev_content, dict)
        joined = {**prev_content, "text": prev_content["text"] + content["text"]}
        self._items[key] = {**previous, "content": joined}
        return True

    def take(self) -> list[dict[str, Any]]:
        """Everything waiting, whatever the budget (and charged to it)."""
        items = list(self._items.values())
        self._items.clear()
        self._last_chunk_key = None
        self._credit -= len(items)
        return items

    def take_paced(self, now: float) -> list[dict[str, Any]]:
        """Everything waiting if the session's message budget allows a message now, else
        nothing (the items keep coalescing; `ready_at` says when to try again)."""
        self._refill(now)
        if self._credit < 1.0:
            return []
        return self.take()

    def ready_at(self, now: float) -> float:
        """When the budget allows a message again (`now` if it does already)."""
        self._refill(now)
        return now if self._credit >= 1.0 else now + (1.0 - self._credit) / self._rate

    def _refill(self, now: float) -> None:
        if now > self._credit_at:
            elapsed = now - self._credit_at
            self._credit = min(self._burst, self._credit + elapsed * self._rate)
            self._credit_at = now


def _is_plain_text(content: Any) -> bool:
    return (
        isinstance(content, dict)
        and content.get("type") == "text"
        and isinstance(content.get("text"), str)
        and set(content) <= {"type", "text"}
    )


class FlushScheduler:
    """Calls `flush` at most once per interval, as soon as something is pending."""

    def __init__(self, flush: Callable[[], None], interval: float = FLUSH_INTERVAL) -> None:
        self._flush = flush
        self.interval = interval
        self._last = 0.0
        self._handle: asyncio.Handle | None = None
        self.forced = False  # true during flush_now: paced queues send everything too

    def poke(self) -> None:
        if self._handle is not None:
            return
        now = time.monotonic()
        delay = self._last + self.interval - now
        loop = asyncio.get_running_loop()
        if delay <= 0:
            # Not synchronously: let the rest of the current read batch join this flush.
            self._handle = loop.call_soon(self._run)
        else:
            self._handle = loop.call_later(delay, self._run)

    def _run(self) -> None:
        self._handle = None
        self._last = time.monotonic()
        try:
            self._flush()
        except Exception:
            logger.exception("flushing updates to the editor failed")

    def wake_at(self, when: float) -> None:
        """Run a flush at `when` (monotonic), unless one is scheduled already: something waits
        that no new update may come to poke (a paced session's items)."""
        if self._handle is not None:
            return
        loop = asyncio.get_running_loop()
        self._handle = loop.call_later(max(0.0, when - time.monotonic()), self._run)

    def flush_now(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self.forced = True
        try:
            self._run()
        finally:
            self.forced = False

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
