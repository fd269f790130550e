"""An ACP agent that misbehaves on purpose, one way per `--mode`, so end-to-end tests can check that
acpls survives every way real agents break (issue 7).

Run: `python tests/agents/hostile_agent.py --mode MODE [--log FILE] [--cwd-file FILE]`. It speaks
ACP v1 (newline-delimited JSON-RPC on stdio) and behaves well (initialize, session/new,
session/prompt answered with `end_turn`) except for what its mode breaks. `--log FILE` appends every
line it receives (parsed JSON, or {"unparsed": "..."}) plus its own reports ({"report": ...}), one
JSON object per line, flushed at once, so tests read what acpls answered.

Modes (what happens on `session/prompt`, unless said otherwise):

- `garbage`: lines that are not JSON-RPC (binary, partial JSON, scalars, wrong jsonrpc, arrays,
  an empty object, a request whose method is a number), then a normal message chunk.
- `huge_line`: one `session/update` line of `--huge-bytes` bytes (default 64 MiB + 4 KiB, just
  over acpls' default limits.maxLineBytes), then a normal chunk.
- `invalid_utf8`: a message chunk whose JSON string holds bytes that are not UTF-8.
- `deep_json`: JSON nested 100k deep (an array, and a request's params), then an update whose
  `_meta` is nested 900 deep (still valid JSON for most parsers).
- `unknown`: requests for unknown methods (answered -32601 by a good client), an unknown
  notification, unknown `sessionUpdate` types, a known method with params of the wrong type.
- `stray_responses`: responses (results and errors) to ids acpls never sent, and ids of every type.
- `reused_ids`: two client requests with the same id in flight at once, then a third reusing it.
- `permission_flood`: `--flood N` (default 10000) permission requests at once; waits for every
  answer, reports the outcomes, and ends the turn ("cancelled" if session/cancel came).
- `stderr_flood`: `--stderr-mb` (default 100) MB written to stderr, then a normal answer.
- `crash`: a tool call and a permission request, then exit 9 in the middle of the turn.
- `exit_init`: writes a reason on stderr and exits 3 when `initialize` arrives.
- `exit_at_once`: writes a reason on stderr and exits 2 before reading anything (a missing
  config, a bad flag).
- `half_line`: writes half a line (no newline) and exits 0.
- `hang`: a chunk, then never answers the prompt and ignores session/cancel.
- `replay`: advertises `loadSession` and `sessionCapabilities.resume`; violates both: replays
  the history on `session/resume` and sends nothing on `session/load`. `--no-load` hides loadSession
  (so a client has to resume).
- `wipe_diff`: a tool call with diff content, then a `tool_call_update` whose `content` holds only
  text (wiping the diff), then `completed`.
- `no_read`: from its second prompt on, asks for `big.txt` in the session's directory 200 times
  without waiting, then never reads its input again (acpls' answers pile up in the pipe).
- `terminal_flood`: a terminal (v1 `_meta.terminal_output`) that writes `--terminal-mb` (default
  100) MB of text lines in 64 KiB updates, then a line `END-OF-FLOOD` and its exit; reports how
  many bytes it wrote every 4 MiB (`terminal_flood_written`), so a test sees it block when acpls
  stops reading.
- `osc`: a terminal (v1 `_meta.terminal_output`) whose output holds an OSC 52 clipboard write, an
  OSC 8 `javascript:` link, a title change, colours and cursor movement.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

MODES = (
    "garbage",
    "huge_line",
    "invalid_utf8",
    "deep_json",
    "unknown",
    "stray_responses",
    "reused_ids",
    "permission_flood",
    "stderr_flood",
    "crash",
    "exit_init",
    "exit_at_once",
    "half_line",
    "hang",
    "replay",
    "wipe_diff",
    "osc",
    "terminal_flood",
    "no_read",
    "well_behaved",
)
HISTORY_TEXT = "hello from the history"
STILL_HERE = "still here"
DEFAULT_HUGE = 64 * 1024 * 1024 + 4096
DEEP = 100_000

# Bytes written as is, one per line: none of them is a JSON-RPC message acpls can act on.
GARBAGE = [
    b"this is not JSON",
    b"\x00\x01\x02\xff\xfe binary",
    b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": ',
    b"42",
    b"null",
    b'"a string"',
    b"[1, 2, 3]",
    b"[]",
    b"{}",
    b'{"jsonrpc": "1.0", "id": 1, "method": "initialize"}',
    b'{"jsonrpc": "2.0", "id": 101, "method": 5}',
    b'{"jsonrpc": "2.0", "id": {"an": "object"}, "method": "fs/read_text_file"}',
    b'{"jsonrpc": "2.0", "id": 102, "method": "fs/read_text_file", "params": 7}',
    b'{"jsonrpc": "2.0", "method": "session/update", "params": "not an object"}',
    b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 5, "update": []}}',
    b'{"jsonrpc": "2.0", "id": true, "result": {}}',
    b'{"jsonrpc": "2.0", "id": 103}',
    b"\xef\xbb\xbf{}",
    b"   ",
    b"\r",
]


class Agent:
    def __init__(self, args: argparse.Namespace) -> None:
        self.mode: str = args.mode
        self.args = args
        self.out = sys.stdout.buffer
        self.log: IO[str] | None = args.log.open("a", encoding="utf-8") if args.log else None
        self.session_id = "hostile-1"
        self.cwd = "/"
        self.next_id = 1000
        self.cancelled = False
        self.history_sent = 0
        self.prompts = 0

    # -- output ------------------------------------------------------------------------------
    def write_line(self, data: bytes) -> None:
        self.out.write(data + b"\n")
        self.out.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write_line(json.dumps(message).encode())

    def respond(self, msg_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def respond_error(self, msg_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def update(self, update: dict[str, Any], session_id: str | None = None) -> None:
        params = {"sessionId": session_id or self.session_id, "update": update}
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    def chunk(self, text: str, session_id: str | None = None) -> None:
        self.update(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
            session_id,
        )

    def request(self, method: str, params: Any, msg_id: Any = None) -> Any:
        if msg_id is None:
            self.next_id += 1
            msg_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id

    def report(self, **data: Any) -> None:
        self.record({"report": data})

    def record(self, message: Any) -> None:
        if self.log is not None:
            self.log.write(json.dumps(message) + "\n")
            self.log.flush()

    # -- input -------------------------------------------------------------------------------
    def read(self) -> dict[str, Any] | None:
        """The next message from the client; None at end of input."""
        while True:
            line = sys.stdin.buffer.readline()
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                self.record({"unparsed": line.decode("utf-8", "replace")})
                continue
            self.record(message)
            if isinstance(message, dict):
                return message

    def wait_for_responses(self, ids: set[Any]) -> dict[Any, dict[str, Any]]:
        """Read until every id in `ids` is answered; requests and notifications meanwhile are
        handled (a cancel is remembered)."""
        answers: dict[Any, dict[str, Any]] = {}
        while len(answers) < len(ids):
            message = self.read()
            if message is None:
                break
            if "method" not in message and message.get("id") in ids:
                answers[message["id"]] = message
            else:
                self.handle(message)
        return answers

    # -- dispatch ----------------------------------------------------------------------------
    def run(self) -> int:
        if self.mode == "exit_at_once":
            sys.stderr.write("hostile agent: no configuration found, exiting\n")
            sys.stderr.flush()
            return 2
        while True:
            message = self.read()
            if message is None:
                return 0
            self.handle(message)

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        msg_id = message.get("id")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method is None:
            return  # a response to one of our requests that nobody waits for
        if method == "session/cancel":
            self.cancelled = True
            return
        if msg_id is None:
            return
        handler = getattr(self, "on_" + method.replace("/", "_"), None)
        if handler is None:
            self.respond_error(msg_id, -32601, f"Method not found: {method}")
            return
        handler(msg_id, params)

    def on_initialize(self, msg_id: Any, params: dict[str, Any]) -> None:
        if self.mode == "exit_init":
            sys.stderr.write("hostile agent: giving up during initialize\n")
            sys.stderr.flush()
            os._exit(3)
        capabilities: dict[str, Any] = {
            "loadSession": self.mode == "replay" and not self.args.no_load,
            "promptCapabilities": {"embeddedContext": True},
            "sessionCapabilities": {"resume": {}} if self.mode == "replay" else {},
        }
        self.respond(
            msg_id,
            {
                "protocolVersion": 1,
                "agentInfo": {"name": f"hostile-{self.mode}", "version": "0"},
                "agentCapabilities": capabilities,
                "authMethods": [],
            },
        )

    def on_session_new(self, msg_id: Any, params: dict[str, Any]) -> None:
        self.cwd = str(params.get("cwd") or "/")
        if self.args.cwd_file:
            Path(self.args.cwd_file).write_text(self.cwd, encoding="utf-8")
        self.respond(msg_id, {"sessionId": self.session_id})

    def on_session_load(self, msg_id: Any, params: dict[str, Any]) -> None:
        # Violation: session/load MUST replay the conversation; this agent sends nothing.
        self.session_id = str(params.get("sessionId"))
        self.cwd = str(params.get("cwd") or "/")
        self.respond(msg_id, {})

    def on_session_resume(self, msg_id: Any, params: dict[str, Any]) -> None:
        # Violation: session/resume MUST NOT replay; this agent replays the whole history.
        self.session_id = str(params.get("sessionId"))
        self.cwd = str(params.get("cwd") or "/")
        self.replay_history()
        self.respond(msg_id, {})

    def replay_history(self) -> None:
        self.history_sent += 1
        self.update(
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}
        )
        self.chunk(HISTORY_TEXT)
        self.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "old-call",
                "title": "Read README.md",
                "kind": "read",
                "status": "completed",
            }
        )

    def on_session_prompt(self, msg_id: Any, params: dict[str, Any]) -> None:
        self.session_id = str(params.get("sessionId") or self.session_id)
        self.cancelled = False
        mode = self.mode
        if mode == "hang":
            self.chunk("working on it")
            return  # never answered; session/cancel is ignored
        if mode == "half_line":
            self.out.write(b'{"jsonrpc": "2.0", "method": "session/update", "params": {"sess')
            self.out.flush()
            os._exit(0)
        if mode == "crash":
            self.crash_mid_turn()
        if mode == "permission_flood":
            self.permission_flood(msg_id)
            return
        self.prompts += 1
        if mode == "no_read" and self.prompts > 1:
            path = os.path.join(self.cwd, "big.txt")
            for _ in range(200):
                self.request("fs/read_text_file", {"sessionId": self.session_id, "path": path})
            self.report(no_read_requests=200)
            time.sleep(3600)  # never reads again
        step = getattr(self, "turn_" + mode, None)
        if step is not None:
            step()
        self.chunk(STILL_HERE)
        self.respond(msg_id, {"stopReason": "cancelled" if self.cancelled else "end_turn"})

    # -- the misbehaviours -------------------------------------------------------------------
    def turn_garbage(self) -> None:
        for line in GARBAGE:
            self.write_line(line)

    def turn_huge_line(self) -> None:
        size = self.args.huge_bytes
        head = json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": self.session_id,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "@"},
                    },
                },
            }
        ).encode()
        before, after = head.split(b'"@"')
        filler = size - len(before) - len(after) - 2
        block = b"x" * (1 << 20)
        self.out.write(before + b'"')
        while filler > 0:
            piece = block[: min(filler, len(block))]
            self.out.write(piece)
            filler -= len(piece)
        self.out.write(b'"' + after + b"\n")
        self.out.flush()
        self.report(huge_line_bytes=size)

    def turn_invalid_utf8(self) -> None:
        message = json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": self.session_id,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": "bad:@:end"},
                    },
                },
            }
        ).encode()
        self.write_line(message.replace(b"@", b"\xff\xfe\xc3(\xed\xa0\x80"))

    def turn_deep_json(self) -> None:
        self.write_line(b"[" * DEEP + b"]" * DEEP)
        deep_params = b'{"a":' * DEEP + b"1" + b"}" * DEEP
        self.write_line(
            b'{"jsonrpc": "2.0", "id": 77, "method": "fs/read_text_file", "params": '
            + deep_params
            + b"}"
        )
        meta: Any = "bottom"
        for _ in range(900):
            meta = {"d": meta}
        self.update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "deep meta"},
                "_meta": {"deep": meta},
            }
        )

    def turn_unknown(self) -> None:
        asked = {
            self.request("acme/unknown", {"x": 1}, "u1"),
            self.request("_acme/extension", {"sessionId": self.session_id}, "u2"),
            self.request("fs/read_text_file", ["not", "an", "object"], "u3"),
            self.request("session/request_permission", {"sessionId": "nobody"}, "u4"),
        }
        self.send({"jsonrpc": "2.0", "method": "acme/notify", "params": {"y": 2}})
        self.send({"jsonrpc": "2.0", "method": "_acme/notify", "params": {"y": 2}})
        self.update({"sessionUpdate": "acme_future_update", "payload": [1, 2]})
        self.update({"no": "sessionUpdate"})
        self.update({"sessionUpdate": 17})
        self.update({"sessionUpdate": "tool_call", "toolCallId": 5, "title": []})
        answers = self.wait_for_responses(asked)
        self.report(
            unknown_answers={str(k): v.get("error", v.get("result")) for k, v in answers.items()}
        )

    def turn_stray_responses(self) -> None:
        self.send({"jsonrpc": "2.0", "id": 424242, "result": {"stray": True}})
        self.send({"jsonrpc": "2.0", "id": "never-sent", "result": None})
        self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "x"}})
        self.send({"jsonrpc": "2.0", "id": 9999, "error": {"code": "bad", "message": 5}})
        self.send({"jsonrpc": "2.0", "id": 1, "result": {"late": "answer to initialize?"}})
        self.send({"jsonrpc": "2.0", "id": 2.5, "result": {}})

    def turn_reused_ids(self) -> None:
        path = os.path.join(self.cwd, "calc.py")
        params = {"sessionId": self.session_id, "path": path}
        self.request("fs/read_text_file", params, 5)
        self.request(
            "fs/read_text_file", {**params, "path": os.path.join(self.cwd, "README.md")}, 5
        )
        answers: list[dict[str, Any]] = []
        while len(answers) < 2:
            message = self.read()
            if message is None:
                break
            if "method" not in message and message.get("id") == 5:
                answers.append(message)
        self.request("fs/read_text_file", params, 5)
        third = self.wait_for_responses({5})
        answers.extend(third.values())
        self.report(reused_id_answers=answers)

    def permission_flood(self, prompt_id: Any) -> None:
        count = self.args.flood
        tool_call = {"toolCallId": "flood", "title": "Flood", "kind": "execute"}
        options = [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
        ]
        params = {"sessionId": self.session_id, "toolCall": tool_call, "options": options}
        ids = {self.request("session/request_permission", params, f"p{i}") for i in range(count)}
        self.report(flood_sent=count)
        answers = self.wait_for_responses(ids)
        outcomes: Counter[str] = Counter()
        for answer in answers.values():
            result = answer.get("result")
            if isinstance(result, dict) and isinstance(result.get("outcome"), dict):
                outcome = result["outcome"]
                outcomes[str(outcome.get("outcome")) + ":" + str(outcome.get("optionId", ""))] += 1
            else:
                outcomes["error"] += 1
        self.report(flood_answered=len(answers), flood_outcomes=dict(outcomes))
        self.respond(prompt_id, {"stopReason": "cancelled" if self.cancelled else "end_turn"})

    def turn_stderr_flood(self) -> None:
        total = self.args.stderr_mb * 1024 * 1024
        line = (b"hostile agent stderr flood " * 40)[:1023] + b"\n"
        block = line * 1024
        written = 0
        err = sys.stderr.buffer
        while written < total:
            err.write(block)
            written += len(block)
        err.write(b"no newline at the end " * 10000)
        err.flush()
        self.report(stderr_bytes=written)

    def crash_mid_turn(self) -> None:
        self.chunk("about to crash")
        self.update(
            {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Run", "status": "pending"}
        )
        options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
        self.request(
            "session/request_permission",
            {"sessionId": self.session_id, "toolCall": {"toolCallId": "c1"}, "options": options},
        )
        time.sleep(0.3)
        sys.stderr.write("hostile agent: crashing in the middle of the turn\n")
        sys.stderr.flush()
        os._exit(9)

    def turn_wipe_diff(self) -> None:
        path = os.path.join(self.cwd, "calc.py")
        diff = {
            "type": "diff",
            "path": path,
            "oldText": "def add(a, b):\n    return a - b\n",
            "newText": "def add(a, b):\n    return a + b\n",
        }
        self.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "edit-1",
                "title": "Edit calc.py",
                "kind": "edit",
                "status": "in_progress",
                "content": [diff],
                "locations": [{"path": path, "line": 2}],
            }
        )
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "edit-1",
                "content": [{"type": "content", "content": {"type": "text", "text": "Edited."}}],
            }
        )
        self.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": "edit-1", "status": "completed"}
        )

    def turn_osc(self) -> None:
        output = (
            "plain \x1b[31mred\x1b[0m \x1b[2;5Hmoved"
            "\x1b]52;c;c2VjcmV0\x07"
            "\x1b]8;;javascript:alert(1)\x07click\x1b]8;;\x07"
            "\x1b]8;;https://example.com\x07safe\x1b]8;;\x07"
            "\x1b]0;evil title\x07 end\r\n"
        )
        self.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "term-call",
                "title": "Run",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "term-1"}],
                "_meta": {"terminal_info": {"terminal_id": "term-1", "cwd": self.cwd}},
            }
        )
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "term-call",
                "_meta": {"terminal_output": {"terminal_id": "term-1", "data": output}},
            }
        )
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "term-call",
                "status": "completed",
                "_meta": {
                    "terminal_exit": {"terminal_id": "term-1", "exit_code": 0, "signal": None}
                },
            }
        )

    def turn_terminal_flood(self) -> None:
        meta = {"terminal_info": {"terminal_id": "flood-1", "cwd": self.cwd}}
        self.update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "flood-call",
                "title": "Flood",
                "kind": "execute",
                "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "flood-1"}],
                "_meta": meta,
            }
        )
        line = "hostile terminal flood 0123456789abcdefghijklmnopqrstuvwxyz 0123456789\n"
        block = line * (64 * 1024 // len(line))
        total = self.args.terminal_mb * 1024 * 1024
        written = 0
        while written < total:
            self.terminal_output(block)
            written += len(block)
            if written % (4 * 1024 * 1024) < len(block):
                self.report(terminal_flood_written=written)
        self.terminal_output("END-OF-FLOOD\n")
        self.report(terminal_flood_written=written, terminal_flood_done=True)
        exit_meta = {"terminal_exit": {"terminal_id": "flood-1", "exit_code": 0, "signal": None}}
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "flood-call",
                "status": "completed",
                "_meta": exit_meta,
            }
        )

    def terminal_output(self, text: str) -> None:
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "flood-call",
                "_meta": {"terminal_output": {"terminal_id": "flood-1", "data": text}},
            }
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="an ACP agent that misbehaves on purpose")
    parser.add_argument("--mode", choices=MODES, required=True)
    parser.add_argument("--log", type=Path)
    parser.add_argument("--cwd-file", type=Path)
    parser.add_argument("--pid-file", type=Path)
    parser.add_argument("--huge-bytes", type=int, default=DEFAULT_HUGE)
    parser.add_argument("--flood", type=int, default=10_000)
    parser.add_argument("--stderr-mb", type=int, default=100)
    parser.add_argument("--terminal-mb", type=int, default=100)
    parser.add_argument("--no-load", action="store_true")
    # Ignored: makes the command line as long as a test needs.
    parser.add_argument("--pad", default="")
    args = parser.parse_args(argv)
    if args.pid_file is not None:
        args.pid_file.write_text(str(os.getpid()), encoding="utf-8")
    return Agent(args).run()


if __name__ == "__main__":
    sys.exit(main())
