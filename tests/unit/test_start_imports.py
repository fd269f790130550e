"""What acpls imports between spawn and the `initialize` result (bench P4: start within 1.2x the
smallest pygls server). The command line's modules (agent registry models, installs, doctor,
agent checks) and the prompt's mention parser are imported when first used, not at start."""

from __future__ import annotations

import json
import subprocess
import sys

# Each of these cost milliseconds of every editor's start and is needed only later.
NOT_AT_START = (
    "acpls.cli",
    "acpls.registry.model",
    "acpls.services.agent_check",
    "acpls.services.agent_install",
    "acpls.services.doctor",
    "acpls.translate.mentions",
    "acpls.core.hub",  # built right after the initialize result (server.py)
)

START = """
import json, sys
from acpls.__main__ import _parse_args
args = _parse_args(sys.argv[1:])
from acpls import speedups
from acpls.server import create_server
create_server()
print(json.dumps(sorted(m for m in sys.modules if m.startswith("acpls"))))
"""


def _modules_at_start(*argv: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", START, *argv], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout))


def test_the_server_start_leaves_the_command_lines_modules_out() -> None:
    for argv in ((), ("--stdio",), ("--stdio", "--log-level", "DEBUG")):
        loaded = _modules_at_start(*argv)
        assert "acpls.server" in loaded
        assert not loaded & set(NOT_AT_START), (argv, sorted(loaded & set(NOT_AT_START)))


def test_a_subcommand_still_gets_the_command_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "acpls", "agents", "list"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "demo" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "acpls", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "{agents,doctor}" in proc.stdout
