"""`acpls doctor`: the real command, run as a user would, and its findings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from acpls.services.doctor import TOOLS, Finding, python_findings, report_lines, tool_findings


def _doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acpls", "doctor", "--timeout", "30", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_working_agent_passes_and_the_report_names_each_part() -> None:
    done = _doctor("demo")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok   demo: ok (acpls demo agent" in done.stdout
    for section in ("python:", "tools:", "agents:", "editors:"):
        assert section in done.stdout
    assert done.stdout.rstrip().endswith("acpls has what it needs")


def test_a_named_agent_that_is_missing_fails_with_how_to_get_it() -> None:
    done = _doctor("demo", json.dumps({"command": "/nonexistent/agent"}), "--json")
    assert done.returncode == 1
    findings = {f["name"]: f for f in json.loads(done.stdout)}
    assert findings["demo"]["ok"] is True
    missing = findings["agent"]
    assert missing["blocking"] is True and "not found" in missing["detail"]


def test_git_missing_from_path_is_blocking(tmp_path) -> None:
    # A PATH with only this Python: no git, no node.
    (tmp_path / "python3").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(tmp_path)}
    done = _doctor("demo", env=env)
    assert done.returncode == 1
    assert "FAIL git: not found (checkpoints and review baselines) (install git)" in done.stdout
    assert "--   node: not found" in done.stdout  # reported, not required for the demo agent
    assert "missing or broken: git" in done.stdout


def test_bad_arguments_exit_2_with_the_reason() -> None:
    done = _doctor("no-such-preset")
    assert done.returncode == 2
    assert "unknown agent 'no-such-preset'" in done.stderr


def test_an_old_python_is_blocking() -> None:
    python = python_findings((3, 10, 4))[0]
    assert python.blocking and "3.10.4" in python.detail


@pytest.mark.asyncio
async def test_tools_are_looked_up_and_versions_read() -> None:
    found = {f.name: f for f in await tool_findings("tools", TOOLS, which=lambda c: None)}
    assert found["git"].blocking and not found["uv"].blocking
    real = {f.name: f for f in await tool_findings("tools", TOOLS)}
    assert real["git"].ok and real["git"].detail.startswith("git version")


def test_report_ends_with_the_verdict() -> None:
    lines = report_lines(
        [Finding("tools", "git", False, "not found", needed=True, hint="install git")]
    )
    assert lines == ["tools:", "  FAIL git: not found (install git)", "missing or broken: git"]


@pytest.mark.asyncio
async def test_an_editor_older_than_acpls_needs_is_reported_with_the_minimum(tmp_path) -> None:
    """Neovim 0.10 is not enough (the plugin needs 0.11, acpls/requirements.py)."""
    from acpls.services.doctor import EDITORS

    fake = tmp_path / "nvim"
    fake.write_text("#!/bin/sh\necho 'NVIM v0.10.4'\n")
    fake.chmod(0o755)
    found = {
        f.name: f
        for f in await tool_findings(
            "editors", EDITORS, which=lambda c: str(fake) if c == "nvim" else None
        )
    }
    neovim = found["Neovim"]
    assert not neovim.ok and not neovim.needed
    assert neovim.detail.endswith(": older than 0.11")
    assert neovim.line().endswith("(the plugin needs Neovim 0.11 or newer)")
    fake.write_text("#!/bin/sh\necho 'NVIM v0.11.4'\n")
    found = await tool_findings(
        "editors", EDITORS, which=lambda c: str(fake) if c == "nvim" else None
    )
    assert next(f for f in found if f.name == "Neovim").ok


def test_the_install_hint_is_a_command_that_works_from_the_checkout(tmp_path) -> None:
    """Nothing publishes `acpls` on PyPI: the hint installs from the repository, as README says."""
    from pathlib import Path

    from acpls.services.doctor import install_command

    checkout = Path(__file__).resolve().parents[2]
    assert install_command() == (
        f"pipx install --force {checkout} (or: uv tool install --force --from {checkout} acpls)"
    )
    assert "uv tool install acpls" not in install_command()
    assert "Install the server itself with `uv tool install .` or `pipx install .`" in (
        checkout / "README.md"
    ).read_text(encoding="utf-8")


def test_missing_speed_ups_are_reported_but_not_blocking() -> None:
    from acpls.services.doctor import speedups_finding

    finding = speedups_finding()
    assert not finding.needed and not finding.blocking
    assert finding.detail.startswith("json: ")


def test_fix_brings_a_node_for_the_agents_where_there_is_none(tmp_path) -> None:
    """A machine without Node.js: `acpls doctor` says the agents have none and what to do;
    `acpls doctor --fix` installs the `node` extra into acpls' own environment, after which the
    report names the Node the agents run on. A fresh virtualenv stands for the user's install."""
    import venv

    from tests.real_agents.harness import path_without_node

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", repo],
        check=True, timeout=900, capture_output=True,
    )  # fmt: skip
    path = path_without_node(tmp_path / "no-node")
    env = {"PATH": path, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}

    def doctor(*args: str) -> dict[str, dict]:
        done = subprocess.run(
            [python, "-m", "acpls", "doctor", "--json", "--timeout", "30", *args],
            capture_output=True, text=True, env=env, timeout=900,
        )  # fmt: skip
        return {f["name"]: f for f in json.loads(done.stdout)}

    before = doctor("demo")["Node.js for agents"]
    assert before["ok"] is False and "acpls doctor --fix" in before["hint"], before
    after = doctor("demo", "--fix")["Node.js for agents"]
    assert after["ok"] is True and "Node.js from acpls[node]" in after["detail"], after
