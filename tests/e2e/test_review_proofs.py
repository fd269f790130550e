"""Review proves before it writes, through the real acpls and a scripted agent.

A rejection undoes only text that is still exactly the agent's. When the user edited the agent's
change afterwards (in the open buffer, or on disk with the file closed), `acpls.rejectAll` and
`acpls.rejectHunk` write nothing and ask (generic mode: `window/showMessageRequest` with Keep mine /
Show the diff / Take the original); the file keeps the user's text byte for byte unless the user
takes the original.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import agent_log, command, scripted, start
from tests.e2e.disk_editor import DiskEditor, disk_editor

SHOP = "def price(item):\n    return item.cost\n\n\ndef tax(amount):\n    return amount * 0.2\n"
AGENT = SHOP.replace("item.cost\n", "item.cost * 2\n")
MINE = SHOP.replace("item.cost\n", "item.cost * 3  # mine\n")
KEEP, SHOW, TAKE = "Keep mine", "Show the diff", "Take the original"


def agent_edit(path: Path) -> list[dict[str, Any]]:
    """The agent writes its whole new text through the editor (fs/write_text_file)."""
    return [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit shop.py",
                    "kind": "edit", "status": "in_progress", "locations": [{"path": str(path)}]}},
        {"request": "fs/write_text_file",
         "params": {"sessionId": "$sessionId", "path": str(path), "content": AGENT},
         "expect": {}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "e1",
                    "status": "completed"}},
    ]  # fmt: skip


async def agent_turn(editor: DiskEditor, workspace: Path, log: Path, *, open_file: bool) -> Path:
    shop = workspace / "shop.py"
    shop.write_bytes(SHOP.encode())
    await start(
        editor.client,
        workspace,
        scripted({"protocol": 1, "on_prompt": [agent_edit(shop)]}, log),
        custom=False,
    )
    if open_file:
        editor.open(shop)
    result = await command(editor.client, "acpls.prompt", {"text": "double the price"})
    assert result["stopReason"] == "end_turn"
    assert not [m for m in agent_log(log) if "expect_failed" in m]
    return shop


def conflict_questions(editor: DiskEditor) -> list[Any]:
    return [m for m in editor.message_requests if KEEP in [a.title for a in m.actions or []]]


@pytest.mark.parametrize("answer", [None, KEEP, TAKE])
async def test_reject_all_after_the_user_edited_the_agents_line_asks(
    server_env: dict[str, str], workspace: Path, tmp_path: Path, answer: str | None
):
    async with disk_editor(server_env) as editor:
        shop = await agent_turn(editor, workspace, tmp_path / "agent.jsonl", open_file=True)
        uri = shop.as_uri()
        assert editor.buffers[uri] == AGENT
        editor.type_text(shop, MINE)  # the user changes the agent's line (unsaved)
        editor.answer_message = lambda params: answer
        result = await command(editor.client, "acpls.rejectAll", {})
        (question,) = conflict_questions(editor)
        assert str(shop) in question.message
        assert [a.title for a in question.actions] == [KEEP, SHOW, TAKE]
        (conflict,) = result["conflicts"]
        assert conflict["path"] == str(shop)
        if answer == TAKE:
            assert editor.buffers[uri] == SHOP
            assert result["files"] == [] and conflict["choice"] == "takeTheirs"
        else:
            # Nothing was written: the user's text, byte for byte; the disk as it was.
            assert editor.buffers[uri] == MINE
            assert shop.read_bytes() == SHOP.encode()
            if answer == KEEP:
                assert result["files"] == [] and conflict["choice"] == "keepMine"
            else:
                (changed,) = result["files"]
                (hunk,) = changed["hunks"]
                assert hunk["newText"] == "    return item.cost * 3  # mine\n"
                assert conflict["choice"] is None


async def test_reject_hunk_of_a_closed_file_edited_on_disk_after_the_turn_asks(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    """acpls did not see this edit (the file is closed, the turn is over): the reject reads the
    disk first and finds the user's text where the agent's was."""
    async with disk_editor(server_env) as editor:
        shop = await agent_turn(editor, workspace, tmp_path / "agent.jsonl", open_file=False)
        assert shop.read_bytes() == AGENT.encode()
        review = await command(editor.client, "acpls.review", {})
        (hunk,) = review["files"][0]["hunks"]
        mine = MINE.replace("\n", "\r\n").encode()  # another editor, another line ending
        shop.write_bytes(mine)
        edits = len(editor.edits)
        result = await command(editor.client, "acpls.rejectHunk", {"hunkId": hunk["hunkId"]})
        assert shop.read_bytes() == mine
        assert len(editor.edits) == edits  # no applyEdit at all
        assert len(conflict_questions(editor)) == 1
        assert result["conflicts"][0]["choice"] is None


async def test_reject_all_of_untouched_agent_text_still_just_works(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    async with disk_editor(server_env) as editor:
        shop = await agent_turn(editor, workspace, tmp_path / "agent.jsonl", open_file=True)
        editor.type_text(shop, AGENT + "# a note of mine\n")  # outside the agent's change
        result = await command(editor.client, "acpls.rejectAll", {})
        assert result == {"files": []}
        assert conflict_questions(editor) == []
        assert editor.buffers[shop.as_uri()] == SHOP + "# a note of mine\n"


async def test_no_git_baselines_come_from_the_turn_start_checkpoint(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    """No git, files never opened or read: the watcher cannot know their text before the turn,
    but the checkpoint taken before it does. A command edits one and deletes another (just
    before the turn ends); review lists both with a known baseline and rejectAll gives the
    original bytes back (before, they could be kept but not rejected, and the deletion was
    not listed at all)."""
    notes = workspace / "notes.txt"
    notes.write_bytes(b"first line\r\nsecond line\r\n")
    doomed = workspace / "doomed.txt"
    doomed.write_bytes(b"keep me\n")
    before = {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()}
    steps = [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "sed",
                    "kind": "execute", "status": "in_progress"}},
        {"disk": {"op": "write", "path": str(notes), "text": "first line\r\nchanged\r\n"}},
        {"disk": {"op": "remove", "path": str(doomed)}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "c1",
                    "status": "completed"}},
    ]  # fmt: skip
    async with disk_editor(server_env) as editor:
        agent = scripted({"protocol": 1, "on_prompt": [steps]}, tmp_path / "agent.jsonl")
        await start(editor.client, workspace, agent, custom=False)
        result = await command(editor.client, "acpls.prompt", {"text": "edit the notes"})
        assert result["stopReason"] == "end_turn"
        review = await command(editor.client, "acpls.review", {})
        files = {Path(f["path"]).name: f for f in review["files"]}
        assert set(files) == {"notes.txt", "doomed.txt"}, review
        assert all("note" not in f for f in files.values()), review
        assert files["doomed.txt"]["status"] == "deleted"
        (hunk,) = files["notes.txt"]["hunks"]
        assert (hunk["oldText"], hunk["newText"]) == ("second line\r\n", "changed\r\n")
        assert await command(editor.client, "acpls.rejectAll", {}) == {"files": []}
        assert {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()} == before


async def test_typing_right_after_the_agents_write_is_never_credited_to_the_agent(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    """The user types in the agent's line at once after acpls put the agent's write in the
    buffer: that didChange comes while acpls still counts changes of the document as its own.
    The tool call then completes with its diff; the buffer's text then is not the agent's, and
    a rejection asks instead of undoing the user's typing."""
    shop = workspace / "shop.py"
    shop.write_bytes(SHOP.encode())
    steps = agent_edit(shop)
    steps[-1]["update"]["content"] = [
        {"type": "diff", "path": str(shop), "oldText": SHOP, "newText": AGENT}
    ]
    async with disk_editor(server_env) as editor:
        agent = scripted({"protocol": 1, "on_prompt": [steps]}, tmp_path / "agent.jsonl")
        await start(editor.client, workspace, agent, custom=False)
        editor.open(shop)
        apply = editor.apply

        def apply_then_type(edit: dict[str, Any]) -> None:
            apply(edit)
            if editor.buffers[shop.as_uri()] == AGENT:
                editor.type_text(shop, MINE)  # before the applyEdit answer goes back

        editor.apply = apply_then_type  # type: ignore[method-assign]
        result = await command(editor.client, "acpls.prompt", {"text": "double the price"})
        assert result["stopReason"] == "end_turn"
        assert editor.buffers[shop.as_uri()] == MINE
        result = await command(editor.client, "acpls.rejectAll", {})
        assert len(conflict_questions(editor)) == 1, result
        assert editor.buffers[shop.as_uri()] == MINE
