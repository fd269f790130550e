"""Emacs 28 + eglot 1.9 (Debian) with editors/emacs/acpls-eglot.el, driven in batch mode.

Each test starts a real `emacs --batch` that loads the configuration, opens a file of a copy of the
demo project, starts acpls through eglot (`acpls-start`) with the built-in demo agent, asks the
agent (`acpls-prompt` or an eglot code action), answers the permission prompt in the minibuffer,
and writes a report of what the user saw (tests/editors/emacs_drive.el).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agents import script_command
from tests.editors.conftest import DEMO_WORKSPACE, EDITORS, require_program, wait_no_processes_in

CONFIG = EDITORS / "emacs" / "acpls-eglot.el"
DRIVER = Path(__file__).with_name("emacs_drive.el")
EXECUTE_SHIM = Path(__file__).with_name("eglot_execute_shim.el")
PERMISSION_CHOICES = ["Allow", "Always allow edits", "Reject", "Always reject edits"]
FIXED_LINE = "    return a - b"


def emacs() -> str:
    return require_program("emacs", ["emacs", "--batch", "--eval", "(require 'eglot)"])


@dataclass
class EmacsRun:
    report: dict[str, Any]
    workspace: Path
    state: Path
    output: str

    def transcript_path(self) -> Path:
        (path,) = (self.state / "acpls" / "transcripts").glob("*.md")
        return path

    def transcript(self) -> str:
        return self.transcript_path().read_text(encoding="utf-8")


def run_emacs(
    tmp_path: Path,
    workspace: Path,
    *,
    protocol: str = "auto",
    answer: str = "Allow",
    prompt: str = "Fix the failing test",
    region: str = "",
    action: str = "",
    newer_eglot: bool = False,
    lint: list[str] | None = None,
    point: str = "",
    agent: list[str] | None = None,
    watch: list[Path] | None = None,
    save: bool = True,
    agent_copy: tuple[Path, str] | None = None,
) -> EmacsRun:
    program = emacs()
    state = tmp_path / "state"
    home = tmp_path / "home"
    home.mkdir()
    report_path = tmp_path / "report.json"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_STATE_HOME": str(state),
        "ACPLS_DEMO_SPEED": "0",
        # The configuration's default command, `acpls`, found on PATH as a user's would be.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "ACPLS_TEST_FILE": str(workspace / "calc.py"),
        "ACPLS_TEST_PROMPT": prompt,
        "ACPLS_TEST_REGION": region,
        "ACPLS_TEST_ANSWER": answer,
        "ACPLS_TEST_ACTION": action,
        "ACPLS_TEST_PROTOCOL": protocol,
        "ACPLS_TEST_OUT": str(report_path),
        "ACPLS_TEST_EXECUTE": "1" if newer_eglot else "",
        "ACPLS_TEST_LINT": "\x1f".join(lint or []),
        "ACPLS_TEST_POINT": point,
        "ACPLS_TEST_AGENT": "\x1f".join(agent or []),
        "ACPLS_TEST_WATCH": "\x1f".join(str(p) for p in watch or []),
        "ACPLS_TEST_NO_SAVE": "" if save else "1",
        "ACPLS_TEST_AGENT_COPY": f"{agent_copy[0]}\x1f{agent_copy[1]}" if agent_copy else "",
    }
    preload = ["-l", str(EXECUTE_SHIM)] if newer_eglot else []
    done = subprocess.run(
        [program, "--batch", *preload, "-l", str(CONFIG), "-l", str(DRIVER)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"emacs exited {done.returncode}: {report}\n{output[-3000:]}"
    return EmacsRun(report, workspace, state, output)


def assert_nothing_left_running(workspace: Path) -> None:
    assert wait_no_processes_in(workspace) == [], "acpls or its agent outlived the editor"


def assert_workspace_untouched_but(workspace: Path, *changed: str) -> None:
    """No file but `changed` appeared in the project (the transcript lives in the state
    directory), and no file but `changed` changed."""
    before = {p.relative_to(DEMO_WORKSPACE) for p in DEMO_WORKSPACE.rglob("*") if p.is_file()}
    after = {p.relative_to(workspace) for p in workspace.rglob("*") if p.is_file()}
    appeared = {str(p) for p in after - before if "__pycache__" not in p.parts}
    assert appeared - set(changed) == set()
    for path in before - {Path(c) for c in changed}:
        if "__pycache__" not in path.parts:
            assert (workspace / path).read_bytes() == (DEMO_WORKSPACE / path).read_bytes(), path


@pytest.mark.parametrize("protocol", ["auto", "1"])
def test_prompt_permission_follow_and_transcript(
    tmp_path: Path, demo_workspace: Path, protocol: str
):
    run = run_emacs(tmp_path, demo_workspace, protocol=protocol, answer="Allow")
    report = run.report
    assert report["server"] == "acpls-eglot-server"
    assert report["error"] is None
    assert report["result"]["stopReason"] == "end_turn"

    # The permission prompt: every option, in the agent's order, and the user's answer.
    (asked,) = report["prompts"]
    assert asked["choices"] == PERMISSION_CHOICES
    assert "calc.py +1 -1" in asked["prompt"]

    # The transcript was shown first, read-only and reverting itself, outside the project.
    transcript = run.transcript_path()
    shown = report["shown"]
    assert shown[0] == {"path": str(transcript), "line": None, "takeFocus": False}
    assert report["transcriptBuffer"] == {"readOnly": True, "autoRevert": True}
    # Follow-along showed calc.py at the lines the agent read, without taking the focus.
    calc = [s for s in shown if s["path"] == str(demo_workspace / "calc.py")]
    assert calc and all(s["takeFocus"] is False and isinstance(s["line"], int) for s in calc)

    # The whole answer is in the transcript, up to the end of the turn.
    text = run.transcript()
    assert text.count("**You:** Fix the failing test") == 1
    assert "Let me look at the project first." in text
    assert "I applied the edit to calc.py, and the checks pass." in text
    # The turn-end line, with the demo's context meter.
    assert re.search(
        r"\*turn ended: end_turn · context [\d,]+/[\d,]+ \(\d+%\)[^*]*\*$", text.rstrip()
    )
    assert any("acpls: demo finished (end_turn)" in m for m in report["messages"])

    # The edit landed on disk and in the buffer (v1: applyEdit then saved; v2: reverted).
    on_disk = (demo_workspace / "calc.py").read_text(encoding="utf-8")
    assert FIXED_LINE in on_disk.splitlines()
    assert report["buffer"] == on_disk
    assert_workspace_untouched_but(demo_workspace, "calc.py")
    assert_nothing_left_running(demo_workspace)


def test_rejected_edit_changes_nothing(tmp_path: Path, demo_workspace: Path):
    run = run_emacs(tmp_path, demo_workspace, protocol="1", answer="Reject")
    assert run.report["result"]["stopReason"] == "end_turn"
    assert [p["answer"] for p in run.report["prompts"]] == ["Reject"]
    assert "You rejected the edit to calc.py" in run.transcript()
    assert_workspace_untouched_but(demo_workspace)
    assert_nothing_left_running(demo_workspace)


def test_code_action_asks_about_the_selection(tmp_path: Path, demo_workspace: Path):
    run = run_emacs(
        tmp_path,
        demo_workspace,
        region="9:11",
        action="Ask the agent about this selection…",
        answer="Reject",
    )
    assert run.report["result"]["stopReason"] == "end_turn", run.report
    text = run.transcript()
    assert "**You:** Explain this code." in text
    # The turn-end line, with the demo's context meter.
    assert re.search(
        r"\*turn ended: end_turn · context [\d,]+/[\d,]+ \(\d+%\)[^*]*\*$", text.rstrip()
    )


def test_code_action_on_an_agent_comment(tmp_path: Path, demo_workspace: Path):
    calc = demo_workspace / "calc.py"
    calc.write_text("# @agent why does subtract add?\n" + calc.read_text(encoding="utf-8"))
    run = run_emacs(
        tmp_path, demo_workspace, action="Send to agent: why does subtract add?", answer="Reject"
    )
    assert run.report["result"]["stopReason"] == "end_turn", run.report
    assert "**You:** why does subtract add?" in run.transcript()


def test_code_action_through_newer_eglots_execute(tmp_path: Path, demo_workspace: Path):
    """eglot 1.15+ runs code actions with `eglot-execute`, not `eglot-execute-command`."""
    run = run_emacs(
        tmp_path,
        demo_workspace,
        region="9:11",
        action="Ask the agent about this selection…",
        answer="Reject",
        newer_eglot=True,
    )
    assert run.report["result"]["stopReason"] == "end_turn", run.report
    assert "**You:** Explain this code." in run.transcript()


def ruff() -> str:
    """The ruff of the test environment, as a linter Flymake runs."""
    path = Path(sys.executable).with_name("ruff")
    assert path.exists(), "ruff is a test dependency (make setup)"
    return str(path)


def test_fix_action_on_a_linters_flymake_diagnostic(tmp_path: Path, demo_workspace: Path):
    """eglot passes only its own server's diagnostics with a code action request: acpls-eglot.el
    keeps the buffer's Flymake backends (Emacs' python-flymake, here running ruff) and sends their
    diagnostics, so acpls offers "Ask the agent to fix: …" on a real linter's finding."""
    calc = demo_workspace / "calc.py"
    source = calc.read_text(encoding="utf-8")
    buggy = source.replace(
        '    """Return a minus b."""\n    return a + b\n',
        '    """Return a minus b."""\n    return a + b + offset\n',
    )
    assert buggy != source
    calc.write_text(buggy, encoding="utf-8")
    line = buggy.splitlines().index("    return a + b + offset") + 1
    lint = [ruff(), "check", "--isolated", "--no-cache", "--select", "F"]
    lint += ["--output-format=concise", "--stdin-filename=stdin", "-"]
    title = "Ask the agent to fix: F821 Undefined name `offset`"
    run = run_emacs(
        tmp_path, demo_workspace, action=title, answer="Reject", lint=lint, point=f"{line}:20"
    )
    report = run.report
    assert report["result"]["stopReason"] == "end_turn", report
    assert report["flymakeBackends"][0] == "python-flymake"
    text = run.transcript()
    assert (
        "**You:** Fix this diagnostic in calc.py:\n\n"
        f"- line {line}, col 20 to line {line}, col 26 (error, python-flymake): "
        "F821 Undefined name `offset`\n\nThe code around it and the whole file are attached."
    ) in text, text
    assert_workspace_untouched_but(demo_workspace, "calc.py")
    assert_nothing_left_running(demo_workspace)


