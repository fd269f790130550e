"""Coalesced delivery to the editor: at most one flush per ~16 ms, and nothing lost.

Session updates wait in an ordered map per session: a tool call's newer whole state replaces its
waiting older state, consecutive text chunks of one message are joined, and state-like updates
(plan, usage, commands…) keep only the latest. A flush sends what waits, in order of first arrival.
The first item after a quiet period goes out at once; within a window, items wait for its end,
so a burst never floods the editor (about 60 flushes a second at most).
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

_LATEST_ONLY = frozenset(
    {"plan", "available_commands", "modes", "config_options", "session_info", "usage"}
)


class UpdateQueue:
    """The waiting updates of one session."""

    def __init__(self) -> None:
        self._items: dict[Any, dict[str, Any]] = {}
        self._serial = itertools.count()
        self._last_chunk_key: Any = None

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
        items = list(self._items.values())
        self._items.clear()
        self._last_chunk_key = None
        return items


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

    def flush_now(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._run()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
