"""Chat: streamed agent text, thoughts, plan and tool-call status in the chat buffer."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.nvim


def test_chat_shows_streamed_text_plan_and_tool_status(editor_factory):
    ed = editor_factory("v2_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt Say hello")
    ed.wait_turn_end()
    lines = ed.lua(
        "local c = require('acpls.chat').list()[1]; return T.lines(c.buf)"
    )
    text = "\n".join(lines)
    print(text)
    assert "Hello from the scripted agent." in text
    assert ed.errors() == []
