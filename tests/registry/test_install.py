"""Installing registry agents from a local HTTP server: tar.gz and zip binaries unpacked into
$XDG_DATA_HOME/acpls/agents/<id>/<version> and started; npx / uvx commands pinned to the registry's
version; a checksum mismatch, a bad archive, path traversal, a failed download, an unsupported
platform and a missing Node / uv each give a clear error and leave nothing behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from acpls.core.agents import AgentCatalog, UnknownAgent
from acpls.services import agent_install
from acpls.services.agent_install import AgentInstallError
from tests.registry.support import PLATFORM

EMPTY_PATH = "/nonexistent-bin"


async def _catalog(served, xdg, path: str = EMPTY_PATH) -> AgentCatalog:
    def which(name: str) -> str | None:
        import shutil

        return shutil.which(name, path=path)

    catalog = AgentCatalog(xdg, served.url("registry.json"), platform=PLATFORM, which=which)
    await catalog.refresh()
    return catalog


def _agents_dir(xdg) -> Path:
    return Path(xdg["XDG_DATA_HOME"]) / "acpls" / "agents"


def _initialize_answer(argv: list[str]) -> str:
    """Start the installed command and send it ACP initialize: it must answer."""
    request = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    proc = subprocess.run(argv, input=request, capture_output=True, text=True, timeout=30)
    return proc.stdout


@pytest.mark.parametrize(
    ("agent", "version", "cmd"),
    [("tar-agent", "1.2.3", "pkg/agent"), ("zip-agent", "2.0.0", "bin/agent")],
)
async def test_a_binary_is_downloaded_checked_unpacked_and_runs(served, xdg, agent, version, cmd):
    catalog = await _catalog(served, xdg)
    before = catalog.row(agent)
    assert before["installed"] is False and before["runnable"] is False
    result = await catalog.install(agent)
    home = _agents_dir(xdg) / agent / version
    assert result["installDir"] == str(home) and result["installed"] is True
    assert result["command"] == [str(home / cmd)]
    assert os.access(home / cmd, os.X_OK)
    assert sorted(p.name for p in (_agents_dir(xdg) / agent).iterdir()) == [version]  # no temp left
    assert '"result"' in _initialize_answer(result["command"])
    assert catalog.row(agent)["installed"] is True


async def test_an_installed_version_is_never_written_again(served, xdg):
    catalog = await _catalog(served, xdg)
    first = await catalog.install("tar-agent")
    marker = Path(first["installDir"]) / "in-use"
    marker.write_text("a running agent's file")
    downloads = len(served.hits("/tar-agent.tar.gz"))
    again = await catalog.install("tar-agent")
    assert again == first and marker.read_text() == "a running agent's file"
    assert len(served.hits("/tar-agent.tar.gz")) == downloads


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("mismatch-agent", "checksum mismatch"),
        ("garbage-agent", "bad archive"),
        ("traversal-agent", "unsafe archive"),
        ("traversal-zip-agent", "escapes its directory"),
        ("link-agent", "unsafe archive"),
        ("missing-agent", "download failed"),
        ("elsewhere-agent", "its binaries are for windows-aarch64, not for " + PLATFORM),
    ],
)
async def test_a_bad_binary_is_refused_clearly_and_leaves_nothing(
    served, xdg, tmp_path, agent, message
):
    catalog = await _catalog(served, xdg)
    with pytest.raises(AgentInstallError) as caught:
        await catalog.install(agent)
    assert message in str(caught.value)
    leftovers = (
        list((_agents_dir(xdg) / agent).iterdir()) if (_agents_dir(xdg) / agent).exists() else []
    )
    assert leftovers == []
    assert not any(p.name == "escaped" for p in tmp_path.rglob("escaped"))


async def test_npx_and_uvx_agents_run_their_package_pinned_to_the_registry_version(
    served, xdg, tmp_path
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("npx", "uvx"):
        (bin_dir / tool).write_text("#!/bin/sh\n")
        (bin_dir / tool).chmod(0o755)
    catalog = await _catalog(served, xdg, path=str(bin_dir))
    npx = catalog.resolve("npx-agent")
    assert npx.argv == ["npx", "-y", "@example/npx-agent@0.4.0", "--acp"]
    assert dict(npx.env) == {"NPX_AGENT": "1"}
    assert catalog.resolve("uvx-agent").argv == ["uvx", "uvx-agent==3.1.0", "acp"]
    result = await catalog.install("npx-agent")
    assert result["kind"] == "npx" and result["installed"] is False
    assert catalog.row("npx-agent")["runnable"] is True


async def test_missing_node_or_uv_is_named_with_what_to_install(served, xdg):
    catalog = await _catalog(served, xdg)
    with pytest.raises(AgentInstallError, match=r"npx is not on PATH: install Node.js"):
        catalog.resolve("npx-agent")
    with pytest.raises(AgentInstallError, match=r"uvx is not on PATH: install uv"):
        await catalog.install("uvx-agent")
    row = catalog.row("uvx-agent")
    assert row["runnable"] is False and "install uv" in row["problem"]


async def test_an_unknown_name_lists_what_there_is(served, xdg):
    catalog = await _catalog(served, xdg)
    with pytest.raises(UnknownAgent, match=r"unknown agent 'nope' .*tar-agent"):
        catalog.resolve("nope")


async def test_the_listing_has_presets_first_then_registry_agents(served, xdg):
    catalog = await _catalog(served, xdg)
    rows = catalog.entries()
    ids = [r["id"] for r in rows]
    assert ids[:8] == ["claude", "gemini", "codex", "opencode", "qwen", "copilot", "goose", "demo"]
    tar = next(r for r in rows if r["id"] == "tar-agent")
    assert tar["icon"] == "https://example.com/tar-agent.svg"
    assert tar["distributions"] == ["binary"] and tar["version"] == "1.2.3" and not tar["preset"]
    demo = next(r for r in rows if r["id"] == "demo")
    assert demo["installed"] is True and demo["runnable"] is True


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("tar-agent", None),
        ("traversal-agent", "unsafe archive"),
        ("link-agent", "unsafe archive"),
    ],
)
async def test_tar_archives_are_checked_without_tarfile_filters(
    served, xdg, tmp_path, monkeypatch, agent, message
):
    """Python 3.11.0-3.11.3 (Debian 12's 3.11.2, which VS Code runs acpls on) has no tarfile
    extraction filter: acpls checks the members itself, refusing the same archives."""
    monkeypatch.setattr(agent_install, "_has_tar_filter", lambda _tarfile: False)
    catalog = await _catalog(served, xdg)
    if message is None:
        done = await catalog.install(agent)
        assert (Path(done["installDir"]) / "pkg" / "agent").is_file()
        return
    with pytest.raises(AgentInstallError) as caught:
        await catalog.install(agent)
    assert message in str(caught.value)
    assert not (_agents_dir(xdg) / agent).exists() or not list((_agents_dir(xdg) / agent).iterdir())
    assert not any(p.name == "escaped" for p in tmp_path.rglob("escaped"))
