"""The registry through the real acpls (pytest-lsp): `acpls.agents` lists presets and the registry
served locally, `acpls.installAgent` installs a binary, and `agent: "<registry id>"` starts it (a
binary not yet installed is installed first) or its npx package pinned, for a whole turn."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsprotocol import types

from tests.e2e.conftest import agent_log, as_dict, notifications, start
from tests.e2e.conftest import command as _command
from tests.registry.support import fake_tool, fixture_registry, registry_server

pytestmark = pytest.mark.usefixtures("registry_env")


@pytest.fixture
def local_registry():
    with registry_server() as server:
        yield server


@pytest.fixture
def registry_env(server_env, tmp_path: Path, local_registry) -> None:
    """The server's cache and data homes are private; its PATH has a fake npx first."""
    server_env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    server_env["XDG_DATA_HOME"] = str(tmp_path / "data")
    server_env["PATH"] = f"{tmp_path / 'bin'}:{os.environ['PATH']}"


def _registry(server, tmp_path: Path) -> str:
    server.set_registry(fixture_registry(server, "v1_basic", tmp_path / "agent.jsonl"))
    return server.url("registry.json")


async def command(client, name: str, arg: dict | None = None) -> dict:
    return as_dict(await _command(client, name, arg))


def _configure(client, **settings) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"acpls": settings})
    )


async def test_agents_lists_presets_and_the_refreshed_registry(
    client, workspace, tmp_path, local_registry
):
    url = _registry(local_registry, tmp_path)
    await start(client, workspace, "demo", custom=True, registry={"url": url})
    result = await command(client, "acpls.agents", {"refresh": True})
    assert result["registry"]["source"] == "network" and result["registry"]["url"] == url
    ids = [a["id"] for a in result["agents"]]
    assert ids[:8] == ["claude", "gemini", "codex", "opencode", "qwen", "copilot", "goose", "demo"]
    assert {"tar-agent", "zip-agent", "npx-agent", "uvx-agent"} <= set(ids)
    assert result["default"] == "demo"
    tar = next(a for a in result["agents"] if a["id"] == "tar-agent")
    assert (tar["installed"], tar["distributions"], tar["version"]) == (False, ["binary"], "1.2.3")

    installed = await command(client, "acpls.installAgent", {"agent": "tar-agent"})
    assert installed["installed"] is True and installed["kind"] == "binary"
    assert installed["installDir"] == str(
        tmp_path / "data" / "acpls" / "agents" / "tar-agent" / "1.2.3"
    )
    again = await command(client, "acpls.agents", {})
    assert next(a for a in again["agents"] if a["id"] == "tar-agent")["installed"] is True


async def test_install_errors_are_clear(client, workspace, tmp_path, local_registry):
    url = _registry(local_registry, tmp_path)
    await start(client, workspace, "demo", custom=True, registry={"url": url})
    await command(client, "acpls.agents", {"refresh": True})
    with pytest.raises(Exception, match="checksum mismatch"):
        await command(client, "acpls.installAgent", {"agent": "mismatch-agent"})
    with pytest.raises(Exception, match="unknown agent 'nope'"):
        await command(client, "acpls.installAgent", {"agent": "nope"})
    with pytest.raises(Exception, match="refresh must be true or false"):
        await command(client, "acpls.agents", {"refresh": "yes"})


async def test_a_registry_binary_agent_is_installed_on_first_use_and_runs_a_turn(
    client, workspace, tmp_path, local_registry
):
    url = _registry(local_registry, tmp_path)
    # the registry is fetched once (as the editor's picker would), then the setting names an id
    await start(client, workspace, "demo", custom=True, registry={"url": url})
    await command(client, "acpls.agents", {"refresh": True})
    _configure(client, agent="tar-agent", registry={"url": url})
    result = await command(client, "acpls.prompt", {"text": "hello"})
    assert result["stopReason"] == "end_turn"
    assert any(m["method"] == "session/prompt" for m in agent_log(tmp_path / "agent.jsonl"))
    statuses = [(s["state"], s.get("message")) for s in notifications(client, "acpls/agentStatus")]
    assert ("starting", "installing tar-agent") in statuses
    assert (
        tmp_path / "data" / "acpls" / "agents" / "tar-agent" / "1.2.3" / "pkg" / "agent"
    ).exists()


async def test_a_registry_npx_agent_runs_its_pinned_package(
    client, workspace, tmp_path, local_registry
):
    url = _registry(local_registry, tmp_path)
    npx_log = tmp_path / "npx-argv.txt"
    fake_tool(tmp_path / "bin", "npx", npx_log, "v1_basic")
    await start(client, workspace, "demo", custom=True, registry={"url": url})
    await command(client, "acpls.agents", {"refresh": True})
    _configure(client, agent="npx-agent", registry={"url": url})
    result = await command(client, "acpls.prompt", {"text": "hello"})
    assert result["stopReason"] == "end_turn"
    assert npx_log.read_text().split() == ["-y", "@example/npx-agent@0.4.0", "--acp"]
