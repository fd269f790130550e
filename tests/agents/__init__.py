"""Shared ACP test agents and helpers.

- `scripted_agent.py`: an agent that replays a JSON script (see its docstring for the format);
  `script_command()` builds the argv that starts it.
- `scripts/*.json`: ready-made scripts (`v1_basic.json`, `v2_basic.json`, ...); `load_script()`.
- `mini_client.py`: a tiny ACP client that drives any agent and validates what it sends.
- `acp_schema.py`: validation of ACP messages against the official schemas.
- `demo_command()`: the argv of the built-in demo agent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

AGENTS_DIR = Path(__file__).parent
SCRIPTED_AGENT = AGENTS_DIR / "scripted_agent.py"
SCRIPTS_DIR = AGENTS_DIR / "scripts"


def script_command(
    script: dict[str, Any] | str | Path,
    log_path: Path | str | None = None,
    *,
    env_dump: Path | str | None = None,
    pid_file: Path | str | None = None,
) -> list[str]:
    """The argv that starts the scripted agent with `script`.

    `script` is a script dict, or the path of a script file (a bare name such as "v1_basic" means
    `scripts/v1_basic.json`). Every message the agent receives is appended to `log_path` (JSONL).
    """
    argv = [sys.executable, str(SCRIPTED_AGENT)]
    if isinstance(script, dict):
        argv += ["--script-json", json.dumps(script)]
    else:
        argv += ["--script", str(script_path(script))]
    # Absolute paths: acpls starts the agent in the workspace, not in the test's directory.
    if log_path is not None:
        argv += ["--log", str(Path(log_path).resolve())]
    if env_dump is not None:
        argv += ["--env-dump", str(Path(env_dump).resolve())]
    if pid_file is not None:
        argv += ["--pid-file", str(Path(pid_file).resolve())]
    return argv


def script_path(script: str | Path) -> Path:
    path = Path(script)
    if path.suffix != ".json" and not path.is_absolute() and len(path.parts) == 1:
        return SCRIPTS_DIR / f"{path}.json"
    return path.resolve()


def load_script(name: str) -> dict[str, Any]:
    """A ready-made script from `scripts/` as a dict (to tweak before `script_command`)."""
    return json.loads(script_path(name).read_text(encoding="utf-8"))


def read_log(log_path: Path | str) -> list[dict[str, Any]]:
    """The messages the scripted agent received so far (an absent log is empty)."""
    path = Path(log_path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def demo_command() -> list[str]:
    """The argv of the built-in demo agent (`python -m acpls.demo`)."""
    return [sys.executable, "-m", "acpls.demo"]
