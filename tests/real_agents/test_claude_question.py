"""Claude Code's AskUserQuestion goes through ACP elicitation: the real claude-agent-acp, its model
played by the scripted model server, asks through acpls, the editor (custom mode) answers the form,
and the answer reaches the model as the tool's result."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import command, start
from tests.model_server import ModelServer, load_script
from tests.real_agents.installed import executable
from tests.real_agents.test_installed import quiet_env

TURN_TIMEOUT = 180


def last_choices(properties: dict[str, Any]) -> dict[str, Any]:
    """What a user picking the last offered choice of every choice field answers (free-text
    fields left empty)."""
    content: dict[str, Any] = {}
    for name, prop in properties.items():
        if prop.get("type") == "array":
            items = prop.get("items") or {}
            options = items.get("enum") or [o["const"] for o in items.get("anyOf", [])]
            content[name] = options[-1:]
        elif prop.get("enum") or prop.get("oneOf"):
            options = prop.get("enum") or [o["const"] for o in prop["oneOf"]]
            content[name] = options[-1]
    return content


def tool_results(request: Any) -> list[str]:
    body = request.body if isinstance(request.body, dict) else {}
    out = []
    for message in body.get("messages", []):
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    out.append(json.dumps(block.get("content")))
    return out


async def test_ask_user_question_is_answered_through_elicitation(
    client, workspace: Path, tmp_path: Path
):
    home = tmp_path / "home"
    home.mkdir()
    asked: list[dict[str, Any]] = []

    @client.feature("acpls/elicitation")
    def on_question(params: Any) -> Any:
        asked.append(params)
        props = params["requestedSchema"].get("properties", {})
        return {"action": "accept", "content": last_choices(props)}

    client.answer_permission = lambda p: {
        "optionId": next(o["optionId"] for o in p["options"] if o["kind"].startswith("allow"))
    }
    script = load_script("claude", "ask_question", workspace=str(workspace))
    with ModelServer(script, log_path=tmp_path / "model.jsonl") as model:
        env = quiet_env("claude", home) | {
            "ANTHROPIC_BASE_URL": model.url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false",
        }
        agent = {"command": str(executable("claude")), "args": [], "env": env}
        await start(client, workspace, agent, custom=True, env={"remove": ["*"]})
        result = await asyncio.wait_for(
            command(client, "acpls.prompt", {"text": "Pick a colour with me"}), TURN_TIMEOUT
        )
        log = model.format_log()
        assert result["stopReason"] == "end_turn", log
        assert len(asked) == 1, log
        question = asked[0]
        assert question["mode"] == "form"
        assert question["message"] == "Which colour should the button be?", question
        titles = json.dumps(question["requestedSchema"])
        assert '"Red"' in titles and '"Green"' in titles and "Warm" in titles, question
        # The model got the choice back as AskUserQuestion's result.
        results = [t for r in model.requests if r.answer == "step 1" for t in tool_results(r)]
        assert any('=\\"Green\\"' in t for t in results), (results, log)
