"""Context in the Neovim chat prompt, in real Neovim: the nvim-cmp and blink.cmp sources (the
engines cannot be installed from PyPI or npm, so each is a minimal stub of the API the source
uses: nvim-cmp's register_source / setup.buffer and the source methods it calls, blink.cmp's
provider methods), @symbol from another language server's workspace/symbol, @terminal with an agent
terminal's output, :Acpls paste of a clipboard image, and "copy as context" of a tool call."""

from __future__ import annotations

import os
import stat

import pytest

from tests.agents import read_log

pytestmark = pytest.mark.nvim

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0500f0004850180848a6c4a0000000049454e44ae426082"
)

IMAGES = {
    "protocol": 1,
    "on_initialize": {
        "protocolVersion": 1,
        "agentCapabilities": {
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True}
        },
    },
}


def open_prompt(ed) -> int:
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    ed.wait("local c = require('acpls.chat').list()[1]; return c and c.prompt_buf")
    ed.wait("return #vim.lsp.get_clients({name = 'acpls'}) > 0")
    return ed.lua("return require('acpls.chat').list()[1].prompt_buf")


def prompts(ed) -> list[list[dict]]:
    return [
        m["params"]["prompt"] for m in read_log(ed.agent_log) if m.get("method") == "session/prompt"
    ]


CMP_STUB = """
_G.cmp_stub = { sources = {}, buffers = {} }
package.loaded.cmp = {
  register_source = function(name, source) _G.cmp_stub.sources[name] = source end,
  setup = { buffer = function(cfg)
    _G.cmp_stub.buffers[vim.api.nvim_get_current_buf()] = cfg
  end },
}
"""


def test_nvim_cmp_source(editor_factory):
    ed = editor_factory("v1_basic")
    ed.lua(CMP_STUB)
    buf = open_prompt(ed)
    result = ed.lua(
        """
        local buf = ...
        local src = _G.cmp_stub.sources.acpls
        local cfg = _G.cmp_stub.buffers[buf]
        vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, {'see @calc'})
        local got
        src:complete({ context = { cursor_before_line = 'see @calc', cursor = { row = 1, col = 10 } } },
          function(r) got = r end)
        local available = src:is_available()
        vim.cmd('wincmd p')
        local elsewhere = src:is_available()
        return { cfg = cfg, triggers = src:get_trigger_characters(), available = available,
                 elsewhere = elsewhere, got = got }
        """,
        buf,
    )
    assert result["cfg"] == {"sources": [{"name": "acpls"}]}
    assert result["triggers"] == ["@", "/"]
    assert result["available"] is True and result["elsewhere"] is False
    first = result["got"]["items"][0]
    assert first["label"] == "@file:calc.py"
    assert first["textEdit"] == {
        "newText": "@file:calc.py",
        "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}},
    }
    assert result["got"]["isIncomplete"] is True
    assert ed.errors() == []


def test_blink_cmp_source(editor_factory):
    ed = editor_factory("v1_basic")
    buf = open_prompt(ed)
    result = ed.lua(
        """
        local buf = ...
        local src = require('acpls.blink').new({})
        vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, {'fix @diag'})
        local got
        local cancel = src:get_completions({ line = 'fix @diag', cursor = { 1, 9 }, bufnr = buf },
          function(r) got = r end)
        local enabled = src:enabled()
        vim.cmd('wincmd p')
        return { enabled = enabled, elsewhere = src:enabled(), got = got,
                 cancel = type(cancel) }
        """,
        buf,
    )
    assert result["enabled"] is True and result["elsewhere"] is False
    assert result["cancel"] == "function"
    labels = [i["label"] for i in result["got"]["items"]]
    assert labels[0] == "@diagnostics"
    assert result["got"]["items"][0]["textEdit"]["range"]["start"] == {"line": 0, "character": 4}
    assert ed.errors() == []


FAKE_SYMBOL_SERVER = """
local uri = ...
vim.lsp.start({
  name = 'fake-symbols',
  root_dir = vim.fn.getcwd(),
  cmd = function(dispatchers)
    local closing = false
    return {
      request = function(method, params, callback)
        if method == 'initialize' then
          callback(nil, { capabilities = { workspaceSymbolProvider = true } })
        elseif method == 'workspace/symbol' then
          local out = {}
          if ('mul'):find(params.query, 1, true) then
            out = { { name = 'mul', kind = 12, location = { uri = uri,
              range = { start = { line = 4, character = 0 }, ['end'] = { line = 6, character = 0 } } } } }
          end
          callback(nil, out)
        elseif method == 'shutdown' then
          callback(nil, nil)
        end
        return true, 1
      end,
      notify = function() end,
      is_closing = function() return closing end,
      terminate = function() closing = true end,
    }
  end,
})
"""


def test_symbol_mention_from_another_language_server(editor_factory):
    ed = editor_factory("v1_basic")
    buf = open_prompt(ed)
    calc = ed.workspace / "calc.py"
    ed.lua("vim.cmd('wincmd p')")
    ed.lua(FAKE_SYMBOL_SERVER, calc.as_uri())
    ed.wait("return #vim.lsp.get_clients({name = 'fake-symbols'}) > 0")
    words = ed.lua(
        """
        local buf = ...
        vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
        local out = {}
        for _, i in ipairs(require('acpls.chat').omnifunc(0, '@mu')) do table.insert(out, i.word) end
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, {'why @symbol:mul'})
        require('acpls.chat').current():send_input()
        return out
        """,
        buf,
    )
    assert "@symbol:mul" in words
    ed.wait_turn_end()
    lines = calc.read_text(encoding="utf-8").splitlines(keepends=True)
    assert prompts(ed)[0][1] == {
        "type": "resource",
        "resource": {"uri": f"{calc.as_uri()}#L5-6", "text": "".join(lines[4:6])},
    }
    assert ed.errors() == []


