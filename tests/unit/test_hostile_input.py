"""Regression tests for what the hostile agent and the frame fuzzer found (issue 7): each one a
message a broken or malicious agent can send, and what acpls must do with it."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from acpls.acp.models import OMITTED
from acpls.acp.transport import AcpProtocol, LineReader
from acpls.translate.follow import FollowTarget
from acpls.translate.session_updates import SessionUpdateNormalizer
from acpls.translate.tool_calls import editor_tool_call


class Wire:
    def __init__(self) -> None:
        self.protocol = AcpProtocol()
        self.sent: list[dict[str, Any]] = []
        self.protocol.attach_writer(lambda data: self.sent.append(json.loads(data)))

    def feed(self, message: Any) -> None:
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.protocol.feed_line(line)


async def test_agent_request_ids_do_not_collide_with_ours() -> None:
    """Both sides number requests from 1: the agent's request 1 must not take the place of ours."""
    wire = Wire()
    release = asyncio.Event()

    async def slow_read(params: Any) -> dict[str, Any]:
        await release.wait()
        return {"content": "x"}

    wire.protocol.handlers["fs/read_text_file"] = slow_read
    ours = asyncio.ensure_future(wire.protocol.request("session/prompt", {"sessionId": "s"}))
    await asyncio.sleep(0)
    (sent,) = wire.sent
    assert sent["method"] == "session/prompt"
    wire.feed({"jsonrpc": "2.0", "id": sent["id"], "method": "fs/read_text_file", "params": {}})
    await asyncio.sleep(0)
    wire.feed({"jsonrpc": "2.0", "id": sent["id"], "result": {"stopReason": "end_turn"}})
    assert await asyncio.wait_for(ours, 1) == {"stopReason": "end_turn"}
    release.set()
    await asyncio.sleep(0.01)
    assert wire.sent[-1] == {"jsonrpc": "2.0", "id": sent["id"], "result": {"content": "x"}}


async def test_fail_pending_fails_ours_and_cancels_theirs() -> None:
    wire = Wire()
    started = asyncio.Event()

    async def forever(params: Any) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(60)
        return {}

    wire.protocol.handlers["fs/read_text_file"] = forever
    ours = asyncio.ensure_future(wire.protocol.request("session/new", {}))
    wire.feed({"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file", "params": {}})
    await started.wait()
    wire.protocol.fail_pending("the agent exited")
    with pytest.raises(Exception, match="the agent exited"):
        await asyncio.wait_for(ours, 1)


async def test_an_acp_error_answer_logs_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    from acpls.acp.transport import AcpError

    wire = Wire()

    async def refuse(params: Any) -> Any:
        raise AcpError(-32602, "unknown sessionId")

    wire.protocol.handlers["fs/read_text_file"] = refuse
    with caplog.at_level(logging.DEBUG):
        for msg_id in range(20):
            wire.feed({"jsonrpc": "2.0", "id": msg_id, "method": "fs/read_text_file"})
        await asyncio.sleep(0.01)
    assert len(wire.sent) == 20 and all(m["error"]["code"] == -32602 for m in wire.sent)
    assert not [r for r in caplog.records if r.exc_info], (
        "an expected error answer logged a traceback"
    )


def test_invalid_utf8_is_replaced_and_the_message_kept(caplog: pytest.LogCaptureFixture) -> None:
    wire = Wire()
    got: list[Any] = []
    wire.protocol.notification_handlers["session/update"] = got.append
    line = b'{"jsonrpc": "2.0", "method": "session/update", "params": {"text": "a\xffb"}}'
    with caplog.at_level(logging.WARNING):
        wire.feed(line)
    assert got == [{"text": "a\ufffdb"}]
    assert "not valid UTF-8" in caplog.text


def test_over_long_line_does_not_prefix_the_next_one() -> None:
    lines: list[bytes] = []
    reader = LineReader(lines.append, max_line=8)
    reader.feed(b"12345")
    reader.feed(b"67890\nok\n")  # the long line ends in the same read as the next starts
    assert lines == [b"ok"]
    assert reader.dropped_lines == 1


@pytest.mark.parametrize(
    ("version", "update"),
    [
        (2, {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "v1 name in v2"}),
        (2, {"sessionUpdate": "message", "content": "not the editor's shape"}),
        (1, {"sessionUpdate": "tool_call", "toolCallId": "c1", "locations": 5}),
        (1, {"sessionUpdate": "plan", "entries": "not a list"}),
        (1, {"sessionUpdate": {"type": "x"}}),
        (2, {"sessionUpdate": 17}),
    ],
)
def test_raw_updates_never_reach_the_editor_under_a_normalised_name(
    version: int, update: dict[str, Any]
) -> None:
    result = SessionUpdateNormalizer(version).normalize(update)
    assert update not in result.editor_updates
    for sent in result.editor_updates:
        assert sent["sessionUpdate"] not in ("tool_call", "message", "plan") or sent is not update


