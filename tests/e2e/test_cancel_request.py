"""The agent's `$/cancel_request`, against the scripted agent: withdrawing its permission request
withdraws the editor's prompt (LSP `$/cancelRequest`), and acpls answers it RequestCancelled."""

from __future__ import annotations

import asyncio
from typing import Any

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
