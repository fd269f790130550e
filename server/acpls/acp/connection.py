"""One running agent: its process, the JSON-RPC protocol over its stdio, and the negotiated version.

`AgentConnection.open()` starts the process and runs `initialize`, asking for protocol version 2
when the setting is `auto` (with the v1 fields beside the v2 ones, so a v1 agent knows what acpls
offers) and accepting what the agent answers. Everything after that is `request()` / `notify()` with
raw JSON params, and the client-side handlers the caller registers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from acpls import __version__
from acpls.acp.converter import VersionMode, initialize_params
from acpls.acp.process import DEFAULT_MAX_INPUT_BYTES, AgentProcess, AgentState
from acpls.acp.transport import (
    INTERNAL_ERROR,
    AcpError,
    AcpProtocol,
    Handler,
    LineReader,
    NotificationHandler,
)
from acpls.flow import FlowGate
from acpls.services.memory import release_free_heap
from acpls.services.owned_processes import OwnedProcesses

logger = logging.getLogger(__name__)

SUPPORTED_VERSIONS = (1, 2)


class AgentConnection:
    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        max_line_bytes: int,
        on_exit: Callable[[AgentConnection], None],
        max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
        output_gate: FlowGate | None = None,
        name: str = "",
        owned: OwnedProcesses | None = None,
    ) -> None:
        self.protocol = AcpProtocol()
        self._reader = LineReader(self.protocol.feed_line, max_line_bytes, release_free_heap)
        self.process = AgentProcess(
            argv,
            cwd=cwd,
            env=env,
            on_stdout=self._reader,
            on_exit=self._process_exited,
            max_input_bytes=max_input_bytes,
            output_gate=output_gate,
            name=name,
            owned=owned,
        )
        self.protocol.attach_writer(self.process.write)
        # Nothing more is sent to, or handled for, an agent acpls stopped.
        self.process.on_given_up = lambda reason: self.protocol.fail_pending(
            f"`{self.process.describe()}` was stopped by acpls: {reason}"
        )
        self._on_exit = on_exit
        self.version: int = 1
        self.init_result: dict[str, Any] = {}
        self.exited = asyncio.Event()

    def look_ahead(self, lookahead: Callable[[bytes], None], done: Callable[[], None]) -> None:
        """`lookahead(block)` sees each block the agent writes before its messages are handled;
        `done()` is called once they were (follow's newest location goes first)."""
        self._reader.lookahead = lookahead
        self._reader.block_done = done

    def take_lines_first(self, hook: Callable[[bytes], bool]) -> None:
        """`hook(line)` sees each line before it is parsed and handles it itself by returning
        True (acp/transport.py `AcpProtocol.line_hook`)."""
        self.protocol.line_hook = hook

    # -- lifecycle -------------------------------------------------------------------------------
    def register(
        self,
        requests: Mapping[str, Handler],
        notifications: Mapping[str, NotificationHandler],
    ) -> None:
        self.protocol.handlers.update(requests)
        self.protocol.notification_handlers.update(notifications)

    async def open(self, version_mode: VersionMode, *, terminal: bool = True) -> dict[str, Any]:
        await self.process.start()
        params = initialize_params(
            version_mode,
            fs=True,
            terminal=terminal,
            terminal_output_meta=True,
            client_name="acpls",
            client_version=__version__,
        )
        result = await self.request("initialize", params)
        if not isinstance(result, dict):
            raise AcpError(INTERNAL_ERROR, f"initialize answered {result!r}, not an object")
        version = result.get("protocolVersion")
        if version == 2 and version_mode == "auto" and "info" not in result:
            # v2 requires `info`. v1-only agents that echo the requested version (the ACP Python
            # SDK's example agents do) answer 2 without it, and would then hang on v2 turn ends.
            logger.warning("the agent answered protocol version 2 without v2's `info`; using v1")
            version = 1
        if version not in SUPPORTED_VERSIONS:
            raise AcpError(
                INTERNAL_ERROR,
                f"the agent answered protocol version {version!r}; acpls speaks 1 and 2",
            )
        if version_mode != "auto" and version != version_mode:
            raise AcpError(
                INTERNAL_ERROR,
                f"protocolVersion is set to {version_mode} but the agent speaks {version}",
            )
        self.version = version
        self.init_result = result
        logger.info("agent speaks ACP v%d (%s)", version, self.agent_info.get("name", "?"))
        return result

    @property
    def alive(self) -> bool:
        return self.process.state is AgentState.RUNNING and not self.protocol.closed

    @property
    def agent_info(self) -> dict[str, Any]:
        info = self.init_result.get("info" if self.version == 2 else "agentInfo")
        return info if isinstance(info, dict) else {}

    @property
    def capabilities(self) -> dict[str, Any]:
        caps = self.init_result.get("capabilities" if self.version == 2 else "agentCapabilities")
        return caps if isinstance(caps, dict) else {}

    @property
    def can_steer(self) -> bool:
        """Claude Code's steering extension (`_session/steering`), advertised in the initialize
        result's `_meta.steering.supported`."""
        meta = self.init_result.get("_meta")
        steering = meta.get("steering") if isinstance(meta, dict) else None
        return isinstance(steering, dict) and steering.get("supported") is True

    @property
    def auth_methods(self) -> list[dict[str, Any]]:
        methods = self.init_result.get("authMethods")
        return [m for m in methods if isinstance(m, dict)] if isinstance(methods, list) else []

    def session_capability(self, name: str) -> bool:
        """Whether the agent advertises a session method (load, resume, list, close)."""
        caps = self.capabilities
        if name == "load" and self.version == 1:
            return bool(caps.get("loadSession"))
        session_caps = caps.get("session" if self.version == 2 else "sessionCapabilities")
        if not isinstance(session_caps, dict):
            return False
        # v2 advertises resume/list implicitly (they are stable methods); v1 lists them.
        if self.version == 2 and name in ("resume", "list"):
            return True
        return session_caps.get(name) is not None

    def prompt_capability(self, name: str) -> bool:
        caps = self.capabilities
        prompt = (
            (caps.get("session") or {}).get("prompt")
            if self.version == 2
            else caps.get("promptCapabilities")
        )
        if not isinstance(prompt, dict):
            return False
        value = prompt.get(name)
        return value is not None and value is not False

    # -- messages --------------------------------------------------------------------------------
    async def request(self, method: str, params: Any | None = None) -> Any:
        if self.protocol.closed:
            raise AcpError(INTERNAL_ERROR, f"the agent is not running (cannot send {method})")
        return await self.protocol.request(method, params)

    def notify(self, method: str, params: Any | None = None) -> None:
        self.protocol.notify(method, params)

    async def close(self) -> None:
        self.protocol.fail_pending("acpls is stopping the agent")
        await self.process.stop()

    def _process_exited(self, process: AgentProcess) -> None:
        rest = self._reader.finish()
        if rest:
            logger.error("agent exited in the middle of a line (%d bytes ignored)", len(rest))
        self.protocol.fail_pending(self.exit_message())
        self.exited.set()
        self._on_exit(self)

    def exit_message(self) -> str:
        process = self.process
        message = process.failure or f"`{process.describe()}` exited"
        tail = [line for line in process.stderr_tail if line.strip()][-5:]
        if tail:
            message += "; last stderr lines:\n" + "\n".join(tail)
        return message
