"""Files a command writes or deletes just before the turn ends, through the real acpls.

The turn watcher's final flush exists for those writes; review must list each of them with the
turn's session and a known baseline (git for tracked files, the turn-start listing for new ones),
every time, and `acpls.rejectAll` must give the original bytes back.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.e2e.conftest import command, scripted, start
from tests.e2e.disk_editor import disk_editor
from tests.e2e.hostile_support import capture_server_log

TRACKED = "def f():\n    return 1\n"
DOOMED = "gone soon\n"
TURNS = 4


def _git_repo(root: Path) -> None:
    (root / "tracked.py").write_text(TRACKED, encoding="utf-8")
    for turn in range(TURNS):
        (root / f"doomed{turn}.txt").write_text(DOOMED, encoding="utf-8")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True
        )


def _command_then_end(root: Path, turn: int) -> list[dict]:
    """A command tool call whose command writes, deletes and creates files, reported complete,
    and the turn ends at once (no sleep): the writes reach acpls only through the final flush."""
    call = f"exec-{turn}"
    return [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": call, "title": "make",
                    "kind": "execute", "status": "in_progress"}},
        {"disk": {"op": "write", "path": str(root / "tracked.py"),
                  "text": TRACKED.replace("1", str(turn + 2))}},
        {"disk": {"op": "remove", "path": str(root / f"doomed{turn}.txt")}},
        {"disk": {"op": "write", "path": str(root / f"new{turn}.txt"), "text": f"new {turn}\n"}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": call,
                    "status": "completed"}},
    ]  # fmt: skip


async def test_writes_and_deletions_just_before_turn_end_are_reviewed(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    _git_repo(workspace)
    before = {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()}
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_prompt": [_command_then_end(workspace, n) for n in range(TURNS)]}
    async with disk_editor(server_env) as editor:
        await start(editor.client, workspace, scripted(script, log))
        for turn in range(TURNS):
            result = await command(editor.client, "acpls.prompt", {"text": f"build {turn}"})
            assert result["stopReason"] == "end_turn"
            review = await command(editor.client, "acpls.review", {})
            files = {Path(f["path"]).name: f for f in review["files"]}
            done = range(turn + 1)
            expected = {
                "tracked.py",
                *(f"new{n}.txt" for n in done),
                *(f"doomed{n}.txt" for n in done),
            }
            assert set(files) == expected, (turn, review)
            sessions = {changed.get("sessionId") for changed in files.values()}
            assert len(sessions) == 1 and None not in sessions, review
            for name, changed in files.items():
                assert "note" not in changed, (turn, name, changed)  # the baseline is known
            assert files[f"doomed{turn}.txt"]["status"] == "deleted"
            assert files[f"new{turn}.txt"]["status"] == "added"
            assert files["tracked.py"]["status"] == "modified"
        after = await command(editor.client, "acpls.rejectAll", {})
        assert after == {"files": []}
        now = {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()}
        assert now == before


async def test_a_workspace_holding_acpls_state_reviews_only_the_agents_writes(
    server_env: dict[str, str], workspace: Path, tmp_path: Path
):
    """A folder opened at `~` holds acpls' own state (XDG_STATE_HOME under it): the transcript
    and the checkpoint acpls writes during the turn are not the agent's, nor are the editor's
    and other programs' logs there (Neovim's lsp.log, which holds acpls' stderr), and review
    lists only what the agent wrote. Nor does acpls log each change its watch detects: an editor keeps
    acpls' stderr in a file (Neovim's lsp.log), and in the watched folder each line was a change
    to detect and log again."""
    state = workspace / ".local" / "state"
    env = {**server_env, "XDG_STATE_HOME": str(state)}
    notes = workspace / "notes.md"
    editor_log = state / "nvim" / "lsp.log"
    editor_log.parent.mkdir(parents=True)
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ok "}}
    step = [
        {"update": chunk},
        {"disk": {"op": "write", "path": str(notes), "text": "# Notes\n"}},
        {"disk": {"op": "write", "path": str(editor_log), "text": "[ERROR] stderr\n"}},
        *({"update": chunk} for _ in range(20)),
        {"sleep": 0.4},  # the watch's debounce: acpls' writes of the turn reach it as events
    ]
    script = {"protocol": 1, "on_prompt": [step, step]}
    async with disk_editor(env) as editor:
        server_log = capture_server_log(editor.client)
        await start(editor.client, workspace, scripted(script, tmp_path / "agent.jsonl"))
        for turn in range(2):
            result = await command(editor.client, "acpls.prompt", {"text": f"notes {turn}"})
            assert result["stopReason"] == "end_turn"
            review = await command(editor.client, "acpls.review", {})
            assert [Path(f["path"]) for f in review["files"]] == [notes], review
        assert server_log.has("editor connected")  # the log is read, and INFO lines are in it
        assert not server_log.has("change detected"), server_log.text()
        server_log.close()
    assert [p for p in (state / "acpls").rglob("*") if p.is_file()], "acpls wrote no state"
