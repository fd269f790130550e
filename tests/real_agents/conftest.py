"""Full turns of the six published ACP agents (tests/real_agents/agents.mk pins and installs them)
through the real acpls. Every test here is marked `real_agents`: `make test-agents` runs them, and
a missing agent fails the test (tests/real_agents/installed.py), never skips it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import client, server_env, state_dir, workspace
from tests.real_agents.harness import START_TIMEOUT, TURN_TIMEOUT

__all__ = ["client", "server_env", "state_dir", "workspace"]

# pyproject's global pytest timeout (120 s) is shorter than one turn's own bound (TURN_TIMEOUT):
# it would stop a slow turn first, with a bare stack dump instead of the harness' message (which
# names the turn and carries the model server's log). A test here may start agents and run a few
# turns, so its own cap is well above them; it only stops a test that hangs outside every bound.
REAL_AGENT_TEST_TIMEOUT = START_TIMEOUT * 2 + TURN_TIMEOUT * 5


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.real_agents)
            if item.get_closest_marker("timeout") is None:  # a test's own marker wins
                item.add_marker(pytest.mark.timeout(REAL_AGENT_TEST_TIMEOUT))
