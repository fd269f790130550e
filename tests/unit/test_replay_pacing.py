"""A replay is paced by what the editor has not read (core/pump.py `ReplayPacer`, core/routing.py):
the next piece waits while the editor is more than the bound behind, and nothing is lost or
reordered. The editor's unread count is a fake here: each message adds its bytes, a read empties
it (tests/e2e/test_replay_backlog.py does the same over a real socket)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from acpls.core.pump import ReplayPacer, UpdateQueue
from acpls.core.routing import BATCH_UPDATES, UpdateRouter
from acpls.editor import messages as msg

BYTES_PER_UPDATE = 100
BOUND = 3 * BATCH_UPDATES * BYTES_PER_UPDATE  # three whole pieces


class _Editor:
    """Every message adds its updates' bytes to what the editor has not read."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.unread = 0

    def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))
        count = len(params.updates) if method == msg.SESSION_UPDATES else 1
        self.unread += count * BYTES_PER_UPDATE

    def supports(self, feature: str) -> bool:
        return feature == "sessionUpdates"

    def read_all(self) -> None:
        self.unread = 0

    def received(self) -> list[str]:
        out: list[str] = []
        for method, params in self.sent:
            updates = params.updates if method == msg.SESSION_UPDATES else [params.update]
            out.extend(u["toolCall"]["toolCallId"] for u in updates)
        return out


class _Pump:
    def __init__(self) -> None:
        self.forced = False
        self.wakes: list[float] = []
        self.pokes = 0

    def wake_at(self, when: float) -> None:
        self.wakes.append(when)

    def poke(self) -> None:
        self.pokes += 1


class _Session:
    def __init__(self, queue: UpdateQueue) -> None:
        self.id = "s1"
        self.queue = queue


def _router(editor: _Editor, pump: _Pump, pacer: ReplayPacer | None) -> UpdateRouter:
    unused = cast(Any, None)  # a flush touches only the editor, the pump and the pacer
    return UpdateRouter(
        cast(Any, editor),
        {},
        cast(Any, pump),
        unused,
        unused,
        unused,
        unused,
        Path("."),
        unused,
        pacer=pacer,
    )


def _queue(count: int) -> UpdateQueue:
    queue = UpdateQueue()
    for n in range(count):
        queue.add({"sessionUpdate": "tool_call", "toolCall": {"toolCallId": f"t{n}"}})
    return queue


def _ids(count: int) -> list[str]:
    return [f"t{n}" for n in range(count)]


def test_the_pacer_holds_only_while_the_editor_is_beyond_the_bound() -> None:
    unread: list[int | None] = [0]
    pacer = ReplayPacer(lambda: unread[0], bound=1000, held_max=50)
    assert pacer.may_send(10)
    unread[0] = 1000
    assert pacer.may_send(10)
    unread[0] = 1001
    assert not pacer.may_send(10)
    assert not pacer.may_send(50)
    assert pacer.may_send(51)  # too much held: memory wins, the transport's gate takes over
    unread[0] = None  # no count (a file, not Linux): never held
    assert pacer.may_send(10)


def test_a_held_replay_is_looked_at_soon_then_less_often_until_a_piece_goes() -> None:
    unread = [5000]
    pacer = ReplayPacer(lambda: unread[0], bound=1000, recheck_first=0.001, recheck_max=0.004)
    assert not pacer.may_send(10)
    assert [pacer.recheck_in() for _ in range(4)] == [0.001, 0.002, 0.004, 0.004]
    unread[0] = 0
    assert pacer.may_send(10)
    unread[0] = 5000
    assert not pacer.may_send(10)
    assert pacer.recheck_in() == 0.001


def test_a_replay_flush_stops_past_the_bound_and_resumes_after_a_read() -> None:
    editor, pump = _Editor(), _Pump()
    pacer = ReplayPacer(lambda: editor.unread, bound=BOUND)
    router = _router(editor, pump, pacer)
    count = 10 * BATCH_UPDATES + 7
    queue = _queue(count)
    router._flush_queue("s1", queue, replay=True)
    # Sent while at most the bound was unread: the bound, plus the one piece that crossed it.
    assert editor.unread == BOUND + BATCH_UPDATES * BYTES_PER_UPDATE
    assert len(queue) == count - 4 * BATCH_UPDATES
    assert len(pump.wakes) == 1  # looked at again soon, without a loop
    router._flush_queue("s1", queue, replay=True)
    assert len(queue) == count - 4 * BATCH_UPDATES  # still unread: nothing more
    while queue:
        editor.read_all()
        router._flush_queue("s1", queue, replay=True)
        assert editor.unread <= BOUND + BATCH_UPDATES * BYTES_PER_UPDATE
    assert editor.received() == _ids(count)
    lone = editor.sent[-1]  # the 7 left over went as one piece; a lone one would go as itself
    assert lone[0] == msg.SESSION_UPDATES and len(lone[1].updates) == 7


def test_a_forced_flush_sends_a_held_replay_whole() -> None:
    editor, pump = _Editor(), _Pump()
    router = _router(editor, pump, ReplayPacer(lambda: editor.unread, bound=BOUND))
    queue = _queue(10 * BATCH_UPDATES)
    router._flush_queue("s1", queue, replay=True)
    assert queue
    router._flush_queue("s1", queue, replay=True, force=True)
    assert not queue
    assert editor.received() == _ids(10 * BATCH_UPDATES)


def test_live_updates_are_not_held_by_the_editors_backlog() -> None:
    editor, pump = _Editor(), _Pump()
    editor.unread = 10 * BOUND
    router = _router(editor, pump, ReplayPacer(lambda: editor.unread, bound=BOUND))
    queue = _queue(2)
    router._flush_queue("s1", queue)  # a live turn: its own budget paces it, not the backlog
    assert editor.received() == _ids(2)


async def test_a_load_waits_until_its_replay_has_gone_to_the_editor() -> None:
    editor, pump = _Editor(), _Pump()
    router = _router(editor, pump, ReplayPacer(lambda: editor.unread, bound=BOUND))
    session = _Session(_queue(10 * BATCH_UPDATES))
    router._flush_queue("s1", session.queue, replay=True)
    waiting = asyncio.ensure_future(router.replay_sent(cast(Any, session)))
    await asyncio.sleep(0)
    assert not waiting.done()
    assert pump.pokes == 1
    while session.queue:
        editor.read_all()
        router._flush_queue("s1", session.queue, replay=True)
        await asyncio.sleep(0)
    await asyncio.wait_for(waiting, 1)
    assert editor.received() == _ids(10 * BATCH_UPDATES)


async def test_an_unpaced_router_never_waits_for_a_replay() -> None:
    editor, pump = _Editor(), _Pump()
    router = _router(editor, pump, None)
    session = _Session(_queue(3))
    await asyncio.wait_for(router.replay_sent(cast(Any, session)), 1)
    assert editor.sent == []
