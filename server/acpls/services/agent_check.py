"""Is an agent installed, and does it answer ACP `initialize`? (`acpls agents check`).

Each check starts the agent's command the way acpls would (own process group, the given working
directory and environment), sends one v1 `initialize` request and waits for its answer, then stops
the agent politely (stdin closed, SIGTERM, SIGKILL to the group). Nothing else is sent: no session
is created, so no agent needs an account for the check.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import time
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from acpls import __version__
from acpls.presets import PRESETS_BY_NAME, AgentSpec
from acpls.services.process_group import spawn_options, stop_group

DEFAULT_TIMEOUT = 30.0
_STOP_GRACE = 2.0
_STDERR_TAIL = 8
_MAX_LINE = 16 * 1024 * 1024  # Qwen's first notification alone is ~570 KB
_INITIALIZE_ID = 1
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

    def to_json(self) -> dict[str, Any]:
        return {
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
        return (
            f"{self.name}: ok ({who}, ACP v{self.protocol_version}{auth}, "
            f"{self.seconds:.1f} s), ran {self._command()}"
        )

    def _command(self) -> str:
        return " ".join(self.argv)


def is_installed(command: str) -> bool:
    """The command resolves to an executable: an absolute or relative path, or a name on PATH."""
    if os.sep in command:
        return os.path.isfile(command) and os.access(command, os.X_OK)
    return shutil.which(command) is not None


async def check_agents(
    specs: Iterable[AgentSpec],
    *,
    cwd: str,
    env: Mapping[str, str],
    answer_within: float = DEFAULT_TIMEOUT,
) -> list[AgentCheck]:
    """Checks several agents at once (at most four running together), in the order given."""
    limit = asyncio.Semaphore(_CONCURRENCY)

    async def one(spec: AgentSpec) -> AgentCheck:
        async with limit:
            return await check_agent(spec, cwd=cwd, env=env, answer_within=answer_within)

    return list(await asyncio.gather(*(one(s) for s in specs)))


async def check_agent(
    spec: AgentSpec, *, cwd: str, env: Mapping[str, str], answer_within: float = DEFAULT_TIMEOUT
) -> AgentCheck:
    argv = tuple(spec.argv)
    if not is_installed(spec.command):
        return AgentCheck(spec.name, argv, installed=False, ok=False, detail=_missing(spec))
    started = time.monotonic()
    full_env = {**env, **dict(spec.env)}
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=full_env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_MAX_LINE,
            **spawn_options(),
        )
    except OSError as exc:
        return AgentCheck(spec.name, argv, installed=True, ok=False, detail=f"cannot start: {exc}")
    stderr_tail: deque[str] = deque(maxlen=_STDERR_TAIL)
    stderr_task = asyncio.create_task(_collect_stderr(proc, stderr_tail))
    try:
        result = await asyncio.wait_for(_initialize(proc), answer_within)
        return _answered(spec.name, argv, result, time.monotonic() - started)
    except TimeoutError:
        detail = f"no answer to initialize within {answer_within:g} s"
    except _AgentGone as exc:
        detail = str(exc)
    except (OSError, ValueError) as exc:
        detail = f"{type(exc).__name__}: {exc}"
    finally:
        await _stop(proc)
        await stderr_task
    if stderr_tail:
        detail += "; stderr: " + " | ".join(stderr_tail)
    return AgentCheck(
        spec.name, argv, installed=True, ok=False, detail=detail, seconds=time.monotonic() - started
    )


class _AgentGone(Exception):
    pass


def _missing(spec: AgentSpec) -> str:
    preset = PRESETS_BY_NAME.get(spec.name)
    hint = f"; install: {preset.install_hint}" if preset and preset.install_hint else ""
    return f"{spec.command} not found on PATH{hint}"


def _initialize_request() -> bytes:
    request = {
        "jsonrpc": "2.0",
        "id": _INITIALIZE_ID,
        "method": "initialize",
        "params": {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}},
            "clientInfo": {"name": "acpls", "version": __version__},
        },
    }
    return json.dumps(request).encode() + b"\n"


async def _initialize(proc: asyncio.subprocess.Process) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(_initialize_request())
        await proc.stdin.drain()
    except (ConnectionError, RuntimeError) as exc:
        # The agent is gone: asyncio says BrokenPipe/ConnectionReset, uvloop a RuntimeError
        # ("the handler is closed").
        code = await proc.wait()
        raise _AgentGone(f"exited with status {code} before reading initialize") from exc
    while True:
        line = await proc.stdout.readline()
        if not line:
            code = await proc.wait()
            raise _AgentGone(f"exited with status {code} before answering initialize")
        try:
            message = json.loads(line)
        except ValueError:
            continue  # agents may print other things; acpls logs and skips them too
        if not isinstance(message, dict):
            continue
        if message.get("id") == _INITIALIZE_ID and "method" not in message:
            if "error" in message:
                raise ValueError(f"initialize answered with an error: {message['error']}")
            result = message.get("result")
            if not isinstance(result, dict):
                raise ValueError(f"initialize answered without a result object: {result!r}")
            return result
        if "method" in message and "id" in message:  # a request of the agent's: not for a check
            error = {"code": -32601, "message": "not answered during a check"}
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
            with contextlib.suppress(ConnectionError, RuntimeError):  # gone: the read tells
                proc.stdin.write(json.dumps(reply).encode() + b"\n")


def _answered(
    name: str, argv: tuple[str, ...], result: dict[str, Any], seconds: float
) -> AgentCheck:
    info = result.get("agentInfo") or result.get("info") or {}
    methods = result.get("authMethods") or []
    auth = tuple(
        str(m.get("id") or m.get("methodId") or m.get("name"))
        for m in methods
        if isinstance(m, dict)
    )
    version = result.get("protocolVersion")
    return AgentCheck(
        name,
        argv,
        installed=True,
        ok=True,
        detail="answered initialize",
        agent_name=info.get("title") or info.get("name") if isinstance(info, dict) else None,
        agent_version=info.get("version") if isinstance(info, dict) else None,
        protocol_version=version if isinstance(version, int) else None,
        auth_methods=auth,
        seconds=seconds,
    )


async def _collect_stderr(proc: asyncio.subprocess.Process, tail: deque[str]) -> None:
    assert proc.stderr is not None
    with contextlib.suppress(ValueError, OSError):  # an over-long line ends the collection
        async for raw in proc.stderr:
            text = raw.decode(errors="replace").strip()
            if text:
                tail.append(text[:300])


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """stdin closed → wait → SIGTERM the group → wait → SIGKILL the group."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    for force in (None, False, True):
        if force is not None:
            stop_group(proc.pid, force=force)
        try:
            await asyncio.wait_for(proc.wait(), _STOP_GRACE)
            break
        except TimeoutError:
            continue
    # npx and shells leave children in the group: the group goes with the check, always.
    stop_group(proc.pid, force=True)
