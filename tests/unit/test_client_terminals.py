"""Client-owned terminals with real processes on a pty."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest

from acpls.services.terminals import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    ClientTerminals,
    ExitStatus,
    TerminalError,
)

PY = sys.executable


class Recorder:
    def __init__(self) -> None:
        self.chunks: dict[str, bytearray] = {}
        self.exits: list[tuple[str, str, ExitStatus]] = []

    def on_output(self, session_id: str, terminal_id: str, data: bytes) -> None:
        self.chunks.setdefault(terminal_id, bytearray()).extend(data)

    def on_exit(self, session_id: str, terminal_id: str, status: ExitStatus) -> None:
        self.exits.append((session_id, terminal_id, status))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
async def terms(recorder: Recorder) -> AsyncIterator[ClientTerminals]:
    terminals = ClientTerminals(
        base_env=dict(os.environ),
        on_output=recorder.on_output,
        on_exit=recorder.on_exit,
        kill_grace_s=0.5,
    )
    yield terminals
    await terminals.aclose()


async def wait_output(terms: ClientTerminals, sid: str, tid: str, needle: str) -> str:
    for _ in range(200):
        out = terms.output(sid, tid).output
        if needle in out:
            return out
        await asyncio.sleep(0.025)
    raise AssertionError(f"{needle!r} never appeared in {terms.output(sid, tid).output!r}")


def pid_alive(pid: int) -> bool:
    """Alive per `ps`: listed and not a zombie (an orphan's zombie is dead, only unreaped)."""
    result = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True)
    state = result.stdout.strip()
    return bool(state) and not state.startswith("Z")


async def wait_dead(pids: list[int]) -> list[int]:
    alive = [pid for pid in pids if pid_alive(pid)]
    for _ in range(40):
        if not alive:
            break
        await asyncio.sleep(0.05)
        alive = [pid for pid in alive if pid_alive(pid)]
    return alive


TREE_SCRIPT = "sleep 300 & echo child=$!; setsid sleep 300 & echo escaped=$!; echo shell=$$; wait"


async def start_tree(terms: ClientTerminals, sid: str) -> tuple[str, list[int]]:
    tid = await terms.create(sid, "/bin/sh", ["-c", TREE_SCRIPT])
    out = await wait_output(terms, sid, tid, "shell=")
    pids = [int(part.split("=")[1]) for part in out.split() if "=" in part]
    assert len(pids) == 3
    assert all(pid_alive(pid) for pid in pids)
    return tid, pids


async def test_direct_command_output_and_exit_code(terms: ClientTerminals) -> None:
    tid = await terms.create("s1", "echo", ["hello", "world"])
    status = await terms.wait_for_exit("s1", tid)
    assert status == ExitStatus(exit_code=0, signal=None)
    result = terms.output("s1", tid)
    assert result.output == "hello world\r\n"
    assert not result.truncated
    assert result.exit_status == status
    assert result.to_acp()["exitStatus"] == {"exitCode": 0, "signal": None}


async def test_exit_code_reported(terms: ClientTerminals) -> None:
    tid = await terms.create("s1", PY, ["-c", "raise SystemExit(3)"])
    assert await terms.wait_for_exit("s1", tid) == ExitStatus(exit_code=3, signal=None)


async def test_colour_preserved_through_pty(terms: ClientTerminals, recorder: Recorder) -> None:
    code = "import sys; print('\\x1b[31mred\\x1b[0m' if sys.stdout.isatty() else 'plain')"
    tid = await terms.create("s1", PY, ["-c", code])
    await terms.wait_for_exit("s1", tid)
    assert terms.output("s1", tid).output == "\x1b[31mred\x1b[0m\r\n"
    assert bytes(recorder.chunks[tid]) == b"\x1b[31mred\x1b[0m\r\n"


async def test_term_and_window_size(terms: ClientTerminals) -> None:
    code = "import os, shutil; print(os.environ['TERM'], os.get_terminal_size().columns)"
    tid = await terms.create("s1", PY, ["-c", code])
    await terms.wait_for_exit("s1", tid)
    assert terms.output("s1", tid).output == "xterm-256color 120\r\n"


async def test_shell_line_runs_through_sh(terms: ClientTerminals) -> None:
    tid = await terms.create("s1", "printf 'a\\nb\\nc\\n' | tail -n 1 && echo done")
    await terms.wait_for_exit("s1", tid)
    assert terms.output("s1", tid).output == "c\r\ndone\r\n"


async def test_shell_line_with_args_gets_them_as_parameters(terms: ClientTerminals) -> None:
    tid = await terms.create("s1", "echo first", ["second", "third"])
    await terms.wait_for_exit("s1", tid)
    assert terms.output("s1", tid).output == "first second third\r\n"


