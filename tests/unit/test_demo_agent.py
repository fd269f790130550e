"""The demo agent (`python -m acpls.demo`) as a subprocess, driven by a tiny ACP client.

Every message the agent sends (and every answer the client gives) is validated against the
official ACP v1/v2 schemas.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

# The repo root is not on sys.path under plain `pytest` (tests/ is not a package).
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from acpls.demo import workspace_scan as scan
from acpls.demo.agent_kit import Peer, RpcError, wait_or_cancelled
from tests.agents import demo_command
from tests.agents.mini_client import AgentError, MiniClient

FULL_V1_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}

Start = Callable[..., Awaitable[MiniClient]]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return scan.copy_sample_workspace(tmp_path / "ws")


@pytest.fixture
async def start(workspace: Path) -> AsyncIterator[Start]:
    clients: list[MiniClient] = []

    async def starter(version: int, cwd: Path | None = None, **options: Any) -> MiniClient:
        client = MiniClient(
            demo_command(),
            cwd=cwd or workspace,
            env={"ACPLS_DEMO_SPEED": "0"},
            version=version,
            **options,
        )
        clients.append(client)
        return await client.start()

    yield starter
    for client in clients:
        await client.close()
        assert client.schema_errors == [], "\n".join(client.schema_errors)


def tool_calls(client: MiniClient) -> dict[str, dict[str, Any]]:
    """Tool calls by id, with every update merged in arrival order."""
    calls: dict[str, dict[str, Any]] = {}
    for update in client.updates():
        if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
            calls.setdefault(update["toolCallId"], {}).update(update)
    return calls


def requests_named(client: MiniClient, method: str) -> list[dict[str, Any]]:
    return [m for m in client.requests_from_agent if m["method"] == method]


def calls_of_kind(client: MiniClient, kind: str) -> list[dict[str, Any]]:
    return [call for call in tool_calls(client).values() if call.get("kind") == kind]


async def test_v1_turn_with_client_fs_and_terminal(start: Start, workspace: Path) -> None:
    client = await start(1)
    init = await client.initialize(1, **FULL_V1_CAPS)
    assert init["protocolVersion"] == 1
    session_id = await client.new_session()

    assert await client.prompt(session_id, "fix the failing test", 1) == "end_turn"

    assert "return a - b" in (workspace / "calc.py").read_text()
    reads = requests_named(client, "fs/read_text_file")
    assert {Path(r["params"]["path"]).name for r in reads} >= {"calc.py", "test_calc.py"}
    assert len(requests_named(client, "fs/write_text_file")) == 1
    permission = requests_named(client, "session/request_permission")[0]["params"]
    assert {o["kind"] for o in permission["options"]} == {
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    }
    diff = permission["toolCall"]["content"][0]
    assert diff["type"] == "diff" and diff["path"] == str(workspace / "calc.py")
    assert "a + b" in diff["oldText"] and "a - b" in diff["newText"]
    for method in ("terminal/create", "terminal/wait_for_exit", "terminal/output"):
        assert requests_named(client, method), method
    assert requests_named(client, "terminal/release")

    kinds = {call["kind"]: call for call in tool_calls(client).values()}
    assert set(kinds) == {"read", "edit", "execute", "fetch"}
    assert kinds["edit"]["status"] == "completed"
    assert kinds["execute"]["status"] == "completed"
    assert kinds["execute"]["content"][0]["type"] == "terminal"
    assert kinds["fetch"]["status"] == "failed"
    # Follow-along: the read of calc.py ends on the line of the bug.
    bug_line = scan.find_subtract_bug(
        (Path(__file__).parents[2] / "server/acpls/demo/workspace/calc.py").read_text()
    )
    calc_reads = [c for c in calls_of_kind(client, "read") if c["title"] == "Read calc.py"]
    assert calc_reads[0]["locations"] == [{"path": str(workspace / "calc.py"), "line": bug_line}]

    thoughts = client.updates_of("agent_thought_chunk")
    assert len(thoughts) >= 3
    assert client.updates_of("plan")[-1]["entries"][0]["status"] == "completed"
    assert client.updates_of("session_info_update")[0]["title"] == "fix the failing test"
    assert client.updates_of("usage_update")
    assert client.updates_of("available_commands_update")


async def test_v1_meta_terminal_extension(start: Start) -> None:
    client = await start(1)
    await client.initialize(1, _meta={"terminal_output": True})
    session_id = await client.new_session()
    assert await client.prompt(session_id, "fix it", 1) == "end_turn"

    assert not requests_named(client, "terminal/create")
    updates = [u for u in client.updates() if u.get("toolCallId", "").startswith("run-")]
    metas = [u["_meta"] for u in updates if "_meta" in u]
    info = next(m["terminal_info"] for m in metas if "terminal_info" in m)
    output = "".join(m["terminal_output"]["data"] for m in metas if "terminal_output" in m)
    exit_ = next(m["terminal_exit"] for m in metas if "terminal_exit" in m)
    assert info["terminal_id"] == exit_["terminal_id"]
    assert "\x1b[32m✓" in output and "4 passed" in output
    assert exit_["exit_code"] == 0


async def test_v1_without_client_capabilities_writes_to_disk(start: Start, workspace: Path) -> None:
    client = await start(1)
    await client.initialize(1)
    session_id = await client.new_session()
    assert await client.prompt(session_id, "fix it", 1) == "end_turn"

    assert client.requests_from_agent == requests_named(client, "session/request_permission")
    assert "return a - b" in (workspace / "calc.py").read_text()
    run = calls_of_kind(client, "execute")[0]
    text = run["content"][0]["content"]["text"]
    assert "✓ test_calc.py::test_subtract" in text and "\x1b[" not in text


async def test_v2_turn(start: Start, workspace: Path) -> None:
    client = await start(2)
    init = await client.initialize(2)
    assert init["protocolVersion"] == 2 and init["info"]["name"] == "acpls-demo"
    session_id = await client.new_session()

    assert await client.prompt(session_id, "fix the failing test", 2) == "end_turn"

    assert "return a - b" in (workspace / "calc.py").read_text()
    updates = client.updates(session_id)
    kinds = [u["sessionUpdate"] for u in updates]
    assert "tool_call" not in kinds and "plan" not in kinds
    assert kinds.index("user_message") < kinds.index("state_update")
    states = [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]
    assert states == ["running", "requires_action", "running", "idle"]
    assert all(
        u.get("messageId")
        for u in updates
        if u["sessionUpdate"].endswith("_chunk") and u["sessionUpdate"].startswith("agent_")
    )
    plan = client.updates_of("plan_update")[-1]["plan"]
    assert plan["type"] == "items" and plan["planId"]

    permission = requests_named(client, "session/request_permission")[0]["params"]
    assert permission["title"] and permission["subject"]["type"] == "tool_call"
    diff = permission["subject"]["toolCall"]["content"][0]
    path = str(workspace / "calc.py")
    assert diff["changes"] == [
        {"operation": "modify", "path": path, "fileType": "text", "mimeType": "text/x-python"}
    ]
    patch = diff["patch"]["text"]
    assert patch.startswith(f"diff --git {path} {path}\n--- {path}\n+++ {path}\n@@ ")
    assert "-    return a + b\n+    return a - b\n" in patch

    terminal_updates = client.updates_of("terminal_update")
    assert terminal_updates[0]["command"].endswith("--tests test_calc.py --compile calc.py")
    assert terminal_updates[0]["cwd"] == str(workspace)
    assert terminal_updates[-1]["exitStatus"] == {"exitCode": 0, "signal": None}
    chunks = [base64.b64decode(u["data"]) for u in client.updates_of("terminal_output_chunk")]
    assert len(chunks) >= 2
    output = b"".join(chunks).decode("utf-8")
    assert "\x1b[32m✓ test_calc.py::test_subtract" in output
    # A multi-byte character is cut across two chunks, as real terminal output may be.
    assert any(not _decodes(chunk) for chunk in chunks)
    run = calls_of_kind(client, "execute")[0]
    assert run["content"] == [{"type": "terminal", "terminalId": terminal_updates[0]["terminalId"]}]
    assert calls_of_kind(client, "fetch")[0]["status"] == "failed"


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("version", [1, 2])
async def test_rejected_edit_leaves_the_file(start: Start, workspace: Path, version: int) -> None:
    client = await start(version, permission_kind="reject_once")
    await client.initialize(version, **(FULL_V1_CAPS if version == 1 else {}))
    session_id = await client.new_session()
    before = (workspace / "calc.py").read_text()

    assert await client.prompt(session_id, "fix it", version) == "end_turn"

    assert (workspace / "calc.py").read_text() == before
    edit = calls_of_kind(client, "edit")[0]
    assert edit["status"] == ("failed" if version == 1 else "cancelled")
    assert any("rejected" in str(item) for item in edit["content"])
    text = "".join(u["content"]["text"] for u in client.updates_of("agent_message_chunk"))
    assert "left calc.py unchanged" in text
    # The checks ran and report the bug that is still there.
    assert calls_of_kind(client, "execute")[0]["status"] == "failed"


@pytest.mark.parametrize("version", [1, 2])
async def test_cancel_while_permission_is_pending(
    start: Start, workspace: Path, version: int
) -> None:
    client = await start(version, permission_kind=None)
    await client.initialize(version, **(FULL_V1_CAPS if version == 1 else {}))
    session_id = await client.new_session()
    before = (workspace / "calc.py").read_text()
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "fix it"}]}

    turn = asyncio.ensure_future(client.request("session/prompt", params))
    await client.wait_for(lambda: requests_named(client, "session/request_permission"))
    client.notify("session/cancel", {"sessionId": session_id})
    if version == 1:
        assert (await turn) == {"stopReason": "cancelled"}
    else:
        assert "messageId" in await turn
        await client.wait_for(
            lambda: any(
                u.get("stopReason") == "cancelled" for u in client.updates_of("state_update")
            )
        )
    permission_id = requests_named(client, "session/request_permission")[0]["id"]
    await client.wait_for(
        lambda: any(
            m.get("method") == "$/cancel_request" and m["params"]["requestId"] == permission_id
            for m in client.received
        )
    )
    client.answer_pending_permissions({"outcome": {"outcome": "cancelled"}})
    assert (workspace / "calc.py").read_text() == before
    assert not calls_of_kind(client, "execute")


async def test_code_mode_edits_without_asking(start: Start, workspace: Path) -> None:
    client = await start(1)
    await client.initialize(1, **FULL_V1_CAPS)
    result = await client.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    assert result["modes"]["currentModeId"] == "ask"
    assert {m["id"] for m in result["modes"]["availableModes"]} == {"ask", "code"}
    session_id = result["sessionId"]
    assert (
        await client.request("session/set_mode", {"sessionId": session_id, "modeId": "code"}) == {}
    )

    assert await client.prompt(session_id, "fix it", 1) == "end_turn"

    assert not requests_named(client, "session/request_permission")
    assert "return a - b" in (workspace / "calc.py").read_text()
    with pytest.raises(AgentError) as error:
        await client.request("session/set_mode", {"sessionId": session_id, "modeId": "nope"})
    assert error.value.code == -32602


@pytest.mark.parametrize("version", [1, 2])
async def test_config_options(start: Start, version: int) -> None:
    client = await start(version)
    caps = {"session": {"configOptions": {"boolean": {}}}} if version == 1 else {}
    await client.initialize(version, **caps)
    session_id = await client.new_session()
    key = "id" if version == 1 else "configId"
    params: dict[str, Any] = {
        "sessionId": session_id,
        "configId": "run_checks",
        "type": "boolean",
        "value": False,
    }
    result = await client.request("session/set_config_option", params)
    option = next(o for o in result["configOptions"] if o[key] == "run_checks")
    assert option["currentValue"] is False

    assert await client.prompt(session_id, "fix it", version) == "end_turn"
    assert not calls_of_kind(client, "execute")

    bad = {"sessionId": session_id, "configId": "pace", "value": "warp"}
    if version == 2:
        bad["type"] = "id"
    with pytest.raises(AgentError) as error:
        await client.request("session/set_config_option", bad)
    assert error.value.code == -32602


async def test_v1_list_and_load_replay_the_history(start: Start, workspace: Path) -> None:
    client = await start(1)
    await client.initialize(1, **FULL_V1_CAPS)
    session_id = await client.new_session()
    await client.prompt(session_id, "fix it", 1)
    live = [
        u for u in client.updates(session_id) if u["sessionUpdate"] != "available_commands_update"
    ]

    listed = await client.request("session/list", {})
    assert listed["sessions"] == [
        {
            "sessionId": session_id,
            "cwd": str(workspace),
            "title": "fix it",
            "updatedAt": listed["sessions"][0]["updatedAt"],
        }
    ]
    seen = len(client.received)
    result = await client.request(
        "session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []}
    )
    assert result["modes"]["currentModeId"] == "ask"
    replayed = [
        m["params"]["update"] for m in client.received[seen:] if m.get("method") == "session/update"
    ]
    assert replayed[0] == {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "text", "text": "fix it"},
    }
    assert replayed[1 : len(live) + 1] == live

    with pytest.raises(AgentError) as error:
        await client.request(
            "session/load", {"sessionId": "nope", "cwd": str(workspace), "mcpServers": []}
        )
    assert error.value.code == -32002


async def test_v2_resume_without_and_with_replay(start: Start, workspace: Path) -> None:
    client = await start(2)
    await client.initialize(2)
    session_id = await client.new_session()
    await client.prompt(session_id, "fix it", 2)

    seen = len(client.received)
    result = await client.request(
        "session/resume", {"sessionId": session_id, "cwd": str(workspace)}
    )
    assert {"configOptions", "availableCommands"} <= set(result)
    after = [
        m["params"]["update"] for m in client.received[seen:] if m.get("method") == "session/update"
    ]
    assert after[0] == {"sessionUpdate": "state_update", "state": "idle"}
    assert not [
        u for u in after if u["sessionUpdate"] not in ("state_update", "available_commands_update")
    ]
    # The agent sends available_commands_update just after its response: wait for it, or it
    # lands among the second resume's replay.
    await client.wait_for(
        lambda: any(
            m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "available_commands_update"
            for m in client.received[seen:]
        )
    )

    seen = len(client.received)
    await client.request(
        "session/resume",
        {"sessionId": session_id, "cwd": str(workspace), "replayFrom": {"type": "start"}},
    )
    replayed = [
        m["params"]["update"] for m in client.received[seen:] if m.get("method") == "session/update"
    ]
    assert replayed[0]["sessionUpdate"] == "user_message"
    assert any(u["sessionUpdate"] == "terminal_output_chunk" for u in replayed)
    replayed = [u for u in replayed if u["sessionUpdate"] != "available_commands_update"]
    assert replayed[-1] == {"sessionUpdate": "state_update", "state": "idle"}


async def test_other_project_gets_only_a_notes_file(start: Start, tmp_path: Path) -> None:
    project = tmp_path / "other"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (project / ".hidden").mkdir()
    (project / ".hidden" / "skip.py").write_text("x = 1\n")
    client = await start(2, cwd=project)
    await client.initialize(2)
    session_id = await client.new_session()

    assert await client.prompt(session_id, "tidy up", 2) == "end_turn"

    notes = project / scan.NOTES_FILE
    assert notes.read_text() == "# Notes from the acpls demo agent\n\n- Reviewed pkg/mod.py.\n"
    assert (project / "pkg" / "mod.py").read_text() == "def f():\n    return 1\n"
    edit = calls_of_kind(client, "edit")[0]
    change = edit["content"][0]["changes"][0]
    assert change["operation"] == "add" and change["path"] == str(notes)
    assert "new file mode 100644\n--- /dev/null\n" in edit["content"][0]["patch"]["text"]
    assert [Path(c["locations"][0]["path"]).name for c in calls_of_kind(client, "read")] == [
        "mod.py"
    ]


async def test_test_command_only_runs_the_checks(start: Start, workspace: Path) -> None:
    client = await start(1)
    await client.initialize(1, **FULL_V1_CAPS)
    session_id = await client.new_session()
    update = await client.wait_for(lambda: client.updates_of("available_commands_update"))
    commands = update[0]["availableCommands"]
    assert {c["name"] for c in commands} == {"test", "explain"}

    assert await client.prompt(session_id, "/test", 1) == "end_turn"

    assert {c["kind"] for c in tool_calls(client).values()} == {"execute"}
    assert calls_of_kind(client, "execute")[0]["status"] == "failed"  # the bug is still there


async def test_prompt_for_an_unknown_session_is_an_error(start: Start) -> None:
    client = await start(1)
    await client.initialize(1)
    with pytest.raises(AgentError) as error:
        await client.request(
            "session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}
        )
    assert error.value.code == -32002


async def test_bad_lines_get_a_parse_error_and_the_agent_carries_on(start: Start) -> None:
    client = await start(1)
    client.send_raw("this is not json")
    await client.wait_for(
        lambda: any(m.get("error", {}).get("code") == -32700 for m in client.received)
    )
    client.schema_errors.clear()  # a parse error answers id null, which is what JSON-RPC wants
    assert (await client.initialize(1))["protocolVersion"] == 1


def test_git_patch_for_new_and_changed_files(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    assert scan.git_patch(path, None, "one\n") == (
        f"diff --git {path} {path}\nnew file mode 100644\n--- /dev/null\n+++ {path}\n"
        "@@ -0,0 +1 @@\n+one\n"
    )
    assert scan.git_patch(path, "one\ntwo", "one\nthree") == (
        f"diff --git {path} {path}\n--- {path}\n+++ {path}\n@@ -1,2 +1,2 @@\n one\n-two\n"
        "\\ No newline at end of file\n+three\n\\ No newline at end of file\n"
    )


@pytest.mark.parametrize("method", ["terminal/cancel", "tool_call/cancel"])
async def test_v2_client_stops_the_running_command(workspace: Path, method: str) -> None:
    # Real pacing, so the command is still running when the client stops it.
    client = MiniClient(demo_command(), cwd=workspace, env={"ACPLS_DEMO_SPEED": "0.5"}, version=2)
    await client.start()
    try:
        await client.initialize(2)
        session_id = await client.new_session()
        turn = asyncio.ensure_future(client.prompt(session_id, "fix it", 2))
        await client.wait_for(lambda: client.updates_of("terminal_output_chunk"))
        first = client.updates_of("terminal_update")[0]
        assert first["capabilities"] == {"cancel": {}}
        run = calls_of_kind(client, "execute")[0]
        assert run["capabilities"] == {"cancel": {}}
        target = (
            {"terminalId": first["terminalId"]}
            if method == "terminal/cancel"
            else {"toolCallId": run["toolCallId"]}
        )

        assert await client.request(method, {"sessionId": session_id, **target}) == {}

        assert await turn == "end_turn"
        last = client.updates_of("terminal_update")[-1]
        assert last["exitStatus"] == {"exitCode": None, "signal": "SIGTERM"}
        assert last["capabilities"] is None
        run = calls_of_kind(client, "execute")[0]
        assert run["status"] == ("failed" if method == "terminal/cancel" else "cancelled")
        with pytest.raises(AgentError) as error:
            await client.request(method, {"sessionId": session_id, **target})
        assert error.value.code == -32602
    finally:
        await client.close()
    assert client.schema_errors == [], "\n".join(client.schema_errors)


async def test_prompt_context_files_are_read_first(start: Start, workspace: Path) -> None:
    client = await start(1)
    await client.initialize(1)
    session_id = await client.new_session()
    readme = workspace / "README.md"
    prompt = [
        {"type": "text", "text": "explain this"},
        {"type": "resource_link", "uri": readme.as_uri(), "name": "README.md"},
    ]
    result = await client.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
    assert result == {"stopReason": "end_turn"}
    reads = [c["title"] for c in calls_of_kind(client, "read")]
    assert reads == ["Read README.md", "Read calc.py", "Read test_calc.py"]


async def test_cancel_request_cancels_a_v1_prompt(start: Start) -> None:
    client = await start(1, permission_kind=None)
    await client.initialize(1, **FULL_V1_CAPS)
    session_id = await client.new_session()
    params = {"sessionId": session_id, "prompt": [{"type": "text", "text": "fix it"}]}
    turn = asyncio.ensure_future(client.request("session/prompt", params))
    await client.wait_for(lambda: requests_named(client, "session/request_permission"))
    prompt_id = max(client._pending)  # the prompt is the client's latest request

    client.notify("$/cancel_request", {"requestId": prompt_id})

    with pytest.raises(AgentError) as error:
        await turn
    assert error.value.code == -32800
    # The agent is still alive and takes the next prompt.
    client.permission_kind = "allow_once"
    assert await client.prompt(session_id, "again", 1) == "end_turn"


# -- the agent kit, in process -------------------------------------------------------------


class _Output:
    """A binary stdout stand-in that splits what the peer writes into JSON messages."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> int:
        self.data.extend(data)
        return len(data)

    def flush(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.data.decode().splitlines()]


