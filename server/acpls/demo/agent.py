"""The acpls demo agent: a real ACP agent (v1 and v2) that needs no API key.

On each prompt it walks the session's working directory like a coding agent would: it thinks
(streamed), makes a plan, reads files (tool calls with locations, so editors can follow it),
proposes an edit with a diff and asks permission, runs a check command whose output streams as a
terminal, makes one tool call that fails, and reports. Everything is paced by `ACPLS_DEMO_SPEED`
(a delay multiplier; `0` means no delays, for tests) so a person can watch it.

Protocol choice: `initialize` is answered with min(requested, 2); the whole connection then speaks
that version (v1: `tool_call`, `plan`, client fs/terminal methods; v2: upserts, `plan_update`,
agent-owned terminals, `state_update`).
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import contextlib
import itertools
import os
import re
import shlex
import signal
import sys
from collections import deque
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse
from urllib.request import url2pathname

from acpls import __version__
from acpls.demo import workspace_scan as scan
from acpls.demo.agent_kit import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    Peer,
    Reply,
    RpcError,
    wait_or_cancelled,
)

T = TypeVar("T")

CHECKS_SCRIPT = Path(__file__).with_name("checks.py")
AGENT_INFO = {"name": "acpls-demo", "title": "acpls demo agent", "version": __version__}
HISTORY_LIMIT = 5000  # updates kept per session for session/load replay
CONTEXT_WINDOW = 200_000
ANSI_SGR = re.compile(r"\x1b\[[0-9;]*m")

MODES = [
    {"id": "ask", "name": "Ask", "description": "Ask before every edit"},
    {"id": "code", "name": "Code", "description": "Edit files without asking"},
]
PACES = {"slow": 2.0, "normal": 1.0, "fast": 0.3}
PERMISSION_OPTIONS = [
    {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow edits", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject-always", "name": "Always reject edits", "kind": "reject_always"},
]
COMMANDS = [
    ("test", "Run the project's checks in a terminal", None),
    ("explain", "Read the project and explain it", "what to explain"),
]


def env_speed() -> float:
    try:
        return max(0.0, float(os.environ.get("ACPLS_DEMO_SPEED", "1")))
    except ValueError:
        return 1.0


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class TurnCancelled(Exception):
    """The client sent session/cancel while this turn was running."""


@dataclass
class ClientFeatures:
    """What the client offered in `initialize`, reduced to what the demo uses."""

    version: int
    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False
    meta_terminal_output: bool = False
    boolean_config: bool = False

    @classmethod
    def from_initialize(cls, params: dict[str, Any]) -> ClientFeatures:
        requested = params.get("protocolVersion")
        version = 2 if isinstance(requested, int) and requested >= 2 else 1
        if version == 2:
            # v2 has no client fs or terminal methods; boolean config options are baseline.
            return cls(version=2, boolean_config=True)
        caps = params.get("clientCapabilities") or {}
        fs = caps.get("fs") or {}
        meta = caps.get("_meta") or {}
        session_caps = caps.get("session") or {}
        config_caps = session_caps.get("configOptions") or {}
        return cls(
            version=1,
            read_text_file=fs.get("readTextFile") is True,
            write_text_file=fs.get("writeTextFile") is True,
            terminal=caps.get("terminal") is True,
            meta_terminal_output=isinstance(meta, dict) and meta.get("terminal_output") is True,
            boolean_config=isinstance(config_caps, dict) and config_caps.get("boolean") is not None,
        )


@dataclass(eq=False)
class Turn:
    number: int
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class DemoSession:
    session_id: str
    cwd: Path
    title: str | None = None
    updated_at: str = field(default_factory=now_iso)
    mode_id: str = "ask"
    pace: str = "normal"
    run_checks: bool = True
    edit_policy: str | None = None  # "allow" / "reject" after an *_always answer
    history: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=HISTORY_LIMIT))
    turns: set[Turn] = field(default_factory=set)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    used_tokens: int = 0
    prompt_count: int = 0
    # v2 tool_call/cancel and terminal/cancel: ("tool_call" | "terminal", id) -> its stopper
    stoppers: dict[tuple[str, str], Stopper] = field(default_factory=dict)


@dataclass(eq=False)
class Stopper:
    """Lets the client stop one running command (v2 `tool_call/cancel`, `terminal/cancel`)."""

    event: asyncio.Event = field(default_factory=asyncio.Event)
    by: str | None = None  # "tool_call" or "terminal", whichever cancelled it


class DemoAgent:
    def __init__(self, peer: Peer, speed: float | None = None) -> None:
        self.peer = peer
        self.speed = env_speed() if speed is None else speed
        self.client = ClientFeatures(version=1)
        self.sessions: dict[str, DemoSession] = {}
        self._session_ids = itertools.count(1)
        self._turn_numbers = itertools.count(1)
        for method, handler in {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "auth/login": self.authenticate,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/resume": self.resume_session,
            "session/list": self.list_sessions,
            "session/close": self.close_session,
            "session/delete": self.delete_session,
            "session/set_mode": self.set_mode,
            "session/set_config_option": self.set_config_option,
            "session/prompt": self.prompt,
            "tool_call/cancel": self.cancel_tool_call,
            "terminal/cancel": self.cancel_terminal,
        }.items():
            peer.on_request(method, handler)
        peer.on_notification("session/cancel", self.cancel)

    @property
    def v2(self) -> bool:
        return self.client.version == 2

    # -- lifecycle ------------------------------------------------------------------------------

    async def initialize(self, params: Any) -> dict[str, Any]:
        self.client = ClientFeatures.from_initialize(params if isinstance(params, dict) else {})
        if self.v2:
            return {
                "protocolVersion": 2,
                "info": AGENT_INFO,
                "capabilities": {"session": {"prompt": {"embeddedContext": {}}, "delete": {}}},
                "authMethods": [],
            }
        return {
            "protocolVersion": 1,
            "agentInfo": AGENT_INFO,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
            },
            "authMethods": [],
        }

    async def authenticate(self, _params: Any) -> dict[str, Any]:
        return {}

    def _session(self, params: Any) -> DemoSession:
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            raise RpcError(
                RESOURCE_NOT_FOUND,
                f"Unknown session {session_id!r}",
                {"sessionId": session_id} if isinstance(session_id, str) else None,
            )
        return session

    @staticmethod
    def _cwd(params: Any) -> Path:
        cwd = params.get("cwd") if isinstance(params, dict) else None
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise RpcError(INVALID_PARAMS, "cwd must be an absolute path")
        path = Path(cwd)
        if not path.is_dir():
            raise RpcError(INVALID_PARAMS, f"cwd {cwd} is not a directory")
        return path

    def _setup_result(self, session: DemoSession, *, with_id: bool) -> dict[str, Any]:
        result: dict[str, Any] = {"sessionId": session.session_id} if with_id else {}
        result["configOptions"] = self._config_options(session)
        if self.v2:
            result["availableCommands"] = self._commands()
        else:
            result["modes"] = {"currentModeId": session.mode_id, "availableModes": MODES}
        return result

    async def new_session(self, params: Any) -> Reply:
        cwd = self._cwd(params)
        session = DemoSession(session_id=f"demo-{os.getpid()}-{next(self._session_ids)}", cwd=cwd)
        self.sessions[session.session_id] = session
        return Reply(
            self._setup_result(session, with_id=True), then=lambda: self._after_setup(session)
        )

    async def _after_setup(self, session: DemoSession) -> None:
        self.peer.send_update(
            session.session_id,
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": self._commands(),
            },
        )

    async def load_session(self, params: Any) -> Reply:
        if self.v2:
            raise RpcError(-32601, "Method not found: session/load (use session/resume)")
        session = self._session(params)
        session.cwd = self._cwd(params)
        for update in list(session.history):
            self.peer.send_update(session.session_id, update)
        return Reply(
            self._setup_result(session, with_id=False), then=lambda: self._after_setup(session)
        )

    async def resume_session(self, params: Any) -> Reply:
        session = self._session(params)
        session.cwd = self._cwd(params)
        replay_from = params.get("replayFrom") if self.v2 else None
        if replay_from is not None:
            if not isinstance(replay_from, dict) or replay_from.get("type") != "start":
                raise RpcError(INVALID_PARAMS, 'replayFrom supports only {"type": "start"}')
            for update in list(session.history):
                self.peer.send_update(session.session_id, update)
        if self.v2:
            busy = bool(session.turns)
            self.peer.send_update(
                session.session_id,
                {"sessionUpdate": "state_update", "state": "running" if busy else "idle"},
            )
        return Reply(
            self._setup_result(session, with_id=False), then=lambda: self._after_setup(session)
        )

    async def list_sessions(self, params: Any) -> dict[str, Any]:
        cwd = params.get("cwd") if isinstance(params, dict) else None
        sessions = []
        for session in self.sessions.values():
            if cwd is not None and str(session.cwd) != cwd:
                continue
            info: dict[str, Any] = {
                "sessionId": session.session_id,
                "cwd": str(session.cwd),
                "updatedAt": session.updated_at,
            }
            if session.title is not None:
                info["title"] = session.title
            sessions.append(info)
        return {"sessions": sessions}

    async def close_session(self, params: Any) -> dict[str, Any]:
        session = self._session(params)
        for turn in session.turns:
            turn.cancelled.set()
        return {}

    async def delete_session(self, params: Any) -> dict[str, Any]:
        session = self._session(params)
        for turn in session.turns:
            turn.cancelled.set()
        del self.sessions[session.session_id]
        return {}

    async def cancel(self, params: Any) -> None:
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is not None:
            for turn in session.turns:
                turn.cancelled.set()

    async def cancel_tool_call(self, params: Any) -> dict[str, Any]:
        return self._stop(params, "tool_call", params.get("toolCallId"))

    async def cancel_terminal(self, params: Any) -> dict[str, Any]:
        return self._stop(params, "terminal", params.get("terminalId"))

    def _stop(self, params: Any, kind: str, item_id: Any) -> dict[str, Any]:
        session = self._session(params)
        stopper = session.stoppers.get((kind, str(item_id)))
        if stopper is None or stopper.event.is_set():
            raise RpcError(
                INVALID_PARAMS, f"{kind} {item_id!r} is unknown, final or not cancellable"
            )
        stopper.by = kind
        stopper.event.set()
        return {}

    # -- modes, config options, commands --------------------------------------------------------

    def _commands(self) -> list[dict[str, Any]]:
        commands = []
        for name, description, hint in COMMANDS:
            command: dict[str, Any] = {"name": name, "description": description}
            if self.v2:
                command["type"] = "command"
                if hint:
                    command["input"] = {"type": "text", "hint": hint}
            elif hint:
                command["input"] = {"hint": hint}
            commands.append(command)
        return commands

    def _config_options(self, session: DemoSession) -> list[dict[str, Any]]:
        key = "configId" if self.v2 else "id"
        options: list[dict[str, Any]] = [
            {
                key: "mode",
                "name": "Mode",
                "category": "mode",
                "type": "select",
                "currentValue": session.mode_id,
                "options": [
                    {"value": m["id"], "name": m["name"], "description": m["description"]}
                    for m in MODES
                ],
            },
            {
                key: "pace",
                "name": "Pace",
                "description": "How fast the demo agent works",
                "type": "select",
                "currentValue": session.pace,
                "options": [{"value": name, "name": name.capitalize()} for name in PACES],
            },
        ]
        if self.client.boolean_config:
            options.append(
                {
                    key: "run_checks",
                    "name": "Run checks",
                    "description": "Run the project's checks after an edit",
                    "type": "boolean",
                    "currentValue": session.run_checks,
                }
            )
        return options

    async def set_mode(self, params: Any) -> dict[str, Any]:
        if self.v2:
            raise RpcError(-32601, "Method not found: session/set_mode (use config options)")
        session = self._session(params)
        self._apply_mode(session, params.get("modeId"))
        self.peer.send_update(
            session.session_id,
            {
                "sessionUpdate": "config_option_update",
                "configOptions": self._config_options(session),
            },
        )
        return {}

    def _apply_mode(self, session: DemoSession, mode_id: Any) -> None:
        if mode_id not in {mode["id"] for mode in MODES}:
            raise RpcError(INVALID_PARAMS, f"Unknown mode {mode_id!r}")
        session.mode_id = mode_id

    async def set_config_option(self, params: Any) -> dict[str, Any]:
        session = self._session(params)
        config_id = params.get("configId")
        value = params.get("value")
        value_type = params.get("type")
        if config_id == "mode" and value_type in (None, "id"):
            self._apply_mode(session, value)
            if not self.v2:
                self.peer.send_update(
                    session.session_id,
                    {"sessionUpdate": "current_mode_update", "currentModeId": session.mode_id},
                )
        elif config_id == "pace" and value_type in (None, "id") and value in PACES:
            session.pace = value
        elif (
            config_id == "run_checks"
            and self.client.boolean_config
            and value_type == "boolean"
            and isinstance(value, bool)
        ):
            session.run_checks = value
        else:
            raise RpcError(INVALID_PARAMS, f"Invalid value {value!r} for option {config_id!r}")
        return {"configOptions": self._config_options(session)}

    # -- prompts ----------------------------------------------------------------------------------

    async def prompt(self, params: Any) -> Any:
        session = self._session(params)
        blocks = params.get("prompt")
        if not isinstance(blocks, list) or not blocks:
            raise RpcError(INVALID_PARAMS, "prompt must be a non-empty array of content blocks")
        turn = Turn(number=next(self._turn_numbers))
        session.turns.add(turn)
        runner = TurnRunner(self, session, turn, blocks)
        if self.v2:
            message_id = f"user-{turn.number}"
            return Reply(
                {"messageId": message_id},
                then=lambda: self._run_turn(session, turn, runner, message_id),
            )
        return {"stopReason": await self._run_turn(session, turn, runner, None)}

    async def _run_turn(
        self, session: DemoSession, turn: Turn, runner: TurnRunner, user_message_id: str | None
    ) -> str:
        try:
            async with session.lock:
                return await runner.run(user_message_id)
        finally:
            session.turns.discard(turn)


class TurnRunner:
    """One prompt turn: the scripted walk through the workspace."""

    def __init__(
        self, agent: DemoAgent, session: DemoSession, turn: Turn, blocks: list[Any]
    ) -> None:
        self.agent = agent
        self.peer = agent.peer
        self.session = session
        self.turn = turn
        self.blocks = blocks
        self.text = prompt_text(blocks)
        self.v2 = agent.v2
        self.client = agent.client
        self._ids = itertools.count(1)
        self.plan_entries: list[dict[str, Any]] = []

    # -- plumbing -------------------------------------------------------------------------------

    def emit(self, update: dict[str, Any]) -> None:
        if update.get("sessionUpdate") != "state_update":
            self.session.history.append(update)
        self.peer.send_update(self.session.session_id, update)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}-{self.turn.number}-{next(self._ids)}"

    def check_cancelled(self) -> None:
        if self.turn.cancelled.is_set():
            raise TurnCancelled

    async def pause(self, seconds: float) -> None:
        self.check_cancelled()
        delay = seconds * self.agent.speed * PACES.get(self.session.pace, 1.0)
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.turn.cancelled.wait(), delay)
        self.check_cancelled()

    async def until_cancelled(self, awaitable: Awaitable[T]) -> T:
        finished, result = await wait_or_cancelled(awaitable, self.turn.cancelled)
        if not finished:
            raise TurnCancelled
        return result

    async def stream(self, kind: str, text: str) -> None:
        """Send `text` as several chunks of one message (`kind` is the sessionUpdate)."""
        message_id = self.next_id("thought" if kind == "agent_thought_chunk" else "msg")
        for piece in split_for_streaming(text):
            update: dict[str, Any] = {
                "sessionUpdate": kind,
                "content": {"type": "text", "text": piece},
            }
            if self.v2:
                update["messageId"] = message_id
            self.emit(update)
            self.session.used_tokens += max(1, len(piece) // 4)
            await self.pause(0.04)

    def set_plan(self, entries: list[tuple[str, str, str]]) -> None:
        self.plan_entries = [
            {"content": content, "priority": priority, "status": status}
            for content, priority, status in entries
        ]
        self._send_plan()

    def mark_plan(self, index: int, status: str) -> None:
        if 0 <= index < len(self.plan_entries):
            self.plan_entries[index]["status"] = status
            self._send_plan()

    def _send_plan(self) -> None:
        entries = [dict(entry) for entry in self.plan_entries]
        if self.v2:
            self.emit(
                {
                    "sessionUpdate": "plan_update",
                    "plan": {
                        "type": "items",
                        "planId": f"plan-{self.turn.number}",
                        "entries": entries,
                    },
                }
            )
        else:
            self.emit({"sessionUpdate": "plan", "entries": entries})

    def start_tool(self, tool_call_id: str, **fields: Any) -> None:
        kind = "tool_call_update" if self.v2 else "tool_call"
        self.emit({"sessionUpdate": kind, "toolCallId": tool_call_id, **fields})

    def update_tool(self, tool_call_id: str, **fields: Any) -> None:
        self.emit({"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields})

    def usage(self) -> None:
        used = min(self.session.used_tokens, CONTEXT_WINDOW)
        self.emit(
            {
                "sessionUpdate": "usage_update",
                "used": used,
                "size": CONTEXT_WINDOW,
                "cost": {"amount": round(used * 3e-6, 6), "currency": "USD"},
            }
        )

    def state(self, state: str, **extra: Any) -> None:
        if self.v2:
            self.emit({"sessionUpdate": "state_update", "state": state, **extra})

    @property
    def cancelled_status(self) -> str:
        return "cancelled" if self.v2 else "failed"

    # -- the turn -------------------------------------------------------------------------------

    async def run(self, user_message_id: str | None) -> str:
        session = self.session
        session.prompt_count += 1
        session.updated_at = now_iso()
        self._record_user_message(user_message_id)
        self.state("running")
        try:
            if session.title is None:
                session.title = title_from(self.text)
                self.emit(
                    {
                        "sessionUpdate": "session_info_update",
                        "title": session.title,
                        "updatedAt": session.updated_at,
                    }
                )
            command = self.text.strip().split(maxsplit=1)[0] if self.text.strip() else ""
            if command == "/test":
                await self.test_only()
            elif command == "/explain":
                await self.explain()
            else:
                await self.full_walk()
            self.usage()
            stop_reason = "end_turn"
        except TurnCancelled:
            stop_reason = "cancelled"
            for index, entry in enumerate(self.plan_entries):
                if entry["status"] != "completed" and self.v2:
                    self.plan_entries[index]["status"] = "cancelled"
            if self.v2 and self.plan_entries:
                self._send_plan()
        except Exception as error:
            if not self.v2:
                raise
            self.state(
                "idle",
                stopReason="error",
                error={"code": -32603, "message": f"{type(error).__name__}: {error}"},
            )
            return "error"
        self.state("idle", stopReason=stop_reason)
        return stop_reason

    def _record_user_message(self, user_message_id: str | None) -> None:
        if self.v2:
            # v2 agents echo the inserted user message during the live session.
            self.emit(
                {
                    "sessionUpdate": "user_message",
                    "messageId": user_message_id,
                    "content": self.blocks,
                }
            )
        else:
            # v1 agents do not echo; the chunks are kept only for session/load replay.
            for block in self.blocks:
                self.session.history.append(
                    {"sessionUpdate": "user_message_chunk", "content": block}
                )

    async def full_walk(self) -> None:
        root = self.session.cwd
        sample = scan.is_sample_project(root)
        files = scan.find_python_files(root)
        targets = [root / "calc.py", root / "test_calc.py"] if sample else files[:3]
        targets = with_context_first(context_files(self.blocks), targets)
        await self.stream("agent_thought_chunk", thought_text(self.text, root, targets))
        self.set_plan(
            [
                ("Read the code", "high", "in_progress"),
                ("Propose a change", "high", "pending"),
                ("Run the checks", "medium", "pending"),
                ("Look up documentation", "low", "pending"),
            ]
        )
        await self.pause(0.1)
        await self.stream("agent_message_chunk", "Let me look at the project first.\n\n")
        contents = {}
        for path in targets:
            text = await self.read_file(path)
            if text is not None:
                contents[path] = text
        self.mark_plan(0, "completed")
        self.mark_plan(1, "in_progress")
        self.usage()

        edit = (
            scan.fix_subtract(root / "calc.py", contents.get(root / "calc.py", ""))
            if sample
            else None
        )
        if edit is None:
            notes_path = root / scan.NOTES_FILE
            current = await self.read_quietly(notes_path)
            edit = scan.notes_edit(root, current, list(contents))
        await self.stream("agent_message_chunk", edit.explanation + "\n\n")
        outcome = await self.propose_edit(edit)
        self.mark_plan(1, "completed")

        checks_ok: bool | None = None
        if self.session.run_checks:
            self.mark_plan(2, "in_progress")
            tests = [root / "test_calc.py"] if sample else []
            checks_ok = await self.run_checks(tests, [p for p in files if p not in tests])
        self.mark_plan(2, "completed")

        self.mark_plan(3, "in_progress")
        await self.failing_fetch()
        self.mark_plan(3, "completed")
        await self.stream("agent_message_chunk", summary_text(edit, outcome, checks_ok))

    async def test_only(self) -> None:
        root = self.session.cwd
        await self.stream("agent_thought_chunk", "The user wants the checks run. Nothing else.")
        self.set_plan([("Run the checks", "high", "in_progress")])
        sample = scan.is_sample_project(root)
        tests = [root / "test_calc.py"] if sample else []
        files = [p for p in scan.find_python_files(root) if p not in tests]
        ok = await self.run_checks(tests, files)
        self.mark_plan(0, "completed")
        await self.stream(
            "agent_message_chunk",
            "All checks passed." if ok else "Some checks failed; see the terminal.",
        )

    async def explain(self) -> None:
        root = self.session.cwd
        files = with_context_first(context_files(self.blocks), scan.find_python_files(root)[:3])
        await self.stream("agent_thought_chunk", thought_text(self.text, root, files))
        self.set_plan(
            [("Read the code", "high", "in_progress"), ("Explain it", "medium", "pending")]
        )
        functions: list[str] = []
        for path in files:
            text = await self.read_file(path)
            if text:
                functions += [
                    line.split("(")[0][4:] for line in text.splitlines() if line.startswith("def ")
                ]
        self.mark_plan(0, "completed")
        self.mark_plan(1, "in_progress")
        names = ", ".join(f"`{name}`" for name in functions[:12]) or "no top-level functions"
        await self.stream(
            "agent_message_chunk",
            f"This project has {len(files)} Python file(s) I looked at, defining {names}.",
        )
        self.mark_plan(1, "completed")

    # -- tools --------------------------------------------------------------------------------

    async def read_file(self, path: Path) -> str | None:
        call_id = self.next_id("read")
        name = self.display(path)
        self.start_tool(
            call_id,
            title=f"Read {name}",
            kind="read",
            status="in_progress",
            locations=[{"path": str(path), "line": 1}],
            rawInput={"path": str(path)},
        )
        await self.pause(0.12)
        try:
            text = await self.read_text(path)
        except (OSError, RpcError) as error:
            self.update_tool(
                call_id, status="failed", content=[text_content(f"Could not read {name}: {error}")]
            )
            return None
        line = interesting_line(path, text)
        self.update_tool(call_id, locations=[{"path": str(path), "line": line}])
        await self.pause(0.1)
        lines = text.splitlines()
        preview = "\n".join(lines[max(0, line - 3) : line + 3])
        self.update_tool(
            call_id,
            status="completed",
            content=[text_content(f"{name}: {len(lines)} lines\n```python\n{preview}\n```")],
        )
        self.session.used_tokens += len(text) // 4
        return text

    async def read_text(self, path: Path) -> str:
        if self.client.read_text_file:
            result = await self.until_cancelled(
                self.peer.request(
                    "fs/read_text_file", {"sessionId": self.session.session_id, "path": str(path)}
                )
            )
            content = result.get("content") if isinstance(result, dict) else None
            if not isinstance(content, str):
                raise RpcError(-32603, "fs/read_text_file returned no content")
            return content
        return await asyncio.to_thread(path.read_text, encoding="utf-8", errors="replace")

    async def read_quietly(self, path: Path) -> str | None:
        """Current text of a file the agent owns (its notes), or None when it does not exist."""
        if not await asyncio.to_thread(path.is_file):
            return None
        try:
            return await self.read_text(path)
        except (OSError, RpcError):
            return None

    async def write_text(self, path: Path, text: str) -> None:
        if self.client.write_text_file:
            await self.until_cancelled(
                self.peer.request(
                    "fs/write_text_file",
                    {"sessionId": self.session.session_id, "path": str(path), "content": text},
                )
            )
        else:
            await asyncio.to_thread(path.write_text, text, encoding="utf-8")

    def diff_content(self, edit: scan.ProposedEdit) -> dict[str, Any]:
        if not self.v2:
            return {
                "type": "diff",
                "path": str(edit.path),
                "oldText": edit.old_text,
                "newText": edit.new_text,
            }
        operation = "add" if edit.old_text is None else "modify"
        mime = "text/x-python" if edit.path.suffix == ".py" else "text/markdown"
        return {
            "type": "diff",
            "changes": [
                {
                    "operation": operation,
                    "path": str(edit.path),
                    "fileType": "text",
                    "mimeType": mime,
                }
            ],
            "patch": {
                "format": "git_patch",
                "text": scan.git_patch(edit.path, edit.old_text, edit.new_text),
            },
        }

    async def propose_edit(self, edit: scan.ProposedEdit) -> str:
        """Show the edit, ask, and apply it: "applied", "rejected" or "failed"."""
        call_id = self.next_id("edit")
        location = [{"path": str(edit.path), "line": edit.line}]
        tool_call = {
            "toolCallId": call_id,
            "title": edit.title,
            "kind": "edit",
            "status": "pending",
            "locations": location,
            "content": [self.diff_content(edit)],
            "rawInput": {"path": str(edit.path)},
        }
        self.start_tool(call_id, **{k: v for k, v in tool_call.items() if k != "toolCallId"})
        await self.pause(0.15)
        decision = await self.decide_edit(tool_call, edit)
        if decision != "allow":
            self.update_tool(
                call_id,
                status=self.cancelled_status,
                content=[self.diff_content(edit), text_content("The user rejected this edit.")],
            )
            await self.stream(
                "agent_message_chunk", f"OK, I left {self.display(edit.path)} unchanged.\n\n"
            )
            return "rejected"
        self.update_tool(call_id, status="in_progress")
        try:
            await self.write_text(edit.path, edit.new_text)
        except (OSError, RpcError) as error:
            self.update_tool(
                call_id,
                status="failed",
                content=[
                    self.diff_content(edit),
                    text_content(f"Could not write the file: {error}"),
                ],
            )
            return "failed"
        self.update_tool(call_id, status="completed", locations=location)
        await self.pause(0.1)
        return "applied"

    async def decide_edit(self, tool_call: dict[str, Any], edit: scan.ProposedEdit) -> str:
        """'allow' or 'reject', asking the client unless the mode or an earlier answer decides."""
        if self.session.mode_id == "code":
            return "allow"
        if self.session.edit_policy is not None:
            return self.session.edit_policy
        params: dict[str, Any] = {
            "sessionId": self.session.session_id,
            "options": PERMISSION_OPTIONS,
        }
        if self.v2:
            params["title"] = f"{edit.title}?"
            params["description"] = edit.explanation
            params["subject"] = {"type": "tool_call", "toolCall": tool_call}
            self.state("requires_action")
        else:
            params["toolCall"] = tool_call
        response = await self.until_cancelled(
            self.peer.request("session/request_permission", params)
        )
        self.state("running")
        outcome = response.get("outcome") if isinstance(response, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            raise TurnCancelled
        kinds = {option["optionId"]: option["kind"] for option in PERMISSION_OPTIONS}
        kind = kinds.get(str(outcome.get("optionId")), "reject_once")
        decision = "allow" if kind.startswith("allow") else "reject"
        if kind.endswith("always"):
            self.session.edit_policy = decision
        return decision

    async def run_checks(self, tests: list[Path], files: list[Path]) -> bool:
        root = self.session.cwd
        argv = [sys.executable, str(CHECKS_SCRIPT)]
        if tests:
            argv += ["--tests", *(str(p.relative_to(root)) for p in tests)]
        if files:
            argv += ["--compile", *(str(p.relative_to(root)) for p in files)]
        call_id = self.next_id("run")
        command = shlex.join(argv)
        extra: dict[str, Any] = {"capabilities": {"cancel": {}}} if self.v2 else {}
        self.start_tool(
            call_id,
            title="Run the checks",
            kind="execute",
            status="in_progress",
            rawInput={"command": command, "cwd": str(root)},
            **extra,
        )
        try:
            if not self.v2 and self.client.terminal:
                exit_code = await self.run_in_client_terminal(call_id, argv)
            else:
                exit_code = await self.run_own_process(call_id, argv, command)
        except (OSError, RpcError) as error:
            self.update_tool(
                call_id, status="failed", content=[text_content(f"Could not run it: {error}")]
            )
            return False
        return exit_code == 0

    def child_env(self) -> dict[str, str]:
        speed = self.agent.speed * PACES.get(self.session.pace, 1.0)
        return {"ACPLS_DEMO_SPEED": str(speed), "PYTHONDONTWRITEBYTECODE": "1"}

    async def run_in_client_terminal(self, call_id: str, argv: list[str]) -> int | None:
        """v1: the client runs the command (`terminal/*`) and shows it; we embed its id."""
        session_id = self.session.session_id
        created = await self.until_cancelled(
            self.peer.request(
                "terminal/create",
                {
                    "sessionId": session_id,
                    "command": argv[0],
                    "args": argv[1:],
                    "env": [{"name": k, "value": v} for k, v in self.child_env().items()],
                    "cwd": str(self.session.cwd),
                    "outputByteLimit": 1_000_000,
                },
            )
        )
        terminal_id = created["terminalId"]
        terminal = {"type": "terminal", "terminalId": terminal_id}
        self.update_tool(call_id, content=[terminal])
        try:
            exit_status = await self.until_cancelled(
                self.peer.request(
                    "terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id}
                )
            )
            output = await self.peer.request(
                "terminal/output", {"sessionId": session_id, "terminalId": terminal_id}
            )
        except TurnCancelled:
            await self.peer.request(
                "terminal/kill", {"sessionId": session_id, "terminalId": terminal_id}
            )
            self.update_tool(call_id, status="failed", content=[terminal])
            raise
        finally:
            await self.peer.request(
                "terminal/release", {"sessionId": session_id, "terminalId": terminal_id}
            )
        exit_code = exit_status.get("exitCode") if isinstance(exit_status, dict) else None
        self.update_tool(
            call_id,
            status="completed" if exit_code == 0 else "failed",
            content=[terminal],
            rawOutput={"exitCode": exit_code, "truncated": bool(output.get("truncated"))},
        )
        return exit_code

    async def run_own_process(self, call_id: str, argv: list[str], command: str) -> int | None:
        """The agent runs the command itself and streams its output to the client.

        v2: an agent-owned terminal (`terminal_update` + `terminal_output_chunk`) that the client
        may stop with `terminal/cancel` or `tool_call/cancel`; v1 with the `_meta.terminal_output`
        extension: `terminal_info` / `terminal_output` / `terminal_exit` on the tool call's
        `_meta`; plain v1: the output as text content at the end.
        """
        terminal_id = f"term-{call_id}"
        cwd = str(self.session.cwd)
        meta_terminal = not self.v2 and self.client.meta_terminal_output
        stopper = Stopper()
        if self.v2:
            self.session.stoppers[("tool_call", call_id)] = stopper
            self.session.stoppers[("terminal", terminal_id)] = stopper
            self.update_tool(call_id, content=[{"type": "terminal", "terminalId": terminal_id}])
            self.emit(
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": terminal_id,
                    "command": command,
                    "cwd": cwd,
                    "capabilities": {"cancel": {}},
                }
            )
        elif meta_terminal:
            self.update_tool(
                call_id,
                content=[{"type": "terminal", "terminalId": terminal_id}],
                _meta={"terminal_info": {"terminal_id": terminal_id, "cwd": cwd}},
            )
        try:
            return await self._stream_process(
                call_id, terminal_id, argv, cwd, meta_terminal, stopper
            )
        finally:
            self.session.stoppers.pop(("tool_call", call_id), None)
            self.session.stoppers.pop(("terminal", terminal_id), None)

    async def _stream_process(
        self,
        call_id: str,
        terminal_id: str,
        argv: list[str],
        cwd: str,
        meta_terminal: bool,
        stopper: Stopper,
    ) -> int | None:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **self.child_env()},
        )
        assert process.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        collected: list[str] = []
        try:
            while True:
                finished, chunk = await wait_or_cancelled(
                    process.stdout.read(4096), self.turn.cancelled, stopper.event
                )
                self.check_cancelled()
                if not finished:  # the client cancelled this command (v2)
                    with contextlib.suppress(ProcessLookupError):
                        process.terminate()
                    break
                if not chunk:
                    break
                for piece in split_inside_character(chunk):
                    self.send_output(call_id, terminal_id, piece, decoder, collected, meta_terminal)
                    await self.pause(0.03)
            returncode = await process.wait()
        except TurnCancelled:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            returncode = await process.wait()
            self.finish_own_terminal(
                call_id,
                terminal_id,
                returncode,
                collected,
                meta_terminal,
                status=self.cancelled_status,
            )
            raise
        finally:
            # The connection went away mid-command: do not leave the command running.
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
        if stopper.by == "tool_call":
            status = "cancelled"
        else:
            status = "completed" if returncode == 0 else "failed"
        self.finish_own_terminal(
            call_id, terminal_id, returncode, collected, meta_terminal, status=status
        )
        return returncode

    def send_output(
        self,
        call_id: str,
        terminal_id: str,
        data: bytes,
        decoder: codecs.IncrementalDecoder,
        collected: list[str],
        meta_terminal: bool,
    ) -> None:
        if self.v2:
            self.emit(
                {
                    "sessionUpdate": "terminal_output_chunk",
                    "terminalId": terminal_id,
                    "data": base64.b64encode(data).decode("ascii"),
                }
            )
            return
        text = decoder.decode(data)
        collected.append(text)
        if meta_terminal and text:
            self.update_tool(
                call_id, _meta={"terminal_output": {"terminal_id": terminal_id, "data": text}}
            )

    def finish_own_terminal(
        self,
        call_id: str,
        terminal_id: str,
        returncode: int,
        collected: list[str],
        meta_terminal: bool,
        *,
        status: str,
    ) -> None:
        exit_code, signal = exit_status(returncode)
        if self.v2:
            self.emit(
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": terminal_id,
                    "exitStatus": {"exitCode": exit_code, "signal": signal},
                    "capabilities": None,
                }
            )
            self.update_tool(
                call_id, status=status, rawOutput={"exitCode": exit_code}, capabilities=None
            )
        elif meta_terminal:
            self.update_tool(
                call_id,
                status=status,
                rawOutput={"exitCode": exit_code},
                _meta={
                    "terminal_exit": {
                        "terminal_id": terminal_id,
                        "exit_code": exit_code,
                        "signal": signal,
                    }
                },
            )
        else:
            output = ANSI_SGR.sub("", "".join(collected))
            self.update_tool(
                call_id,
                status=status,
                rawOutput={"exitCode": exit_code},
                content=[text_content(f"```\n{output}```\nexit code {exit_code}")],
            )

    async def failing_fetch(self) -> None:
        call_id = self.next_id("fetch")
        url = "https://docs.python.org/3/library/exceptions.html"
        self.start_tool(
            call_id,
            title="Fetch the Python exceptions docs",
            kind="fetch",
            status="in_progress",
            rawInput={"url": url},
        )
        await self.pause(0.15)
        self.update_tool(
            call_id,
            status="failed",
            content=[
                text_content("Network access is disabled in the demo agent: cannot fetch " + url)
            ],
        )

    def display(self, path: Path) -> str:
        try:
            return path.relative_to(self.session.cwd).as_posix()
        except ValueError:
            return str(path)


# -- text helpers ----------------------------------------------------------------------------


def text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def prompt_text(blocks: list[Any]) -> str:
    parts = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "resource_link":
            parts.append(f"[{block.get('name', block.get('uri', ''))}]")
        elif block.get("type") == "resource":
            resource = block.get("resource") or {}
            parts.append(f"[{resource.get('uri', 'resource')}]")
    return " ".join(part for part in parts if part)


def context_files(blocks: list[Any]) -> list[Path]:
    """Local files the prompt points at (`resource_link` or embedded `resource` with a file URI)."""
    paths: list[Path] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "resource_link":
            uri = block.get("uri")
        elif block.get("type") == "resource" and isinstance(block.get("resource"), dict):
            uri = block["resource"].get("uri")
        else:
            continue
        if isinstance(uri, str) and uri.startswith("file://"):
            path = Path(url2pathname(urlparse(uri).path))
            if path.is_absolute() and path.is_file() and path not in paths:
                paths.append(path)
    return paths


def with_context_first(context: list[Path], targets: list[Path]) -> list[Path]:
    return context + [path for path in targets if path not in context]


def title_from(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "Demo session"
    return line if len(line) <= 60 else line[:57] + "..."


def thought_text(prompt: str, root: Path, targets: list[Path]) -> str:
    names = ", ".join(path.name for path in targets) or "no Python files"
    asked = f'The user asked: "{title_from(prompt)}". ' if prompt.strip() else ""
    return (
        f"{asked}I am in {root}. I should read {names} before changing anything, "
        "then propose one small edit, ask before writing it, and run the checks."
    )


def summary_text(edit: scan.ProposedEdit, outcome: str, checks_ok: bool | None) -> str:
    done = {
        "applied": f"I applied the edit to {edit.path.name}",
        "rejected": f"You rejected the edit to {edit.path.name}",
    }.get(outcome, f"I could not write {edit.path.name}")
    checks = {
        None: "I did not run the checks",
        True: "the checks pass",
        False: "some checks still fail",
    }[checks_ok]
    return f"{done}, and {checks}. I could not fetch the documentation (no network in the demo)."


def interesting_line(path: Path, text: str) -> int:
    """The line a reader would look at first: the sample's bug, a test, or the first def."""
    if path.name == "calc.py":
        bug = scan.find_subtract_bug(text)
        if bug is not None:
            return bug
    if path.name == "test_calc.py":
        line = scan.first_line_matching(text, "def test_subtract")
        if line is not None:
            return line
    return scan.first_line_matching(text, "def ") or 1


def split_for_streaming(text: str, pieces: int = 4) -> list[str]:
    """Split at word boundaries into about `pieces` chunks (joined, they give `text` back)."""
    words = re.findall(r"\S+\s*|\s+", text)
    if len(words) <= 1:
        return [text] if text else []
    size = max(1, -(-len(words) // pieces))
    return ["".join(words[i : i + size]) for i in range(0, len(words), size)]


def exit_status(returncode: int) -> tuple[int | None, str | None]:
    """(exitCode, signal) for a subprocess return code (negative: killed by that signal)."""
    if returncode >= 0:
        return returncode, None
    try:
        return None, signal.Signals(-returncode).name
    except ValueError:
        return None, f"SIG{-returncode}"


def split_inside_character(data: bytes) -> list[bytes]:
    """Split after the first byte of the first multi-byte UTF-8 character, if any.

    The demo wants clients to see a character cut across two chunks, as real terminals produce.
    """
    for index, byte in enumerate(data):
        if byte >= 0xC0:
            return [data[: index + 1], data[index + 1 :]]
    return [data]
