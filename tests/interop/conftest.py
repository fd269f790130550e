"""Interop with ACP agents nobody in this project wrote: the ACP Python SDK's example agent and
`@agentclientprotocol/claude-agent-acp` from npm, each driven through the real acpls.

`make test-interop` installs both under `.cache/interop/` (editors/editors.mk). Run by hand without
that, the tests skip, unless ACPLS_REQUIRE_INTEROP=1 (set by the make target) makes a missing
install a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import client, server_env, state_dir, workspace

__all__ = ["client", "server_env", "state_dir", "workspace"]

REPO = Path(__file__).resolve().parents[2]
INTEROP_CACHE = REPO / ".cache" / "interop"
ACP_SDK_VERSION = "0.12.1"
CLAUDE_ACP_VERSION = "0.101.0"
ECHO_AGENT = (
    INTEROP_CACHE / f"agent_client_protocol-{ACP_SDK_VERSION}" / "examples" / "echo_agent.py"
)
CLAUDE_ACP = INTEROP_CACHE / "node_modules" / ".bin" / "claude-agent-acp"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.interop)


def require(path: Path, what: str) -> Path:
    """The installed agent at `path`; skip (or fail under `make test-interop`) when missing."""
    if path.exists():
        return path
    message = f"{what} is not installed at {path}: run `make test-interop`"
    if os.environ.get("ACPLS_REQUIRE_INTEROP") == "1":
        pytest.fail(message)
    pytest.skip(message)
