"""The real Copilot CLI beyond the full turns of test_full_turns.py: its session/new habits.
Its `available_commands_update` arrives before the `session/new` result (for a session acpls does
not know yet), and its mode ids are URLs; both reach the editor as for any agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.e2e.conftest import command
from tests.real_agents.harness import AGENTS, START_TIMEOUT, agent_run

MODES = "https://agentclientprotocol.com/protocol/session-modes"


async def test_copilot_early_commands_and_url_mode_ids(tmp_path: Path, server_env: dict[str, str]):
    async with agent_run(AGENTS["copilot"], "answer", tmp_path, server_env) as run:
        # Sent before the session/new result: kept, then given to the editor with the session
        # (through the session's paced queue, so it may land just after acpls.newSession answers).
        commands: list[dict] = []
        for _ in range(100):
            commands = [u for u in run.updates() if u.get("sessionUpdate") == "available_commands"]
            if commands:
                break
            await asyncio.sleep(0.05)
        assert commands, run.updates()
        names = {c["name"] for c in commands[-1]["availableCommands"]}
        assert {"allow-all", "permissions"} <= names, names
        (modes,) = [u for u in run.updates() if u.get("sessionUpdate") == "modes"]
        assert modes["currentModeId"] == f"{MODES}#agent", modes
        ids = [m["id"] for m in modes["availableModes"]]
        assert {f"{MODES}#agent", f"{MODES}#plan"} <= set(ids), ids
        # A URL mode id is set like any other, and the turn runs in it.
        await asyncio.wait_for(
            command(
                run.client,
                "acpls.setMode",
                {"sessionId": run.session_id, "modeId": f"{MODES}#plan"},
            ),
            START_TIMEOUT,
        )
        result = await run.prompt("Plan the rounding")
        assert result["stopReason"] == "end_turn", run.log()
        current = [u["currentModeId"] for u in run.updates() if u.get("sessionUpdate") == "modes"]
        assert current[-1] == f"{MODES}#plan", current
        await run.exit_editor()
