"""Several agents in one acpls (#15.3): sessions carry their agent, `acpls.newSession {"agent"}`
starts or reuses that agent's process, each agent has its own lifecycle and restart, and nothing
crosses from one agent's sessions to another's. Two scripted agents (one ACP v1, one v2) through
the real acpls."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.conftest import (
    SERVER,
    agent_log,
    command,
    make_client,
    notifications,
    record_custom,
    scripted,
    start,
    stop_client,
)


def _reply(name: str, sid_prefix: str, protocol: int, crossed: str) -> dict[str, Any]:
    """A turn that takes a while (so two agents' turns interleave) and ends with the agent's
    name; on the way it tries to speak about the other agent's session `crossed`."""
    chunk = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": f"from {name}"},
    }
    if protocol == 2:
        chunk = {
            "sessionUpdate": "agent_message",
            "messageId": f"{name}-m",
            "content": [{"type": "text", "text": f"from {name}"}],
        }
    stray = {
        "send": {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": crossed, "update": chunk},
        }
    }
    read_other = {
        "request": "fs/read_text_file",
        "params": {"sessionId": crossed, "path": "$cwd/calc.py"},
        "expect": {"error": {"code": -32602}},
    }
    return {
        "protocol": protocol,
        "on_initialize": {"agentInfo": {"name": name, "version": "1"}}
        if protocol == 1
        else {"info": {"name": name, "version": "1"}},
        "on_new_session": {"sessionId": f"{sid_prefix}-1"},
        "on_prompt": [stray, read_other, {"sleep": 0.3}, {"update": chunk}],
    }


def _agent(script: dict[str, Any], log: Path, name: str) -> dict[str, Any]:
    return {**scripted(script, log), "name": name}


def _texts(client: Any, session_id: str) -> list[str]:
    out = []
    for p in notifications(client, "acpls/sessionUpdate"):
        update = p["update"]
        if p["sessionId"] != session_id or update.get("role") != "agent":
            continue
        content = update.get("content")
        blocks = content if isinstance(content, list) else [content]
        out += [b.get("text", "") for b in blocks if isinstance(b, dict)]
    return out


async def test_two_agents_side_by_side(client, workspace: Path, tmp_path: Path) -> None:
    alpha_log, beta_log = tmp_path / "alpha.jsonl", tmp_path / "beta.jsonl"
    alpha = _agent(_reply("alpha", "a", 1, crossed="b-1"), alpha_log, "alpha")
    beta = _agent(_reply("beta", "b", 2, crossed="a-1"), beta_log, "beta")
    await start(client, workspace, alpha)

    first = await command(client, "acpls.newSession", {})
    assert first == {"sessionId": "a-1", "agent": "alpha"}
    second = await command(client, "acpls.newSession", {"agent": beta})
    assert second == {"sessionId": "b-1", "agent": "beta"}

    # Both turns at once: each agent's reply lands in its own session, nothing crossed.
    one, two = await asyncio.gather(
        command(client, "acpls.prompt", {"sessionId": "a-1", "text": "hi alpha"}),
        command(client, "acpls.prompt", {"sessionId": "b-1", "text": "hi beta"}),
    )
    assert one["stopReason"] == two["stopReason"] == "end_turn"
    assert "".join(_texts(client, "a-1")) == "from alpha"
    assert "".join(_texts(client, "b-1")) == "from beta"
    # Each agent was refused the other's session (the scripted agent exits if not: `expect`).
    for log in (alpha_log, beta_log):
        answers = [m for m in agent_log(log) if "error" in m and "id" in m]
        assert any("unknown sessionId" in m["error"]["message"] for m in answers), answers

    # Named by name the second time: the same process, a second session of it.
    again = await command(client, "acpls.newSession", {"agent": "beta"})
    assert again["agent"] == "beta"
    assert [m.get("method") for m in agent_log(beta_log)].count("initialize") == 1
    assert [m.get("method") for m in agent_log(alpha_log)].count("initialize") == 1

    listed = await command(client, "acpls.sessions", {})
    agents_of = {s["sessionId"]: s["agent"] for s in listed["sessions"]}
    assert agents_of == {"a-1": "alpha", "b-1": "beta"}  # the script answers b-1 again
    assert listed["defaultAgent"] == "alpha"
    running = {a["agent"]: a for a in listed["agents"]}
    assert running["alpha"]["default"] is True and running["beta"]["default"] is False
    assert running["alpha"]["state"] == running["beta"]["state"] == "running"
    assert running["beta"]["sessions"] == ["b-1"] and running["alpha"]["sessions"] == ["a-1"]
    states = {
        (p["agent"], p["state"], p.get("default"))
        for p in notifications(client, "acpls/agentStatus")
    }
    assert {("alpha", "running", True), ("beta", "running", False)} <= states

    # Restarting one agent ends only its sessions; the other agent's session goes on.
    await command(client, "acpls.restartAgent", {"agent": "beta"})
    assert [m.get("method") for m in agent_log(beta_log)].count("initialize") == 2
    known = {s["sessionId"] for s in (await command(client, "acpls.sessions", {}))["sessions"]}
    assert known == {"a-1"}
    more = await command(client, "acpls.prompt", {"sessionId": "a-1", "text": "still there?"})
    assert more["stopReason"] == "end_turn"
    assert [m.get("method") for m in agent_log(alpha_log)].count("initialize") == 1


