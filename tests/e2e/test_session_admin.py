"""acpls.closeSession, acpls.deleteSession and acpls.logout against a scripted agent (v1 and v2):
what reaches the agent, and a closed session's open question withdrawn (contract section 8)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import agent_log, command, scripted, start
from tests.schema import validate_client_message


def sent(log: Path, method: str, protocol: int) -> list[dict[str, Any]]:
    out = []
    for message in agent_log(log):
        if message.get("method") == method:
            validate_client_message(protocol, {"jsonrpc": "2.0", "id": 1, **message})
            out.append(message["params"])
    return out


def capabilities(protocol: int) -> dict[str, Any]:
    if protocol == 1:
        return {
            "protocolVersion": 1,
            "agentInfo": {"name": "scripted-agent", "version": "0"},
            "agentCapabilities": {
                "sessionCapabilities": {"close": {}, "delete": {}},
                "auth": {"logout": {}},
            },
        }
    return {
        "protocolVersion": 2,
        "info": {"name": "scripted-agent", "version": "0"},
        "capabilities": {"session": {"delete": {}}},
    }


@pytest.mark.parametrize("protocol", [1, 2])
async def test_close_delete_and_logout_reach_the_agent(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": protocol,
        "on_initialize": capabilities(protocol),
        "on_request": {"logout": {}, "auth/logout": {}},
    }
    await start(client, workspace, scripted(script, log))
    first = (await command(client, "acpls.newSession", {}))["sessionId"]
    second = (await command(client, "acpls.newSession", {}))["sessionId"]
    assert await command(client, "acpls.closeSession", {"sessionId": first}) == {
        "sessionId": first,
        "closedByAgent": True,
    }
    assert sent(log, "session/close", protocol) == [{"sessionId": first}]
    summary = await command(client, "acpls.sessions", {})
    assert [s["sessionId"] for s in summary["sessions"]] == [second]
    await command(client, "acpls.deleteSession", {"sessionId": second})
    assert sent(log, "session/delete", protocol) == [{"sessionId": second}]
    assert (await command(client, "acpls.sessions", {}))["sessions"] == []
    await command(client, "acpls.logout", {})
    assert sent(log, "logout" if protocol == 1 else "auth/logout", protocol) == [{}]


async def test_without_the_capabilities(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1}, log))
    session = (await command(client, "acpls.newSession", {}))["sessionId"]
    with pytest.raises(JsonRpcException, match="does not delete"):
        await command(client, "acpls.deleteSession", {"sessionId": session})
    with pytest.raises(JsonRpcException, match="does not offer to sign out"):
        await command(client, "acpls.logout", {})
    # The scripted v1 agent offers session/close: closed there and here.
    closed = await command(client, "acpls.closeSession", {})
    assert closed == {"sessionId": session, "closedByAgent": True}


async def test_closing_a_session_withdraws_its_open_question(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    asked = asyncio.Event()
    cancelled: list[Any] = []

    @client.feature("acpls/elicitation")
    async def on_question(params: Any) -> Any:
        asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(params)
            raise

    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    params = {"sessionId": "$sessionId", "mode": "form", "message": "?", "requestedSchema": schema}
    script = {
        "protocol": 1,
        "on_prompt": [
            {"request": "elicitation/create", "params": params, "save": "a"},
            {"wait_cancel": True},
        ],
    }
    await start(client, workspace, scripted(script, log))
    prompt = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "ask"}))
    await asyncio.wait_for(asked.wait(), 20)
    await command(client, "acpls.closeSession", {})
    with pytest.raises(JsonRpcException, match="closed"):
        await asyncio.wait_for(prompt, 20)
    answers = [m["result"] for m in agent_log(log) if "action" in (m.get("result") or {})]
    assert answers == [{"action": "cancel"}]
    async with asyncio.timeout(20):
        while not cancelled:  # noqa: ASYNC110 - the editor's handler records the withdrawal
            await asyncio.sleep(0.02)
