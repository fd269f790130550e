"""core/follow.py: the newest location of a burst always reaches the editor."""

from __future__ import annotations

import asyncio
from typing import Any

from acpls.core.follow import FollowController
from acpls.supervisor import TaskSupervisor
from acpls.translate.follow import FOLLOW_INTERVAL, FollowTarget
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
    follow._due()  # woken before the window ended (if the burst took longer, a no-op)
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
