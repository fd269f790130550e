"""ACP habits of the published agents (tests/real_agents/README.md, issue #11 item 3), each
reproduced by the scripted agent and driven through the real acpls in custom mode: what the editor
gets must be what the agent meant, and acpls must go on answering."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.agents import script_command
from tests.e2e.conftest import agent_log, as_dict, command, notifications, scripted, start
from tests.e2e.disk_editor import disk_editor
from tests.e2e.hostile_support import ServerLog, capture_server_log


@pytest.fixture
async def server_log(client: LanguageClient) -> AsyncIterator[ServerLog]:
    log = capture_server_log(client)
    yield log
    log.close()


def scripted_file(script: Path, log: Path) -> dict[str, Any]:
    argv = script_command(script, log)
    return {"command": argv[0], "args": argv[1:]}


def updates(client: LanguageClient) -> list[dict[str, Any]]:
    return [as_dict(p)["update"] for p in notifications(client, "acpls/sessionUpdate")]


def tool_call(client: LanguageClient, call_id: str) -> dict[str, Any]:
    """The tool call's last merged state as the editor got it."""
    states = [
        u["toolCall"]
        for u in updates(client)
        if u.get("sessionUpdate") == "tool_call" and u["toolCall"]["toolCallId"] == call_id
    ]
    assert states, updates(client)
    return states[-1]


def answers(log: Path, msg_id: Any) -> list[dict[str, Any]]:
    """acpls' answers to the agent's request `msg_id` (from the agent's own log)."""
    return [m for m in agent_log(log) if "method" not in m and m.get("id") == msg_id]


def allow_first(client: LanguageClient) -> None:
    def answer(params: Any) -> dict[str, Any]:
        return {"optionId": as_dict(params)["options"][0]["optionId"]}

    client.answer_permission = answer  # type: ignore[attr-defined]


OPTIONS = [
    {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
]


async def test_tool_call_first_seen_in_a_permission_request(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    """Gemini CLI: an edit's tool call appears only in `session/request_permission`; later updates
    of it are merged into that tool call, and the prompt's preview is its diff."""
    calc = workspace / "calc.py"
    old = calc.read_text()
    new = old.replace("a - b", "a + b")
    log = tmp_path / "agent.jsonl"
    steps = [
        {"request": "session/request_permission", "params": {
            "sessionId": "$sessionId", "options": OPTIONS,
            "toolCall": {"toolCallId": "g1", "title": "Edit calc.py", "kind": "edit",
                         "status": "pending", "locations": [{"path": str(calc)}],
                         "content": [{"type": "diff", "path": str(calc), "oldText": old,
                                      "newText": new}]}},
         "expect": {"outcome": {"outcome": "selected", "optionId": "proceed_once"}}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "g1",
                    "status": "completed"}},
    ]  # fmt: skip
    allow_first(client)
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    result = await command(client, "acpls.prompt", {"text": "fix"})
    assert result["stopReason"] == "end_turn", agent_log(log)
    (asked,) = [as_dict(p) for p in client.permission_requests]  # type: ignore[attr-defined]
    assert asked["toolCall"]["toolCallId"] == "g1"
    (change,) = asked["preview"]["documentChanges"]
    assert change["edits"][0]["newText"] == "    return a + b\n", asked
    call = tool_call(client, "g1")
    assert call["status"] == "completed" and call["title"] == "Edit calc.py", call
    assert call["kind"] == "edit" and call["locations"] == [{"path": str(calc)}], call


async def test_permission_request_before_its_tool_call(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    """Codex: the exec permission request comes first, its `tool_call` afterwards with the same
    id: one tool call, asked about once, that ends completed with the command's output."""
    log = tmp_path / "agent.jsonl"
    steps = [
        {"request": "session/request_permission", "params": {
            "sessionId": "$sessionId", "options": OPTIONS,
            "toolCall": {"toolCallId": "c1", "title": "make test", "kind": "execute",
                         "status": "pending"}},
         "expect": {"outcome": {"outcome": "selected"}}},
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "make test",
                    "kind": "execute", "status": "in_progress",
                    "rawInput": {"command": ["make", "test"]}}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "c1",
                    "status": "completed", "rawOutput": {"stdout": "all passed\n"}}},
    ]  # fmt: skip
    allow_first(client)
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    result = await command(client, "acpls.prompt", {"text": "test"})
    assert result["stopReason"] == "end_turn", agent_log(log)
    assert len(client.permission_requests) == 1  # type: ignore[attr-defined]
    call = tool_call(client, "c1")
    assert call["status"] == "completed" and call["rawInput"] == {"command": ["make", "test"]}
    assert call["rawOutput"] == {"stdout": "all passed\n"}, call
    ids = {u["toolCall"]["toolCallId"] for u in updates(client) if "toolCall" in u}
    assert ids == {"c1"}


