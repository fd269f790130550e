"""Two real published agents side by side in one acpls (#15.3): Claude Code (ACP v1) and Gemini
CLI, each against its own scripted model server, each session in its own workspace folder. Both
turns run at once (each waits at its permission prompt until the other one's is asked too, so they
interleave by construction), each writes its own notes.md, and nothing of one reaches the other:
updates, permission requests, follow and review stay with their session's agent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.e2e.conftest import as_dict, command, notifications, start
from tests.e2e.disk_editor import disk_editor
from tests.model_server import ModelServer, load_script
from tests.real_agents.harness import (
    NOTES,
    START_TIMEOUT,
    TURN_TIMEOUT,
    _base_env,
    _claude_env,
    _gemini_env,
    _gemini_home,
    disk_text,
    make_workspace,
)
from tests.real_agents.installed import executable


async def test_claude_and_gemini_side_by_side(tmp_path: Path, server_env: dict[str, str]) -> None:
    claude_ws = make_workspace(tmp_path / "claude-ws")
    gemini_ws = make_workspace(tmp_path / "gemini-ws")
    claude_home, gemini_home = tmp_path / "claude-home", tmp_path / "gemini-home"
    claude_home.mkdir()
    gemini_home.mkdir()
    claude_script = load_script("claude", "write_turn", workspace=str(claude_ws))
    gemini_script = load_script("gemini", "write_turn", workspace=str(gemini_ws))
    with (
        ModelServer(claude_script, log_path=tmp_path / "claude-model.jsonl") as claude_model,
        ModelServer(gemini_script, log_path=tmp_path / "gemini-model.jsonl") as gemini_model,
    ):
        _gemini_home(gemini_model.url, gemini_home)
        claude = {
            "name": "claude",
            "command": str(executable("claude")),
            "args": [],
            "env": _base_env(claude_home) | _claude_env(claude_model.url, claude_home),
        }
        gemini = {
            "name": "gemini",
            "command": str(executable("gemini")),
            "args": ["--acp"],
            "env": _base_env(gemini_home) | _gemini_env(gemini_model.url, gemini_home),
        }
        async with disk_editor(server_env) as editor:
            client = editor.client
            # Each turn's permission prompt is answered only once both agents have asked: the two
            # turns are provably in flight at the same time.
            asked: dict[str, dict[str, Any]] = {}
            both = asyncio.Event()

            async def answer(params: Any) -> dict[str, Any]:
                params = as_dict(params)
                asked[params["sessionId"]] = params
                if len(asked) == 2:
                    both.set()
                await asyncio.wait_for(both.wait(), TURN_TIMEOUT)
                allow = next(o for o in params["options"] if o["kind"] == "allow_once")
                return {"optionId": allow["optionId"]}

            editor.answer_permission = answer
            await start(
                client,
                claude_ws,
                claude,
                protocolVersion=1,
                env={"remove": ["*"]},
                more_folders=(gemini_ws,),
            )
            first = await asyncio.wait_for(command(client, "acpls.newSession", {}), START_TIMEOUT)
            assert first["agent"] == "claude"
            await asyncio.wait_for(
                command(
                    client, "acpls.setMode", {"sessionId": first["sessionId"], "modeId": "default"}
                ),
                START_TIMEOUT,
            )
            second = await asyncio.wait_for(
                command(client, "acpls.newSession", {"agent": gemini, "cwd": str(gemini_ws)}),
                START_TIMEOUT,
            )
            assert second["agent"] == "gemini"
            c_id, g_id = first["sessionId"], second["sessionId"]
            assert c_id != g_id

            turns = await asyncio.wait_for(
                asyncio.gather(
                    command(client, "acpls.prompt", {"sessionId": c_id, "text": "Write the notes"}),
                    command(client, "acpls.prompt", {"sessionId": g_id, "text": "Write the notes"}),
                ),
                TURN_TIMEOUT,
            )
            logs = f"{claude_model.format_log()}\n{gemini_model.format_log()}"
            assert [t["stopReason"] for t in turns] == ["end_turn", "end_turn"], logs
            assert disk_text(claude_ws / "notes.md") == NOTES, logs
            assert disk_text(gemini_ws / "notes.md") == NOTES, logs

            # Each permission prompt was its own agent's, about its own workspace.
            assert set(asked) == {c_id, g_id}
            for session_id, ws in ((c_id, claude_ws), (g_id, gemini_ws)):
                paths = [
                    loc["path"] for loc in asked[session_id]["toolCall"].get("locations") or []
                ]
                assert paths and all(p.startswith(str(ws)) for p in paths), asked[session_id]

            # Every update of a session names only its own workspace's files.
            updates = [as_dict(p) for p in notifications(client, "acpls/sessionUpdate")]
            for session_id, other in ((c_id, gemini_ws), (g_id, claude_ws)):
                mine = [u for u in updates if u["sessionId"] == session_id]
                assert mine, session_id
                assert str(other) not in repr(mine), session_id

            # One acpls, one process per agent, each with its session.
            listed = await command(client, "acpls.sessions", {})
            running = {a["agent"]: a for a in listed["agents"]}
            assert running["claude"]["sessions"] == [c_id]
            assert running["gemini"]["sessions"] == [g_id]
            assert running["claude"]["pid"] != running["gemini"]["pid"]

            # Review lists each change with its own session.
            files = {f["path"]: f for f in (await command(client, "acpls.review", {}))["files"]}
            assert files[str(claude_ws / "notes.md")].get("sessionId") == c_id, files
            assert files[str(gemini_ws / "notes.md")].get("sessionId") == g_id, files
