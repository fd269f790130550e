"""Starting acpls: one client per workspace root, custom-mode capabilities, settings through
initializationOptions and didChangeConfiguration, and handlers merged with the user's."""

from __future__ import annotations

import pytest

from tests.nvim.test_follow import FOLLOW_SCRIPT

pytestmark = pytest.mark.nvim


def test_one_client_per_root_with_custom_capabilities(editor_factory, tmp_path):
    ed = editor_factory("v1_basic")
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    first = ed.lua("return require('acpls').start()")
    assert ed.lua("return require('acpls').start()") == first
    ed.wait(
        "local c = vim.lsp.get_client_by_id(...); return c and c.initialized", first, what="init"
    )
    info = ed.lua(
        "local c = vim.lsp.get_client_by_id(...);"
        "return {root = c.root_dir, caps = c.config.capabilities.experimental,"
        " init = c.config.init_options, settings = c.settings,"
        " server = c.server_capabilities.experimental,"
        " attached = vim.lsp.buf_is_attached(0, c.id)}",
        first,
    )
    assert info["root"] == str(ed.workspace)
    # Version 1, and the newer requests it answers (editors/protocol.md section 2).
    assert info["caps"]["acpls"] == {"version": 1, "resolveConflict": True, "sessionUpdates": True}
    assert info["server"]["acpls"] == {"version": 1}
    assert info["init"]["agent"]["args"][0].endswith("scripted_agent.py")
    assert info["settings"] == {"acpls": info["init"]}
    assert info["attached"] is True
    # Another project gets its own client.
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "x.py").write_text("x = 1\n")
    ed.nvim.command(f"edit {other / 'x.py'}")
    second = ed.lua("return require('acpls').start()")
    assert second != first
    assert ed.lua("return vim.lsp.get_client_by_id(...).root_dir", second) == str(other)


def test_follow_setting_reaches_the_server_at_start_and_on_change(editor_factory):
    ed = editor_factory(FOLLOW_SCRIPT, follow={"enabled": False})
    ed.nvim.command(f"edit {ed.workspace / 'hello.txt'}")
    ed.nvim.command("Acpls prompt go")
    ed.wait_turn_end()
    assert ed.lua("return require('acpls.follow').mark()") is None
    # setup() again while running: the new settings go to the server at once.
    ed.lua(
        "require('acpls').setup(vim.tbl_extend('force', ..., {follow = {enabled = true}}))",
        ed.lua("return require('acpls.config').user()"),
    )
    ed.nvim.command("Acpls prompt again")
    ed.wait_turn_end(2)
    assert ed.lua("return require('acpls.follow').mark()") is not None


def test_user_handlers_are_chained_for_notifications_and_replace_requests(plain_nvim):
    nvim = plain_nvim
    result = nvim.exec_lua(
        """
        local calls = {}
        local h = require('acpls.client').merged_handlers({
          ['acpls/changes'] = function(_, params) table.insert(calls, 'user:' .. #params.files) end,
          ['acpls/requestPermission'] = function() return {optionId = 'mine'} end,
          ['window/logMessage'] = function() table.insert(calls, 'log') end,
        })
        local files = {{uri = 'file:///ws/a.py', path = '/ws/a.py', status = 'added', hunks = {}}}
        h['acpls/changes'](nil, {files = files}, {client_id = 1, method = 'acpls/changes'})
        local review_ran = #require('acpls.review').items() == 1
        local answer = h['acpls/requestPermission'](nil, {options = {}}, {client_id = 1})
        h['window/logMessage'](nil, {}, {})
        local methods = vim.tbl_keys(h)
        table.sort(methods)
        return {calls = calls, answer = answer, review = review_ran, methods = methods}
        """
    )
    assert result["calls"] == ["user:1", "log"]
    assert result["review"] is True
    assert result["answer"] == {"optionId": "mine"}
    assert "acpls/sessionUpdate" in result["methods"]
    assert "window/logMessage" in result["methods"]


def test_each_update_of_a_batch_reaches_the_handlers_as_if_it_came_alone(plain_nvim):
    """`acpls/sessionUpdates`: ours alone reuses one params table for every update (the chat keeps
    the updates, in order); a user's handler chained after ours gets a table of its own each."""
    result = plain_nvim.exec_lua(
        """
        local client = require('acpls.client')
        local kept = {}
        local h = client.merged_handlers({
          ['acpls/sessionUpdate'] = function(_, params) table.insert(kept, params) end,
        })
        local updates = {}
        for i = 1, 3 do
          updates[i] = {sessionUpdate = 'message', role = 'agent', messageId = 'm' .. i,
                        content = {{type = 'text', text = 'text ' .. i}}}
        end
        local ctx = {client_id = 1, method = 'acpls/sessionUpdates'}
        local c = {handlers = h}
        local get = vim.lsp.get_client_by_id
        vim.lsp.get_client_by_id = function() return c end
        client.on_session_updates({sessionId = 'user-s', updates = updates}, ctx)
        -- Ours alone: the chat of session 'ours-s' gets every update, in order.
        c.handlers = client.merged_handlers({})
        local chat = require('acpls.chat').continue_session(1, 'ours-s', '', 'new')
        client.on_session_updates({sessionId = 'ours-s', updates = updates}, ctx)
        vim.lsp.get_client_by_id = get
        vim.wait(5000, function() return chat.inbox.head > chat.inbox.tail end, 5)
        local texts = {}
        for i = 1, 3 do
          texts[i] = kept[i].update.content[1].text .. '@' .. kept[i].sessionId
        end
        local lines = vim.api.nvim_buf_get_lines(chat.out_buf, 0, -1, false)
        return {texts = texts, distinct = kept[1] ~= kept[2] and kept[2] ~= kept[3],
                shown = table.concat(lines, '\\n')}
        """
    )
    assert result["texts"] == ["text 1@user-s", "text 2@user-s", "text 3@user-s"]
    assert result["distinct"] is True
    shown = result["shown"]
    assert shown.index("text 1") < shown.index("text 2") < shown.index("text 3")