def _feed(reader: asyncio.StreamReader, *messages: dict[str, Any] | bytes) -> None:
    for message in messages:
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        reader.feed_data(data)


async def test_kit_answers_requests_and_settles_its_own() -> None:
    reader = asyncio.StreamReader(limit=1024)
    output = _Output()
    peer = Peer(reader, output)  # type: ignore[arg-type]

    async def echo(params: Any) -> Any:
        return {"echo": params}

    async def fail(_params: Any) -> Any:
        raise RpcError(-32002, "nothing here")

    peer.on_request("echo", echo)
    peer.on_request("fail", fail)
    runner = asyncio.ensure_future(peer.run())
    ask = asyncio.ensure_future(peer.request("client/thing", {"x": 1}))
    bad = asyncio.ensure_future(peer.request("client/broken"))
    await asyncio.sleep(0)
    _feed(
        reader,
        {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": [1]},
        {"jsonrpc": "2.0", "id": 2, "method": "fail"},
        {"jsonrpc": "2.0", "id": 3, "method": "missing"},
        b"x" * 3000 + b"\n",  # longer than the limit: dropped, the peer carries on
        {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "boom"}},
        {"jsonrpc": "2.0", "id": 99, "result": {}},  # unknown id: ignored
    )
    assert await ask == {"ok": True}
    with pytest.raises(RpcError) as error:
        await bad
    assert error.value.code == -32603 and error.value.message == "boom"
    reader.feed_eof()
    await runner
    answers = {m["id"]: m for m in output.messages() if "method" not in m}
    assert answers[1]["result"] == {"echo": [1]}
    assert answers[2]["error"] == {"code": -32002, "message": "nothing here"}
    assert answers[3]["error"]["code"] == -32601


