"""A mentioned file reaches the model: the real Claude Code (claude-agent-acp, which takes
embedded context) gets an `@file` mention of a buffer with unsaved changes from acpls as an
embedded resource, and its request to the scripted model holds the buffer's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import command
from tests.real_agents.harness import AGENTS, SHOP, agent_run

UNSAVED = SHOP.replace("return item.cost", "return item.cost  # unsaved: in euros")


@pytest.mark.parametrize("variant", ["claude-v1", "claude-v2"])
async def test_claude_model_request_holds_the_mentioned_buffer(
    tmp_path: Path, server_env, variant: str
):
    async with agent_run(AGENTS[variant], "mention_turn", tmp_path, server_env, custom=True) as run:
        run.open(run.shop)
        run.editor.type_text(run.shop, UNSAVED)
        result = await command(
            run.client,
            "acpls.prompt",
            {
                "sessionId": run.session_id,
                "text": "What does this file do?",
                "mentions": [{"type": "file", "uri": run.shop.as_uri()}],
            },
        )
        assert result["stopReason"] == "end_turn", run.log()
        bodies = [json.dumps(r.body, ensure_ascii=False) for r in run.model.requests]
        asking = [b for b in bodies if "What does this file do?" in b]
        assert asking, run.log()
        # The unsaved buffer, not the file on disk, is what the model was given.
        assert any("# unsaved: in euros" in b for b in asking), run.log()
        await run.exit_editor()
