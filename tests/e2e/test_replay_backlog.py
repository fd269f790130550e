"""A replay is paced by what the editor has not read (protocol.md 5.4.1, core/pump.py ReplayPacer):
the real acpls over a real AF_UNIX socketpair, as libuv editors (Neovim, VS Code) start it. While
the editor reads nothing, acpls leaves at most the bound and one message unread (without pacing
it fills the socket, ~200 KiB, and its own buffer); when the editor reads again, every update
arrives in order, and the load's answer after all of them."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

from acpls.core.pump import REPLAY_UNREAD_BOUND
from acpls.core.routing import BATCH_UPDATES
from tests.agents import script_command
from tests.e2e.test_long_load import expected_view, received_view, replayed

UPDATES = 10_000
STALL_S = 2.5  # the editor reads nothing this long after asking for the load
SETTLED_S = 0.8  # ... and at least this long after the unread count last grew


class SocketEditor:
    """A bare LSP editor on one end of a socketpair: it reads only when told to."""

    def __init__(self, sock: socket.socket, out: socket.socket) -> None:
        self.sock = sock  # acpls' stdout
        self._out = out  # acpls' stdin
        self._buffer = bytearray()
        self.frame_sizes: list[int] = []

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self._out.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def unread(self) -> int:
        """Bytes acpls sent that this end has not read (SIOCINQ)."""
        return struct.unpack("i", fcntl.ioctl(self.sock, termios.FIONREAD, b"\0" * 4))[0]

    def read_until_answer(self, msg_id: int, deadline: float) -> list[dict[str, Any]]:
        """Every message up to the answer to `msg_id` (included); acpls' requests get null."""
        got: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            message = self._next(deadline)
            got.append(message)
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            elif message.get("id") == msg_id and "method" not in message:
                return got
        raise TimeoutError(f"no answer to request {msg_id}")

    def _next(self, deadline: float) -> dict[str, Any]:
        while True:
            head_end = self._buffer.find(b"\r\n\r\n")
            if head_end >= 0:
                headers = bytes(self._buffer[:head_end]).lower().split(b"\r\n")
                length = next(int(h.split(b":")[1]) for h in headers if b"content-length" in h)
                end = head_end + 4 + length
                if len(self._buffer) >= end:
                    body = bytes(self._buffer[head_end + 4 : end])
                    del self._buffer[:end]
                    self.frame_sizes.append(end)
                    return json.loads(body)
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("acpls closed its end")
            self._buffer += chunk


def _updates_of(messages: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = []
    for message in messages:
        params = message.get("params")
        if not isinstance(params, dict) or params.get("sessionId") != session_id:
            continue
        if message.get("method") == "acpls/sessionUpdate":
            updates.append(params["update"])
        elif message.get("method") == "acpls/sessionUpdates":
            assert 1 < len(params["updates"]) <= BATCH_UPDATES
            updates.extend(params["updates"])
    return updates


def _stalled_max(editor: SocketEditor) -> int:
    """The most the editor had unread while it read nothing for STALL_S (and the count had
    stopped growing for SETTLED_S: acpls had taken what the agent replayed)."""
    start = last_growth = time.monotonic()
    most = 0
    while True:
        now = time.monotonic()
        unread = editor.unread()
        if unread > most:
            most, last_growth = unread, now
        if now - start >= STALL_S and now - last_growth >= SETTLED_S:
            return most
        time.sleep(0.005)


def test_a_stalled_editor_is_left_at_most_the_bound_unread_and_gets_everything_after(
    workspace: Path, tmp_path: Path, server_env: dict[str, str]
) -> None:
    updates = replayed(UPDATES)
    script = {
        "protocol": 1,
        "on_initialize": {"agentCapabilities": {"loadSession": True}},
        "on_load": [{"update": u} for u in updates],
    }
    script_file = tmp_path / "long.json"
    script_file.write_text(json.dumps(script), encoding="utf-8")
    argv = script_command(script_file, tmp_path / "agent.jsonl")
    # One socketpair for each direction, as libuv makes them.
    to_server, server_in = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours, server_out = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with (tmp_path / "acpls.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "acpls"],
            stdin=server_in.fileno(),
            stdout=server_out.fileno(),
            stderr=log,
            env=server_env,
            cwd=workspace,
        )
    server_in.close()
    server_out.close()
    editor = SocketEditor(ours, to_server)
    try:
        _initialize(editor, workspace, {"command": argv[0], "args": argv[1:]})
        editor.send(
            {
                "id": 2,
                "method": "workspace/executeCommand",
                "params": {"command": "acpls.loadSession", "arguments": [{"sessionId": "long-1"}]},
            }
        )
        most = _stalled_max(editor)
        messages = editor.read_until_answer(2, time.monotonic() + 60)
    finally:
        server.kill()
        server.wait()
        ours.close()
        to_server.close()
    assert messages[-1].get("result", {}).get("sessionId") == "long-1", messages[-1]
    piece = max(editor.frame_sizes)
    assert 0 < most <= REPLAY_UNREAD_BOUND + piece, (most, piece)
    received = _updates_of(messages, "long-1")
    assert received_view(received) == expected_view(updates)  # all of it, in order, then the answer


def _initialize(editor: SocketEditor, workspace: Path, agent: dict[str, Any]) -> None:
    editor.send(
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "processId": os.getpid(),
                "rootUri": workspace.as_uri(),
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
                "capabilities": {"experimental": {"acpls": {"version": 1, "sessionUpdates": True}}},
                "initializationOptions": {"agent": agent},
            },
        }
    )
    editor.read_until_answer(1, time.monotonic() + 30)
    editor.send({"method": "initialized", "params": {}})
