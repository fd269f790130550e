"""The agents a user can pick: acpls' presets and the ACP registry's entries, as one catalog.

A name resolves to a start command: a preset's tested command first, else the registry entry of
that id (npx / uvx pinned to the registry's version, or this platform's binary, installed on
first use). The registry is whatever `RegistryService.current()` holds; refreshing it is a task of
the catalog's supervisor, so listing or resolving never waits for the network.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acpls.presets import PRESET_LIST, PRESETS_BY_NAME, Preset
from acpls.registry.model import DEFAULT_REGISTRY_URL, RegistryAgent, current_platform
from acpls.registry.spec import AgentSpec
from acpls.services import agent_install, node_runtime
from acpls.services.agent_install import AgentInstallError, Which
from acpls.services.registry import RegistryService, RegistryState
from acpls.supervisor import TaskSupervisor

logger = logging.getLogger(__name__)

REFRESH_EVERY = 3600.0


class UnknownAgent(ValueError):
    pass


class AgentCatalog:
    def __init__(
        self,
        environ: Mapping[str, str],
        url: str = DEFAULT_REGISTRY_URL,
        *,
        tasks: TaskSupervisor | None = None,
        platform: str | None = None,
        which: Which | None = None,
    ) -> None:
        self.environ = dict(environ)
        self.service = RegistryService(self.environ, url)
        self.tasks = tasks
        self.platform = platform if platform is not None else current_platform()
        # Commands are looked up on the agents' PATH, which may hold acpls' Node (node_runtime).
        self.which = which or node_runtime.path_which(self.environ)
        self._refreshing: asyncio.Task[RegistryState] | None = None
        self._refreshed_at: float | None = None
        self.auth_methods: dict[str, list[dict[str, Any]]] = {}  # seen in initialize, by name

    # -- the registry ----------------------------------------------------------------------------
    def set_url(self, url: str) -> None:
        if url != self.service.url:
            self.service.set_url(url)
            self._refreshed_at = None

    def current(self) -> RegistryState:
        return self.service.current()

    def schedule_refresh(self) -> asyncio.Task[RegistryState] | None:
        """Start a refresh in the background unless one runs or one ran within the hour."""
        if self.tasks is None or not self.service.url:
            return None
        if self._refreshing is not None and not self._refreshing.done():
            return self._refreshing
        if self._refreshed_at is not None and time.monotonic() - self._refreshed_at < REFRESH_EVERY:
            return None
        self._refreshing = self.tasks.spawn("registry-refresh", self._refresh())
        return self._refreshing

    async def refresh(self) -> RegistryState:
        """Refresh now (the user asked); joins a refresh already running."""
        if self._refreshing is not None and not self._refreshing.done():
            return await asyncio.shield(self._refreshing)
        return await self._refresh()

    async def _refresh(self) -> RegistryState:
        state = await self.service.refresh()
        self._refreshed_at = time.monotonic()
        return state

    # -- names -----------------------------------------------------------------------------------
    def registry_agent(self, agent_id: str) -> RegistryAgent | None:
        return self.current().registry.agent(agent_id)

    def resolve(self, name: str) -> AgentSpec:
        """A preset's command, else the registry entry's; UnknownAgent, AgentInstallError."""
        preset = PRESETS_BY_NAME.get(name)
        if preset is not None:
            return preset.resolve(self.which)
        agent = self.registry_agent(name)
        if agent is None:
            raise UnknownAgent(self._unknown(name))
        return agent_install.resolve(
            agent, environ=self.environ, platform=self.platform, which=self.which
        )

    def _unknown(self, name: str) -> str:
        ids = sorted({*PRESETS_BY_NAME, *(a.id for a in self.current().registry.agents)})
        return f"unknown agent {name!r} (presets and registry ids: {', '.join(ids)})"

    async def install(self, name: str) -> dict[str, Any]:
        """Make the agent ready to start: a binary is downloaded and unpacked; an npx / uvx
        agent needs its tool on PATH (the package itself is fetched when it first starts)."""
        spec = self.resolve(name)
        if spec.install_dir is not None and spec.registry_id is not None:
            agent = self.registry_agent(spec.registry_id)
            assert agent is not None
            await agent_install.install_binary(agent, self.platform, self.environ)
            spec = self.resolve(name)
        elif self.which(spec.command) is None and not spec.command.startswith("/"):
            raise AgentInstallError(self._missing_tool(name, spec))
        return {"agent": name, "command": spec.argv, **self._install_fields(spec)}

    def _missing_tool(self, name: str, spec: AgentSpec) -> str:
        preset = PRESETS_BY_NAME.get(name)
        hint = f"; {preset.install_hint}" if preset and preset.install_hint else ""
        tool = {"npx": "Node.js (npx)", "uvx": "uv (uvx)"}.get(spec.command, spec.command)
        return f"{name}: {tool} is not on PATH{hint}"

    def _install_fields(self, spec: AgentSpec) -> dict[str, Any]:
        kind = "binary" if spec.install_dir else spec.command if spec.registry_id else "preset"
        out: dict[str, Any] = {"kind": kind, "installed": self._installed(spec)}
        if spec.install_dir:
            out["installDir"] = spec.install_dir
        return out

    def _installed(self, spec: AgentSpec) -> bool:
        if spec.install_dir is not None:
            return _is_dir(spec.install_dir)
        return self.which(spec.command) is not None and spec.command not in ("npx", "uvx")

    # -- listing ---------------------------------------------------------------------------------
    def entries(self) -> list[dict[str, Any]]:
        """Presets first (with their registry entry's description and icon), then every registry
        agent no preset stands for."""
        registry = self.current().registry
        covered = {p.registry_id for p in PRESET_LIST if p.registry_id}
        rows = [self._preset_row(p, registry.agent(p.registry_id or "")) for p in PRESET_LIST]
        rows += [self._registry_row(a) for a in registry.agents if a.id not in covered]
        return rows

    def row(self, name: str) -> dict[str, Any]:
        """One agent's listing row: a preset, else a registry id (even one a preset stands for)."""
        preset = PRESETS_BY_NAME.get(name)
        if preset is not None:
            return self._preset_row(preset, self.registry_agent(preset.registry_id or ""))
        agent = self.registry_agent(name)
        if agent is None:
            raise UnknownAgent(self._unknown(name))
        return self._registry_row(agent)

    def _preset_row(self, preset: Preset, agent: RegistryAgent | None) -> dict[str, Any]:
        version = preset.package.rsplit("@", 1)[1] if preset.package else None
        row: dict[str, Any] = {
            "id": preset.name,
            "name": preset.title,
            "description": agent.description if agent else preset.title,
            "version": version,
            "icon": agent.icon if agent else None,
            "distributions": ["npx"] if preset.package else [],
            "preset": True,
        }
        if agent is not None:
            row["registryId"] = agent.id
        return self._with_state(row, preset.name)

    def _registry_row(self, agent: RegistryAgent) -> dict[str, Any]:
        row: dict[str, Any] = {
            "id": agent.id,
            "name": agent.name,
            "description": agent.description,
            "version": agent.version,
            "icon": agent.icon,
            "distributions": list(agent.distribution.kinds),
            "preset": False,
            "registryId": agent.id,
        }
        if agent.repository:
            row["repository"] = agent.repository
        if agent.license:
            row["license"] = agent.license
        return self._with_state(row, agent.id)

    def _with_state(self, row: dict[str, Any], name: str) -> dict[str, Any]:
        try:
            spec = self.resolve(name)
        except (AgentInstallError, UnknownAgent) as exc:
            row.update(installed=False, runnable=False, problem=str(exc))
        else:
            row.update(self._install_fields(spec), command=spec.argv)
            # startable now, with nothing to download first (npx / uvx fetch their package)
            row["runnable"] = row["installed"] or (
                spec.install_dir is None and self.which(spec.command) is not None
            )
        if name in self.auth_methods:
            row["authMethods"] = self.auth_methods[name]
        return row


def _is_dir(path: str) -> bool:
    return Path(path).is_dir()
