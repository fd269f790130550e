"""The editor side breaking: wrong command arguments, messages out of LSP's order, and the editor
going away (stdin closed, `exit` without `shutdown`, the editor killed) with an agent and a
terminal process tree running: everything is gone within 2 s (checked with `ps`)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from acpls.commands import COMMANDS
from tests.agents import script_command
from tests.e2e.conftest import command, start
from tests.e2e.raw_lsp import RawLspClient, initialize_params

GONE_WITHIN = 2.0
REPO = Path(__file__).resolve().parents[2]
SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# -- wrong arguments --------------------------------------------------------------------------------

NOT_AN_OBJECT = [5, "text", [1, 2], True]

# For every command, arguments of the wrong shape (beside NOT_AN_OBJECT, which all get).
BAD_ARGUMENTS: dict[str, list[Any]] = {
    "acpls.newSession": [{"cwd": 5}, {"cwd": "relative/dir"}],
    "acpls.prompt": [
        {},
        {"text": 5},
        {"text": ""},
        {"text": "x", "context": "file:///a"},
        {"text": "x", "context": [{"uri": 5}]},
        {"text": "x", "context": [{"uri": "file:///a", "range": {"start": 0}}]},
        {"text": "x", "sessionId": 5},
        {"text": "x", "sessionId": "no-such-session"},
    ],
    "acpls.cancel": [{"sessionId": 5}, {"sessionId": "no-such-session"}],
    "acpls.setFollow": [{}, {"enabled": "yes"}, {"enabled": 1}],
    "acpls.setMode": [{}, {"modeId": 5}, {"modeId": "x", "sessionId": "no-such-session"}],
    "acpls.setConfigOption": [
        {},
        {"configId": "c"},
        {"configId": 5, "value": 1},
        {"configId": "c", "value": 1, "sessionId": "no-such-session"},
    ],
    "acpls.listSessions": [{"cwd": 5}, {"cursor": ["x"]}],
    "acpls.loadSession": [{}, {"sessionId": 5}, {"sessionId": ""}, {"sessionId": "s", "cwd": 7}],
    "acpls.closeSession": [{"sessionId": 5}, {"sessionId": "no-such-session"}],
    "acpls.deleteSession": [{}, {"sessionId": 5}, {"sessionId": ""}],
    "acpls.forkSession": [{}, {"sessionId": 5}, {"sessionId": ""}],
    "acpls.resumeSession": [{}, {"sessionId": 5}, {"sessionId": ""}, {"sessionId": "s", "cwd": 7}],
    "acpls.logout": [],
    "acpls.authenticate": [{"methodId": 5}],
    "acpls.sessions": [],
    "acpls.openTranscript": [{"sessionId": 5}, {"sessionId": "no-such-session"}],
    "acpls.restartAgent": [],
    "acpls.review": [{"sessionId": 5}],
    "acpls.keepHunk": [{}, {"hunkId": 5}, {"hunkId": "no-such-hunk"}],
    "acpls.rejectHunk": [{}, {"hunkId": 5}, {"hunkId": "no-such-hunk"}],
    "acpls.keepAll": [{"uri": 5}, {"uri": "https://example.com/a.py"}],
    "acpls.rejectAll": [{"uri": 5}, {"uri": "untitled:Untitled-1"}],
    "acpls.rejected": [{"uri": 5}, {"uri": "javascript:alert(1)"}],
    "acpls.listRules": [],
    "acpls.removeRule": [{}, {"ruleId": 5}, {"ruleId": "no-such-rule"}],
    "acpls.checkAgents": [{"agents": "claude"}, {"agents": [5]}, {"agents": ["no-such-preset"]}],
    "acpls.agents": [{"refresh": "yes"}, {"refresh": 1}],
    "acpls.installAgent": [{}, {"agent": 5}, {"agent": ""}, {"agent": "no-such-agent"}],
    "acpls.checkpoints": [{"sessionId": 5}],
    "acpls.restoreCheckpoint": [
        {},
        {"id": 5},
        {"id": ""},
        {"id": "no-such-checkpoint"},
        {"id": "x", "preview": "yes"},
        {"id": "x", "includeUnsaved": "/a"},
        {"id": "x", "includeUnsaved": [5]},
    ],
    "acpls.checkpointDiff": [{}, {"id": 5}, {"id": "no-such-checkpoint"}],
    "acpls.continueFromCheckpoint": [{}, {"id": 5}, {"id": "no-such-checkpoint"}],
    "acpls.steer": [{}, {"text": 5}, {"text": ""}, {"text": "x", "context": "file:///a"}],
    "acpls.mentionCandidates": [{"query": 5}, {"limit": 0}, {"limit": "ten"}],
}


def test_every_command_has_bad_arguments_listed() -> None:
    assert set(BAD_ARGUMENTS) == set(COMMANDS), "a new command needs its wrong arguments tested"


async def test_wrong_arguments_of_every_command_get_invalid_params(client, workspace: Path):
    await start(client, workspace, "demo", custom=True)
    await command(client, "acpls.newSession")
    failures = []
    for name in COMMANDS:
        for arg in [*NOT_AN_OBJECT, *BAD_ARGUMENTS[name]]:
            try:
                await asyncio.wait_for(
                    client.workspace_execute_command_async(_params(name, arg)), 30
                )
            except JsonRpcException as exc:
                if exc.code != INVALID_PARAMS:
                    failures.append(f"{name} {arg!r}: code {exc.code} ({exc})")
                continue
            failures.append(f"{name} {arg!r}: accepted")
    assert not failures, "\n".join(failures)
    summary = await command(client, "acpls.sessions")
    assert len(summary["sessions"]) == 1  # nothing was created or lost on the way


def _params(name: str, arg: Any) -> Any:
    from lsprotocol import types

    return types.ExecuteCommandParams(command=name, arguments=[arg])


# -- LSP order -------------------------------------------------------------------------------------


@pytest.fixture
async def raw(server_env: dict[str, str]) -> Any:
    client = await RawLspClient.start(env=server_env)
    yield client
    await client.aclose()


async def test_requests_before_initialize_get_server_not_initialized(raw: RawLspClient, workspace):
    sessions = {"command": "acpls.sessions", "arguments": [{}]}
    answer = await raw.request("workspace/executeCommand", sessions)
    assert answer["error"]["code"] == SERVER_NOT_INITIALIZED
    answer = await raw.request("shutdown")
    assert answer["error"]["code"] == SERVER_NOT_INITIALIZED
    raw.notify("workspace/didChangeConfiguration", {"settings": {"acpls": {"agent": 5}}})
    answer = await raw.request("initialize", initialize_params(workspace, {"agent": "demo"}))
    assert "capabilities" in answer["result"]
    raw.notify("initialized", {})
    answer = await raw.request("workspace/executeCommand", sessions)
    assert answer["result"]["sessions"] == []
    # The notification before initialize was dropped: no settings problem was reported.
    assert not [n for n in raw.notifications if n["method"] == "window/showMessage"]


async def test_second_initialize_is_an_invalid_request(raw: RawLspClient, workspace):
    await raw.request("initialize", initialize_params(workspace, {"agent": "demo"}))
    answer = await raw.request("initialize", initialize_params(workspace, {"agent": "demo"}))
    assert answer["error"]["code"] == INVALID_REQUEST


async def test_requests_after_shutdown_get_invalid_request_and_exit_is_0(
    raw: RawLspClient, workspace
):
    await raw.request("initialize", initialize_params(workspace, {"agent": "demo"}))
    raw.notify("initialized", {})
    assert (await raw.request("shutdown"))["result"] is None
    sessions = {"command": "acpls.sessions", "arguments": [{}]}
    answer = await raw.request("workspace/executeCommand", sessions)
    assert answer["error"]["code"] == INVALID_REQUEST
    assert (await raw.request("shutdown"))["error"]["code"] == INVALID_REQUEST
    raw.notify("exit")
    assert await raw.wait_exit(5) == 0


# -- the editor goes away --------------------------------------------------------------------------


def terminal_script(pid_file: Path) -> dict[str, Any]:
    """A v1 agent whose turn starts a terminal running a process tree, then waits for cancel."""
    line = f"echo $$ >> {pid_file}; sleep 300 & echo $! >> {pid_file}; sleep 301 & echo $! >> {pid_file}; wait"
    return {
        "protocol": 1,
        "on_prompt": [
            {"request": "terminal/create", "params": {"sessionId": "$sessionId", "command": line}},
            {"wait_cancel": True},
        ],
    }


def read_pids(path: Path) -> list[int]:
    if not path.exists():
        return []
    return [int(p) for p in path.read_text().split() if p.strip()]


def running(pids: list[int]) -> list[int]:
    """The pids `ps` still lists as live (a zombie has exited: only its parent's wait is left)."""
    out = subprocess.run(
        ["ps", "-o", "pid=,stat=", "-p", ",".join(str(p) for p in pids)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    live = []
    for row in out.splitlines():
        pid, _, stat = row.strip().partition(" ")
        if pid and not stat.strip().startswith("Z"):
            live.append(int(pid))
    return live


async def wait_all_gone(pids: list[int], within: float) -> tuple[bool, float]:
    started = time.monotonic()
    while running(pids):
        if time.monotonic() - started > within:
            return False, time.monotonic() - started
        await asyncio.sleep(0.05)
    return True, time.monotonic() - started


def _agent_setting(tmp_path: Path) -> tuple[dict[str, Any], Path, Path]:
    terminal_pids = tmp_path / "terminal.pids"
    agent_pid = tmp_path / "agent.pid"
    argv = script_command(
        terminal_script(terminal_pids), tmp_path / "agent.jsonl", pid_file=agent_pid
    )
    return {"command": argv[0], "args": argv[1:]}, terminal_pids, agent_pid


async def _running_turn(raw: RawLspClient, workspace: Path, tmp_path: Path) -> list[int]:
    """Start acpls with the terminal agent and a turn; the pids of agent and terminal tree."""
    agent, terminal_pids, agent_pid = _agent_setting(tmp_path)
    await raw.request("initialize", initialize_params(workspace, {"agent": agent}))
    raw.notify("initialized", {})
    prompt = {"command": "acpls.prompt", "arguments": [{"text": "run"}]}
    raw.send(
        {"jsonrpc": "2.0", "id": "turn", "method": "workspace/executeCommand", "params": prompt}
    )
    for _ in range(200):
        if len(read_pids(terminal_pids)) == 3 and read_pids(agent_pid):
            break
        await asyncio.sleep(0.05)
    pids = read_pids(agent_pid) + read_pids(terminal_pids)
    assert len(pids) == 4 and sorted(running(pids)) == sorted(pids), (
        f"not all started: {pids} {raw.log()[-2000:]}"
    )
    return pids


async def test_exit_without_shutdown_stops_agent_and_terminals(
    raw: RawLspClient, workspace: Path, tmp_path: Path
):
    pids = await _running_turn(raw, workspace, tmp_path)
    raw.notify("exit")
    gone, took = await wait_all_gone([*pids, raw.pid], GONE_WITHIN)
    assert gone, (
        f"still running after {took:.1f}s: {running([*pids, raw.pid])}\n{raw.log()[-3000:]}"
    )
    assert await raw.wait_exit(1) == 1  # exit without shutdown: status 1, as LSP says


async def test_stdin_closed_stops_agent_and_terminals(
    raw: RawLspClient, workspace: Path, tmp_path: Path
):
    pids = await _running_turn(raw, workspace, tmp_path)
    raw.close_stdin()
    gone, took = await wait_all_gone([*pids, raw.pid], GONE_WITHIN)
    assert gone, (
        f"still running after {took:.1f}s: {running([*pids, raw.pid])}\n{raw.log()[-3000:]}"
    )
    assert "the editor closed the connection" in raw.log()


async def test_killed_editor_leaves_no_process_behind(workspace: Path, tmp_path: Path, server_env):
    agent, terminal_pids, agent_pid = _agent_setting(tmp_path)
    prompt = {"command": "acpls.prompt", "arguments": [{"text": "run"}]}
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": initialize_params(workspace, {"agent": agent}),
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "workspace/executeCommand",
            "params": prompt,
            "wait": False,
        },
    ]
    messages_file = tmp_path / "messages.json"
    messages_file.write_text(json.dumps(messages))
    server_pid_file = tmp_path / "server.pid"
    editor = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.e2e.raw_lsp",
            "--messages",
            str(messages_file),
            "--pid-file",
            str(server_pid_file),
        ],
        env={**server_env, "PYTHONPATH": str(REPO)},
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            if (
                len(read_pids(terminal_pids)) == 3
                and read_pids(agent_pid)
                and read_pids(server_pid_file)
            ):
                break
            await asyncio.sleep(0.05)
        pids = read_pids(server_pid_file) + read_pids(agent_pid) + read_pids(terminal_pids)
        assert len(pids) == 5 and sorted(running(pids)) == sorted(pids), f"not all started: {pids}"
        os.kill(editor.pid, signal.SIGKILL)
        gone, took = await wait_all_gone(pids, GONE_WITHIN)
        assert gone, f"still running {took:.1f}s after the editor was killed: {running(pids)}"
    finally:
        if editor.poll() is None:
            editor.kill()
        editor.wait()
        for pid in running(
            read_pids(server_pid_file) + read_pids(agent_pid) + read_pids(terminal_pids)
        ):
            os.kill(pid, signal.SIGKILL)
