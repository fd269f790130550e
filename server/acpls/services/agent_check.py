"""Is an agent installed, and does it answer ACP `initialize`? (`acpls agents check`).

Each check opens the agent exactly as a session does (acp/connection.py `AgentConnection.open`:
its own process group, the given working directory and environment, `initialize` asking for
protocol version 2 and accepting 1, or the version `version_mode` insists on), then stops it
politely (stdin closed, SIGTERM, SIGKILL to the group). Nothing else is sent: no session is
created, so no agent needs an account for the check, and an agent's own requests are refused.
Because the negotiation is the sessions' own, the check says "ok" exactly when a session would
get past `initialize`: a v2-only agent is not reported as silent.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from acpls.acp.connection import AgentConnection
from acpls.acp.converter import VersionMode
from acpls.acp.errors import AcpError
from acpls.acp.process import AgentStartError
from acpls.presets import PRESETS_BY_NAME, AgentSpec
from acpls.services.node_runtime import NO_NODE, NodeShims, runs_on_node

DEFAULT_TIMEOUT = 30.0
_STOP_GRACE = 2.0
_STDERR_TAIL = 8
_MAX_LINE = 16 * 1024 * 1024  # Qwen's first notification alone is ~570 KB
_CONCURRENCY = 4


@attrs.frozen
class AgentCheck:
    """What one check found; `ok` means installed and answered `initialize`."""

    name: str
    argv: tuple[str, ...]
    installed: bool
    ok: bool
    detail: str
    agent_name: str | None = None
    agent_version: str | None = None
    protocol_version: int | None = None
    auth_methods: tuple[str, ...] = ()
    seconds: float = 0.0
    # The Node.js the agent runs on where acpls gives it one (services/node_runtime.py), or the
    # agent's own on its PATH; None when it has none (fine for an agent that needs none).
    node: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "name": self.name,
            "command": list(self.argv),
            "installed": self.installed,
            "ok": self.ok,
            "detail": self.detail,
            "agentName": self.agent_name,
            "agentVersion": self.agent_version,
            "protocolVersion": self.protocol_version,
            "authMethods": list(self.auth_methods),
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        """One line for a terminal, a health check or a log channel."""
        if not self.installed:
            return f"{self.name}: not installed ({self.detail})"
        if not self.ok:
            return f"{self.name}: initialize failed: {self.detail} (ran {self._command()})"
        who = " ".join(p for p in (self.agent_name, self.agent_version) if p) or "agent"
        auth = f", sign-in: {', '.join(self.auth_methods)}" if self.auth_methods else ""
        node = f", on {self.node}" if self.node else ""
        return (
            f"{self.name}: ok ({who}, ACP v{self.protocol_version}{auth}, "
            f"{self.seconds:.1f} s), ran {self._command()}{node}"
        )

    def _command(self) -> str:
        return " ".join(self.argv)


def is_installed(command: str, path: str | None = None) -> bool:
    """The command resolves to an executable: an absolute or relative path, or a name on PATH
    (`path`: the agent's own PATH; default acpls')."""
    if os.sep in command:
        return os.path.isfile(command) and os.access(command, os.X_OK)
    return shutil.which(command, path=path) is not None


async def check_agents(
    specs: Iterable[AgentSpec],
    *,
    cwd: str,
    env: Mapping[str, str],
    answer_within: float = DEFAULT_TIMEOUT,
    version_mode: VersionMode = "auto",
    node: NodeShims | None = None,
) -> list[AgentCheck]:
    """Checks several agents at once (at most four running together), in the order given."""
    limit = asyncio.Semaphore(_CONCURRENCY)

    async def one(spec: AgentSpec) -> AgentCheck:
        async with limit:
            return await check_agent(
                spec,
                cwd=cwd,
                env=env,
                answer_within=answer_within,
                version_mode=version_mode,
                node=node,
            )

    return list(await asyncio.gather(*(one(s) for s in specs)))


async def check_agent(
    spec: AgentSpec,
    *,
    cwd: str,
    env: Mapping[str, str],
    answer_within: float = DEFAULT_TIMEOUT,
    version_mode: VersionMode = "auto",
    node: NodeShims | None = None,
) -> AgentCheck:
    """Start the agent as a session would (its environment, acpls' Node where its PATH has none:
    `node`) and ask it `initialize`."""
    argv = tuple(spec.argv)
    agent_env = {**env, **dict(spec.env)}
    runtime = node.complete(agent_env) if node is not None else None
    on_node = runs_on_node(spec.command, agent_env.get("PATH"))
    shown = runtime.describe() if runtime is not None and on_node else None
    if not is_installed(spec.command, agent_env.get("PATH")):
        detail = _missing(spec)
        if runtime is None and on_node:
            detail += f". {NO_NODE}"
        return AgentCheck(spec.name, argv, installed=False, ok=False, detail=detail, node=shown)
    started = time.monotonic()
    conn = AgentConnection(
        list(argv),
        cwd=cwd,
        env=agent_env,
        max_line_bytes=_MAX_LINE,
        on_exit=lambda _conn: None,
        name=spec.name,
    )
    try:
        await asyncio.wait_for(conn.open(version_mode), answer_within)
        return attrs.evolve(
            _answered(spec.name, argv, conn, time.monotonic() - started), node=shown
        )
    except AgentStartError as exc:
        detail = f"cannot start: {exc}"
    except TimeoutError:
        detail = f"no answer to initialize within {answer_within:g} s"
    except AcpError as exc:
        detail = _refusal(conn, exc)
    finally:
        await conn.close()
    tail = [line.strip()[:300] for line in conn.process.stderr_tail if line.strip()]
    if tail:
        detail += "; stderr: " + " | ".join(tail[-_STDERR_TAIL:])
    if node is not None and runtime is None and on_node:
        detail += f". {NO_NODE}"
    return AgentCheck(
        spec.name,
        argv,
        installed=True,
        ok=False,
        detail=detail,
        seconds=time.monotonic() - started,
        node=shown,
    )


def _missing(spec: AgentSpec) -> str:
    preset = PRESETS_BY_NAME.get(spec.name)
    hint = f"; install: {preset.install_hint}" if preset and preset.install_hint else ""
    return f"{spec.command} not found on PATH{hint}"


def _refusal(conn: AgentConnection, exc: AcpError) -> str:
    """Why `initialize` failed: the agent exited, answered an error, or speaks no version acpls
    does."""
    returncode = conn.process.returncode
    if conn.exited.is_set() and returncode is not None:
        return f"exited with status {returncode} before answering initialize"
    return f"initialize answered with an error: {exc}"


def _answered(
    name: str, argv: tuple[str, ...], conn: AgentConnection, seconds: float
) -> AgentCheck:
    info = conn.agent_info
    auth = tuple(str(m.get("id") or m.get("methodId") or m.get("name")) for m in conn.auth_methods)
    title = info.get("title") or info.get("name")
    version = info.get("version")
    return AgentCheck(
        name,
        argv,
        installed=True,
        ok=True,
        detail="answered initialize",
        agent_name=title if isinstance(title, str) else None,
        agent_version=version if isinstance(version, str) else None,
        protocol_version=conn.version,
        auth_methods=auth,
        seconds=seconds,
    )
