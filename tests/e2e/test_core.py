"""The core, end to end: real acpls, scripted ACP agent, a generic or custom-mode LSP client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import agent_log, command, notifications, scripted, start

OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    {"optionId": "never", "name": "Never", "kind": "reject_always"},
    {"optionId": "team", "name": "Ask my team", "kind": "_acme_escalate"},
    {"optionId": "later", "name": "Later", "kind": "defer"},
]


def permission_script(protocol: int, options: list[dict[str, Any]] = OPTIONS) -> dict[str, Any]:
    tool_call = {
        "toolCallId": "edit-1",
        "title": "Edit calc.py",
        "kind": "edit",
        "status": "pending",
        "content": [
            {
                "type": "diff",
                "path": "$cwd/calc.py",
                "oldText": "def add(a, b):\n    return a - b\n",
                "newText": "def add(a, b):\n    return a + b\n",
            }
        ],
    }
    if protocol == 1:
        params = {"sessionId": "$sessionId", "toolCall": tool_call, "options": options}
        first = {"update": {"sessionUpdate": "tool_call", **tool_call}}
    else:
        params = {
            "sessionId": "$sessionId",
            "title": "Edit calc.py",
            "subject": {"type": "tool_call", "toolCall": tool_call},
            "options": options,
        }
        first = {"update": {"sessionUpdate": "tool_call_update", **tool_call}}
    return {
        "protocol": protocol,
        "on_prompt": [first, {"request": "session/request_permission", "params": params}],
    }


def permission_answers(log: Path) -> list[Any]:
    return [
        m.get("result", m.get("error"))
        for m in agent_log(log)
        if "method" not in m and isinstance(m.get("result"), dict) and "outcome" in m["result"]
    ]


# -- generic mode ---------------------------------------------------------------------------------


async def test_generic_prompt_follows_with_show_document(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1, **_basic_steps()}, log), custom=False)
    result = await command(client, "acpls.prompt", {"text": "hello"})
    assert result["stopReason"] == "end_turn"
    shown = client.shown_documents
    assert shown, "follow-along sent no window/showDocument"
    doc = shown[-1]
    assert doc.uri == (workspace / "README.md").as_uri()
    assert doc.take_focus is False
    assert doc.selection.start == types.Position(line=2, character=0)
    assert any("finished (end_turn)" in m.message for m in client.messages)
    received = [m["method"] for m in agent_log(log) if "method" in m]
    assert received[:3] == ["initialize", "session/new", "session/prompt"]


def _basic_steps() -> dict[str, Any]:
    return {
        "on_prompt": [
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "Hi"},
                }
            },
            {
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "c1",
                    "title": "Read README.md",
                    "kind": "read",
                    "status": "in_progress",
                    "locations": [{"path": "$cwd/README.md", "line": 3}],
                }
            },
            {
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "c1",
                    "status": "completed",
                }
            },
        ]
    }


@pytest.mark.parametrize("protocol", [1, 2])
async def test_generic_permission_offers_every_option_in_order(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    client.answer_message_request = lambda p: types.MessageActionItem(title="Ask my team")
    await start(client, workspace, scripted(permission_script(protocol), log), custom=False)
    await command(client, "acpls.prompt", {"text": "fix it"})
    request = client.message_requests[0]
    assert [a.title for a in request.actions] == [o["name"] for o in OPTIONS]
    assert "Edit calc.py" in request.message
    assert "calc.py +1 -1" in request.message
    assert permission_answers(log) == [{"outcome": {"outcome": "selected", "optionId": "team"}}]


async def test_generic_dismissed_permission_selects_reject_once(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted(permission_script(1), log), custom=False)
    await command(client, "acpls.prompt", {"text": "fix it"})
    assert permission_answers(log) == [{"outcome": {"outcome": "selected", "optionId": "reject"}}]


async def test_generic_dismissed_without_reject_once_is_cancelled(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    options = [o for o in OPTIONS if o["kind"] != "reject_once"]
    await start(client, workspace, scripted(permission_script(1, options), log), custom=False)
    await command(client, "acpls.prompt", {"text": "fix it"})
    assert permission_answers(log) == [{"outcome": {"outcome": "cancelled"}}]


async def test_cancel_answers_pending_permission_cancelled(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    asked = asyncio.Event()
    released = asyncio.Event()

    async def never_answer(params: Any) -> Any:
        asked.set()
        await released.wait()  # the user walked away; answered only when the test ends

    client.answer_message_request = never_answer
    script = permission_script(1)
    script["on_prompt"].append({"wait_cancel": True})
    await start(client, workspace, scripted(script, log), custom=False)
    prompt = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "fix it"}))
    await asyncio.wait_for(asked.wait(), 10)
    await command(client, "acpls.cancel", {})
    result = await asyncio.wait_for(prompt, 10)
    released.set()
    assert result["stopReason"] == "cancelled"
    assert permission_answers(log) == [{"outcome": {"outcome": "cancelled"}}]


async def test_fs_read_answers_from_unsaved_buffer(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "fs/read_text_file",
                "params": {
                    "sessionId": "$sessionId",
                    "path": "$cwd/calc.py",
                    "line": 2,
                    "limit": 1,
                },
                "expect": {"content": "    return a * b  # unsaved\n"},
            }
        ],
    }
    await start(client, workspace, scripted(script, log), custom=False)
    uri = (workspace / "calc.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="python",
                version=1,
                text="def add(a, b):\n    return a * b  # unsaved\n",
            )
        )
    )
    result = await command(client, "acpls.prompt", {"text": "read"})
    assert result["stopReason"] == "end_turn"
    reads = [m for m in agent_log(log) if "result" in m and "content" in (m["result"] or {})]
    assert reads[0]["result"]["content"] == "    return a * b  # unsaved\n"
    assert client.shown_documents[-1].uri == uri
    assert client.shown_documents[-1].selection.start.line == 1


async def test_fs_write_lands_through_apply_edit(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "fs/write_text_file",
                "params": {
                    "sessionId": "$sessionId",
                    "path": "$cwd/calc.py",
                    "content": "def add(a, b):\n    return a + b\n",
                },
                "expect": {},
            },
            {
                "request": "fs/write_text_file",
                "params": {"sessionId": "$sessionId", "path": "$cwd/new.py", "content": "x = 1\n"},
                "expect": {},
            },
        ],
    }
    await start(client, workspace, scripted(script, log), custom=False)
    await command(client, "acpls.prompt", {"text": "write"})
    first, second = client.edits
    change = first.edit.document_changes[0]
    assert change.text_document.uri == (workspace / "calc.py").as_uri()
    assert [e.new_text for e in change.edits] == ["    return a + b\n"]
    assert change.edits[0].range.start.line == 1
    kinds = [type(c).__name__ for c in second.edit.document_changes]
    assert kinds == ["CreateFile", "TextDocumentEdit"]


async def test_relative_path_is_refused_with_invalid_params(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_prompt": [
            {
                "request": "fs/read_text_file",
                "params": {"sessionId": "$sessionId", "path": "calc.py"},
                "expect": {"error": {"code": -32602}},
            }
        ],
    }
    await start(client, workspace, scripted(script, log), custom=False)
    result = await command(client, "acpls.prompt", {"text": "read"})
    assert result["stopReason"] == "end_turn"


async def test_agent_crash_mid_turn_is_reported_and_next_prompt_restarts(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_prompt": [{"stderr": "scripted agent: crashing on purpose"}, {"crash": 42}],
    }
    await start(client, workspace, scripted(script, log), custom=False)
    with pytest.raises(JsonRpcException) as info:
        await command(client, "acpls.prompt", {"text": "crash"})
    assert "42" in str(info.value) or "exited" in str(info.value)
    await asyncio.sleep(0.2)
    errors = [m.message for m in client.messages if m.type == types.MessageType.Error]
    assert any("status 42" in e and "crashing on purpose" in e for e in errors), errors
    # A fresh agent process would replay the same script; point the next start at a calm one.
    calm = {"protocol": 1, **_basic_steps()}
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"acpls": {"agent": scripted(calm, log)}})
    )
    result = await command(client, "acpls.prompt", {"text": "again"})
    assert result["stopReason"] == "end_turn"


async def test_garbage_on_agent_stdout_does_not_break_the_connection(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 2,
        "on_prompt": [
            {"raw": "this is not JSON"},
            {"raw": '{"jsonrpc": "2.0", "id": 99, "method": 5}'},
            {
                "update": {
                    "sessionUpdate": "agent_message",
                    "messageId": "m1",
                    "content": [{"type": "text", "text": "still here"}],
                }
            },
        ],
    }
    await start(client, workspace, scripted(script, log))
    result = await command(client, "acpls.prompt", {"text": "hi"})
    assert result["stopReason"] == "end_turn"
    updates = [p["update"] for p in notifications(client, "acpls/sessionUpdate")]
    assert any(
        u.get("sessionUpdate") == "message" and u["content"][0]["text"] == "still here"
        for u in updates
    )
    errors = [m for m in agent_log(log) if "error" in m and m.get("id") == 99]
    assert errors and errors[0]["error"]["code"] == -32600


async def test_agent_that_cannot_start_is_reported(client, workspace: Path):
    await start(client, workspace, {"command": "/nonexistent/agent-binary"}, custom=False)
    with pytest.raises(JsonRpcException):
        await command(client, "acpls.newSession", {})
    errors = [m.message for m in client.messages if m.type == types.MessageType.Error]
    assert any("/nonexistent/agent-binary" in e for e in errors), errors


async def test_wrong_command_arguments_get_invalid_params(client, workspace: Path):
    await start(client, workspace, "demo", custom=False)
    with pytest.raises(JsonRpcException) as info:
        await command(client, "acpls.prompt", {"text": 5})
    assert info.value.code == -32602
    with pytest.raises(JsonRpcException) as info:
        await command(client, "acpls.setFollow", {"enabled": "yes"})
    assert info.value.code == -32602


# -- custom mode ----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", [1, 2])
async def test_custom_mode_sends_normalised_updates_and_follow(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": protocol, **_basic_steps()}, log))
    result = await command(client, "acpls.prompt", {"text": "hello"})
    assert result["stopReason"] == "end_turn"
    updates = [p["update"] for p in notifications(client, "acpls/sessionUpdate")]
    kinds = [u["sessionUpdate"] for u in updates]
    assert "message_chunk" in kinds and "tool_call" in kinds
    assert kinds[-1] == "state" and updates[-1]["state"] == "idle"
    calls = [u["toolCall"] for u in updates if u["sessionUpdate"] == "tool_call"]
    assert calls[-1]["status"] == "completed" and calls[-1]["title"] == "Read README.md"
    follows = notifications(client, "acpls/followAgent")
    assert follows[-1]["uri"] == (workspace / "README.md").as_uri()
    assert follows[-1]["range"]["start"] == {"line": 2, "character": 0}
    assert client.shown_documents == []


@pytest.mark.parametrize("protocol", [1, 2])
async def test_custom_permission_with_preview(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    client.answer_permission = lambda p: {"optionId": "later"}
    await start(client, workspace, scripted(permission_script(protocol), log))
    await command(client, "acpls.prompt", {"text": "fix"})
    (request,) = client.permission_requests
    assert [o["kind"] for o in request["options"]] == [o["kind"] for o in OPTIONS]
    preview = request["preview"]
    (change,) = preview["documentChanges"]
    assert change["textDocument"]["uri"] == (workspace / "calc.py").as_uri()
    assert change["edits"][0]["newText"] == "    return a + b\n"
    annotation = preview["changeAnnotations"][change["edits"][0]["annotationId"]]
    assert annotation["needsConfirmation"] is True
    assert permission_answers(log) == [{"outcome": {"outcome": "selected", "optionId": "later"}}]
    assert client.message_requests == []


async def test_custom_permission_dismissed_with_null(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    client.answer_permission = lambda p: {"optionId": None}
    await start(client, workspace, scripted(permission_script(2), log))
    await command(client, "acpls.prompt", {"text": "fix"})
    assert permission_answers(log) == [{"outcome": {"outcome": "selected", "optionId": "reject"}}]


async def test_v2_unknown_update_types_are_forwarded_raw(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    odd = {
        "sessionUpdate": "_acme_progress",
        "percent": 40,
        "_meta": {"zed.dev": 1, "_x": 2, "class": 3},
    }
    script = {"protocol": 2, "on_prompt": [{"update": odd}]}
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "hi"})
    updates = [p["update"] for p in notifications(client, "acpls/sessionUpdate")]
    assert odd in updates


async def test_initialize_result_advertises_acpls(client, workspace: Path):
    result = await start(client, workspace, "demo")
    assert result.capabilities.experimental == {"acpls": {"version": 1}}
    provider = result.capabilities.execute_command_provider
    assert provider is not None
    commands = provider.commands
    assert {"acpls.newSession", "acpls.prompt", "acpls.cancel", "acpls.setFollow"} <= set(commands)


# -- sessions, modes and config --------------------------------------------------------------------


async def test_load_session_v1_replays_history_to_the_editor(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    old = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "old answer"},
    }
    script = {
        "protocol": 1,
        "on_initialize": {"agentCapabilities": {"loadSession": True}},
        "on_load": [{"update": old}],
    }
    await start(client, workspace, scripted(script, log))
    result = await command(client, "acpls.loadSession", {"sessionId": "earlier-1"})
    assert result["sessionId"] == "earlier-1"
    updates = [
        p for p in notifications(client, "acpls/sessionUpdate") if p["sessionId"] == "earlier-1"
    ]
    # A v1 replay carries no message ids, so acpls sends each replayed message whole.
    messages = [u["update"] for u in updates if u["update"]["sessionUpdate"] == "message"]
    assert [(m["role"], m["content"][0]["text"]) for m in messages] == [("agent", "old answer")]
    loads = [m for m in agent_log(log) if m.get("method") == "session/load"]
    assert loads[0]["params"]["sessionId"] == "earlier-1"
    assert loads[0]["params"]["mcpServers"] == []


async def test_list_sessions_passes_the_agents_answer(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": 1,
        "on_initialize": {"agentCapabilities": {"sessionCapabilities": {"list": {}}}},
        "on_list": {"sessions": [{"sessionId": "a", "cwd": "/elsewhere", "title": "Fix calc"}]},
    }
    await start(client, workspace, scripted(script, log))
    result = await command(client, "acpls.listSessions", {})
    assert result["sessions"] == [{"sessionId": "a", "cwd": "/elsewhere", "title": "Fix calc"}]


async def test_set_mode_v1_reaches_the_agent_and_the_editor(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    modes = {
        "currentModeId": "ask",
        "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
    }
    script = {"protocol": 1, "on_new_session": {"modes": modes}}
    await start(client, workspace, scripted(script, log))
    session = await command(client, "acpls.newSession", {})
    await command(client, "acpls.setMode", {"sessionId": session["sessionId"], "modeId": "code"})
    await asyncio.sleep(0.1)
    sent = [m for m in agent_log(log) if m.get("method") == "session/set_mode"]
    assert sent[0]["params"] == {"sessionId": session["sessionId"], "modeId": "code"}
    shown = [
        p["update"]
        for p in notifications(client, "acpls/sessionUpdate")
        if p["update"]["sessionUpdate"] == "modes"
    ]
    assert shown[0]["currentModeId"] == "ask" and shown[-1]["currentModeId"] == "code"
    assert [m["id"] for m in shown[-1]["availableModes"]] == ["ask", "code"]


async def test_set_config_option_v2(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    option = {
        "configId": "model", "name": "Model", "type": "select", "currentValue": "fast",
        "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart"}],
    }  # fmt: skip
    chosen = {**option, "currentValue": "smart"}
    script = {
        "protocol": 2,
        "on_new_session": {"configOptions": [option]},
        "on_set_config_option": {"configOptions": [chosen]},
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.newSession", {})
    result = await command(client, "acpls.setConfigOption", {"configId": "model", "value": "smart"})
    assert result["configOptions"][0]["currentValue"] == "smart"
    sent = [m for m in agent_log(log) if m.get("method") == "session/set_config_option"]
    assert sent[0]["params"]["value"] == "smart" and sent[0]["params"]["type"] == "id"


async def test_several_sessions_at_once_keep_their_own_updates(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    say = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "from $sessionId"},
    }
    script = {"protocol": 1, "on_prompt": [{"sleep": 0.2}, {"update": say}]}
    await start(client, workspace, scripted(script, log))
    first = await command(client, "acpls.newSession", {})
    second = await command(client, "acpls.newSession", {})
    results = await asyncio.gather(
        command(client, "acpls.prompt", {"text": "a", "sessionId": first["sessionId"]}),
        command(client, "acpls.prompt", {"text": "b", "sessionId": second["sessionId"]}),
    )
    assert {r["sessionId"] for r in results} == {first["sessionId"], second["sessionId"]}
    for session in (first["sessionId"], second["sessionId"]):
        texts = [
            p["update"]["content"]["text"]
            for p in notifications(client, "acpls/sessionUpdate")
            if p["sessionId"] == session
            and p["update"]["sessionUpdate"] == "message_chunk"
            and p["update"]["role"] == "agent"
        ]
        assert texts == [f"from {session}"]
    listed = await command(client, "acpls.sessions", {})
    assert {s["sessionId"] for s in listed["sessions"]} == {first["sessionId"], second["sessionId"]}


# -- terminals the agent owns -----------------------------------------------------------------------


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


async def test_v2_agent_terminal_reaches_the_editor_in_any_order(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    check = "✓".encode()
    steps = [
        # Output first, then the state, then the tool call that references it: any order is legal.
        {"update": {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": _b64(b"old\r\n")}},
        {"update": {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "make test", "cwd": "$cwd"}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "run", "title": "Run", "kind": "execute",
                    "status": "in_progress", "content": [{"type": "terminal", "terminalId": "t1"}]}},
        {"update": {"sessionUpdate": "terminal_update", "terminalId": "t1", "output": {"data": _b64(b"fresh\r\n")}}},
        {"update": {"sessionUpdate": "terminal_update", "terminalId": "t1", "exitStatus": {"signal": "SIGTERM"}}},
        {"update": {"sessionUpdate": "terminal_update", "terminalId": "t1", "cwd": None}},
        # A character and an escape sequence split across two chunks of another terminal.
        {"update": {"sessionUpdate": "terminal_output_chunk", "terminalId": "t2", "data": _b64(b"\x1b[3" )}},
        {"update": {"sessionUpdate": "terminal_output_chunk", "terminalId": "t2", "data": _b64(b"2m" + check[:1])}},
        {"update": {"sessionUpdate": "terminal_output_chunk", "terminalId": "t2", "data": _b64(check[1:] + b" ok\x1b[0m\r\n")}},
    ]  # fmt: skip
    await start(client, workspace, scripted({"protocol": 2, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "run"})
    outputs = notifications(client, "acpls/terminalOutput")

    def shown(terminal: str) -> str:
        mine = [o for o in outputs if o["terminalId"] == terminal]
        resets = [i for i, o in enumerate(mine) if o.get("reset")]
        return "".join(o["text"] for o in mine[resets[-1] if resets else 0 :])

    assert shown("t1") == "fresh\r\n"  # the snapshot replaced everything, nothing spliced
    assert shown("t2") == "\x1b[32m✓ ok\x1b[0m\r\n"
    states = [s for s in notifications(client, "acpls/terminalUpdate") if s["terminalId"] == "t1"]
    assert states[-1] == {
        "sessionId": states[-1]["sessionId"],
        "terminalId": "t1",
        "command": "make test",
        "exitStatus": {"signal": "SIGTERM"},
        "toolCallId": "run",
        "owner": "agent",
    }


async def test_v1_meta_terminal_extension_maps_onto_terminals(
    client, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    call = {"toolCallId": "bash-1", "title": "ls", "kind": "execute", "status": "in_progress"}
    steps = [
        {"update": {"sessionUpdate": "tool_call", **call,
                    "_meta": {"terminal_info": {"terminal_id": "bash-1", "cwd": "$cwd"}}}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "bash-1",
                    "_meta": {"terminal_output": {"terminal_id": "bash-1", "data": "a.txt\n"}}}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "bash-1", "status": "completed",
                    "_meta": {"terminal_exit": {"terminal_id": "bash-1", "exit_code": 0}}}},
    ]  # fmt: skip
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "ls"})
    init = next(m for m in agent_log(log) if m.get("method") == "initialize")
    assert init["params"]["clientCapabilities"]["_meta"] == {"terminal_output": True}
    text = "".join(o["text"] for o in notifications(client, "acpls/terminalOutput"))
    assert text == "a.txt\r\n"
    state = notifications(client, "acpls/terminalUpdate")[-1]
    assert state["terminalId"] == "bash-1" and state["exitStatus"] == {"exitCode": 0}
    assert state["toolCallId"] == "bash-1"


# -- follow pauses for the user, not for acpls' own changes -----------------------------------------


def _open(client, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )
    return uri


def _replace_all(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def test_reload_of_a_file_written_to_disk_does_not_pause_follow(client, workspace: Path):
    await start(client, workspace, "demo")
    calc = workspace / "calc.py"
    uri = _open(client, calc, calc.read_text())
    calc.write_text("def add(a, b):\n    return a + b\n")  # the agent writes the file itself
    _replace_all(client, uri, 2, calc.read_text())  # the editor reloads it
    await command(client, "acpls.sessions", {})  # a round trip: the change has been handled
    assert notifications(client, "acpls/followState") == []


async def test_user_typing_pauses_follow_and_the_editor_is_told(client, workspace: Path):
    await start(client, workspace, "demo")
    calc = workspace / "calc.py"
    uri = _open(client, calc, calc.read_text())
    _replace_all(client, uri, 2, "# my unsaved note\n" + calc.read_text())
    await command(client, "acpls.sessions", {})
    assert notifications(client, "acpls/followState") == [{"enabled": False, "reason": "userEdit"}]
    resumed = await command(client, "acpls.setFollow", {"enabled": True})
    assert resumed == {"enabled": True}
