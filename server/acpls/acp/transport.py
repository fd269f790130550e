"""Newline-delimited JSON-RPC 2.0 to the agent, on pygls' own JSON-RPC machinery.

pygls' `JsonRPCProtocol` already does ids, futures, dispatch and cancellation; ACP differs only in
framing (one JSON object per line, no headers) and in what must be kept raw. So this module adds:

- `AcpProtocol`: a `JsonRPCProtocol` whose messages keep `params`/`result` as the raw JSON (pygls
  would otherwise rename keys such as `_meta` children), whose handlers come from one table, which
  answers ACP's `$/cancel_request`, and which writes one line per message.
- `LineReader`: splits the agent's stdout into lines with a hard size limit, dropping (and
  reporting) an over-long line instead of growing without bound.
- `feed_line()`: turns one line into a call on the protocol, answering malformed input with the
  proper JSON-RPC error where the message had an id, so the connection always lives on.

`session/update` notifications take a fast path straight to their handler: they are most of the
traffic, and they need neither an id nor a future.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Future
from typing import Any

import attrs
import cattrs
from pygls.exceptions import JsonRpcMethodNotFound
from pygls.protocol.json_rpc import JsonRPCProtocol

from acpls.acp.errors import (  # noqa: F401  (re-exported: the codes' old home)
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RESOURCE_NOT_FOUND,
    AcpError,
    AcpErrorObject,
)
from acpls.speedups import JSONDecodeError, json_dumps, json_loads

logger = logging.getLogger(__name__)


CANCEL_METHOD = "$/cancel_request"
SESSION_UPDATE = "session/update"
# Agent requests whose answer can be large (file text, terminal output): at most this many are
# handled at once, so an agent asking thousands at once cannot make acpls hold thousands of
# answers in memory. The others wait their turn.
HEAVY_METHODS = frozenset({"fs/read_text_file", "fs/write_text_file", "terminal/output"})
HEAVY_AT_ONCE = 8

Handler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], None]


@attrs.define
class AcpRequest:
    id: int | str
    method: str
    params: Any = None
    jsonrpc: str = "2.0"


@attrs.define
class AcpNotification:
    method: str
    params: Any = None
    jsonrpc: str = "2.0"


@attrs.define
class AcpResponse:
    id: int | str | None
    result: Any = None
    jsonrpc: str = "2.0"


@attrs.define
class AcpErrorResponse:
    id: int | str | None
    error: AcpErrorObject
    jsonrpc: str = "2.0"


class _Endpoint:
    """The minimal "server" object pygls' protocol wants beside it."""

    def __init__(self) -> None:
        self.thread_pool = None

    def _report_server_error(self, error: Exception, source: Any) -> None:
        logger.error("ACP handler error (%s): %s", getattr(source, "__name__", source), error)

    report_server_error = _report_server_error


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter()

    def unstructure_error_response(msg: AcpErrorResponse) -> dict[str, Any]:
        error: dict[str, Any] = {"code": msg.error.code, "message": msg.error.message}
        if msg.error.data is not None:
            error["data"] = msg.error.data
        return {"jsonrpc": "2.0", "id": msg.id, "error": error}

    def unstructure_request(msg: AcpRequest) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg.id, "method": msg.method}
        if msg.params is not None:
            out["params"] = msg.params
        return out

    def unstructure_notification(msg: AcpNotification) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": "2.0", "method": msg.method}
        if msg.params is not None:
            out["params"] = msg.params
        return out

    converter.register_unstructure_hook(AcpErrorResponse, unstructure_error_response)
    converter.register_unstructure_hook(AcpRequest, unstructure_request)
    converter.register_unstructure_hook(AcpNotification, unstructure_notification)
    converter.register_unstructure_hook(
        AcpResponse, lambda m: {"jsonrpc": "2.0", "id": m.id, "result": m.result}
    )
    return converter


def _to_jsonable(value: Any, converter: cattrs.Converter) -> Any:
    if attrs.has(type(value)):
        return converter.unstructure(value)
    return value


