"""The fixture ACP registry on a local HTTP server, for an editor's end-to-end test that is not
Python (the VS Code "acpls: Choose agent…" test, vscode-extension/test/e2e/chooseAgent.test.ts):
serves `registry.json` and the agents' archives of tests/registry/support.py (the binary agent
`tar-agent` runs the scripted agent, which offers a sign-in method and answers every prompt with
`from tar-agent`; its icon is served here too), prints one JSON line with the registry's URL, and
serves until its stdin closes.

    python -m tests.registry.serve --log FILE
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tests.registry.support import fixture_registry, registry_server

SCRIPT = {
    "protocol": 1,
    "on_initialize": {
        "agentInfo": {"name": "tar-agent", "version": "1.2.3"},
        "authMethods": [{"id": "tar-key", "name": "Tar key", "description": "a key for tar"}],
    },
    "on_prompt": [
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "from tar-agent"},
            }
        }
    ],
}

ICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16">'
    b'<rect width="16" height="16" fill="#3a7"/></svg>'
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log", type=Path, required=True, help="what tar-agent receives (JSONL)")
    args = parser.parse_args()
    with registry_server() as server:
        registry = fixture_registry(server, SCRIPT, args.log)
        server.files["/tar-agent.svg"] = ICON
        for agent in registry["agents"]:
            if agent["id"] == "tar-agent":
                agent["icon"] = server.url("tar-agent.svg")
        server.set_registry(registry)
        out = {"url": server.url("registry.json"), "icon": server.url("tar-agent.svg")}
        print(json.dumps(out), flush=True)
        sys.stdin.read()  # the test closes it when it is done
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
