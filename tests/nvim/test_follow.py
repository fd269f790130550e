"""Follow: the agent's position is shown in the code window, never in the user's current window."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.nvim


def tool(call_id: str, path: str, line: int, status: str = "in_progress") -> dict:
    return {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": call_id,
            "title": f"Read {path}",
            "kind": "read",
            "status": status,
            "locations": [{"path": f"$cwd/{path}", "line": line}],
        }
    }


FOLLOW_SCRIPT = {
    "protocol": 1,
    "on_prompt": [
        tool("c1", "calc.py", 5),
        {"sleep": 0.1},
        tool("c2", "README.md", 3),
        {"sleep": 0.1},
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "followed"},
            }
        },
    ],
}


def test_follow_moves_code_window_and_marks_line_without_taking_focus(editor_factory):
    ed = editor_factory(FOLLOW_SCRIPT)
    ed.nvim.command(f"edit {ed.workspace / 'hello.txt'}")
    code_win = ed.nvim.current.window.handle
    ed.nvim.command("Acpls chat")
    prompt_win = ed.nvim.current.window.handle
    assert prompt_win != code_win
    assert ed.lua("return vim.api.nvim_get_mode().mode") == "i"
    # Type the prompt and send it with the insert-mode mapping, as a user would.
    ed.nvim.input("please follow<C-s>")
    ed.wait_turn_end()

    assert ed.nvim.current.window.handle == prompt_win
    assert ed.lua("return vim.api.nvim_get_mode().mode") == "i"
    name = ed.lua("return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(...))", code_win)
    assert name == str(ed.workspace / "README.md")
    assert ed.lua("return vim.api.nvim_win_get_cursor(...)", code_win) == [3, 0]
    marks = ed.lua(
        "local f = require('acpls.follow');"
        "local buf = vim.api.nvim_win_get_buf(...);"
        "return vim.api.nvim_buf_get_extmarks(buf, f.ns, 0, -1, {details = true})",
        code_win,
    )
    assert len(marks) == 1
    _, row, _, details = marks[0]
    assert row == 2
    assert details["line_hl_group"] == "AcplsAgentCursor"
    assert details["sign_hl_group"] == "AcplsAgentCursorSign"
    assert details["sign_text"].strip() == "▶"
    # Only one mark in the whole editor: the earlier position (calc.py) was cleared.
    calc_marks = ed.lua(
        "local buf = vim.fn.bufnr(...);"
        "return vim.api.nvim_buf_get_extmarks(buf, require('acpls.follow').ns, 0, -1, {})",
        str(ed.workspace / "calc.py"),
    )
    assert calc_marks == []
    assert ed.errors() == []


def test_follow_off_stops_moving(editor_factory):
    ed = editor_factory(FOLLOW_SCRIPT)
    ed.nvim.command(f"edit {ed.workspace / 'hello.txt'}")
    code_win = ed.nvim.current.window.handle
    ed.nvim.command("Acpls follow off")
    ed.wait("return require('acpls.follow').state.enabled == false")
    ed.nvim.command("Acpls prompt go")
    ed.wait_turn_end()
    name = ed.lua("return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(...))", code_win)
    assert name == str(ed.workspace / "hello.txt")
    assert ed.lua("return require('acpls.follow').mark()") is None
    log = ed.agent_log.read_text()
    assert "session/prompt" in log


def test_user_edit_pause_is_shown(editor_factory):
    script = {
        "protocol": 1,
        "on_prompt": [tool("c1", "calc.py", 2), {"sleep": 3.0}, tool("c2", "README.md", 3)],
    }
    ed = editor_factory(script)
    ed.nvim.command(f"edit {ed.workspace / 'hello.txt'}")
    ed.nvim.command("Acpls prompt go")
    ed.wait("return require('acpls.follow').mark() ~= nil", what="the first follow")
    # The user was in hello.txt, so follow showed calc.py in a window beside the chat; the user
    # goes there and types in the file the agent is in: the server pauses follow and says so.
    assert ed.lua("return vim.fn.expand('%:t')") == "hello.txt"
    ed.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(...))", str(ed.workspace / "calc.py"))
    ed.nvim.input("ggOuser line<Esc>")
    ed.wait("return require('acpls.follow').state.paused", what="follow paused")
    ed.wait_turn_end()
    notes = ed.lua("return vim.tbl_map(function(n) return n.msg end, T.notes)")
    assert any("follow paused" in n for n in notes)
    header = ed.lua("return T.lines(require('acpls.chat').list()[1].buf)[2]")
    assert "follow paused" in header
    # The agent's later move (to README.md) did not take the user's window away.
    assert ed.lua("return vim.fn.expand('%:t')") == "calc.py"
    assert ed.lua("return require('acpls.follow').mark()") is None
    # :Acpls follow on resumes it, and the header says so.
    ed.nvim.command("Acpls follow on")
    ed.wait("return require('acpls.follow').state.enabled == true", what="follow on again")
    header = ed.lua("return T.lines(require('acpls.chat').list()[1].buf)[2]")
    assert "follow paused" not in header


def follow_params(path, line: int) -> dict:
    return {
        "sessionId": "s1",
        "toolCallId": "c1",
        "uri": path.as_uri(),
        "range": {
            "start": {"line": line, "character": 0},
            "end": {"line": line, "character": 0},
        },
        "kind": "read",
    }


def test_follow_in_a_tab_with_only_the_chat_splits_beside_it(plain_nvim, workspace):
    nvim = plain_nvim
    nvim.exec_lua(
        "local buf = vim.api.nvim_create_buf(false, true); vim.b[buf].acpls_chat = 1;"
        " vim.api.nvim_set_current_buf(buf)"
    )
    chat_win = nvim.current.window.handle
    nvim.exec_lua(
        "require('acpls.follow').on_follow_agent(..., {})", follow_params(workspace / "calc.py", 4)
    )
    assert nvim.current.window.handle == chat_win
    wins = nvim.exec_lua(
        "return vim.tbl_map(function(w) return {w, vim.api.nvim_buf_get_name("
        "vim.api.nvim_win_get_buf(w)), vim.api.nvim_win_get_cursor(w)} end,"
        " vim.api.nvim_tabpage_list_wins(0))"
    )
    assert len(wins) == 2
    code = next(w for w in wins if w[0] != chat_win)
    assert code[1] == str(workspace / "calc.py")
    # Line 5 is "def mul(a, b):": the cursor goes to its first non-blank.
    assert code[2] == [5, 0]


def test_follow_during_a_diff_preview_only_moves_the_mark(plain_nvim, workspace):
    nvim = plain_nvim
    nvim.command(f"edit {workspace / 'hello.txt'}")
    nvim.command("tab split | diffthis | vsplit | diffthis")
    wins_before = nvim.exec_lua("return vim.api.nvim_tabpage_list_wins(0)")
    nvim.exec_lua(
        "require('acpls.follow').on_follow_agent(..., {})", follow_params(workspace / "calc.py", 1)
    )
    assert nvim.exec_lua("return vim.api.nvim_tabpage_list_wins(0)") == wins_before
    mark = nvim.exec_lua("local m = require('acpls.follow').mark(); return m and m.row")
    assert mark == 1
    # Back in the first tab page the code window is left alone (it belongs to another tab page).
    name = nvim.exec_lua("return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(0))")
    assert name == str(workspace / "hello.txt")


def _window_state(nvim, win: int) -> list:
    return nvim.exec_lua(
        "local w = ...; return {vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)),"
        " vim.api.nvim_win_get_cursor(w)}",
        win,
    )


def test_follow_never_changes_the_window_the_user_is_in(plain_nvim, workspace):
    """The user works in a code window (normal mode, no other code window) with the chat open:
    follow opens a window beside the chat, unfocused, and the user's buffer and cursor stay."""
    nvim = plain_nvim
    nvim.command(f"edit {workspace / 'hello.txt'}")
    user_win = nvim.current.window.handle
    nvim.exec_lua(
        "vim.cmd('botright vnew'); vim.b.acpls_chat = 1; vim.bo.buftype = 'nofile';"
        " vim.api.nvim_set_current_win(...)",
        user_win,
    )
    before = _window_state(nvim, user_win)
    assert nvim.exec_lua("return vim.api.nvim_get_mode().mode") == "n"
    nvim.exec_lua(
        "require('acpls.follow').on_follow_agent(..., {})", follow_params(workspace / "calc.py", 4)
    )
    assert nvim.current.window.handle == user_win
    assert _window_state(nvim, user_win) == before
    wins = nvim.exec_lua("return vim.api.nvim_tabpage_list_wins(0)")
    assert len(wins) == 3
    shown = [_window_state(nvim, w) for w in wins if w != user_win]
    assert [str(workspace / "calc.py"), [5, 0]] in shown


def test_follow_uses_another_code_window_of_the_tab(plain_nvim, workspace):
    """Two code windows, the user in one: follow shows the agent in the other, and a second
    move keeps to it (no new window)."""
    nvim = plain_nvim
    nvim.command(f"edit {workspace / 'README.md'}")
    other_win = nvim.current.window.handle
    nvim.command(f"vsplit {workspace / 'hello.txt'}")
    user_win = nvim.current.window.handle
    before = _window_state(nvim, user_win)
    for line in (4, 1):
        nvim.exec_lua(
            "require('acpls.follow').on_follow_agent(..., {})",
            follow_params(workspace / "calc.py", line),
        )
        assert nvim.current.window.handle == user_win
        assert _window_state(nvim, user_win) == before
        assert _window_state(nvim, other_win)[0] == str(workspace / "calc.py")
    assert _window_state(nvim, other_win)[1][0] == 2
    assert len(nvim.exec_lua("return vim.api.nvim_tabpage_list_wins(0)")) == 2
