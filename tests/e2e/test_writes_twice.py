"""An agent that writes a file both through the editor and straight to disk, through the real acpls.

OpenCode (tests/real_agents/README.md) answers an allowed edit by sending `fs/write_text_file`
without waiting for the answer, and then writes the same text to disk itself. acpls' write and the
agent's own may land in either order; the file must end up holding the agent's text once, and
`acpls.rejectAll` must give the original back in the open buffer and on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import agent_log, command, scripted, start
from tests.e2e.disk_editor import disk_editor

NOTES = "# Notes\n\nTotals are rounded to cents.\n"
SHOP = "def total(prices):\n    return sum(prices)\n"
EDITED = "def total(prices):\n    return round(sum(prices), 2)\n"


def _write(path: Path, text: str) -> dict[str, Any]:
    return {
        "request": "fs/write_text_file",
        "params": {"sessionId": "$sessionId", "path": str(path), "content": text},
        "expect": {},
    }


async def test_new_file_the_agent_also_writes_itself_holds_its_text_once(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    notes = workspace / "notes.md"
    script = {"protocol": 1, "on_prompt": [_write(notes, NOTES)]}
    async with disk_editor(server_env) as editor:

        def agent_writes_too(edit: dict[str, Any]) -> None:
            """The agent's own write lands after acpls found no file, before the editor
            applies acpls' write."""
            if not notes.exists():
                notes.write_text(NOTES)

        editor.before_apply = agent_writes_too
        await start(editor.client, workspace, scripted(script, tmp_path / "agent.jsonl"))
        result = await command(editor.client, "acpls.prompt", {"text": "write the notes"})
        assert result["stopReason"] == "end_turn", agent_log(tmp_path / "agent.jsonl")
        assert notes.read_text() == NOTES
        (create,) = [c for e in editor.edits for c in e["documentChanges"] if c.get("kind")]
        assert create["options"] == {"overwrite": True}, editor.edits


