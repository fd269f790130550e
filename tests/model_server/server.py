"""A scripted model server on loopback: Anthropic Messages, OpenAI Responses and Chat
Completions, and Gemini, streaming (SSE) or not. See README.md beside this file.

The conversation's progress picks the scripted step (`framing.progress`); a request that does not
offer the script's tools (titles, classifiers, routers, memory, Qwen's `respond_in_schema`) is a
side call and gets a harmless answer that never moves the script. Every request is logged.

    with ModelServer(load_script("claude", "edit_turn", workspace=str(ws))) as model:
        env = {"ANTHROPIC_BASE_URL": model.url}
        ...
        print(model.format_log())

The server runs its own event loop in a thread it owns, so sync and async tests alike can use it
and a stalled reply never blocks the test's loop. Each response closes its connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import logging
import re
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import attrs

from tests.model_server import framing
from tests.model_server.framing import Request
from tests.model_server.script import Reply, Script, ToolCall

log = logging.getLogger("tests.model_server")

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
_GEMINI_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^:/]+):(?P<method>\w+)$")


@attrs.define
class LoggedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    # "step N", "side", "stall N", "extra N" (past the script's end) or "http STATUS".
    answer: str = ""
    at: float = attrs.field(factory=time.monotonic)
    # Set when the response has been sent in full, or the client went away.
    finished: threading.Event = attrs.field(factory=threading.Event, repr=False, eq=False)


class ModelServer:
    """One scripted model on 127.0.0.1 (an ephemeral port unless `port` is given)."""

    def __init__(self, script: Script, *, port: int = 0, log_path: Path | None = None) -> None:
        self.script = script
        self._port = port
        self._log_path = log_path
        self.requests: list[LoggedRequest] = []
        self._lock = threading.Lock()
        # Set when a stalled reply has started (the model is "thinking" forever).
        self.stalled = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._startup_error: BaseException | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._handlers: set[asyncio.Task[Any]] = set()
        self.port = 0

    # --- lifetime -------------------------------------------------------------------------------

    def start(self) -> ModelServer:
        self._thread = threading.Thread(target=self._run, name="model-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._startup_error is not None:
            raise RuntimeError("model server did not start") from self._startup_error
        if not self.port:
            raise RuntimeError("model server did not start within 10 s")
        return self

    def close(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._stop.set)
        if thread is not None:
            thread.join(10)
        self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as error:  # reported to start(); the thread must not die silently
            self._startup_error = error
            self._ready.set()
        finally:
            loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", self._port)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            # Aborting the sockets ends every handler (a stalled one reads EOF); cancelling the
            # handler tasks instead makes asyncio's stream callback log a spurious error.
            for writer in list(self._writers):
                writer.transport.abort()
            await asyncio.gather(*self._handlers, return_exceptions=True)

    # --- the log --------------------------------------------------------------------------------

    def main_requests(self) -> list[LoggedRequest]:
        with self._lock:
            return [r for r in self.requests if r.answer.startswith(("step", "stall", "extra"))]

    def format_log(self, limit: int = 4000) -> str:
        """Every request with its answer; bodies cut to `limit` characters each."""
        lines = []
        with self._lock:
            requests = list(self.requests)
        for n, request in enumerate(requests):
            body = json.dumps(request.body, ensure_ascii=False)
            if len(body) > limit:
                body = body[:limit] + f"... ({len(body)} chars)"
            lines.append(f"#{n} {request.method} {request.path} -> {request.answer}\n  {body}")
        return "\n".join(lines) or "(no requests)"

    def _record(self, request: LoggedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _write_log(self, request: LoggedRequest) -> None:
        if self._log_path is not None:
            with self._log_path.open("a", encoding="utf-8") as out:
                entry = attrs.asdict(request, filter=lambda a, _v: a.name != "finished")
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    # --- HTTP -----------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
            log.debug("connection ended: %r", error)
        finally:
            self._writers.discard(writer)
            if task is not None:
                self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEADER_BYTES:
            return await _respond(writer, 431, {"error": "headers too large"})
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, _version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        raw = await _read_body(reader, headers)
        body = _decode_body(raw, headers)
        logged = LoggedRequest(method, target, headers, body)
        self._record(logged)
        try:
            await self._route(logged, reader, writer)
        finally:
            self._write_log(logged)
            logged.finished.set()

    async def _route(
        self, logged: LoggedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        path = unquote(urlsplit(logged.path).path)
        method = logged.method
        if logged.headers.get("upgrade", "").lower() == "websocket":
            # Codex tries a WebSocket first; "not here" sends it to plain HTTP.
            logged.answer = "http 404"
            return await _respond(writer, 404, {"error": "no websocket here"})
        if method == "HEAD":
            logged.answer = "http 200"
            return await _respond(writer, 200, None)
        if method == "GET":
            logged.answer = "http 200" if path.endswith("/models") else "http 404"
            if path.endswith("/models"):
                return await _respond(writer, 200, {"object": "list", "data": []})
            return await _respond(writer, 404, {"error": f"nothing at {path}"})
        if method != "POST" or not isinstance(logged.body, dict):
            logged.answer = "http 400"
            return await _respond(writer, 400, {"error": "expected a JSON POST"})
        body = logged.body
        if path.endswith("/messages/count_tokens"):
            logged.answer = "http 200"
            return await _respond(writer, 200, {"input_tokens": framing.USAGE_IN})
        if path.endswith("/messages"):
            return await self._play(logged, framing.read_anthropic(body), reader, writer)
        if path.endswith("/chat/completions"):
            return await self._play(logged, framing.read_chat(body), reader, writer)
        if path.endswith("/responses"):
            return await self._play(logged, framing.read_responses(body), reader, writer)
        gemini = _GEMINI_PATH.match(path)
        if gemini:
            call = gemini["method"]
            if call == "countTokens":
                logged.answer = "http 200"
                return await _respond(writer, 200, {"totalTokens": framing.USAGE_IN})
            if call in ("generateContent", "streamGenerateContent"):
                stream = call == "streamGenerateContent"
                request = framing.read_gemini(body, gemini["model"], stream)
                return await self._play(logged, request, reader, writer)
        logged.answer = "http 404"
        return await _respond(writer, 404, {"error": f"nothing at {path}"})

    # --- playing the script ---------------------------------------------------------------------

    def _is_main(self, request: Request) -> bool:
        """The agent's own loop offers its tools; side calls offer none, or others, or force one."""
        if not request.tools:
            return False
        if request.forced_tool is not None and request.forced_tool not in self.script.tool_names:
            return False
        return self.script.tool_names <= set(request.tools)

    def _choose(self, request: Request) -> tuple[Reply, str]:
        if not self._is_main(request):
            return self._side_reply(request), "side"
        step = self.script.step(request.progress)
        if step is None:
            # Past the script's end: end the turn with plain text instead of failing the agent.
            return Reply(text=self.script.side_text), f"extra {request.progress}"
        kind = "stall" if step.stall else "step"
        return step, f"{kind} {request.progress}"

    def _side_reply(self, request: Request) -> Reply:
        if request.forced_tool is not None:
            schema = request.tool_schemas.get(request.forced_tool)
            arguments = framing.example_value(schema, self.script.side_json)
            return Reply(tools=(ToolCall(request.forced_tool, arguments, "call_side"),))
        if request.json_schema is not None:
            value = framing.example_value(request.json_schema, self.script.side_json)
            return Reply(text=json.dumps(value))
        return Reply(text=self.script.side_text)

    async def _play(
        self,
        logged: LoggedRequest,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        reply, answer = self._choose(request)
        if answer == "side" and _asks_for_severity(logged.body):
            reply = Reply(text="<severity>1</severity>")
        logged.answer = answer
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if not request.stream:
            return await _respond(writer, 200, _body(request, reply))
        await _start_stream(writer)
        for chunk in framing.sse(_events(request, reply)):
            writer.write(chunk)
            await writer.drain()
        if reply.stall:
            self.stalled.set()
            await _until_client_leaves(reader)


def _events(request: Request, reply: Reply) -> Iterator[framing.Event]:
    if request.family == "anthropic":
        return framing.anthropic_events(reply, request.model)
    if request.family == "chat":
        return framing.chat_events(reply, request.model)
    if request.family == "responses":
        return framing.responses_events(reply, request.model)
    return framing.gemini_events(reply, request.model)


def _body(request: Request, reply: Reply) -> dict[str, Any]:
    if request.family == "anthropic":
        return framing.anthropic_body(reply, request.model)
    if request.family == "chat":
        return framing.chat_body(reply, request.model)
    if request.family == "responses":
        return framing.responses_body(reply, request.model)
    return framing.gemini_body(reply, request.model)


def _asks_for_severity(body: Any) -> bool:
    # Claude Code's auto-mode safety classifier parses `<severity>N` (N < 50 allows).
    return "<severity>" in json.dumps(body)


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        total = 0
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return b"".join(parts)
            total += size
            if total > MAX_BODY_BYTES:
                raise ConnectionError("request body too large")
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
    length = int(headers.get("content-length", "0") or 0)
    if length > MAX_BODY_BYTES:
        raise ConnectionError("request body too large")
    return await reader.readexactly(length) if length else b""


def _decode_body(raw: bytes, headers: dict[str, str]) -> Any:
    encoding = headers.get("content-encoding", "").lower()
    try:
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        elif encoding not in ("", "identity"):
            return {"_undecoded": f"{len(raw)} bytes in {encoding}"}
    except (OSError, zlib.error) as error:
        return {"_undecoded": f"bad {encoding}: {error}"}
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace")


async def _respond(writer: asyncio.StreamWriter, status: int, payload: Any) -> None:
    data = b"" if payload is None else json.dumps(payload).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 431: "Too Large"}.get(status, "")
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n"
        "Connection: close\r\n\r\n"
    )
    writer.write(head.encode() + data)
    await writer.drain()


async def _start_stream(writer: asyncio.StreamWriter) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\n"
        b"Content-Type: text/event-stream\r\n"
        b"Cache-Control: no-cache\r\n"
        b"Connection: close\r\n\r\n"
    )
    await writer.drain()


async def _until_client_leaves(reader: asyncio.StreamReader) -> None:
    """Hold a stalled reply open until the client closes its end (a cancel) or the server stops."""
    while await reader.read(4096):
        pass


def main() -> None:
    """`python -m tests.model_server.server AGENT SCENARIO [name=value ...]`: serve until ^C."""
    import argparse

    from tests.model_server.script import load_script

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("agent")
    parser.add_argument("scenario")
    parser.add_argument("variables", nargs="*", help="name=value for ${name} in the script")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path, help="append every request (JSONL) here")
    args = parser.parse_args()
    variables = dict(v.split("=", 1) for v in args.variables)
    script = load_script(args.agent, args.scenario, **variables)
    with ModelServer(script, port=args.port, log_path=args.log) as server:
        print(f"scripted model at {server.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
