"""core/follow.py: the newest location of a burst always reaches the editor."""

from __future__ import annotations

import asyncio
from typing import Any

from acpls.core.follow import FollowController
from acpls.core.routing import newest_location_line
from acpls.supervisor import TaskSupervisor
from acpls.translate.follow import FOLLOW_INTERVAL, FollowTarget, FollowTracker
from tests.fuzz.frame_fuzzer import FakeEditor


class Recorder(FakeEditor):
    def __init__(self) -> None:
        super().__init__("/ws")
        self.follows: list[Any] = []

    def notify(self, method: str, params: Any) -> None:
        super().notify(method, params)
        if method == "acpls/followAgent":
            self.follows.append(params.range["start"]["line"])


def burst(follow: FollowController, lines: range) -> None:
    for line in lines:
        follow.move(FollowTarget("s1", "t1", "/ws/a.py", line, "edit"))


async def test_an_early_wake_up_keeps_the_newest_location() -> None:
    """The loop may run a timer a little before the window ends; the waiting target must not be
    dropped then (it was, about one burst in ten)."""
    editor = Recorder()
    tasks = TaskSupervisor("test")
    follow = FollowController(editor, tasks)
    burst(follow, range(1, 50))
    # The armed timer is the one the loop runs now, before the window ended (if the burst took
    # longer than the window, the target is due and goes at once).
    follow._cancel_timer()
    follow._due()
    await asyncio.sleep(FOLLOW_INTERVAL * 3)
    assert editor.follows[0] == 0 and editor.follows[-1] == 48
    await tasks.aclose()


async def test_the_end_of_a_turn_sends_the_waiting_location_at_once() -> None:
    editor = Recorder()
    tasks = TaskSupervisor("test")
    follow = FollowController(editor, tasks)
    burst(follow, range(1, 3000))
    follow.end_turn()
    sent = list(editor.follows)
    assert sent[-1] == 2998
    await asyncio.sleep(FOLLOW_INTERVAL * 3)
    assert editor.follows == sent, "nothing is sent twice"
    await tasks.aclose()


async def test_a_closed_session_is_not_followed_later() -> None:
    editor = Recorder()
    tasks = TaskSupervisor("test")
    follow = FollowController(editor, tasks)
    burst(follow, range(1, 10))
    sent = list(editor.follows)
    follow.forget_session("s1")
    await asyncio.sleep(FOLLOW_INTERVAL * 3)
    assert editor.follows == sent
    await tasks.aclose()


def _at(line: int) -> FollowTarget:
    return FollowTarget("s1", "t1", "/ws/a.py", line, "edit")


async def test_a_blocks_newest_location_goes_first_and_its_older_ones_never_follow() -> None:
    """routing.look_ahead offers a block's newest location before the block is handled: it is
    sent at once (urgent: inside the window too), the older ones handled after it are passed
    over, and so is the newest itself when the block reaches it (nothing sent twice)."""
    editor = Recorder()
    tasks = TaskSupervisor("test")
    follow = FollowController(editor, tasks)
    follow.move(_at(1))  # just sent: the window is running
    follow.lead(_at(3000), urgent=True)
    assert editor.follows == [0, 2999]
    burst(follow, range(2, 3001))  # the block, in order, ending with its newest location
    follow.block_done()
    await asyncio.sleep(FOLLOW_INTERVAL * 3)
    assert editor.follows == [0, 2999]
    follow.move(_at(7))  # the next block follows as usual
    await asyncio.sleep(FOLLOW_INTERVAL * 3)
    assert editor.follows == [0, 2999, 6]
    await tasks.aclose()


async def test_a_lead_the_block_never_reaches_is_let_go_at_the_blocks_end() -> None:
    editor = Recorder()
    tasks = TaskSupervisor("test")
    follow = FollowController(editor, tasks)
    follow.lead(_at(10))
    burst(follow, range(2, 5))  # older ones: passed over
    follow.block_done()  # the newest never came as a move (its line was malformed, say)
    follow.move(_at(20))
    await asyncio.sleep(FOLLOW_INTERVAL * 3)
    assert editor.follows == [9, 19]
    await tasks.aclose()


async def test_a_lead_that_is_not_urgent_keeps_the_window() -> None:
    editor = Recorder()
    tasks = TaskSupervisor("test")
    follow = FollowController(editor, tasks)
    follow.move(_at(1))
    follow.lead(_at(5))  # inside the window: waits for it
    assert editor.follows == [0]
    follow.block_done()
    await asyncio.sleep(FOLLOW_INTERVAL * 3)
    assert editor.follows == [0, 4]
    await tasks.aclose()


def test_a_newer_blocks_lead_replaces_one_its_block_has_not_reached() -> None:
    """A block that arrives while an earlier one is still handled (acp/delivery.py) is looked
    ahead before the earlier block reaches its own newest location: the newer lead must be
    offered, not passed over as one of the earlier block's older locations (it was, and the
    flood's newest location never reached the editor: bench P2 'lost')."""
    tracker = FollowTracker()
    assert tracker.lead(_at(959), 0.0) == (_at(959), None)
    assert tracker.offer(_at(2), 0.001) == (None, None)  # the first block's older lines
    assert tracker.lead(_at(3119), 0.002) == (None, FOLLOW_INTERVAL)  # waits for the window
    for line in range(3, 3120):  # the rest of both blocks, in order
        assert tracker.offer(_at(line), 0.003) == (None, None)
    assert tracker.due(FOLLOW_INTERVAL) == _at(3119)
    assert tracker.due(FOLLOW_INTERVAL * 3) is None


def test_the_look_ahead_takes_the_newest_whole_line_with_a_location() -> None:
    """A read that ends inside a line (most reads of a flood do) still has its newest whole
    location looked ahead (it had none, and the flood's first location was followed instead)."""
    lines = [b'{"n":%d,"locations":[]}' % i for i in range(4)]
    block = b"\n".join(lines) + b'\n{"n":4,"locations":[{"pa'
    assert newest_location_line(block) == lines[3]
    assert newest_location_line(block + b'th":1}]}\n') == b'{"n":4,"locations":[{"path":1}]}'
    assert newest_location_line(lines[0] + b"\n" + lines[1]) is None  # its first line only
    assert newest_location_line(b'{"other":1}\n{"n":9}\n') is None