def test_terminal_mention_and_copy_as_context(editor_factory):
    ed = editor_factory("v1_terminal")
    buf = open_prompt(ed)
    ed.nvim.command("Acpls prompt run it")
    ed.wait_turn_end()
    words = ed.lua(
        """
        local buf = ...
        vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
        local out = {}
        for _, i in ipairs(require('acpls.chat').omnifunc(0, '@term')) do table.insert(out, i.word) end
        return out
        """,
        buf,
    )
    assert words == ["@terminal:term_1"]
    # Copy the tool call (the terminal's command) into the prompt as context.
    ed.lua(
        """
        local c = require('acpls.chat').list()[1]
        vim.api.nvim_set_current_win(vim.fn.bufwinid(c.buf))
        vim.fn.search('printf')
        vim.cmd('normal \\\\y')
        """
    )
    text = ed.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)
    assert text[0] == "Context (tool call, copied from the chat):"
    assert text[1] == "```" and any("printf" in line for line in text[2:])
    ed.lua(
        """
        local buf = ...
        vim.api.nvim_buf_set_lines(buf, -1, -1, false, {'what did @terminal:term_1 print?'})
        require('acpls.chat').current():send_input()
        """,
        buf,
    )
    ed.wait_turn_end(2)
    second = prompts(ed)[1]
    assert second[0]["text"].startswith("Context (tool call, copied from the chat):\n```\n")
    assert second[0]["text"].endswith("what did @terminal:term_1 print?")
    assert second[1]["type"] == "text"
    assert "```\n✓ ok café\n```" in second[1]["text"]  # colours taken out
    assert ed.errors() == []


def test_paste_attaches_the_clipboard_image(editor_factory, tmp_path):
    ed = editor_factory(IMAGES)
    open_prompt(ed)
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    png = tmp_path / "clip.png"
    png.write_bytes(PNG)
    xclip = bin_dir / "xclip"
    xclip.write_text(f"#!/bin/sh\nexec cat {png}\n", encoding="utf-8")
    xclip.chmod(xclip.stat().st_mode | stat.S_IEXEC)
    ed.lua("vim.env.WAYLAND_DISPLAY = nil; vim.env.PATH = ... .. ':' .. vim.env.PATH", str(bin_dir))
    ed.nvim.command("Acpls paste")
    bar = ed.lua(
        "return vim.wo[vim.fn.bufwinid(require('acpls.chat').list()[1].prompt_buf)].winbar"
    )
    assert "clipboard.png" in bar
    ed.nvim.command("Acpls prompt what is this?")
    ed.wait_turn_end()
    import base64

    (prompt,) = prompts(ed)
    image = prompt[1]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]) == PNG
    # An empty clipboard says so, and nothing is attached.
    xclip.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    ed.nvim.command("Acpls paste")
    assert ed.lua("return #(require('acpls.chat').list()[1].images or {})") == 0
    notes = ed.lua("return vim.tbl_map(function(n) return n.msg end, T.notes)")
    assert "acpls: the clipboard holds no image (asked xclip)" in notes
    assert ed.errors() == []
    assert os.path.exists(png)


def test_session_handed_on_after_the_agent_restarts(editor_factory):
    """@session names a session no longer open (the agent restarted, as when switching agents):
    completion offers it and the agent receives its transcript."""
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    # Two sessions before the restart and one after: the scripted agent numbers its sessions from 1
    # again, so the second is the one no longer open.
    ed.nvim.command("Acpls prompt warm up")
    ed.wait_turn_end()
    ed.nvim.command("Acpls chat new")
    ed.nvim.input("start the parser rewrite<C-s>")
    ed.wait_turn_end(2)
    old = ed.lua("return require('acpls.chat').list()[2].sessionId")
    ed.nvim.command("Acpls restart")
    for _ in range(200):  # the restarted agent's initialize
        if len([m for m in read_log(ed.agent_log) if m.get("method") == "initialize"]) == 2:
            break
        ed.lua("vim.wait(50)")
    ed.nvim.command("Acpls chat new")
    ed.nvim.input("hello<C-s>")
    ed.wait_turn_end(3)
    chat = ed.lua("return require('acpls.chat').list()[3]")
    assert chat["sessionId"] != old
    words = ed.lua(
        """
        local buf, old = ...
        vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
        local out = {}
        for _, i in ipairs(require('acpls.chat').omnifunc(0, '@session')) do
          table.insert(out, {i.word, i.info or ''})
        end
        vim.api.nvim_buf_set_lines(buf, 0, -1, false, {'carry on from @session:' .. old})
        require('acpls.chat').current():send_input()
        return out
        """,
        chat["prompt_buf"],
        old,
    )
    stored = [w for w in words if w[0] == f"@session:{old}"]
    assert stored and stored[0][1].startswith(f"{old} ("), words
    ed.wait_turn_end(4)
    transcript = prompts(ed)[-1][1]
    assert transcript["type"] == "resource"
    assert "**You:** start the parser rewrite" in transcript["resource"]["text"]
    assert ed.errors() == []
