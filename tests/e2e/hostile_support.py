"""Helpers for the hostile-agent end-to-end tests: the hostile agent's argv, acpls' own stderr
(its log) and its memory."""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from pathlib import Path
from typing import Any

from pygls.client import JsonRPCClient

from tests.agents import AGENTS_DIR

HOSTILE_AGENT = AGENTS_DIR / "hostile_agent.py"
LOG_LINES_KEPT = 50_000


def hostile(mode: str, log: Path, *extra: str) -> dict[str, Any]:
    """The `agent` setting that starts the hostile agent in `mode`, logging what it receives."""
    return {
        "command": sys.executable,
        "args": [str(HOSTILE_AGENT), "--mode", mode, "--log", str(log), *extra],
    }


class ServerLog:
    """acpls' stderr, collected line by line (bounded) instead of forwarded to the test's."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.lines: deque[str] = deque(maxlen=LOG_LINES_KEPT)
        self._process = process
        self._task = asyncio.ensure_future(self._collect())

    async def _collect(self) -> None:
        stream = self._process.stderr
        if stream is None:
            return
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line over the stream limit: keep going
                continue
            if not line:
                return
            self.lines.append(line.decode("utf-8", "replace").rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.lines)

    def has(self, fragment: str) -> bool:
        return any(fragment in line for line in self.lines)

    async def wait_for(self, fragment: str, within: float = 10.0) -> None:
        deadline = asyncio.get_running_loop().time() + within
        while not self.has(fragment):
            if asyncio.get_running_loop().time() > deadline:
                tail = "\n".join(line[:200] for line in list(self.lines)[-30:])
                raise AssertionError(f"acpls never logged {fragment!r}; last lines:\n{tail}")
            await asyncio.sleep(0.05)

    def close(self) -> None:
        self._task.cancel()


def capture_server_log(client: JsonRPCClient) -> ServerLog:
    """Take over the pytest-lsp client's stderr forwarding of the acpls process."""
    forwarder = getattr(client, "_stderr_forwarder", None)
    if forwarder is not None:
        forwarder.cancel()
    process = client._server  # pygls keeps the server process here
    assert process is not None
    return ServerLog(process)


def server_pid(client: JsonRPCClient) -> int:
    process = client._server
    assert process is not None
    return process.pid


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


async def wait_until(predicate: Any, within: float, interval: float = 0.05) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            return False
        await asyncio.sleep(interval)
    return True
