"""acpls against a hostile agent (tests/agents/hostile_agent.py), one test per way of breaking.

Each test checks what the issue asks of acpls whatever the agent does: it stays up, it answers every
editor request (`acpls.sessions` after the damage), every pending prompt ends (resolved or
cancelled), the damage is logged in words a user can act on, and memory is given back.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from acpls.acp.process import STDERR_LOG_BUDGET_PER_SECOND
from tests.e2e.conftest import agent_log, command, notifications, start
from tests.e2e.hostile_support import (
    ServerLog,
    capture_server_log,
    hostile,
    rss_mb,
    server_pid,
    wait_until,
)


@pytest.fixture
async def server_log(client: LanguageClient) -> AsyncIterator[ServerLog]:
    log = capture_server_log(client)
    yield log
    log.close()


def reports(log: Path) -> dict[str, Any]:
    """Everything the hostile agent reported, merged."""
    merged: dict[str, Any] = {}
    for message in agent_log(log):
        if "report" in message:
            merged.update(message["report"])
    return merged


def agent_text(client: LanguageClient) -> str:
    """Every agent message text the editor got, joined (the pump joins adjacent chunks)."""
    texts = []
    for params in notifications(client, "acpls/sessionUpdate"):
        update = params["update"]
        content = update.get("content")
        if update.get("role") != "agent":
            continue
        if update.get("sessionUpdate") == "message_chunk" and isinstance(content, dict):
            texts.append(content.get("text", ""))
        elif update.get("sessionUpdate") == "message" and isinstance(content, list):
            texts.extend(block.get("text", "") for block in content if isinstance(block, dict))
    return "".join(texts)


async def assert_serving(client: LanguageClient) -> dict[str, Any]:
    """acpls still answers the editor."""
    summary = await asyncio.wait_for(command(client, "acpls.sessions"), 10)
    assert isinstance(summary, dict) and isinstance(summary["sessions"], list)
    return summary


async def poll_async(check: Any, within: float, interval: float = 0.1) -> bool:
    """`check()` (a coroutine function) until it is true or `within` seconds passed."""
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(interval)
    return True


async def prompt(client: LanguageClient, text: str = "go", within: float = 60) -> Any:
    return await asyncio.wait_for(command(client, "acpls.prompt", {"text": text}), within)


async def load(client: LanguageClient, session_id: str) -> Any:
    return await command(client, "acpls.loadSession", {"sessionId": session_id})


async def test_garbage_lines_are_logged_and_the_turn_goes_on(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("garbage", log))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    assert "still here" in agent_text(client)
    answers = {m["id"]: m for m in agent_log(log) if "method" not in m and "id" in m}
    assert answers[101]["error"]["code"] == -32600  # method is a number
    assert answers[102]["error"]["code"] == -32600  # params is a number
    assert server_log.has("not JSON")
    assert server_log.has("invalid message")
    await assert_serving(client)


async def test_a_line_over_the_limit_is_dropped_and_its_memory_freed(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("huge_line", log))
    await command(client, "acpls.newSession")
    before = rss_mb(server_pid(client))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    assert reports(log)["huge_line_bytes"] > 64 * 1024 * 1024
    text = agent_text(client)
    assert "still here" in text
    assert len(text) < 1024, "the over-long line reached the editor"
    assert server_log.has("longer than limits.maxLineBytes")
    await assert_serving(client)
    after = rss_mb(server_pid(client))
    # The line was held up to 64 MiB; its pages go back to the OS (services/memory.py).
    assert after < before + 16, f"RSS grew from {before:.0f} to {after:.0f} MiB"


async def test_the_line_limit_is_a_setting(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    agent = hostile("huge_line", log, "--huge-bytes", str(2 * 1024 * 1024))
    await start(client, workspace, agent, limits={"maxLineBytes": 1024 * 1024})
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    assert "still here" in agent_text(client)
    assert server_log.has("longer than limits.maxLineBytes (1048576 bytes)")
    await assert_serving(client)


async def test_invalid_utf8_is_replaced_not_fatal(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("invalid_utf8", log))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    text = agent_text(client)
    assert "still here" in text
    assert "bad:\ufffd" in text and "\ufffd:end" in text, repr(text)
    assert server_log.has("not valid UTF-8")
    await assert_serving(client)


async def test_json_nested_100k_deep_is_refused(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("deep_json", log))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    assert "still here" in agent_text(client)
    assert server_log.has("not JSON")
    await assert_serving(client)


async def test_unknown_methods_and_update_types(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("unknown", log))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    answers = reports(log)["unknown_answers"]
    assert answers["u1"]["code"] == -32601
    assert answers["u2"]["code"] == -32601
    assert answers["u3"]["code"] in (-32600, -32602)
    assert answers["u4"]["code"] == -32602
    assert "still here" in agent_text(client)
    assert server_log.has("acme/notify")
    await assert_serving(client)


async def test_responses_to_ids_never_sent_are_ignored(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("stray_responses", log))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    assert "still here" in agent_text(client)
    assert server_log.has("never sent")
    await assert_serving(client)


async def test_reused_request_ids_are_each_answered(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("reused_ids", log))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    answers = reports(log)["reused_id_answers"]
    assert len(answers) == 3
    contents = sorted(a["result"]["content"] for a in answers if "result" in a)
    assert contents == sorted(
        [
            (workspace / "calc.py").read_text(),
            (workspace / "README.md").read_text(),
            (workspace / "calc.py").read_text(),
        ]
    )
    await assert_serving(client)


async def test_ten_thousand_permission_requests_are_bounded_and_all_answered(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    asked = asyncio.Event()
    release = asyncio.Event()

    async def hold(params: Any) -> Any:
        asked.set()
        await release.wait()  # the user is away; answered only when the test ends
        return {"optionId": None}

    client.answer_permission = hold
    await start(client, workspace, hostile("permission_flood", log))
    await command(client, "acpls.newSession")
    before = rss_mb(server_pid(client))
    turn = asyncio.ensure_future(prompt(client, within=120))
    await asyncio.wait_for(asked.wait(), 60)
    await server_log.wait_for("too many pending permission requests", 60)
    await assert_serving(client)
    await command(client, "acpls.cancel")
    result = await asyncio.wait_for(turn, 60)
    release.set()
    assert result["stopReason"] == "cancelled"
    report = reports(log)
    assert report["flood_answered"] == 10_000
    assert report["flood_outcomes"] == {"cancelled:": 10_000}
    assert len(client.permission_requests) <= 1000
    await assert_serving(client)
    after = rss_mb(server_pid(client))
    assert after < before + 64, f"RSS grew from {before:.0f} to {after:.0f} MiB"


async def test_stderr_flood_is_rate_limited_and_memory_stays_flat(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("stderr_flood", log))
    await command(client, "acpls.newSession")
    before = rss_mb(server_pid(client))
    started = time.monotonic()
    result = await prompt(client, within=120)
    assert result["stopReason"] == "end_turn"
    assert reports(log)["stderr_bytes"] >= 100 * 1024 * 1024
    await server_log.wait_for("not logged: rate limit", 10)
    # The limit is lines a second: a slow machine floods for longer (33 s at load 8) and logs
    # more, never more than the budget and its two notes for each second begun (plus acpls'
    # own few lines). Without the limit it would be every one of the flood's ~1M lines.
    seconds = math.ceil(time.monotonic() - started) + 1
    bound = (STDERR_LOG_BUDGET_PER_SECOND + 2) * seconds + 500
    assert len(server_log.lines) < bound, "the agent's flood reached the editor's log"
    await assert_serving(client)
    after = rss_mb(server_pid(client))
    assert after < before + 32, f"RSS grew from {before:.0f} to {after:.0f} MiB"


async def test_an_agent_that_stops_reading_is_stopped_before_memory_runs_out(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    (workspace / "big.txt").write_text("x" * (1024 * 1024 - 1) + "\n")
    limit = 8 * 1024 * 1024
    await start(client, workspace, hostile("no_read", log), limits={"maxAgentInputBytes": limit})
    assert (await prompt(client))["stopReason"] == "end_turn"  # a first, normal turn
    before = rss_mb(server_pid(client))
    with pytest.raises(JsonRpcException) as info:
        await prompt(client)
    assert "stopped reading its input" in str(info.value)
    await server_log.wait_for("stopping the agent: it stopped reading its input")
    # The log line comes first; the agent's exit and its sessions' close follow (under load,
    # later): poll for the outcome rather than read it right after the line.
    sessions: list[Any] = ["not asked yet"]

    async def sessions_left() -> bool:
        sessions[:] = (await assert_serving(client))["sessions"]
        return not sessions

    assert await poll_async(sessions_left, 30), f"sessions left after the stop: {sessions}"
    await asyncio.sleep(1)
    after = rss_mb(server_pid(client))
    print(f"RSS {before:.0f} -> {after:.0f} MiB")
    assert after < before + 48, f"RSS grew from {before:.0f} to {after:.0f} MiB"


async def test_crash_mid_turn_ends_the_turn_with_the_reason(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("crash", log), custom=False)
    with pytest.raises(JsonRpcException) as info:
        await prompt(client)
    assert "status 9" in str(info.value)
    await wait_until(lambda: client.messages, 5)
    errors = [m.message for m in client.messages if m.type == types.MessageType.Error]
    assert any("status 9" in e and "crashing in the middle" in e for e in errors), errors
    assert (await assert_serving(client))["sessions"] == []
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"acpls": {"agent": hostile("well_behaved", log)}}
        )
    )
    assert (await prompt(client))["stopReason"] == "end_turn"


async def test_crash_with_a_permission_prompt_open_withdraws_it_from_the_editor(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    asked = asyncio.Event()
    withdrawn = asyncio.Event()

    async def hold(params: Any) -> Any:
        asked.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            withdrawn.set()  # acpls sent $/cancelRequest
            raise
        return {"optionId": None}

    client.answer_permission = hold
    await start(client, workspace, hostile("crash", log))
    with pytest.raises(JsonRpcException) as info:
        await prompt(client)
    assert "status 9" in str(info.value)
    assert asked.is_set()
    await asyncio.wait_for(withdrawn.wait(), 5)
    statuses = notifications(client, "acpls/agentStatus")
    assert statuses[-1]["state"] == "failed" and "crashing in the middle" in statuses[-1]["message"]
    assert (await assert_serving(client))["sessions"] == []


async def test_exit_during_initialize_is_reported(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("exit_init", log))
    with pytest.raises(JsonRpcException) as info:
        await asyncio.wait_for(command(client, "acpls.newSession"), 30)
    assert "could not start" in str(info.value)
    statuses = notifications(client, "acpls/agentStatus")
    failed = [s for s in statuses if s["state"] == "failed"]
    assert failed and "giving up during initialize" in failed[-1]["message"], statuses
    assert "status 3" in failed[-1]["message"]
    await assert_serving(client)


async def test_half_written_line_then_exit(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("half_line", log))
    with pytest.raises(JsonRpcException) as info:
        await prompt(client)
    assert "exited" in str(info.value)
    await server_log.wait_for("in the middle of a line")
    assert (await assert_serving(client))["sessions"] == []


async def test_cancel_ends_the_turn_of_an_agent_that_never_answers(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("hang", log))
    turn = asyncio.ensure_future(prompt(client))
    assert await wait_until(lambda: "working on it" in agent_text(client), 20)
    await assert_serving(client)
    loop = asyncio.get_running_loop()
    cancelled_at = loop.time()
    await command(client, "acpls.cancel")
    result = await asyncio.wait_for(turn, 10)
    assert result["stopReason"] == "cancelled"
    assert loop.time() - cancelled_at < 5
    assert server_log.has("did not end the turn after cancel")
    assert any(m.get("method") == "session/cancel" for m in agent_log(log))
    summary = await assert_serving(client)
    assert [s.get("active") for s in summary["sessions"]] == [False]


async def test_load_without_replay_gives_an_empty_session(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("replay", log))
    loaded = await asyncio.wait_for(
        command(client, "acpls.loadSession", {"sessionId": "old-1"}), 20
    )
    assert loaded["sessionId"] == "old-1"
    assert [m["method"] for m in agent_log(log) if "method" in m][-1] == "session/load"
    assert HISTORY not in agent_text(client)
    summary = await assert_serving(client)
    assert [s["sessionId"] for s in summary["sessions"]] == ["old-1"]
    result = await asyncio.wait_for(
        command(client, "acpls.prompt", {"sessionId": "old-1", "text": "go"}), 20
    )
    assert result["stopReason"] == "end_turn"


HISTORY = "hello from the history"


async def test_replay_on_resume_reaches_the_editor_once(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("replay", log, "--no-load"))
    loaded = await asyncio.wait_for(
        command(client, "acpls.loadSession", {"sessionId": "old-2"}), 20
    )
    assert loaded["sessionId"] == "old-2"
    assert [m["method"] for m in agent_log(log) if "method" in m][-1] == "session/resume"
    assert await wait_until(lambda: HISTORY in agent_text(client), 5)
    again = await command(client, "acpls.loadSession", {"sessionId": "old-2"})
    assert again["sessionId"] == "old-2"
    result = await asyncio.wait_for(
        command(client, "acpls.prompt", {"sessionId": "old-2", "text": "go"}), 20
    )
    assert result["stopReason"] == "end_turn"
    assert agent_text(client).count(HISTORY) == 1
    calls = [
        p["update"]["toolCall"]
        for p in notifications(client, "acpls/sessionUpdate")
        if p["update"]["sessionUpdate"] == "tool_call"
    ]
    assert [c["toolCallId"] for c in calls].count("old-call") == 1
    assert server_log.has("replayed session old-2 on session/resume")
    await assert_serving(client)


async def test_content_update_that_wipes_a_diff_keeps_the_edit(
    client, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("wipe_diff", log))
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    calls = [
        p["update"]["toolCall"]
        for p in notifications(client, "acpls/sessionUpdate")
        if p["update"]["sessionUpdate"] == "tool_call"
    ]
    final = calls[-1]
    assert final["toolCallId"] == "edit-1" and final["status"] == "completed"
    kinds = [item["type"] for item in final["content"]]
    assert "diff" in kinds, f"the diff the user has to review was lost: {final['content']}"
    diff = next(item for item in final["content"] if item["type"] == "diff")
    assert diff["newText"] == "def add(a, b):\n    return a + b\n"
    assert "content" in kinds  # the agent's own text is kept too
    assert server_log.has("dropped its diff")
    await assert_serving(client)


def terminal_text(client: LanguageClient) -> str:
    return "".join(p["text"] for p in notifications(client, "acpls/terminalOutput"))


@pytest.mark.parametrize("raw", [False, True])
async def test_terminal_control_strings_are_sanitised_unless_raw(
    client, workspace: Path, tmp_path: Path, raw: bool
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, hostile("osc", log), terminal={"rawOutput": raw})
    result = await prompt(client)
    assert result["stopReason"] == "end_turn"
    assert await wait_until(lambda: "end" in terminal_text(client), 5)
    text = terminal_text(client)
    assert "\x1b[31mred\x1b[0m" in text and "\x1b[2;5H" in text
    assert "https://example.com" in text
    dangerous = ["]52;", "javascript:", "evil title"]
    if raw:
        assert all(d in text for d in dangerous), repr(text)
    else:
        assert not any(d in text for d in dangerous), repr(text)
    # Nothing sent to the editor elsewhere carries them either (the tool call keeps no output).
    dumped = json.dumps(notifications(client, "acpls/sessionUpdate"))
    assert "javascript:" not in dumped or raw
    await assert_serving(client)
