"""What acpls does for the agent, end to end: terminals, safe writes, paths, review, rules."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import agent_log, command, notifications, scripted, start


def results(log: Path) -> list[Any]:
    """What the client answered to the agent's requests, in order."""
    return [
        m.get("result", m.get("error")) for m in agent_log(log) if "method" not in m and "id" in m
    ]


def terminal_script(command_line: str, *, release: bool = True, extra: list | None = None) -> dict:
    steps: list[dict[str, Any]] = [
        {
            "request": "terminal/create",
            "params": {"sessionId": "$sessionId", "command": command_line, "cwd": "$cwd"},
        },
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "run-1",
                "title": command_line,
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "term_1"}],
            }
        },
        {
            "request": "terminal/wait_for_exit",
            "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
        },
        {
            "request": "terminal/output",
            "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
        },
    ]
    if release:
        steps.append(
            {
                "request": "terminal/release",
                "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
            }
        )
    return {"protocol": 1, "on_prompt": steps + (extra or [])}


async def test_client_terminal_streams_coloured_output_to_the_editor(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    line = "printf '\\033[31mred\\033[0m caf\\303\\251\\n'; exit 3"
    await start(client, workspace, scripted(terminal_script(line), log))
    await command(client, "acpls.prompt", {"text": "run"})
    answers = results(log)
    assert answers[0] == {"terminalId": "term_1"}
    assert answers[1] == {"exitCode": 3, "signal": None}
    assert "\x1b[31mred\x1b[0m café" in answers[2]["output"]
    texts = "".join(p["text"] for p in notifications(client, "acpls/terminalOutput"))
    assert "\x1b[31mred\x1b[0m café" in texts
    states = notifications(client, "acpls/terminalUpdate")
    assert states[-1]["owner"] == "client"
    assert states[-1]["exitStatus"] == {"exitCode": 3}
    assert states[-1]["toolCallId"] == "run-1"
    assert states[-1].get("released") is True


def _pids_of(marker: str) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [
        int(ln.split()[0]) for ln in out.splitlines()[1:] if marker in ln and "ps -eo" not in ln
    ]


async def test_release_kills_the_whole_process_tree(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    marker = f"acpls-tree-{os.getpid()}-{tmp_path.name}"
    line = f"sh -c 'sleep 300 # {marker}' & sleep 300 # {marker}"
    script = {
        "protocol": 1,
        "on_prompt": [
            {"request": "terminal/create", "params": {"sessionId": "$sessionId", "command": line}},
            {"sleep": 0.5},
            {
                "request": "terminal/release",
                "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
            },
            {
                "request": "terminal/output",
                "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
            },
        ],
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "run"})
    await asyncio.sleep(0.3)
    assert _pids_of(marker) == []
    after_release = results(log)[-1]
    assert after_release["code"] == -32002


async def test_acpls_exit_kills_running_terminals(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    marker = f"acpls-exit-{os.getpid()}-{tmp_path.name}"
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "terminal/create",
                "params": {"sessionId": "$sessionId", "command": f"sleep 300 # {marker}"},
            },
        ],
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "run"})
    assert _pids_of(marker), "the terminal process should be running"
    await client.shutdown_session()
    for _ in range(40):
        if not _pids_of(marker):
            break
        await asyncio.sleep(0.05)
    assert _pids_of(marker) == []


async def test_bad_terminal_requests_get_clear_errors(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "terminal/create",
                "params": {"sessionId": "$sessionId", "command": "/no/such/cmd", "args": []},
            },
            {
                "request": "terminal/create",
                "params": {
                    "sessionId": "$sessionId",
                    "command": "ls",
                    "args": [],
                    "cwd": "$cwd/missing",
                },
            },
            {
                "request": "terminal/output",
                "params": {"sessionId": "$sessionId", "terminalId": "nope"},
            },
        ],
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "run"})
    errors = results(log)
    assert errors[0]["code"] == -32602 and "/no/such/cmd" in errors[0]["message"]
    assert errors[1]["code"] == -32602
    assert errors[2]["code"] == -32002


async def test_write_into_dirty_buffer_asks_and_keeps_the_users_work(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "fs/write_text_file",
                "params": {
                    "sessionId": "$sessionId",
                    "path": "$cwd/calc.py",
                    "content": "agent text\n",
                },
            }
        ],
    }
    client.answer_message_request = lambda p: types.MessageActionItem(title="Keep mine")
    await start(client, workspace, scripted(script, log), custom=False)
    uri = (workspace / "calc.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text="my unsaved work\n"
            )
        )
    )
    await command(client, "acpls.prompt", {"text": "write"})
    (question,) = client.message_requests
    assert [a.title for a in question.actions] == ["Keep mine", "Take the agent's", "Show the diff"]
    assert client.edits == []
    assert "kept their unsaved changes" in results(log)[0]["message"]


async def test_symlink_escaping_the_workspace_is_refused(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (workspace / "link").symlink_to(outside)
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "fs/read_text_file",
                "params": {"sessionId": "$sessionId", "path": "$cwd/link/secret.txt"},
            },
            {
                "request": "fs/read_text_file",
                "params": {"sessionId": "$sessionId", "path": "$cwd/../outside/secret.txt"},
            },
            {
                "request": "fs/read_text_file",
                "params": {"sessionId": "$sessionId", "path": "~/secret.txt"},
            },
        ],
    }
    client.answer_message_request = lambda p: types.MessageActionItem(title="Deny")
    await start(client, workspace, scripted(script, log), custom=False)
    await command(client, "acpls.prompt", {"text": "read"})
    answers = results(log)
    assert all("content" not in a for a in answers), answers
    assert [a["code"] for a in answers] == [-32602, -32602, -32602]
    assert len(client.message_requests) == 2  # `~` is refused outright, never asked about
    assert "outside the workspace" in client.message_requests[0].message


