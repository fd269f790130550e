"""acpls' watchdog: a small process that stops everything acpls started once acpls is gone, even
when acpls could not do it itself (SIGKILL, a crash, the editor killing its process group).

Linux only. Everything acpls starts (the agent, each client terminal) carries the environment
variable `ACPLS_OWNER=<token>`, a random token of this acpls process; children inherit it, also
those that leave the session with `setsid` or double-fork away from their parent. The watchdog
reads the token as the first line of its stdin, a pipe whose other end only acpls holds, then
waits. End of file on that pipe means acpls is gone or done: the watchdog finds every process of
its own user whose `/proc/<pid>/environ` carries the marker, sends SIGTERM, gives them `grace`
seconds, then SIGKILLs what is left (again and again, so children forked meanwhile go too), and
exits.

One more line acpls may send when its ordinary shutdown begins: `term <pgid> ...` sends SIGTERM
at once to the marked processes outside those process groups (the agents', which acpls stops
politely itself, stdin first), so that the grace of escaped daemons runs while acpls stops the
trees it knows, and the end of file then only waits out what is left of it.

It never hits another process: only processes of the same user whose environment carries this
acpls' token, each signalled through a pidfd opened before its environment is read (a pid that is
recycled in between names the old, dead process, and the signal goes nowhere). What it cannot find
is a process that scrubs the variable from its environment (and execs) or becomes another user;
cgroups would be needed for those.

Standard library only, no acpls import: acpls runs this file with `python -I -S` (no site, no
environment), which starts in a few milliseconds and stays small while it waits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

MARKER = "ACPLS_OWNER"
DEFAULT_GRACE_S = 1.0
_POLL_S = 0.05
# Rounds of SIGKILL: each also takes the children forked since the last one.
_KILL_ROUNDS = 50


def _owner_uid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _carries(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return needle in b"\0" + environ.read()
    except OSError:  # gone, or not ours to read
        return False


def _open(pid: int) -> int | None:
    """A pidfd for `pid` (None where pidfds are missing: then the pid itself is signalled)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        return pidfd_open(pid)
    except OSError:
        return None


def _group(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    return int(raw[raw.rfind(b")") + 2 :].split()[2])


def marked(token: str, *, uid: int | None = None, own: frozenset[int] = frozenset()) -> list:
    """(pid, pidfd or None) of every process of user `uid` (default: ours) whose environment
    carries `ACPLS_OWNER=<token>`; `own` pids are left out. The caller closes the pidfds."""
    uid = os.getuid() if uid is None else uid
    needle = f"\0{MARKER}={token}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in own:
            continue
        pid = int(entry)
        if _owner_uid(pid) != uid:
            continue
        pidfd = _open(pid)  # first: what is read below is then about this very process
        if _carries(pid, needle) and _owner_uid(pid) == uid:
            found.append((pid, pidfd))
        elif pidfd is not None:
            os.close(pidfd)
    return found


def _signal(found: list, signum: int) -> None:
    send = getattr(signal, "pidfd_send_signal", None)
    for pid, pidfd in found:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            if pidfd is not None and send is not None:
                send(pidfd, signum)
            elif pidfd is None:
                os.kill(pid, signum)


def _close(found: list) -> None:
    for _pid, pidfd in found:
        if pidfd is not None:
            os.close(pidfd)


def _signal_marked(
    token: str, signum: int, own: frozenset[int], spared_groups: frozenset[int] = frozenset()
) -> int:
    found = marked(token, own=own)
    if spared_groups:
        spared = [(pid, fd) for pid, fd in found if _group(pid) in spared_groups]
        _close(spared)
        found = [item for item in found if item not in spared]
    try:
        _signal(found, signum)
    finally:
        _close(found)
    return len(found)


def stop_marked(
    token: str, grace: float, own: frozenset[int] = frozenset(), asked_at: float | None = None
) -> int:
    """SIGTERM every marked process, wait up to `grace` seconds (from `asked_at`, a monotonic
    time when an earlier SIGTERM went out), SIGKILL the rest; the number of processes found."""
    first = _signal_marked(token, signal.SIGTERM, own)
    deadline = (time.monotonic() if asked_at is None else asked_at) + grace
    while first and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        left = marked(token, own=own)
        _close(left)
        if not left:
            return first
    for _ in range(_KILL_ROUNDS):
        if not _signal_marked(token, signal.SIGKILL, own):
            break
        time.sleep(_POLL_S / 5)
    return first


def _say(text: str) -> None:
    """A line in acpls' log (its stderr, which the editor may have closed by now)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"acpls watchdog (pid {os.getpid()}): {text}\n")
        sys.stderr.flush()


def main(argv: list[str]) -> int:
    grace = float(argv[1]) if len(argv) > 1 else DEFAULT_GRACE_S
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # only the end of the pipe ends the watch
    stdin = sys.stdin.buffer
    token = stdin.readline().strip().decode("ascii", "replace")
    if not token:
        return 2
    own = frozenset({os.getpid()})
    asked_at = None
    while line := stdin.readline():  # until end of file
        words = line.split()
        if words[:1] == [b"term"] and all(w.isdigit() for w in words[1:]):
            asked_at = time.monotonic()
            _signal_marked(token, signal.SIGTERM, own, frozenset(int(w) for w in words[1:]))
    found = stop_marked(token, grace, own=own, asked_at=asked_at)
    if found:
        _say(f"stopped {found} process(es) acpls started")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
