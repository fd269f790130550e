"""A fast ACP agent for benchmarks: every prompt names a scenario, and the agent streams it.

Run: `python bench/load_agent.py --protocol 1|2`. It answers `initialize`, `session/new` and
`session/cancel`; the text of each `session/prompt` is a JSON object naming the scenario:

    {"scenario": "terminal", "chunk": 4096, "count": 16384, "rate": 0}
        `count` terminal output chunks of `chunk` bytes (64 B..64 KiB) on one terminal: v2
        `terminal_output_chunk` (base64), v1 the `_meta.terminal_output` extension on
        `tool_call_update`. `rate` > 0 paces the stream to that many bytes a second.
    {"scenario": "follow", "count": 300, "interval": 0.01}
        `count` tool calls with a location, one every `interval` seconds; each tool call id
        carries the CLOCK_MONOTONIC time (ns) at which its line was written.
    {"scenario": "toolcalls", "updates": 100000, "calls": 5}
        a burst of tool-call updates (bench/traffic.py `tool_call_updates`).
    {"scenario": "messages", "chunk": 64, "count": 100000}
        agent message text chunks of one message.
    {"scenario": "follow_stream", "count": 120, "interval": 0.025, "rate": 20e6, "flood": 3000}
        `follow` while a terminal of the same session streams `rate` bytes a second, then
        `flood` locations written at once.
    {"scenario": "terminal_file", "path": "/tmp/x.log", "chunk": 65536}
        the bytes of a file as terminal output (v2 chunks of `chunk` bytes), then the exit:
        bench/nvim_editor.py feeds the same file to Neovim's own terminal (`cat`).
    {"scenario": "mixed"}
        two followed locations, 8 KiB of terminal output and a reply (P7's turn).

Lines are prepared before the clock starts and written in blocks of about 256 KiB, so the agent
is never what limits a benchmark. Prompts of different sessions run at the same time (P2 needs a
terminal stream in one session while another one follows). v2 turns answer the prompt at once
and end with `state_update` idle; v1 turns end with the prompt's response.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import traffic

BLOCK_BYTES = 256 * 1024
# Stands for the CLOCK_MONOTONIC time in follow lines made before it is known.
STAMP = "@T@"


class Output:
    """stdout, shared by the prompt threads: whole blocks, never interleaved."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd = sys.stdout.fileno()

    def write(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    def write_stamped(self, make_line: Callable[[int], bytes]) -> None:
        """Write the line `make_line(now)` makes, `now` being CLOCK_MONOTONIC (ns) once this
        thread has the pipe: a latency measured from it is acpls', not this agent's queue."""
        with self._lock:
            view = memoryview(make_line(time.monotonic_ns()))
            while view:
                written = os.write(self._fd, view)
                view = view[written:]

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")


class LoadAgent:
    def __init__(self, protocol: int) -> None:
        self.protocol = protocol
        self.out = Output()
        self.sessions = 0
        self.prompts = 0
        self.threads: list[threading.Thread] = []

    def run(self) -> None:
        for raw in sys.stdin.buffer:
            if not raw.strip():
                continue
            message = json.loads(raw)
            method = message.get("method")
            if method is None:
                continue  # a response to nothing we asked
            if "id" in message:
                self.request(message["id"], method, message.get("params") or {})

    def request(self, msg_id: Any, method: str, params: dict[str, Any]) -> None:
        if method == "initialize":
            self.respond(msg_id, self.initialize_result())
        elif method == "session/new":
            self.sessions += 1
            self.respond(msg_id, {"sessionId": f"load-{self.sessions}"})
        elif method == "session/close":
            self.respond(msg_id, {})
        elif method == "session/prompt":
            thread = threading.Thread(target=self.prompt, args=(msg_id, params), daemon=True)
            self.threads.append(thread)
            thread.start()
        else:
            self.out.send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "error": {"code": -32601, "message": f"{method} not supported"},
                }
            )

    def initialize_result(self) -> dict[str, Any]:
        info = {"name": "bench-load-agent", "version": "1"}
        if self.protocol == 2:
            return {"protocolVersion": 2, "info": info, "capabilities": {}}
        return {
            "protocolVersion": 1,
            "agentInfo": info,
            "agentCapabilities": {"promptCapabilities": {}, "sessionCapabilities": {"close": {}}},
            "authMethods": [],
        }

    def respond(self, msg_id: Any, result: Any) -> None:
        self.out.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        self.out.write(traffic.notification(session_id, update))

    # -- a turn ------------------------------------------------------------------------------
    def prompt(self, msg_id: Any, params: dict[str, Any]) -> None:
        session_id = params["sessionId"]
        text = "".join(
            b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text"
        )
        scenario = json.loads(text)
        self.prompts += 1
        if self.protocol == 2:
            self.respond(msg_id, {"messageId": f"user-{self.prompts}"})
            self.update(session_id, {"sessionUpdate": "state_update", "state": "running"})
        run = getattr(self, "scenario_" + scenario["scenario"])
        run(session_id, scenario)
        if self.protocol == 2:
            self.update(
                session_id,
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
            )
        else:
            self.respond(msg_id, {"stopReason": "end_turn"})

    def scenario_terminal(self, session_id: str, scenario: dict[str, Any]) -> None:
        terminal_id = scenario.get("terminal", f"term-{session_id}")
        for line in traffic.terminal_start(session_id, terminal_id, self.protocol):
            self.out.write(line)
        lines = traffic.terminal_lines(session_id, terminal_id, scenario["chunk"], self.protocol)
        self.stream(lines, scenario["count"], scenario.get("rate", 0), scenario["chunk"])
        for line in traffic.terminal_end(session_id, terminal_id, self.protocol):
            self.out.write(line)

    def scenario_terminal_file(self, session_id: str, scenario: dict[str, Any]) -> None:
        terminal_id = scenario.get("terminal", f"term-{session_id}")
        for line in traffic.terminal_start(session_id, terminal_id, self.protocol):
            self.out.write(line)
        with open(scenario["path"], "rb") as handle:
            data = handle.read()
        size = int(scenario.get("chunk", 65536))
        block: list[bytes] = []
        for start in range(0, len(data), size):
            update = {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": terminal_id,
                "data": base64.b64encode(data[start : start + size]).decode(),
            }
            block.append(traffic.notification(session_id, update))
            if len(block) >= 4:
                self.out.write(b"".join(block))
                block = []
        self.out.write(b"".join(block))
        for line in traffic.terminal_end(session_id, terminal_id, self.protocol):
            self.out.write(line)

    def scenario_messages(self, session_id: str, scenario: dict[str, Any]) -> None:
        key = "messageId"
        lines = []
        for body in traffic.chunk_bodies(scenario["chunk"]):
            update: dict[str, Any] = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": body.decode()},
            }
            if self.protocol == 2:
                update[key] = f"reply-{self.prompts}"
            lines.append(traffic.notification(session_id, update))
        self.stream(lines, scenario["count"], scenario.get("rate", 0), scenario["chunk"])

    def scenario_mixed(self, session_id: str, scenario: dict[str, Any]) -> None:
        """A small turn of every kind: followed locations, a terminal's output, a reply."""
        self.scenario_follow(session_id, {"count": 2, "interval": 0})
        terminal = {"chunk": 1024, "count": 8, "terminal": f"term-{session_id}"}
        self.scenario_terminal(session_id, terminal)
        self.scenario_messages(session_id, {"chunk": 256, "count": 8})

    def scenario_follow_stream(self, session_id: str, scenario: dict[str, Any]) -> None:
        """Follow locations (as `follow`) while a terminal of the same session streams at `rate`
        bytes a second, then a flood of `flood` locations written at once (its last one is
        index count + flood - 1)."""
        rate, interval, count = scenario["rate"], scenario["interval"], scenario["count"]
        seconds = count * interval + 0.6
        terminal = {"chunk": 4096, "count": int(rate * seconds / 4096), "rate": rate}
        streamer = threading.Thread(
            target=self.scenario_terminal, args=(session_id, terminal), daemon=True
        )
        streamer.start()
        time.sleep(0.3)  # the stream is flowing before the first location
        self.scenario_follow(session_id, {"count": count, "interval": interval})
        flood = scenario.get("flood", 0)
        if flood:
            # Made before the clock starts, like every other line: only the time goes in once the
            # agent has the pipe (making 3,000 lines took this agent 17 ms of CPU, 70-80 ms on a
            # loaded machine, which P2 used to count as acpls' latency).
            lines = b"".join(self.follow_line(session_id, count + i, STAMP) for i in range(flood))
            self.out.write_stamped(lambda now: lines.replace(STAMP.encode(), b"%d" % now))
        streamer.join()

    def stream(self, lines: list[bytes], count: int, rate: float, payload: int) -> None:
        """Write `count` lines cycling through `lines`, in ~256 KiB blocks, paced to `rate`."""
        cycle = b"".join(lines)
        # Paced streams go out in ~2 ms slices, as a real command's output would.
        block_bytes = min(BLOCK_BYTES, int(rate * 0.002)) if rate > 0 else BLOCK_BYTES
        repeats = max(1, block_bytes // len(cycle))
        block = cycle * repeats
        per_block = repeats * len(lines)
        start = time.monotonic()
        written = 0
        while written + per_block <= count:
            self.out.write(block)
            written += per_block
            self.pace(start, written * payload, rate)
        rest = count - written
        if rest:
            self.out.write(b"".join(lines[i % len(lines)] for i in range(rest)))
            self.pace(start, count * payload, rate)

    @staticmethod
    def pace(start: float, sent: int, rate: float) -> None:
        if rate <= 0:
            return
        delay = start + sent / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def scenario_follow(self, session_id: str, scenario: dict[str, Any]) -> None:
        interval = scenario.get("interval", 0.01)
        start = time.monotonic()
        for index in range(scenario["count"]):
            delay = start + index * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.out.write_stamped(partial(self.follow_line, session_id, index))

    def follow_line(self, session_id: str, index: int, now_ns: int | str) -> bytes:
        update = {
            "sessionUpdate": "tool_call" if self.protocol == 1 else "tool_call_update",
            "toolCallId": f"f{index}-{now_ns}",
            "title": "Read",
            "kind": "read",
            "status": "completed",
            "locations": [{"path": f"{traffic.WORKSPACE}/follow.py", "line": index + 1}],
        }
        return traffic.notification(session_id, update)

    def scenario_toolcalls(self, session_id: str, scenario: dict[str, Any]) -> None:
        updates, calls = scenario["updates"], scenario["calls"]
        pending: list[bytes] = []
        size = 0
        for update in traffic.tool_call_updates(updates, calls, self.protocol):
            line = traffic.notification(session_id, update)
            pending.append(line)
            size += len(line)
            if size >= BLOCK_BYTES:
                self.out.write(b"".join(pending))
                pending.clear()
                size = 0
        if pending:
            self.out.write(b"".join(pending))


def main() -> int:
    parser = argparse.ArgumentParser(description="a fast ACP agent for benchmarks")
    parser.add_argument("--protocol", type=int, choices=[1, 2], default=2)
    args = parser.parse_args()
    try:
        LoadAgent(args.protocol).run()
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
