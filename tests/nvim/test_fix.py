"""`:Acpls fix`: a diagnostic of another source (here set the way nvim-lint sets them, not by a
language server) reaches acpls with the code action request, and the agent gets the diagnostic,
the code around it and the buffer; `:Acpls fix all` sends every diagnostic of the buffer."""

from __future__ import annotations

import pytest

from tests.agents import read_log

pytestmark = pytest.mark.nvim

SET_DIAGNOSTICS = """
local buf = vim.api.nvim_get_current_buf()
local ns = vim.api.nvim_create_namespace('fake-lint')
vim.diagnostic.set(ns, buf, {
  { lnum = 1, col = 11, end_lnum = 1, end_col = 12, severity = vim.diagnostic.severity.ERROR,
    source = 'mylint', code = 'E1', message = 'a - b subtracts' },
  { lnum = 0, col = 4, end_lnum = 0, end_col = 7, severity = vim.diagnostic.severity.WARN,
    source = 'mylint', code = 'W2', message = 'name add is vague' },
})
"""


def prompts(ed) -> list[list[dict]]:
    log = read_log(ed.agent_log)
    return [m["params"]["prompt"] for m in log if m.get("method") == "session/prompt"]


def wait_prompt(ed) -> list[list[dict]]:
    """The code action runs acpls.prompt through Neovim's own executeCommand: wait for the
    agent's answer in the chat it gets."""
    ed.wait(
        "local c = require('acpls.chat').list()[1];"
        "return c and table.concat(T.lines(c.buf), '\\n'):find('Hello') ~= nil",
        what="the agent's answer in a chat",
    )
    return prompts(ed)


def test_fix_sends_another_sources_diagnostic(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.lua(SET_DIAGNOSTICS)
    ed.nvim.command("call cursor(2, 5)")
    ed.nvim.command("Acpls fix")
    ((text, around, whole),) = wait_prompt(ed)
    assert text == {
        "type": "text",
        "text": "Fix this diagnostic in calc.py:\n\n"
        "- line 2, col 12 to line 2, col 13 (error, mylint E1): a - b subtracts\n\n"
        "The code around it and the whole file are attached.",
    }
    uri = (ed.workspace / "calc.py").as_uri()
    buffer = (ed.workspace / "calc.py").read_text(encoding="utf-8")
    assert around == {"type": "resource", "resource": {"uri": f"{uri}#L1-6", "text": buffer}}
    assert whole == {"type": "resource", "resource": {"uri": uri, "text": buffer}}
    assert ed.errors() == []


def test_fix_all_sends_every_diagnostic_of_the_buffer(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.lua(SET_DIAGNOSTICS)
    ed.nvim.command("Acpls fix all")
    ((text, whole),) = wait_prompt(ed)
    assert (
        "- line 2, col 12 to line 2, col 13 (error, mylint E1): a - b subtracts\n" in text["text"]
    )
    assert (
        "- line 1, col 5 to line 1, col 8 (warning, mylint W2): name add is vague\n" in text["text"]
    )
    assert whole["resource"]["uri"] == (ed.workspace / "calc.py").as_uri()


def test_fix_without_a_diagnostic_says_so(editor_factory):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls fix")
    messages = ed.nvim.exec_lua("return vim.api.nvim_exec2('messages', {output = true}).output")
    assert "acpls: no diagnostic on this line" in messages