async def test_one_agent_exiting_leaves_the_other_running(
    client, workspace: Path, tmp_path: Path
) -> None:
    alpha_log, beta_log = tmp_path / "alpha.jsonl", tmp_path / "beta.jsonl"
    alpha = _agent(_reply("alpha", "a", 2, crossed="b-1"), alpha_log, "alpha")
    crashing = {
        "protocol": 1,
        "on_new_session": {"sessionId": "b-1"},
        "on_prompt": [{"stderr": "beta falls over"}, {"crash": 7}],
    }
    beta = _agent(crashing, beta_log, "beta")
    await start(client, workspace, alpha)
    await command(client, "acpls.newSession", {})
    await command(client, "acpls.newSession", {"agent": beta})
    try:
        await command(client, "acpls.prompt", {"sessionId": "b-1", "text": "crash"})
        raise AssertionError("the crashed agent's turn must fail")
    except JsonRpcException as exc:
        assert "beta" in str(exc) or "stopped" in str(exc)
    failed = [p for p in notifications(client, "acpls/agentStatus") if p["state"] != "running"]
    failed = [p for p in failed if p["state"] != "starting"]
    assert [p["agent"] for p in failed] == ["beta"], failed
    assert "beta falls over" in failed[0]["message"]
    result = await command(client, "acpls.prompt", {"sessionId": "a-1", "text": "you?"})
    assert result["stopReason"] == "end_turn"
    assert "".join(_texts(client, "a-1")) == "from alpha"


async def test_an_agent_reusing_another_agents_session_id_is_refused(
    client, workspace: Path, tmp_path: Path
) -> None:
    same = {"protocol": 1, "on_new_session": {"sessionId": "s-1"}}
    await start(client, workspace, _agent(same, tmp_path / "a.jsonl", "alpha"))
    await command(client, "acpls.newSession", {})
    try:
        await command(
            client, "acpls.newSession", {"agent": _agent(same, tmp_path / "b.jsonl", "beta")}
        )
        raise AssertionError("a second agent's session with the same id must be refused")
    except JsonRpcException as exc:
        assert "already uses" in str(exc)
    listed = await command(client, "acpls.sessions", {})
    assert [(s["sessionId"], s["agent"]) for s in listed["sessions"]] == [("s-1", "alpha")]


async def test_an_unknown_agent_name_is_invalid_params(client, workspace: Path, tmp_path: Path):
    await start(client, workspace, _agent({"protocol": 1}, tmp_path / "a.jsonl", "alpha"))
    try:
        await command(client, "acpls.newSession", {"agent": "no-such-agent-anywhere"})
        raise AssertionError("an unknown agent must be refused")
    except JsonRpcException as exc:
        assert "no-such-agent-anywhere" in str(exc)


