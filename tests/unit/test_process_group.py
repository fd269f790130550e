"""Stopping an agent's whole tree on POSIX and Windows (the Windows path run with a recording
runner: taskkill is what ends a tree there), and the POSIX path for real."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from acpls.services.process_group import (
    CREATE_NEW_PROCESS_GROUP,
    spawn_options,
    stop_group,
)


def test_spawn_options_per_platform() -> None:
    assert spawn_options(windows=False) == {"start_new_session": True}
    assert spawn_options(windows=True) == {"creationflags": CREATE_NEW_PROCESS_GROUP}
    if sys.platform == "win32":
        assert subprocess.CREATE_NEW_PROCESS_GROUP == CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]


def test_windows_asks_then_forces_the_tree_with_taskkill() -> None:
    calls: list[list[str]] = []
    stop_group(4242, force=False, windows=True, run=lambda argv, **_: calls.append(argv))
    stop_group(4242, force=True, windows=True, run=lambda argv, **_: calls.append(argv))
    assert calls == [
        ["taskkill", "/PID", "4242", "/T"],
        ["taskkill", "/PID", "4242", "/T", "/F"],
    ]


def test_windows_taskkill_missing_is_logged_not_raised(caplog) -> None:
    def missing(argv, **_):
        raise FileNotFoundError(argv[0])

    stop_group(1, force=True, windows=True, run=missing)
    assert "taskkill /PID 1 /T /F failed" in caplog.text


def test_posix_signals_the_group() -> None:
    sent: list[tuple[int, int]] = []
    stop_group(77, force=False, windows=False, killpg=lambda pid, sig: sent.append((pid, sig)))
    stop_group(77, force=True, windows=False, killpg=lambda pid, sig: sent.append((pid, sig)))
    assert sent == [(77, signal.SIGTERM), (77, signal.SIGKILL)]


def test_posix_group_with_a_grandchild_ends_whole_and_a_gone_group_is_fine() -> None:
    # A shell (the group leader) with a child that outlives a plain kill of the leader.
    proc = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!; wait"],
        stdout=subprocess.PIPE,
        text=True,
        **spawn_options(windows=False),
    )
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    stop_group(proc.pid, force=True, windows=False)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(grandchild):
        time.sleep(0.05)
    assert not _alive(grandchild)
    stop_group(proc.pid, force=True, windows=False)  # already gone: no error


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False
