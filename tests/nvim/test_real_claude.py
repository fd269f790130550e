"""The real Claude Code (npm @agentclientprotocol/claude-agent-acp, pinned in
tests/real_agents/agents.mk) in the real Neovim, its model played by the scripted model server:
one whole turn as a user drives it. Prompt, follow, the permission prompt with its diff, allow, the
command's output in a terminal buffer, review with a hunk kept and one rejected from the list, and
the files on disk checked after each step. A missing agent fails the test (`make agents`). The
agent's PATH has no Node.js: it runs on the one acpls brings (`acpls[node]`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.model_server import ModelServer, load_script
from tests.real_agents.harness import (
    COMMAND_OUTPUT,
    EDITED,
    REPORT,
    SHOP,
    TURN_TIMEOUT,
    _base_env,
    _claude_env,
    make_workspace,
)
from tests.real_agents.installed import executable

pytestmark = pytest.mark.nvim

# What the list of agent changes shows of a hunk: its file and its first new line.
REVIEW_LUA = """
local out = {}
for _, item in ipairs(require('acpls.review').items()) do
  table.insert(out, {path = item.filename, lnum = item.lnum, text = item.text})
end
return out
"""

TERMINAL_LUA = """
for _, t in ipairs(require('acpls.terminals').list()) do
  local text = table.concat(T.lines(t.buf), '\\n')
  if text:find((...), 1, true) then return {buftype = vim.bo[t.buf].buftype, text = text} end
