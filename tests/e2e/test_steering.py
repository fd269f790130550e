"""Steering a running turn (`acpls.steer`, Claude Code's `_session/steering`) against the scripted
agent v1 and v2: offered only where the agent advertises it, the message reaches the agent while
the turn runs, and the agent's outcome comes back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import agent_log, command, notifications, scripted, start
from tests.schema import validate_client_message


def steerable(protocol: int) -> dict[str, Any]:
    return {
        "protocol": protocol,
        "on_initialize": {"_meta": {"steering": {"supported": True}}},
        "on_request": {"_session/steering": {"outcome": "injected"}},
        "on_prompt": [{"sleep": 1.0}],
    }


@pytest.mark.parametrize("protocol", [1, 2])
async def test_steer_reaches_the_running_turn(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted(steerable(protocol), log))
    session = (await command(client, "acpls.newSession", {}))["sessionId"]
    running = [s for s in notifications(client, "acpls/agentStatus") if s["state"] == "running"]
    assert running[-1]["canSteer"] is True
    turn = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "refactor"}))
    await asyncio.sleep(0.3)
    steered = await command(client, "acpls.steer", {"text": "use tabs, not spaces"})
    assert steered == {"sessionId": session, "outcome": "injected"}
    assert (await turn)["stopReason"] == "end_turn"
    sent = [m for m in agent_log(log) if m.get("method") == "_session/steering"]
    validate_client_message(protocol, {"jsonrpc": "2.0", "id": 1, **sent[0]})
    assert sent[0]["params"] == {
        "sessionId": session,
        "prompt": [{"type": "text", "text": "use tabs, not spaces"}],
        "_meta": {"steering": {"idleBehavior": "promptRequired"}},
    }


async def test_no_steering_without_the_agents_word(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1}, log))
    await command(client, "acpls.newSession", {})
    running = [s for s in notifications(client, "acpls/agentStatus") if s["state"] == "running"]
    assert running[-1]["canSteer"] is False
    with pytest.raises(JsonRpcException, match="queue the prompt"):
        await command(client, "acpls.steer", {"text": "x"})
    assert not [m for m in agent_log(log) if m.get("method") == "_session/steering"]


@pytest.mark.parametrize("protocol", [1, 2])
async def test_generic_prompts_sent_while_a_turn_runs_wait_their_turn(
    client, workspace, tmp_path, protocol
):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_prompt": [[{"sleep": 1.0}], []]}
    await start(client, workspace, scripted(script, log), custom=False)
    await command(client, "acpls.newSession", {})
    first = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "first"}))
    await asyncio.sleep(0.3)
    second = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "second"}))
    results = await asyncio.wait_for(asyncio.gather(first, second), 30)
    assert [r["stopReason"] for r in results] == ["end_turn", "end_turn"]
    prompts = [
        m["params"]["prompt"][0]["text"]
        for m in agent_log(log)
        if m.get("method") == "session/prompt"
    ]
    assert prompts == ["first", "second"]
