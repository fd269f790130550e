"""The ACP Python SDK's example agent (`examples/echo_agent.py` of agent-client-protocol 0.12.1,
from its sdist) completes prompt turns through acpls, in both editor modes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import as_dict, command, notifications, start
from tests.interop.conftest import ECHO_AGENT, require

TURN_TIMEOUT = 30


def echo_agent() -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(require(ECHO_AGENT, "the SDK's echo agent"))]}


def agent_text(client: Any) -> str:
    """The agent's reply as an acpls/sessionUpdate custom-mode editor received it."""
    chunks = []
    for params in notifications(client, "acpls/sessionUpdate"):
        update = as_dict(params)["update"]
        if (
            update.get("sessionUpdate") in ("message_chunk", "message")
            and update.get("role") == "agent"
        ):
            content = update.get("content")
            items = content if isinstance(content, list) else [content]
            chunks += [c.get("text", "") for c in items if isinstance(c, dict)]
    return "".join(chunks)


@pytest.mark.parametrize("protocol", ["auto", 1])
async def test_echo_agent_turn_in_custom_mode(client, workspace: Path, protocol: Any):
    await start(client, workspace, echo_agent(), protocolVersion=protocol)
    text = "Hello from an acpls test"
    result = await asyncio.wait_for(command(client, "acpls.prompt", {"text": text}), TURN_TIMEOUT)
    assert result["stopReason"] == "end_turn"
    assert agent_text(client) == text


async def test_echo_agent_turn_in_generic_mode(client, workspace: Path, state_dir: Path):
    await start(client, workspace, echo_agent(), custom=False)
    text = "Echo this back, please"
    result = await asyncio.wait_for(command(client, "acpls.prompt", {"text": text}), TURN_TIMEOUT)
    assert result["stopReason"] == "end_turn"
    transcripts = list((state_dir / "acpls" / "transcripts").glob("*.md"))
    assert len(transcripts) == 1
    body = transcripts[0].read_text(encoding="utf-8")
    assert f"**You:** {text}" in body
    assert f":** {text}" in body.split(f"**You:** {text}", 1)[1], body
    assert any(text in m.message for m in client.messages if "finished (end_turn)" in m.message)