async def test_new_file_the_agent_writes_between_create_and_insert_holds_its_text_once(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    """The agent's own write lands after the editor created the file and before the editor's
    insert of acpls' text (OpenCode in generic mode, about 1 run in 5 here): the insert went into
    the agent's copy and the file held the text twice. acpls sees the file is not the agent's
    text after its write and brings it there."""
    notes = workspace / "notes.md"
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_prompt": [_write(notes, NOTES)]}
    async with disk_editor(server_env) as editor:

        def agent_writes_too(path: Path) -> None:
            path.write_text(NOTES)

        editor.after_create = agent_writes_too
        await start(editor.client, workspace, scripted(script, log))
        result = await command(editor.client, "acpls.prompt", {"text": "write the notes"})
        assert result["stopReason"] == "end_turn", agent_log(log)
        assert notes.read_text() == NOTES, editor.edits
        files = (await command(editor.client, "acpls.review", {}))["files"]
        assert [(f["path"], f["status"]) for f in files] == [(str(notes), "added")], files


# (editor, what its edits of a file with no buffer go to, whether the agent's own copy of the new
# file lands after the create and before the editor loads the file for the insert). Left out: an
# editor that creates the file, then loads it into a buffer it never saves and tells acpls nothing
# of ("unseen"), or reports its insert only after its reply ("late", where its didOpen holds the
# agent's copy, exactly the agent's text), with the copy under the insert: what the editor then
# holds cannot be seen in time.
NEW_FILE_CASES = [
    (editor, buffers, race)
    for editor in ("visual-studio-code", "emacs")
    for buffers in (None, "synced", "late", "unseen")
    for race in (False, True)
    if not (editor == "visual-studio-code" and buffers in ("late", "unseen") and race)
]


@pytest.mark.parametrize(("editor_name", "new_buffers", "race"), NEW_FILE_CASES)
async def test_new_file_holds_the_agents_text_once_in_the_buffer_and_on_disk(
    server_env: dict[str, str],
    workspace: Path,
    tmp_path: Path,
    editor_name: str,
    new_buffers: str | None,
    race: bool,
):
    """VS Code's capabilities have `resourceOperations` (the editor creates the file, then
    inserts the text), pytest-lsp's Emacs ones do not (eglot 1.9: acpls writes the file itself).
    An editor that applies an edit of a file with no buffer in a buffer it opens and never saves
    (eglot) held the text twice and the disk nothing: acpls created the file empty, and its check
    of the new file read the empty disk, or the buffer as the editor opened it, and inserted the
    text again. OpenCode writes the file itself right after asking acpls to: `race` lands its
    copy where the editor's insert goes in front of it."""
    notes = workspace / "notes.md"
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_prompt": [_write(notes, NOTES)]}
    async with disk_editor(server_env) as editor:
        editor.new_buffers = new_buffers
        copies = [NOTES] if race else []

        def agents_copy(path: Path) -> None:
            if copies:
                path.write_text(copies.pop())

        editor.before_load = agents_copy
        await start(editor.client, workspace, scripted(script, log), editor=editor_name)
        result = await command(editor.client, "acpls.prompt", {"text": "write the notes"})
        assert result["stopReason"] == "end_turn", agent_log(log)
        buffer = editor.buffers.get(notes.as_uri())
        if editor_name == "emacs":  # written by acpls: no edit, no buffer, the disk has it
            assert editor.edits == [] and buffer is None, editor.edits
            assert notes.read_text() == NOTES
        elif new_buffers is None:
            assert buffer is None and notes.read_text() == NOTES, editor.edits
        else:  # an unsaved buffer: the disk holds what the editor created, or the agent's copy
            assert buffer == NOTES, editor.edits
            assert notes.read_text() == (NOTES if race else "")


async def test_reject_all_restores_the_disk_the_agent_wrote_besides_the_open_buffer(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    shop = workspace / "shop.py"
    shop.write_text(SHOP)
    steps = [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "edit",
                    "kind": "edit", "status": "in_progress",
                    "locations": [{"path": str(shop)}]}},
        _write(shop, EDITED),
        {"write_file": {"path": str(shop), "text": EDITED}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "e1",
                    "status": "completed",
                    "content": [{"type": "diff", "path": str(shop),
                                 "oldText": "    return sum(prices)\n",
                                 "newText": "    return round(sum(prices), 2)\n"}]}},
    ]  # fmt: skip
    async with disk_editor(server_env) as editor:
        await start(editor.client, workspace, scripted({"protocol": 1, "on_prompt": steps},
                                                       tmp_path / "agent.jsonl"))  # fmt: skip
        editor.open(shop)
        result = await command(editor.client, "acpls.prompt", {"text": "round it"})
        assert result["stopReason"] == "end_turn"
        assert editor.buffers[shop.as_uri()] == EDITED and shop.read_text() == EDITED
        (changed,) = (await command(editor.client, "acpls.review", {}))["files"]
        assert changed["path"] == str(shop), changed
        assert await command(editor.client, "acpls.rejectAll", {}) == {"files": []}
        # Both: an editor that takes the restored buffer for unchanged (it equals the text last
        # saved) would otherwise reload the agent's text from disk.
        assert editor.buffers[shop.as_uri()] == SHOP
        assert shop.read_text() == SHOP


async def test_reject_all_leaves_the_disk_alone_when_the_buffer_holds_unsaved_text(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    """The agent wrote only through the editor: the disk never held its text, and stays as it
    was (the user saves the buffer, or not)."""
    shop = workspace / "shop.py"
    shop.write_text(SHOP)
    script = {"protocol": 1, "on_prompt": [_write(shop, EDITED)]}
    async with disk_editor(server_env) as editor:
        await start(editor.client, workspace, scripted(script, tmp_path / "agent.jsonl"))
        editor.open(shop)
        await command(editor.client, "acpls.prompt", {"text": "round it"})
        assert editor.buffers[shop.as_uri()] == EDITED and shop.read_text() == SHOP
        shop.write_text("# the user's own, from elsewhere\n")
        assert await command(editor.client, "acpls.rejectAll", {}) == {"files": []}
        assert editor.buffers[shop.as_uri()] == SHOP
        assert shop.read_text() == "# the user's own, from elsewhere\n"
