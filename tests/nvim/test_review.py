"""Review: the agent's changes (`acpls/changes`) as signs and quickfix entries, and the hunk the
keep/reject mappings act on."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.nvim


def changes(path: str) -> dict:
    uri = "file://" + path
    return {
        "files": [
            {
                "uri": uri,
                "path": path,
                "sessionId": "s1",
                "status": "modified",
                "added": 3,
                "removed": 1,
                "hunks": [
                    {
                        "hunkId": "h1",
                        "range": {
                            "start": {"line": 1, "character": 0},
                            "end": {"line": 2, "character": 0},
                        },
                        "oldText": "    return a - b\n",
                        "newText": "    return a + b\n",
                        "added": 1,
                        "removed": 1,
                    },
                    {
                        "hunkId": "h2",
                        "range": {
                            "start": {"line": 3, "character": 0},
                            "end": {"line": 5, "character": 0},
                        },
                        "oldText": "",
                        "newText": "# new\n# lines\n",
                        "added": 2,
                        "removed": 0,
                    },
                ],
            }
        ]
    }


def test_changes_become_signs_quickfix_and_hunks_under_the_cursor(plain_nvim, workspace):
    nvim = plain_nvim
    path = str(workspace / "calc.py")
    nvim.command(f"edit {path}")
    nvim.exec_lua("require('acpls.review').on_changes(..., {client_id = 7})", changes(path))
    signs = nvim.exec_lua(
        "local ns = require('acpls.review').ns;"
        "return vim.tbl_map(function(m) return {m[2], vim.trim(m[4].sign_text),"
        " m[4].sign_hl_group} end, vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {details = true}))"
    )
    assert sorted(signs) == [
        [1, "~", "AcplsHunkChange"],
        [3, "+", "AcplsHunkAdd"],
        [4, "+", "AcplsHunkAdd"],
    ]
    # The cursor on line 5 (row 4) is in hunk h2; on line 1 in none.
    nvim.command("5")
    assert nvim.exec_lua("return require('acpls.review').hunk_at_cursor()") == {
        "hunkId": "h2",
        "client_id": 7,
    }
    nvim.command("1")
    assert nvim.exec_lua("return require('acpls.review').hunk_at_cursor()") is None

    # :Acpls review's list: one entry per hunk; the entry under the cursor names its hunk.
    nvim.exec_lua("require('acpls.review').quickfix(true)")
    qf = nvim.exec_lua("return vim.fn.getqflist({title = 0, items = 0})")
    assert qf["title"] == "acpls: agent changes"
    assert [(i["lnum"], i["text"]) for i in qf["items"]] == [
        (2, "[modified +1 -1]     return a + b"),
        (4, "[modified +2 -0] # new"),
    ]
    assert nvim.exec_lua("return vim.bo.filetype") == "qf"
    nvim.command("2")
    assert nvim.exec_lua("return require('acpls.review').hunk_at_cursor()") == {
        "hunkId": "h2",
        "client_id": 7,
    }
    # A new acpls/changes replaces our list (not a new one) and clears the signs of kept hunks.
    nvim.exec_lua("require('acpls.review').on_changes({files = {}}, {client_id = 7})")
    assert nvim.exec_lua("return vim.fn.getqflist({title = 0, size = 0})") == {
        "title": "acpls: agent changes",
        "size": 0,
    }
    assert (
        nvim.exec_lua(
            "local b = vim.fn.bufnr(...);"
            "return #vim.api.nvim_buf_get_extmarks(b, require('acpls.review').ns, 0, -1, {})",
            path,
        )
        == 0
    )


def test_signs_appear_when_the_file_is_opened_later(plain_nvim, workspace):
    nvim = plain_nvim
    path = str(workspace / "calc.py")
    nvim.exec_lua("require('acpls.review').on_changes(..., {client_id = 7})", changes(path))
    nvim.command(f"edit {path}")
    count = nvim.exec_lua(
        "return #vim.api.nvim_buf_get_extmarks(0, require('acpls.review').ns, 0, -1, {})"
    )
    assert count == 3


def test_agent_write_shows_in_review_and_reject_restores_it(editor_factory):
    ed = editor_factory("v1_fs")
    hello = ed.workspace / "hello.txt"
    ed.nvim.command(f"edit {hello}")
    ed.nvim.command("Acpls prompt write")
    ed.wait_turn_end()
    # The write went through the buffer.
    assert ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["hello from the agent"]
    ed.wait("return #require('acpls.review').items() == 1", what="acpls/changes")
    signs = ed.lua(
        "return #vim.api.nvim_buf_get_extmarks(0, require('acpls.review').ns, 0, -1, {})"
    )
    assert signs == 1
    code_win = ed.nvim.current.window.handle
    ed.nvim.command("Acpls review")
    ed.wait("return vim.bo.filetype == 'qf'", what="the quickfix window")
    items = ed.lua("return vim.fn.getqflist()")
    assert len(items) == 1 and items[0]["lnum"] == 1
    # Reject from the quickfix entry: the buffer gets its text back, the list empties.
    ed.nvim.command("Acpls reject")
    ed.wait("return #require('acpls.review').items() == 0", what="the hunk rejected")
    lines = ed.lua(
        "return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(...), 0, -1, false)", code_win
    )
    assert lines == ["hello"]
    assert ed.lua("return #vim.fn.getqflist()") == 0
    # What the agent proposed stays visible.
    ed.nvim.command("Acpls rejected")
    ed.wait("return vim.api.nvim_buf_get_name(0) == 'acpls://rejected'", what="the rejected list")
    rejected = ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert f"## {ed.workspace / 'hello.txt'}" in rejected
    assert "-hello" in rejected
    assert "+hello from the agent" in rejected
    assert ed.errors() == []


def test_keep_hunk_under_the_cursor(editor_factory):
    ed = editor_factory("v1_fs")
    ed.nvim.command(f"edit {ed.workspace / 'hello.txt'}")
    ed.nvim.command("Acpls prompt write")
    ed.wait_turn_end()
    ed.wait("return #require('acpls.review').items() == 1", what="acpls/changes")
    ed.nvim.command("nmap <buffer> <F6> <Plug>(acpls-keep-hunk)")
    ed.nvim.input("gg<F6>")
    ed.wait("return #require('acpls.review').items() == 0", what="the hunk kept")
    assert ed.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["hello from the agent"]
    signs = ed.lua(
        "return #vim.api.nvim_buf_get_extmarks(0, require('acpls.review').ns, 0, -1, {})"
    )
    assert signs == 0


def test_file_written_by_the_agent_reloads_in_its_buffer(editor_factory):
    ed = editor_factory("v1_basic")
    hello = ed.workspace / "hello.txt"
    ed.nvim.command(f"edit {hello}")
    ed.nvim.command("Acpls prompt hi")
    ed.wait_turn_end()
    # Written behind Neovim's back (as an agent that writes files itself does) during a turn.
    hello.write_text("changed on disk\n")
    ed.nvim.command("Acpls prompt again")
    ed.wait_turn_end(2)
    lines = ed.lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", str(hello))
    assert lines == ["changed on disk"]
