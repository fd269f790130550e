"""v1 fragment diffs end to end, as real agents send them, through the real acpls.

Claude Code, OpenCode and Copilot CLI send `oldText`/`newText` holding only the replaced region;
Codex sends the hunk with a few lines of context. Each scripted agent below reproduces one of them
(its tool-call sequence, its permission request, how it writes: straight to disk, or through
`fs/write_text_file`). For each: the permission preview, applied to the file, gives exactly the
agent's result; review lists exactly the agent's change; `acpls.rejectAll` gives the original
bytes back (before the fix it wrote the one-line fragment over the file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acpls.translate.text_edits import apply_text_edits
from tests.e2e.conftest import agent_log, command, scripted
from tests.e2e.disk_editor import DiskEditor, disk_editor

SHOP = (
    "import math\n"
    "\n"
    "def price(item):\n"
    "    return item.cost\n"
    "\n"
    "def total(items):\n"
    "    return sum(price(i) for i in items)\n"
    "\n"
    "def tax(amount):\n"
    "    return math.ceil(amount * 0.2)\n"
)
ALLOW = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always Allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]

# (old fragment, new fragment) as each agent sends it.
CLAUDE = ("    return item.cost\n", "    return item.cost * 2\n")
OPENCODE = ("return sum(price(i) for i in items)", "return round(sum(price(i) for i in items), 2)")
COPILOT = ("    return math.ceil(amount * 0.2)", "    return math.ceil(amount * 0.25)")
CODEX = (
    "\ndef total(items):\n    return sum(price(i) for i in items)\n\ndef tax(amount):\n",
    "\ndef total(items):\n    return sum(price(i) for i in items) or 0\n\ndef tax(amount):\n",
)


def diff(path: Path, fragment: tuple[str, str]) -> dict[str, Any]:
    return {"type": "diff", "path": str(path), "oldText": fragment[0], "newText": fragment[1]}


def permission(path: Path, call_id: str, title: str, fragment: tuple[str, str]) -> dict[str, Any]:
    tool_call = {
        "toolCallId": call_id,
        "title": title,
        "kind": "edit",
        "content": [diff(path, fragment)],
        "locations": [{"path": str(path)}],
    }
    return {
        "request": "session/request_permission",
        "params": {"sessionId": "$sessionId", "toolCall": tool_call, "options": ALLOW},
        "expect": {"outcome": {"outcome": "selected", "optionId": "allow"}},
    }


def update(**fields: Any) -> dict[str, Any]:
    return {"update": fields}


def claude_steps(path: Path) -> list[dict[str, Any]]:
    """Pending with no locations, then locations and the diff, the permission, a direct write,
    and `completed` without ever going `in_progress`."""
    call = "toolu_01"
    return [
        update(sessionUpdate="tool_call", toolCallId=call, title="Edit", kind="edit",
               status="pending", locations=[], content=[], rawInput={}),
        update(sessionUpdate="tool_call_update", toolCallId=call, title=f"Edit `{path}`",
               locations=[{"path": str(path)}], content=[diff(path, CLAUDE)]),
        permission(path, call, f"Edit `{path}`", CLAUDE),
        {"write_file": {"path": str(path), "replace": list(CLAUDE)}},
        update(sessionUpdate="tool_call_update", toolCallId=call, status="completed"),
    ]  # fmt: skip


def opencode_steps(path: Path) -> list[dict[str, Any]]:
    """Asks with a fragment diff, then writes the whole file through fs/write_text_file."""
    call = "call_oc1"
    return [
        update(sessionUpdate="tool_call", toolCallId=call, title="edit", kind="edit",
               status="pending", locations=[{"path": str(path)}], rawInput={"filePath": str(path)}),
        permission(path, call, "edit", OPENCODE),
        {"request": "fs/write_text_file",
         "params": {"sessionId": "$sessionId", "path": str(path),
                    "content": SHOP.replace(*OPENCODE)},
         "expect": {}},
        update(sessionUpdate="tool_call_update", toolCallId=call, status="completed",
               content=[diff(path, OPENCODE)]),
    ]  # fmt: skip


def copilot_steps(path: Path) -> list[dict[str, Any]]:
    """A one-line fragment (no newline), the permission, a direct write."""
    call = "copilot-edit-1"
    return [
        update(sessionUpdate="tool_call", toolCallId=call, title="Edit shop.py", kind="edit",
               status="pending", locations=[{"path": str(path)}], content=[diff(path, COPILOT)]),
        permission(path, call, "Edit shop.py", COPILOT),
        update(sessionUpdate="tool_call_update", toolCallId=call, status="in_progress"),
        {"write_file": {"path": str(path), "replace": list(COPILOT)}},
        update(sessionUpdate="tool_call_update", toolCallId=call, status="completed"),
    ]  # fmt: skip


def codex_steps(path: Path) -> list[dict[str, Any]]:
    """Full-access mode: no permission; the patch is applied to disk, the diff is the hunk with
    its context lines, sent after the write."""
    call = "call_apply_patch"
    return [
        update(sessionUpdate="tool_call", toolCallId=call, title="Edit shop.py", kind="edit",
               status="in_progress", locations=[{"path": str(path)}]),
        {"write_file": {"path": str(path), "replace": list(CODEX)}},
        update(sessionUpdate="tool_call_update", toolCallId=call, status="completed",
               content=[diff(path, CODEX)]),
    ]  # fmt: skip


AGENTS = {
    "claude": (claude_steps, CLAUDE, True),
    "opencode": (opencode_steps, OPENCODE, True),
    "copilot": (copilot_steps, COPILOT, True),
    "codex": (codex_steps, CODEX, False),
}


async def run_turn(editor: DiskEditor, workspace: Path, steps: list[Any], log: Path) -> None:
    script = {"protocol": 1, "on_prompt": steps}
    from tests.e2e.conftest import start

    await start(editor.client, workspace, scripted(script, log))
    result = await command(editor.client, "acpls.prompt", {"text": "make it pricier"})
    assert result["stopReason"] == "end_turn"
    assert not [m for m in agent_log(log) if "expect_failed" in m]


@pytest.mark.parametrize("agent", sorted(AGENTS))
async def test_fragment_diffs_preview_review_and_reject_all(
    server_env: dict[str, str], workspace: Path, tmp_path: Path, agent: str
):
    make_steps, fragment, asks = AGENTS[agent]
    shop = workspace / "shop.py"
    shop.write_bytes(SHOP.encode())
    agents_result = SHOP.replace(*fragment)
    async with disk_editor(server_env) as editor:
        await run_turn(editor, workspace, make_steps(shop), tmp_path / "agent.jsonl")
        assert shop.read_bytes().decode() == agents_result
        if asks:
            (request,) = editor.permission_requests
            assert not request.get("previewProblems")
            (change,) = request["preview"]["documentChanges"]
            assert change["textDocument"]["uri"] == shop.as_uri()
            assert apply_text_edits(SHOP, change["edits"]) == agents_result
        review = await command(editor.client, "acpls.review", {})
        (changed,) = review["files"]
        assert changed["path"] == str(shop) and changed["status"] == "modified"
        assert "note" not in changed and changed.get("sessionId")
        (hunk,) = changed["hunks"]
        assert hunk["oldText"] in SHOP and hunk["newText"] in agents_result
        after = await command(editor.client, "acpls.rejectAll", {})
        assert after == {"files": []}
        assert shop.read_bytes() == SHOP.encode()


async def test_disk_write_seen_before_completed_survives_a_stale_open_buffer(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    """Claude Code writes the file on disk and the watcher records it before the tool call goes
    `completed`; the open buffer (no unsaved changes) is reloaded by the editor only after the
    turn. The stale buffer at `completed` must not undo the recorded write: else the reload
    looks like the user's edit and the agent's change vanishes from the review."""
    shop = workspace / "shop.py"
    shop.write_bytes(SHOP.encode())
    agents_result = SHOP.replace(*CLAUDE)
    steps = claude_steps(shop)
    # The watcher reports the write before `completed` arrives (the order seen with the real
    # agent about half the time).
    steps.insert(-1, {"sleep": 1.5})
    async with disk_editor(server_env) as editor:
        editor.open(shop)
        await run_turn(editor, workspace, steps, tmp_path / "agent.jsonl")
        assert shop.read_bytes().decode() == agents_result
        editor.type_text(shop, agents_result)  # the editor reloads the file from disk
        review = await command(editor.client, "acpls.review", {})
        (changed,) = review["files"]
        assert changed["path"] == str(shop) and "note" not in changed, changed
        (hunk,) = changed["hunks"]
        assert (hunk["oldText"], hunk["newText"]) == CLAUDE, hunk
        assert await command(editor.client, "acpls.rejectAll", {}) == {"files": []}
        assert editor.buffers[shop.as_uri()] == SHOP
