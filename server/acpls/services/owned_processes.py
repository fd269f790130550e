"""Every process acpls starts carries its owner's mark, and a watchdog stops them all when acpls
ends, however it ends (editors/protocol.md section 10, "When the editor goes away").

`mark(env)` is applied to the environment of each agent and client terminal acpls starts: it adds
`ACPLS_OWNER=<token>` (a random token of this acpls process, replacing one inherited from an acpls
this one runs inside) and, the first time, starts the watchdog (services/watchdog.py), a small
process in a session of its own that holds the read end of a pipe from acpls. When acpls closes
that pipe (`stop_all`, at the end of an ordinary shutdown) or dies (SIGKILL, a crash), the watchdog
finds the marked processes in /proc, including daemons that left their session with `setsid` and
double forks, and stops them: SIGTERM, a grace period, SIGKILL. An ordinary shutdown awaits it.

Linux only (it reads /proc/<pid>/environ); elsewhere `mark` still marks and no watchdog runs. The
agent's own process group and each terminal's tree are stopped by acp/process.py and
services/terminals.py first; the watchdog takes what escaped them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from acpls.services.watchdog import DEFAULT_GRACE_S, MARKER

log = logging.getLogger(__name__)

WATCHDOG_SCRIPT = Path(__file__).with_name("watchdog.py")
# How long acpls waits for the watchdog's sweep beyond its grace period (the SIGKILL rounds).
_SWEEP_SLACK_S = 3.0
_POLL_S = 0.02


def supported() -> bool:
    return sys.platform.startswith("linux") and os.path.exists("/proc/self/environ")


class OwnedProcesses:
    """The mark of one acpls (its hub's: core/hub.py) and its watchdog."""

    def __init__(self, grace_s: float = DEFAULT_GRACE_S) -> None:
        self.token = secrets.token_hex(16)
        self.grace_s = grace_s
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._finished = False
        self._spared: set[int] = set()

    def mark(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` with this acpls' mark (set last: an agent's own `env` cannot remove it)."""
        self._ensure_watchdog()
        return {**env, MARKER: self.token}

    @property
    def watchdog_pid(self) -> int | None:
        return self._watchdog.pid if self._watchdog is not None else None

    def _ensure_watchdog(self) -> None:
        if self._watchdog is not None or self._finished or not supported():
            return
        try:
            watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", str(WATCHDOG_SCRIPT), str(self.grace_s)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                # Its own session: a signal to acpls' process group does not reach it.
                start_new_session=True,
                close_fds=True,
                env={"PATH": os.defpath},  # unmarked: it never finds itself
            )
        except OSError as exc:
            log.error("cannot start the process watchdog: %s", exc)
            return
        assert watchdog.stdin is not None
        # The token goes through the pipe, not the command line other users can read.
        watchdog.stdin.write(f"{self.token}\n".encode())
        watchdog.stdin.flush()
        self._watchdog = watchdog
        log.info("process watchdog started (pid %d)", watchdog.pid)

    def spare_group(self, pgid: int) -> None:
        """An agent's process group: `begin_stop` leaves it to acpls' polite stop (stdin first)."""
        self._spared.add(pgid)

    def forget_group(self, pgid: int) -> None:
        self._spared.discard(pgid)

    def begin_stop(self) -> None:
        """acpls' shutdown begins: the watchdog sends SIGTERM now to the marked processes outside
        the agents' groups (escaped daemons among them), so that their grace runs while acpls
        stops the agents and terminals it knows; `stop_all` ends it."""
        watchdog = self._watchdog
        if watchdog is None or watchdog.stdin is None:
            return
        groups = " ".join(str(g) for g in sorted(self._spared))
        with contextlib.suppress(OSError, ValueError):
            watchdog.stdin.write(f"term {groups}\n".encode())
            watchdog.stdin.flush()

    async def stop_all(self) -> None:
        """acpls is done: the watchdog stops every marked process that is left (SIGTERM, grace,
        SIGKILL), and this waits for it (bounded). New marks start no watchdog after this."""
        self._finished = True
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is None:
            return
        assert watchdog.stdin is not None
        with contextlib.suppress(OSError):
            watchdog.stdin.close()
        deadline = asyncio.get_running_loop().time() + self.grace_s + _SWEEP_SLACK_S
        while watchdog.poll() is None:
            if asyncio.get_running_loop().time() > deadline:
                log.error("the process watchdog (pid %d) is still at work", watchdog.pid)
                return
            await asyncio.sleep(_POLL_S)
