"""Every process of a client-owned terminal, found and signalled on each platform.

A terminal's command runs as the leader of a session of its own (POSIX), and programs start
helpers that may start their own sessions or groups. Killing the terminal must reach them all, and
must never hit a process that merely got a recycled pid. So each process is named by (pid, start
time), re-checked right before it is signalled.

Where the table of processes comes from:

* Linux: `/proc/<pid>/stat` (ppid, session, start time in clock ticks, state).
* macOS (and other POSIX systems without `/proc`): one `ps -A -o pid=,ppid=,pgid=,stat=,lstart=`.
  BSD `ps` has no session column, so a process belongs to the terminal by its process group (the
  leader's pid, as the leader started a new session) or by descent; the start time is `lstart`
  (one-second resolution, enough together with the pid).
* Windows: no table is read. `taskkill /T` ends the tree the console process leads
  (services/process_group.py).

The table readers are parameters, so each platform's path runs in tests on any machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import Callable, Mapping

import attrs

log = logging.getLogger(__name__)

_POLL_S = 0.05
_PS_ARGV = ("ps", "-A", "-o", "pid=,ppid=,pgid=,stat=,lstart=")
_PS_TIMEOUT_S = 5.0

Member = tuple[int, int | str]
"""A process of the tree: (pid, start time). Linux start times are clock ticks, `ps` ones text."""


@attrs.frozen
class ProcInfo:
    """What the tree needs of one process."""

    ppid: int
    group: int
    """The session id (Linux) or the process group id (`ps`): the terminal's leader's pid."""
    start: int | str
    zombie: bool


ProcTable = Mapping[int, ProcInfo]
TableReader = Callable[[], dict[int, ProcInfo]]


# -- Linux: /proc --------------------------------------------------------------------------------


def _proc_stat(pid: int) -> ProcInfo | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name may contain spaces and parentheses; fields resume after the last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    return ProcInfo(
        ppid=int(fields[1]), group=int(fields[3]), start=int(fields[19]), zombie=fields[0] == b"Z"
    )


def proc_table() -> dict[int, ProcInfo]:
    table: dict[int, ProcInfo] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _proc_stat(int(entry))) is not None:
            table[int(entry)] = info
    return table


# -- macOS and other POSIX: ps --------------------------------------------------------------------


def parse_ps(text: str) -> dict[int, ProcInfo]:
    """The table from `ps -A -o pid=,ppid=,pgid=,stat=,lstart=` output; malformed lines skipped.
    `lstart` is the rest of the line ("Wed Dec  2 00:54:37 2026"), normalised to single spaces."""
    table: dict[int, ProcInfo] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 5 or not all(f.isdigit() for f in fields[:3]):
            continue
        pid, ppid, pgid = int(fields[0]), int(fields[1]), int(fields[2])
        table[pid] = ProcInfo(
            ppid=ppid, group=pgid, start=" ".join(fields[4:]), zombie=fields[3].startswith("Z")
        )
    return table


def ps_table(run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run) -> dict:
    try:
        done = run(list(_PS_ARGV), capture_output=True, text=True, timeout=_PS_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("cannot list processes with ps: %s", exc)
        return {}
    return parse_ps(done.stdout)


def default_reader() -> TableReader | None:
    """The table reader of this machine; None on Windows (taskkill needs no table)."""
    if os.name == "nt":
        return None
    return proc_table if os.path.isdir("/proc/self") else ps_table


# -- the tree -------------------------------------------------------------------------------------


def tree_of(leader: int, leader_start: int | str | None, table: ProcTable) -> set[Member]:
    """Every live process of the terminal: members of its session (group) and their descendants.

    The group id is the leader's pid. That number cannot be reused while a process still uses it
    as its session or group id, so members are ours unless the pid now names a different process
    (then the group is empty and the number was recycled). `leader_start` is None when the
    leader exited before its start time could be read; any process with its pid is then a
    different one.
    """
    leader_info = table.get(leader)
    if leader_info is not None and leader_info.start != leader_start:
        return set()
    members = {pid for pid, info in table.items() if info.group == leader and not info.zombie}
    if leader_info is not None:
        members.add(leader)
    children: dict[int, list[int]] = {}
    for pid, info in table.items():
        children.setdefault(info.ppid, []).append(pid)
    pending = list(members)
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in members and not table[child].zombie:
                members.add(child)
                pending.append(child)
    return {(pid, table[pid].start) for pid in members}


class ProcessTrees:
    """Finds, watches and signals terminals' process trees with one table reader."""

    def __init__(self, reader: TableReader | None, *, kill: Callable = os.kill) -> None:
        """`reader` None: no table (Windows), every method finds nothing."""
        self._read = reader
        self._kill = kill

    @classmethod
    def of_this_machine(cls) -> ProcessTrees:
        return cls(default_reader())

    @property
    def available(self) -> bool:
        return self._read is not None

    def start_time(self, pid: int) -> int | str | None:
        if self._read is None:
            return None
        # With /proc, one file instead of the whole table.
        info = _proc_stat(pid) if self._read is proc_table else self._read().get(pid)
        return None if info is None else info.start

    def tree(self, leader: int, leader_start: int | str | None) -> set[Member]:
        if self._read is None:
            return set()
        return tree_of(leader, leader_start, self._read())

    def alive(self, tree: set[Member]) -> set[Member]:
        if self._read is None or not tree:
            return set()
        if self._read is proc_table:  # a few files instead of the whole table
            table = {pid: info for pid, _ in tree if (info := _proc_stat(pid)) is not None}
        else:
            table = self._read()
        return {
            (pid, start)
            for pid, start in tree
            if (info := table.get(pid)) is not None and info.start == start and not info.zombie
        }

    async def wait_gone(self, tree: set[Member], timeout_s: float) -> set[Member]:
        """Poll until the processes are gone (they are not all our children, so the table is the
        only way to watch them); return the survivors."""
        survivors = self.alive(tree)
        for _ in range(max(1, int(timeout_s / _POLL_S))):
            if not survivors:
                break
            await asyncio.sleep(_POLL_S)
            survivors = self.alive(survivors)
        return survivors

    def signal(self, leader: int, tree: set[Member], signum: int) -> None:
        if not tree:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader, signum)
        still = self.alive(tree)  # one fresh table: a recycled pid is never hit
        for pid, _start in still:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                self._kill(pid, signum)


SIGTERM = int(getattr(signal, "SIGTERM", 15))
SIGKILL = int(getattr(signal, "SIGKILL", 9))
