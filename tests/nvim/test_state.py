"""The session's state (ACP v2 `state_update`) in the Neovim chat header: running, needs you
(`requires_action`), idle; with the real acpls and the scripted agent."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.nvim


def test_state_in_the_chat_header(editor_factory):
    steps = [
        {"update": {"sessionUpdate": "state_update", "state": "requires_action"}},
        {"sleep": 1.5},
        {"update": {"sessionUpdate": "state_update", "state": "running"}},
    ]
    ed = editor_factory({"protocol": 2, "on_prompt": steps})
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt go")
    header = "local c = require('acpls.chat').list()[1]; local h = c and T.lines(c.buf)[2] or ''; "
    ed.wait(header + "return h:find('needs you') ~= nil", what="needs you in the header")
    ed.wait_turn_end()
    ed.wait(header + "return h:find('idle') ~= nil", what="idle in the header")
