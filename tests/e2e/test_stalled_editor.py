"""An editor that stops reading while a terminal floods leaves acpls bounded (protocol.md 6, 10).

The real acpls over AF_UNIX socketpairs, as libuv editors (Neovim, VS Code) start it. The editor
asks for a prompt and then reads nothing while the agent's terminal writes hundreds of megabytes;
acpls' resident memory is polled from /proc the whole time. Without the bound, every flush of
terminal output went into acpls' write buffer for the editor (1.9 GB for a long flood); with it,
the output waits in the terminal's bounded scrollback and the editor, reading again, gets a reset
that says how many bytes were dropped, then the tail. The agent's own view (`terminal/output`,
bounded by `outputByteLimit`) stays live: its `terminal/wait_for_exit` returns while the editor
still reads nothing. An agent-owned terminal (v1 `_meta.terminal_output`) comes in the agent's
output, which acpls stops reading: the agent blocks. A command rewriting a large file in a loop
does not queue a copy of the review's change set per rewrite.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.agents import script_command
from tests.e2e.hostile_support import hostile, rss_mb
from tests.e2e.test_replay_backlog import SocketEditor, _initialize

FLOOD_BYTES = 300 * 1024 * 1024
# acpls' resident memory may grow this much over its idle size while the editor reads nothing
# (without the bound it grows by about the flood: hundreds of MiB).
GROWTH_BOUND_MB = 150
END_MARK = "END-OF-FLOOD"
LINE = "acpls flood 0123456789abcdefghijklmnopqrstuvwxyz 0123456789abcdefghij"
OUTPUT_BYTE_LIMIT = 100_000
AGENT_FLOOD_MB = 200
STALL_S = 3.0  # the editor reads nothing at least this long ...
SETTLED_S = 1.0  # ... and until the agent wrote nothing more for this long
FLOOD_TIMEOUT_S = 600.0
# Hundreds of megabytes through a pty and acpls: well under a minute on an idle 2-core machine,
# more while a whole test run shares it.
pytestmark = pytest.mark.timeout(900)


def flood_command(size: int) -> str:
    """A shell line writing `size` bytes of text lines, then the end mark."""
    return f"yes '{LINE}' | head -c {size}; printf '\\n{END_MARK}\\n'"


def client_terminal_script(size: int) -> dict[str, Any]:
    return {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "terminal/create",
                "params": {
                    "sessionId": "$sessionId",
                    "command": flood_command(size),
                    "cwd": "$cwd",
                    "outputByteLimit": OUTPUT_BYTE_LIMIT,
                },
            },
            {
                "request": "terminal/wait_for_exit",
                "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
            },
            {
                "request": "terminal/output",
                "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
            },
        ],
    }


def scripted_agent(script: dict[str, Any], tmp_path: Path, log: Path) -> dict[str, Any]:
    script_file = tmp_path / "flood.json"
    script_file.write_text(json.dumps(script), encoding="utf-8")
    argv = script_command(script_file, log)
    return {"command": argv[0], "args": argv[1:]}


@contextmanager
def stalled_acpls(
    workspace: Path, tmp_path: Path, env: dict[str, str], agent: dict[str, Any]
) -> Iterator[tuple[subprocess.Popen[bytes], SocketEditor]]:
    """acpls with `agent`, initialised, and the editor that talks to it."""
    to_server, server_in = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours, server_out = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with (tmp_path / "acpls.log").open("wb") as acpls_log:
        server = subprocess.Popen(
            [sys.executable, "-m", "acpls"],
            stdin=server_in.fileno(),
            stdout=server_out.fileno(),
            stderr=acpls_log,
            env=env,
            cwd=workspace,
        )
    server_in.close()
    server_out.close()
    editor = SocketEditor(ours, to_server)
    try:
        _initialize(editor, workspace, agent)
        yield server, editor
    finally:
        server.kill()
        server.wait()
        ours.close()
        to_server.close()


def logged(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    whole = log.read_text().split("\n")[:-1]  # a line being written has no line end yet
    return [json.loads(line) for line in whole if line.strip()]


def answers_of(log: Path) -> list[Any]:
    """What acpls answered to the agent's requests, in order."""
    messages = logged(log)
    return [m.get("result", m.get("error")) for m in messages if "method" not in m and "id" in m]


def flood_written(log: Path) -> int:
    """Bytes of terminal output the hostile agent reported written so far."""
    reports = [m["report"] for m in logged(log) if "report" in m]
    return max((r.get("terminal_flood_written", 0) for r in reports), default=0)


def most_rss_until(pid: int, done: Any, timeout: float = FLOOD_TIMEOUT_S) -> float:
    """The largest resident size (MiB) of `pid` seen until `done()` holds."""
    deadline = time.monotonic() + timeout
    most = rss_mb(pid)
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the flood did not end within {timeout} s (RSS {most:.0f} MiB)")
        most = max(most, rss_mb(pid))
        time.sleep(0.02)
    return max(most, rss_mb(pid))


def terminal_view(messages: list[dict[str, Any]], terminal_id: str) -> tuple[str, list[int]]:
    """The text an editor shows for the terminal (everything since the last reset), and the
    `dropped` of every reset it got."""
    shown = ""
    dropped: list[int] = []
    for message in messages:
        params = message.get("params")
        if message.get("method") != "acpls/terminalOutput" or not isinstance(params, dict):
            continue
        if params.get("terminalId") != terminal_id:
            continue
        if params.get("reset"):
            shown = ""
            dropped.append(params.get("dropped", 0))
        shown += params["text"]
    return shown, dropped


