"""An agent that writes a file both through the editor and straight to disk, through the real acpls.

OpenCode (tests/real_agents/README.md) answers an allowed edit by sending `fs/write_text_file`
without waiting for the answer, and then writes the same text to disk itself. acpls' write and the
agent's own may land in either order; the file must end up holding the agent's text once, and
`acpls.rejectAll` must give the original back in the open buffer and on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