async def test_env_on_top_of_base_and_cwd(terms: ClientTerminals, tmp_path) -> None:
    env = [{"name": "ACPLS_T", "value": "v 1"}, {"name": "TERM", "value": "dumb"}]
    code = "import os; print(os.environ['ACPLS_T'], os.environ['TERM'], os.getcwd())"
    tid = await terms.create("s1", PY, ["-c", code], env, str(tmp_path))
    await terms.wait_for_exit("s1", tid)
    assert terms.output("s1", tid).output == f"v 1 dumb {tmp_path}\r\n"


async def test_missing_command_is_a_clear_error(terms: ClientTerminals) -> None:
    with pytest.raises(TerminalError) as err:
        await terms.create("s1", "acpls-no-such-command-xyz", ["--help"])
    assert err.value.code == INVALID_PARAMS
    assert "command not found: acpls-no-such-command-xyz" in err.value.message


async def test_missing_cwd_is_an_error(terms: ClientTerminals, tmp_path) -> None:
    with pytest.raises(TerminalError) as err:
        await terms.create("s1", "echo", ["x"], None, str(tmp_path / "nope"))
    assert err.value.code == INVALID_PARAMS
    assert "does not exist" in err.value.message
    with pytest.raises(TerminalError, match="absolute"):
        await terms.create("s1", "echo", ["x"], None, "relative/dir")


async def test_bad_params_are_errors(terms: ClientTerminals) -> None:
    with pytest.raises(TerminalError, match="negative"):
        await terms.create("s1", "echo", [], None, None, -1)
    with pytest.raises(TerminalError, match="variable name"):
        await terms.create("s1", "echo", [], [{"name": "A=B", "value": "x"}])
    with pytest.raises(TerminalError, match="NUL"):
        await terms.create("s1", "echo", ["a\0b"])


async def test_truncation_keeps_tail_at_character_boundary(terms: ClientTerminals) -> None:
    # Six bytes of 'é' (two bytes each); the last five start in the middle of a character.
    code = "import sys; sys.stdout.buffer.write('ééé'.encode())"
    tid = await terms.create("s1", PY, ["-c", code], None, None, 5)
    await terms.wait_for_exit("s1", tid)
    result = terms.output("s1", tid)
    assert result.output == "éé"
    assert result.truncated


async def test_truncation_of_long_output(terms: ClientTerminals, recorder: Recorder) -> None:
    code = "import sys; [print(f'line {i:05d}') for i in range(20000)]"
    tid = await terms.create("s1", PY, ["-c", code], None, None, 1000)
    await terms.wait_for_exit("s1", tid)
    result = terms.output("s1", tid)
    assert result.truncated
    assert len(result.output.encode()) <= 1000
    assert result.output.endswith("line 19999\r\n")
    # The editor stream is not limited by the agent's outputByteLimit.
    assert len(recorder.chunks[tid]) == 20000 * len(b"line 00000\r\n")


async def test_output_limit_zero_keeps_nothing(terms: ClientTerminals) -> None:
    tid = await terms.create("s1", "echo", ["something"], None, None, 0)
    await terms.wait_for_exit("s1", tid)
    result = terms.output("s1", tid)
    assert result.output == ""
    assert result.truncated
    silent = await terms.create("s1", "true", [], None, None, 0)
    await terms.wait_for_exit("s1", silent)
    assert terms.output("s1", silent).truncated is False


async def test_exit_by_signal_is_named(terms: ClientTerminals) -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    tid = await terms.create("s1", PY, ["-c", code])
    assert await terms.wait_for_exit("s1", tid) == ExitStatus(exit_code=None, signal="SIGTERM")


async def test_kill_keeps_terminal_valid(terms: ClientTerminals, recorder: Recorder) -> None:
    code = "import time; print('started', flush=True); time.sleep(300)"
    tid = await terms.create("s1", PY, ["-c", code])
    await wait_output(terms, "s1", tid, "started")
    await terms.kill("s1", tid)
    result = terms.output("s1", tid)
    assert result.output == "started\r\n"
    assert result.exit_status == ExitStatus(exit_code=None, signal="SIGTERM")
    assert await terms.wait_for_exit("s1", tid) == result.exit_status
    assert recorder.exits == [("s1", tid, result.exit_status)]
    await terms.kill("s1", tid)  # killing an exited terminal is harmless


async def test_kill_escalates_to_sigkill(terms: ClientTerminals) -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
        "print('ready', flush=True); time.sleep(300)"
    )
    tid = await terms.create("s1", PY, ["-c", code])
    await wait_output(terms, "s1", tid, "ready")
    await terms.kill("s1", tid)
    assert terms.output("s1", tid).exit_status == ExitStatus(exit_code=None, signal="SIGKILL")


async def test_release_kills_whole_tree_and_frees_id(terms: ClientTerminals) -> None:
    tid, pids = await start_tree(terms, "s1")
    await terms.release("s1", tid)
    assert await wait_dead(pids) == []
    for call in (terms.output, terms.wait_for_exit, terms.kill, terms.release):
        with pytest.raises(TerminalError) as err:
            result = call("s1", tid)
            if asyncio.iscoroutine(result):
                await result
        assert err.value.code == RESOURCE_NOT_FOUND
        assert tid in err.value.message


