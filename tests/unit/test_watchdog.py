"""acpls' watchdog (services/watchdog.py, services/owned_processes.py) stops exactly the processes
carrying this acpls' mark, a setsid daemon among them, and nothing else: not a process with
another acpls' token, not an unmarked one, not one of another user. Real processes, read in /proc.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from acpls.services.owned_processes import OwnedProcesses
from acpls.services.watchdog import MARKER, marked, stop_marked
from tests.agents import AGENTS_DIR

STUBBORN_TREE = AGENTS_DIR / "stubborn_tree.py"
TREE_SIZE = 3

Member = tuple[int, str]


def start_time(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    return None if fields[0] == b"Z" else fields[19].decode()


def alive(members: set[Member]) -> set[Member]:
    return {(pid, start) for pid, start in members if start_time(pid) == start}


def wait_for(predicate: Callable[[], object], within: float = 20.0) -> bool:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class Trees:
    """Stubborn trees (SIGTERM ignored, a fork, a setsid daemon) started for one test; whatever
    the test leaves is SIGKILLed at its end."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.started: list[set[Member]] = []
        self.leaders: list[subprocess.Popen[bytes]] = []

    def start(self, env: dict[str, str], name: str, **popen: object) -> set[Member]:
        pids = self.tmp_path / f"{name}.pids"
        leader = subprocess.Popen(
            [sys.executable, str(STUBBORN_TREE), "--daemon", "--pids", str(pids)],
            env=env,
            **popen,  # type: ignore[arg-type]
        )
        self.leaders.append(leader)
        full = wait_for(lambda: pids.exists() and len(pids.read_text().splitlines()) == TREE_SIZE)
        rows = [line.split() for line in pids.read_text().splitlines()] if pids.exists() else []
        members = {(int(pid), start) for pid, start in rows}
        self.started.append(members)  # killed at the end, also when the tree did not start
        assert full, f"the tree did not start: {members}"
        return members

    def cleanup(self) -> None:
        for members in self.started:
            for pid, _start in alive(members):
                os.kill(pid, signal.SIGKILL)
        for leader in self.leaders:
            leader.wait()


@pytest.fixture
def trees(tmp_path: Path) -> Iterator[Trees]:
    made = Trees(tmp_path)
    try:
        yield made
    finally:
        made.cleanup()


def env_with(token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != MARKER}
    if token is not None:
        env[MARKER] = token
    return env


def found(token: str, **kwargs: object) -> set[int]:
    result = marked(token, **kwargs)  # type: ignore[arg-type]
    for _pid, pidfd in result:
        if pidfd is not None:
            os.close(pidfd)
    return {pid for pid, _ in result}


def test_marked_processes_are_found_daemons_included_and_nothing_else(trees: Trees):
    ours = trees.start(env_with("token-a"), "ours")
    other_acpls = trees.start(env_with("token-b"), "other")
    unmarked = trees.start(env_with(None), "unmarked")
    assert found("token-a") == {pid for pid, _ in ours}  # the setsid grandchild among them
    assert found("token-b") == {pid for pid, _ in other_acpls}
    assert not found("token-a") & {pid for pid, _ in unmarked}
    # A marked process of another user is never taken (here: asked for as another uid).
    assert found("token-a", uid=os.getuid() + 4242) == set()


def test_stop_marked_ends_a_tree_that_ignores_sigterm_and_spares_the_rest(trees: Trees):
    ours = trees.start(env_with("token-a"), "ours")
    other_acpls = trees.start(env_with("token-b"), "other")
    unmarked = trees.start(env_with(None), "unmarked")
    assert stop_marked("token-a", grace=0.2) == TREE_SIZE
    assert wait_for(lambda: not alive(ours), 5), alive(ours)
    assert alive(other_acpls) == other_acpls
    assert alive(unmarked) == unmarked


def test_the_watchdog_stops_the_marked_processes_when_its_pipe_closes_and_then_exits(
    trees: Trees,
):
    owned = OwnedProcesses(grace_s=0.2)
    env = owned.mark(env_with(None))
    watchdog = owned.watchdog_pid
    assert watchdog is not None and env[MARKER] == owned.token
    ours = trees.start(env, "ours")
    bystander = trees.start(env_with("token-b"), "other")
    asyncio.run(owned.stop_all())
    assert not alive(ours)
    assert alive(bystander) == bystander
    assert start_time(watchdog) is None  # it exited (and was reaped)
    assert owned.mark({})[MARKER] == owned.token
    assert owned.watchdog_pid is None  # no new watchdog after the stop


def sleeper(env: dict[str, str]) -> subprocess.Popen[bytes]:
    """A marked process that SIGTERM ends, in a group of its own."""
    return subprocess.Popen(["sleep", "600"], env=env, start_new_session=True)


def test_the_stop_begins_with_sigterm_outside_the_agents_groups():
    owned = OwnedProcesses(grace_s=0.2)
    env = owned.mark(env_with(None))
    agent, daemon = sleeper(env), sleeper(env)
    try:
        owned.spare_group(agent.pid)  # the agent leads its group: acpls stops it, stdin first
        owned.begin_stop()
        assert wait_for(lambda: daemon.poll() is not None, 10), "the daemon got no SIGTERM"
        assert daemon.returncode == -signal.SIGTERM
        time.sleep(0.3)  # the watchdog signals in one pass: the agent would be dead by now
        assert agent.poll() is None, "the agent's group was not left to acpls"
        asyncio.run(owned.stop_all())
        assert wait_for(lambda: agent.poll() is not None, 10)
    finally:
        for process in (agent, daemon):
            if process.poll() is None:
                process.kill()
            process.wait()
