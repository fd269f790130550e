"""A minimal, fast LSP editor for benchmarks: it starts a server process and talks to it on stdio.

pytest-lsp's client handles about 5.5k messages a second, far below what acpls relays, so the
benchmarks use this instead: one reader thread splits the server's stdout into messages
(`Content-Length` framing, orjson), hands notifications to per-method callbacks and resolves
responses; server→editor requests are answered with `null`. Everything the benchmarks measure is
what arrives here, timed with `time.monotonic_ns()` (CLOCK_MONOTONIC, the clock the load agent
stamps its follow locations with).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import orjson

READ_BYTES = 1 << 20
Handler = Callable[[Any], None]


class ServerGone(Exception):
    pass


class Editor:
    def __init__(self, argv: list[str], *, env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.spawned_at = time.monotonic_ns()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            bufsize=0,
        )
        self.handlers: dict[str, Handler] = {}
        # Called with the method of every message the server sends that has one (notifications
        # and requests alike), before its handler.
        self.on_any: Callable[[str], None] | None = None
        self.messages = 0
        self.bytes_in = 0
        self._next_id = 0
        self._pending: dict[int, Future[Any]] = {}
        self._write_lock = threading.Lock()
        # Cleared while the editor reads nothing (bench/stalled_editor.py: a minimised editor).
        self._reading = threading.Event()
        self._reading.set()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def pause_reading(self) -> None:
        """Read nothing more from the server (after the read under way) until resumed."""
        self._reading.clear()

    def resume_reading(self) -> None:
        self._reading.set()

    # -- sending -----------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        body = orjson.dumps(message)
        frame = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        assert self.proc.stdin is not None
        with self._write_lock:
            self.proc.stdin.write(frame)

    def request_async(self, method: str, params: Any = None) -> Future[Any]:
        with self._write_lock:
            self._next_id += 1
            msg_id = self._next_id
        future: Future[Any] = Future()
        self._pending[msg_id] = future
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return future

    def request(self, method: str, params: Any = None, timeout: float = 300) -> Any:
        return self.request_async(method, params).result(timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def command(self, name: str, arg: dict[str, Any], timeout: float = 300) -> Any:
        return self.request(
            "workspace/executeCommand", {"command": name, "arguments": [arg]}, timeout
        )

    def command_async(self, name: str, arg: dict[str, Any]) -> Future[Any]:
        return self.request_async("workspace/executeCommand", {"command": name, "arguments": [arg]})

    # -- the session -------------------------------------------------------------------------
    def initialize(
        self,
        root: str,
        options: dict[str, Any],
        custom: bool = True,
        features: dict[str, bool] | None = None,
    ) -> Any:
        """`features`: what the editor declares besides version 1 (protocol.md section 2)."""
        capabilities: dict[str, Any] = {
            "window": {"showDocument": {"support": True}},
            "workspace": {"workspaceEdit": {"documentChanges": True}},
        }
        if custom:
            capabilities["experimental"] = {"acpls": {"version": 1, **(features or {})}}
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": "file://" + root,
                "workspaceFolders": [{"uri": "file://" + root, "name": "ws"}],
                "capabilities": capabilities,
                "initializationOptions": options,
            },
            timeout=60,
        )
        self.notify("initialized", {})
        return result

    def close(self, timeout: float = 10) -> None:
        try:
            self.request("shutdown", None, timeout=timeout)
            self.notify("exit", None)
        except Exception:
            pass
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    # -- reading -----------------------------------------------------------------------------
    def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buffer = bytearray()
        need = -1  # body length of the message being read, -1 while reading its header
        start = 0
        try:
            while True:
                self._reading.wait()
                data = os.read(fd, READ_BYTES)
                if not data:
                    break
                self.bytes_in += len(data)
                buffer += data
                while True:
                    if need < 0:
                        end = buffer.find(b"\r\n\r\n", start)
                        if end < 0:
                            break
                        need = _content_length(buffer, start, end)
                        start = end + 4
                    if len(buffer) - start < need:
                        break
                    body = bytes(buffer[start : start + need])
                    start += need
                    need = -1
                    self._dispatch(orjson.loads(body))
                if start:
                    del buffer[:start]
                    start = 0
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ServerGone(f"{self.argv[0]} closed its stdout"))

    def _dispatch(self, message: dict[str, Any]) -> None:
        self.messages += 1
        method = message.get("method")
        if method is None:
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is None:
                return
            if "error" in message:
                future.set_exception(RuntimeError(f"server error: {message['error']}"))
            else:
                future.set_result(message.get("result"))
            return
        if self.on_any is not None:
            self.on_any(method)
        handler = self.handlers.get(method)
        if handler is not None:
            handler(message.get("params"))
        if "id" in message:
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})


def _content_length(buffer: bytearray, start: int, end: int) -> int:
    for line in bytes(buffer[start:end]).split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise ValueError("LSP header without Content-Length")


def rss_kib(pid: int) -> int:
    """Resident memory of a process in KiB (VmRSS in /proc/<pid>/status)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