async def test_outside_path_allowed_once_per_session(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    outside = tmp_path / "notes.txt"
    outside.write_text("hello\n")
    read = {
        "request": "fs/read_text_file",
        "params": {"sessionId": "$sessionId", "path": str(outside)},
    }
    client.answer_message_request = lambda p: types.MessageActionItem(title="Allow")
    await start(
        client, workspace, scripted({"protocol": 1, "on_prompt": [read, read]}, log), custom=False
    )
    await command(client, "acpls.prompt", {"text": "read"})
    assert [a["content"] for a in results(log)] == ["hello\n", "hello\n"]
    assert len(client.message_requests) == 1


async def test_direct_disk_write_is_reviewed_and_rejected(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"],
        cwd=workspace,
        check=True,
    )
    writer = (
        "import pathlib,sys; p=pathlib.Path(sys.argv[1]); "
        "p.write_text(p.read_text().replace('a - b', 'a + b'))"
    )
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "terminal/create",
                "params": {
                    "sessionId": "$sessionId",
                    "command": sys.executable,
                    "args": ["-c", writer, "$cwd/calc.py"],
                },
            },
            {
                "request": "terminal/wait_for_exit",
                "params": {"sessionId": "$sessionId", "terminalId": "term_1"},
            },
            {"sleep": 0.6},
        ],
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "fix"})
    review = await command(client, "acpls.review", {})
    files = review["files"]
    assert [f["path"] for f in files] == [str(workspace / "calc.py")]
    (hunk,) = files[0]["hunks"]
    assert hunk["oldText"] == "    return a - b\n" and hunk["newText"] == "    return a + b\n"
    changes = notifications(client, "acpls/changes")
    assert changes and changes[-1]["files"][0]["hunks"][0]["hunkId"] == hunk["hunkId"]
    after = await command(client, "acpls.rejectHunk", {"hunkId": hunk["hunkId"]})
    assert after["files"] == []
    undo = client.edits[-1].edit.document_changes[0]
    assert undo.edits[0].new_text == "    return a - b\n"
    rejected = await command(client, "acpls.rejected", {})
    assert rejected["rejected"][0]["newText"] == "    return a + b\n"


def _read_permission_script(path: str) -> dict[str, Any]:
    tool_call = {
        "toolCallId": "read-1",
        "title": "Read README.md",
        "kind": "read",
        "status": "pending",
        "locations": [{"path": path}],
    }
    options = [
        {"optionId": "once", "name": "Allow", "kind": "allow_once"},
        {"optionId": "always", "name": "Always", "kind": "allow_always"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]
    return {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "session/request_permission",
                "params": {"sessionId": "$sessionId", "toolCall": tool_call, "options": options},
            }
        ],
    }


async def test_always_allow_rule_answers_the_next_request_in_a_new_session(
    client, workspace, tmp_path, state_dir
):
    log = tmp_path / "agent.jsonl"
    client.answer_permission = lambda p: {"optionId": "always"}
    script = _read_permission_script(str(workspace / "README.md"))
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "read"})
    assert len(client.permission_requests) == 1
    rules = await command(client, "acpls.listRules", {})
    assert [r["kind"] for r in rules["rules"]] == ["read"]
    assert (state_dir / "acpls" / "rules.json").exists()
    session = await command(client, "acpls.newSession", {})
    await command(client, "acpls.prompt", {"text": "read again", "sessionId": session["sessionId"]})
    assert len(client.permission_requests) == 1, "the rule should have answered"
    outcomes = [r["outcome"] for r in results(log) if isinstance(r, dict) and "outcome" in r]
    assert outcomes[-1] == {"outcome": "selected", "optionId": "once"}
    autos = [
        p["update"]
        for p in notifications(client, "acpls/sessionUpdate")
        if p["update"]["sessionUpdate"] == "auto_permission"
    ]
    assert autos and autos[-1]["ruleId"] == rules["rules"][0]["ruleId"]
    removed = await command(client, "acpls.removeRule", {"ruleId": rules["rules"][0]["ruleId"]})
    assert removed["rules"] == []


@pytest.mark.parametrize("agent_name", ["scripted-agent", "gemini-cli"])
async def test_reading_a_missing_file(client, workspace, tmp_path, agent_name):
    """ACP's ResourceNotFound, worded as the ACP SDK words it; Gemini CLI (which cannot tell it
    from other errors) gets a missing file as empty, so its write_file can create new files."""
    log = tmp_path / "agent.jsonl"
    read = {
        "request": "fs/read_text_file",
        "params": {"sessionId": "$sessionId", "path": "$cwd/new.md"},
    }
    script = {
        "protocol": 1,
        "on_initialize": {"agentInfo": {"name": agent_name, "version": "1"}},
        "on_prompt": [read],
    }
    await start(client, workspace, scripted(script, log), custom=True)
    await command(client, "acpls.prompt", {"text": "read"})
    (answer,) = results(log)
    if agent_name == "gemini-cli":
        assert answer == {"content": ""}
    else:
        assert answer["code"] == -32002, answer
        assert answer["message"].startswith("Resource not found: "), answer
    assert not (workspace / "new.md").exists()
