"""An ACP agent that replays a script, so end-to-end tests can make the agent do exactly what
they need.

Run: `python tests/agents/scripted_agent.py --script FILE.json` (or `--script-json '<json>'`), with
optional `--log FILE` (every message the agent receives, one JSON object per line, flushed at
once: responses to its own requests included, so tests can read what the client answered),
`--env-dump FILE` (its environment as a JSON object, written at start) and `--pid-file FILE`.

The script is a JSON object:

    {
      "protocol": 1 | 2,        # optional; default min(requested protocolVersion, 2)
      "echo_user": true,        # v2: echo each prompt as a `user_message` update (default true)
      "on_initialize": ...,     # initialize
      "on_authenticate": ...,   # authenticate (v1) / auth/login (v2)
      "on_new_session": ...,    # session/new
      "on_load": ...,           # session/load
      "on_resume": ...,         # session/resume
      "on_list": ...,           # session/list; {"pages": {"": result, "<cursor>": result}}
                                #   answers each cursor with its own page
      "on_fork": ...,           # session/fork (default: a new "scripted-fork-N" session)
      "on_close": ..., "on_delete": ...,
      "on_set_mode": ...,       # session/set_mode
      "on_set_config_option": ...,
      "on_prompt": [steps] | [[steps for prompt 0], [steps for prompt 1], ...],
      "on_cancel": [steps],     # run when session/cancel arrives
      "on_request": {"<any other method>": ...},
      "signed_in_when": {"env": "NAME"} | {"file": "PATH"}
                                # session/new answers -32000 "authentication required" until
                                #   the variable is set in the agent's environment / the file exists
    }

A handler value is either a dict, merged over the default result (for example
`"on_initialize": {"protocolVersion": 1, "authMethods": [...]}`), or a list of steps. When the
steps contain no `respond`/`respond_error` step, the default result is sent after them. For
`on_prompt` given as a list of step lists, prompt n (0-based) uses list n, and the last list for
every later prompt.

Default results: initialize answers the protocol version with matching capabilities and
`agentInfo`/`info` named "scripted-agent"; session/new answers `{"sessionId": "scripted-N"}`;
session/prompt answers `{"stopReason": ...}` in v1 after the steps; in v2 it first answers
`{"messageId": "user-N"}`, echoes the `user_message`, sends `state_update` running, runs the steps,
then sends `state_update` idle with the stop reason (all of this only when the steps have no
`respond` step: with one, the test is in charge). session/resume in v2 sends `state_update` idle
before its response. Unknown methods answer -32601.

Steps (strings "$sessionId" and "$cwd" anywhere inside are replaced by the current values):

    {"send": {...} | "line"}     write a JSON-RPC message as is (dict) or a raw line (string)
    {"raw": "garbage line"}      write a raw line
    {"update": {...}}            session/update for the current session
    {"request": "method", "params": {...}, "expect": {...}, "wait": true}
                                 send a request to the client; `expect` is matched as a subset of
                                 the result (or of the error when it has an "error" key); a
                                 mismatch is written to stderr and the log and exits with status 3;
                                 `"wait": false` sends it without waiting for the answer;
                                 `"save": "t"` keeps the result: "$t.<key>" in later steps of the
                                 same turn is replaced by that key's value (for example
                                 "$t.terminalId" after a terminal/create)
    {"sleep": seconds}
    {"wait_cancel": true}        block until session/cancel arrives (the stop reason becomes
                                 "cancelled"); a cancel that came earlier in this turn counts
    {"stop_reason": "max_tokens"}  the stop reason to report at the end of the prompt
    {"respond": {...}}           answer the current request with this result now; later steps
                                 still run
    {"respond_error": {"code": -32603, "message": "..."}}   answer it with this error now
    {"stderr": "text"}           write to stderr
    {"write_file": {"path", "text"}}   write a file straight to disk (as Claude Code, Codex and
                                 Copilot do, past the client); `"replace": [old, new]` instead of
                                 `text` replaces the one occurrence of `old` in the file
    {"delete_file": "path"}      delete a file straight from disk
    {"disk": {"op": "write", "path": P, "text": T | "base64": B, "mode"?: 0o755}}
    {"disk": {"op": "remove" | "rename" | "symlink", "path": P, "to"?: P2, "target"?: T}}
                                 change a file straight on disk, as agents do with their own tools
    {"spawn": [argv...]}         start a process of the agent's own (not waited for; it inherits
                                 the agent's environment, group and session)
    {"exit": code}               flush and exit with `code`
    {"crash": true | code}       exit at once (os._exit) with status 1 or `code`
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

from acpls.demo.agent_kit import (
    METHOD_NOT_FOUND,
    Peer,
    Reply,
    RpcError,
    open_stdio_peer,
    setup_stderr_logging,
)

EXPECT_FAILED_STATUS = 3

EVENTS = {
    "initialize": "on_initialize",
    "authenticate": "on_authenticate",
    "auth/login": "on_authenticate",
    "session/new": "on_new_session",
    "session/load": "on_load",
    "session/resume": "on_resume",
    "session/list": "on_list",
    "session/fork": "on_fork",
    "session/close": "on_close",
    "session/delete": "on_delete",
    "session/set_mode": "on_set_mode",
    "session/set_config_option": "on_set_config_option",
    "session/prompt": "on_prompt",
}
RESPOND_KEYS = ("respond", "respond_error")


def disk_step(spec: dict[str, Any]) -> None:
    """Write, remove, rename or link a file without asking the client (see the `disk` step)."""
    op, path = spec["op"], spec["path"]
    if op == "write":
        data = (
            base64.b64decode(spec["base64"]) if "base64" in spec else spec["text"].encode("utf-8")
        )
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        if "mode" in spec:
            os.chmod(path, int(spec["mode"]))
    elif op == "remove":
        os.unlink(path)
    elif op == "rename":
        os.rename(path, spec["to"])
    elif op == "symlink":
        os.symlink(spec["target"], path)
    else:
        raise RpcError(-32603, f"unknown disk op {op!r}")


def subset_mismatch(expected: Any, actual: Any, path: str = "") -> str | None:
    """Where `expected` is not contained in `actual` (dicts by subset, the rest by equality)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path or '/'}: expected an object, got {actual!r}"
        for key, value in expected.items():
            if key not in actual:
                return f"{path}/{key}: missing"
            mismatch = subset_mismatch(value, actual[key], f"{path}/{key}")
            if mismatch:
                return mismatch
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path or '/'}: expected {expected!r}, got {actual!r}"
        for index, (item, got) in enumerate(zip(expected, actual, strict=True)):
            mismatch = subset_mismatch(item, got, f"{path}/{index}")
            if mismatch:
                return mismatch
        return None
    return None if expected == actual else f"{path or '/'}: expected {expected!r}, got {actual!r}"