class AcpProtocol(JsonRPCProtocol):
    """pygls' JSON-RPC protocol speaking ACP's newline-delimited framing."""

    def __init__(self) -> None:
        super().__init__(_Endpoint(), _make_converter())  # type: ignore[arg-type]
        self.handlers: dict[str, Handler] = {}
        self.notification_handlers: dict[str, NotificationHandler] = {}
        self._next_id = 0
        self._write: Callable[[bytes], None] | None = None
        self.closed = False
        self._heavy_slots = asyncio.Semaphore(HEAVY_AT_ONCE)
        # Request ids holding a slot: released once the answer is written, not when the handler
        # returns (answers waiting to be written are what takes the memory).
        self._heavy_held: dict[Any, int] = {}
        # Our requests to the agent, by id. Not pygls' `_request_futures`: that holds the agent's
        # requests to us by *their* ids, and both sides count from 1, so one dict would let an
        # agent's request id overwrite the future of ours (and its answer hit the wrong one).
        self._outgoing: dict[Any, Future[Any]] = {}
        # Methods acpls does not know that the agent used: logged the first time only (Qwen Code
        # sends its own request and notification with every turn and mode change).
        self._unknown_logged: set[str] = set()
        # Sees each line first and may handle it itself (True): the v1 terminal output fast
        # path (core/output_lines.py). Lines it declines go the ordinary way.
        self.line_hook: Callable[[bytes], bool] | None = None

    # -- writing -------------------------------------------------------------------------------
    def attach_writer(self, write: Callable[[bytes], None]) -> None:
        self._write = write

    def _send_data(self, data: Any) -> None:
        if self._write is None or self.closed:
            logger.debug("dropping message to a closed agent connection")
            return
        payload = _to_jsonable(data, self._converter)
        self._write(json_dumps(payload, default=_default) + b"\n")

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is not None:
            self._send_data(AcpErrorResponse(id=msg_id, error=_error_object(error)))
        else:
            self._send_data(AcpResponse(id=msg_id, result=_to_jsonable(result, self._converter)))

    def get_message_type(self, method: str) -> type | None:
        return AcpRequest

    def get_result_type(self, method: str) -> type | None:
        return None

    # -- outgoing requests -----------------------------------------------------------------------
    def send_request(  # type: ignore[override]
        self,
        method: str,
        params: Any | None = None,
        callback: Callable[[Any], None] | None = None,
        msg_id: Any = None,
    ) -> Future[Any]:
        if msg_id is None:
            self._next_id += 1
            msg_id = self._next_id
        future: Future[Any] = Future()
        self._outgoing[msg_id] = future
        self._send_data(AcpRequest(id=msg_id, method=method, params=params))
        return future

    async def request(self, method: str, params: Any | None = None) -> Any:
        """Send a request and await its result; `$/cancel_request` is sent if we stop waiting."""
        self._next_id += 1
        msg_id = self._next_id
        future = asyncio.wrap_future(self.send_request(method, params, msg_id=msg_id))
        try:
            return await future
        except asyncio.CancelledError:
            if self._outgoing.pop(msg_id, None) is not None and not self.closed:
                self.notify(CANCEL_METHOD, {"requestId": msg_id})
            raise

    def notify(self, method: str, params: Any | None = None) -> None:
        self._send_data(AcpNotification(method=method, params=params))

    def fail_pending(self, reason: str) -> None:
        """The agent is gone: every request still waiting for it gets an error."""
        self.closed = True
        outgoing = list(self._outgoing.values())
        self._outgoing.clear()
        for future in outgoing:
            if not future.done():
                future.set_exception(AcpError(INTERNAL_ERROR, reason))
        # The agent's requests still being handled: nobody is left to answer.
        incoming = list(self._request_futures.values())
        self._request_futures.clear()
        for task in incoming:
            if not task.done():
                task.cancel()

    # -- incoming --------------------------------------------------------------------------------
    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        """An `AcpError` is a handler's answer, not a fault: send it without pygls' traceback in
        the log (a hostile agent's every bad request would otherwise write one)."""
        try:
            error = None if future.cancelled() else future.exception()
            if isinstance(error, AcpError):
                self._request_futures.pop(msg_id, None)
                logger.debug("answering request %r with an error: %s", msg_id, error)
                self._send_response(msg_id, error=error.to_response_error())
                return
            super()._send_handler_result(future, msg_id=msg_id)
        finally:
            self._release_heavy(msg_id)

    def _get_handler(self, feature_name: str) -> Any:
        handler = self.handlers.get(feature_name)
        if handler is None:
            raise JsonRpcMethodNotFound.of(feature_name)
        if feature_name in HEAVY_METHODS:
            return self._one_of_a_few(handler)
        return handler

    def _one_of_a_few(self, handler: Handler) -> Handler:
        async def bounded(params: Any) -> Any:
            msg_id = self.msg_id
            await self._heavy_slots.acquire()
            self._heavy_held[msg_id] = self._heavy_held.get(msg_id, 0) + 1
            if self.closed:  # the agent is gone (or was stopped) while this one waited
                raise AcpError(INTERNAL_ERROR, "the agent connection is closed")
            return await handler(params)

        return bounded

    def _release_heavy(self, msg_id: Any) -> None:
        held = self._heavy_held.get(msg_id)
        if held is None:
            return
        if held > 1:
            self._heavy_held[msg_id] = held - 1
        else:
            del self._heavy_held[msg_id]
        self._heavy_slots.release()

    def _handle_notification(self, method_name: str, params: Any) -> None:
        if method_name == CANCEL_METHOD:
            request_id = params.get("requestId") if isinstance(params, Mapping) else None
            self._handle_cancel_notification(request_id)  # type: ignore[arg-type]
            return
        handler = self.notification_handlers.get(method_name)
        if handler is None:
            if not method_name.startswith("_") and self._first_unknown(method_name):
                logger.warning(
                    "ignoring notifications for unknown method %r (logged once)", method_name
                )
            return
        try:
            handler(params)
        except Exception:
            logger.exception("notification handler for %s failed", method_name)

    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        future = self._outgoing.pop(msg_id, None)
        if future is None:
            logger.warning("agent answered request id %r, which acpls never sent (ignored)", msg_id)
            return
        if future.done():
            return
        if error is not None:
            future.set_exception(AcpError(error.code, error.message, error.data))
        else:
            future.set_result(result)

    def feed_line(self, line: bytes) -> None:
        """Handle one line from the agent. Never raises."""
        hook = self.line_hook
        if hook is not None:
            try:
                if hook(line):
                    return
            except Exception:  # as a failing handler on the ordinary path: logged, not retried
                logger.exception("failed to handle a message from the agent: %.300r", line)
                return
        if not line.strip():
            return
        try:
            message = json_loads(line)
        except JSONDecodeError as exc:
            message = _salvage_utf8(line, exc)
            if message is None:
                return
        try:
            self._dispatch(message)
        except RecursionError:
            logger.error("agent sent a message nested too deeply to handle; ignored")
        except Exception:
            logger.exception("failed to handle a message from the agent: %.300r", line)

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._reject(message, "not a JSON-RPC 2.0 object")
            return
        method = message.get("method")
        has_id = "id" in message
        msg_id = message.get("id")
        if has_id and not _valid_id(msg_id):
            self._reject(message, "id must be a string or an integer")
            return
        params = message.get("params")
        if method is not None:
            if not isinstance(method, str):
                self._reject(message, "method must be a string")
                return
            if params is not None and not isinstance(params, (dict, list)):
                self._reject(message, "params must be an object or an array")
                return
            if not has_id:
                fast = self.notification_handlers.get(method) if method == SESSION_UPDATE else None
                if fast is not None:
                    fast(params)
                else:
                    self._handle_notification(method, params)
                return
            if method not in self.handlers:
                self._method_not_found(msg_id, method)
                return
            self._handle_request(msg_id, method, params)  # type: ignore[arg-type]
            return
        if not has_id:
            self._reject(message, "neither a request, a notification nor a response")
            return
        if "error" in message:
            error = message["error"]
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                error = {"code": INTERNAL_ERROR, "message": f"malformed error object: {error!r}"}
            obj = AcpErrorObject(error["code"], str(error.get("message", "")), error.get("data"))
            self._handle_response(msg_id, None, obj)
        elif "result" in message:
            self._handle_response(msg_id, message["result"])
        else:
            self._reject(message, "a response needs result or error")

    def _first_unknown(self, method: str) -> bool:
        if method in self._unknown_logged:
            return False
        self._unknown_logged.add(method)
        return True

    def _method_not_found(self, msg_id: Any, method: str) -> None:
        """A request acpls has no handler for: -32601, logged the first time only (pygls would
        log a warning for every one)."""
        if self._first_unknown(method):
            logger.warning(
                "answering requests for unknown method %r with -32601 (logged once)", method
            )
        error = AcpErrorObject(METHOD_NOT_FOUND, f"Method not found: {method}")
        self._send_data(AcpErrorResponse(id=msg_id, error=error))

    def _reject(self, message: Any, why: str) -> None:
        logger.error("agent sent an invalid message (%s): %.200r", why, message)
        if isinstance(message, dict) and _valid_id(message.get("id")) and "method" in message:
            self._send_data(
                AcpErrorResponse(
                    id=message["id"],
                    error=AcpErrorObject(INVALID_REQUEST, f"Invalid request: {why}"),
                )
            )


