"""One owner for every background task acpls runs, so none is fire-and-forget.

Tasks are started through `TaskSupervisor.spawn`; a task that fails is logged with its name, and
`aclose()` cancels and awaits everything still running (on shutdown or agent restart).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

logger = logging.getLogger(__name__)


class TaskSupervisor:
    def __init__(self, name: str) -> None:
        self.name = name
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def spawn(self, name: str, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        if self._closed:
            coro.close()
            raise RuntimeError(f"supervisor {self.name} is closed; cannot start {name}")
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.name}:{name}")
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            logger.error("task %s failed", task.get_name(), exc_info=exc)

    def __len__(self) -> int:
        return len(self._tasks)

    async def aclose(self, grace: float = 2.0) -> None:
        """Cancel every task and wait (bounded) for them to finish."""
        self._closed = True
        tasks = [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                logger.warning("task %s did not stop within %.1fs", task.get_name(), grace)
