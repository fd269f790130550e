"""Several agents in real Neovim: a chat per agent (`:Acpls chat {agent}`), each chat's session on
its own agent's process, both turns at once; `:checkhealth acpls` checks every configured agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agents import read_log, script_command
from tests.nvim.conftest import ACPLS
from tests.nvim.test_health_and_help import health_lines

pytestmark = pytest.mark.nvim


def _script(name: str, protocol: int) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": f"Answer from {name}."},
    }
    if protocol == 2:
        chunk = {
            "sessionUpdate": "agent_message",
            "messageId": f"{name}-1",
            "content": [{"type": "text", "text": f"Answer from {name}."}],
        }
    info = {"name": f"{name}-agent", "version": "1"}
    return {
        "protocol": protocol,
        "on_initialize": {"agentInfo": info} if protocol == 1 else {"info": info},
        "on_new_session": {"sessionId": f"{name}-session"},
        "on_prompt": [{"sleep": 0.3}, {"update": chunk}],
    }


def _agent(name: str, protocol: int, log: Path) -> dict[str, Any]:
    argv = script_command(_script(name, protocol), log)
    return {"command": argv[0], "args": argv[1:]}


def _chat_text(ed: Any, chat_id: int) -> str:
    return "\n".join(
        ed.lua(
            "for _, c in ipairs(require('acpls.chat').list()) do"
            " if c.id == ... then return T.lines(c.buf) end end",
            chat_id,
        )
    )


def test_a_chat_per_agent_side_by_side(editor_factory, tmp_path: Path) -> None:
    alpha_log, beta_log = tmp_path / "alpha.jsonl", tmp_path / "beta.jsonl"
    ed = editor_factory(
        None,
        agent={**_agent("alpha", 1, alpha_log), "name": "alpha"},
        agents={"beta": _agent("beta", 2, beta_log)},
    )
    ed.nvim.command("Acpls chat")
    ed.nvim.input("<Esc>")
    ed.nvim.command("Acpls chat beta")
    ed.nvim.input("<Esc>")
    chats = ed.wait(
        "local l = require('acpls.chat').list()"
        " if #l == 2 and l[1].sessionId and l[2].sessionId then return l end",
        what="two chats with sessions",
    )
    assert [(c["sessionId"], c["agent"]) for c in chats] == [
        ("alpha-session", "alpha"),
        ("beta-session", "beta"),
    ]
    # `:Acpls chat beta` again is beta's chat, not a new one.
    ed.nvim.command("Acpls chat beta")
    ed.nvim.input("<Esc>")
    assert len(ed.lua("return require('acpls.chat').list()")) == 2

    # Both turns at once, each chat's prompt to its own agent.
    ed.lua(
        "local chat = require('acpls.chat')"
        " for _, c in ipairs(chat.list()) do"
        "   vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, {'hello ' .. c.agent})"
        "   vim.api.nvim_set_current_buf(c.prompt_buf)"
        "   chat.current():send_input()"
        " end"
    )
    ed.wait_turn_end(2)
    alpha_text, beta_text = _chat_text(ed, chats[0]["id"]), _chat_text(ed, chats[1]["id"])
    assert "Answer from alpha." in alpha_text and "Answer from beta." not in alpha_text
    assert "Answer from beta." in beta_text and "Answer from alpha." not in beta_text
    # Each chat's header names its agent.
    assert "alpha-agent" in alpha_text and "beta-agent" in beta_text
    prompts = {
        str(log.name): [
            m["params"]["sessionId"] for m in read_log(log) if m.get("method") == "session/prompt"
        ]
        for log in (alpha_log, beta_log)
    }
    assert prompts == {"alpha.jsonl": ["alpha-session"], "beta.jsonl": ["beta-session"]}
    # One acpls, one process per agent.
    assert ed.lua("return #vim.lsp.get_clients({name = 'acpls'})") == 1
    statuses = ed.lua(
        "local s = require('acpls.client').agent_statuses[vim.lsp.get_clients({name = 'acpls'})[1].id]"
        " local out = {} for name, st in pairs(s) do out[name] = st.state end return out"
    )
    assert statuses == {"alpha": "running", "beta": "running"}

    # `:Acpls restart beta` restarts beta alone; alpha's chat keeps its session and process.
    ed.nvim.command("Acpls restart beta")
    ed.wait(
        "return select(2, ...) == #vim.tbl_filter(function(l) return l:find('\"initialize\"', 1, true) end,"
        " vim.fn.readfile(...))",
        str(beta_log),
        2,
        what="beta started again",
    )
    inits = [m.get("method") for m in read_log(alpha_log)].count("initialize")
    assert inits == 1
    assert ed.errors() == []


def test_checkhealth_checks_every_configured_agent(plain_nvim, tmp_path: Path) -> None:
    nvim = plain_nvim
    beta = _agent("beta", 2, tmp_path / "beta.jsonl")
    nvim.exec_lua(
        "require('acpls').setup(...)",
        {
            "cmd": [str(ACPLS)],
            "agent": "demo",
            "agents": {"beta": beta, "gone": {"command": "/nonexistent/agent-y"}},
        },
    )
    text = "\n".join(health_lines(nvim))
    assert "agent demo answers: acpls demo agent 0.1.0, ACP v2" in text
    assert "agent beta answers: beta-agent 1, ACP v2" in text
    assert "agent gone is not installed: /nonexistent/agent-y not found on PATH" in text


def test_continuing_a_checkpoint_opens_a_chat_of_its_agent(editor_factory, tmp_path: Path) -> None:
    """A checkpoint of beta's chat continues in a new chat of beta (acpls answers the agent), not
    in a chat of the default agent."""
    alpha_log, beta_log = tmp_path / "alpha.jsonl", tmp_path / "beta.jsonl"
    beta_script = {**_script("beta", 1)}
    del beta_script["on_new_session"]  # scripted-1, scripted-2: the continuation is a new session
    argv = script_command(beta_script, beta_log)
    ed = editor_factory(
        None,
        agent={**_agent("alpha", 1, alpha_log), "name": "alpha"},
        agents={"beta": {"command": argv[0], "args": argv[1:]}},
    )
    ed.nvim.command("Acpls chat beta")
    ed.nvim.input("<Esc>")
    (chat,) = ed.wait(
        "local l = require('acpls.chat').list() if #l == 1 and l[1].sessionId then return l end",
        what="beta's chat with its session",
    )
    ed.lua(
        "local chat = require('acpls.chat') local c = chat.list()[1]"
        " vim.api.nvim_buf_set_lines(c.prompt_buf, 0, -1, false, {'one'})"
        " vim.api.nvim_set_current_buf(c.prompt_buf) chat.current():send_input()"
    )
    ed.wait_turn_end()
    ed.lua(
        "local c = vim.lsp.get_clients({name = 'acpls'})[1]"
        " local res = c:request_sync('workspace/executeCommand',"
        "   {command = 'acpls.checkpoints', arguments = {{sessionId = ...}}}, 10000)"
        " require('acpls.checkpoints').offer_continue(c.id, res.result[1])",
        chat["sessionId"],
    )
    picker = ed.wait_select("acpls.checkpoint.continue")
    ed.lua("T.answer_label(...)", picker["index"], "Continue the conversation from here")
    chats = ed.wait(
        "local l = require('acpls.chat').list() if #l == 2 then return l end",
        what="a chat for the continued session",
    )
    assert chats[1]["sessionId"] != chat["sessionId"]
    assert [c["agent"] for c in chats] == ["beta", "beta"]
    news = [m for m in read_log(beta_log) if m.get("method") == "session/new"]
    assert len(news) == 2 and not read_log(alpha_log)
    assert ed.errors() == []
