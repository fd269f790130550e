"""LSP over stdin/stdout, read on the event loop so the editor going away is noticed at once.

pygls reads stdin in a thread per line; acpls reads it with asyncio instead, so that EOF (the
editor closed the pipe or was killed) ends the loop immediately and the agent and every terminal
process can be stopped within the 2 s the editor gives a server.

Writing is non-blocking too (`PipeWriter`, an asyncio pipe transport): a slow editor never stalls
the event loop, and once more than `HIGH_WATER` bytes wait for it, the server's editor-output gate
(flow.FlowGate, passed in) closes so
acpls stops reading the agent until the editor caught up (back-pressure instead of an unbounded
buffer).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acpls.flow import FlowGate
from acpls.services.unread import unread_counter

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger(__name__)

MAX_HEADER_BYTES = 8192
HIGH_WATER = 4 * 1024 * 1024
LOW_WATER = 1024 * 1024
DRAIN_SECONDS = 2.0
PIPE_BYTES = 1024 * 1024


class _StdoutWriter:
    """Blocking fallback where stdout is not a pipe, socket or character device (a file)."""

    def __init__(self) -> None:
        self._out = sys.stdout.buffer

    def write(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._out.flush()

    async def aclose(self) -> None:
        self.close()

    def unread(self) -> int | None:
        return None  # a file is never behind


class _FlowProtocol(asyncio.Protocol):
    """Turns the transport's flow-control calls into the editor-output gate."""

    def __init__(self, gate: FlowGate) -> None:
        self.lost = asyncio.get_running_loop().create_future()
        self._gate = gate

    def pause_writing(self) -> None:
        self._gate.close()

    def resume_writing(self) -> None:
        self._gate.open()

    def connection_lost(self, exc: Exception | None) -> None:
        self._gate.open()  # nothing waits for a gone editor
        if not self.lost.done():
            self.lost.set_result(None)


class PipeWriter:
    """stdout as an asyncio write transport: `write` never blocks the event loop."""

    def __init__(
        self,
        transport: asyncio.WriteTransport,
        protocol: _FlowProtocol,
        os_unread: Callable[[], int] | None = None,
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        self._os_unread = os_unread
        transport.set_write_buffer_limits(high=HIGH_WATER, low=LOW_WATER)

    def write(self, data: bytes) -> None:
        if not self._transport.is_closing():
            self._transport.write(data)

    @property
    def buffered(self) -> int:
        return self._transport.get_write_buffer_size()

    def unread(self) -> int | None:
        """Bytes written that the editor has not read: what waits in the transport and in the
        OS's pipe or socket (services/unread.py); None when the OS gives no count."""
        if self._os_unread is None:
            return None
        try:
            return self._transport.get_write_buffer_size() + self._os_unread()
        except OSError:
            return None

    def close(self) -> None:
        self._transport.close()

    async def aclose(self) -> None:
        """Let what is buffered reach the editor (bounded), then close."""
        self._transport.close()  # writes what is buffered, then reports connection_lost
        try:
            await asyncio.wait_for(asyncio.shield(self._protocol.lost), DRAIN_SECONDS)
        except TimeoutError:
            self._transport.abort()


def _widen_pipe(fd: int) -> None:
    """A 1 MiB pipe to the editor (Linux; the default is 64 KiB): a flush of terminal output
    goes in one write instead of a wake-up and a buffer shift per 64 KiB. Not a pipe, or not
    allowed: nothing changes."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, set_size, PIPE_BYTES)


async def _stdout_writer(gate: FlowGate) -> PipeWriter | _StdoutWriter:
    loop = asyncio.get_running_loop()
    _widen_pipe(sys.stdout.fileno())
    try:
        transport, protocol = await loop.connect_write_pipe(
            lambda: _FlowProtocol(gate), sys.stdout.buffer
        )
    except (ValueError, OSError) as exc:
        logger.debug("stdout is not a pipe (%s): blocking writes", exc)
        return _StdoutWriter()
    return PipeWriter(transport, protocol, unread_counter(sys.stdout.fileno()))


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


async def run_stdio(server: LanguageServer, gate: FlowGate) -> int:
    """Serve `server` on stdin/stdout; `gate` closes while the editor is behind."""
    protocol = server.protocol
    writer = await _stdout_writer(gate)
    protocol.set_writer(writer)  # type: ignore[arg-type]
    try:
        return await _serve(protocol, await _stdin_reader())
    finally:
        await writer.aclose()


async def _serve(protocol: Any, reader: asyncio.StreamReader) -> int:
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
