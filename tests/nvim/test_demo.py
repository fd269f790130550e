"""`make demo` (neovim/demo/run.sh) started headless: the demo agent's whole turn in a real Neovim
with the plugin, the permission prompt answered, the terminal shown, the edit applied."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.nvim.conftest import PLUGIN

pytestmark = pytest.mark.nvim

RUN = PLUGIN / "demo" / "run.sh"


def test_demo_reaches_the_end_of_the_turn(tmp_path: Path):
    result_file = tmp_path / "result.json"
    env = {
        **os.environ,
        "VENV": str(Path(sys.executable).parent.parent),
        "TMPDIR": str(tmp_path),
        "ACPLS_DEMO_HEADLESS": "1",
        "ACPLS_DEMO_SPEED": "0",
        "ACPLS_DEMO_RESULT": str(result_file),
        "ACPLS_DEMO_TIMEOUT_MS": "60000",
    }
    proc = subprocess.run(
        [str(RUN), "--headless"],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(result_file.read_text())
    assert result["stopReason"] == "end_turn"
    assert result["errors"] == []
    # The demo asked to approve its edit, and the approval went through.
    assert result["permissions"] == ["Allow [allow once]"]
    assert "    return a - b" in result["calc"]
    # The agent wrote the file itself: the buffer on screen shows the new text too.
    assert result["calc_buffer"] == result["calc"]
    chat = "\n".join(result["chat"])
    assert "✓ edit · Fix subtract() in calc.py · completed" in chat
    assert "_turn ended: end_turn_" in chat
    # Its check command ran in a terminal buffer that shows the output.
    (term,) = result["terminals"]
    assert term["status"] == "exit 0"
    assert any("4 passed" in line for line in term["lines"])
    assert result["follow"] is True