def substitute(value: Any, variables: dict[str, str]) -> Any:
    if isinstance(value, str):
        for name, replacement in variables.items():
            value = value.replace(name, replacement)
        return value
    if isinstance(value, list):
        return [substitute(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, variables) for key, item in value.items()}
    return value


def split_at_respond(steps: list[Any]) -> tuple[list[Any], dict[str, Any] | None, list[Any]]:
    for index, step in enumerate(steps):
        if isinstance(step, dict) and any(key in step for key in RESPOND_KEYS):
            return steps[:index], step, steps[index + 1 :]
    return steps, None, []


class Turn:
    """What the steps of one handled request share."""

    def __init__(self, session_id: str | None, cwd: str | None) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.stop_reason = "end_turn"
        self.saved: dict[str, str] = {}

    def variables(self) -> dict[str, str]:
        found = {"$sessionId": self.session_id or "", "$cwd": self.cwd or "", **self.saved}
        # Longest names first, so "$t.terminalId" is not cut short by a shorter name.
        return dict(sorted(found.items(), key=lambda item: -len(item[0])))

    def save(self, name: str, result: Any) -> None:
        if isinstance(result, dict):
            for key, value in result.items():
                self.saved[f"${name}.{key}"] = (
                    value if isinstance(value, str) else json.dumps(value)
                )


