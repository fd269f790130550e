"""Coalesced delivery to the editor: at most one flush per ~16 ms, and nothing lost.

Session updates wait in an ordered map per session: a tool call's newer whole state replaces its
waiting older state, consecutive text chunks of one message are joined, and state-like updates
(plan, usage, commands…) keep only the latest. A flush sends what waits, in order of first arrival.
The first item after a quiet period goes out at once; within a window, items wait for its end,
so a burst never floods the editor (about 60 flushes a second at most).

A flush sends one message per waiting item, so a burst that touches many tool calls at once
would still be many messages a flush. Each session therefore also has a message budget
(`MessageBudget`: `SESSION_MESSAGES_PER_SECOND`, with a small burst allowance) that its
`acpls/sessionUpdate`s and its follow messages (core/follow.py) share, so the editor gets at most
~50 of them in any second per session (editors/protocol.md 5.4). Follow goes first: the queue
leaves `FOLLOW_RESERVE` messages of credit unspent for the next followed location (whose latency
is what the user sees), and takes only what is above it, oldest items first; the rest keeps
coalescing until the budget allows. A queue that has sent nothing for `QUEUE_STARVED_AFTER` may
send one item on any credit, and follow then leaves it that one (`MessageBudget.follow_need`), so
tool calls still move while follow takes most of the budget.
`FlushScheduler.flush_now` (the end of a turn) sends everything regardless: the turn's result
must follow all of its updates. A replayed history (core/routing.py) is not charged: it is not
a live turn. It is paced by the editor's reading instead (`ReplayPacer`): the next piece waits
while the editor has more than `REPLAY_UNREAD_BOUND` bytes unread, so an editor that fell behind
catches up in one read instead of decoding a long run of messages ahead of a key.
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
# end of a turn, which sends whatever waits at once: at most burst + rate = 53 paced messages in
# any second (sessionUpdates and follow together), plus what the end of a turn sends.
SESSION_MESSAGES_PER_SECOND = 48.0
SESSION_MESSAGE_BURST = 5.0
# Credit the update queue leaves for follow: a followed location does not wait for the budget
# while locations come at up to ~40 a second (bench P2: one every 25 ms), a starved queue's
# 1 / QUEUE_STARVED_AFTER items a second included.
FOLLOW_RESERVE = 3.0
QUEUE_STARVED_AFTER = 0.25
# Float time arithmetic: a credit or a wait that is due must not miss by a rounding error.
_EPSILON = 1e-9

# A replay's next piece waits while the editor has more than this unread: Neovim's LSP client
# reads a pipe 64 KiB at a time, up to 32 reads a wake-up, and decodes every message of a read at
# once (a 64 KiB read is ~3 ms of `vim.json.decode`), so a key waits behind at most one read.
REPLAY_UNREAD_BOUND = 32 * 1024
# While a piece waits, the next looks at the editor: 1 ms, then 2, then every 4 ms. A reader
# that keeps up (bench P8's, ~0.2 ms a message) finds the next piece at once; one that is busy
# drawing (Neovim: ticks of ~4 ms) is not polled much more often than it reads.
REPLAY_RECHECK_FIRST = 0.001
REPLAY_RECHECK_MAX = 0.004
# Memory bound of a held replay: beyond this many waiting updates the oldest go out regardless,
# and the transport's own high-water mark (editor/stdio.py, flow.py) stops reading the agent.
REPLAY_HELD_MAX = 10_000

_LATEST_ONLY = frozenset(
    {"plan", "available_commands", "modes", "config_options", "session_info", "usage"}
)


class MessageBudget:
    """A session's messages to the editor: a token bucket of `rate` a second holding at most
    `burst`. Paced senders spend only credit they have; a forced send (the end of a turn) may
    leave it in debt, which later sends pay back."""

    def __init__(
        self,
        rate: float = SESSION_MESSAGES_PER_SECOND,
        burst: float = SESSION_MESSAGE_BURST,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._credit = burst  # messages this session may send now (negative: in debt)
        self._credit_at = 0.0
        # When the session's update queue counts as starved (core/pump.py UpdateQueue): from
        # then on follow leaves it one message of credit.
        self.queue_starved_at = float("inf")

    def credit(self, now: float) -> float:
        if now > self._credit_at:
            elapsed = now - self._credit_at
            self._credit = min(self.burst, self._credit + elapsed * self.rate)
            self._credit_at = now
        return self._credit

    def spend(self, messages: int) -> None:
        self._credit -= messages

    def follow_need(self, now: float) -> float:
        """Credit a follow message needs: one, or two while the update queue is starved."""
        return 2.0 if now + _EPSILON >= self.queue_starved_at else 1.0

    def ready_at(self, now: float, need: float = 1.0) -> float:
        """When the credit reaches `need` (`now` if it has)."""
        credit = self.credit(now) + _EPSILON
        return now if credit >= need else now + (need - credit) / self.rate


class UpdateQueue:
    """The waiting updates of one session."""

    def __init__(
        self,
        rate: float = SESSION_MESSAGES_PER_SECOND,
        burst: float = SESSION_MESSAGE_BURST,
        reserve: float = FOLLOW_RESERVE,
    ) -> None:
        self._items: dict[Any, dict[str, Any]] = {}
        self._serial = itertools.count()
        self._last_chunk_key: Any = None
        # Shared with the session's follow messages (core/follow.py).
        self.budget = MessageBudget(rate, burst)
        self._reserve = reserve
        self._sent_at = float("-inf")

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind == "tool_call":
            key: Any = ("tool_call", update["toolCall"].get("toolCallId"))
            self._items.pop(key, None)  # re-insert: its newest state goes where it now belongs
            self._items[key] = update
            self._last_chunk_key = None
            self._waiting()
            return
        if kind == "message_chunk" and self._join_chunk(update):
            return
        if kind in _LATEST_ONLY:
            key = ("latest", kind)
            self._items.pop(key, None)
            self._items[key] = update
            self._last_chunk_key = None
            self._waiting()
            return
        key = ("item", next(self._serial))
        self._items[key] = update
        self._last_chunk_key = key if kind == "message_chunk" else None
        self._waiting()

    def _waiting(self) -> None:
        if self.budget.queue_starved_at == float("inf"):
            self.budget.queue_starved_at = self._sent_at + QUEUE_STARVED_AFTER

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

    def take(self, *, charge: bool = True) -> list[dict[str, Any]]:
        """Everything waiting, whatever the budget; charged to it unless `charge` is false (a
        replayed history is not a live turn: charging its thousands of updates would leave the
        session minutes in debt, its next turn shown only when it ends)."""
        items = list(self._items.values())
        self._items.clear()
        self._last_chunk_key = None
        if charge:
            self.budget.spend(len(items))
        self.budget.queue_starved_at = float("inf")
        return items

    def take_oldest(self, count: int) -> list[dict[str, Any]]:
        """The oldest `count` waiting items, uncharged (a replay's next piece)."""
        if count >= len(self._items):
            return self.take(charge=False)
        keys = list(itertools.islice(self._items, count))
        if self._last_chunk_key in keys:
            self._last_chunk_key = None
        return [self._items.pop(key) for key in keys]

    def take_paced(self, now: float) -> list[dict[str, Any]]:
        """The oldest waiting items the budget allows now above the follow reserve; one item on
        any credit when the queue has sent nothing for `QUEUE_STARVED_AFTER`. Nothing when it
        allows none: the items keep coalescing; `ready_at` says when to try again."""
        if not self._items:
            return []
        credit = self.budget.credit(now) + _EPSILON
        room = int(credit - self._reserve)
        starved = now + _EPSILON >= self._sent_at + QUEUE_STARVED_AFTER
        if room <= 0 and starved and credit >= 1.0:
            room = 1
        if room <= 0:
            return []
        if room >= len(self._items):
            items = self.take()
        else:
            keys = list(itertools.islice(self._items, room))
            items = [self._items.pop(key) for key in keys]
            if self._last_chunk_key in keys:
                self._last_chunk_key = None
            self.budget.spend(len(items))
            self.budget.queue_starved_at = now + QUEUE_STARVED_AFTER
        self._sent_at = now
        return items

    def ready_at(self, now: float) -> float:
        """When the budget allows a message of this queue again (`now` if it does already)."""
        normal = self.budget.ready_at(now, 1.0 + self._reserve)
        starved = max(self._sent_at + QUEUE_STARVED_AFTER, self.budget.ready_at(now, 1.0))
        return max(now, min(normal, starved))


def _is_plain_text(content: Any) -> bool:
    return (
        isinstance(content, dict)
        and content.get("type") == "text"
        and isinstance(content.get("text"), str)
        and set(content) <= {"type", "text"}
    )


class ReplayPacer:
    """Whether a replay's next piece goes to the editor now: not while the editor has more than
    `bound` bytes unread (`unread` returns None where that is unknown: then always)."""

    def __init__(
        self,
        unread: Callable[[], int | None],
        bound: int = REPLAY_UNREAD_BOUND,
        held_max: int = REPLAY_HELD_MAX,
        recheck_first: float = REPLAY_RECHECK_FIRST,
        recheck_max: float = REPLAY_RECHECK_MAX,
    ) -> None:
        self._unread = unread
        self.bound = bound
        self.held_max = held_max
        self._recheck_first = recheck_first
        self._recheck_max = recheck_max
        self._recheck = recheck_first

    def may_send(self, waiting: int) -> bool:
        """`waiting`: the session's updates not sent yet."""
        if waiting > self.held_max:
            return True
        unread = self._unread()
        if unread is None or unread <= self.bound:
            self._recheck = self._recheck_first
            return True
        return False

    def recheck_in(self) -> float:
        """Seconds until the next look at a held replay: doubling while the editor stays
        behind, from the first again once a piece went out."""
        delay = self._recheck
        self._recheck = min(self._recheck_max, delay * 2)
        return delay


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
