"""A small agent-side JSON-RPC peer for ACP: newline-delimited JSON over stdin/stdout.

Stdlib only and free of pygls imports so that an agent built on it starts in a few tens of
milliseconds. Used by the demo agent (`python -m acpls.demo`) and by the scripted test agent.

What it does:
- reads one JSON message per line from stdin (bounded line length), writes one per line to stdout;
- runs each incoming request in its own task (owned by the peer's TaskGroup) so that a long
  `session/prompt` does not block `session/cancel` or other requests;
- correlates the agent's own requests with the client's responses (`request()` raises `RpcError`
  for an error response);
- answers `$/cancel_request` for an incoming request by cancelling its handler (error -32800),
  and sends `$/cancel_request` when the agent stops waiting for one of its own requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import IO, Any

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
RESOURCE_NOT_FOUND = -32002

# One ACP line may carry a whole file; beyond this the line is dropped with an error on stderr.
MAX_LINE_BYTES = 64 * 1024 * 1024

RequestHandler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], Awaitable[None]]
MessageHook = Callable[[dict[str, Any]], None]


class RpcError(Exception):
    """A JSON-RPC error, raised by handlers to answer with it and by `request()` on one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class Reply:
    """A handler result whose `then` coroutine runs after the response has been written.

    Lets an agent send notifications that must follow a response (for example
    `available_commands_update` after `session/new`). With `error`, the response is that error.
    """

    def __init__(
        self,
        result: Any,
        then: Callable[[], Awaitable[object]],
        error: RpcError | None = None,
    ) -> None:
        self.result = result
        self.then = then
        self.error = error


