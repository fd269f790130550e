"""Baseline (c): the official ACP Python SDK (`agent-client-protocol`, import `acp`) as the client.

What a user would build on instead of acpls: `acp.spawn_agent_process` runs the agent, the SDK
parses and validates every message into its pydantic models and calls `session_update`, which
takes the terminal text of the ACP v1 `_meta.terminal_output` extension (the SDK has no v2
terminals). The editor side is the same coalescing writer as baseline (a) (standard `json`, one
batch per terminal every 16 ms), so the difference to (a) is what the SDK costs.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Any

from acp import spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import ClientCapabilities, ToolCallProgress

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bench.baselines.lsp_io import (
    LspWriter,
    initialize_result,
    notification,
    read_messages,
)

FLUSH_SECONDS = 0.016


class RelayClient:
    """The SDK's `Client` interface: only what a terminal relay needs."""

    def __init__(self, relay: SdkRelay) -> None:
        self.relay = relay

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, ToolCallProgress) and update.field_meta:
            item = update.field_meta.get("terminal_output")
            if isinstance(item, dict) and isinstance(item.get("data"), str):
                terminal_id = item.get("terminal_id", update.tool_call_id)
                self.relay.output(session_id, terminal_id, item["data"])

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark agent never asks")

    async def write_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark agent never writes")

    async def read_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark agent never reads")


class SdkRelay:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.out = LspWriter()
        self.argv: list[str] = []
        self.conn: ClientSideConnection | None = None
        self.ready = asyncio.Event()
        self.pending: dict[tuple[str, str], list[str]] = {}
        self.flush_handle: asyncio.TimerHandle | None = None
        self.last_flush = 0.0
        self.done = asyncio.Event()
        self.tasks: set[asyncio.Task[Any]] = set()

    def output(self, session_id: str, terminal_id: str, text: str) -> None:
        self.pending.setdefault((session_id, terminal_id), []).append(text)
        if self.flush_handle is None:
            delay = max(0.0, self.last_flush + FLUSH_SECONDS - self.loop.time())
            self.flush_handle = self.loop.call_later(delay, self.flush)

    def flush(self) -> None:
        self.flush_handle = None
        self.last_flush = self.loop.time()
        batches = []
        for (session_id, terminal_id), parts in self.pending.items():
            if parts:
                params = {
                    "sessionId": session_id,
                    "terminalId": terminal_id,
                    "text": "".join(parts),
                }
                batches.append(notification("acpls/terminalOutput", params))
                parts.clear()
        if batches:
            self.out.send(*batches)

    def on_message(self, message: dict[str, Any]) -> None:
        method, msg_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            agent = params["initializationOptions"]["agent"]
            self.argv = [agent["command"], *agent.get("args", [])]
            self.out.respond(msg_id, initialize_result("sdk-relay"))
        elif method == "shutdown":
            self.out.respond(msg_id, None)
        elif method == "exit":
            self.done.set()
        elif method == "workspace/executeCommand":
            task = self.loop.create_task(self.command(msg_id, params))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def command(self, msg_id: Any, params: dict[str, Any]) -> None:
        arg = params["arguments"][0]
        if params["command"] == "acpls.newSession":
            if self.conn is None:
                task = self.loop.create_task(self.run_agent())
                self.tasks.add(task)
            await self.ready.wait()
            assert self.conn is not None
            session = await self.conn.new_session(cwd="/bench/ws", mcp_servers=[])
            self.out.respond(msg_id, {"sessionId": session.session_id})
        elif params["command"] == "acpls.prompt":
            assert self.conn is not None
            response = await self.conn.prompt(
                session_id=arg["sessionId"], prompt=[text_block(arg["text"])]
            )
            if self.flush_handle is not None:
                self.flush_handle.cancel()
            self.flush()
            self.out.respond(
                msg_id, {"sessionId": arg["sessionId"], "stopReason": response.stop_reason}
            )

    async def run_agent(self) -> None:
        async with (
            spawn_agent_process(
                RelayClient(self),  # type: ignore[arg-type]  # terminals are optional methods
                self.argv[0],
                *self.argv[1:],
                transport_kwargs={"limit": 1 << 22},
            ) as (conn, _process)
        ):
            await conn.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(field_meta={"terminal_output": True}),
            )
            self.conn = conn
            self.ready.set()
            await self.done.wait()


async def main() -> None:
    loop = asyncio.get_running_loop()
    relay = SdkRelay(loop)

    def read_editor() -> None:
        for message in read_messages(sys.stdin.buffer):
            loop.call_soon_threadsafe(relay.on_message, message)
        loop.call_soon_threadsafe(relay.done.set)

    threading.Thread(target=read_editor, daemon=True).start()
    await relay.done.wait()


if __name__ == "__main__":
    asyncio.run(main())
    os._exit(0)