class ScriptedAgent:
    def __init__(self, peer: Peer, script: dict[str, Any], log: IO[str] | None) -> None:
        self.peer = peer
        self.script = script
        self.log = log
        self.version: int = 1
        self.session_ids = itertools.count(1)
        self.sessions: dict[str, str] = {}  # id -> cwd
        self.last_session: str | None = None
        self.prompt_count = 0
        self.cancelled = asyncio.Event()
        self.background: set[asyncio.Task[Any]] = set()
        self.children: list[subprocess.Popen[bytes]] = []  # the `spawn` steps' processes
        for method in EVENTS:
            peer.on_request(method, self._handler(method))
        for method in script.get("on_request", {}):
            peer.on_request(method, self._handler(method))
        peer.on_notification("session/cancel", self.on_cancel)

    def _handler(self, method: str) -> Callable[[Any], Awaitable[Any]]:
        async def handle(params: Any) -> Any:
            return await self.handle(method, params if isinstance(params, dict) else {})

        return handle

    # -- logging --------------------------------------------------------------------------------

    def record(self, message: dict[str, Any]) -> None:
        if self.log is not None:
            self.log.write(json.dumps(message) + "\n")
            self.log.flush()

    # -- handling -------------------------------------------------------------------------------

    def spec_for(self, method: str) -> Any:
        event = EVENTS.get(method)
        if event is not None:
            return self.script.get(event)
        return self.script.get("on_request", {}).get(method)

    async def handle(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            requested = params.get("protocolVersion")
            default_version = 2 if isinstance(requested, int) and requested >= 2 else 1
            self.version = int(self.script.get("protocol", default_version))
        session_id = params.get("sessionId") if isinstance(params.get("sessionId"), str) else None
        if method == "session/new":
            session_id = f"scripted-{next(self.session_ids)}"
        session_id = session_id or self.last_session
        cwd = params.get("cwd")
        turn = Turn(
            session_id, cwd if isinstance(cwd, str) else self.sessions.get(session_id or "")
        )
        spec = self.spec_for(method)
        if method == "session/list" and isinstance(spec, dict) and "pages" in spec:
            spec = spec["pages"].get(params.get("cursor") or "", {"sessions": []})
        if method == "session/prompt":
            spec = self.prompt_steps(spec)
        default = self.default_result(method, params, turn)
        steps: list[Any] = []
        if isinstance(spec, dict):
            default = {**(default or {}), **spec}
        elif isinstance(spec, list):
            steps = spec
        if method == "initialize" and isinstance(default, dict):
            self.version = int(default.get("protocolVersion", self.version))
        if method in ("session/new", "session/fork"):
            sid = default.get("sessionId", session_id) if isinstance(default, dict) else session_id
            self.sessions[str(sid)] = str(params.get("cwd", ""))
            self.last_session = str(sid)
            turn.session_id = str(sid)
        if method in ("session/load", "session/resume") and turn.session_id is not None:
            self.sessions[turn.session_id] = str(params.get("cwd", ""))
            self.last_session = turn.session_id
        before, respond, after = split_at_respond(steps)
        if method == "session/new" and not self.signed_in():
            raise RpcError(-32000, "Authentication required")
        if method == "session/prompt":
            return await self.prompt(params, turn, before, respond, after)
        if default is None and respond is None and not steps:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "session/resume" and self.version >= 2 and respond is None:
            before = [*before, {"update": {"sessionUpdate": "state_update", "state": "idle"}}]
        await self.run_steps(before, turn)
        return self.reply(respond, default, after, turn)

    def signed_in(self) -> bool:
        condition = self.script.get("signed_in_when")
        if not isinstance(condition, dict):
            return True
        if "env" in condition:
            return bool(os.environ.get(condition["env"]))
        return os.path.exists(condition["file"])

    def reply(
        self, respond: dict[str, Any] | None, default: Any, after: list[Any], turn: Turn
    ) -> Reply:
        async def then() -> None:
            await self.run_steps(after, turn)

        if respond is None:
            return Reply(default if default is not None else {}, then)
        if "respond_error" in respond:
            error = substitute(respond["respond_error"], turn.variables())
            return Reply(
                None,
                then,
                RpcError(
                    int(error.get("code", -32603)), str(error.get("message", "")), error.get("data")
                ),
            )
        return Reply(substitute(respond["respond"], turn.variables()), then)

    def prompt_steps(self, spec: Any) -> Any:
        index = self.prompt_count
        self.prompt_count += 1
        if isinstance(spec, list) and spec and all(isinstance(item, list) for item in spec):
            return spec[min(index, len(spec) - 1)]
        return spec

    async def prompt(
        self,
        params: dict[str, Any],
        turn: Turn,
        before: list[Any],
        respond: dict[str, Any] | None,
        after: list[Any],
    ) -> Any:
        self.cancelled.clear()
        if respond is not None:
            await self.run_steps(before, turn)
            return self.reply(respond, None, after, turn)
        if self.version < 2:
            await self.run_steps(before, turn)
            return {"stopReason": turn.stop_reason}
        message_id = f"user-{self.prompt_count}"

        async def then() -> None:
            if self.script.get("echo_user", True):
                self.send_update(
                    turn,
                    {
                        "sessionUpdate": "user_message",
                        "messageId": message_id,
                        "content": params.get("prompt", []),
                    },
                )
            self.send_update(turn, {"sessionUpdate": "state_update", "state": "running"})
            await self.run_steps(before, turn)
            self.send_update(
                turn,
                {"sessionUpdate": "state_update", "state": "idle", "stopReason": turn.stop_reason},
            )

        return Reply({"messageId": message_id}, then)

    def default_result(self, method: str, params: dict[str, Any], turn: Turn) -> Any:
        if method == "initialize":
            return self.initialize_result()
        if method == "session/new":
            return {"sessionId": turn.session_id}
        if method == "session/fork":
            return {"sessionId": f"scripted-fork-{next(self.session_ids)}"}
        if method == "session/list":
            return {
                "sessions": [{"sessionId": sid, "cwd": cwd} for sid, cwd in self.sessions.items()]
            }
        if method == "session/set_config_option":
            return {"configOptions": []}
        if method in EVENTS:
            return {}
        return None

    def initialize_result(self) -> dict[str, Any]:
        info = {"name": "scripted-agent", "version": "0.0.0"}
        if self.version >= 2:
            return {
                "protocolVersion": 2,
                "info": info,
                "capabilities": {"session": {"prompt": {"embeddedContext": {}}}},
                "authMethods": [],
            }
        return {
            "protocolVersion": 1,
            "agentInfo": info,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
            },
            "authMethods": [],
        }

    async def on_cancel(self, params: Any) -> None:
        self.cancelled.set()
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        steps = self.script.get("on_cancel") or []
        session_id = session_id or self.last_session
        await self.run_steps(steps, Turn(session_id, self.sessions.get(session_id or "")))

    # -- steps ----------------------------------------------------------------------------------

    def send_update(self, turn: Turn, update: dict[str, Any]) -> None:
        self.peer.send_update(turn.session_id or "", update)

    async def run_steps(self, steps: list[Any], turn: Turn) -> None:
        for step in steps:
            if not isinstance(step, dict):
                raise RpcError(-32603, f"script step is not an object: {step!r}")
            await self.run_step(substitute(step, turn.variables()), turn)

    async def run_step(self, step: dict[str, Any], turn: Turn) -> None:
        if "send" in step:
            message = step["send"]
            if isinstance(message, str):
                self.peer.write_raw(message)
            else:
                self.peer.send(message)
        elif "raw" in step:
            self.peer.write_raw(str(step["raw"]))
        elif "update" in step:
            self.send_update(turn, step["update"])
        elif "request" in step:
            await self.request_step(step, turn)
        elif "sleep" in step:
            await asyncio.sleep(float(step["sleep"]))
        elif "wait_cancel" in step:
            await self.cancelled.wait()
            turn.stop_reason = "cancelled"
        elif "stop_reason" in step:
            turn.stop_reason = str(step["stop_reason"])
        elif "stderr" in step:
            sys.stderr.write(
                str(step["stderr"]) + ("" if str(step["stderr"]).endswith("\n") else "\n")
            )
            sys.stderr.flush()
        elif "write_file" in step:
            write_file(step["write_file"])
        elif "delete_file" in step:
            os.remove(str(step["delete_file"]))
        elif "disk" in step:
            disk_step(step["disk"])
        elif "spawn" in step:
            self.children.append(subprocess.Popen([str(a) for a in step["spawn"]]))
        elif "exit" in step:
            self.finish(int(step["exit"]))
        elif "crash" in step:
            code = step["crash"]
            os._exit(1 if code is True else int(code))
        else:
            raise RpcError(-32603, f"unknown script step {step!r}")

    async def request_step(self, step: dict[str, Any], turn: Turn) -> None:
        call = self.peer.request(str(step["request"]), step.get("params"))
        if step.get("wait", True) is False:
            task = asyncio.ensure_future(call)
            self.background.add(task)
            task.add_done_callback(self._forget)
            return
        try:
            outcome: dict[str, Any] = {"result": await call}
        except RpcError as error:
            outcome = {"error": error.to_json()}
        if "save" in step:
            turn.save(str(step["save"]), outcome.get("result"))
        expect = step.get("expect")
        if expect is None:
            return
        actual = outcome.get("error") if "error" in expect else outcome.get("result")
        wanted = expect.get("error", expect)
        mismatch = subset_mismatch(wanted, actual)
        if mismatch is not None:
            report = {"expect_failed": step["request"], "where": mismatch, "got": outcome}
            self.record(report)
            sys.stderr.write(f"scripted agent: expectation failed: {json.dumps(report)}\n")
            self.finish(EXPECT_FAILED_STATUS)

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.record({"request_failed": str(task.exception())})

    def finish(self, code: int) -> None:
        if self.log is not None:
            self.log.flush()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def write_file(spec: dict[str, Any]) -> None:
    """Write bytes exactly as given (no newline translation), like an agent's own file tools."""
    path = Path(str(spec["path"]))
    if "replace" in spec:
        old, new = spec["replace"]
        text = path.read_bytes().decode("utf-8")
        if text.count(old) != 1:
            raise RpcError(-32603, f"write_file: {old!r} is not in {path} exactly once")
        text = text.replace(old, new)
    else:
        text = str(spec["text"])
    path.write_bytes(text.encode("utf-8"))