class Peer:
    """The agent's end of an ACP connection."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        output: IO[bytes],
        *,
        on_message: MessageHook | None = None,
    ) -> None:
        self._reader = reader
        self._output = output
        self._on_message = on_message
        self._requests: dict[str, RequestHandler] = {}
        self._notifications: dict[str, NotificationHandler] = {}
        self._pending: dict[int | str, asyncio.Future[Any]] = {}
        self._incoming: dict[int | str, asyncio.Task[None]] = {}  # not yet answered
        self._handlers: set[asyncio.Task[None]] = set()  # every request task, until it ends
        self._ids = itertools.count(1)
        self._group: asyncio.TaskGroup | None = None
        self.closed = asyncio.Event()

    # -- registration -------------------------------------------------------------------------

    def on_request(self, method: str, handler: RequestHandler) -> None:
        self._requests[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        self._notifications[method] = handler

    # -- sending --------------------------------------------------------------------------------

    def write_raw(self, line: str) -> None:
        """Write one line exactly as given (a newline is added when missing)."""
        data = line if line.endswith("\n") else line + "\n"
        self._output.write(data.encode("utf-8"))
        self._output.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write_raw(json.dumps(message, ensure_ascii=False))

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def send_update(self, session_id: str, update: dict[str, Any]) -> None:
        self.notify("session/update", {"sessionId": session_id, "update": update})

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and wait for its result; an error response raises `RpcError`.

        If the caller stops waiting (the awaiting task is cancelled), the client is told with
        `$/cancel_request` so it can drop whatever it was doing for this request.
        """
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self.send(message)
            return await future
        except asyncio.CancelledError:
            if not self.closed.is_set():
                self.notify("$/cancel_request", {"requestId": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    # -- receiving ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch messages until stdin closes; handler tasks are awaited on exit."""
        async with asyncio.TaskGroup() as group:
            self._group = group
            try:
                while True:
                    line = await self._read_line()
                    if line is None:
                        break
                    if line.strip():
                        self._dispatch_line(line)
            finally:
                self.closed.set()
                self._fail_pending()
                for task in list(self._handlers):
                    task.cancel()

    async def _read_line(self) -> bytes | None:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                return end.partial or None
            except asyncio.LimitOverrunError as overrun:
                await self._discard_long_line(overrun.consumed)
                continue
            return line

    async def _discard_long_line(self, consumed: int) -> None:
        # Drop the oversized line up to and including its newline, then carry on reading.
        logger.error("dropping an incoming line longer than %d bytes", MAX_LINE_BYTES)
        await self._reader.readexactly(consumed)
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as again:
                await self._reader.readexactly(again.consumed)
            except asyncio.IncompleteReadError:
                return

    def _dispatch_line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError) as error:
            logger.error("unparsable line from the client: %s", error)
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": PARSE_ERROR, "message": f"Parse error: {error}"},
                }
            )
            return
        if not isinstance(message, dict):
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": INVALID_REQUEST, "message": "Expected a JSON object"},
                }
            )
            return
        if self._on_message is not None:
            self._on_message(message)
        if "method" in message:
            if "id" in message:
                self._start_request(message)
            else:
                self._start_notification(message)
        elif "id" in message:
            self._settle_response(message)

    def _settle_response(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message["id"])
        if future is None or future.done():
            logger.warning("response for unknown request id %r", message.get("id"))
            return
        error = message.get("error")
        if isinstance(error, dict):
            future.set_exception(
                RpcError(
                    int(error.get("code", INTERNAL_ERROR)),
                    str(error.get("message", "")),
                    error.get("data"),
                )
            )
        else:
            future.set_result(message.get("result"))

    def _start_request(self, message: dict[str, Any]) -> None:
        assert self._group is not None
        request_id = message["id"]
        task = self._group.create_task(
            self._answer(request_id, message["method"], message.get("params"))
        )
        self._incoming[request_id] = task
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)
        task.add_done_callback(lambda done: self._forget_incoming(request_id, done))

    def _start_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params")
        if method == "$/cancel_request":
            self._cancel_incoming(params)
            return
        handler = self._notifications.get(method)
        if handler is None:
            logger.info("ignoring notification %s", method)
            return
        assert self._group is not None
        self._group.create_task(self._notify_handler(method, handler, params))

    async def _notify_handler(self, method: str, handler: NotificationHandler, params: Any) -> None:
        try:
            await handler(params)
        except Exception:
            logger.exception("notification handler for %s failed", method)

    def _forget_incoming(self, request_id: int | str, task: asyncio.Task[None]) -> None:
        if self._incoming.get(request_id) is task:
            del self._incoming[request_id]

    def _cancel_incoming(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        task = self._incoming.get(request_id) if request_id is not None else None
        if task is not None:
            task.cancel()

    async def _answer(self, request_id: int | str, method: str, params: Any) -> None:
        handler = self._requests.get(method)
        then: Callable[[], Awaitable[object]] | None = None
        try:
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
            result = await handler(params)
            if isinstance(result, Reply):
                then = result.then
                if result.error is not None:
                    raise result.error
                result = result.result
            response: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": result}
        except asyncio.CancelledError:
            if self.closed.is_set():
                raise
            response = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": REQUEST_CANCELLED, "message": "Request cancelled"},
            }
        except RpcError as error:
            response = {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}
        except Exception as error:
            logger.exception("handler for %s failed", method)
            response = {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": INTERNAL_ERROR, "message": f"{type(error).__name__}: {error}"},
            }
        if not self.closed.is_set():
            self.send(response)
        # Answered: a late `$/cancel_request` for this id must not cut short what follows.
        current = asyncio.current_task()
        if current is not None:
            self._forget_incoming(request_id, current)  # type: ignore[arg-type]
        if then is not None:
            await then()

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the client closed the connection"))


async def open_stdio_peer(*, on_message: MessageHook | None = None) -> Peer:
    """A peer on this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return Peer(reader, sys.stdout.buffer, on_message=on_message)


def setup_stderr_logging(level: int = logging.WARNING) -> None:
    """Agent logs go to stderr: stdout belongs to the protocol."""
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )


async def wait_or_cancelled(awaitable: Awaitable[Any], *events: asyncio.Event) -> tuple[bool, Any]:
    """Await `awaitable` unless one of `events` is set first.

    Returns (True, result) when it finished, (False, None) when an event won; the awaitable is
    then cancelled (for `Peer.request` that sends `$/cancel_request`).
    """
    task = asyncio.ensure_future(awaitable)
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        done, _ = await asyncio.wait({task, *waiters}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        for waiter in waiters:
            waiter.cancel()
    if task in done:
        return True, task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return False, None