def test_v1_terminal_output_meta_is_not_sent_with_the_tool_call() -> None:
    call = {
        "toolCallId": "c1",
        "_meta": {
            "terminal_info": {"terminal_id": "t"},
            "terminal_output": {"terminal_id": "t", "data": "\x1b]52;c;aGk=\x07"},
        },
    }
    assert editor_tool_call(call) == {
        "toolCallId": "c1",
        "_meta": {"terminal_info": {"terminal_id": "t"}},
    }
    plain = {"toolCallId": "c2", "_meta": {"k": 1}}
    assert editor_tool_call(plain) is plain


def test_follow_target_without_a_line() -> None:
    assert FollowTarget("s", "c", "/a", OMITTED).lsp_range() is None  # type: ignore[arg-type]
    assert FollowTarget("s", "c", "/a", "3").line is None  # type: ignore[arg-type]
    assert FollowTarget("s", "c", "/a", 3).lsp_range() == {
        "start": {"line": 2, "character": 0},
        "end": {"line": 2, "character": 0},
    }


def test_a_finished_message_is_remembered_by_its_digest_only() -> None:
    """Interleaved chunks and tool calls make a message per chunk: each must stay small."""
    from acpls.translate.session_updates import _Fingerprint

    blocks = [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "x"},
        {"type": "text", "text": "b"},
    ]
    fingerprint = _Fingerprint(blocks)
    digest = fingerprint.digest()
    fingerprint.freeze()
    assert fingerprint.digest() == digest
    assert fingerprint._done is None and fingerprint._run is None
    n = SessionUpdateNormalizer(1)
    for i in range(3):
        n.normalize(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"{i}"}}
        )
        n.normalize(
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "in_progress"}
        )
    frozen = [m.fingerprint._frozen is not None for m in n._messages.values()]
    assert frozen == [True, True, True]


async def test_updates_for_endless_unknown_sessions_are_bounded(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from acpls.core.hub import Hub
    from acpls.core.routing import EARLY_SESSIONS, EARLY_UPDATES_PER_SESSION
    from tests.fuzz.frame_fuzzer import FakeEditor

    hub = Hub(FakeEditor(str(tmp_path)), environ={}, state_dir=tmp_path / "state")
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
    # With no session/new in flight, an update for an id acpls does not hold is not kept at all.
    hub.router.on_session_update({"sessionId": "ended-1", "update": update})
    assert hub.router._early == {}
    # While one is in flight, they wait for the session it makes: bounded both ways.
    with caplog.at_level(logging.WARNING), hub.router.expecting_sessions():
        for i in range(5_000):
            hub.router.on_session_update({"sessionId": f"ghost-{i}", "update": update})
        for _ in range(EARLY_UPDATES_PER_SESSION + 10):
            hub.router.on_session_update({"sessionId": "ghost-0", "update": update})
    early = hub.router._early
    assert len(early) == EARLY_SESSIONS
    assert all(len(kept) <= EARLY_UPDATES_PER_SESSION for kept in early.values())
    assert 1 <= len([r for r in caplog.records if "unknown session" in r.message]) <= 6


async def test_large_answers_wait_for_a_slot_until_the_previous_are_written() -> None:
    """An agent asking for a big file a thousand times at once: acpls holds a few answers, not
    a thousand, whatever the order the event loop runs things in."""
    from acpls.acp.transport import HEAVY_AT_ONCE

    protocol = AcpProtocol()
    state = {"started": 0, "written": 0, "most": 0}

    def write(data: bytes) -> None:
        state["written"] += 1

    async def read(params: Any) -> dict[str, Any]:
        state["started"] += 1
        state["most"] = max(state["most"], state["started"] - state["written"])
        return {"content": "x" * 100_000}

    protocol.attach_writer(write)
    protocol.handlers["fs/read_text_file"] = read
    for msg_id in range(300):
        protocol.feed_line(
            json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "fs/read_text_file"}).encode()
        )
    for _ in range(200):
        await asyncio.sleep(0)
    assert state["written"] == 300
    assert state["most"] <= HEAVY_AT_ONCE


def test_a_replayed_message_is_remembered_by_its_digest_only() -> None:
    """A loaded session's messages (v1, no ids) are held until whole, then remembered: each by
    its digest alone, the same digest a live message of the same text has."""
    from acpls.translate.session_updates import _Fingerprint

    n = SessionUpdateNormalizer(1)
    n.replay_mode(True)
    for i in range(3):
        n.normalize(
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"{i}"}}
        )
        n.normalize({"sessionUpdate": "tool_call", "toolCallId": f"c{i}", "title": "t"})
    n.replay_mode(False)
    remembered = list(n._messages.values())
    assert [m.fingerprint._done is None and m.fingerprint._run is None for m in remembered] == [
        True
    ] * 3
    live = [_Fingerprint([{"type": "text", "text": f"{i}"}]).digest() for i in range(3)]
    assert [m.fingerprint.digest() for m in remembered] == live
