"""What an agent must not be able to do through acpls: leave the workspace by path tricks, make the
editor open anything but a local file, reach the clipboard or plant links through terminal text,
or see the environment variables the user asked to keep from it."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from tests.agents import script_command
from tests.e2e.conftest import agent_log, command, notifications, scripted, start


def answers(log: Path) -> list[dict[str, Any]]:
    """The responses the agent got to its own requests, in order."""
    return [m for m in agent_log(log) if "method" not in m and ("result" in m or "error" in m)]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("top secret\n")
    return secret


def escaping_paths(workspace: Path, outside: Path) -> list[str]:
    (workspace / "link").symlink_to(outside.parent, target_is_directory=True)
    (workspace / "file-link").symlink_to(outside)
    return [
        f"{workspace}/../outside/secret.txt",  # `..` out of the workspace
        f"{workspace}/link/secret.txt",  # a symlinked directory pointing out
        f"{workspace}/file-link",  # a symlink to a file outside
        "~/outside/secret.txt",  # `~` is not expanded: not absolute
        outside.as_uri(),  # a URI is not a path
        "outside/secret.txt",  # relative
        f"{workspace}/\x00/secret",  # a NUL byte
    ]


async def test_reads_cannot_escape_the_workspace(client, workspace: Path, tmp_path: Path, outside):
    log = tmp_path / "agent.jsonl"
    paths = escaping_paths(workspace, outside)
    steps = [
        {"request": "fs/read_text_file", "params": {"sessionId": "$sessionId", "path": p}}
        for p in paths
    ]
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log), custom=False)
    result = await command(client, "acpls.prompt", {"text": "read"})
    assert result["stopReason"] == "end_turn"
    got = answers(log)
    assert len(got) == len(paths)
    for path, answer in zip(paths, got, strict=True):
        assert "error" in answer, f"{path!r} was read: {answer}"
        assert answer["error"]["code"] == -32602
    assert "top secret" not in json.dumps(agent_log(log))


async def test_writes_cannot_escape_the_workspace(client, workspace: Path, tmp_path: Path, outside):
    log = tmp_path / "agent.jsonl"
    paths = escaping_paths(workspace, outside)
    steps = [
        {
            "request": "fs/write_text_file",
            "params": {"sessionId": "$sessionId", "path": p, "content": "pwned\n"},
        }
        for p in paths
    ]
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log), custom=False)
    await command(client, "acpls.prompt", {"text": "write"})
    got = answers(log)
    assert len(got) == len(paths) and all("error" in a for a in got), got
    assert outside.read_text() == "top secret\n"
    assert client.edits == []  # no workspace/applyEdit was even proposed


async def test_terminal_cwd_cannot_escape_the_workspace(
    client, workspace: Path, tmp_path: Path, outside
):
    log = tmp_path / "agent.jsonl"
    marker = tmp_path / "ran"
    (workspace / "link").symlink_to(outside.parent, target_is_directory=True)
    steps = [
        {
            "request": "terminal/create",
            "params": {"sessionId": "$sessionId", "command": f"touch {marker}", "cwd": cwd},
        }
        for cwd in (str(workspace / "link"), f"{workspace}/..", "~")
    ]
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log), custom=False)
    await command(client, "acpls.prompt", {"text": "run"})
    got = answers(log)
    assert len(got) == 3 and all(a.get("error", {}).get("code") == -32602 for a in got), got
    await asyncio.sleep(0.3)
    assert not marker.exists()


async def test_show_document_only_gets_file_uris_of_absolute_paths(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    hostile_locations = [
        "relative/file.py",
        "~/.ssh/id_rsa",
        "javascript:alert(1)",
        "https://evil.example/x",
        "file:///etc/passwd",
        "\\\\server\\share\\x",
        f"{workspace}/../ws/calc.py",
        f"{workspace}/README.md",
    ]
    steps = [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": f"c{i}",
                "title": "Read",
                "kind": "read",
                "status": "in_progress",
                "locations": [{"path": path, "line": 1}],
            }
        }
        for i, path in enumerate(hostile_locations)
    ]
    steps = [s for step in steps for s in (step, {"sleep": 0.05})]
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log), custom=False)
    result = await command(client, "acpls.prompt", {"text": "look"})
    assert result["stopReason"] == "end_turn"
    await asyncio.sleep(0.2)
    shown = [d.uri for d in client.shown_documents]
    assert (workspace / "README.md").as_uri() in shown
    for uri in shown:
        parsed = urlparse(uri)
        assert parsed.scheme == "file" and parsed.netloc == "", uri
        path = unquote(parsed.path)
        assert os.path.isabs(path) and "/../" not in path and "~" not in path, uri


OSC_COMMAND = (
    "printf 'plain \\033[31mred\\033[0m \\033]52;c;c2VjcmV0\\007"
    "\\033]8;;javascript:alert(1)\\007click\\033]8;;\\007 \\033]0;evil title\\007done\\n'"
)


@pytest.mark.parametrize("raw", [False, True])
async def test_client_terminal_text_is_sanitised_unless_raw(
    client, workspace: Path, tmp_path: Path, raw: bool
):
    log = tmp_path / "agent.jsonl"
    steps = [
        {
            "request": "terminal/create",
            "params": {"sessionId": "$sessionId", "command": OSC_COMMAND},
            "save": "t",
        },
        {
            "request": "terminal/wait_for_exit",
            "params": {"sessionId": "$sessionId", "terminalId": "$t.terminalId"},
        },
    ]
    await start(
        client,
        workspace,
        scripted({"protocol": 1, "on_prompt": steps}, log),
        terminal={"rawOutput": raw},
    )
    await command(client, "acpls.prompt", {"text": "run"})
    await asyncio.sleep(0.3)
    text = "".join(p["text"] for p in notifications(client, "acpls/terminalOutput"))
    assert "done" in text and "\x1b[31mred\x1b[0m" in text, repr(text)
    dangerous = ["]52;", "javascript:", "evil title"]
    if raw:
        assert all(d in text for d in dangerous), repr(text)
    else:
        assert not any(d in text for d in dangerous), repr(text)


@pytest.fixture
def server_env(server_env: dict[str, str]) -> dict[str, str]:
    """The editor's environment (acpls') carries secrets the user lists in env.remove."""
    secrets = {"SECRET_TOKEN": "s1", "SECRET_OTHER": "s2", "AWS_SECRET_ACCESS_KEY": "s3"}
    return {**server_env, **secrets, "KEEP_ME": "k"}


async def test_agent_and_its_terminals_do_not_get_removed_variables(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    dump = tmp_path / "agent-env.json"
    terminal_env = tmp_path / "terminal-env.txt"
    steps = [
        {
            "request": "terminal/create",
            "params": {"sessionId": "$sessionId", "command": f"env > {terminal_env}"},
            "save": "t",
        },
        {
            "request": "terminal/wait_for_exit",
            "params": {"sessionId": "$sessionId", "terminalId": "$t.terminalId"},
        },
    ]
    argv = script_command({"protocol": 1, "on_prompt": steps}, log, env_dump=dump)
    agent = {"command": argv[0], "args": argv[1:]}
    await start(client, workspace, agent, env={"remove": ["SECRET_*", "AWS_SECRET_ACCESS_KEY"]})
    await command(client, "acpls.prompt", {"text": "env"})
    agent_env = json.loads(dump.read_text())
    assert agent_env.get("KEEP_ME") == "k"
    assert not {"SECRET_TOKEN", "SECRET_OTHER", "AWS_SECRET_ACCESS_KEY"} & set(agent_env)
    names = {line.split("=", 1)[0] for line in terminal_env.read_text().splitlines()}
    assert "KEEP_ME" in names
    assert not {"SECRET_TOKEN", "SECRET_OTHER", "AWS_SECRET_ACCESS_KEY"} & names
