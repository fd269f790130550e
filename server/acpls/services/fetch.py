"""Blocking HTTP(S)/file fetches run on a daemon thread, so that a slow or unreachable host never
blocks the event loop, and never holds up acpls' exit (a default-executor thread would be joined
at shutdown)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def run_blocking(name: str, work: Callable[[], T]) -> T:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():  # the awaiting task was cancelled: nobody wants the result
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting task, which decides
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=run, name=f"acpls-{name}", daemon=True).start()
    return await future