end
"""


def disk(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


@pytest.fixture
def claude_editor(editor_factory, tmp_path: Path, request):
    """A Neovim on a git workspace holding shop.py, whose acpls runs the installed Claude Code
    against the scripted model server (`editor_turn`)."""
    workspace = make_workspace(tmp_path / "claude-ws")
    home = tmp_path / "agent-home"
    home.mkdir()
    script = load_script("claude", request.param, workspace=str(workspace))
    with ModelServer(script, log_path=tmp_path / "model.jsonl") as model:
        agent = {
            "command": str(executable("claude")),
            "args": [],
            # No node on the agent's PATH: it runs on the Node of acpls[node] (node_runtime.py).
            "env": _base_env(home, node_on_path=False) | _claude_env(model.url, home),
        }
        ed = editor_factory(None, agent=agent, env={"remove": ["*"]})
        ed.nvim.command(f"cd {workspace}")
        ed.workspace = workspace
        ed.model = model
        yield ed


def chat_text(ed) -> str:
    return ed.lua(
        "local c = require('acpls.chat').current()"
        " return (c and table.concat(T.lines(c.out_buf), '\\n') or '') .. vim.inspect(T.notes)"
        " .. tostring(c and c.session_id) .. table.concat(vim.fn.readfile(vim.lsp.log.get_filename()), '\\n')"
    )


def set_mode(ed, label: str, value: str) -> None:
    """`:Acpls config`, mode `name`: Claude Code starts in `auto`, which asks nothing (over ACP v2
    its modes come as the config option `mode`; `default` is labelled Manual)."""
    ed.nvim.command("Acpls chat")
    try:
        ed.wait(
            "local c = require('acpls.chat').current()"
            " return c and c.session_id and c.view.session.configOptions ~= nil",
            timeout=60,
            what="the session with its config options",
        )
    except AssertionError as e:
        raise AssertionError(f"{e}\n{chat_text(ed)}\n{ed.model.format_log()}") from None
    ed.nvim.command("stopinsert")
    ed.nvim.command("Acpls config")
    sel = ed.wait_select(None)
    ed.lua("T.answer_label(...)", sel["index"], "Mode")
    sel = ed.wait_select(None)
    ed.lua("T.answer_label(...)", sel["index"], label)
    try:
        ed.wait(
            "for _, o in ipairs(require('acpls.chat').current().view.session.configOptions) do"
            " if (o.id or o.configId) == 'mode' then return o.currentValue == ... end end",
            value,
            what=f"mode {value}",
        )
    except AssertionError as e:
        opts = ed.lua(
            "return vim.inspect(require('acpls.chat').current().view.session.configOptions)"
        )
        raise AssertionError(f"{e}\n{opts[:3000]}") from None


@pytest.mark.parametrize("claude_editor", ["editor_turn"], indirect=True)
def test_claude_turn_in_neovim(claude_editor):
    ed = claude_editor
    shop, report = ed.workspace / "shop.py", ed.workspace / "report.txt"
    ed.nvim.command(f"edit {shop}")
    code_win = ed.nvim.current.window.handle
    set_mode(ed, "Manual", "default")
    ed.nvim.command("wincmd p")
    ed.nvim.command(f"Acpls prompt Round the total and write a report in {shop.name}")

    # The edit is asked about, with the diff of exactly the agent's change; the file is untouched.
    sel = ed.wait_select("acpls.permission", timeout=TURN_TIMEOUT)
    assert sel["labels"][:3] == [
        "Yes [allow once]",
        # The always option names the rule acpls records: this one file, not "all edits".
        "Yes, allow all edits during this session [allow always] — records: edit: shop.py",
        "No [reject once]",
    ], (sel, ed.model.format_log())
    assert "Show diff: shop.py (+1 -1)" in sel["labels"], sel
    assert disk(shop) == SHOP
    # Follow took the code window to the file the agent read (the user's window kept).
    name = ed.lua("return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(...))", code_win)
    assert name == str(shop)
    ed.lua("T.answer_label(..., 'Show diff')", sel["index"])
    proposed = ed.wait(
        "for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do"
        " local b = vim.api.nvim_win_get_buf(w)"
        " if vim.startswith(vim.api.nvim_buf_get_name(b), 'acpls://proposed/') then"
        "  return T.lines(b) end end",
        what="the proposed text",
    )
    assert "\n".join(proposed) + "\n" == EDITED
    ed.nvim.input("q")
    again = ed.wait_select("acpls.permission")
    ed.lua("T.answer_label(..., 'Yes [allow once]')", again["index"])

    # The command is asked about next; allowed, its output reaches a terminal buffer.
    cmd = ed.wait_select("acpls.permission", timeout=TURN_TIMEOUT)
    assert disk(shop) == EDITED
    ed.lua("T.answer_label(..., 'Yes [allow once]')", cmd["index"])
    ends = ed.wait_turn_end(timeout=TURN_TIMEOUT)
    assert ends[0]["stopReason"] == "end_turn", ed.model.format_log()
    assert disk(report) == REPORT
    try:
        term = ed.wait(TERMINAL_LUA, COMMAND_OUTPUT, what="the command's output in a terminal")
    except AssertionError as e:
        terms = ed.lua(
            "return vim.inspect(vim.tbl_map(function(t) return {t.command, T.lines(t.buf)} end,"
            " require('acpls.terminals').list()))"
        )
        raise AssertionError(f"{e}\n{terms}\n{chat_text(ed)[-4000:]}") from None
    assert term["buftype"] == "terminal"
    # The open buffer shows the agent's text (reloaded from disk, nothing unsaved).
    ed.wait(
        "return table.concat(T.lines(vim.fn.bufnr(...)), '\\n') .. '\\n' == select(2, ...)",
        str(shop),
        EDITED,
        what="the buffer reloaded",
    )

    # Review: both changes listed; keep the report, reject the edit, from the quickfix list.
    ed.nvim.command("Acpls review")
    ed.wait("return vim.bo.filetype == 'qf' and #vim.fn.getqflist() == 2", what="the review list")
    items = ed.lua(REVIEW_LUA)
    assert sorted(i["path"] for i in items) == sorted([str(shop), str(report)]), items
    qf = ed.lua(
        "return vim.tbl_map(function(i) return vim.api.nvim_buf_get_name(i.bufnr) end,"
        " vim.fn.getqflist())"
    )
    ed.nvim.command(str(qf.index(str(report)) + 1))
    ed.nvim.command("Acpls keep")
    ed.wait("return #require('acpls.review').items() == 1", what="the report kept")
    assert disk(report) == REPORT and disk(shop) == EDITED
    ed.nvim.command("Acpls review")
    ed.wait("return vim.bo.filetype == 'qf' and #vim.fn.getqflist() == 1", what="one left")
    ed.nvim.command("1")
    ed.nvim.command("Acpls reject")
    ed.wait("return #require('acpls.review').items() == 0", what="the edit rejected")
    ed.wait(
        "return table.concat(T.lines(vim.fn.bufnr(...)), '\\n') .. '\\n' == select(2, ...)",
        str(shop),
        SHOP,
        what="the original text back in the buffer",
    )
    ed.lua("vim.api.nvim_buf_call(vim.fn.bufnr(...), function() vim.cmd('update') end)", str(shop))
    assert disk(shop) == SHOP
    assert disk(report) == REPORT
    assert ed.errors() == []
