"""A tiny ACP client for tests: starts an agent process and talks to it over ndjson stdio.

It answers the agent's requests minimally but for real (permission by option kind, files on disk,
terminals as subprocesses), records every message the agent sends, and, given a version, validates
each one against the official schema (errors are collected in `schema_errors`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.agents.acp_schema import AcpSchemaError, AcpValidator

Handler = Callable[[Any], Awaitable[Any]]


class AgentError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('message')} ({error.get('code')})")
        self.code = error.get("code")
        self.error = error


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None


class MiniClient:
    def __init__(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str] | None = None,
        version: int | None = None,
        permission_kind: str | None = "allow_once",
    ) -> None:
        self.argv = argv
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        self.validator = AcpValidator(version) if version else None
        self.permission_kind = permission_kind  # None: leave permission requests unanswered
        self.received: list[dict[str, Any]] = []
        self.schema_errors: list[str] = []
        self.requests_from_agent: list[dict[str, Any]] = []
        self.handlers: dict[str, Handler] = {
            "session/request_permission": self._permission,
            "fs/read_text_file": self._read_text_file,
            "fs/write_text_file": self._write_text_file,
            "terminal/create": self._terminal_create,
            "terminal/output": self._terminal_output,
            "terminal/wait_for_exit": self._terminal_wait,
            "terminal/kill": self._terminal_kill,
            "terminal/release": self._terminal_release,
        }
        self.pending_permissions: dict[Any, asyncio.Future[Any]] = {}
        self._process: asyncio.subprocess.Process | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._sent_methods: dict[int, str] = {}
        self._terminals: dict[str, _Terminal] = {}
        self._terminal_ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Condition()
        self.stderr = b""

    # -- process ------------------------------------------------------------------------------

    async def start(self) -> MiniClient:
        self._process = await asyncio.create_subprocess_exec(
            *self.argv,
            cwd=self.cwd,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=64 << 20,
        )
        self._reader = asyncio.create_task(self._read_loop())
        return self

    async def close(self, seconds: float = 10) -> int | None:
        """Close the agent's stdin and wait for it to exit (killed after `seconds`)."""
        process = self._process
        if process is None:
            return None
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), seconds)
        except TimeoutError:
            process.kill()
            await process.wait()
        if process.stderr is not None:
            self.stderr = await process.stderr.read()
        for task in [*self._tasks, *([self._reader] if self._reader else [])]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for terminal in self._terminals.values():
            with contextlib.suppress(ProcessLookupError):
                terminal.process.kill()
            await terminal.process.wait()
        return process.returncode

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process else None

    # -- sending ------------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        assert self._process is not None and self._process.stdin is not None
        if self.validator is not None:
            self._validate(message, "client")
        self._process.stdin.write((json.dumps(message) + "\n").encode())

    def send_raw(self, line: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(line.encode() + b"\n")

    async def request(self, method: str, params: Any = None, seconds: float = 30) -> Any:
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (method, future)
        self._sent_methods[request_id] = method
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        try:
            return await asyncio.wait_for(future, seconds)
        finally:
            self._pending.pop(request_id, None)

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # -- receiving ----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        while line := await self._process.stdout.readline():
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.schema_errors.append(f"unparsable line from the agent: {line[:200]!r}")
                continue
            self.received.append(message)
            self._dispatch(message)
            async with self._changed:
                self._changed.notify_all()
        for _method, future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the agent closed its stdout"))
        async with self._changed:
            self._changed.notify_all()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            entry = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            method = self._sent_methods.get(message.get("id"))  # type: ignore[arg-type]
            if self.validator is not None:
                self._validate(message, "agent", method)
            if entry is not None and not entry[1].done():
                if "error" in message:
                    entry[1].set_exception(AgentError(message["error"]))
                else:
                    entry[1].set_result(message.get("result"))
            return
        if self.validator is not None:
            self._validate(message, "agent")
        if "id" in message:
            self.requests_from_agent.append(message)
            task = asyncio.create_task(self._answer(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _validate(self, message: dict[str, Any], sender: str, method: str | None = None) -> None:
        assert self.validator is not None
        try:
            self.validator.validate(message, sender, method)
        except AcpSchemaError as error:
            self.schema_errors.append(f"{sender}: {error}")

    async def _answer(self, message: dict[str, Any]) -> None:
        handler = self.handlers.get(message["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            if handler is None:
                raise AgentError({"code": -32601, "message": f"no handler {message['method']}"})
            reply["result"] = await handler(message.get("params"))
        except AgentError as error:
            reply["error"] = error.error
        except OSError as error:
            reply["error"] = {"code": -32002, "message": str(error)}
        if self._process is not None and self._process.returncode is None:
            self.send_response(reply, message["method"])

    def send_response(self, reply: dict[str, Any], method: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        if self.validator is not None:
            self._validate(reply, "client", method)
        with contextlib.suppress(ConnectionError):
            self._process.stdin.write((json.dumps(reply) + "\n").encode())

    async def wait_for(self, predicate: Callable[[], Any], seconds: float = 30) -> Any:
        """Wait until `predicate()` is truthy (re-checked on every message); return its value."""

        async def loop() -> Any:
            async with self._changed:
                while not (value := predicate()):
                    if self._reader is not None and self._reader.done():
                        raise EOFError("the agent closed its stdout")
                    await self._changed.wait()
                return value

        return await asyncio.wait_for(loop(), seconds)

    # -- views --------------------------------------------------------------------------------

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.received
            if m.get("method") == "session/update"
            and (session_id is None or m["params"].get("sessionId") == session_id)
        ]

    def updates_of(self, kind: str, session_id: str | None = None) -> list[dict[str, Any]]:
        return [u for u in self.updates(session_id) if u.get("sessionUpdate") == kind]

    # -- protocol helpers -------------------------------------------------------------------

    async def initialize(self, version: int, **capabilities: Any) -> dict[str, Any]:
        if version >= 2:
            params = {
                "protocolVersion": version,
                "info": {"name": "mini", "version": "0"},
                "capabilities": capabilities,
            }
        else:
            params = {
                "protocolVersion": version,
                "clientInfo": {"name": "mini", "version": "0"},
                "clientCapabilities": capabilities,
            }
        return await self.request("initialize", params)

    async def new_session(self, cwd: Path | None = None) -> str:
        result = await self.request("session/new", {"cwd": str(cwd or self.cwd), "mcpServers": []})
        return result["sessionId"]

    async def prompt(self, session_id: str, text: str, version: int, seconds: float = 60) -> str:
        """Run one turn; returns its stop reason (v2: from the idle `state_update`)."""
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        if version < 2:
            result = await self.request("session/prompt", params, seconds)
            return result["stopReason"]
        seen = len(self.received)
        await self.request("session/prompt", params, seconds)

        def idle() -> str | None:
            for message in self.received[seen:]:
                if message.get("method") != "session/update":
                    continue
                update = message["params"]["update"]
                if (
                    message["params"].get("sessionId") == session_id
                    and update.get("sessionUpdate") == "state_update"
                    and update.get("state") == "idle"
                ):
                    return update.get("stopReason") or "none"
            return None

        return await self.wait_for(idle, seconds)

    # -- default answers to agent requests ------------------------------------------------

    async def _permission(self, params: Any) -> Any:
        if self.permission_kind is None:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.pending_permissions[id(future)] = future
            return await future
        for option in params["options"]:
            if option["kind"] == self.permission_kind:
                return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        return {"outcome": {"outcome": "cancelled"}}

    def answer_pending_permissions(self, result: dict[str, Any]) -> None:
        for future in self.pending_permissions.values():
            if not future.done():
                future.set_result(result)
        self.pending_permissions.clear()

    async def _read_text_file(self, params: Any) -> Any:
        text = await asyncio.to_thread(Path(params["path"]).read_text, encoding="utf-8")
        line, limit = params.get("line"), params.get("limit")
        if line or limit:
            lines = text.splitlines(keepends=True)
            start = max(0, (line or 1) - 1)
            text = "".join(lines[start : start + limit] if limit else lines[start:])
        return {"content": text}

    async def _write_text_file(self, params: Any) -> Any:
        await asyncio.to_thread(Path(params["path"]).write_text, params["content"], "utf-8")
        return {}

    async def _terminal_create(self, params: Any) -> Any:
        env = {**os.environ, **{item["name"]: item["value"] for item in params.get("env", [])}}
        process = await asyncio.create_subprocess_exec(
            params["command"],
            *params.get("args", []),
            cwd=params.get("cwd") or self.cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{next(self._terminal_ids)}"
        terminal = _Terminal(process)
        terminal.reader = asyncio.create_task(self._pump(terminal))
        self._terminals[terminal_id] = terminal
        return {"terminalId": terminal_id}

    @staticmethod
    async def _pump(terminal: _Terminal) -> None:
        assert terminal.process.stdout is not None
        while chunk := await terminal.process.stdout.read(4096):
            terminal.output.extend(chunk)

    def _terminal(self, params: Any) -> _Terminal:
        terminal = self._terminals.get(params["terminalId"])
        if terminal is None:
            raise AgentError({"code": -32002, "message": "unknown terminal"})
        return terminal

    @staticmethod
    def _exit_status(process: asyncio.subprocess.Process) -> dict[str, Any]:
        code = process.returncode
        if code is not None and code < 0:
            return {"exitCode": None, "signal": f"SIG{-code}"}
        return {"exitCode": code, "signal": None}

    async def _terminal_wait(self, params: Any) -> Any:
        terminal = self._terminal(params)
        await terminal.process.wait()
        if terminal.reader is not None:
            await terminal.reader
        return self._exit_status(terminal.process)

    async def _terminal_output(self, params: Any) -> Any:
        terminal = self._terminal(params)
        result: dict[str, Any] = {
            "output": terminal.output.decode("utf-8", "replace"),
            "truncated": False,
        }
        if terminal.process.returncode is not None:
            result["exitStatus"] = self._exit_status(terminal.process)
        return result

    async def _terminal_kill(self, params: Any) -> Any:
        with contextlib.suppress(ProcessLookupError):
            self._terminal(params).process.kill()
        return {}

    async def _terminal_release(self, params: Any) -> Any:
        terminal = self._terminals.pop(params["terminalId"], None)
        if terminal is not None:
            with contextlib.suppress(ProcessLookupError):
                terminal.process.kill()
            await terminal.process.wait()
            if terminal.reader is not None:
                await terminal.reader
        return {}