async def test_tool_call_that_never_goes_in_progress(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    """Claude Code: `pending` with no locations, locations in a later update, then `completed`
    without `in_progress`: the editor follows the location and sees the call completed."""
    calc = workspace / "calc.py"
    log = tmp_path / "agent.jsonl"
    steps = [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "r1", "title": "Read",
                    "kind": "read", "status": "pending", "locations": []}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "r1",
                    "title": "Read calc.py", "locations": [{"path": str(calc), "line": 2}]}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "r1",
                    "status": "completed"}},
    ]  # fmt: skip
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    result = await command(client, "acpls.prompt", {"text": "read"})
    assert result["stopReason"] == "end_turn"
    call = tool_call(client, "r1")
    assert call["status"] == "completed" and call["title"] == "Read calc.py", call
    follows = [as_dict(p) for p in notifications(client, "acpls/followAgent")]
    assert [f["uri"] for f in follows] == [calc.as_uri()], follows


async def test_agent_request_id_zero_is_answered(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    """Claude Code numbers its requests to the client from 0: id 0 is a request like any other."""
    calc = workspace / "calc.py"
    log = tmp_path / "agent.jsonl"
    read = {"jsonrpc": "2.0", "id": 0, "method": "fs/read_text_file",
            "params": {"sessionId": "$sessionId", "path": str(calc)}}  # fmt: skip
    steps = [{"send": read}, {"sleep": 0.5}]
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "read"})
    (answer,) = answers(log, 0)
    assert answer.get("result") == {"content": calc.read_text()}, answer


