"""An ACP v1 agent for the editors' speed work (issue #18): long terminal outputs and long chats.

Run: `python3 tests/agents/speed_agent.py` (standard library only: the VS Code tests run it with
Debian's python3). It speaks ACP v1 on stdio, one JSON message a line.

- `session/prompt` with the text `run: <shell line>` asks the client to run the line in a terminal
  (`terminal/create` with `sh -c`, in the session's cwd), shows it in a tool call, waits for its
  exit, releases it and ends the turn. Any other text is answered with one agent message.
- `session/list` offers the stored long chats `chat-<N>-<R>` for N in 5000, 10000, 20000 and R in
  1..6 (a benchmark loads each once: the VS Code bench loads up to 6 rounds for V5's 100 keys); `session/load` of `chat-<N>` or `chat-<N>-<R>` (any N)
  replays exactly N `session/update`s: turns of a user message, agent message chunks, a tool call
  and its update, ending with the agent message `LAST MESSAGE of <session id>`.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
from typing import Any

CHATS = (5000, 10000, 20000)
# Updates per replayed turn: user chunk, 5 agent chunks, tool call, tool call update, 2 chunks.
TURN = 10


class Agent:
    def __init__(self) -> None:
        self.out = sys.stdout.buffer
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.sessions = itertools.count(1)
        self.waiting: dict[int, tuple[threading.Event, list[Any]]] = {}
        self.cwds: dict[str, str] = {}

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\n"
        with self.lock:
            self.out.write(data)
            self.out.flush()

    def respond(self, msg_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def fail(self, msg_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        msg_id = next(self.ids)
        done = threading.Event()
        box: list[Any] = []
        self.waiting[msg_id] = (done, box)
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        done.wait()
        reply = box[0]
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result")

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": session_id, "update": update},
            }
        )

    def serve(self) -> None:
        for raw in sys.stdin.buffer:
            if not raw.strip():
                continue
            message = json.loads(raw)
            if "method" not in message:
                waiting = self.waiting.pop(message.get("id"), None)
                if waiting is not None:
                    waiting[1].append(message)
                    waiting[0].set()
                continue
            method, msg_id = message["method"], message.get("id")
            params = message.get("params") or {}
            if msg_id is None:
                continue  # session/cancel and other notifications: nothing runs long enough
            threading.Thread(target=self.handle, args=(method, msg_id, params), daemon=True).start()

    def handle(self, method: str, msg_id: Any, params: dict[str, Any]) -> None:
        try:
            if method == "initialize":
                self.respond(
                    msg_id,
                    {
                        "protocolVersion": 1,
                        "agentInfo": {"name": "speed-agent", "version": "1"},
                        "agentCapabilities": {
                            "loadSession": True,
                            "sessionCapabilities": {"list": {}},
                        },
                        "authMethods": [],
                    },
                )
            elif method == "session/new":
                session_id = f"speed-{next(self.sessions)}"
                self.cwds[session_id] = params.get("cwd") or os.getcwd()
                self.respond(msg_id, {"sessionId": session_id})
            elif method == "session/list":
                cwd = params.get("cwd") or os.getcwd()
                sessions = [
                    {
                        "sessionId": f"chat-{n}-{r}",
                        "cwd": cwd,
                        "title": f"Long chat ({n} updates) #{r}",
                        "updatedAt": "2026-01-01T00:00:00Z",
                    }
                    for n in CHATS
                    for r in range(1, 7)
                ]
                self.respond(msg_id, {"sessions": sessions})
            elif method == "session/load":
                self.cwds[params["sessionId"]] = params.get("cwd") or os.getcwd()
                self.load(msg_id, params["sessionId"])
            elif method == "session/prompt":
                self.prompt(msg_id, params)
            else:
                self.fail(msg_id, -32601, f"Method not found: {method}")
        except Exception as error:  # a bug here must show in the editor, not hang it
            self.fail(msg_id, -32603, f"{type(error).__name__}: {error}")

    def load(self, msg_id: Any, session_id: str) -> None:
        size = session_id.split("-")[1] if session_id.startswith("chat-") else ""
        if not size.isdigit():
            self.fail(msg_id, -32002, f"Unknown session {session_id}")
            return
        for update in chat_updates(int(size), session_id):
            self.update(session_id, update)
        self.respond(msg_id, {})

    def prompt(self, msg_id: Any, params: dict[str, Any]) -> None:
        session_id = params["sessionId"]
        text = "".join(b.get("text", "") for b in params.get("prompt", []) if isinstance(b, dict))
        if not text.startswith("run: "):
            self.update(session_id, agent_chunk(f"You said: {text}"))
            self.respond(msg_id, {"stopReason": "end_turn"})
            return
        line = text[5:].strip()
        call_id = f"run-{next(self.ids)}"
        self.update(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": line,
                "kind": "execute",
                "status": "in_progress",
            },
        )
        created = self.request(
            "terminal/create",
            {
                "sessionId": session_id,
                "command": "sh",
                "args": ["-c", line],
                "cwd": self.cwds.get(session_id, os.getcwd()),
                "outputByteLimit": 1_000_000,
            },
        )
        terminal = {"type": "terminal", "terminalId": created["terminalId"]}
        self.update(
            session_id,
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "content": [terminal]},
        )
        status = self.request(
            "terminal/wait_for_exit",
            {"sessionId": session_id, "terminalId": created["terminalId"]},
        )
        self.request(
            "terminal/release", {"sessionId": session_id, "terminalId": created["terminalId"]}
        )
        exit_code = status.get("exitCode") if isinstance(status, dict) else None
        self.update(
            session_id,
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "status": "completed" if exit_code == 0 else "failed",
                "content": [terminal],
            },
        )
        self.respond(msg_id, {"stopReason": "end_turn"})


def agent_chunk(text: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}


def chat_updates(count: int, session_id: str) -> list[dict[str, Any]]:
    """Exactly `count` updates of a long chat, the last one its last message."""
    updates: list[dict[str, Any]] = []
    turn = 0
    while len(updates) < count - 1:
        turn += 1
        call_id = f"{session_id}-call-{turn}"
        updates += [
            {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "text", "text": f"Question {turn}: what does step {turn} do?"},
            },
            *(
                agent_chunk(f"Step {turn}, part {p}: it reads the input and **checks** it. ")
                for p in range(5)
            ),
            {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": f"Read step{turn}.py",
                "kind": "read",
                "status": "in_progress",
            },
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed"},
            agent_chunk(f"Done with step {turn}. "),
            agent_chunk("`ok`\n"),
        ]
    del updates[count - 1 :]
    updates.append(agent_chunk(f"LAST MESSAGE of {session_id}"))
    return updates


def main() -> int:
    Agent().serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
