"""A real Claude Code turn for an editor's end-to-end test that is not Python (the VS Code one,
vscode-extension/test/e2e/realClaude.test.ts): makes the git workspace holding shop.py, starts the
scripted model server playing `claude/editor_turn`, and prints one JSON line with the workspace, the
`acpls.agent` setting that runs the installed Claude Code (pinned in agents.mk) against the model,
and the texts the test checks on disk. It serves until its stdin closes.

    python -m tests.real_agents.serve_claude --workspace DIR --log FILE [--no-node]

When Claude Code is not installed it prints `{"error": ...}` (saying which make target installs it)
and exits with status 2: the test fails, it never skips.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tests.model_server import ModelServer, load_script
from tests.real_agents.harness import (
    COMMAND_OUTPUT,
    EDITED,
    REPORT,
    SHOP,
    _base_env,
    _claude_env,
    make_workspace,
)
from tests.real_agents.installed import pinned


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspace", type=Path, required=True, help="made here (must not exist)")
    parser.add_argument("--log", type=Path, required=True, help="the model server's request log")
    parser.add_argument(
        "--no-node",
        action="store_true",
        help="the agent's PATH has no node or npm: it runs on the editor's Node, through acpls",
    )
    args = parser.parse_args()
    agent = pinned("claude")
    if not (agent.prefix / ".installed").is_file() or not os.access(agent.path, os.X_OK):
        message = (
            f"{agent.package}@{agent.version} (claude) is not installed at {agent.path}:"
            " run `make agent-claude` (make test-vscode installs it)"
        )
        print(json.dumps({"error": message}), flush=True)
        return 2
    workspace = make_workspace(args.workspace)
    home = args.workspace.parent / "claude-home"
    home.mkdir(parents=True, exist_ok=True)
    script = load_script("claude", "editor_turn", workspace=str(workspace))
    with ModelServer(script, log_path=args.log) as model:
        env = _base_env(home, node_on_path=not args.no_node) | _claude_env(model.url, home)
        out = {
            "workspace": str(workspace),
            "agent": {"command": str(agent.path), "args": [], "env": env, "name": "claude"},
            "shop": SHOP,
            "edited": EDITED,
            "report": REPORT,
            "commandOutput": COMMAND_OUTPUT,
        }
        print(json.dumps(out), flush=True)
        sys.stdin.read()  # the test closes it when it is done
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
