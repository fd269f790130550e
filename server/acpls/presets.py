"""Built-in agent presets: the commands that start well-known ACP agents.

A preset names the agent's executable and its ACP arguments, and, for agents published on npm, the
package and the version acpls was tested with. The executable is used where it is on PATH (the
user's own install, whatever its version); otherwise acpls runs the pinned package through `npx`,
so that a preset works on a machine with only Node.js, and never picks up an untested release.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable

import attrs

from acpls.registry.spec import AgentSpec

__all__ = [
    "PRESETS_BY_NAME",
    "PRESET_LIST",
    "AgentSpec",
    "Preset",
    "preset_names",
    "resolve_preset",
]


@attrs.frozen
class Preset:
    """A well-known agent: its executable, its ACP arguments, and its npm package if it has one."""

    name: str
    title: str
    executable: str
    args: tuple[str, ...] = ()
    package: str | None = None  # "name@version" on npm: run through npx when not on PATH
    install_hint: str = ""
    # The ACP registry entry for the same agent: its description and icon are shown with the
    # preset (the preset keeps its own tested command and version).
    registry_id: str | None = None

    def resolve(self, which: Callable[[str], str | None] = shutil.which) -> AgentSpec:
        """The command that starts it here: the executable on PATH, else the pinned npm package."""
        if self.package is None or which(self.executable) is not None:
            return AgentSpec(name=self.name, command=self.executable, args=self.args)
        npx_args = ("-y", f"--package={self.package}", "--", self.executable, *self.args)
        return AgentSpec(name=self.name, command="npx", args=npx_args)


PRESET_LIST: tuple[Preset, ...] = (
    Preset(
        "claude",
        "Claude Code",
        "claude-agent-acp",
        package="@agentclientprotocol/claude-agent-acp@0.101.0",
        install_hint="npm install -g @agentclientprotocol/claude-agent-acp@0.101.0",
        registry_id="claude-code-acp",
    ),
    Preset(
        "gemini",
        "Gemini CLI",
        "gemini",
        ("--acp",),
        package="@google/gemini-cli@0.61.0",
        install_hint="npm install -g @google/gemini-cli@0.61.0",
        registry_id="gemini",
    ),
    Preset(
        "codex",
        "Codex",
        "codex-acp",
        package="@zed-industries/codex-acp@0.16.0",
        install_hint="npm install -g @zed-industries/codex-acp@0.16.0",
        registry_id="codex-acp",
    ),
    Preset(
        "opencode",
        "OpenCode",
        "opencode",
        ("acp",),
        package="opencode-ai@1.18.33",
        install_hint="npm install -g opencode-ai@1.18.33",
        registry_id="opencode",
    ),
    Preset(
        "qwen",
        "Qwen Code",
        "qwen",
        ("--acp",),
        package="@qwen-code/qwen-code@0.24.4",
        install_hint="npm install -g @qwen-code/qwen-code@0.24.4",
        registry_id="qwen-code",
    ),
    Preset(
        "copilot",
        "GitHub Copilot CLI",
        "copilot",
        ("--acp",),
        package="@github/copilot@1.0.102",
        install_hint="npm install -g @github/copilot@1.0.102",
    ),
    Preset(
        "goose",
        "Goose",
        "goose",
        ("acp",),
        install_hint="install goose (https://block.github.io/goose/) and put it on PATH",
    ),
    Preset("demo", "acpls demo agent (no API key)", sys.executable, ("-m", "acpls.demo")),
)

PRESETS_BY_NAME: dict[str, Preset] = {p.name: p for p in PRESET_LIST}


def resolve_preset(name: str) -> AgentSpec:
    """The start command of a preset; KeyError for an unknown name."""
    return PRESETS_BY_NAME[name].resolve()


def preset_names() -> list[str]:
    return sorted(PRESETS_BY_NAME)
