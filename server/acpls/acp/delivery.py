"""The agent's output handed to the line reader in slices, with event-loop turns between them.

A flood the agent writes at once (3,000 tool calls with locations, ~780 KB) often reaches acpls
in two or three reads, since acpls reads while the agent is still writing. Handled whole, the
first block (up to a megabyte: 25-50 ms of tool calls, longer on a loaded machine) kept the
second one, with the flood's newest location, unread: bench P2 measured the newest after up to
85 ms (target 50), 9 runs of 20 over 25 ms. Here a block is handled in slices; once handling has
run `TURN_AFTER` without a turn, the loop gets one (follow's timer and the editor's messages run)
and what arrived meanwhile is seen at once (`see`: follow's look-ahead, core/routing.py) and
handled after everything before it. The order of the agent's bytes never changes.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

# Slices end at the first line end past this many bytes.
SLICE_BYTES = 16 * 1024
# Handling that ran this long gives the loop a turn (a slice of terminal output takes well under
# it, so a fast stream costs about one turn per TURN_AFTER; a slice of tool calls 1.5-4 ms).
TURN_AFTER = 0.004
# What may be taken in while earlier blocks wait to be handled; more stays in the agent's pipe.
PENDING_MAX = 1024 * 1024


class BlockSink(Protocol):
    """The line reader (acp/transport.py `LineReader`)."""

    def see(self, data: bytes) -> None: ...

    def feed_range(self, data: bytes, start: int, stop: int) -> None: ...

    def handled(self) -> None: ...


def slice_end(block: bytes, start: int, size: int = SLICE_BYTES) -> int:
    """Where the slice from `start` ends: just past the first line end at or after start + size
    (the block's end when there is none), so slices are whole lines."""
    if len(block) - start <= size:
        return len(block)
    end = block.find(b"\n", start + size - 1)
    return len(block) if end < 0 else end + 1


async def deliver(
    data: bytes,
    sink: BlockSink,
    arrived: Callable[[int], Awaitable[bytes]],
    *,
    clock: Callable[[], float] = time.monotonic,
    turn_after: float = TURN_AFTER,
    slice_bytes: int = SLICE_BYTES,
) -> None:
    """Hand `data` to `sink`, and what `arrived(room)` returns meanwhile (it gives the loop a
    turn and returns at most `room` bytes already read, possibly none) after it, in order."""
    sink.see(data)
    pending = deque([data])
    held = len(data)
    turn_at = clock() + turn_after
    try:
        while pending:
            block = pending.popleft()
            start = 0
            while start < len(block):
                stop = slice_end(block, start, slice_bytes)
                sink.feed_range(block, start, stop)
                start = stop
                if clock() < turn_at:
                    continue
                more = await arrived(PENDING_MAX - held)
                turn_at = clock() + turn_after
                if more:
                    sink.see(more)
                    pending.append(more)
                    held += len(more)
            held -= len(block)
    finally:
        sink.handled()
