"""Client-owned terminals on macOS and Windows, run here (services/ptys.py, process_tree.py).

macOS: the process table comes from `ps` instead of /proc. Linux's `ps` takes the same arguments,
so the macOS path runs for real: a terminal's whole tree (a child that left the session
included) is found through `ps` and killed. Windows: ConPTY comes from pywinpty; a stand-in with
pywinpty's `PtyProcess` interface runs the command on pipes, and `taskkill` is recorded and
played with signals, so everything acpls does around them (argv, reader thread, exit, kill with
and without /F, close) runs here.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from acpls.services.process_tree import ProcessTrees, ProcInfo, parse_ps, ps_table, tree_of
from acpls.services.ptys import Platform
from acpls.services.terminals import ClientTerminals, ExitStatus, TerminalError

PS_MACOS = """\
    1     0     1 Ss   Tue Dec  1 09:00:01 2026
  501     1   501 Ss   Wed Dec  2 01:00:00 2026
  502   501   501 S    Wed Dec  2 01:00:01 2026
  503   502   503 Ss   Wed Dec  2 01:00:02 2026
  504   501   501 Z    Wed Dec  2 01:00:03 2026
  600     1   600 S    Wed Dec  2 01:00:04 2026
garbage line
"""


def test_ps_output_of_macos_is_read_into_the_table():
    table = parse_ps(PS_MACOS)
    assert sorted(table) == [1, 501, 502, 503, 504, 600]
    assert table[502] == ProcInfo(
        ppid=501, group=501, start="Wed Dec 2 01:00:01 2026", zombie=False
    )
    assert table[504].zombie


def test_tree_takes_the_group_and_descendants_that_left_it_never_zombies_or_strangers():
    table = parse_ps(PS_MACOS)
    tree = tree_of(501, "Wed Dec 2 01:00:00 2026", table)
    assert {pid for pid, _ in tree} == {501, 502, 503}  # 503 started its own group: by descent


def test_a_recycled_leader_pid_is_not_the_terminal():
    table = parse_ps(PS_MACOS)
    assert tree_of(501, "Mon Nov 30 08:00:00 2026", table) == set()


def test_leader_gone_before_its_start_was_read_still_finds_its_group():
    table = {k: v for k, v in parse_ps(PS_MACOS).items() if k != 501}
    assert {pid for pid, _ in tree_of(501, None, table)} == {502, 503}


def test_ps_failure_is_an_empty_table_not_an_error():
    def broken(*_a: Any, **_k: Any) -> Any:
        raise FileNotFoundError("ps")

    assert ps_table(broken) == {}


# -- the macOS path, for real -----------------------------------------------------------------


def _dead(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _alive(pid)]
        time.sleep(0.05)
    return alive


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().split(b") ")[1][:1] != b"Z"
    except OSError:
        return False


async def _output(terms: ClientTerminals, tid: str, needle: str) -> str:
    for _ in range(400):
        out = terms.output("s1", tid).output
        if needle in out:
            return out
        await asyncio.sleep(0.025)
    raise AssertionError(f"{needle!r} never came: {terms.output('s1', tid).output!r}")


async def test_macos_process_table_through_ps_kills_the_whole_tree():
    platform = Platform.for_posix(ps_table)
    terms = ClientTerminals(
        base_env=dict(os.environ),
        on_output=lambda *a: None,
        on_exit=lambda *a: None,
        platform=platform,
        kill_grace_s=1.0,
    )
    try:
        script = "sleep 300 & echo a=$!; setsid sleep 301 & echo b=$!; wait"
        tid = await terms.create("s1", "/bin/sh", ["-c", script])
        out = await _output(terms, tid, "b=")
        pids = [int(out.split(f"{k}=")[1].split()[0]) for k in "ab"]
        leader = terms._get("s1", tid)
        assert isinstance(leader.start_time, str)  # lstart from ps, not /proc ticks
        tree = platform.trees.tree(leader.pid, leader.start_time)
        assert {pid for pid, _ in tree} >= {leader.pid, *pids}
        await terms.release("s1", tid)
        assert _dead(pids) == []
    finally:
        await terms.aclose()


# -- Windows: ConPTY through a pywinpty stand-in ------------------------------------------------


class FakePtyProcess:
    """pywinpty's `winpty.PtyProcess` interface over a pipe: blocking `read` that decodes UTF-8
    and raises EOFError at the end, `wait`, `isalive`, `close(force)`, `pid`."""

    spawned: list[dict[str, Any]] = []

    def __init__(self, argv: list[str], cwd: str | None, env: dict[str, str]) -> None:
        if argv[:4] == ["cmd.exe", "/d", "/s", "/c"]:
            argv = ["/bin/sh", "-c", argv[4]]  # the shell line, run by this machine's shell
        self._popen = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        self.pid = self._popen.pid
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.closed = False

    @classmethod
    def spawn(cls, argv, cwd=None, env=None, dimensions=(24, 80)):
        cls.spawned.append({"argv": list(argv), "cwd": cwd, "dimensions": dimensions})
        if not os.path.exists(argv[0]) and argv[0] != "cmd.exe":
            raise FileNotFoundError(f"The command was not found or was not executable: {argv[0]}")
        return cls(list(argv), cwd, dict(env or {}))

    def read(self, size: int = 1024) -> str:
        assert self._popen.stdout is not None
        data = os.read(self._popen.stdout.fileno(), size)
        if not data:
            raise EOFError("Pty is closed")
        return self._decoder.decode(data)

    def wait(self) -> int:
        return self._popen.wait()

    def isalive(self) -> bool:
        return self._popen.poll() is None

    def close(self, force: bool = False) -> None:
        if self.isalive() and force:
            os.killpg(self.pid, signal.SIGKILL)
        self.closed = True


class Taskkill:
    """Records taskkill command lines and plays them: /F is SIGKILL, else SIGTERM, to the tree."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], **_kwargs: Any) -> Any:
        self.calls.append(list(argv))
        pid = int(argv[argv.index("/PID") + 1])
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL if "/F" in argv else signal.SIGTERM)
        return SimpleNamespace(returncode=0, stdout="", stderr="")


