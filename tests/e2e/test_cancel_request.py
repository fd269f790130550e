"""The agent's `$/cancel_request`, against the scripted agent: withdrawing its permission request
withdraws the editor's prompt (LSP `$/cancelRequest`), and acpls answers it RequestCancelled."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import agent_log, command, scripted, start

OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


async def test_agent_cancel_request_withdraws_the_permission_prompt(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    asked = asyncio.Event()
    withdrawn: list[Any] = []

    async def never(params: Any) -> Any:
        asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            withdrawn.append(params)
            raise

    client.answer_permission = never
    params = {
        "sessionId": "$sessionId",
        "toolCall": {"toolCallId": "t1", "title": "Run rm", "kind": "execute", "status": "pending"},
        "options": OPTIONS,
    }
    cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}
    script = {
        "protocol": 1,
        "on_prompt": [
            {"request": "session/request_permission", "params": params, "wait": False},
            {"sleep": 1},
            {"send": cancel},
            {"sleep": 1},
        ],
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "clean up"})
    assert asked.is_set()
    answers = [m for m in agent_log(log) if m.get("id") == 1 and "method" not in m]
    assert answers, "the withdrawn request was never answered"
    assert answers[0]["error"]["code"] == -32800  # RequestCancelled, as ACP says
    async with asyncio.timeout(10):
        while not withdrawn:  # noqa: ASYNC110 - the editor's handler records the withdrawal
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("protocol", [1, 2])
async def test_editor_cancel_request_of_a_prompt_cancels_the_turn(
    client, workspace, tmp_path, protocol
):
    """The editor gives up on `acpls.prompt` (LSP `$/cancelRequest`): the agent is told to stop
    (`session/cancel`), as when the user cancels."""
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_prompt": [{"wait_cancel": True}]}
    await start(client, workspace, scripted(script, log))
    session = (await command(client, "acpls.newSession", {}))["sessionId"]
    params = types.ExecuteCommandParams(command="acpls.prompt", arguments=[{"text": "long"}])
    future = client.protocol.send_request("workspace/executeCommand", params, msg_id="p-1")
    async with asyncio.timeout(20):
        while not [m for m in agent_log(log) if m.get("method") == "session/prompt"]:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    client.protocol.notify("$/cancelRequest", types.CancelParams(id="p-1"))
    async with asyncio.timeout(20):
        while not [m for m in agent_log(log) if m.get("method") == "session/cancel"]:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    cancels = [m["params"] for m in agent_log(log) if m.get("method") == "session/cancel"]
    assert cancels == [{"sessionId": session}]
    async with asyncio.timeout(20):
        while not future.done():  # noqa: ASYNC110 - pygls' concurrent future
            await asyncio.sleep(0.05)
