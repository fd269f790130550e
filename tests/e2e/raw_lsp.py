"""A bare LSP client for the editor-side tests: Content-Length framing over an asyncio subprocess,
so a test can do what pytest-lsp will not (requests before `initialize`, messages after
`shutdown`, closing stdin, killing the editor).

Also runnable as a stand-in editor that a test can kill: `python -m tests.e2e.raw_lsp
--messages FILE --pid-file FILE` starts acpls, sends the JSON messages in FILE (a list; a request
is answered before the next is sent, except a `"wait": false` one), writes acpls' pid, and then
waits forever, answering acpls' requests with null.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "acpls"]
# What this editor answers to acpls' requests (anything else: null).
SERVER_REQUEST_ANSWERS: dict[str, Any] = {
    "window/showDocument": {"success": True},
    "workspace/applyEdit": {"applied": True},
}


class RawLspClient:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = itertools.count(1)
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.stderr = bytearray()
        self._reader = asyncio.ensure_future(self._read())
        self._stderr_reader = asyncio.ensure_future(self._read_stderr())

    @classmethod
    async def start(cls, env: dict[str, str] | None = None, cwd: str | None = None) -> RawLspClient:
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        return cls(process)

    @property
    def pid(self) -> int:
        return self.process.pid

    # -- writing -------------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    async def request(self, method: str, params: Any = None, timeout: float = 30) -> dict[str, Any]:  # noqa: ASYNC109
        """Send a request; the whole response message (result or error) comes back."""
        msg_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await asyncio.wait_for(future, timeout)

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    # -- reading -------------------------------------------------------------------------------
    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = await stream.readline()
                if not line:
                    self._fail_waiting()
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            message = json.loads(await stream.readexactly(length))
            self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            future = self._waiting.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
        elif "id" in message:
            self.server_requests.append(message)
            result = SERVER_REQUEST_ANSWERS.get(message["method"])
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        else:
            self.notifications.append(message)

    def _fail_waiting(self) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionError("acpls closed its stdout"))
        self._waiting.clear()

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while chunk := await stream.read(65536):
            self.stderr.extend(chunk[: max(0, 4_000_000 - len(self.stderr))])

    def log(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    async def wait_exit(self, timeout: float) -> int | None:  # noqa: ASYNC109
        try:
            return await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            return None

    async def aclose(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            await self.process.wait()
        for task in (self._reader, self._stderr_reader):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def initialize_params(root: Path, options: dict[str, Any], custom: bool = False) -> dict[str, Any]:
    capabilities: dict[str, Any] = {
        "window": {"showDocument": {"support": True}},
        "workspace": {"workspaceEdit": {"documentChanges": True}, "applyEdit": True},
    }
    if custom:
        capabilities["experimental"] = {"acpls": {"version": 1}}
    return {
        "processId": os.getpid(),
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        "capabilities": capabilities,
        "initializationOptions": options,
    }


async def _stand_in_editor(messages: list[dict[str, Any]], pid_file: Path) -> None:
    client = await RawLspClient.start()
    pid_file.write_text(str(client.pid), encoding="utf-8")
    for message in messages:
        if message.get("wait") is False:
            client.send({k: v for k, v in message.items() if k != "wait"})
        elif "id" in message:
            await client.request(message["method"], message.get("params"), timeout=60)
        else:
            client.notify(message["method"], message.get("params"))
    await asyncio.Event().wait()  # until killed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="a stand-in editor for acpls (to be killed)")
    parser.add_argument("--messages", type=Path, required=True)
    parser.add_argument("--pid-file", type=Path, required=True)
    args = parser.parse_args(argv)
    messages = json.loads(args.messages.read_text(encoding="utf-8"))
    asyncio.run(_stand_in_editor(messages, args.pid_file))
    return 0


if __name__ == "__main__":
    sys.exit(main())
