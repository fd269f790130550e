"""`defaultConfig` with a real agent: Claude Code's `model` option set for every new session, so
the model server is asked for that model (not Claude Code's default), and the editor shows it."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import as_dict, notifications
from tests.real_agents.harness import AGENTS, agent_run


def shown_model(run) -> str | None:
    """The model option's value the editor was last told of."""
    current = None
    for params in notifications(run.client, "acpls/sessionUpdate"):
        update = as_dict(params)["update"]
        for option in update.get("configOptions") or []:
            if option.get("configId") == "model":
                current = option.get("currentValue")
    return current


async def test_claudes_model_is_set_for_its_new_sessions(
    tmp_path: Path, server_env: dict[str, str]
):
    spec = AGENTS["claude-v2"]
    defaults = {"claude-agent-acp": {"model": "haiku", "effort": "low"}}
    async with agent_run(spec, "edit_turn", tmp_path, server_env, defaultConfig=defaults) as run:
        assert shown_model(run) == "haiku", notifications(run.client, "acpls/sessionUpdate")
        run.editor.answer_permission = lambda params: {"optionId": "allow-once"}
        await run.prompt("Round the total and write a report")
        models = {
            r.body.get("model") for r in run.model.main_requests() if isinstance(r.body, dict)
        }
        assert models and all("haiku" in str(m) for m in models), run.log()
        await run.exit_editor()
