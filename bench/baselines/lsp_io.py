"""Plain-Python LSP framing for the baselines: the standard `json` module, blocking stdio."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any


def read_messages(stream: IO[bytes]) -> Iterator[dict[str, Any]]:
    """LSP messages from a blocking byte stream, until it ends."""
    while True:
        length = -1
        while True:
            line = stream.readline()
            if not line:
                return
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length < 0:
            continue
        yield json.loads(stream.read(length))


class LspWriter:
    """Writes LSP frames to stdout, one flush per call."""

    def __init__(self) -> None:
        self._out = sys.stdout.buffer
        self._lock = threading.Lock()

    def send(self, *messages: dict[str, Any]) -> None:
        frames = []
        for message in messages:
            body = json.dumps(message, separators=(",", ":")).encode()
            frames.append(b"Content-Length: %d\r\n\r\n" % len(body))
            frames.append(body)
        with self._lock:
            self._out.write(b"".join(frames))
            self._out.flush()

    def respond(self, msg_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def initialize_result(name: str) -> dict[str, Any]:
    return {
        "capabilities": {
            "executeCommandProvider": {"commands": ["acpls.newSession", "acpls.prompt"]}
        },
        "serverInfo": {"name": name},
    }
