"""Habits of the published agents (tests/real_agents/README.md), each reproduced by the
scripted agent and driven through the real acpls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcServerError

from tests.e2e.conftest import agent_log, command, scripted, start

# Codex (codex-acp 0.16) names its auth methods with `id`, as ACP v1 does.
CODEX_AUTH = [
    {"id": "chatgpt", "name": "Login with ChatGPT", "description": "browser sign-in"},
    {"id": "openai-api-key", "name": "Use OPENAI_API_KEY", "description": "from the env"},
]


def _sent(log: Path, method: str) -> list[Any]:
    return [m.get("params") for m in agent_log(log) if m.get("method") == method]


async def test_codex_sign_in_sends_the_methods_id(client, workspace: Path, tmp_path: Path):
    """The user picks a method by its name; the agent gets its `id`, never "None"."""
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_initialize": {"protocolVersion": 1, "authMethods": CODEX_AUTH}}
    client.answer_message_request = lambda p: types.MessageActionItem(title="Use OPENAI_API_KEY")
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.authenticate", {})
    (asked,) = client.message_requests
    assert [a.title for a in asked.actions] == ["Login with ChatGPT", "Use OPENAI_API_KEY"]
    await command(client, "acpls.authenticate", {"methodId": "chatgpt"})
    assert _sent(log, "authenticate") == [
        {"methodId": "openai-api-key"},
        {"methodId": "chatgpt"},
    ]


async def test_codex_session_new_needing_sign_in_asks_and_sends_the_id(
    client, workspace: Path, tmp_path: Path
):
    """session/new answers auth-required: acpls asks which method, authenticates with its id
    and tries again."""
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_initialize": {"protocolVersion": 1, "authMethods": CODEX_AUTH},
        "on_new_session": [
            {"respond_error": {"code": -32000, "message": "Authentication required"}}
        ],
    }
    client.answer_message_request = lambda p: types.MessageActionItem(title="Use OPENAI_API_KEY")
    await start(client, workspace, scripted(script, log))
    with pytest.raises(JsonRpcServerError):  # this agent keeps refusing after the sign-in
        await command(client, "acpls.newSession", {})
    assert _sent(log, "authenticate") == [{"methodId": "openai-api-key"}]
    assert len(_sent(log, "session/new")) == 2  # tried again after signing in
