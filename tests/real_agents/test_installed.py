"""Each pinned agent, as `make agents` installed it, starts through acpls and reports the pinned
version: the install is whole (native binaries from npm's optional dependencies included) and the
command line acpls uses for it speaks ACP."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import as_dict, command, notifications, start
from tests.real_agents.installed import copilot_cache_home, executable, pinned

START_TIMEOUT = 90
# Nothing listens there: no agent reaches a model (or anything else) from these tests.
DEAD_URL = "http://127.0.0.1:9"

ACP_ARGS = {
    "claude": [],
    "gemini": ["--acp"],
    "codex": [],
    "opencode": ["acp"],
    "qwen": ["--acp"],
    "copilot": ["--acp"],
}


def quiet_env(name: str, home: Path) -> dict[str, str]:
    node_dir = os.path.dirname(shutil.which("node") or "/usr/bin/node")
    env = {
        "PATH": os.pathsep.join(dict.fromkeys([node_dir, "/usr/local/bin", "/usr/bin", "/bin"])),
        "HOME": str(home),
    }
    if name == "copilot":
        env |= {
            "COPILOT_CACHE_HOME": str(copilot_cache_home()),
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": DEAD_URL + "/v1",
            "COPILOT_PROVIDER_API_KEY": "dummy",
            "COPILOT_MODEL": "gpt-4.1",
        }
    if name == "opencode":
        env |= {"OPENCODE_DISABLE_AUTOUPDATE": "true", "OPENCODE_DISABLE_MODELS_FETCH": "true"}
    if name == "codex":
        env |= {"CODEX_HOME": str(home / ".codex"), "OPENAI_API_KEY": "dummy"}
    if name == "gemini":
        env |= {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": DEAD_URL}
    if name == "qwen":
        env |= {"OPENAI_API_KEY": "dummy", "OPENAI_BASE_URL": DEAD_URL + "/v1", "OPENAI_MODEL": "m"}
    if name == "claude":
        env |= {"ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_BASE_URL": DEAD_URL}
    return env


async def wait_for_state(client: Any, states: set[str]) -> dict[str, Any]:
    while True:
        for params in notifications(client, "acpls/agentStatus"):
            status = as_dict(params)
            if status["state"] in states:
                return status
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("name", list(ACP_ARGS))
async def test_pinned_agent_starts_through_acpls(client, workspace: Path, tmp_path: Path, name):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    agent = {
        "command": str(executable(name)),
        "args": ACP_ARGS[name],
        "env": quiet_env(name, home),
    }
    await start(client, workspace, agent, custom=True, env={"remove": ["*"]})
    # The agent starts on the first command that needs it; Codex wants its API-key sign-in first.
    if name == "codex":
        await asyncio.wait_for(
            command(client, "acpls.authenticate", {"methodId": "openai-api-key"}), START_TIMEOUT
        )
    result = await asyncio.wait_for(command(client, "acpls.newSession", {}), START_TIMEOUT)
    assert result["sessionId"]
    status = await asyncio.wait_for(
        wait_for_state(client, {"running", "exited", "failed"}), START_TIMEOUT
    )
    assert status["state"] == "running", status
    assert status["protocolVersion"] == 1 or name == "claude", status
    info = status.get("agentInfo") or {}
    assert info.get("version") in (pinned(name).version, None), status
