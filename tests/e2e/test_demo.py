"""`make demo-transcript`: the whole demo turn through the real acpls, in both ACP versions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acpls.demo.transcript import SAMPLE

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("protocol", ["1", "2", "auto"])
def test_demo_transcript_shows_the_whole_turn(tmp_path: Path, protocol: str) -> None:
    workspace = tmp_path / "workspace"
    shutil.copytree(SAMPLE, workspace)
    before = (workspace / "calc.py").read_text()
    env = {**os.environ, "ACPLS_DEMO_SPEED": "0", "XDG_STATE_HOME": str(tmp_path / "state")}
    run = subprocess.run(
        [sys.executable, "-m", "acpls.demo.transcript", "--workspace", str(workspace), "--protocol", protocol],
        capture_output=True, text=True, timeout=90, env=env,
    )  # fmt: skip
    out = ANSI.sub("", run.stdout)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "turn ended: end_turn" in out
    assert "thinking:" in out and "agent:" in out
    assert "plan" in out and "✓ Read the code" in out
    assert "→ follow: calc.py:" in out
    assert "permission:" in out and "(reject_always)" in out
    assert "│" in out and "passed" in out  # the terminal's streamed output
    assert "[failed]" in out  # the failing tool call
    after = (workspace / "calc.py").read_text()
    assert after != before and "return a - b" in after
