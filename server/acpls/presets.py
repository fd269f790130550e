"""Built-in agent presets: the commands that start well-known ACP agents."""

from __future__ import annotations

import sys

import attrs


@attrs.frozen
class AgentSpec:
    """How to start an agent: what the editor's settings resolve to."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]


def _preset(name: str, command: str, *args: str) -> AgentSpec:
    return AgentSpec(name=name, command=command, args=args)


PRESETS: dict[str, AgentSpec] = {
    "claude": _preset("claude", "npx", "-y", "@agentclientprotocol/claude-agent-acp@0.101.0"),
    "gemini": _preset("gemini", "gemini", "--acp"),
    "codex": _preset("codex", "npx", "-y", "@zed-industries/codex-acp"),
    "goose": _preset("goose", "goose", "acp"),
    "opencode": _preset("opencode", "opencode", "acp"),
    "demo": _preset("demo", sys.executable, "-m", "acpls.demo"),
}


def preset_names() -> list[str]:
    return sorted(PRESETS)
