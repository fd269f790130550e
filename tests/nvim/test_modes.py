"""The agent's mode in Neovim (issue #11: the mode is always in sight): the chat header and
require('acpls').statusline() name the current mode, follow the agent when it changes mode itself
mid-turn (the statusline is redrawn at once), and `:Acpls mode` lists the modes with what they do;
under ACP v2 the mode is the config option of category `mode`."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agents import read_log, script_command

pytestmark = pytest.mark.nvim


def say(text: str) -> dict[str, Any]:
    return {
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }
    }


PLAN = {"id": "plan", "name": "Plan", "description": "Read and plan; no edits"}
MANUAL = {"id": "default", "name": "Manual", "description": "Ask before every edit"}
V1_SCRIPT = {
    "protocol": 1,
    "on_new_session": {"modes": {"currentModeId": "plan", "availableModes": [MANUAL, PLAN]}},
    # The first turn only plans; in the second the agent leaves plan mode by itself.
    "on_prompt": [
        [say("here is the plan")],
        [
            {"update": {"sessionUpdate": "current_mode_update", "currentModeId": "default"}},
            say("now editing"),
        ],
    ],
}

STATUSLINE = "require('acpls').statusline()"
STATUS = f"return {STATUSLINE}"
HEADER = "return T.lines(require('acpls.chat').list()[1].buf)[2]"
# Counts statusline redraws: vim.cmd caches each command's function in the table, so this one
# takes the place of :redrawstatus.
COUNT_REDRAWS = "T.redraws = 0; vim.cmd.redrawstatus = function() T.redraws = T.redraws + 1 end"


def test_mode_in_header_and_statusline_follows_the_agent_and_the_picker(editor_factory):
    ed = editor_factory(V1_SCRIPT)
    ed.nvim.command("Acpls prompt plan it")
    ed.wait_turn_end()
    ed.lua("vim.api.nvim_set_current_buf(require('acpls.chat').list()[1].buf)")
    assert ed.lua(STATUS) == "acpls · python running · Plan"
    assert "mode: Plan" in ed.lua(HEADER)

    ed.lua(COUNT_REDRAWS)
    ed.nvim.command("Acpls prompt go ahead")
    ed.wait_turn_end(2)
    assert ed.lua(STATUS) == "acpls · python running · Manual"
    assert "mode: Manual" in ed.lua(HEADER)
    # Redrawn when the mode changed, and only then (the turn's other updates leave it alone).
    assert ed.lua("return T.redraws") == 1

    ed.nvim.command("Acpls mode")
    sel = ed.wait_select()
    assert sel["labels"] == [
        "Manual (current) — Ask before every edit",
        "Plan — Read and plan; no edits",
    ]
    ed.lua("T.answer(..., 2)", sel["index"])
    ed.wait(f"return {STATUSLINE}:find(' · Plan', 1, true) ~= nil", what="Plan in the statusline")
    sent = [m["params"] for m in read_log(ed.agent_log) if m.get("method") == "session/set_mode"]
    assert [p["modeId"] for p in sent] == ["plan"]
    assert ed.lua("return T.redraws") == 2
    assert ed.errors() == []


def mode_option(current: str) -> dict[str, Any]:
    return {
        "configId": "mode",
        "name": "Mode",
        "type": "select",
        "category": "mode",
        "currentValue": current,
        "options": [
            {"value": "ask", "name": "Ask", "description": "Ask before every edit"},
            {"value": "code", "name": "Code"},
        ],
    }


def test_v2_mode_config_option_in_statusline(editor_factory):
    ed = editor_factory(
        {
            "protocol": 2,
            "on_new_session": {"configOptions": [mode_option("ask")]},
            "on_prompt": [
                [say("asked")],
                [
                    {
                        "update": {
                            "sessionUpdate": "config_option_update",
                            "configOptions": [mode_option("code")],
                        }
                    }
                ],
            ],
        }
    )
    ed.nvim.command("Acpls prompt one")
    ed.wait_turn_end()
    ed.lua("vim.api.nvim_set_current_buf(require('acpls.chat').list()[1].buf)")
    assert ed.lua(STATUS) == "acpls · python running · Ask"
    assert "mode: Ask" in ed.lua(HEADER)
    ed.nvim.command("Acpls prompt two")
    ed.wait_turn_end(2)
    assert ed.lua(STATUS) == "acpls · python running · Code"
    assert "mode: Code" in ed.lua(HEADER)
    ed.nvim.command("Acpls mode")
    sel = ed.wait_select()
    assert sel["labels"] == ["Ask — Ask before every edit", "Code (current)"]
    ed.lua("T.answer(..., nil)", sel["index"])


def test_statusline_shows_no_mode_of_another_agents_chat(editor_factory, tmp_path):
    """The statusline names the default agent: a chat of another agent (with its own mode) adds
    no mode to it; the chat's header has that mode."""
    # Its own session id: both scripted agents would name theirs scripted-1.
    other = {**V1_SCRIPT, "on_new_session": {**V1_SCRIPT["on_new_session"], "sessionId": "other-1"}}
    argv = script_command(other, tmp_path / "other.jsonl")
    ed = editor_factory(
        {"protocol": 1},
        agents={"other": {"command": argv[0], "args": argv[1:]}},
    )
    ed.nvim.command("Acpls prompt hi")  # the default agent runs too
    ed.wait_turn_end()
    ed.nvim.command("Acpls chat other")
    ed.nvim.input("<Esc>")
    ed.wait("return require('acpls.chat').list()[2].sessionId ~= nil", what="other's session")
    chat = "require('acpls.chat').list()[2]"
    ed.lua(
        f"local c = {chat} vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, {{'plan it'}})"
        " vim.api.nvim_set_current_buf(c.prompt_buf) require('acpls.chat').current():send_input()"
    )
    ed.wait_turn_end(2)
    assert ed.lua(f"return {chat}.agent") == "other"
    assert "mode: Plan" in ed.lua(f"return T.lines({chat}.buf)[2]")
    ed.lua(f"vim.api.nvim_set_current_buf({chat}.buf)")
    assert ed.lua(STATUS) == "acpls · python running", ed.lua(STATUS)
