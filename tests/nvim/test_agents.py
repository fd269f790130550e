"""`:Acpls agents` in real Neovim: the picker lists the presets and a local ACP registry (name,
version, id, description, kinds, installed or not); choosing a registry binary installs it through
the real acpls and makes it the agent, which then runs a turn; picked again it is installed and
shows the sign-in method it offered; `:checkhealth acpls` checks it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.registry.serve import SCRIPT
from tests.registry.support import RegistryServer, fixture_registry, registry_server

pytestmark = pytest.mark.nvim


@pytest.fixture
def local_registry(tmp_path) -> Iterator[RegistryServer]:
    with registry_server() as server:
        server.set_registry(fixture_registry(server, SCRIPT, tmp_path / "tar-agent.jsonl"))
        yield server


def test_pick_install_and_use_a_registry_agent(editor_factory, local_registry, tmp_path):
    url = local_registry.url("registry.json")
    ed = editor_factory("v1_basic", registry={"url": url})
    ed.nvim.command("Acpls agents refresh")
    picker = ed.wait_select("acpls.agent")
    labels = picker["labels"]
    assert any(label.startswith("Claude Code 0.101.0 (claude) · ") for label in labels), labels
    tar = next(label for label in labels if "(tar-agent)" in label)
    assert tar == "Tar Agent 1.2.3 (tar-agent) · the tar-agent test agent · binary · not installed"
    elsewhere = next(label for label in labels if "(elsewhere-agent)" in label)
    assert "unavailable: " in elsewhere and "its binaries are for windows-aarch64" in elsewhere
    ed.lua("T.answer_label(...)", picker["index"], "Tar Agent")

    installed = (
        tmp_path / "xdg" / "data" / "acpls" / "agents" / "tar-agent" / "1.2.3" / "pkg" / "agent"
    )
    ed.wait("return require('acpls.config').get(true).agent == 'tar-agent'", what="the agent set")
    assert installed.exists()

    ed.nvim.command("Acpls prompt hello")
    ed.wait_turn_end()
    assert (tmp_path / "tar-agent.jsonl").exists()  # the turn went to the installed agent
    assert ed.errors() == []

    ed.nvim.command("Acpls agents")
    picker = ed.wait_select("acpls.agent")
    tar = next(label for label in picker["labels"] if "(tar-agent)" in label)
    assert tar.endswith("· binary · installed · sign-in: Tar key"), tar
    ed.lua("T.answer(...)", picker["index"], None)

    ed.nvim.command("checkhealth acpls")
    report = "\n".join(ed.nvim.current.buffer[:])
    assert "agent tar-agent answers: tar-agent" in report, report
