"""Checkpoints in real Neovim: `:Acpls checkpoints` (picker, diff preview, restore, unsaved buffers,
continue the conversation) and the chat's "restore to here" mapping, with the real acpls."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.nvim

ORIGINAL_CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
ORIGINAL_README = "# sample\n\nA sample project.\nThird line.\n"


def script(root: str) -> dict:
    return {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "fs/write_text_file",
                "params": {
                    "sessionId": "$sessionId",
                    "path": f"{root}/calc.py",
                    "content": "def add(a, b):\n    return a + b\n",
                },
            },
            {"disk": {"op": "write", "path": f"{root}/README.md", "text": "# changed on disk\n"}},
            {"disk": {"op": "write", "path": f"{root}/new.txt", "text": "made by the agent\n"}},
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "done"},
                }
            },
        ],
    }


def answer(ed, kind: str, label: str) -> None:
    picker = ed.wait_select(kind)
    ed.lua("T.answer_label(...)", picker["index"], label)


def test_pick_preview_restore_unsaved_and_continue(editor_factory, workspace):
    ed = editor_factory(script(str(workspace)))
    ed.nvim.command(f"edit {workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt Fix add")
    ed.wait_turn_end()
    assert (workspace / "new.txt").exists()
    # The agent's write reached the buffer through workspace/applyEdit (unsaved).
    calc_buf = ed.lua("return vim.fn.bufnr(...)", str(workspace / "calc.py"))
    assert ed.lua("return T.lines(...)", calc_buf)[1] == "    return a + b"

    ed.nvim.command("Acpls checkpoints")
    picker = ed.wait_select("acpls.checkpoint")
    assert picker["labels"][0].startswith("turn 1 · ")
    assert "Fix add" in picker["labels"][0] and "3 files" in picker["labels"][0]
    ed.lua("T.answer(...)", picker["index"], 1)

    # The preview: a diff buffer naming every file the restore changes.
    confirm = ed.wait_select("acpls.checkpoint.confirm")
    diff = ed.lua("return {vim.bo.filetype, T.lines(0)}")
    assert diff[0] == "diff"
    text = "\n".join(diff[1])
    assert "README.md (modified)" in text and "new.txt (deleted)" in text
    assert "-# changed on disk" in text and "+# sample" in text
    ed.lua("T.answer_label(...)", confirm["index"], "Restore")

    # calc.py holds the agent's unsaved text: restored only when the user says so.
    answer(ed, "acpls.checkpoint.unsaved", "Restore them too")
    answer(ed, "acpls.checkpoint.continue", "Continue the conversation from here")

    ed.wait("return #require('acpls.chat').list() == 2", what="a chat for the continued session")
    chats = ed.lua("return require('acpls.chat').list()")
    assert chats[1]["sessionId"] != chats[0]["sessionId"]
    assert ed.lua("return T.lines(...)", chats[1]["prompt_buf"]) == ["Fix add"]

    assert (workspace / "README.md").read_text() == ORIGINAL_README
    assert not (workspace / "new.txt").exists()
    assert "\n".join(ed.lua("return T.lines(...)", calc_buf)) + "\n" == ORIGINAL_CALC
    # Undo works: the agent's text comes back in the buffer.
    ed.lua("vim.api.nvim_buf_call(..., function() vim.cmd('silent undo') end)", calc_buf)
    assert ed.lua("return T.lines(...)", calc_buf)[1] == "    return a + b"
    assert ed.errors() == []


def test_restore_to_here_from_a_message_in_the_chat(editor_factory, workspace):
    ed = editor_factory(script(str(workspace)))
    ed.nvim.command("Acpls prompt Fix add")
    ed.wait_turn_end()
    assert (workspace / "README.md").read_text() == "# changed on disk\n"
    chat = ed.lua("return require('acpls.chat').list()[1]")
    win = ed.lua("return vim.fn.win_findbuf(...)[1]", chat["buf"])
    row = ed.lua(
        "for i, l in ipairs(T.lines(...)) do if l:find('Fix add', 1, true) then return i end end",
        chat["buf"],
    )
    ed.lua("vim.api.nvim_set_current_win(...)", win)
    ed.lua("vim.api.nvim_win_set_cursor(0, {..., 0})", row)
    ed.nvim.input("\\r")  # <localleader>r: the default leader of a --clean Neovim is a backslash
    answer(ed, "acpls.checkpoint.confirm", "Restore")
    answer(ed, "acpls.checkpoint.unsaved", "Keep my unsaved changes")
    answer(ed, "acpls.checkpoint.continue", "Keep the current conversation")
    ed.wait(
        "for _, n in ipairs(T.notes) do if n.msg:find('restored', 1, true) then return n.msg end end",
        what="the restore report",
    )
    assert (workspace / "README.md").read_text() == ORIGINAL_README
    assert not (workspace / "new.txt").exists()
    # calc.py was kept: the agent's text is still in its buffer.
    calc_buf = ed.lua("return vim.fn.bufnr(...)", str(workspace / "calc.py"))
    assert ed.lua("return T.lines(...)", calc_buf)[1] == "    return a + b"
    assert ed.errors() == []
