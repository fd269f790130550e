"""The context meter in Neovim: the chat header and require('acpls').statusline() show usage, and
a warning comes once as the context nears its limit."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.nvim


def usage_script() -> dict:
    def step(used: int) -> dict:
        cost = {"amount": 0.25, "currency": "USD"}
        return {
            "update": {"sessionUpdate": "usage_update", "used": used, "size": 1000, "cost": cost}
        }

    return {"protocol": 1, "on_prompt": [step(300), step(850), step(870)]}


def test_meter_in_header_and_statusline_and_one_warning(editor_factory):
    ed = editor_factory(usage_script())
    ed.nvim.command("Acpls prompt go")
    ed.wait_turn_end()
    header = ed.wait(
        "local l = T.lines(require('acpls.chat').list()[1].buf)"
        " for _, line in ipairs(l) do if line:find('context 870', 1, true) then return line end end",
        what="the meter in the chat header",
    )
    assert "context 870/1000 (87%) · 0.25 USD" in header
    ed.lua("vim.api.nvim_set_current_buf(require('acpls.chat').list()[1].buf)")
    assert "ctx 87%" in ed.lua("return require('acpls').statusline()")
    warnings = ed.lua(
        "return vim.tbl_map(function(n) return n.msg end, vim.tbl_filter(function(n)"
        " return n.level == vim.log.levels.WARN end, T.notes))"
    )
    # Updates may be coalesced on the way (the newest usage wins): one warning either way.
    assert len(warnings) == 1 and "context is nearly full (context 8" in warnings[0], warnings


def test_turn_tokens_in_the_turn_end_line(editor_factory):
    counts = {"totalTokens": 1234, "inputTokens": 1000, "outputTokens": 234}
    ed = editor_factory(
        {"protocol": 1, "on_prompt": [{"respond": {"stopReason": "end_turn", "usage": counts}}]}
    )
    ed.nvim.command("Acpls prompt go")
    ed.wait_turn_end()
    chat = "\n".join(ed.lua("return T.lines(require('acpls.chat').list()[1].buf)"))
    assert "_turn ended: end_turn · 1,234 tokens (1,000 in, 234 out)_" in chat