def _salvage_utf8(line: bytes, error: Exception) -> Any:
    """A line that is JSON once its bytes that are not UTF-8 become U+FFFD (a broken agent or a
    tool's raw output): keep the message rather than lose it. None when it is not JSON at all."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        try:
            message = json_loads(line.decode("utf-8", "replace"))
        except JSONDecodeError:
            pass
        else:
            logger.warning(
                "agent sent a line that is not valid UTF-8; bad bytes replaced by U+FFFD: %.200r",
                line,
            )
            return message
    logger.error("agent sent a line that is not JSON (%s): %.200r", error, line)
    return None


def _valid_id(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def _default(value: Any) -> Any:
    if attrs.has(type(value)):
        return attrs.asdict(value)
    raise TypeError(f"cannot send {type(value).__name__} to the agent")


def _error_object(error: Any) -> AcpErrorObject:
    """pygls hands us its ResponseError; ACP wants a plain {code, message, data?}."""
    if isinstance(error, AcpErrorObject):
        return error
    code = getattr(error, "code", INTERNAL_ERROR)
    message = getattr(error, "message", str(error))
    return AcpErrorObject(int(code), str(message), getattr(error, "data", None))


# A line held in pieces at least this long is rare; once it is gone, its memory is given back.
RELEASE_AFTER_BYTES = 4 * 1024 * 1024


class LineReader:
    """Splits a byte stream into lines, never holding more than `max_line` bytes of one line.

    `release_memory` is called after a line of RELEASE_AFTER_BYTES or more was held and let go
    (dropped as too long, or handled): services/memory.py gives its pages back to the OS.
    """

    def __init__(
        self,
        on_line: Callable[[bytes], None],
        max_line: int,
        release_memory: Callable[[], None] | None = None,
    ) -> None:
        self._on_line = on_line
        self._max_line = max_line
        self._release_memory = release_memory
        self._parts: list[bytes] = []
        self._held = 0
        self._skipping = False
        self.dropped_lines = 0
        # Shown each block before its lines are handled, and told when they were.
        self.lookahead: Callable[[bytes], None] | None = None
        self.block_done: Callable[[], None] | None = None

    def feed(self, data: bytes) -> None:
        """One block: seen, its lines handled, then told done."""
        self.see(data)
        try:
            self._feed(data, 0, len(data))
        finally:
            self.handled()

    # A block in parts (acp/delivery.py): `see` each block as it arrives, `feed_range` its bytes
    # in order, `handled` once every block seen so far was fed.
    def see(self, data: bytes) -> None:
        if self.lookahead is not None:
            self.lookahead(data)

    def feed_range(self, data: bytes, start: int, stop: int) -> None:
        self._feed(data, start, stop)

    def handled(self) -> None:
        if self.block_done is not None:
            self.block_done()

    def _feed(self, data: bytes, start: int, stop: int) -> None:
        while True:
            end = data.find(b"\n", start, stop)
            if end < 0:
                self._hold(data[start:stop])
                return
            piece = data[start:end]
            start = end + 1
            if self._skipping:
                self._skipping = False
                continue
            if self._parts:
                if self._held + len(piece) > self._max_line:
                    # The held head of the over-long line goes too, or it would prefix the next.
                    self._let_go()
                    self._drop()
                    continue
                self._parts.append(piece)
                piece = b"".join(self._parts)
                held = len(piece)
                self._parts.clear()
                self._held = 0
                self._on_line(piece)
                del piece
                self._released(held)
                continue
            elif len(piece) > self._max_line:
                self._drop()
                continue
            self._on_line(piece)

    def _hold(self, rest: bytes) -> None:
        if not rest or self._skipping:
            return
        if self._held + len(rest) > self._max_line:
            self._let_go()
            self._skipping = True
            self._drop()
            return
        self._parts.append(rest)
        self._held += len(rest)

    def _let_go(self) -> None:
        held = self._held
        self._parts.clear()
        self._held = 0
        self._released(held)

    def _released(self, held: int) -> None:
        if held >= RELEASE_AFTER_BYTES and self._release_memory is not None:
            self._release_memory()

    def _drop(self) -> None:
        self.dropped_lines += 1
        logger.error(
            "agent sent a line longer than limits.maxLineBytes (%d bytes); it was dropped",
            self._max_line,
        )

    def finish(self) -> bytes:
        """What is left when the stream ends: a half-written line, which is not a message."""
        rest = b"".join(self._parts)
        self._parts.clear()
        self._held = 0
        return rest
