"""An agent that cannot start fails the command that needed it at once, with a message that names
the agent and carries its last stderr lines, never a hang (issue 11): a binary that is not there,
a command line too long for the system to start (its whole 300 KB command line went into the error
message and the log line, and the editor never got the answer: the command hung), and an agent that
exits at once. The agents are tests/agents/hostile_agent.py run through the real acpls."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import command, notifications, start
from tests.e2e.hostile_support import HOSTILE_AGENT, hostile

# Each of these fails in about a second here; the bound is far below the 120 s start timeout.
PROMPT_FAILS_WITHIN = 20
# A single argument longer than Linux's 128 KiB per argument (MAX_ARG_STRLEN): exec fails E2BIG.
TOO_LONG = "x" * 300_000


def _case(name: str, log: Path) -> tuple[dict[str, Any], str, list[str]]:
    """(the agent setting, the agent's name in messages, what the message must say)."""
    if name == "missing":
        return {"command": "/nonexistent/dir/my-agent"}, "my-agent", ["No such file"]
    if name == "too_long":
        agent = {
            "command": sys.executable,
            "args": [str(HOSTILE_AGENT), "--mode", "well_behaved", "--pad", TOO_LONG],
        }
        return agent, Path(sys.executable).name, ["Argument list too long", "300000 characters"]
    return (
        hostile("exit_at_once", log),
        Path(sys.executable).name,
        ["exited with status 2", "no configuration found, exiting"],
    )


@pytest.mark.parametrize("case", ["missing", "too_long", "exits_at_once"])
async def test_prompt_fails_at_once_naming_the_agent_and_its_stderr(
    client, workspace: Path, tmp_path: Path, case: str
):
    agent, name, says = _case(case, tmp_path / "agent.jsonl")
    await start(client, workspace, agent)
    started = time.monotonic()
    with pytest.raises(JsonRpcException) as info:
        await asyncio.wait_for(
            command(client, "acpls.prompt", {"text": "hello"}), PROMPT_FAILS_WITHIN
        )
    took = time.monotonic() - started
    print(f"{case}: acpls.prompt failed after {took:.2f}s")
    error = str(info.value)
    assert f"the agent {name} could not start" in error, error
    for text in says:
        assert text in error, error
    # Bounded, whatever the command line: the too-long one is 300 KB.
    assert len(error) < 3000, len(error)
    shown = [m.message for m in client.messages if m.type == types.MessageType.Error]
    assert any(all(t in m for t in says) for m in shown), shown
    statuses = notifications(client, "acpls/agentStatus")
    assert statuses[-1]["state"] == "failed", statuses
    # acpls still answers, and the next command tries the agent again (and fails the same way).
    assert (await asyncio.wait_for(command(client, "acpls.sessions", {}), 10))["sessions"] == []
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(command(client, "acpls.newSession", {}), PROMPT_FAILS_WITHIN)