async def test_kit_cancels_a_request_handler_and_its_own_requests() -> None:
    reader = asyncio.StreamReader()
    output = _Output()
    peer = Peer(reader, output)  # type: ignore[arg-type]
    started = asyncio.Event()

    async def slow(_params: Any) -> Any:
        started.set()
        await asyncio.sleep(60)

    peer.on_request("slow", slow)
    runner = asyncio.ensure_future(peer.run())
    _feed(reader, {"jsonrpc": "2.0", "id": "a", "method": "slow"})
    await started.wait()
    _feed(reader, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "a"}})
    stop = asyncio.Event()
    pending = asyncio.ensure_future(wait_or_cancelled(peer.request("client/wait"), stop))
    await asyncio.sleep(0.01)
    stop.set()
    assert await pending == (False, None)
    reader.feed_eof()
    await runner
    messages = output.messages()
    assert {
        "jsonrpc": "2.0",
        "id": "a",
        "error": {"code": -32800, "message": "Request cancelled"},
    } in messages
    own = next(m for m in messages if m.get("method") == "client/wait")
    assert messages[-1] == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": own["id"]},
    }


async def test_client_errors_fail_the_tool_calls_not_the_turn(
    start: Start, workspace: Path
) -> None:
    client = await start(1)

    async def refuse(_params: Any) -> Any:
        raise AgentError({"code": -32603, "message": "refused by the test"})

    client.handlers["fs/write_text_file"] = refuse
    client.handlers["terminal/create"] = refuse
    await client.initialize(1, **FULL_V1_CAPS)
    session_id = await client.new_session()

    assert await client.prompt(session_id, "fix it", 1) == "end_turn"

    assert "return a + b" in (workspace / "calc.py").read_text()
    assert calls_of_kind(client, "edit")[0]["status"] == "failed"
    run = calls_of_kind(client, "execute")[0]
    assert run["status"] == "failed" and "refused by the test" in str(run["content"])
    text = "".join(u["content"]["text"] for u in client.updates_of("agent_message_chunk"))
    assert "I could not write calc.py" in text


