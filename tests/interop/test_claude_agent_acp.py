"""`@agentclientprotocol/claude-agent-acp` (npm, pinned) through acpls with no API key.

It must complete `initialize` and `session/new` (whichever ACP version it negotiates, and with v1
or v2 forced), and a prompt must end with a clear "authentication required" error on
`acpls.prompt`, within a bounded time, never a hang.

The agent runs in a clean environment (acpls' own variables all removed with `env.remove: ["*"]`,
then only the few below): an empty HOME so no real credentials or settings are found, a dead
loopback API URL so nothing leaves the machine, and no IS_SANDBOX (with it the agent starts in
permission-bypass mode, which it refuses as root).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import as_dict, command, notifications, start
from tests.interop.conftest import CLAUDE_ACP, require

# The agent answers initialize and session/new in about a second here; node's cold start and the
# SDK's own set-up leave room for a slow CI machine.
SESSION_TIMEOUT = 60
PROMPT_TIMEOUT = 60


def claude_agent(home: Path) -> dict[str, Any]:
    executable = require(CLAUDE_ACP, "@agentclientprotocol/claude-agent-acp")
    node_dir = os.path.dirname(shutil.which("node") or "/usr/bin/node")
    return {
        "command": str(executable),
        "args": [],
        "env": {
            "PATH": os.pathsep.join(
                dict.fromkeys([node_dir, "/usr/local/bin", "/usr/bin", "/bin"])
            ),
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
        },
    }


@pytest.fixture
def empty_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


async def open_session(client: Any, workspace: Path, home: Path, protocol: Any) -> str:
    await start(
        client,
        workspace,
        claude_agent(home),
        custom=True,
        protocolVersion=protocol,
        env={"remove": ["*"]},
    )
    result = await asyncio.wait_for(command(client, "acpls.newSession", {}), SESSION_TIMEOUT)
    session_id = result["sessionId"]
    assert isinstance(session_id, str) and session_id
    statuses = [as_dict(p) for p in notifications(client, "acpls/agentStatus")]
    (negotiated,) = [p["protocolVersion"] for p in statuses if p["state"] == "running"]
    assert negotiated == protocol if protocol != "auto" else negotiated in (1, 2)
    return session_id


def agent_environment(workspace: Path) -> dict[str, str]:
    """The environment of the agent process acpls started (its child running in `workspace`)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "cwd") != str(workspace.resolve()):
                continue
            status = (entry / "status").read_text()
            parent = next(ln.split()[1] for ln in status.splitlines() if ln.startswith("PPid:"))
            if b"acpls" not in Path(f"/proc/{parent}/cmdline").read_bytes():
                continue
            raw = (entry / "environ").read_bytes()
        except (OSError, StopIteration):
            continue
        pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
        return {k.decode(): v.decode(errors="replace") for k, v in pairs}
    raise AssertionError("no agent process found")


@pytest.mark.parametrize("protocol", ["auto", 1, 2])
async def test_new_session_then_prompt_without_api_key_says_authentication_required(
    client, workspace: Path, empty_home: Path, protocol: Any
):
    session_id = await open_session(client, workspace, empty_home, protocol)
    # Only what the settings give the agent: acpls' own environment was removed with "*".
    expected = claude_agent(empty_home)["env"]
    found = await asyncio.to_thread(agent_environment, workspace)
    # Plus the owner marker acpls' watchdog finds its processes by (SECURITY.md, processes).
    assert found.pop("ACPLS_OWNER", "") != ""
    assert found == expected
    sessions = await command(client, "acpls.sessions", {})
    assert sessions["current"] == session_id
    assert [s["sessionId"] for s in sessions["sessions"]] == [session_id]
    with pytest.raises(JsonRpcException) as failure:
        await asyncio.wait_for(
            command(client, "acpls.prompt", {"sessionId": session_id, "text": "hello"}),
            PROMPT_TIMEOUT,
        )
    assert "authentication required" in str(failure.value).lower()
