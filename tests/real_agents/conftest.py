"""Full turns of the six published ACP agents (tests/real_agents/agents.mk pins and installs them)
through the real acpls. Every test here is marked `real_agents`: `make test-agents` runs them, and
a missing agent fails the test (tests/real_agents/installed.py), never skips it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import client, server_env, state_dir, workspace

__all__ = ["client", "server_env", "state_dir", "workspace"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.real_agents)