def prompt(editor: SocketEditor, msg_id: int) -> None:
    editor.send(
        {
            "id": msg_id,
            "method": "workspace/executeCommand",
            "params": {"command": "acpls.prompt", "arguments": [{"text": "flood"}]},
        }
    )


def test_a_client_terminal_flood_with_a_stalled_editor_keeps_acpls_bounded(
    workspace: Path, tmp_path: Path, server_env: dict[str, str]
) -> None:
    log = tmp_path / "agent.jsonl"
    agent = scripted_agent(client_terminal_script(FLOOD_BYTES), tmp_path, log)
    with stalled_acpls(workspace, tmp_path, server_env, agent) as (server, editor):
        idle = rss_mb(server.pid)
        prompt(editor, 2)
        # The editor reads nothing until the agent has its terminal's exit and output.
        most = most_rss_until(server.pid, lambda: len(answers_of(log)) >= 3)
        messages = editor.read_until_answer(2, time.monotonic() + 120)
    assert most - idle < GROWTH_BOUND_MB, (idle, most)
    created, exited, output = answers_of(log)
    assert created == {"terminalId": "term_1"}
    assert exited == {"exitCode": 0, "signal": None}
    # The agent's view: the last outputByteLimit bytes, live while the editor read nothing.
    assert output["truncated"] is True
    assert output["output"].endswith(f"{END_MARK}\r\n")
    assert len(output["output"].encode()) <= OUTPUT_BYTE_LIMIT
    shown, dropped = terminal_view(messages, "term_1")
    # The editor is told what is missing, then gets the tail.
    assert dropped and dropped[-1] > FLOOD_BYTES // 2, dropped
    assert shown.endswith(f"{END_MARK}\r\n")
    assert LINE in shown


def most_rss_while_agent_floods(pid: int, log: Path) -> float:
    """The largest resident size (MiB) of `pid` while the editor reads nothing: for STALL_S and
    until the agent has written nothing more for SETTLED_S (it is blocked, or done)."""
    start = last_growth = time.monotonic()
    most, written = rss_mb(pid), flood_written(log)
    while True:
        now = time.monotonic()
        most = max(most, rss_mb(pid))
        now_written = flood_written(log)
        if now_written != written:
            written, last_growth = now_written, now
        if now - start >= STALL_S and now - last_growth >= SETTLED_S:
            return most
        if now - start > FLOOD_TIMEOUT_S:
            raise TimeoutError("the agent kept writing")
        time.sleep(0.02)


def test_an_agent_terminal_flood_with_a_stalled_editor_blocks_the_agent(
    workspace: Path, tmp_path: Path, server_env: dict[str, str]
) -> None:
    """v1 `_meta.terminal_output` comes in the agent's output: while the editor reads nothing,
    acpls stops reading the agent, which blocks on its pipe; acpls stays small."""
    log = tmp_path / "agent.jsonl"
    agent = hostile("terminal_flood", log, "--terminal-mb", str(AGENT_FLOOD_MB))
    with stalled_acpls(workspace, tmp_path, server_env, agent) as (server, editor):
        idle = rss_mb(server.pid)
        prompt(editor, 2)
        most = most_rss_while_agent_floods(server.pid, log)
        written_while_stalled = flood_written(log)
        messages = editor.read_until_answer(2, time.monotonic() + FLOOD_TIMEOUT_S)
    assert most - idle < GROWTH_BOUND_MB, (idle, most)
    assert written_while_stalled < AGENT_FLOOD_MB * 1024 * 1024  # the agent waited for acpls
    shown, _dropped = terminal_view(messages, "flood-1")
    assert shown.endswith(f"{END_MARK}\r\n")


REWRITES = 400  # of a 1.2 MB file: +140 MiB when each queued a copy of the change set
CHANGES_GROWTH_BOUND_MB = 100


def test_a_terminal_rewriting_a_file_with_a_stalled_editor_keeps_acpls_bounded(
    workspace: Path, tmp_path: Path, server_env: dict[str, str]
) -> None:
    """The review's change set (`acpls/changes`, the whole set each time) follows what the
    agent's commands do to the workspace: a command rewriting a large file in a loop while the
    editor reads nothing must not queue a copy of the set per rewrite."""
    log = tmp_path / "agent.jsonl"
    line = (
        f"i=0; while [ $i -lt {REWRITES} ]; do seq $i $((i + 180000)) > big.txt;"
        " i=$((i + 1)); sleep 0.02; done; echo rewritten"
    )
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "terminal/create",
                "params": {"sessionId": "$sessionId", "command": line, "cwd": "$cwd"},
            },
            {
                "request": "terminal/wait_for_exit",
                "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
            },
            {"sleep": 1.0},
            {
                "request": "terminal/output",
                "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
            },
        ],
    }
    agent = scripted_agent(script, tmp_path, log)
    with stalled_acpls(workspace, tmp_path, server_env, agent) as (server, editor):
        idle = rss_mb(server.pid)
        prompt(editor, 2)
        most = most_rss_until(server.pid, lambda: len(answers_of(log)) >= 3)
        messages = editor.read_until_answer(2, time.monotonic() + 120)
    changes = [m["params"] for m in messages if m.get("method") == "acpls/changes"]
    assert most - idle < CHANGES_GROWTH_BOUND_MB, (idle, most, len(changes))
    assert changes
    last = changes[-1]["files"]
    assert [Path(f["path"]).name for f in last] == ["big.txt"]