def _fake_winpty() -> ModuleType:
    module = ModuleType("winpty")
    module.PtyProcess = FakePtyProcess  # type: ignore[attr-defined]
    return module


@pytest.fixture
def windows():
    FakePtyProcess.spawned.clear()
    taskkill = Taskkill()
    outputs: list[bytes] = []
    exits: list[ExitStatus] = []
    terms = ClientTerminals(
        base_env=dict(os.environ),
        on_output=lambda _s, _t, data: outputs.append(data),
        on_exit=lambda _s, _t, status: exits.append(status),
        platform=Platform.for_windows(_fake_winpty(), run=taskkill),
        kill_grace_s=0.5,
        rows=30,
        columns=100,
    )
    return SimpleNamespace(terms=terms, taskkill=taskkill, outputs=outputs, exits=exits)


async def test_windows_terminal_runs_on_conpty_with_its_size_and_reports_output_and_exit(windows):
    terms = windows.terms
    try:
        tid = await terms.create(
            "s1", sys.executable, ["-c", "print('héllo'); raise SystemExit(3)"]
        )
        assert await terms.wait_for_exit("s1", tid) == ExitStatus(exit_code=3, signal=None)
        assert "héllo" in terms.output("s1", tid).output
        assert b"h\xc3\xa9llo" in b"".join(windows.outputs)
        assert FakePtyProcess.spawned[0]["dimensions"] == (30, 100)
        assert windows.exits == [ExitStatus(exit_code=3, signal=None)]
    finally:
        await terms.aclose()


async def test_windows_shell_line_goes_through_cmd_exe(windows):
    terms = windows.terms
    try:
        tid = await terms.create("s1", "echo one && echo two")
        await terms.wait_for_exit("s1", tid)
        assert FakePtyProcess.spawned[0]["argv"] == [
            "cmd.exe",
            "/d",
            "/s",
            "/c",
            "echo one && echo two",
        ]
        assert "two" in terms.output("s1", tid).output
    finally:
        await terms.aclose()


def test_windows_shell_line_arguments_are_quoted_for_cmd():
    platform = Platform.for_windows(None)
    assert platform.shell_argv("type", ["a b.txt", "c"]) == [
        "cmd.exe",
        "/d",
        "/s",
        "/c",
        'type "a b.txt" c',
    ]


async def test_windows_kill_asks_with_taskkill_then_forces_the_tree(windows):
    terms = windows.terms
    try:
        code = "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
        tid = await terms.create("s1", sys.executable, ["-c", code])
        await _output(terms, tid, "up")
        pid = terms._get("s1", tid).pid
        await terms.kill("s1", tid)
        assert windows.taskkill.calls == [
            ["taskkill", "/PID", str(pid), "/T"],
            ["taskkill", "/PID", str(pid), "/T", "/F"],
        ]
        assert (await terms.wait_for_exit("s1", tid)).signal == "SIGKILL"
    finally:
        await terms.aclose()


async def test_windows_release_ends_the_process_and_its_reader_thread(windows):
    terms = windows.terms
    before = {t.name for t in threading.enumerate()}
    tid = await terms.create(
        "s1", sys.executable, ["-c", "import time; print('up', flush=True); time.sleep(60)"]
    )
    await _output(terms, tid, "up")
    pid = terms._get("s1", tid).pid
    assert f"conpty-{pid}" in {t.name for t in threading.enumerate()} - before
    await terms.release("s1", tid)
    assert windows.taskkill.calls[0] == ["taskkill", "/PID", str(pid), "/T"]
    assert f"conpty-{pid}" not in {t.name for t in threading.enumerate()}
    assert _dead([pid]) == []
    with pytest.raises(TerminalError):
        terms.output("s1", tid)
    await terms.aclose()


async def test_windows_without_pywinpty_says_what_to_install():
    terms = ClientTerminals(
        base_env=dict(os.environ),
        on_output=lambda *a: None,
        on_exit=lambda *a: None,
        platform=Platform.for_windows(None),
    )
    with pytest.raises(TerminalError, match="pywinpty"):
        await terms.create("s1", sys.executable, ["-c", "pass"])
    await terms.aclose()


async def test_windows_missing_command_is_invalid_params(windows):
    with pytest.raises(TerminalError, match="not found") as info:
        await windows.terms.create("s1", "/nonexistent/tool.exe")
    assert info.value.code == -32602
    await windows.terms.aclose()


def test_process_trees_without_a_table_find_nothing():
    trees = ProcessTrees(None)
    assert not trees.available
    assert trees.tree(os.getpid(), None) == set()
    assert trees.start_time(os.getpid()) is None
