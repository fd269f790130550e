"""An ACP v1 agent for load tests: every prompt streams numbered work for a while, in as many
sessions at once as the client opens.

Run: `python tests/agents/load_agent.py --seconds S --rate R`. Each `session/prompt` streams R
ticks a second for S seconds; tick n of a session sends, in this order:

- an `agent_message_chunk` with the text `"<n> "`,
- a `tool_call_update` of the session's tool call `work` titled `step <n>` (status in_progress,
  completed at the last tick), carrying the terminal output `line <n>\\r\\n` in the v1 `_meta`
  terminal extension (terminal id `term`, one per session),

then answers the prompt with `end_turn`. So a client that loses or reorders nothing shows, per
session, the message `"0 1 2 … "`, the terminal text `line 0\\r\\nline 1\\r\\n…`, and tool-call
titles that only go up.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from typing import Any


class LoadAgent:
    def __init__(self, seconds: float, rate: float) -> None:
        self.seconds = seconds
        self.rate = rate
        self.ids = itertools.count(1)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.out = sys.stdout.buffer

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(json.dumps(message).encode() + b"\n")

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": session_id, "update": update},
            }
        )

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            message = json.loads(line)
            method, msg_id = message.get("method"), message.get("id")
            params = message.get("params") or {}
            if method == "initialize":
                self.respond(msg_id, self.initialize_result())
            elif method == "session/new":
                self.respond(msg_id, {"sessionId": f"load-{next(self.ids)}"})
            elif method == "session/prompt":
                task = asyncio.ensure_future(self.prompt(msg_id, params["sessionId"]))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
            elif msg_id is not None and method is not None:
                self.send(
                    {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": method}}
                )

    def respond(self, msg_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})
        self.out.flush()

    def initialize_result(self) -> dict[str, Any]:
        return {
            "protocolVersion": 1,
            "agentInfo": {"name": "load-agent", "version": "0"},
            "agentCapabilities": {"promptCapabilities": {}},
            "authMethods": [],
        }

    async def prompt(self, msg_id: Any, session_id: str) -> None:
        ticks = max(1, int(self.seconds * self.rate))
        self.update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "work",
                "title": "step -1",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "term"}],
                "_meta": {"terminal_info": {"terminal_id": "term"}},
            },
        )
        start = asyncio.get_running_loop().time()
        for n in range(ticks):
            self.update(
                session_id,
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": f"{n} "},
                },
            )
            self.update(
                session_id,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "work",
                    "title": f"step {n}",
                    "status": "completed" if n == ticks - 1 else "in_progress",
                    "_meta": {"terminal_output": {"terminal_id": "term", "data": f"line {n}\r\n"}},
                },
            )
            self.out.flush()
            delay = start + (n + 1) / self.rate - asyncio.get_running_loop().time()
            await asyncio.sleep(max(delay, 0))
        self.respond(msg_id, {"stopReason": "end_turn"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="an ACP agent that streams numbered work")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rate", type=float, default=20.0)
    args = parser.parse_args(argv)
    asyncio.run(LoadAgent(args.seconds, args.rate).serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
