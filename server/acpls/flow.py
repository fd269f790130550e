"""Back-pressure from the editor to the agent.

acpls writes to the editor without blocking (editor/stdio.py). When the editor reads more slowly
than the agent writes, the bytes waiting for the editor pass a high-water mark and the editor
output gate closes: the agent's stdout is no longer read (acp/process.py), so the agent blocks on
its own pipe instead of acpls buffering without bound. It opens again once the waiting bytes
drained below the low-water mark. The server owns one gate per editor connection and passes it to
the stdio writer (which opens and closes it) and to the hub (which gives it to each agent
process); nothing reaches it through a module global.

What acpls produces itself rather than reads from the agent (a client terminal's pty output, read
on: see core/routing.py `UpdateRouter._terminals_may_go`) waits in its own bounded store while the
gate is closed and is sent when it opens (`call_when_open`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)


class FlowGate:
    """Open or closed; `wait_open()` returns at once while open."""

    def __init__(self) -> None:
        self._closed = False
        self._waiters: list[asyncio.Future[None]] = []
        self._on_open: list[Callable[[], None]] = []
        self.times_closed = 0

    @property
    def is_open(self) -> bool:
        return not self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.times_closed += 1

    def open(self) -> None:
        self._closed = False
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        callbacks, self._on_open = self._on_open, []
        for callback in callbacks:  # called from the transport's resume_writing: none may raise
            try:
                callback()
            except Exception:
                logger.exception("a sender waiting for the editor failed")

    def call_when_open(self, callback: Callable[[], None]) -> None:
        """Call `callback` once, when the gate next opens (now if it is open); a callback that
        already waits is not added twice."""
        if not self._closed:
            callback()
        elif callback not in self._on_open:
            self._on_open.append(callback)

    async def wait_open(self) -> None:
        while self._closed:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
