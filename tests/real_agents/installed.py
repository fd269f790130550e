"""Where `make agents` put each published agent, for the full-turn tests.

The versions come from tests/real_agents/agents.mk (the one place they are pinned). A test that
needs an agent calls `executable(name)`: when the agent is not installed the test fails (never
skips) and says which make target installs it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import attrs
import pytest

REPO = Path(__file__).resolve().parents[2]
AGENTS_MK = Path(__file__).with_name("agents.mk")
_AGENT_LINE = re.compile(
    r"^AGENT_(?P<name>\w+)\s*:=\s*(?P<package>\S+)\s+(?P<version>\S+)\s+(?P<binary>\S+)\s*$"
)


@attrs.frozen
class PinnedAgent:
    name: str
    package: str
    version: str
    binary: str

    @property
    def prefix(self) -> Path:
        return agents_dir() / f"{self.name}-{self.version}"

    @property
    def path(self) -> Path:
        return self.prefix / "node_modules" / ".bin" / self.binary


def agents_dir() -> Path:
    """`make test-agents` passes its AGENTS_DIR; by hand it is the repository's shared cache."""
    configured = os.environ.get("ACPLS_AGENTS_DIR")
    return Path(configured) if configured else REPO / ".cache" / "agents"


def pinned_agents() -> dict[str, PinnedAgent]:
    found = {}
    for line in AGENTS_MK.read_text(encoding="utf-8").splitlines():
        match = _AGENT_LINE.match(line)
        if match:
            found[match["name"]] = PinnedAgent(**match.groupdict())
    return found


def pinned(name: str) -> PinnedAgent:
    agents = pinned_agents()
    if name not in agents:
        raise KeyError(f"no agent {name!r} in {AGENTS_MK} (known: {', '.join(agents)})")
    return agents[name]


def executable(name: str) -> Path:
    """The agent's installed executable; a clear test failure when `make agents` has not run."""
    agent = pinned(name)
    if not (agent.prefix / ".installed").is_file() or not os.access(agent.path, os.X_OK):
        pytest.fail(
            f"{agent.package}@{agent.version} ({name}) is not installed at {agent.path}: "
            "run `make agents` (make test-agents installs it)",
            pytrace=False,
        )
    return agent.path


def copilot_cache_home() -> Path:
    """COPILOT_CACHE_HOME shared by every run: Copilot unpacks ~235 MB there on first start."""
    return agents_dir() / "copilot-cache"
