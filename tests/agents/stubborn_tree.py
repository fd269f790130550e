"""A process tree that does not want to die, for the tests that check acpls leaves nothing behind.

Run: `python tests/agents/stubborn_tree.py --pids FILE [--daemon]`. The process ignores SIGTERM
(and SIGHUP, SIGINT), forks a child that does the same, and with `--daemon` also double-forks a
grandchild that leaves the session (`setsid`), the way a daemon escapes its terminal. Each of them
appends "<pid> <start time>" to FILE (the start time in clock ticks from /proc/self/stat, so that a
test names each process by pid and start time and a recycled pid is never taken for it) and then
sleeps until killed.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time


def _record(pids_file: str) -> None:
    with open("/proc/self/stat", "rb") as stat:
        raw = stat.read()
    start = raw[raw.rfind(b")") + 2 :].split()[19].decode()
    fd = os.open(pids_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{os.getpid()} {start}\n".encode())  # one write: lines never interleave
    finally:
        os.close(fd)


def _stubborn() -> None:
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)


def _sleep_forever() -> None:
    while True:
        time.sleep(3600)


def _daemonize(pids_file: str) -> None:
    """Fork, setsid, fork again: the grandchild is in no session or group of ours."""
    if os.fork() != 0:
        return
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    _stubborn()
    _record(pids_file)
    _sleep_forever()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pids", required=True)
    parser.add_argument("--daemon", action="store_true")
    args = parser.parse_args()
    _stubborn()
    _record(args.pids)
    if os.fork() == 0:
        _record(args.pids)
        _sleep_forever()
    if args.daemon:
        _daemonize(args.pids)
    _sleep_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
