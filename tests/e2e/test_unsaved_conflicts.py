"""An agent writes straight to disk a file the editor holds with unsaved changes.

Through the real acpls and a scripted agent: the user's unsaved text is never replaced unasked.
The editor is asked (`acpls/resolveConflict` kind `diskWrite` where it declared support, else
`window/showMessageRequest`) without the turn waiting for the answer; keep mine leaves the buffer
alone, take the agent's puts the disk's text in the buffer, and no answer (or an error answer, an
editor that never implemented the request) keeps the user's text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from acpls.translate.uris import uri_to_path
from tests.e2e.conftest import command, scripted, start
from tests.e2e.disk_editor import DiskEditor, disk_editor

SHOP = "def total(prices):\n    return sum(prices)\n"
UNSAVED = "def total(prices):\n    return sum(prices)  # mine, not saved\n"
AGENT = "def total(prices):\n    return round(sum(prices), 2)\n"
KEEP, SHOW, TAKE = "Keep mine", "Show the diff", "Take the agent's"
BOUND_S = 20  # a hang bound, not a speed check


def agent_writes_disk(path: Path) -> list[dict[str, Any]]:
    return [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "w1", "title": "Edit shop.py",
                    "kind": "edit", "status": "in_progress", "locations": [{"path": str(path)}]}},
        {"disk": {"op": "write", "path": str(path), "text": AGENT}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "w1",
                    "status": "completed"}},
    ]  # fmt: skip


async def turn(editor: DiskEditor, workspace: Path, tmp_path: Path, *, custom: bool) -> Path:
    shop = workspace / "shop.py"
    shop.write_bytes(SHOP.encode())
    script = {"protocol": 1, "on_prompt": [agent_writes_disk(shop)]}
    await start(editor.client, workspace, scripted(script, tmp_path / "a.jsonl"), custom=custom)
    editor.open(shop, UNSAVED)
    result = await asyncio.wait_for(
        command(editor.client, "acpls.prompt", {"text": "round it"}), BOUND_S
    )
    assert result["stopReason"] == "end_turn"
    assert shop.read_bytes() == AGENT.encode()
    return shop


async def until(check: Callable[[], bool]) -> None:
    async with asyncio.timeout(BOUND_S):
        while not check():  # noqa: ASYNC110 - the editor's handlers record what they get
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("choice", ["keepMine", "takeTheirs", None, "error"])
async def test_custom_editor_is_asked_and_the_turn_does_not_wait(
    server_env: dict[str, str], workspace: Path, tmp_path: Path, choice: str | None
):
    release = asyncio.Event()
    answered = asyncio.Event()

    async def answer(params: Any) -> Any:
        await release.wait()  # the turn must end while the question is open
        answered.set()
        if choice == "error":
            raise RuntimeError("this editor cannot answer")
        return {"choice": choice}

    async with disk_editor(server_env) as editor:
        editor.answer_conflict = answer
        shop = await turn(editor, workspace, tmp_path, custom=True)
        release.set()
        await asyncio.wait_for(answered.wait(), BOUND_S)
        (conflict,) = editor.conflicts
        assert conflict["kind"] == "diskWrite" and conflict["path"] == str(shop)
        assert conflict["uri"] == shop.as_uri() and conflict["sessionId"]
        assert (conflict["mine"], conflict["theirs"]) == (UNSAVED, AGENT)
        assert conflict["requestId"].startswith("acpls-conflict-")
        uri = shop.as_uri()
        if choice == "takeTheirs":
            await until(lambda: editor.buffers[uri] != UNSAVED)
            assert editor.buffers[uri] == AGENT
            assert shop.read_bytes() == AGENT.encode()  # acpls never wrote the disk
            # Taken, the agent's text is a change to the user's like any other: in review, and
            # rejecting it gives the unsaved text back.
            review = await command(editor.client, "acpls.review", {})
            (changed,) = review["files"]
            assert changed["path"] == str(shop) and "note" not in changed, review
            assert await command(editor.client, "acpls.rejectAll", {}) == {"files": []}
            assert editor.buffers[uri] == UNSAVED
        else:
            await command(editor.client, "acpls.review", {})  # acpls has taken the answer
            assert editor.buffers[uri] == UNSAVED
            assert shop.read_bytes() == AGENT.encode()  # acpls never wrote the disk


@pytest.mark.parametrize("answers", [[KEEP], [TAKE], [None], [SHOW, KEEP]])
async def test_generic_editor_is_asked_with_a_message_request(
    server_env: dict[str, str], workspace: Path, tmp_path: Path, answers: list[str | None]
):
    asked: list[Any] = []

    def answer(params: Any) -> str | None:
        asked.append(params)
        return answers[len(asked) - 1]

    async with disk_editor(server_env) as editor:
        editor.answer_message = answer
        shop = await turn(editor, workspace, tmp_path, custom=False)
        await until(lambda: len(asked) == len(answers))
        for question in asked:
            assert str(shop) in question.message
            assert [a.title for a in question.actions] == [KEEP, SHOW, TAKE]
        uri = shop.as_uri()
        if answers[-1] == TAKE:
            await until(lambda: editor.buffers[uri] != UNSAVED)
            assert editor.buffers[uri] == AGENT
        else:
            await command(editor.client, "acpls.review", {})
            assert editor.buffers[uri] == UNSAVED
        if SHOW in answers:
            (shown,) = [d for d in editor.client.shown_documents if d.uri.endswith(".diff")]
            diff = Path(uri_to_path(unquote(shown.uri))).read_text(encoding="utf-8")
            assert "-    return sum(prices)  # mine, not saved\n" in diff
            assert "+    return round(sum(prices), 2)\n" in diff


async def test_a_clean_buffer_is_not_asked_about(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    shop = workspace / "shop.py"
    shop.write_bytes(SHOP.encode())
    script = {"protocol": 1, "on_prompt": [agent_writes_disk(shop)]}
    async with disk_editor(server_env) as editor:
        editor.answer_conflict = lambda params: {"choice": "keepMine"}
        await start(editor.client, workspace, scripted(script, tmp_path / "a.jsonl"))
        editor.open(shop)
        result = await command(editor.client, "acpls.prompt", {"text": "round it"})
        assert result["stopReason"] == "end_turn"
        await command(editor.client, "acpls.review", {})
        assert editor.conflicts == [] and editor.message_requests == []
