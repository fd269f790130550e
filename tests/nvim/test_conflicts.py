"""An agent writes to disk a file Neovim holds with unsaved changes (real Neovim, real acpls, a
scripted agent): the buffer keeps the user's text, and vim.ui.select asks keep mine / show the
diff / take the agent's (`acpls/resolveConflict`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.nvim

SHOP = "def total(prices):\n    return sum(prices)\n"
MINE = "    return sum(prices)  # mine, not saved"
AGENT = "def total(prices):\n    return round(sum(prices), 2)\n"
QUESTION = (
    "for _, s in ipairs(T.open_selects()) do if s.kind == 'acpls_conflict' then return s end end"
)


def script(path: Path) -> dict[str, Any]:
    return {
        "protocol": 1,
        "on_prompt": [
            [
                {"update": {"sessionUpdate": "tool_call", "toolCallId": "w1",
                            "title": "Edit shop.py", "kind": "edit", "status": "in_progress"}},
                {"disk": {"op": "write", "path": str(path), "text": AGENT}},
                {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "w1",
                            "status": "completed"}},
            ]
        ],
    }  # fmt: skip


@pytest.mark.parametrize("answer", ["Keep mine", "Take the agent's"])
def test_agent_disk_write_over_unsaved_text_asks(editor_factory, workspace: Path, answer: str):
    shop = workspace / "shop.py"
    shop.write_text(SHOP, encoding="utf-8")
    ed = editor_factory(script(shop))
    ed.nvim.command(f"edit {shop}")
    ed.lua("vim.api.nvim_buf_set_lines(0, 1, 2, false, {...})", MINE)
    buf = ed.lua("return vim.api.nvim_get_current_buf()")
    ed.nvim.command("Acpls prompt round it")
    ed.wait_turn_end()
    question = ed.wait(QUESTION, what="the conflict question")
    assert question["labels"] == ["Keep mine", "Show the diff", "Take the agent's"]
    assert str(shop) in question["prompt"]
    # While asked, nothing has replaced the user's text.
    lines = "return vim.api.nvim_buf_get_lines(..., 0, -1, false)"
    assert ed.lua(lines, buf) == ["def total(prices):", MINE]
    assert ed.lua("return vim.bo[...].modified", buf) is True
    # The diff first: both texts side by side in diff mode; then the question again.
    ed.lua("T.answer_label(..., 'Show the diff')", question["index"])
    again = ed.wait(QUESTION, what="the question after the diff")
    diffed = ed.lua(
        "local out = {} for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do"
        " if vim.wo[w].diff then table.insert(out, vim.api.nvim_buf_get_lines("
        "vim.api.nvim_win_get_buf(w), 0, -1, false)) end end return out"
    )
    assert diffed == [["def total(prices):", MINE], AGENT.splitlines()]
    ed.nvim.command("tabclose")
    ed.lua("T.answer_label(...)", again["index"], answer)
    if answer == "Keep mine":
        # A round trip to acpls after the answer: it has done whatever it was going to do.
        ed.nvim.command("Acpls review")
        ed.wait("return vim.bo.filetype == 'qf'", what="the review list")
        assert ed.lua(lines, buf) == ["def total(prices):", MINE]
    else:
        ed.wait(f"return vim.api.nvim_buf_get_lines({buf}, 1, 2, false)[1] ~= {MINE!r}")
        assert ed.lua(lines, buf) == AGENT.splitlines()
    assert shop.read_text(encoding="utf-8") == AGENT  # acpls never wrote the disk
    assert ed.errors() == []


@pytest.mark.parametrize("answer", ["Keep mine", "Take the original"])
def test_reject_of_a_change_the_user_edited_asks_first(editor_factory, answer: str):
    """The agent writes hello.txt through the buffer; the user edits that line; `:Acpls
    rejectall` writes nothing until the user chose (acpls/resolveConflict kind reject)."""
    ed = editor_factory("v1_fs")
    hello = ed.workspace / "hello.txt"
    ed.nvim.command(f"edit {hello}")
    ed.nvim.command("Acpls prompt write")
    ed.wait_turn_end()
    ed.wait("return #require('acpls.review').items() == 1", what="acpls/changes")
    ed.lua("vim.api.nvim_buf_set_lines(0, 0, 1, false, {'hello from the agent, and me'})")
    ed.nvim.command("Acpls rejectall")
    question = ed.wait(QUESTION, what="the conflict question")
    assert question["labels"] == ["Keep mine", "Show the diff", "Take the original"]
    assert str(hello) in question["prompt"]
    lines = "return vim.api.nvim_buf_get_lines(0, 0, -1, false)"
    assert ed.lua(lines) == ["hello from the agent, and me"]  # nothing written while asked
    ed.lua("T.answer_label(...)", question["index"], answer)
    ed.wait("return #require('acpls.review').items() == 0", what="the review after the answer")
    if answer == "Keep mine":
        assert ed.lua(lines) == ["hello from the agent, and me"]
    else:
        ed.wait("return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == 'hello'")
    assert hello.read_text(encoding="utf-8") == "hello\n"  # the disk was never written
    assert ed.errors() == []
