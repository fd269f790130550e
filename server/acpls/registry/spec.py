"""How to start an agent: what a preset, a registry entry or the `agent` setting becomes."""

from __future__ import annotations

import attrs

# Here rather than in registry/model.py: the settings need it at start, the registry's models not.
DEFAULT_REGISTRY_URL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"


@attrs.frozen
class AgentSpec:
    """How to start an agent: what the editor's settings resolve to.

    `registry_id` names the registry entry it came from (None for presets and explicit commands);
    `install_dir` is set for a binary distribution, which must be unpacked there before it starts.
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    registry_id: str | None = attrs.field(default=None, kw_only=True)
    install_dir: str | None = attrs.field(default=None, kw_only=True)

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]
