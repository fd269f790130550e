"""@-mentions in the Neovim chat prompt: omnifunc completes workspace files from the server's
acpls.mentionCandidates, and a sent prompt's @file / @diagnostics tokens reach the agent as the
exact ACP content blocks (the scripted agent takes embedded context)."""

from __future__ import annotations

import pytest

from tests.agents import read_log

pytestmark = pytest.mark.nvim


def open_prompt(ed) -> int:
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    ed.wait("local c = require('acpls.chat').list()[1]; return c and c.prompt_buf")
    return ed.lua("return require('acpls.chat').list()[1].prompt_buf")


def test_omnifunc_completes_workspace_files(editor_factory):
    ed = editor_factory("v1_basic")
    (ed.workspace / "notes_calculus.md").write_text("x\n", encoding="utf-8")
    buf = open_prompt(ed)
    ed.wait("return require('acpls.chat').list()[1] and #vim.lsp.get_clients({name = 'acpls'}) > 0")
    words = ed.lua(
        """
        local buf = ...
        local win = vim.fn.bufwinid(buf)
        vim.api.nvim_set_current_win(win)
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, {'see @calc'})
        vim.api.nvim_win_set_cursor(win, {1, 9})
        local chat = require('acpls.chat')
        local start = chat.omnifunc(1, '')
        local words = {}
        for _, item in ipairs(chat.omnifunc(0, '@calc')) do table.insert(words, item.word) end
        return {start, words}
        """,
        buf,
    )
    start, items = words
    assert start == 4
    assert items[:2] == ["@file:calc.py", "@file:notes_calculus.md"]
    assert ed.errors() == []


def test_sent_mentions_reach_the_agent(editor_factory):
    ed = editor_factory("v1_basic")
    buf = open_prompt(ed)
    calc = ed.workspace / "calc.py"
    ed.lua(
        """
        local buf, path = ...
        vim.diagnostic.set(vim.api.nvim_create_namespace('t'), vim.fn.bufnr(path), {
          { lnum = 1, col = 4, end_col = 10, message = 'subtracts', source = 'mylint',
            severity = vim.diagnostic.severity.ERROR } })
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, {'explain @file:calc.py#L1-2 @diagnostics'})
        require('acpls.chat').current():send_input()
        """,
        buf,
        str(calc),
    )
    ed.wait_turn_end()
    (prompt,) = [
        m["params"]["prompt"] for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"
    ]
    lines = calc.read_text(encoding="utf-8").splitlines(keepends=True)
    assert prompt == [
        {"type": "text", "text": "explain @file:calc.py#L1-2 @diagnostics"},
        {
            "type": "resource",
            "resource": {"uri": f"{calc.as_uri()}#L1-2", "text": "".join(lines[:2])},
        },
        {
            "type": "text",
            "text": "Diagnostics the editor reports:\n\ncalc.py:\n"
            "- line 2, col 5 to line 2, col 11 (error, mylint): subtracts",
        },
    ]
    assert ed.errors() == []
