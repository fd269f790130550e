"""Every way a session ends goes through the registry's one close (core/sessions.py), and nothing
of the session is left behind: closed, deleted, the agent exiting, the agent restarted, acpls
shutting down. The hub runs in this process (its state is counted directly) against the real
scripted agent, whose turn holds a running command, a followed location, an outside-the-workspace
approval and a transcript when the session ends.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from acpls.core.errors import CommandError
from acpls.core.hub import Hub
from tests.agents import script_command
from tests.fuzz.frame_fuzzer import FakeEditor


class AllowingEditor(FakeEditor):
    """Allows what the agent asks (reads outside the workspace), deterministically."""

    async def show_message_request(
        self, level: int, message: str, actions: list[str], msg_id: str | None = None
    ) -> str | None:
        self.counts["window/showMessageRequest"] += 1
        return "Allow" if "Allow" in actions else None


def turn_script(outside: Path) -> dict[str, Any]:
    return {
        "protocol": 1,
        "on_initialize": {
            "protocolVersion": 1,
            "agentInfo": {"name": "scripted-agent", "version": "0"},
            "agentCapabilities": {"sessionCapabilities": {"close": {}, "delete": {}}},
        },
        "on_prompt": [
            {
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "run-1",
                    "title": "sleep",
                    "kind": "execute",
                    "status": "in_progress",
                    "locations": [{"path": "$cwd/calc.py", "line": 2}],
                }
            },
            {
                "request": "fs/read_text_file",
                "params": {"sessionId": "$sessionId", "path": str(outside)},
            },
            {
                "request": "terminal/create",
                "params": {
                    "sessionId": "$sessionId",
                    "command": "sleep",
                    "args": ["60"],
                    "cwd": "$cwd",
                },
                "save": "t",
            },
            {
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "run-1",
                    "content": [{"type": "terminal", "terminalId": "$t.terminalId"}],
                }
            },
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "running"},
                }
            },
            {"sleep": 60},
        ],
    }


def leftovers(hub: Hub, session_id: str) -> dict[str, Any]:
    """Everything the server keeps for `session_id`, by owner; empty once the session ended."""
    found: dict[str, Any] = {
        "session": session_id in hub.sessions,
        "current": hub.current_session_id == session_id,
        "display terminals": session_id in hub.terminals._sessions,
        "client terminals": hub.agent_requests.terminals.terminal_ids(session_id),
        "path approvals": session_id in hub.agent_requests.paths._approved,
        "transcript": session_id in hub.router._transcripts,
        "early updates": session_id in hub.router._early,
        "checkpoint": session_id in hub.checkpoints._open,
        "fork": session_id in hub.checkpoints._forks,
        "preamble": session_id in hub.checkpoints._preambles,
        "questions": [
            q for q in hub.questions._open.values() if q.question.session_id == session_id
        ],
        "follow": any(
            t is not None and t.session_id == session_id
            for t in (hub.follow.tracker.current, hub.follow.tracker._waiting)
        ),
        "review watcher": hub.review._watch is not None
        and hub.review._watch.session.id == session_id,
    }
    return {owner: value for owner, value in found.items() if value}


async def until(check: Any, seconds: float = 10.0, what: Any = None) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():
        assert asyncio.get_running_loop().time() < deadline, f"timed out: {what and what()}"
        await asyncio.sleep(0.02)


async def end_by(how: str, hub: Hub, session_id: str) -> None:
    admin = hub.admin
    if how == "close":
        await admin.close(session_id)
    elif how == "delete":
        await admin.delete(session_id)
    elif how == "agent exit":
        conn = hub.connection
        assert conn is not None and conn.process.pid is not None
        os.kill(conn.process.pid, signal.SIGKILL)
        await until(lambda: hub.connection is None)
    elif how == "restart":
        await hub.restart_agent()
    elif how == "shutdown":
        await hub.aclose()


@pytest.mark.parametrize("how", ["close", "delete", "agent exit", "restart", "shutdown"])
async def test_nothing_of_a_session_is_left_after_it_ends(tmp_path: Path, how: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("notes\n", encoding="utf-8")
    argv = script_command(turn_script(outside), tmp_path / "agent.jsonl")
    editor = AllowingEditor(str(workspace))
    hub = Hub(editor, environ=dict(os.environ), state_dir=tmp_path / "state")
    hub.configure(
        {"agent": {"command": argv[0], "args": argv[1:]}, "checkpoints": {"enabled": False}}
    )
    try:
        session = await hub.new_session()
        turn = asyncio.ensure_future(hub.prompt(session.id, "go", []))
        await until(lambda: hub.agent_requests.terminals.terminal_ids(session.id))
        await until(lambda: session.reply_text() == "running")
        held = leftovers(hub, session.id)
        assert {"client terminals", "display terminals", "path approvals", "transcript"} <= set(
            held
        )
        assert "follow" in held

        await end_by(how, hub, session.id)
        with pytest.raises(CommandError):
            await asyncio.wait_for(turn, 10)
        await until(lambda: not leftovers(hub, session.id), what=lambda: leftovers(hub, session.id))
    finally:
        if how != "shutdown":
            await hub.aclose()