def test_configuration_byte_compiles_without_warnings(tmp_path: Path):
    program = emacs()
    copy = tmp_path / CONFIG.name
    shutil.copy(CONFIG, copy)
    done = subprocess.run(
        [program, "--batch", "-L", str(tmp_path), "-f", "batch-byte-compile", str(copy)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = "\n".join(
        line for line in (done.stdout + done.stderr).splitlines() if not line.startswith("Loading")
    )
    assert done.returncode == 0 and output.strip() == "", output


NOTES = "# Notes\n\nTotals are rounded to cents.\n"


@pytest.mark.parametrize("save", [True, False], ids=["saving", "not-saving"])
@pytest.mark.parametrize("agent_writes_too", [False, True], ids=["alone", "agent-writes-too"])
def test_new_file_holds_the_agents_text_once(
    tmp_path: Path, demo_workspace: Path, agent_writes_too: bool, save: bool
):
    """eglot 1.9 has no `resourceOperations`. Its edit of a file it has no buffer for goes into a
    buffer it visits for it, which `acpls-save-edits` nil (or eglot without acpls-eglot.el) never
    saves: acpls once created the file empty and sent the insert, then read the disk (empty) or
    the buffer as eglot opened it (empty, its didChange comes later) and inserted the text again.
    OpenCode also writes the file itself right after asking acpls to: here its copy lands as
    acpls' edit reaches Emacs, before Emacs visits the file (the driver's ACPLS_TEST_AGENT_COPY),
    so the insert went in front of it. The buffer (follow-along shows the file) and the disk end
    holding the agent's text once, unmodified."""
    notes = demo_workspace / "helpers.py"
    write = {
        "request": "fs/write_text_file",
        "params": {"sessionId": "$sessionId", "path": str(notes), "content": NOTES},
    }
    if agent_writes_too:
        # Its own write a moment later; where it lands in acpls' write is the driver's doing.
        mine = {"write_file": {"path": str(notes), "text": NOTES}}
        steps = [{**write, "wait": False}, {"sleep": 0.5}, mine, {"sleep": 0.5}]
    else:
        steps = [{**write, "expect": {}}]
    log = tmp_path / "agent.jsonl"
    agent = script_command({"protocol": 1, "on_prompt": steps}, log)
    run = run_emacs(
        tmp_path,
        demo_workspace,
        prompt="write the helpers",
        agent=agent,
        watch=[notes],
        save=save,
        agent_copy=(notes, NOTES) if agent_writes_too else None,
    )
    report = run.report
    assert report["result"]["stopReason"] == "end_turn", report
    buffer = report["buffers"][str(notes)]
    once = {"text": NOTES, "modified": False}
    # Racing, the agent's copy may come first: acpls then has nothing to write, and shows nothing.
    assert buffer == once or (agent_writes_too and buffer is None), report
    assert notes.read_text(encoding="utf-8") == NOTES
    answers = [json.loads(line) for line in log.read_text().splitlines()]
    assert not [a for a in answers if "error" in a], answers
    assert_workspace_untouched_but(demo_workspace, notes.name)
    assert_nothing_left_running(demo_workspace)
