""" "Always" means what the user saw, through the real acpls: the prompt names the rule an "always"
answer records, and that rule answers nothing wider (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import command, notifications, scripted, start

OPTIONS = [
    {"optionId": "once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def _ask(call_id: str, command_line: str) -> dict[str, Any]:
    tool_call = {
        "toolCallId": call_id,
        "title": command_line,
        "kind": "execute",
        "status": "pending",
        "rawInput": {"command": command_line},
    }
    return {
        "request": "session/request_permission",
        "params": {"sessionId": "$sessionId", "toolCall": tool_call, "options": OPTIONS},
    }


def _script(commands: list[str]) -> dict[str, Any]:
    """Prompt n asks about commands[n]."""
    return {
        "protocol": 1,
        "on_prompt": [[_ask(f"call-{n}", line)] for n, line in enumerate(commands)],
    }


def _answers(log: Path) -> list[Any]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [m["result"]["outcome"] for m in lines if isinstance(m.get("result"), dict)
            and "outcome" in m["result"]]  # fmt: skip


async def test_always_on_git_status_does_not_allow_push_or_clean(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    status = f"git -C {workspace} status"
    commands = [
        status,
        "git push --force",
        "git clean -fdx",
        f"git -C {workspace} push --force",
        f"git -C {workspace} status --short",
    ]
    client.answer_permission = lambda p: {"optionId": "always" if len(
        client.permission_requests) == 1 else "no"}  # fmt: skip
    await start(client, workspace, scripted(_script(commands), log))

    await command(client, "acpls.prompt", {"text": "status"})
    [first] = client.permission_requests
    shown = first["rememberAs"]
    assert shown == [
        {
            "kind": "execute",
            "commandPrefix": status,
            "commandArgs": "any",
            "description": f"execute: {status} [any arguments inside the workspace]",
        }
    ]
    rules = (await command(client, "acpls.listRules", {}))["rules"]
    assert [(r["commandPrefix"], r["commandArgs"], r["description"]) for r in rules] == [
        (status, "any", shown[0]["description"])
    ]

    for n, attack in enumerate(commands[1:4], start=2):
        await command(client, "acpls.prompt", {"text": attack})
        assert len(client.permission_requests) == n, f"{attack!r} was answered by the rule"
        assert client.permission_requests[-1]["toolCall"]["rawInput"]["command"] == attack
        # Destructive commands are remembered exactly, and the prompt says so.
        assert client.permission_requests[-1]["rememberAs"][0]["commandArgs"] == "none"

    await command(client, "acpls.prompt", {"text": "short status"})
    assert len(client.permission_requests) == 4, "the approved command should be answered"
    auto = [
        p["update"]
        for p in notifications(client, "acpls/sessionUpdate")
        if p["update"]["sessionUpdate"] == "auto_permission"
    ]
    assert [a["ruleId"] for a in auto] == [rules[0]["ruleId"]]
    assert _answers(log) == [
        {"outcome": "selected", "optionId": "always"},
        {"outcome": "selected", "optionId": "no"},
        {"outcome": "selected", "optionId": "no"},
        {"outcome": "selected", "optionId": "no"},
        {"outcome": "selected", "optionId": "once"},
    ]


async def test_generic_prompt_names_the_rule_and_a_compound_records_nothing(
    client, workspace, tmp_path
):
    log = tmp_path / "agent.jsonl"
    commands = ["timeout 60 pytest -q", "git status && git push --force", "timeout 5 rm -rf build"]
    client.answer_message_request = lambda p: next(
        a for a in p.actions if a.title == "Always allow"
    )
    await start(client, workspace, scripted(_script(commands), log), custom=False)
    await command(client, "acpls.prompt", {"text": "tests"})
    first = client.message_requests[-1].message
    assert first.splitlines()[-1] == (
        "Always allow/reject records: execute: timeout 60 pytest "
        "[any arguments inside the workspace]"
    )
    await command(client, "acpls.prompt", {"text": "compound"})
    assert client.message_requests[-1].message.splitlines()[-1] == (
        "Always allow/reject records nothing here: you will be asked again."
    )
    await command(client, "acpls.prompt", {"text": "wrapped rm"})
    assert len(client.message_requests) == 3, "timeout 5 rm was answered by the pytest rule"
    rules = (await command(client, "acpls.listRules", {}))["rules"]
    assert sorted(r["commandPrefix"] for r in rules) == [
        "timeout 5 rm -rf build",
        "timeout 60 pytest",
    ]


async def test_a_tool_call_changed_while_the_user_decides_records_what_was_shown(
    client, workspace, tmp_path
):
    """The agent asks about `git status`, then rewrites the same tool call into `git push
    --force` while the prompt is open: "always" records the command the user saw, not the new
    one, and `git push --force` is asked about later."""
    import asyncio

    log = tmp_path / "agent.jsonl"
    ask = _ask("call-0", "git status") | {"wait": False}
    swap = {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "call-0",
                       "title": "git push --force",
                       "rawInput": {"command": "git push --force"}}}  # fmt: skip
    script = {
        "protocol": 1,
        "on_prompt": [[ask, swap, {"sleep": 1.5}], [_ask("call-1", "git push --force")]],
    }

    async def decide_slowly(params: Any) -> dict[str, str]:
        await asyncio.sleep(0.8)  # the agent's update lands while the prompt is open
        return {"optionId": "always" if len(client.permission_requests) == 1 else "no"}

    client.answer_permission = decide_slowly
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "status"})
    [first] = client.permission_requests
    assert first["rememberAs"][0]["commandPrefix"] == "git status"
    rules = (await command(client, "acpls.listRules", {}))["rules"]
    assert [r["commandPrefix"] for r in rules] == ["git status"]
    await command(client, "acpls.prompt", {"text": "push"})
    assert len(client.permission_requests) == 2, "git push --force was answered by the rule"
