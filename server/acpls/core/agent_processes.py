"""The agents' processes: one per agent name (core/agent_slots.py), started on first need, stopped
and started again when its settings change or the user asks, and told to the editor as it goes
(`acpls/agentStatus`). When a process ends, the sessions it held are closed.

The hub owns one `AgentProcesses`; what it asks of the hub (its settings, the folder an agent
starts in, the wiring of a new connection to the core's handlers) is `ProcessesHub` below.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from acpls.acp.connection import AgentConnection
from acpls.acp.errors import INTERNAL_ERROR, AcpError
from acpls.acp.process import AgentStartError
from acpls.core import ports
from acpls.core.agent_slots import AgentSlot, guard_sessions
from acpls.core.errors import CommandError
from acpls.editor import messages as msg
from acpls.registry.spec import AgentSpec
from acpls.services import node_runtime
from acpls.services.agent_install import AgentInstallError
from acpls.settings import parse_settings
from acpls.translate.agent_stderr import sandbox_problem

if TYPE_CHECKING:
    from acpls.core.agent_requests import AgentRequests
    from acpls.core.agents import AgentCatalog
    from acpls.core.routing import UpdateRouter
    from acpls.core.sessions import SessionRegistry
    from acpls.flow import FlowGate
    from acpls.services.node_runtime import NodeShims
    from acpls.services.owned_processes import OwnedProcesses
    from acpls.settings import Settings
    from acpls.supervisor import TaskSupervisor

logger = logging.getLogger(__name__)

# Generous: a first start may include installing the agent (npx, a registry download).
AGENT_START_TIMEOUT = 120.0
# Distinct sandbox-failure lines shown per agent process (the rest stay in the log).
MAX_SANDBOX_NOTICES = 3


class ProcessesHub(Protocol):
    @property
    def settings(self) -> Settings: ...

    def workspace_root(self) -> str: ...

    def sign_in_env(self, agent: str) -> Mapping[str, str]:
        """The environment a sign-in gave this agent (core/auth.py), added to its own."""
        ...

    def wire(self, conn: AgentConnection, agent: str, env: Mapping[str, str]) -> None:
        """Register the core's handlers for the agent's requests and updates on `conn`."""
        ...


class AgentProcesses:
    def __init__(
        self,
        editor: ports.EditorPort,
        registry: SessionRegistry,
        tasks: TaskSupervisor,
        catalog: AgentCatalog,
        agent_requests: AgentRequests,
        router: UpdateRouter,
        editor_output: FlowGate,
        environ: Mapping[str, str],
        hub: ProcessesHub,
        *,
        node: NodeShims | None = None,
        owned: OwnedProcesses | None = None,
    ) -> None:
        self.editor = editor
        self.owned = owned  # marks the agents' processes as this acpls' (None: unmarked)
        self.environ = environ  # the editor's environment, which agents inherit
        self.node = node  # a Node.js for agents whose PATH has none
        self.registry = registry
        self.tasks = tasks
        self.catalog = catalog
        self.agent_requests = agent_requests
        self.router = router
        self.editor_output = editor_output  # each agent's output waits while it is closed
        self.hub = hub
        self._slots: dict[str, AgentSlot] = {}
        self._closing = False

    # -- naming an agent ---------------------------------------------------------------------------
    def agent_spec(self, agent: Any = None) -> AgentSpec:
        """The spec of an agent named by a session or `acpls.newSession`: None for the default
        agent, a name (the default's, one of the `agents` setting, one started before, a preset or
        a registry id) or an agent object `{command, args?, env?, name?}` as `agent` takes."""
        settings = self.hub.settings
        if agent is None or agent == settings.agent.name:
            return settings.agent
        # The `agents` setting names more agents: an object (named by its key) or a preset (its
        # spec), else a registry id, resolved below like any other name.
        configured = settings.configured_agent(agent) if isinstance(agent, str) else None
        if isinstance(configured, AgentSpec):
            return configured
        if isinstance(configured, str):
            agent = configured
        elif isinstance(agent, str):
            slot = self._slots.get(agent)
            if slot is not None and slot.spec is not None:
                return slot.spec
        if not isinstance(agent, (str, dict)):
            raise CommandError("agent must be a name or {command, args?, env?, name?}", -32602)
        parsed, problems = parse_settings({"agent": agent}, settings, self.resolve_agent)
        if problems:
            raise CommandError("; ".join(problems), -32602)
        return parsed.agent

    def resolve_agent(self, name: str, url: str) -> Any:
        """A registry id in the `agent` setting, resolved against the registry being set."""
        self.catalog.set_url(url)
        try:
            return self.catalog.resolve(name)
        except AgentInstallError as exc:
            raise ValueError(str(exc)) from exc

    def agent_env(self, spec: AgentSpec) -> dict[str, str]:
        """The editor's environment minus `env.remove`, plus the agent's own env; acpls' Node
        first on its PATH where that PATH has none (an npm agent's `#!/usr/bin/env node`)."""
        env = {**self.hub.settings.base_env(self.environ), **dict(spec.env)}
        if self.node is not None:
            self.node.complete(env)
        return env

    def slot(self, name: str) -> AgentSlot:
        slot = self._slots.get(name)
        if slot is None:
            slot = self._slots[name] = AgentSlot(name)
        return slot

    def name_of(self, conn: AgentConnection) -> str:
        slot = next((s for s in self._slots.values() if s.conn is conn), None)
        return slot.name if slot is not None else self.hub.settings.agent.name

    def running(self, agent: str | None) -> AgentConnection | None:
        """The running process of `agent` (None: the default agent), or None; never starts one."""
        slot = self._slots.get(agent or self.hub.settings.agent.name)
        return slot.running if slot is not None else None

    def restart_key(self, spec: AgentSpec) -> Any:
        return attrs.evolve(self.hub.settings, agent=spec).agent_restart_key()

    # -- starting and stopping ---------------------------------------------------------------------
    async def agent(self, name: Any = None) -> AgentConnection:
        """The running process of the agent `name` (default: the `agent` setting's), started
        (or restarted) on first need. Each agent has its own process and lifecycle."""
        spec = self.agent_spec(name)
        slot = self.slot(spec.name)
        async with slot.lock:
            key = self.restart_key(spec)
            conn = slot.conn
            if conn is not None and conn.alive and slot.restart_key == key:
                return conn
            if conn is not None:
                await self._stop(slot, conn, "settings changed" if conn.alive else None)
            return await self._start(slot, spec)

    async def restart(self, name: Any = None) -> None:
        spec = self.agent_spec(name)
        slot = self.slot(spec.name)
        async with slot.lock:
            if slot.conn is not None:
                await self._stop(slot, slot.conn, reason="restart requested")
        await self.agent(spec.name)

    async def _start(self, slot: AgentSlot, spec: AgentSpec) -> AgentConnection:
        slot.spec = spec
        if spec.install_dir is not None and spec.registry_id is not None:
            await self._install_first(slot, spec.registry_id)
        env = {**self.agent_env(spec), **self.hub.sign_in_env(slot.name)}
        settings = self.hub.settings
        conn = AgentConnection(
            spec.argv,
            cwd=self.hub.workspace_root(),
            env=env,
            max_line_bytes=settings.max_line_bytes,
            max_input_bytes=settings.max_agent_input_bytes,
            on_exit=lambda c: self._exited(slot, c),
            output_gate=self.editor_output,
            name=slot.name,
            owned=self.owned,
        )
        self.hub.wire(conn, slot.name, env)
        shown: set[str] = set()
        conn.process.on_stderr_line = lambda line: self._stderr(slot, conn, line, shown)
        guard_sessions(conn, slot.name, self.registry.get)
        slot.restart_key = self.restart_key(spec)
        slot.conn = conn
        self._status(slot, "starting")
        try:
            await asyncio.wait_for(conn.open(settings.protocol_version), AGENT_START_TIMEOUT)
        except (AcpError, AgentStartError, OSError, TimeoutError) as exc:
            raise await self._failed_start(slot, conn, exc, env) from exc
        self._status(slot, "running")
        self.catalog.auth_methods[spec.name] = list(conn.auth_methods)
        return conn

    async def _failed_start(
        self, slot: AgentSlot, conn: AgentConnection, exc: Exception, env: Mapping[str, str]
    ) -> CommandError:
        detail = exc.message if isinstance(exc, AcpError) else str(exc) or type(exc).__name__
        message = f"acpls: the agent {slot.name} could not start: {detail}"
        if conn.process.returncode is not None or conn.process.failure:
            message += f"\n{conn.exit_message()}"
        if self._lacks_node(conn, env):
            message += f"\n{node_runtime.NO_NODE}"
        slot.conn = None
        await conn.close()
        self._status(slot, "failed", message)
        self.editor.show_message(ports.MESSAGE_ERROR, message)
        return CommandError(message, INTERNAL_ERROR)

    def _lacks_node(self, conn: AgentConnection, env: Mapping[str, str]) -> bool:
        """The start failed as a missing `node` or `npx` fails (127: `env: node: not found`;
        no npx to exec), and there is no Node.js for this agent anywhere."""
        missing = conn.process.returncode == 127 or os.path.basename(conn.process.argv[0]) == "npx"
        return missing and self.node is not None and self.node.runtime_for(env) is None

    async def _install_first(self, slot: AgentSlot, agent_id: str) -> None:
        """A registry binary is downloaded and unpacked before its first start."""
        try:
            self._status(slot, "starting", f"installing {agent_id}")
            await self.catalog.install(agent_id)
        except AgentInstallError as exc:
            message = f"acpls: the agent {agent_id} could not be installed: {exc}"
            self._status(slot, "failed", message)
            self.editor.show_message(ports.MESSAGE_ERROR, message)
            raise CommandError(message, INTERNAL_ERROR) from exc

    async def _stop(self, slot: AgentSlot, conn: AgentConnection, reason: str | None) -> None:
        if reason:
            logger.info("stopping the agent %s: %s", slot.name, reason)
        slot.conn = None
        self.registry.close_all(f"the agent stopped ({reason or 'exited'})", agent=slot.name)
        await conn.close()
        await self.agent_requests.close_all(slot.name)
        slot.state = "stopped"

    def _exited(self, slot: AgentSlot, conn: AgentConnection) -> None:
        if conn is not slot.conn or self._closing:
            return
        message = f"acpls: the agent {slot.name} stopped: {conn.exit_message()}"
        self._status(slot, "failed" if conn.process.failure else "exited", message)
        self.editor.show_message(ports.MESSAGE_ERROR, message)
        slot.conn = None
        self.registry.close_all(message, agent=slot.name)
        self.tasks.spawn(
            f"release-client-terminals:{slot.name}", self.agent_requests.close_all(slot.name)
        )

    async def aclose(self) -> None:
        """Every process is closed (stdin, then terminate, then kill: acp/process.py); their
        exits are expected then, so none is reported."""
        self._closing = True
        conns = [slot.conn for slot in self._slots.values() if slot.conn is not None]
        for slot in self._slots.values():
            slot.conn = None
        await asyncio.gather(*(conn.close() for conn in conns))

    # -- what the editor is told -------------------------------------------------------------------
    def _stderr(self, slot: AgentSlot, conn: AgentConnection, line: str, shown: set[str]) -> None:
        """A sandbox failure the agent reports only on stderr (Codex sends no tool call for a
        command its sandbox could not run) is shown, not left in the log: a message and a
        `notice` in each of that agent's sessions, once per distinct line and at most a few per
        agent process."""
        problem = sandbox_problem(line)
        if problem is None or problem in shown or len(shown) >= MAX_SANDBOX_NOTICES:
            return
        shown.add(problem)
        name = slot.name
        logger.warning("the agent %s reports a sandbox failure: %s", name, problem)
        self.editor.show_message(
            ports.MESSAGE_ERROR,
            f"acpls: the agent {name} could not use its sandbox, so its commands or edits fail:"
            f" {problem}",
        )
        if conn is not slot.conn:
            return
        for session in self.registry.of_agent(name):
            self.router.send_update(
                session,
                {
                    "sessionUpdate": "notice",
                    "severity": "error",
                    "title": f"{name}: sandbox failure",
                    "description": problem,
                },
            )

    def _status(self, slot: AgentSlot, state: str, message: str | None = None) -> None:
        slot.state = state
        if not self.editor.custom_mode:
            return
        conn = slot.conn if state == "running" else None
        default = self.hub.settings.agent
        self.editor.notify(
            msg.AGENT_STATUS,
            msg.AgentStatusParams(
                state=state,
                agent=slot.name,
                command=(slot.spec or default).argv,
                protocolVersion=conn.version if conn else None,
                agentInfo=(conn.agent_info or None) if conn else None,
                message=message,
                canSteer=conn.can_steer if conn else None,
                images=conn.prompt_capability("image") if conn else None,
                default=slot.name == default.name,
            ),
        )

    def listing(self) -> list[dict[str, Any]]:
        """Each agent acpls holds a process (or a failed start) for: name, state, sessions."""
        out = []
        for slot in self._slots.values():
            if slot.spec is None:
                continue
            conn = slot.running
            row: dict[str, Any] = {
                "agent": slot.name,
                "state": slot.state,
                "default": slot.name == self.hub.settings.agent.name,
                "sessions": [s.id for s in self.registry.of_agent(slot.name)],
            }
            if conn is not None:
                row["protocolVersion"] = conn.version
                if conn.process.pid is not None:
                    row["pid"] = conn.process.pid
            out.append(row)
        return out
