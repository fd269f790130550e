"""Per-session message budget of the output pump (core/pump.py): a burst over many tool calls
reaches the editor as at most ~60 messages a second per session, and nothing is lost."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from acpls.core.pump import FlushScheduler, UpdateQueue


def tool_call(call_id: str, status: str) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCall": {"toolCallId": call_id, "status": status}}


def test_a_session_within_budget_sends_at_once() -> None:
    queue = UpdateQueue(rate=10, burst=2)
    queue.add(tool_call("a", "pending"))
    assert queue.take_paced(100.0) == [tool_call("a", "pending")]
    assert not queue


def test_a_session_over_budget_waits_and_keeps_coalescing() -> None:
    queue = UpdateQueue(rate=10, burst=2)
    for name in "abc":
        queue.add(tool_call(name, "pending"))
    assert len(queue.take_paced(100.0)) == 3  # allowed: the whole batch goes, in debt by 1
    queue.add(tool_call("a", "in_progress"))
    assert queue.take_paced(100.0) == []
    assert queue.ready_at(100.0) == pytest.approx(100.2)  # back to one message of credit
    queue.add(tool_call("a", "completed"))  # replaces the waiting state of the same call
    assert queue.take_paced(100.1) == []
    assert queue.take_paced(100.2) == [tool_call("a", "completed")]


def test_take_sends_everything_whatever_the_budget() -> None:
    queue = UpdateQueue(rate=10, burst=1)
    queue.add(tool_call("a", "pending"))
    queue.take_paced(5.0)
    queue.add(tool_call("b", "pending"))
    assert queue.take_paced(5.0) == []
    assert queue.take() == [tool_call("b", "pending")]


def test_budget_bounds_messages_in_any_second() -> None:
    queue = UpdateQueue()
    sent: list[float] = []
    now = 1000.0
    while now < 1005.0:
        for name in "abcde":
            queue.add(tool_call(name, f"step {now}"))
        sent.extend(now for _ in queue.take_paced(now))
        now += 0.016
    worst = max(sum(1 for t in sent if start <= t < start + 1.0) for start in sent)
    assert worst <= 60
    assert len(sent) >= 5 * 35  # still flowing at about the budget


async def test_wake_at_flushes_what_waits_without_a_new_poke() -> None:
    runs: list[float] = []
    scheduler = FlushScheduler(lambda: runs.append(time.monotonic()))
    due = time.monotonic() + 0.05
    scheduler.wake_at(due)
    await asyncio.sleep(0.1)
    assert len(runs) == 1 and runs[0] >= due - 0.005
    scheduler.close()


async def test_flush_now_is_forced_only_while_it_runs() -> None:
    seen: list[bool] = []
    scheduler: FlushScheduler

    def flush() -> None:
        seen.append(scheduler.forced)

    scheduler = FlushScheduler(flush)
    scheduler.flush_now()
    scheduler.poke()
    await asyncio.sleep(0.05)
    assert seen == [True, False]
