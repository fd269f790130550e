"""Signing in with each type of the agent's `authMethods`, against the scripted agent (v1 and v2):
`env_var` (the editor asks for the value, acpls restarts the agent with it and authenticates) and
`terminal` (the editor runs the agent's login command, here for real, then acpls retries), each
ending with the session the sign-in was needed for."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import agent_log, command, scripted, start
from tests.schema import validate_client_message


def methods(protocol: int, token_file: Path) -> list[dict[str, Any]]:
    key = "id" if protocol == 1 else "methodId"
    env_var = {
        key: "openai-api-key",
        "name": "OpenAI API key",
        "type": "env_var",
        "vars": [{"name": "SCRIPTED_API_KEY", "label": "API key"}],
    }
    terminal = {
        key: "login",
        "name": "Log in",
        "type": "terminal",
        "args": ["--login", str(token_file)],
        "env": {"LOGIN_TOKEN": "from-terminal"},
    }
    return [env_var, terminal]


def script(protocol: int, token_file: Path, condition: dict[str, str]) -> dict[str, Any]:
    return {
        "protocol": protocol,
        "on_initialize": {"authMethods": methods(protocol, token_file)},
        "signed_in_when": condition,
    }


def pick(name: str):
    def answer(params: types.ShowMessageRequestParams) -> Any:
        return next(a for a in params.actions or [] if a.title == name)

    return answer


@pytest.mark.parametrize("protocol", [1, 2])
async def test_env_var_sign_in(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    asked: list[Any] = []

    @client.feature("acpls/authEnv")
    def auth_env(params: Any) -> Any:
        asked.append(params)
        return {"values": {"SCRIPTED_API_KEY": "sk-test"}}

    client.answer_message_request = pick("OpenAI API key")
    condition = {"env": "SCRIPTED_API_KEY"}
    await start(client, workspace, scripted(script(protocol, tmp_path / "t", condition), log))
    session = await command(client, "acpls.newSession", {})
    assert session["sessionId"].startswith("scripted-")
    assert asked[0]["methodId"] == "openai-api-key"
    assert asked[0]["vars"][0]["name"] == "SCRIPTED_API_KEY"
    logins = [m for m in agent_log(log) if m.get("method") in ("authenticate", "auth/login")]
    assert [m["params"] for m in logins] == [{"methodId": "openai-api-key"}]
    validate_client_message(protocol, {"jsonrpc": "2.0", "id": 1, **logins[0]})
    # Two agent processes: the one that asked, and the one started with the key.
    assert [m.get("method") for m in agent_log(log)].count("initialize") == 2


@pytest.mark.parametrize("protocol", [1, 2])
async def test_terminal_sign_in_runs_the_login_command(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    token = tmp_path / "token"
    runs: list[Any] = []

    @client.feature("acpls/runLogin")
    async def run_login(params: Any) -> Any:
        runs.append(params)
        env = {**os.environ, **params["env"]}
        proc = await asyncio.create_subprocess_exec(*params["command"], env=env, cwd=params["cwd"])
        return {"exitCode": await proc.wait()}

    client.answer_message_request = pick("Log in")
    condition = {"file": str(token)}
    await start(client, workspace, scripted(script(protocol, token, condition), log))
    session = await command(client, "acpls.newSession", {})
    assert session["sessionId"].startswith("scripted-")
    assert runs[0]["command"][-2:] == ["--login", str(token)]
    assert token.read_text() == "from-terminal"
    # A terminal method is never sent to the agent.
    assert not [m for m in agent_log(log) if m.get("method") in ("authenticate", "auth/login")]


async def test_cancelled_env_var_sign_in_fails_the_command(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"

    @client.feature("acpls/authEnv")
    def auth_env(params: Any) -> Any:
        return None

    client.answer_message_request = pick("OpenAI API key")
    await start(client, workspace, scripted(script(1, tmp_path / "t", {"env": "X_KEY"}), log))
    from pygls.exceptions import JsonRpcException

    with pytest.raises(JsonRpcException, match="authentication required"):
        await command(client, "acpls.newSession", {})


@pytest.mark.parametrize("protocol", [1, 2])
async def test_env_var_method_already_set_signs_in_without_asking(
    client, workspace, tmp_path, protocol
):
    """The agent's `env` setting already holds the variable (as a Codex user with
    OPENAI_API_KEY set): acpls authenticates with the method at once, never asks the editor."""
    log = tmp_path / "agent.jsonl"
    asked: list[Any] = []

    @client.feature("acpls/authEnv")
    def auth_env(params: Any) -> Any:
        asked.append(params)
        return None

    agent = scripted(script(protocol, tmp_path / "t", {"env": "SCRIPTED_API_KEY"}), log)
    agent["env"] = {"SCRIPTED_API_KEY": "sk-set"}
    await start(client, workspace, agent)
    await command(client, "acpls.authenticate", {"methodId": "openai-api-key"})
    session = await command(client, "acpls.newSession", {})
    assert session["sessionId"].startswith("scripted-")
    assert asked == []
    logins = [m for m in agent_log(log) if m.get("method") in ("authenticate", "auth/login")]
    assert [m["params"] for m in logins] == [{"methodId": "openai-api-key"}]
    assert [m.get("method") for m in agent_log(log)].count("initialize") == 1
