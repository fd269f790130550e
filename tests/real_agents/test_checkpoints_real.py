"""Checkpoints with real agents (issue 13): a whole turn of Claude Code (which writes straight to
disk and runs a command that writes another file and deletes a third) and of Gemini CLI (which writes through the
editor) is undone exactly by restoring the checkpoint acpls took before it, while the user's own
git state (an uncommitted change, a staged file, a stash) is left exactly as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import command
from tests.real_agents.harness import EDITED, REPORT, SHOP, agent_run, disk_text
from tests.real_agents.test_full_turns import Answers, variant

pytestmark = pytest.mark.real_agents


def git(workspace: Path, *args: str) -> str:
    base = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    return subprocess.run(
        [*base, *args], cwd=workspace, check=True, capture_output=True, text=True
    ).stdout


def users_own_git_state(workspace: Path) -> None:
    """Work of the user's that no checkpoint may touch: a stash, a change, a staged new file."""
    (workspace / "wip.txt").write_text("first\n")
    git(workspace, "add", "wip.txt")
    git(workspace, "commit", "-qm", "wip")
    (workspace / "wip.txt").write_text("stashed change\n")
    git(workspace, "stash", "-q")
    (workspace / "wip.txt").write_text("uncommitted change\n")
    (workspace / "staged.txt").write_text("staged\n")
    git(workspace, "add", "staged.txt")


def git_state(workspace: Path) -> dict[str, str]:
    return {
        "status": git(workspace, "status", "--porcelain=v1", "--untracked-files=all"),
        "stash": git(workspace, "stash", "list", "--format=%H %s"),
        "index": git(workspace, "ls-files", "--stage"),
        "refs": git(workspace, "for-each-ref", "--format=%(refname) %(objectname)"),
        "head": git(workspace, "rev-parse", "HEAD"),
        "config": (workspace / ".git" / "config").read_text(),
    }


def files(workspace: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(workspace)): p.read_bytes()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(workspace).parts
    }


@pytest.mark.parametrize("agent", ["claude-v1", "gemini"])
async def test_restoring_the_checkpoint_undoes_a_real_turn(
    agent: str, tmp_path: Path, server_env: dict[str, str]
) -> None:
    async with agent_run(variant(agent), "edit_turn", tmp_path, server_env, custom=True) as run:
        users_own_git_state(run.workspace)
        before_files, before_git = files(run.workspace), git_state(run.workspace)
        Answers(run, "allow_once")
        result = await run.prompt("Round the total and write a report")
        assert result["stopReason"] == "end_turn", run.log()
        run.save_all()  # an agent that wrote through the editor left its text unsaved
        assert disk_text(run.shop) == EDITED and disk_text(run.report) == REPORT, run.log()
        assert not run.legacy.exists()  # the command deletes it too

        (checkpoint, *_) = await command(run.client, "acpls.checkpoints", {})
        assert checkpoint["turn"] == 1 and checkpoint["sessionId"] == run.session_id
        changed = {str(Path(p).relative_to(run.workspace)) for p in checkpoint["files"]}
        assert changed == {"shop.py", "report.txt", "legacy.txt"}

        restored = await command(run.client, "acpls.restoreCheckpoint", {"id": checkpoint["id"]})
        assert restored["skipped"] == [], restored
        run.save_all()
        assert disk_text(run.shop) == SHOP
        assert files(run.workspace) == before_files
        assert git_state(run.workspace) == before_git
        await run.exit_editor()