async def test_release_kills_background_children_after_leader_exit(
    terms: ClientTerminals,
) -> None:
    tid = await terms.create("s1", "/bin/sh", ["-c", "sleep 300 & echo bg=$!"])
    out = await wait_output(terms, "s1", tid, "bg=")
    pid = int(out.split("bg=")[1].split()[0])
    await terms.wait_for_exit("s1", tid)
    assert pid_alive(pid)
    await terms.release("s1", tid)
    assert await wait_dead([pid]) == []


async def test_kill_all_leaves_no_process(terms: ClientTerminals) -> None:
    _, pids_a = await start_tree(terms, "s1")
    _, pids_b = await start_tree(terms, "s2")
    await terms.kill_all()
    assert await wait_dead(pids_a + pids_b) == []
    assert terms.terminal_ids("s1") == [] and terms.terminal_ids("s2") == []


async def test_close_session_only_touches_that_session(terms: ClientTerminals) -> None:
    _, pids_a = await start_tree(terms, "s1")
    tid_b, pids_b = await start_tree(terms, "s2")
    await terms.close_session("s1")
    assert await wait_dead(pids_a) == []
    assert all(pid_alive(pid) for pid in pids_b)
    assert terms.terminal_ids("s2") == [tid_b]
    with pytest.raises(TerminalError):
        terms.output("s1", tid_b)


async def test_kill_all_now_without_awaiting(terms: ClientTerminals) -> None:
    _, pids = await start_tree(terms, "s1")
    terms.kill_all_now()
    assert await wait_dead(pids) == []


async def test_aclose_refuses_new_terminals(recorder: Recorder) -> None:
    terminals = ClientTerminals(
        base_env=dict(os.environ), on_output=recorder.on_output, on_exit=recorder.on_exit
    )
    await terminals.aclose()
    with pytest.raises(TerminalError, match="shut down"):
        await terminals.create("s1", "echo", [])


async def test_callback_errors_do_not_break_the_terminal() -> None:
    def broken(*_args: object) -> None:
        raise RuntimeError("boom")

    terminals = ClientTerminals(base_env=dict(os.environ), on_output=broken, on_exit=broken)
    try:
        tid = await terminals.create("s1", "echo", ["still here"])
        await terminals.wait_for_exit("s1", tid)
        assert terminals.output("s1", tid).output == "still here\r\n"
    finally:
        await terminals.aclose()


async def test_tree_killed_when_leader_was_reaped_before_start_time_read(
    terms: ClientTerminals, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leader that exits at once can be reaped before its start time is read; its
    background children must still be found (through the session) and killed."""
    from acpls.services.process_tree import ProcessTrees

    monkeypatch.setattr(ProcessTrees, "start_time", lambda self, pid: None)
    tid = await terms.create("s1", "/bin/sh", ["-c", "sleep 300 & echo bg=$!"])
    out = await wait_output(terms, "s1", tid, "bg=")
    pid = int(out.split("bg=")[1].split()[0])
    await terms.wait_for_exit("s1", tid)
    monkeypatch.undo()
    await terms.release("s1", tid)
    assert await wait_dead([pid]) == []


async def test_wait_for_exit_pending_during_release_gets_an_error(
    terms: ClientTerminals,
) -> None:
    code = "import time; print('up', flush=True); time.sleep(300)"
    tid = await terms.create("s1", PY, ["-c", code])
    await wait_output(terms, "s1", tid, "up")
    waiter = asyncio.ensure_future(terms.wait_for_exit("s1", tid))
    await asyncio.sleep(0.05)
    await terms.release("s1", tid)
    # The process ended by the release's SIGTERM, so the pending wait sees that exit.
    assert await asyncio.wait_for(waiter, 5) == ExitStatus(exit_code=None, signal="SIGTERM")


async def test_a_close_cancelled_in_its_grace_period_still_kills_and_aclose_awaits_it(
    recorder: Recorder,
) -> None:
    """A session's close runs as a task; acpls' shutdown cancels its tasks. The kill, between its
    SIGTERM (ignored here) and its SIGKILL, must go on, and aclose() must wait for it."""
    terminals = ClientTerminals(
        base_env=dict(os.environ),
        on_output=recorder.on_output,
        on_exit=recorder.on_exit,
        kill_grace_s=1.0,
    )
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
        "print('ready', flush=True); time.sleep(300)"
    )
    tid = await terminals.create("s1", PY, ["-c", code])
    await wait_output(terminals, "s1", tid, "ready")
    pid = terminals._terminals[("s1", tid)].pid
    try:
        closing = asyncio.create_task(terminals.close_session("s1"))
        await asyncio.sleep(0.2)  # in the grace period: SIGTERM sent, ignored
        assert pid_alive(pid)
        closing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await closing
        await terminals.aclose()
        assert await wait_dead([pid]) == []
    finally:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
