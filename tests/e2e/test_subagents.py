"""Sub-agents (a parent tool call, such as Claude Code's Task, running tool calls of its own),
against the scripted agent v1 and v2: their tool calls reach the editor with `parentToolCallId`
(also when the agent puts it in Claude Code's `_meta`), and follow ignores them unless
`follow.subagents` is on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import command, notifications, scripted, start


def call(protocol: int, call_id: str, path: Path, **extra: Any) -> dict[str, Any]:
    kind = "tool_call" if protocol == 1 else "tool_call_update"
    update = {
        "sessionUpdate": kind,
        "toolCallId": call_id,
        "title": f"step {call_id}",
        "kind": "read",
        "status": "in_progress",
        "locations": [{"path": str(path), "line": 1}],
        **extra,
    }
    return {"update": update}


def steps(protocol: int, workspace: Path) -> list[dict[str, Any]]:
    claude_meta = {"claudeCode": {"parentToolUseId": "task-1", "toolName": "Read"}}
    return [
        call(protocol, "task-1", workspace / "calc.py"),
        {"sleep": 0.1},
        call(protocol, "child-1", workspace / "a.py", _meta=claude_meta),
        {"sleep": 0.1},
        call(protocol, "child-2", workspace / "b.py", parentToolCallId="task-1"),
        {"sleep": 0.1},
    ]


def followed(client) -> list[str]:
    return [Path(p["uri"]).name for p in notifications(client, "acpls/followAgent")]


@pytest.mark.parametrize("protocol", [1, 2])
async def test_subagent_calls_carry_their_parent_and_are_not_followed(
    client, workspace, tmp_path, protocol
):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_prompt": steps(protocol, workspace)}
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "delegate"})
    calls = {
        u["toolCall"]["toolCallId"]: u["toolCall"]
        for p in notifications(client, "acpls/sessionUpdate")
        if (u := p["update"])["sessionUpdate"] == "tool_call"
    }
    assert "parentToolCallId" not in calls["task-1"]
    assert calls["child-1"]["parentToolCallId"] == "task-1"
    assert calls["child-2"]["parentToolCallId"] == "task-1"
    names = followed(client)
    assert names and all(name == "calc.py" for name in names)


@pytest.mark.parametrize("protocol", [1, 2])
async def test_follow_subagents_setting(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_prompt": steps(protocol, workspace)}
    await start(client, workspace, scripted(script, log), follow={"subagents": True})
    await command(client, "acpls.prompt", {"text": "delegate"})
    names = followed(client)
    assert names[-1] == "b.py" and "calc.py" in names
