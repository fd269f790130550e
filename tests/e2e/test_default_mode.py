"""`defaultMode`: the mode an agent's new sessions are put in right after `session/new` (Claude
Code starts in `auto`, which asks nothing), through the real acpls; a mode the agent does not offer
or refuses is shown to the user, and generic editors see the mode in the transcript."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from acpls.translate.uris import uri_to_path
from tests.e2e.conftest import agent_log, as_dict, command, notifications, scripted, start

MODES = {
    "currentModeId": "auto",
    "availableModes": [
        {"id": "auto", "name": "Auto"},
        {"id": "default", "name": "Default"},
    ],
}


def agent(script: dict[str, Any], log: Path) -> dict[str, Any]:
    return {**scripted(script, log), "name": "claude"}


def set_modes(log: Path) -> list[Any]:
    return [m["params"]["modeId"] for m in agent_log(log) if m.get("method") == "session/set_mode"]


def warnings(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Warning]


async def current_mode_shown(client: LanguageClient, expected: str) -> str | None:
    """The last mode the editor was told, once it is `expected` (updates are pumped after the
    command's answer) or after a few seconds."""
    for _ in range(200):
        shown = mode_updates(client)
        if shown and shown[-1]["currentModeId"] == expected:
            break
        await asyncio.sleep(0.05)
    shown = mode_updates(client)
    return shown[-1]["currentModeId"] if shown else None


def mode_updates(client: LanguageClient) -> list[dict[str, Any]]:
    updates = [as_dict(p)["update"] for p in notifications(client, "acpls/sessionUpdate")]
    return [u for u in updates if u.get("sessionUpdate") == "modes"]


async def test_default_mode_is_set_after_session_new(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_new_session": {"sessionId": "s1", "modes": MODES},
        "on_set_mode": {},
    }
    await start(client, workspace, agent(script, log), defaultMode={"claude": "default"})
    await command(client, "acpls.newSession", {})
    assert set_modes(log) == ["default"]
    assert await current_mode_shown(client, "default") == "default"
    assert warnings(client) == []


async def test_default_mode_of_another_agent_or_already_current_sends_nothing(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_new_session": {"sessionId": "s1", "modes": MODES}}
    await start(
        client, workspace, agent(script, log), defaultMode={"gemini": "yolo", "claude": "auto"}
    )
    await command(client, "acpls.newSession", {})
    assert set_modes(log) == []
    assert warnings(client) == []


async def test_a_mode_the_agent_does_not_offer_is_shown(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_new_session": {"sessionId": "s1", "modes": MODES}}
    await start(client, workspace, agent(script, log), defaultMode={"claude": "full-access"})
    await command(client, "acpls.newSession", {})
    assert set_modes(log) == []
    (warning,) = warnings(client)
    assert "full-access" in warning and "auto, default" in warning, warning
    updates = [as_dict(p)["update"] for p in notifications(client, "acpls/sessionUpdate")]
    (notice,) = [u for u in updates if u.get("sessionUpdate") == "notice"]
    assert notice["severity"] == "warning" and "full-access" in notice["title"], notice


async def test_a_mode_the_agent_refuses_is_shown(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    """Codex's default mode needs a sandbox some machines lack: a refusal is never silent."""
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_new_session": {"sessionId": "s1", "modes": MODES},
        "on_set_mode": [{"respond_error": {"code": -32603, "message": "sandbox unavailable"}}],
    }
    await start(client, workspace, agent(script, log), defaultMode={"claude": "default"})
    result = await command(client, "acpls.newSession", {})
    assert result["sessionId"] == "s1"  # the session is there, in the agent's own mode
    assert set_modes(log) == ["default"]
    (warning,) = warnings(client)
    assert "sandbox unavailable" in warning and "'default'" in warning, warning
    assert await current_mode_shown(client, "auto") == "auto"


async def test_generic_mode_transcript_shows_the_mode(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_new_session": {"sessionId": "s1", "modes": MODES},
        "on_set_mode": {},
        "on_prompt": [
            {"update": {"sessionUpdate": "current_mode_update", "currentModeId": "auto"}}
        ],
    }
    await start(
        client, workspace, agent(script, log), custom=False, defaultMode={"claude": "default"}
    )
    await command(client, "acpls.prompt", {"text": "hi"})
    (transcript,) = [d.uri for d in client.shown_documents if d.uri.endswith(".md")]
    text = Path(uri_to_path(transcript)).read_text(encoding="utf-8")
    first, second = text.index("> mode: Default (`default`)"), text.index("> mode: Auto (`auto`)")
    assert first < second, text
