"""The plugin's Lua handlers take every golden message of editors/fixtures/ (the same files the
Python and TypeScript sides parse), and what they do with them is visible in Neovim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.nvim.conftest import REPO

pytestmark = pytest.mark.nvim

FIXTURES = REPO / "editors" / "fixtures"
RUNNER = Path(__file__).with_name("run_fixtures.lua")


def test_every_fixture_goes_through_the_handlers(plain_nvim):
    nvim = plain_nvim
    report = nvim.exec_lua(
        "local f = assert(loadfile(...)); return f(select(2, ...))", str(RUNNER), str(FIXTURES)
    )
    methods = {
        json.loads(p.read_text())["method"]
        for p in FIXTURES.glob("*.json")
        if "method" in json.loads(p.read_text())
    }
    assert report["unhandled"] == []
    assert len(report["handled"]) == sum(
        1 for p in FIXTURES.glob("*.json") if "method" in json.loads(p.read_text())
    )
    # Every acpls/* method of the protocol has a fixture and a handler.
    handlers = set(nvim.exec_lua("return vim.tbl_keys(require('acpls.client').handlers)"))
    assert methods <= handlers
    # The permission answer has the shape of the golden result.
    assert (
        report["results"]["acpls_requestPermission.json"]
        == report["expected"]["acpls_requestPermission.result.json"]
    )

    # A question answered field by field gives the golden answer; a URL question "Done".
    assert (
        report["results"]["acpls_elicitation.json"]
        == report["expected"]["acpls_elicitation.result.json"]
    )
    assert report["results"]["acpls_elicitation.url.json"] == {"action": "accept"}
    # A sign-in: the variable asked and answered; a login command that cannot start fails.
    assert (
        report["results"]["acpls_authEnv.json"] == report["expected"]["acpls_authEnv.result.json"]
    )
    assert report["results"]["acpls_runLogin.json"] == {"exitCode": -1}
    # A conflict: the diff (yours left, the agent's right), then keep mine, the golden answer.
    assert (
        report["results"]["acpls_resolveConflict.json"]
        == report["expected"]["acpls_resolveConflict.result.json"]
    )
    conflict = json.loads((FIXTURES / "acpls_resolveConflict.json").read_text())["params"]
    assert report["conflict_diff"] == [
        conflict["mine"].splitlines(),
        conflict["theirs"].splitlines(),
    ]

    # What a user would see: the chat of session s1 with the updates rendered.
    chat = "\n".join(
        nvim.exec_lua("local c = require('acpls.chat').by_session('s1'); return T.lines(c.out_buf)")
    )
    for expected in (
        "Hello, world",  # message
        "Let me look at calc.py",  # thought chunk
        "read · Read calc.py · in_progress",  # tool call
        "_acme_deploy · Deploy · _acme_waiting_for_ci",  # unknown kind and status kept
        "[_acme_chart]",  # unknown content item shown generically
        "_update: _acme_progress_",  # unknown update type
        "mode: Code",  # modes
        "context 1200/200000 (1%) · 0.01 USD",  # usage
        "What does step 1 do?",  # the updates of an acpls/sessionUpdates, each in turn
        "read · Read step1.py · completed",
        "LAST MESSAGE",
    ):
        assert expected in chat, expected
    # Terminal t1: the reset threw the earlier output away, and the pane says that acpls keeps
    # only the end of the output (the reset's `dropped`).
    term = nvim.exec_lua(
        "for _, t in ipairs(require('acpls.terminals').list()) do"
        " if t.terminalId == 't1' then vim.wait(50)"
        "  return {lines = T.lines(t.buf), status = t.status} end end"
    )
    text = [line for line in term["lines"] if line]
    assert text[0] == "[acpls: 4194304 earlier bytes not kept]"
    assert text[1] == "running tests"
    assert not any("✓ ok" in line for line in text)
    assert term["status"] == "exit 1"
    signal = nvim.exec_lua(
        "for _, t in ipairs(require('acpls.terminals').list()) do"
        " if t.terminalId == 't2' then return t.status end end"
    )
    assert signal == "signal SIGTERM"
    # Changes reach the quickfix items; follow state is shown; agent failure is reported.
    items = nvim.exec_lua("return require('acpls.review').items()")
    assert [(i["filename"], i["lnum"], i["user_data"]["hunkId"]) for i in items] == [
        ("/ws/calc.py", 2, "h1")
    ]
    assert nvim.exec_lua("return require('acpls.follow').state") == {
        "enabled": False,
        "paused": True,
    }
    errors = nvim.exec_lua("return T.errors()")
    assert len(errors) == 1 and "failed" in errors[0] and "npx" in errors[0]
    slash = nvim.exec_lua(
        "local c = require('acpls.chat').by_session('s1');"
        "vim.api.nvim_set_current_buf(c.in_buf);"
        "vim.api.nvim_buf_set_lines(c.in_buf, 0, -1, false, {'/te'});"
        "vim.api.nvim_win_set_cursor(0, {1, 3});"
        "vim.cmd('startinsert!');"
        "local start = require('acpls.chat').omnifunc(1, '');"
        "return {start, require('acpls.chat').omnifunc(0, '/te')}"
    )
    assert slash[0] == 0
    assert [i["word"] for i in slash[1]] == ["/test"]