async def test_agent_exits_when_the_client_goes_away_mid_turn(workspace: Path) -> None:
    client = MiniClient(demo_command(), cwd=workspace, env={"ACPLS_DEMO_SPEED": "0.5"}, version=2)
    await client.start()
    await client.initialize(2)
    session_id = await client.new_session()
    turn = asyncio.ensure_future(client.prompt(session_id, "fix it", 2))
    await client.wait_for(lambda: client.updates_of("terminal_output_chunk"))

    assert await client.close(seconds=5) == 0

    turn.cancel()
    with contextlib.suppress(asyncio.CancelledError, EOFError):
        await turn
    assert "4 passed" not in b"".join(
        base64.b64decode(u["data"]) for u in client.updates_of("terminal_output_chunk")
    ).decode("utf-8", "replace")


async def test_v1_mode_and_mode_option_stay_in_step(start: Start) -> None:
    client = await start(1)
    await client.initialize(1)
    session_id = await client.new_session()

    result = await client.request(
        "session/set_config_option", {"sessionId": session_id, "configId": "mode", "value": "code"}
    )
    mode = next(o for o in result["configOptions"] if o["id"] == "mode")
    assert mode["currentValue"] == "code" and mode["category"] == "mode"
    await client.wait_for(lambda: client.updates_of("current_mode_update"))
    assert client.updates_of("current_mode_update") == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"}
    ]

    await client.request("session/set_mode", {"sessionId": session_id, "modeId": "ask"})
    update = await client.wait_for(lambda: client.updates_of("config_option_update"))
    mode = next(o for o in update[-1]["configOptions"] if o["id"] == "mode")
    assert mode["currentValue"] == "ask"
