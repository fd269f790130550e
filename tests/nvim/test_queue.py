"""Prompts written while the agent works, in Neovim with the real acpls and the scripted agent:
queued (in the prompt bar, not yet in the chat), edited, removed, steered into the running turn
(`acpls.steer`, where the agent offers `_session/steering`), and the rest sent when the turn ends."""

from __future__ import annotations

import time

import pytest

from tests.agents import read_log

pytestmark = pytest.mark.nvim


def script(protocol: int) -> dict:
    return {
        "protocol": protocol,
        "on_initialize": {"_meta": {"steering": {"supported": True}}},
        "on_request": {"_session/steering": {"outcome": "injected"}},
        "on_prompt": [[{"sleep": 3.0}], []],
    }


def texts(ed) -> list[str]:
    return [
        m["params"]["prompt"][0]["text"]
        for m in read_log(ed.agent_log)
        if m.get("method") in ("session/prompt", "_session/steering")
    ]


def queue_action(ed, prompt_prefix: str, action_prefix: str) -> None:
    ed.nvim.command("Acpls queue")
    sel = ed.wait_select("acpls.queue")
    ed.lua("T.answer_label(...)", sel["index"], prompt_prefix)
    sel = ed.wait_select("acpls.queue_action")
    ed.lua("T.answer_label(...)", sel["index"], action_prefix)


@pytest.mark.parametrize("protocol", [1, 2])
def test_queue_edit_remove_steer(editor_factory, protocol):
    ed = editor_factory(script(protocol))
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt first")
    ed.wait("return #require('acpls.chat').list() == 1 and require('acpls.chat').list()[1].running")
    deadline = time.monotonic() + 30
    while texts(ed) != ["first"]:  # the turn is running at the agent
        assert time.monotonic() < deadline, "the first prompt never reached the agent"
        time.sleep(0.05)
    for text in ("second", "third", "fourth"):
        ed.nvim.command(f"Acpls prompt {text}")
    chat = "require('acpls.chat').list()[1]"
    body = ed.lua(f"return table.concat(T.lines({chat}.buf), '\\n')")
    assert "first" in body and "second" not in body
    bar = ed.lua(f"return vim.wo[vim.fn.bufwinid({chat}.prompt_buf)].winbar")
    assert "3 queued" in bar

    queue_action(ed, "third", "Remove")
    queue_action(ed, "fourth", "Edit")
    inp = ed.wait("local o = T.open_inputs(); return o[#o]")
    assert inp["default"] == "fourth"
    ed.lua("T.answer_input(...)", inp["index"], "fourth, edited")
    queue_action(ed, "second", "Steer")
    ed.wait(
        f"return table.concat(T.lines({chat}.buf), '\\n'):find('while the agent worked') ~= nil",
        what="the steered prompt in the chat",
    )
    ed.wait_turn_end(2, timeout=40)
    assert texts(ed) == ["first", "second", "fourth, edited"]
    steered = [m for m in read_log(ed.agent_log) if m.get("method") == "_session/steering"]
    assert steered[0]["params"]["_meta"] == {"steering": {"idleBehavior": "promptRequired"}}
    assert ed.errors() == []
