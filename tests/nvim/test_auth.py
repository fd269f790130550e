"""Signing in from Neovim with the real acpls and the scripted agent: an `env_var` method (the
value asked with vim.ui.input, kept for the session only) and a `terminal` method (the agent's login
command run for real in a terminal split), each followed by the prompt that needed it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agents import read_log

pytestmark = pytest.mark.nvim


def script(token: str, condition: dict[str, str]) -> dict[str, Any]:
    return {
        "protocol": 1,
        "on_initialize": {
            "authMethods": [
                {
                    "id": "api-key",
                    "name": "API key",
                    "type": "env_var",
                    "vars": [{"name": "SCRIPTED_API_KEY", "label": "key"}],
                },
                {
                    "id": "login",
                    "name": "Log in",
                    "type": "terminal",
                    "args": ["--login", token],
                    "env": {"LOGIN_TOKEN": "from-terminal"},
                },
            ]
        },
        "signed_in_when": condition,
        "on_prompt": [
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "signed in and answering"},
                }
            }
        ],
    }


def choose_method(ed, name: str) -> None:
    sel = ed.wait_select()
    ed.lua("T.answer_label(...)", sel["index"], name)


def test_env_var_sign_in(editor_factory, tmp_path):
    ed = editor_factory(script(str(tmp_path / "token"), {"env": "SCRIPTED_API_KEY"}))
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt hello")
    choose_method(ed, "API key")
    inp = ed.wait("local o = T.open_inputs(); return o[1]", what="the key asked")
    assert "key" in inp["prompt"]
    ed.lua("T.answer_input(...)", inp["index"], "sk-nvim")
    ed.wait_turn_end()
    text = "\n".join(ed.lua("return T.lines(require('acpls.chat').list()[1].buf)"))
    assert "signed in and answering" in text
    logins = [m["params"] for m in read_log(ed.agent_log) if m.get("method") == "authenticate"]
    assert logins == [{"methodId": "api-key"}]


def test_terminal_sign_in(editor_factory, tmp_path):
    token = tmp_path / "token"
    ed = editor_factory(script(str(token), {"file": str(token)}))
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt hello")
    choose_method(ed, "Log in")
    ed.wait_turn_end()
    assert token.read_text() == "from-terminal"
    assert (
        ed.lua(
            "for _, b in ipairs(vim.api.nvim_list_bufs()) do"
            " if vim.b[b].acpls_login == 'login' then return vim.bo[b].buftype end end"
        )
        == "terminal"
    )
    text = "\n".join(ed.lua("return T.lines(require('acpls.chat').list()[1].buf)"))
    assert "signed in and answering" in text