async def test_available_commands_before_the_session_new_result(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    """Copilot CLI: `available_commands_update` for the new session arrives before the
    `session/new` result: the editor still gets the commands, for that session."""
    log = tmp_path / "agent.jsonl"
    commands = [{"name": "review", "description": "Review the changes"}]
    early = {"jsonrpc": "2.0", "method": "session/update", "params": {
        "sessionId": "early-1", "update": {"sessionUpdate": "available_commands_update",
                                           "availableCommands": commands}}}  # fmt: skip
    script = {
        "protocol": 1,
        "on_new_session": [{"send": early}, {"respond": {"sessionId": "early-1"}}],
    }
    await start(client, workspace, scripted(script, log))
    session = await command(client, "acpls.newSession", {})
    assert session["sessionId"] == "early-1"
    got = [
        as_dict(p)
        for p in notifications(client, "acpls/sessionUpdate")
        if as_dict(p)["update"].get("sessionUpdate") == "available_commands"
    ]
    assert [g["sessionId"] for g in got] == ["early-1"], got
    assert got[0]["update"]["availableCommands"][0]["name"] == "review", got


URL_MODE = "https://agentclientprotocol.com/protocol/session-modes#"


async def test_mode_ids_that_are_urls(client: LanguageClient, workspace: Path, tmp_path: Path):
    """Copilot CLI: mode ids are URLs; they are passed through unchanged both ways."""
    log = tmp_path / "agent.jsonl"
    modes = {
        "currentModeId": URL_MODE + "agent",
        "availableModes": [
            {"id": URL_MODE + "agent", "name": "Agent"},
            {"id": URL_MODE + "plan", "name": "Plan"},
        ],
    }
    script = {
        "protocol": 1,
        "on_new_session": {"sessionId": "m1", "modes": modes},
        "on_set_mode": [
            {"update": {"sessionUpdate": "current_mode_update", "currentModeId": URL_MODE + "plan"}}
        ],
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.newSession", {})
    await command(client, "acpls.setMode", {"sessionId": "m1", "modeId": URL_MODE + "plan"})
    sent = [m["params"] for m in agent_log(log) if m.get("method") == "session/set_mode"]
    assert sent == [{"sessionId": "m1", "modeId": URL_MODE + "plan"}]
    shown: list[dict[str, Any]] = []
    for _ in range(100):  # the agent's current_mode_update reaches the editor with the next flush
        shown = [u for u in updates(client) if u.get("sessionUpdate") == "modes"]
        if shown[-1]["currentModeId"] == URL_MODE + "plan":
            break
        await asyncio.sleep(0.05)
    assert shown[0]["currentModeId"] == URL_MODE + "agent", shown
    assert shown[-1]["currentModeId"] == URL_MODE + "plan", shown
    assert [m["id"] for m in shown[-1]["availableModes"]] == [URL_MODE + "agent", URL_MODE + "plan"]


async def test_a_570_kb_single_line(client: LanguageClient, workspace: Path, tmp_path: Path):
    """Qwen Code: its first `available_commands_update` is one ~570 KB line."""
    log = tmp_path / "agent.jsonl"
    commands = [{"name": f"cmd{n}", "description": "x" * 560} for n in range(1000)]
    update = {"sessionUpdate": "available_commands_update", "availableCommands": commands}
    steps = [{"update": update}]
    assert len(json.dumps({"params": {"update": update}})) > 570_000
    script = tmp_path / "script.json"  # too long for a command line
    script.write_text(json.dumps({"protocol": 1, "on_prompt": steps}), encoding="utf-8")
    await start(client, workspace, scripted_file(script, log))
    result = await command(client, "acpls.prompt", {"text": "hi"})
    assert result["stopReason"] == "end_turn"
    (got,) = [u for u in updates(client) if u.get("sessionUpdate") == "available_commands"]
    assert len(got["availableCommands"]) == 1000
    assert got["availableCommands"][999]["description"] == "x" * 560


async def test_unknown_requests_answered_and_notifications_logged_once(
    client: LanguageClient, server_log: ServerLog, workspace: Path, tmp_path: Path
):
    """Qwen Code: `craft/drainMidTurnQueue` (a request) is answered -32601 every time, and
    `qwen/notify/session/mode-update` (a notification) is ignored; each is logged once, not once
    per message."""
    log = tmp_path / "agent.jsonl"
    steps: list[dict[str, Any]] = []
    for n in range(3):
        steps.append({"send": {"jsonrpc": "2.0", "id": f"q{n}", "method": "craft/drainMidTurnQueue",
                               "params": {"sessionId": "$sessionId"}}})  # fmt: skip
        steps.append({"send": {"jsonrpc": "2.0", "method": "qwen/notify/session/mode-update",
                               "params": {"sessionId": "$sessionId", "mode": "default"}}})  # fmt: skip
    steps.append({"sleep": 0.5})
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    result = await command(client, "acpls.prompt", {"text": "hi"})
    assert result["stopReason"] == "end_turn"
    for n in range(3):
        (answer,) = answers(log, f"q{n}")
        assert answer["error"]["code"] == -32601, answer
    assert (await command(client, "acpls.sessions", {}))["sessions"]
    text = server_log.text()
    assert text.count("unknown method 'craft/drainMidTurnQueue'") == 1, text
    assert text.count("unknown method 'qwen/notify/session/mode-update'") == 1, text


async def test_warning_sent_as_message_text(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    """Codex: warnings arrive as ordinary agent message text; they reach the editor as such, in
    order with the answer."""
    log = tmp_path / "agent.jsonl"
    warning = "⚠ Under-development features enabled: apply_patch_freeform.\n"
    steps = [
        {"update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": warning}}},
        {"update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "Done."}}},
    ]  # fmt: skip
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "hi"})
    texts = [
        u["content"]["text"]
        for u in updates(client)
        if u.get("sessionUpdate") == "message_chunk" and u.get("role") == "agent"
    ]
    assert "".join(texts) == warning + "Done.", texts


