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


async def test_a_file_opened_during_the_turn_is_asked_about_too(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    """The user opens the file and types in it while the turn runs (here: while the agent waits
    for a permission), then the agent writes it on disk: asked like a buffer open at turn start."""
    shop = workspace / "shop.py"
    shop.write_bytes(SHOP.encode())
    ask = {"request": "session/request_permission", "params": {
        "sessionId": "$sessionId",
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
        "toolCall": {"toolCallId": "w1", "title": "Edit shop.py", "kind": "edit",
                     "status": "pending", "locations": [{"path": str(shop)}]}}}  # fmt: skip
    script = {"protocol": 1, "on_prompt": [[ask, *agent_writes_disk(shop)]]}
    async with disk_editor(server_env) as editor:
        editor.answer_conflict = lambda params: {"choice": "keepMine"}

        def open_then_allow(params: Any) -> Any:
            editor.open(shop, UNSAVED)  # didOpen and didChange reach acpls before the answer
            return {"optionId": params["options"][0]["optionId"]}

        editor.answer_permission = open_then_allow
        await start(editor.client, workspace, scripted(script, tmp_path / "a.jsonl"), custom=True)
        result = await command(editor.client, "acpls.prompt", {"text": "round it"})
        assert result["stopReason"] == "end_turn"
        assert editor.permission_requests
        await until(lambda: len(editor.conflicts) == 1)
        (conflict,) = editor.conflicts
        assert conflict["kind"] == "diskWrite" and conflict["path"] == str(shop)
        assert (conflict["mine"], conflict["theirs"]) == (UNSAVED, AGENT)
        await command(editor.client, "acpls.review", {})
        assert editor.buffers[shop.as_uri()] == UNSAVED
        assert shop.read_bytes() == AGENT.encode()


@pytest.mark.parametrize("unsaved", [True, False])
async def test_an_agent_deleting_a_file_under_unsaved_text_tells_the_user(
    server_env: dict[str, str], workspace: Path, tmp_path: Path, unsaved: bool
):
    """Nothing to take (the agent left no text): the user is told, the buffer keeps its text,
    nothing is asked. A clean buffer's deletion is only in review (no message)."""
    shop = workspace / "shop.py"
    shop.write_bytes(SHOP.encode())
    steps = [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "d1", "title": "rm shop.py",
                    "kind": "delete", "status": "in_progress"}},
        {"disk": {"op": "remove", "path": str(shop)}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "d1",
                    "status": "completed"}},
    ]  # fmt: skip
    async with disk_editor(server_env) as editor:
        editor.answer_conflict = lambda params: {"choice": "takeTheirs"}
        await start(
            editor.client, workspace, scripted({"protocol": 1, "on_prompt": [steps]},
                                               tmp_path / "a.jsonl"), custom=True
        )  # fmt: skip
        editor.open(shop, UNSAVED if unsaved else None)
        result = await command(editor.client, "acpls.prompt", {"text": "remove it"})
        assert result["stopReason"] == "end_turn"
        assert not shop.exists()
        review = await command(editor.client, "acpls.review", {})
        assert [f["path"] for f in review["files"]] == [str(shop)], review
        told = [m.message for m in editor.client.messages if "deleted" in m.message]
        assert editor.conflicts == [] and editor.message_requests == []
        assert editor.buffers[shop.as_uri()] == (UNSAVED if unsaved else SHOP)
        if unsaved:
            (message,) = told
            assert str(shop) in message and "unsaved" in message
        else:
            assert told == []
