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


def test_attach_sends_an_image_or_says_why_not(editor_factory):
    """The scripted v1 agent takes no images: the prompt fails and the chat says why; nothing
    reaches the agent."""
    ed = editor_factory("v1_basic")
    open_prompt(ed)
    shot = ed.workspace / "shot.png"
    shot.write_bytes(bytes.fromhex("89504e470d0a1a0a"))
    ed.nvim.command(f"Acpls attach {shot}")
    ed.nvim.command("Acpls prompt what is wrong here?")
    ed.wait_turn_end()
    text = "\n".join(ed.lua("return T.lines(require('acpls.chat').list()[1].buf)"))
    assert "does not accept images (its promptCapabilities.image is off)" in text
    assert [m for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"] == []


def test_attach_sends_the_image_to_an_agent_that_takes_images(editor_factory):
    import base64

    prompt_caps = {"image": True, "audio": False, "embeddedContext": True}
    script = {
        "protocol": 1,
        "on_initialize": {
            "protocolVersion": 1,
            "agentCapabilities": {"promptCapabilities": prompt_caps},
        },
    }
    ed = editor_factory(script)
    open_prompt(ed)
    shot = ed.workspace / "shot.png"
    shot.write_bytes(bytes.fromhex("89504e470d0a1a0a"))
    ed.nvim.command(f"Acpls attach {shot}")
    bar = ed.lua(
        "return vim.wo[vim.fn.bufwinid(require('acpls.chat').list()[1].prompt_buf)].winbar"
    )
    assert "images: shot.png" in bar
    ed.nvim.command("Acpls prompt what is wrong here?")
    ed.wait_turn_end()
    (prompt,) = [
        m["params"]["prompt"] for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"
    ]
    assert prompt == [
        {"type": "text", "text": "what is wrong here?"},
        {
            "type": "image",
            "data": base64.b64encode(shot.read_bytes()).decode(),
            "mimeType": "image/png",
            "uri": shot.as_uri(),
        },
    ]
