"""A child process and everything it starts, as one group to stop, on each platform.

Agents start helpers (npx starts node, node starts shells), so stopping an agent means stopping its
tree. On POSIX the child leads a new session, and its process group is signalled (SIGTERM to ask,
SIGKILL to force). Windows has no process groups to signal: the child gets a new console process
group (so Ctrl+C meant for the editor does not reach it), and `taskkill /T` ends the tree (`/F`
to force). The platform is a parameter so that both paths are tested everywhere.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

ON_WINDOWS = os.name == "nt"
# subprocess.CREATE_NEW_PROCESS_GROUP exists only on Windows; its value is fixed by the Win32 API.
CREATE_NEW_PROCESS_GROUP = 0x00000200
_TASKKILL_TIMEOUT = 10.0

Runner = Callable[..., Any]


def spawn_options(*, windows: bool = ON_WINDOWS) -> dict[str, Any]:
    """Keyword arguments for subprocess / asyncio.create_subprocess_exec: a group of its own."""
    if windows:
        return {"creationflags": CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def taskkill_argv(pid: int, *, force: bool) -> list[str]:
    return ["taskkill", "/PID", str(pid), "/T", *(["/F"] if force else [])]


def stop_group(
    pid: int,
    *,
    force: bool,
    windows: bool = ON_WINDOWS,
    run: Runner = subprocess.run,
    killpg: Callable[[int, int], None] | None = None,
) -> None:
    """Ask (`force=False`) or make (`force=True`) the group led by `pid` end. A group that is
    already gone is not an error."""
    if windows:
        argv = taskkill_argv(pid, force=force)
        try:
            run(argv, capture_output=True, timeout=_TASKKILL_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("%s failed: %s", " ".join(argv), exc)
        return
    sig = getattr(signal, "SIGKILL" if force else "SIGTERM")
    with contextlib.suppress(ProcessLookupError, PermissionError):
        (killpg or os.killpg)(pid, sig)
