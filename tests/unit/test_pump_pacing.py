"""Per-session message budget of the output pump (core/pump.py): a burst over many tool calls
reaches the editor as at most ~60 messages a second per session, follow messages included, and
nothing is lost."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from acpls.core.pump import QUEUE_STARVED_AFTER, FlushScheduler, UpdateQueue


def tool_call(call_id: str, status: str) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCall": {"toolCallId": call_id, "status": status}}


def test_a_session_within_budget_sends_at_once() -> None:
    queue = UpdateQueue(rate=10, burst=2, reserve=0)
    queue.add(tool_call("a", "pending"))
    assert queue.take_paced(100.0) == [tool_call("a", "pending")]
    assert not queue


def test_a_session_over_budget_waits_and_keeps_coalescing() -> None:
    queue = UpdateQueue(rate=10, burst=2, reserve=0)
    for name in "abc":
        queue.add(tool_call(name, "pending"))
    assert queue.take_paced(100.0) == [tool_call("a", "pending"), tool_call("b", "pending")]
    queue.add(tool_call("a", "in_progress"))  # after "c": its newest state goes last
    assert queue.take_paced(100.0) == []
    assert queue.ready_at(100.0) == pytest.approx(100.1)  # one message of credit
    queue.add(tool_call("c", "completed"))  # replaces the waiting state of the same call
    assert queue.take_paced(100.05) == []
    assert queue.take_paced(100.1) == [tool_call("a", "in_progress")]
    assert queue.take_paced(100.2) == [tool_call("c", "completed")]


def test_the_queue_leaves_the_follow_reserve_unless_starved() -> None:
    queue = UpdateQueue(rate=10, burst=5, reserve=3)
    for name in "abcd":
        queue.add(tool_call(name, "pending"))
    assert [u["toolCall"]["toolCallId"] for u in queue.take_paced(100.0)] == ["a", "b"]
    assert queue.budget.credit(100.0) == pytest.approx(3.0)  # the reserve, left for follow
    queue.budget.spend(2)  # follow took most of it
    assert queue.take_paced(100.05) == []
    starved = 100.0 + QUEUE_STARVED_AFTER
    assert queue.ready_at(100.05) == pytest.approx(starved)
    assert queue.budget.follow_need(starved) == 2.0  # follow leaves the starved queue one
    # Waited long enough: one item on any credit, the rest when the reserve is back.
    assert [u["toolCall"]["toolCallId"] for u in queue.take_paced(starved)] == ["c"]
    assert queue.take_paced(starved) == []
    assert queue.budget.follow_need(starved) == 1.0
    assert queue.ready_at(starved) == pytest.approx(starved + 0.15)  # credit 2.5 -> 4


def test_take_sends_everything_whatever_the_budget() -> None:
    queue = UpdateQueue(rate=10, burst=1, reserve=0)
    queue.add(tool_call("a", "pending"))
    queue.take_paced(5.0)
    queue.add(tool_call("b", "pending"))
    assert queue.take_paced(5.0) == []
    assert queue.take() == [tool_call("b", "pending")]
    assert queue.budget.credit(5.0) == pytest.approx(-1.0)  # in debt: later sends pay it back


def test_budget_bounds_messages_and_follow_in_any_second() -> None:
    """Five tool calls updated every flush and a followed location every 16 ms, sharing the
    session's budget: at most 50 messages in any second, follow first, the queue still moving."""
    queue = UpdateQueue()
    budget = queue.budget
    sent: list[float] = []
    follows = 0
    now = 1000.0
    while now < 1005.0:
        for name in "abcde":
            queue.add(tool_call(name, f"step {now}"))
        if budget.credit(now) >= budget.follow_need(now):  # core/follow.py, for a followAgent
            budget.spend(1)
            sent.append(now)
            follows += 1
        sent.extend(now for _ in queue.take_paced(now))
        now += 0.016
    worst = max(sum(1 for t in sent if start <= t < start + 1.0) for start in sent)
    assert worst <= 53
    assert follows >= 5 * 38  # follow keeps its pace
    assert len(sent) - follows >= 5 * 4  # and the tool calls still move


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
