"""LSP over stdin/stdout, read on the event loop so the editor going away is noticed at once.

pygls reads stdin in a thread per line; acpls reads it with asyncio instead, so that EOF (the
editor closed the pipe or was killed) ends the loop immediately and the agent and every terminal
process can be stopped within the 2 s the editor gives a server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger(__name__)

MAX_HEADER_BYTES = 8192


class _StdoutWriter:
    def __init__(self) -> None:
        self._out = sys.stdout.buffer

    def write(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    def close(self) -> None:
        try:
            self._out.flush()
        except (OSError, ValueError):
            pass


async def _stdin_reader() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**20, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    return reader


async def _read_message(reader: asyncio.StreamReader) -> bytes | None:
    length = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if len(line) > MAX_HEADER_BYTES:
            raise ValueError("LSP header line too long")
        stripped = line.strip()
        if not stripped:
            if length is None:
                continue
            return await reader.readexactly(length)
        name, _, value = stripped.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())


async def run_stdio(server: LanguageServer) -> int:
    protocol = server.protocol
    protocol.set_writer(_StdoutWriter())  # type: ignore[arg-type]
    reader = await _stdin_reader()
    while True:
        try:
            body = await _read_message(reader)
        except (ValueError, asyncio.IncompleteReadError) as exc:
            logger.error("broken LSP input from the editor (%s); stopping", exc)
            return 1
        if body is None:
            logger.info("the editor closed the connection")
            return 0 if protocol._shutdown else 1
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
            protocol.handle_message(message)
        except SystemExit as exc:  # pygls' `exit` handler
            return int(exc.code or 0)
        except Exception:
            logger.exception("cannot handle a message from the editor")
