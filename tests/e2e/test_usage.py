"""The context meter end to end: usage_update from a scripted agent (v1 and v2) reaches a custom-mode
editor as `usage`, and a generic editor's transcript (with a warning near the limit)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.conftest import as_dict, command, notifications, scripted, start


def usage_script(protocol: int) -> dict:
    def step(used: int) -> dict:
        cost = {"amount": 0.25, "currency": "USD"}
        return {
            "update": {"sessionUpdate": "usage_update", "used": used, "size": 1000, "cost": cost}
        }

    return {"protocol": protocol, "on_prompt": [step(300), step(850), step(870)]}


@pytest.mark.parametrize("protocol", [1, 2])
async def test_generic_transcript_meter_and_warning(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted(usage_script(protocol), log), custom=False)
    await command(client, "acpls.prompt", {"text": "go"})
    warnings = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert warnings == [
        "acpls: the agent's context is nearly full (context 850/1,000 (85%) · 0.25 USD)"
    ]
    transcript = next(
        Path(d.uri.removeprefix("file://")) for d in client.shown_documents if d.uri.endswith(".md")
    )
    text = transcript.read_text(encoding="utf-8")
    assert "*turn ended: end_turn · context 870/1,000 (87%) · 0.25 USD*" in text


async def test_custom_mode_gets_usage_updates(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted(usage_script(2), log))
    await command(client, "acpls.prompt", {"text": "go"})
    usages = [
        as_dict(p)["update"]
        for p in notifications(client, "acpls/sessionUpdate")
        if as_dict(p)["update"]["sessionUpdate"] == "usage"
    ]
    assert usages and usages[-1]["used"] == 870 and usages[-1]["size"] == 1000
    assert not [m for m in client.messages if m.type == types.MessageType.Warning]


async def test_end_of_turn_tokens_in_the_result_and_the_transcript(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    counts = {"totalTokens": 1234, "inputTokens": 1000, "outputTokens": 234}
    script = {
        "protocol": 1,
        "on_prompt": [{"respond": {"stopReason": "end_turn", "usage": counts}}],
    }
    await start(client, workspace, scripted(script, log), custom=False)
    result = await command(client, "acpls.prompt", {"text": "go"})
    assert result["usage"] == counts
    transcript = next(
        Path(d.uri.removeprefix("file://")) for d in client.shown_documents if d.uri.endswith(".md")
    )
    text = transcript.read_text(encoding="utf-8")
    assert "*turn ended: end_turn · 1,234 tokens (1,000 in, 234 out)*" in text
