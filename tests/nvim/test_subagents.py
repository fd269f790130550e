"""Sub-agents in the Neovim chat, with the real acpls and the scripted agent (v1 and v2): a
sub-agent's tool calls (Claude Code's `_meta` parentToolUseId, or parentToolCallId) are nested
under their parent's tool call, folded (collapsed) at first; follow stays with the main agent."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.nvim


def call(protocol: int, call_id: str, path: str, **extra: Any) -> dict[str, Any]:
    kind = "tool_call" if protocol == 1 else "tool_call_update"
    update = {
        "sessionUpdate": kind,
        "toolCallId": call_id,
        "title": f"Task {call_id}",
        "kind": "read",
        "status": "completed" if call_id.startswith("child") else "in_progress",
        "locations": [{"path": path, "line": 1}],
        **extra,
    }
    return {"update": update}


@pytest.mark.parametrize("protocol", [1, 2])
def test_subagent_calls_nested_and_folded(editor_factory, workspace, protocol):
    meta = {"claudeCode": {"parentToolUseId": "task-1"}}
    steps = [
        call(protocol, "task-1", str(workspace / "calc.py")),
        call(protocol, "child-1", str(workspace / "README.md"), _meta=meta),
        call(protocol, "child-2", str(workspace / "README.md"), parentToolCallId="task-1"),
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "done"},
            }
        },
    ]
    ed = editor_factory({"protocol": protocol, "on_prompt": steps})
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    ed.nvim.command("Acpls prompt delegate")
    ed.wait_turn_end()
    buf = ed.lua("return require('acpls.chat').list()[1].buf")
    lines = ed.lua("return T.lines(...)", buf)
    head = next(i for i, line in enumerate(lines) if "Task task-1" in line)
    assert lines[head + 2 : head + 5] == [
        "  ▸ sub-agent: 2 tool calls",
        "    ↳ ✓ read · Task child-1 · completed",
        "    ↳ ✓ read · Task child-2 · completed",
    ], lines
    # Collapsed: the nested lines are in a closed fold starting at the summary.
    win = ed.lua("return vim.fn.bufwinid(...)", buf)
    closed = ed.lua(
        "local w, l = ...; return vim.api.nvim_win_call(w, function() return vim.fn.foldclosed(l) end)",
        win,
        head + 4,
    )
    assert closed == head + 3
    # Follow went to the main agent's file, never to the sub-agent's.
    assert not ed.lua("return vim.fn.bufloaded(...) == 1", str(workspace / "README.md"))