async def test_a_second_agents_sign_in_is_its_own(client, workspace: Path, tmp_path: Path) -> None:
    """The second agent asks for a sign-in (env_var): the editor is asked for it naming that agent,
    that agent alone is restarted with the value and signed in, and the session is its; the
    default agent neither restarts nor ever sees the value."""
    alpha_log, beta_log = tmp_path / "alpha.jsonl", tmp_path / "beta.jsonl"
    alpha_env, beta_env = tmp_path / "alpha-env.json", tmp_path / "beta-env.json"
    asked: list[Any] = []

    @client.feature("acpls/authEnv")
    def auth_env(params: Any) -> Any:
        asked.append(params)
        return {"values": {"BETA_API_KEY": "sk-beta"}}

    def pick(params: Any) -> Any:
        return next(a for a in params.actions or [] if a.title == "Beta key")

    client.answer_message_request = pick
    alpha_script = {"protocol": 1, "on_new_session": {"sessionId": "a-1"}}
    beta_script = {
        "protocol": 1,
        "on_initialize": {
            "authMethods": [
                {
                    "id": "beta-key",
                    "name": "Beta key",
                    "type": "env_var",
                    "vars": [{"name": "BETA_API_KEY"}],
                }
            ]
        },
        "on_new_session": {"sessionId": "b-1"},
        "signed_in_when": {"env": "BETA_API_KEY"},
    }
    alpha = {**scripted(alpha_script, alpha_log, env_dump=alpha_env), "name": "alpha"}
    beta = {**scripted(beta_script, beta_log, env_dump=beta_env), "name": "beta"}
    await start(client, workspace, alpha)
    assert (await command(client, "acpls.newSession", {}))["agent"] == "alpha"
    made = await command(client, "acpls.newSession", {"agent": beta})
    assert made == {"sessionId": "b-1", "agent": "beta"}
    assert [p["agent"] for p in asked] == ["beta"]
    logins = [m["params"] for m in agent_log(beta_log) if m.get("method") == "authenticate"]
    assert logins == [{"methodId": "beta-key"}]
    assert [m.get("method") for m in agent_log(beta_log)].count("initialize") == 2
    assert [m.get("method") for m in agent_log(alpha_log)].count("initialize") == 1
    assert json.loads(beta_env.read_text())["BETA_API_KEY"] == "sk-beta"
    assert "BETA_API_KEY" not in json.loads(alpha_env.read_text())
    # The first agent's session is still there, on its first process.
    listed = await command(client, "acpls.sessions", {})
    assert {s["sessionId"]: s["agent"] for s in listed["sessions"]} == {
        "a-1": "alpha",
        "b-1": "beta",
    }


async def test_continuing_from_a_checkpoint_stays_with_its_agent(
    client, workspace: Path, tmp_path: Path
) -> None:
    """A checkpoint of the second agent's session continues in a session of that agent (through
    the conversation as context), not the default agent's."""
    alpha_log, beta_log = tmp_path / "alpha.jsonl", tmp_path / "beta.jsonl"
    alpha = _agent({"protocol": 1, "on_new_session": {"sessionId": "a-1"}}, alpha_log, "alpha")
    beta_script = {
        "protocol": 1,
        "on_prompt": [
            [
                {
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "beta says"},
                    }
                }
            ]
        ],
    }
    beta = _agent(beta_script, beta_log, "beta")
    await start(client, workspace, alpha)
    await command(client, "acpls.newSession", {})
    made = await command(client, "acpls.newSession", {"agent": beta})
    sid = made["sessionId"]
    await command(client, "acpls.prompt", {"sessionId": sid, "text": "one"})
    await command(client, "acpls.prompt", {"sessionId": sid, "text": "two"})
    second = next(
        c for c in await command(client, "acpls.checkpoints", {"sessionId": sid}) if c["turn"] == 2
    )
    cont = await command(client, "acpls.continueFromCheckpoint", {"id": second["id"]})
    assert cont["via"] == "context" and cont["sessionId"] != sid
    agents = {
        s["sessionId"]: s["agent"]
        for s in (await command(client, "acpls.sessions", {}))["sessions"]
    }
    assert agents[cont["sessionId"]] == "beta", agents
    news = [m for m in agent_log(alpha_log) if m.get("method") == "session/new"]
    assert len(news) == 1  # alpha made only its own first session


def _beta_says() -> dict[str, Any]:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "beta"}}
    return {"protocol": 1, "on_prompt": [[{"update": chunk}]]}


async def _second_turn_of_beta(client: Any, workspace: Path, tmp_path: Path) -> tuple[str, dict]:
    """Default agent alpha; a session of beta with two turns. Returns beta's session id and the
    checkpoint of its second turn."""
    alpha = _agent({"protocol": 1}, tmp_path / "alpha.jsonl", "alpha")
    await start(client, workspace, alpha)
    made = await command(client, "acpls.newSession", {"agent": _beta(tmp_path)})
    sid = made["sessionId"]
    await command(client, "acpls.prompt", {"sessionId": sid, "text": "one"})
    await command(client, "acpls.prompt", {"sessionId": sid, "text": "two"})
    listed = await command(client, "acpls.checkpoints", {"sessionId": sid})
    return sid, next(c for c in listed if c["turn"] == 2)