def load_script(args: argparse.Namespace) -> dict[str, Any]:
    if args.script_json is not None:
        script = json.loads(args.script_json)
    elif args.script is not None:
        script = json.loads(Path(args.script).read_text(encoding="utf-8"))
    else:
        script = {}
    if not isinstance(script, dict):
        raise SystemExit("scripted agent: the script must be a JSON object")
    return script


async def serve(script: dict[str, Any], log: IO[str] | None) -> None:
    agent: ScriptedAgent | None = None

    def on_message(message: dict[str, Any]) -> None:
        if agent is not None:
            agent.record(message)

    peer = await open_stdio_peer(on_message=on_message)
    agent = ScriptedAgent(peer, script, log)
    await peer.run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="ACP agent that replays a script")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--script", type=Path, help="script file (JSON)")
    source.add_argument("--script-json", help="script as a JSON string")
    parser.add_argument("--log", type=Path, help="JSONL file of every message received")
    parser.add_argument("--env-dump", type=Path, help="write the environment here at start")
    parser.add_argument("--pid-file", type=Path, help="write the process id here at start")
    parser.add_argument(
        "--login", type=Path, help="a terminal sign-in: write this file and exit (no ACP)"
    )
    args = parser.parse_args(argv)
    if args.login is not None:
        args.login.write_text(os.environ.get("LOGIN_TOKEN", "signed in"), encoding="utf-8")
        return 0
    script = load_script(args)
    if args.env_dump is not None:
        args.env_dump.write_text(json.dumps(dict(os.environ), indent=1), encoding="utf-8")
    if args.pid_file is not None:
        args.pid_file.write_text(str(os.getpid()), encoding="utf-8")
    setup_stderr_logging()
    log = args.log.open("a", encoding="utf-8") if args.log is not None else None
    try:
        asyncio.run(serve(script, log))
    finally:
        if log is not None:
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
