"""Baseline (a): the practical limit of a plain-Python relay.

It speaks just enough LSP for the benchmark (initialize, `acpls.newSession`, `acpls.prompt`,
shutdown) and just enough ACP to relay terminal output, v2 or v1 (the agent's `--protocol`): it
reads the agent's ndjson with the standard `json` module, base64- and UTF-8-decodes each v2
`terminal_output_chunk` (v1: takes the text of the `_meta.terminal_output` extension), and writes
`acpls/terminalOutput` LSP frames coalesced per terminal, at most one batch every 16 ms. No
validation, no sanitising, no state: what a hand-written relay with nothing else to do costs.
"""

from __future__ import annotations

import base64
import codecs
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from bench.baselines.lsp_io import (
    LspWriter,
    initialize_result,
    notification,
    read_messages,
)

FLUSH_SECONDS = 0.016


class BareRelay:
    def __init__(self) -> None:
        self.out = LspWriter()
        self.agent: subprocess.Popen[bytes] | None = None
        self.argv: list[str] = []
        self.next_id = 0
        self.pending: dict[int, Future[Any]] = {}
        self.turns: dict[str, Any] = {}  # session id -> the editor's acpls.prompt request id
        self.output: dict[tuple[str, str], list[str]] = {}
        self.decoders: dict[tuple[str, str], Any] = {}
        self.last_flush = 0.0
        self.lock = threading.Lock()
        self.protocol = 2

    # -- editor side -------------------------------------------------------------------------
    def serve(self) -> None:
        for message in read_messages(sys.stdin.buffer):
            method, msg_id = message.get("method"), message.get("id")
            params = message.get("params") or {}
            if method == "initialize":
                agent = params["initializationOptions"]["agent"]
                self.argv = [agent["command"], *agent.get("args", [])]
                if "--protocol" in self.argv:
                    self.protocol = int(self.argv[self.argv.index("--protocol") + 1])
                self.out.respond(msg_id, initialize_result("bare-relay"))
            elif method == "shutdown":
                self.out.respond(msg_id, None)
            elif method == "exit":
                break
            elif method == "workspace/executeCommand":
                threading.Thread(target=self.command, args=(msg_id, params), daemon=True).start()
        if self.agent is not None:
            self.agent.kill()

    def command(self, msg_id: Any, params: dict[str, Any]) -> None:
        arg = params["arguments"][0]
        if params["command"] == "acpls.newSession":
            if self.agent is None:
                self.start_agent()
            result = self.request("session/new", {"cwd": "/bench/ws", "mcpServers": []})
            self.out.respond(msg_id, {"sessionId": result["sessionId"]})
        elif params["command"] == "acpls.prompt":
            session_id = arg["sessionId"]
            with self.lock:
                self.turns[session_id] = msg_id
            prompt = [{"type": "text", "text": arg["text"]}]
            result = self.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
            if self.protocol == 1:  # v1: the prompt's answer ends the turn (output flushed first)
                with self.lock:
                    self.turns.pop(session_id, None)
                stop = result.get("stopReason", "end_turn")
                self.out.respond(msg_id, {"sessionId": session_id, "stopReason": stop})

    # -- agent side --------------------------------------------------------------------------
    def start_agent(self) -> None:
        self.agent = subprocess.Popen(
            self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1 << 20
        )
        threading.Thread(target=self.relay, daemon=True).start()
        info = {"name": "bare", "version": "1"}
        if self.protocol == 1:
            self.request("initialize", {"protocolVersion": 1, "clientInfo": info})
        else:
            self.request("initialize", {"protocolVersion": 2, "info": info})

    def request(self, method: str, params: Any) -> Any:
        assert self.agent is not None and self.agent.stdin is not None
        future: Future[Any] = Future()
        with self.lock:
            self.next_id += 1
            msg_id = self.next_id
            self.pending[msg_id] = future
            line = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            self.agent.stdin.write(line.encode() + b"\n")
            self.agent.stdin.flush()
        return future.result()

    def relay(self) -> None:
        assert self.agent is not None and self.agent.stdout is not None
        for line in self.agent.stdout:
            message = json.loads(line)
            if message.get("method") == "session/update":
                self.update(message["params"])
            elif "id" in message and "method" not in message:
                self.flush(time.monotonic())  # what came before an answer goes out before it
                future = self.pending.pop(message["id"], None)
                if future is not None:
                    future.set_result(message.get("result"))
            now = time.monotonic()
            if now - self.last_flush >= FLUSH_SECONDS:
                self.flush(now)
        self.flush(time.monotonic())

    def update(self, params: dict[str, Any]) -> None:
        update = params["update"]
        kind = update.get("sessionUpdate")
        if kind == "terminal_output_chunk":
            key = (params["sessionId"], update["terminalId"])
            decoder = self.decoders.get(key)
            if decoder is None:
                decoder = self.decoders[key] = codecs.getincrementaldecoder("utf-8")("replace")
                self.output[key] = []
            self.output[key].append(decoder.decode(base64.b64decode(update["data"])))
        elif kind == "tool_call_update" and "_meta" in update:
            output = update["_meta"].get("terminal_output")
            if output is not None:
                key = (params["sessionId"], output["terminal_id"])
                self.output.setdefault(key, []).append(output["data"])
        elif kind == "state_update" and update.get("state") == "idle":
            self.flush(time.monotonic())
            with self.lock:
                msg_id = self.turns.pop(params["sessionId"], None)
            stop = update.get("stopReason", "end_turn")
            self.out.respond(msg_id, {"sessionId": params["sessionId"], "stopReason": stop})

    def flush(self, now: float) -> None:
        self.last_flush = now
        batches = []
        for (session_id, terminal_id), parts in self.output.items():
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


if __name__ == "__main__":
    BareRelay().serve()
    os._exit(0)