def _beta(tmp_path: Path) -> dict[str, Any]:
    return _agent(_beta_says(), tmp_path / "beta.jsonl", "beta")


async def _agent_of(client: Any, session_id: str) -> str:
    listed = await command(client, "acpls.sessions", {})
    return next(s["agent"] for s in listed["sessions"] if s["sessionId"] == session_id)


async def test_continuing_from_a_closed_sessions_checkpoint_stays_with_its_agent(
    client, workspace: Path, tmp_path: Path
) -> None:
    """Once acpls no longer holds the session (closed), the checkpoint still says whose it was."""
    sid, second = await _second_turn_of_beta(client, workspace, tmp_path)
    assert second["agent"] == "beta"
    await command(client, "acpls.closeSession", {"sessionId": sid})
    cont = await command(client, "acpls.continueFromCheckpoint", {"id": second["id"]})
    assert cont["via"] == "context"
    assert await _agent_of(client, cont["sessionId"]) == "beta" == cont["agent"]
    assert not [m for m in agent_log(tmp_path / "alpha.jsonl") if m.get("method") == "session/new"]


async def test_continuing_in_another_acpls_goes_to_the_recorded_agent(
    client, workspace: Path, tmp_path: Path, server_env: dict[str, str]
) -> None:
    """A later acpls (same state directory) reads the agent from the checkpoint log: an agent it
    cannot start by name is an error naming it (not the default agent); once a session of that
    agent runs, the continuation is on it."""
    _, second = await _second_turn_of_beta(client, workspace, tmp_path)
    await stop_client(client)
    config = ClientServerConfig(
        server_command=SERVER, client_factory=make_client, server_env=server_env
    )
    later = await config.start()
    assert isinstance(later, LanguageClient)
    record_custom(later)
    try:
        await start(later, workspace, _agent({"protocol": 1}, tmp_path / "alpha2.jsonl", "alpha"))
        listed = await command(later, "acpls.checkpoints", {})
        assert next(c for c in listed if c["id"] == second["id"])["agent"] == "beta"
        try:
            await command(later, "acpls.continueFromCheckpoint", {"id": second["id"]})
            raise AssertionError("continued on another agent than beta")
        except JsonRpcException as exc:
            assert exc.code == -32602 and "agent beta" in str(exc), exc
        assert not [
            m for m in agent_log(tmp_path / "alpha2.jsonl") if m.get("method") == "session/new"
        ]
        await command(later, "acpls.newSession", {"agent": _beta(tmp_path)})
        cont = await command(later, "acpls.continueFromCheckpoint", {"id": second["id"]})
        assert cont["via"] == "context"
        assert await _agent_of(later, cont["sessionId"]) == "beta" == cont["agent"]
    finally:
        await stop_client(later)


async def test_the_agents_setting_names_more_agents(
    client, workspace: Path, tmp_path: Path
) -> None:
    """`agents` (one setting, sent by both front ends): a session asks for an agent by its name
    there, and the entry decides what runs (an object entry is named by its key); a changed entry
    restarts that agent at its next request."""
    beta_log = tmp_path / "beta.jsonl"
    beta = scripted(_beta_says(), beta_log)
    alpha = _agent({"protocol": 1}, tmp_path / "alpha.jsonl", "alpha")
    await start(client, workspace, alpha, agents={"beta": beta, "fast": "demo"})
    made = await command(client, "acpls.newSession", {"agent": "beta"})
    assert made["agent"] == "beta"
    assert [m.get("method") for m in agent_log(beta_log)].count("session/new") == 1
    assert (await command(client, "acpls.newSession", {"agent": "fast"}))["agent"] == "demo"
    # A changed entry: the next session of beta runs on the new command.
    other_log = tmp_path / "beta2.jsonl"
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"acpls": {"agents": {"beta": scripted(_beta_says(), other_log)}}}
        )
    )
    again = await command(client, "acpls.newSession", {"agent": "beta"})
    assert again["agent"] == "beta"
    assert [m.get("method") for m in agent_log(other_log)].count("session/new") == 1
    assert [m.get("method") for m in agent_log(beta_log)].count("session/new") == 1
