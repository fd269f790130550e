"""Nothing acpls started outlives it, on every way it can end (issue 27, "processes must not
outlive the editor"; editors/protocol.md section 10).

Through the real acpls (a raw LSP client, tests/e2e/raw_lsp.py) with the scripted agent, whose
turn starts a process of its own and a client terminal (`terminal/create`). Both run
tests/agents/stubborn_tree.py: a process that ignores SIGTERM, a forked child that ignores it too,
and a grandchild that double-forks and leaves the session with `setsid`. Then acpls ends one way:
the editor closes stdin, `shutdown` + `exit`, `exit` without `shutdown`, SIGTERM, SIGKILL. Within
5 s, none of those processes (named by pid and start time, read from /proc, so a recycled pid is
never taken for one of them), nor the agent, nor acpls, nor acpls' watchdog may be alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agents import AGENTS_DIR, script_command
from tests.e2e.raw_lsp import RawLspClient, initialize_params

STUBBORN_TREE = AGENTS_DIR / "stubborn_tree.py"
GONE_WITHIN = 5.0
STARTED_WITHIN = 30.0
TREE_SIZE = 3  # the stubborn process, its child, its setsid grandchild
# Each way acpls ends, and its exit status: LSP's 0 after shutdown and 1 without, 128 + 15 for a
# SIGTERM that acpls handled (it stops everything first), -9 for SIGKILL (nothing can be handled).
EXITS = {
    "stdin-closed": 1,
    "shutdown-exit": 0,
    "exit-without-shutdown": 1,
    "sigterm": 128 + signal.SIGTERM,
    "sigkill": -signal.SIGKILL,
}

Member = tuple[int, str]


def start_time(pid: int) -> str | None:
    """The process' start time (clock ticks since boot); None when it is gone or a zombie (it
    has exited: only its parent's wait is left)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    return None if fields[0] == b"Z" else fields[19].decode()


def alive(members: set[Member]) -> set[Member]:
    return {(pid, start) for pid, start in members if start_time(pid) == start}


def recorded(pids_file: Path) -> set[Member]:
    if not pids_file.exists():
        return set()
    rows = [line.split() for line in pids_file.read_text().splitlines()]
    return {(int(row[0]), row[1]) for row in rows if len(row) == 2}


def member(pid: int) -> Member:
    start = start_time(pid)
    assert start is not None, f"process {pid} is not running"
    return pid, start


def turn_script(agent_tree: Path, terminal_tree: Path) -> dict[str, Any]:
    """The agent starts a stubborn tree of its own and one in a client terminal, then holds the
    turn open (the editor goes away in the middle of it)."""
    tree = [sys.executable, str(STUBBORN_TREE), "--daemon", "--pids"]
    return {
        "protocol": 1,
        "on_prompt": [
            {"spawn": [*tree, str(agent_tree)]},
            {
                "request": "terminal/create",
                "params": {
                    "sessionId": "$sessionId",
                    "command": tree[0],
                    "args": [*tree[1:], str(terminal_tree)],
                },
            },
            {"wait_cancel": True},
        ],
    }


async def until(predicate: Any, within: float) -> bool:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def running_trees(
    raw: RawLspClient, workspace: Path, tmp_path: Path, members: set[Member]
) -> None:
    """acpls with the agent mid-turn and both trees running; `members` gets every process that
    must go (as soon as it is known: a failed test kills them)."""
    agent_tree, terminal_tree = tmp_path / "agent-tree.pids", tmp_path / "terminal-tree.pids"
    agent_pid = tmp_path / "agent.pid"
    argv = script_command(
        turn_script(agent_tree, terminal_tree), tmp_path / "agent.jsonl", pid_file=agent_pid
    )
    agent = {"command": argv[0], "args": argv[1:]}
    await raw.request("initialize", initialize_params(workspace, {"agent": agent}))
    raw.notify("initialized", {})
    prompt = {"command": "acpls.prompt", "arguments": [{"text": "run"}]}
    raw.send(
        {"jsonrpc": "2.0", "id": "turn", "method": "workspace/executeCommand", "params": prompt}
    )
    started = await until(
        lambda: (
            len(recorded(agent_tree)) == TREE_SIZE
            and len(recorded(terminal_tree)) == TREE_SIZE
            and agent_pid.exists()
            and agent_pid.read_text().strip()
        ),
        STARTED_WITHIN,
    )
    members |= recorded(agent_tree) | recorded(terminal_tree)
    assert started, f"the trees did not start:\n{raw.log()[-3000:]}"
    members |= {member(int(agent_pid.read_text())), member(raw.pid)}
    members |= {member(pid) for pid in watchdog_pids(raw)}
    assert alive(members) == members, f"not all running: {members - alive(members)}"


def watchdog_pids(raw: RawLspClient) -> list[int]:
    """acpls' watchdog, from its log line: it must go as well, once its work is done."""
    return [int(pid) for pid in re.findall(r"process watchdog started \(pid (\d+)\)", raw.log())]


async def end_acpls(raw: RawLspClient, how: str) -> None:
    if how == "stdin-closed":
        raw.close_stdin()
    elif how == "shutdown-exit":
        answer = await raw.request("shutdown", timeout=GONE_WITHIN * 4)
        assert answer.get("result", "missing") is None, answer
        raw.notify("exit")
    elif how == "exit-without-shutdown":
        raw.notify("exit")
    elif how == "sigterm":
        os.kill(raw.pid, signal.SIGTERM)
    elif how == "sigkill":
        os.kill(raw.pid, signal.SIGKILL)
    else:
        raise AssertionError(how)


def kill_left_over(members: set[Member]) -> None:
    """A failed test must not leave stubborn processes on the machine."""
    for pid, _start in alive(members):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("how", EXITS)
async def test_no_process_of_the_agent_or_its_terminals_outlives_acpls(
    how: str, server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    raw = await RawLspClient.start(env=server_env)
    members: set[Member] = set()
    try:
        await running_trees(raw, workspace, tmp_path, members)
        await end_acpls(raw, how)
        # The clock starts once the exit is under way (for shutdown: after its answer).
        gone = await until(lambda: not alive(members), GONE_WITHIN)
        assert gone, (
            f"alive {GONE_WITHIN:.0f} s after {how}: {sorted(alive(members))} of"
            f" {sorted(members)}\n{raw.log()[-4000:]}"
        )
        status = await raw.wait_exit(GONE_WITHIN)
        assert status == EXITS[how], (
            f"acpls' exit status after {how}: {status}, not {EXITS[how]}\n{raw.log()[-3000:]}"
        )
    finally:
        kill_left_over(members)
        await raw.aclose()
