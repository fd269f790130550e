"""Checkpoints end to end (editor contract section 9): the real acpls, scripted agents that change
the workspace every way they can, and an editor that applies acpls' edits to disk."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.checkpoint_support import apply_on_disk, folder_state, git_state, make_repo
from tests.e2e.conftest import (
    SERVER,
    agent_log,
    command,
    make_client,
    scripted,
    start,
    stop_client,
)

PNG_OLD = bytes(range(256)) * 4
PNG_NEW = b"\0new binary\0" * 50


@pytest.fixture
async def editor(server_env: dict[str, str]) -> AsyncIterator[LanguageClient]:
    """An editor that applies every edit to disk (or to its open buffers) and says so."""
    config = ClientServerConfig(
        server_command=SERVER, client_factory=make_client, server_env=server_env
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    client.edits = []  # type: ignore[attr-defined]
    client.buffers = {}  # type: ignore[attr-defined]
    client.refuse_edits = False  # type: ignore[attr-defined]
    converter = client.protocol._converter

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edit = converter.unstructure(params.edit)
        client.edits.append(edit)  # type: ignore[attr-defined]
        if client.refuse_edits:  # type: ignore[attr-defined]
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="user declined")
        apply_on_disk(edit, client.buffers)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: types.ShowMessageRequestParams) -> Any:
        return None

    yield client
    await stop_client(client)


def write(path: str, text: str) -> dict[str, Any]:
    return {
        "request": "fs/write_text_file",
        "params": {"sessionId": "$sessionId", "path": path, "content": text},
    }


def disk(**spec: Any) -> dict[str, Any]:
    return {"disk": spec}


def run_command(script: str) -> list[dict[str, Any]]:
    """A v1 client terminal running `sh -c script`, waited for."""
    return [
        {
            "request": "terminal/create",
            "params": {
                "sessionId": "$sessionId",
                "command": "sh",
                "args": ["-c", script],
                "cwd": "$cwd",
            },
            "save": "t",
        },
        {
            "request": "terminal/wait_for_exit",
            "params": {"sessionId": "$sessionId", "terminalId": "$t.terminalId"},
        },
        {
            "request": "terminal/release",
            "params": {"sessionId": "$sessionId", "terminalId": "$t.terminalId"},
        },
    ]


def prepare(root: Path) -> None:
    (root / "old_name.py").write_text("print('moved')\n")
    (root / "notes.txt").write_text("to be deleted\n")
    (root / "logo.png").write_bytes(PNG_OLD)
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "link").symlink_to("README.md")
    (root / "sub").mkdir()
    (root / "sub" / "deep.txt").write_text("deep\n")


def everything_turn(root: Path) -> list[dict[str, Any]]:
    """One turn that changes the workspace every way an agent can."""
    r = str(root)
    return [
        write(f"{r}/calc.py", "def add(a, b):\n    return a + b\n"),
        write(f"{r}/created_by_agent.py", "x = 1\n"),
        disk(op="write", path=f"{r}/README.md", text="# rewritten on disk\n"),
        disk(op="remove", path=f"{r}/notes.txt"),
        disk(op="rename", path=f"{r}/old_name.py", to=f"{r}/new_name.py"),
        disk(op="write", path=f"{r}/logo.png", base64=base64.b64encode(PNG_NEW).decode()),
        disk(op="write", path=f"{r}/run.sh", text="#!/bin/sh\necho changed\n", mode=0o644),
        disk(op="remove", path=f"{r}/link"),
        disk(op="symlink", path=f"{r}/link", target="calc.py"),
        disk(op="write", path=f"{r}/sub/new dir/new file.txt", text="new\n"),
        disk(op="remove", path=f"{r}/sub/deep.txt"),
        *run_command("echo made > made_by_command.txt; rm -f ignored.log.keep"),
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "done"},
            }
        },
    ]


async def test_restore_undoes_every_kind_of_change_and_leaves_git_alone(
    editor: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    make_repo(workspace)
    prepare(workspace)
    before_files = folder_state(workspace)
    before_git = git_state(workspace)

    agent = scripted({"protocol": 1, "on_prompt": everything_turn(workspace)}, tmp_path / "a.log")
    await start(editor, workspace, agent)
    result = await command(editor, "acpls.prompt", {"text": "Fix add\nand more"})
    assert result["stopReason"] == "end_turn"
    after_files = folder_state(workspace)
    assert after_files != before_files
    # The snapshots left the repository alone (its status differs: the agent changed files).
    assert {**git_state(workspace), "status": None} == {**before_git, "status": None}

    listing = await command(editor, "acpls.checkpoints", {})
    assert len(listing) == 1
    checkpoint = listing[0]
    assert checkpoint["turn"] == 1 and checkpoint["prompt"] == "Fix add"
    assert checkpoint["sessionId"] == result["sessionId"]
    changed = {os.path.relpath(p, workspace) for p in checkpoint["files"]}
    assert changed == {
        "calc.py", "created_by_agent.py", "README.md", "notes.txt", "old_name.py",
        "new_name.py", "logo.png", "run.sh", "link", "sub/new dir/new file.txt",
        "sub/deep.txt", "made_by_command.txt",
    }  # fmt: skip

    restored = await command(editor, "acpls.restoreCheckpoint", {"id": checkpoint["id"]})
    assert restored["skipped"] == []
    assert {os.path.relpath(p, workspace) for p in restored["restored"]} == changed
    assert restored["prompt"] == "Fix add\nand more"
    assert folder_state(workspace) == before_files
    assert git_state(workspace) == before_git

    # The rename came back as a rename, the text through the editor, the binary on disk.
    edit = editor.edits[-1]  # type: ignore[attr-defined]
    kinds = [c.get("kind", "edit") for c in edit["documentChanges"]]
    assert "rename" in kinds and "delete" in kinds and "create" in kinds
    assert not any("logo.png" in str(c) for c in edit["documentChanges"])

    # The restore took a checkpoint of its own: restoring it redoes the agent's work.
    listing = await command(editor, "acpls.checkpoints", {})
    assert listing[0]["turn"] is None and listing[0]["id"] == restored["checkpoint"]
    redo = await command(editor, "acpls.restoreCheckpoint", {"id": restored["checkpoint"]})
    assert redo["skipped"] == []
    assert folder_state(workspace) == after_files
    assert {**git_state(workspace), "status": None} == {**before_git, "status": None}


async def test_non_git_folder_dirty_buffer_preview_and_limits(
    editor: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    r = str(workspace)
    (workspace / "big.txt").write_text("x" * 5000)
    turns = [
        [disk(op="write", path=f"{r}/README.md", text="# agent\n"),
         disk(op="write", path=f"{r}/big.txt", text="y" * 6000)],
        [disk(op="write", path=f"{r}/calc.py", text="# second turn\n")],
    ]  # fmt: skip
    agent = scripted({"protocol": 1, "on_prompt": turns}, tmp_path / "a.log")
    await start(editor, workspace, agent, checkpoints={"maxFileBytes": 4096})

    # The user has unsaved text in calc.py when the first turn starts.
    calc = workspace / "calc.py"
    uri = calc.as_uri()
    editor.buffers[str(calc)] = "unsaved by the user\n"  # type: ignore[attr-defined]
    editor.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text="unsaved by the user\n"
            )
        )
    )
    first = await command(editor, "acpls.prompt", {"text": "one"})
    await command(editor, "acpls.prompt", {"sessionId": first["sessionId"], "text": "two"})
    # ... and types more after the turns.
    editor.buffers[str(calc)] = "typed later\n"  # type: ignore[attr-defined]
    editor.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="typed later\n")],
        )
    )
    listing = await command(editor, "acpls.checkpoints", {"sessionId": first["sessionId"]})
    assert [c["turn"] for c in listing] == [2, 1]
    oldest = listing[-1]
    assert oldest["notRecorded"][0]["path"] == f"{r}/big.txt"
    assert "size limit" in oldest["notRecorded"][0]["reason"]

    # Preview: every edit needs confirmation; a declined edit restores nothing.
    editor.refuse_edits = True  # type: ignore[attr-defined]
    declined = await command(
        editor, "acpls.restoreCheckpoint", {"id": oldest["id"], "preview": True}
    )
    assert declined["restored"] == []
    edit = editor.edits[-1]  # type: ignore[attr-defined]
    annotations = edit["changeAnnotations"]
    assert all(a["needsConfirmation"] for a in annotations.values())
    assert all(
        e.get("annotationId") in annotations
        for c in edit["documentChanges"]
        for e in c.get("edits", [])
    )
    assert (workspace / "README.md").read_text() == "# agent\n"

    editor.refuse_edits = False  # type: ignore[attr-defined]
    result = await command(editor, "acpls.restoreCheckpoint", {"id": oldest["id"]})
    reasons = {os.path.relpath(s["path"], r): s["reason"] for s in result["skipped"]}
    assert "unsaved changes" in reasons["calc.py"]
    assert "big.txt" in reasons  # not recorded: never deleted or overwritten
    assert (workspace / "README.md").read_text() == "# sample\n"
    assert (workspace / "big.txt").read_text() == "y" * 6000

    confirmed = await command(
        editor,
        "acpls.restoreCheckpoint",
        {"id": oldest["id"], "includeUnsaved": [str(calc)]},
    )
    assert str(calc) in confirmed["restored"]
    # What the user saw before the first turn comes back into the buffer.
    assert editor.buffers[str(calc)] == "unsaved by the user\n"  # type: ignore[attr-defined]


async def test_unknown_checkpoint_is_invalid_params(
    editor: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    agent = scripted({"protocol": 1, "on_prompt": []}, tmp_path / "a.log")
    await start(editor, workspace, agent)
    with pytest.raises(JsonRpcException) as info:
        await command(editor, "acpls.restoreCheckpoint", {"id": "no-such-checkpoint"})
    assert info.value.code == -32602
    assert await command(editor, "acpls.checkpoints", {}) == []


def say(text: str) -> dict[str, Any]:
    return {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }
    }


async def test_continue_without_fork_carries_the_conversation_as_context(
    editor: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "a.log"
    turns = [[say("first answer")], [say("second answer")], [say("third")]]
    await start(editor, workspace, scripted({"protocol": 1, "on_prompt": turns}, log))
    first = await command(editor, "acpls.prompt", {"text": "first question"})
    sid = first["sessionId"]
    await command(editor, "acpls.prompt", {"sessionId": sid, "text": "second question\nline 2"})
    second = next(c for c in await command(editor, "acpls.checkpoints", {}) if c["turn"] == 2)

    diff = await command(editor, "acpls.checkpointDiff", {"id": second["id"]})
    assert diff == {"files": []}

    cont = await command(editor, "acpls.continueFromCheckpoint", {"id": second["id"]})
    assert cont["via"] == "context" and cont["sessionId"] != sid
    assert cont["prompt"] == "second question\nline 2"
    await command(editor, "acpls.prompt", {"sessionId": cont["sessionId"], "text": "edited"})
    prompts = [m["params"]["prompt"] for m in agent_log(log) if m.get("method") == "session/prompt"]
    context, new = prompts[-1][0]["text"], prompts[-1][-1]["text"]
    assert "first question" in context and "first answer" in context
    assert "second question" not in context and "second answer" not in context
    assert new == "edited"


async def test_continue_uses_the_fork_made_after_the_previous_turn(
    editor: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "a.log"
    script = {
        "protocol": 1,
        "on_initialize": {"agentCapabilities": {"sessionCapabilities": {"fork": {}}}},
        "on_fork": {"sessionId": "forked-after-turn-1"},
        "on_prompt": [[say("answer")]],
    }
    await start(editor, workspace, scripted(script, log))
    first = await command(editor, "acpls.prompt", {"text": "one"})
    await command(editor, "acpls.prompt", {"sessionId": first["sessionId"], "text": "two"})
    forks = [m for m in agent_log(log) if m.get("method") == "session/fork"]
    assert forks and forks[0]["params"]["sessionId"] == first["sessionId"]
    second = next(c for c in await command(editor, "acpls.checkpoints", {}) if c["turn"] == 2)
    cont = await command(editor, "acpls.continueFromCheckpoint", {"id": second["id"]})
    assert cont == {
        "sessionId": "forked-after-turn-1",
        "via": "fork",
        "prompt": "two",
        "agent": "python",
    }
    result = await command(
        editor, "acpls.prompt", {"sessionId": "forked-after-turn-1", "text": "2b"}
    )
    assert result["sessionId"] == "forked-after-turn-1"


async def test_generic_editors_restore_from_lenses_on_the_transcript(
    editor: LanguageClient, workspace: Path, tmp_path: Path, state_dir: Path
) -> None:
    """Plain LSP editors: code lenses on each prompt of the transcript restore the files to before
    that turn, or continue the conversation from there."""
    a, b = str(workspace / "a.txt"), str(workspace / "b.txt")
    turns = [[write(a, "one\n"), say("wrote a")], [write(b, "two\n"), say("wrote b")]]
    agent = scripted({"protocol": 1, "on_prompt": turns}, tmp_path / "a.log")
    await start(editor, workspace, agent, custom=False)
    first = await command(editor, "acpls.prompt", {"text": "write a"})
    await command(editor, "acpls.prompt", {"sessionId": first["sessionId"], "text": "write b"})
    (transcript,) = (state_dir / "acpls" / "transcripts").glob("*.md")
    uri = transcript.as_uri()

    lenses = await editor.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert lenses is not None
    lines = transcript.read_text(encoding="utf-8").split("\n")
    titles = [
        (lines[lens.range.start.line][:16], lens.command.title) for lens in lenses if lens.command
    ]
    assert titles == [
        ("**You:** write a", "↺ Restore files to before turn 1 (1 changed)"),
        ("**You:** write a", "Continue from here"),
        ("**You:** write b", "↺ Restore files to before turn 2 (1 changed)"),
        ("**You:** write b", "Continue from here"),
    ]
    # The editor runs the first lens's command as it is: both files go, as before turn 1.
    restore = lenses[0].command
    assert restore is not None and restore.command == "acpls.restoreCheckpoint"
    result = await editor.workspace_execute_command_async(
        types.ExecuteCommandParams(command=restore.command, arguments=restore.arguments)
    )
    assert result is not None
    assert {os.path.basename(p) for p in result["restored"]} == {"a.txt", "b.txt"}
    assert not os.path.exists(a) and not os.path.exists(b)

    # A file that is not a transcript gets no lenses.
    other = await editor.text_document_code_lens_async(
        types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri=(workspace / "x").as_uri())
        )
    )
    assert not other