SHOP = "def total(prices):\n    return sum(prices)\n"
SHOP_EDITED = "def total(prices):\n    return round(sum(prices), 2)\n"
SHOP_UNSAVED = "def total(prices):\n    return sum(prices)  # mine, not saved\n"


def writes_disk_then_client(shop: Path, settle: float) -> list[dict[str, Any]]:
    """OpenCode: an allowed edit is written to disk by its own tool and sent as
    `fs/write_text_file` with the same whole text; the disk write may land first (`settle`: how
    long before the request, so acpls' watcher has seen the write or not)."""
    return [
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "o1", "title": "edit",
                    "kind": "edit", "status": "in_progress",
                    "locations": [{"path": str(shop)}]}},
        {"disk": {"op": "write", "path": str(shop), "text": SHOP_EDITED}},
        {"sleep": settle},
        {"request": "fs/write_text_file",
         "params": {"sessionId": "$sessionId", "path": str(shop), "content": SHOP_EDITED},
         "save": "w"},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "o1",
                    "status": "completed"}},
    ]  # fmt: skip


@pytest.mark.parametrize("settle", [0.0, 1.0], ids=["request-first", "watcher-first"])
async def test_disk_write_before_the_same_client_write_asks_nothing(
    workspace: Path, tmp_path: Path, server_env: dict[str, str], settle: float
):
    """OpenCode: its own disk write lands before its `fs/write_text_file` of the same text. The
    open buffer had no unsaved changes (it held the disk's text from before the write): nothing
    of the user's is at stake, so acpls asks nothing and the buffer gets the agent's text."""
    shop = workspace / "shop.py"
    shop.write_text(SHOP)
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_prompt": writes_disk_then_client(shop, settle)}
    async with disk_editor(server_env) as editor:
        await start(editor.client, workspace, scripted(script, log))
        editor.open(shop)
        result = await asyncio.wait_for(command(editor.client, "acpls.prompt", {"text": "go"}), 30)
        assert result["stopReason"] == "end_turn", agent_log(log)
        assert editor.message_requests == [] and editor.conflicts == [], editor.message_requests
        (write,) = [m for m in agent_log(log) if "method" not in m and "result" in m]
        assert write["result"] == {} or write["result"] is None, agent_log(log)
        assert editor.buffers[shop.as_uri()] == SHOP_EDITED
        assert shop.read_text() == SHOP_EDITED


async def test_disk_write_before_the_same_client_write_still_asks_over_unsaved_text(
    workspace: Path, tmp_path: Path, server_env: dict[str, str]
):
    """The same habit with the user's unsaved text in the buffer: acpls still asks before the
    agent's `fs/write_text_file` replaces it, and "Keep mine" keeps it."""
    shop = workspace / "shop.py"
    shop.write_text(SHOP)
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_prompt": writes_disk_then_client(shop, 1.0)}
    async with disk_editor(server_env) as editor:
        editor.answer_message = lambda params: "Keep mine"
        editor.answer_conflict = lambda params: {"choice": "keepMine"}
        await start(editor.client, workspace, scripted(script, log))
        editor.open(shop, SHOP_UNSAVED)
        result = await asyncio.wait_for(command(editor.client, "acpls.prompt", {"text": "go"}), 30)
        assert result["stopReason"] == "end_turn", agent_log(log)
        asked = [m.message for m in editor.message_requests]
        assert any("unsaved changes" in m and str(shop) in m for m in asked), asked
        (write,) = [m for m in agent_log(log) if "method" not in m and "error" in m]
        assert "kept their unsaved changes" in write["error"]["message"], write
        assert editor.buffers[shop.as_uri()] == SHOP_UNSAVED
