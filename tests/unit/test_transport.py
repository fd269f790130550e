"""The ACP transport: framing, malformed input, unknown methods, cancellation both ways."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from acpls.acp.transport import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RELEASE_AFTER_BYTES,
    REQUEST_CANCELLED,
    AcpError,
    AcpProtocol,
    LineReader,
)
from acpls.services.memory import release_free_heap


class Wire:
    def __init__(self) -> None:
        self.protocol = AcpProtocol()
        self.sent: list[dict[str, Any]] = []
        self.protocol.attach_writer(self._write)

    def _write(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        self.sent.append(json.loads(data))

    def feed(self, message: Any) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.protocol.feed_line(line)


def test_line_reader_splits_lines_across_chunks() -> None:
    lines: list[bytes] = []
    reader = LineReader(lines.append, max_line=100)
    reader.feed(b'{"a":1}\n{"b"')
    reader.feed(b':2}\n\n{"c":3')
    assert lines == [b'{"a":1}', b'{"b":2}', b""]
    assert reader.finish() == b'{"c":3'


def test_line_reader_drops_an_over_long_line_and_keeps_going(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lines: list[bytes] = []
    reader = LineReader(lines.append, max_line=10)
    reader.feed(b"x" * 8)
    reader.feed(b"y" * 8)  # now over the limit, still no newline
    reader.feed(b"zzz\nok\n")
    assert lines == [b"ok"]
    assert reader.dropped_lines == 1
    assert "longer than limits.maxLineBytes" in caplog.text


def test_line_reader_gives_a_large_held_lines_memory_back_once_it_is_gone() -> None:
    # A line held in pieces of RELEASE_AFTER_BYTES or more: its memory is given back after it
    # was dropped (too long) or handled; short lines and lines read in one piece never ask.
    big = RELEASE_AFTER_BYTES
    lines: list[bytes] = []
    releases: list[int] = []
    reader = LineReader(lines.append, max_line=2 * big, release_memory=lambda: releases.append(1))
    reader.feed(b"short\n" + b"a" * 10)
    reader.feed(b"b\n")
    assert (lines, releases) == ([b"short", b"a" * 10 + b"b"], [])
    reader.feed(b"x" * big + b"\n")  # one piece: nothing was held
    assert releases == []
    reader.feed(b"y" * (big - 1))
    reader.feed(b"y\n")
    assert len(lines[-1]) == big and releases == [1]
    reader.feed(b"z" * big)
    reader.feed(b"z" * big)
    reader.feed(b"z")  # over the limit while held: dropped
    assert releases == [1, 1] and reader.dropped_lines == 1
    reader.feed(b"z\nafter\n")
    assert lines[-1] == b"after" and releases == [1, 1]


def test_release_free_heap_runs_where_there_is_no_malloc_trim_too() -> None:
    release_free_heap()  # glibc: returns free pages; elsewhere: does nothing, never raises


def test_garbage_line_is_logged_and_connection_lives_on(caplog: pytest.LogCaptureFixture) -> None:
    wire = Wire()
    seen: list[Any] = []
    wire.protocol.notification_handlers["session/update"] = seen.append
    wire.feed(b"this is not json")
    wire.feed(b"\xff\xfe invalid utf-8")
    wire.feed({"jsonrpc": "2.0", "method": "session/update", "params": {"x": 1}})
    assert seen == [{"x": 1}]
    assert "not JSON" in caplog.text
    assert wire.sent == []


async def test_unknown_request_method_gets_method_not_found() -> None:
    wire = Wire()
    wire.feed({"jsonrpc": "2.0", "id": 7, "method": "acme/unknown", "params": {}})
    await asyncio.sleep(0)
    assert wire.sent[0]["id"] == 7
    assert wire.sent[0]["error"]["code"] == METHOD_NOT_FOUND


def test_underscore_notifications_are_ignored_quietly(caplog: pytest.LogCaptureFixture) -> None:
    wire = Wire()
    with caplog.at_level(logging.WARNING):
        wire.feed({"jsonrpc": "2.0", "method": "_zed/anything", "params": {}})
    assert wire.sent == []
    assert "_zed/anything" not in caplog.text


def test_wrong_shape_with_id_is_answered_invalid_request() -> None:
    wire = Wire()
    wire.feed({"jsonrpc": "2.0", "id": 3, "method": "fs/read_text_file", "params": "nope"})
    wire.feed({"jsonrpc": "1.0", "id": 4, "method": "x"})
    wire.feed([1, 2, 3])
    assert [m["error"]["code"] for m in wire.sent] == [INVALID_REQUEST, INVALID_REQUEST]
    assert [m["id"] for m in wire.sent] == [3, 4]


async def test_handler_result_and_acp_error_are_sent_back() -> None:
    wire = Wire()

    async def ok(params: Any) -> dict[str, Any]:
        return {"content": params["path"]}

    async def refuse(params: Any) -> dict[str, Any]:
        raise AcpError(-32602, "path must be absolute")

    wire.protocol.handlers.update({"fs/read_text_file": ok, "fs/write_text_file": refuse})
    wire.feed({"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file", "params": {"path": "/a"}})
    wire.feed({"jsonrpc": "2.0", "id": "w", "method": "fs/write_text_file", "params": {}})
    await asyncio.sleep(0.01)
    by_id = {m["id"]: m for m in wire.sent}
    assert by_id[1] == {"jsonrpc": "2.0", "id": 1, "result": {"content": "/a"}}
    assert by_id["w"]["error"] == {"code": -32602, "message": "path must be absolute"}


async def test_agent_cancel_request_cancels_our_handler() -> None:
    wire = Wire()
    started = asyncio.Event()

    async def slow(params: Any) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(10)
        return {}

    wire.protocol.handlers["session/request_permission"] = slow
    wire.feed({"jsonrpc": "2.0", "id": 9, "method": "session/request_permission", "params": {}})
    await started.wait()
    wire.feed({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 9}})
    await asyncio.sleep(0.01)
    assert wire.sent[-1]["id"] == 9
    assert wire.sent[-1]["error"]["code"] == REQUEST_CANCELLED


async def test_we_send_cancel_request_when_we_stop_waiting() -> None:
    wire = Wire()
    task = asyncio.ensure_future(wire.protocol.request("session/prompt", {"sessionId": "s"}))
    await asyncio.sleep(0)
    request = wire.sent[0]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wire.sent[-1] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": request["id"]},
    }


async def test_response_to_unknown_id_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    wire = Wire()
    wire.feed({"jsonrpc": "2.0", "id": 12345, "result": {}})
    assert "never sent" in caplog.text


async def test_error_response_raises_acp_error_with_code() -> None:
    wire = Wire()
    task = asyncio.ensure_future(wire.protocol.request("session/prompt", {}))
    await asyncio.sleep(0)
    msg_id = wire.sent[0]["id"]
    wire.feed(
        {
            "jsonrpc": "2.0",
            "id": msg_id,
            "error": {"code": -32000, "message": "Authentication required"},
        }
    )
    with pytest.raises(AcpError) as info:
        await task
    assert info.value.code == -32000


async def test_deeply_nested_json_does_not_crash(caplog: pytest.LogCaptureFixture) -> None:
    wire = Wire()
    wire.feed(b"[" * 100_000 + b"]" * 100_000)
    wire.feed({"jsonrpc": "2.0", "id": 1, "result": None})
    assert wire.sent == []


async def test_fail_pending_errors_every_waiting_request() -> None:
    wire = Wire()
    task = asyncio.ensure_future(wire.protocol.request("session/prompt", {}))
    await asyncio.sleep(0)
    wire.protocol.fail_pending("agent exited with status 1")
    with pytest.raises(AcpError, match="agent exited"):
        await task


def test_the_core_once_built_settles_the_collector() -> None:
    """bench P8 / E4: a 20,000-update load ran 14 middle and one full collection of every object
    the server made at start (75-100 ms of ~650 ms); once the hub exists, what exists is frozen
    (services/memory.py)."""
    import gc

    from acpls.server import create_server

    gc.unfreeze()
    try:
        server = create_server()
        assert gc.get_freeze_count() == 0
        hub = server.hub
        frozen = gc.get_freeze_count()
        assert frozen > 0
        assert server.hub is hub and gc.get_freeze_count() == frozen  # built once: frozen once
    finally:
        gc.unfreeze()
