"""The scripted test agent follows its script and logs every message it receives."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

# The repo root is not on sys.path under plain `pytest` (tests/ is not a package).
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.agents import SCRIPTS_DIR, load_script, read_log, script_command
from tests.agents.mini_client import AgentError, MiniClient

Start = Callable[..., Awaitable[MiniClient]]


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "agent-log.jsonl"


@pytest.fixture
async def start(tmp_path: Path, log_path: Path) -> AsyncIterator[Start]:
    clients: list[MiniClient] = []
    (tmp_path / "hello.txt").write_text("hello\n")
    (tmp_path / "README.md").write_text("# readme\n")

    async def starter(script: Any, version: int | None, **options: Any) -> MiniClient:
        argv = script_command(script, log_path, **options)
        client = MiniClient(argv, cwd=tmp_path, version=version)
        clients.append(client)
        return await client.start()

    yield starter
    for client in clients:
        await client.close()


async def open_session(client: MiniClient, version: int, **caps: Any) -> str:
    await client.initialize(version, **caps)
    return await client.new_session()


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("v1_basic", 1),
        ("v2_basic", 2),
        ("v1_permission", 1),
        ("v2_permission", 2),
        ("v1_fs", 1),
        ("v1_terminal", 1),
        ("v2_terminal", 2),
    ],
)
async def test_ready_made_scripts_are_valid_acp(
    start: Start, log_path: Path, tmp_path: Path, name: str, version: int
) -> None:
    client = await start(name, version)
    session_id = await open_session(client, version)

    assert await client.prompt(session_id, "go", version) == "end_turn"

    await client.close()
    assert client.schema_errors == [], "\n".join(client.schema_errors)
    assert client.returncode == 0
    received = read_log(log_path)
    methods = [m.get("method") for m in received]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    assert all("$" not in json.dumps(m) for m in client.received), "unsubstituted variable"
    # Every answer the client gave to the agent's requests is in the log too.
    answered = {m["id"] for m in received if "method" not in m}
    assert answered == {m["id"] for m in client.requests_from_agent}


async def test_permission_answer_is_logged_and_usable(start: Start, log_path: Path) -> None:
    client = await start("v1_permission", 1)
    session_id = await open_session(client, 1)
    await client.prompt(session_id, "go", 1)

    responses = [m for m in read_log(log_path) if "result" in m]
    assert responses == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }
    ]
    text = client.updates_of("agent_message_chunk")[-1]["content"]["text"]
    assert text == 'Permission answer: {"outcome": "selected", "optionId": "allow"}'


async def test_fs_script_reads_and_writes_through_the_client(start: Start, tmp_path: Path) -> None:
    client = await start("v1_fs", 1)
    session_id = await open_session(client, 1)
    await client.prompt(session_id, "go", 1)

    assert (tmp_path / "hello.txt").read_text() == "hello from the agent\n"
    assert client.updates_of("agent_message_chunk")[-1]["content"]["text"] == "I read: hello\n"


async def test_v2_terminal_script_splits_a_character(start: Start) -> None:
    client = await start("v2_terminal", 2)
    session_id = await open_session(client, 2)
    await client.prompt(session_id, "go", 2)

    chunks = [base64.b64decode(u["data"]) for u in client.updates_of("terminal_output_chunk")]
    assert b"".join(chunks).decode() == "\x1b[32m✓ ok\x1b[0m café\r\n"
    with pytest.raises(UnicodeDecodeError):
        chunks[0].decode()


@pytest.mark.parametrize("version", [1, 2])
async def test_wait_cancel_ends_the_turn_cancelled(start: Start, version: int) -> None:
    client = await start(f"v{version}_cancel", version)
    session_id = await open_session(client, version)
    turn = asyncio.ensure_future(client.prompt(session_id, "go", version))
    await client.wait_for(lambda: client.updates_of("agent_message_chunk"))
    await asyncio.sleep(0.05)
    assert not turn.done()

    client.notify("session/cancel", {"sessionId": session_id})

    assert await turn == "cancelled"
    assert client.schema_errors == []


async def test_successive_prompts_use_successive_step_lists(start: Start) -> None:
    say = [
        [
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": word},
                }
            }
        ]
        for word in ("first", "second")
    ]
    client = await start({"protocol": 1, "on_prompt": say}, 1)
    session_id = await open_session(client, 1)
    for _ in range(3):
        await client.prompt(session_id, "go", 1)

    texts = [u["content"]["text"] for u in client.updates_of("agent_message_chunk")]
    assert texts == ["first", "second", "second"]


async def test_initialize_override_and_stop_reason(start: Start) -> None:
    script = {
        "on_initialize": {"protocolVersion": 1, "authMethods": [{"id": "key", "name": "API key"}]},
        "on_prompt": [{"stop_reason": "max_tokens"}],
    }
    client = await start(script, 1)
    result = await client.request(
        "initialize",
        {
            "protocolVersion": 2,
            "clientCapabilities": {},
            "capabilities": {},
            "info": {"name": "t", "version": "0"},
        },
    )
    assert result["protocolVersion"] == 1
    assert result["authMethods"] == [{"id": "key", "name": "API key"}]
    session_id = await client.new_session()
    assert await client.prompt(session_id, "go", 1) == "max_tokens"
    assert client.schema_errors == []


async def test_respond_error_then_more_steps(start: Start) -> None:
    script = {
        "on_new_session": [
            {"respond_error": {"code": -32000, "message": "Authentication required"}},
            {"stderr": "told the client to log in"},
        ]
    }
    client = await start(script, 1)
    await client.initialize(1)
    with pytest.raises(AgentError) as error:
        await client.new_session()
    assert error.value.code == -32000
    await client.close()
    assert b"told the client to log in" in client.stderr


async def test_v2_prompt_with_explicit_respond_is_left_to_the_script(start: Start) -> None:
    script = {
        "protocol": 2,
        "on_prompt": [
            {"respond": {"messageId": "u-7"}},
            {"update": {"sessionUpdate": "state_update", "state": "idle", "stopReason": "refusal"}},
        ],
    }
    client = await start(script, 2)
    session_id = await open_session(client, 2)
    assert await client.prompt(session_id, "go", 2) == "refusal"
    assert not client.updates_of("user_message")
    assert client.schema_errors == []


async def test_expectation_failure_exits_with_status_3(start: Start, log_path: Path) -> None:
    script = {
        "on_prompt": [
            {
                "request": "fs/read_text_file",
                "params": {"sessionId": "$sessionId", "path": "$cwd/hello.txt"},
                "expect": {"content": "something else"},
            },
        ]
    }
    client = await start(script, 1)
    session_id = await open_session(client, 1)
    with pytest.raises(ConnectionError):
        await client.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
            seconds=5,
        )
    assert await client.close() == 3
    failures = [m for m in read_log(log_path) if "expect_failed" in m]
    assert failures[0]["where"] == "/content: expected 'something else', got 'hello\\n'"
    assert b"expectation failed" in client.stderr


async def test_matching_expectation_carries_on(start: Start) -> None:
    script = {
        "on_prompt": [
            {
                "request": "fs/read_text_file",
                "params": {"sessionId": "$sessionId", "path": "$cwd/missing.txt"},
                "expect": {"error": {"code": -32002}},
            },
            {"stop_reason": "end_turn"},
        ]
    }
    client = await start(script, 1)
    session_id = await open_session(client, 1)
    assert await client.prompt(session_id, "go", 1) == "end_turn"


async def test_crash_mid_turn(start: Start) -> None:
    client = await start("crash_mid_turn", 1)
    session_id = await open_session(client, 1)
    with pytest.raises(ConnectionError):
        await client.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]},
            seconds=5,
        )
    assert await client.close() == 42
    assert client.updates_of("agent_message_chunk")
    assert b"crashing on purpose" in client.stderr


async def test_raw_lines_and_sends_go_out_as_written(start: Start) -> None:
    script = {
        "on_prompt": [
            {"raw": "garbage line"},
            {"send": {"jsonrpc": "2.0", "method": "_vendor/ping", "params": {"s": "$sessionId"}}},
        ]
    }
    client = await start(script, None)
    session_id = await open_session(client, 1)
    await client.prompt(session_id, "go", 1)
    assert client.schema_errors == ["unparsable line from the agent: b'garbage line\\n'"]
    assert {"jsonrpc": "2.0", "method": "_vendor/ping", "params": {"s": session_id}} in (
        client.received
    )


async def test_unknown_methods_and_on_request(start: Start) -> None:
    client = await start({"on_request": {"_vendor/echo": {"echo": True}}}, None)
    await client.initialize(1)
    assert await client.request("_vendor/echo", {}) == {"echo": True}
    with pytest.raises(AgentError) as error:
        await client.request("_vendor/other", {})
    assert error.value.code == -32601


async def test_env_dump_and_pid_file(start: Start, tmp_path: Path) -> None:
    env_dump, pid_file = tmp_path / "env.json", tmp_path / "pid"
    client = await start({}, 1, env_dump=env_dump, pid_file=pid_file)
    await client.initialize(1)
    assert json.loads(env_dump.read_text())["PATH"] == os.environ["PATH"]
    assert client._process is not None
    assert int(pid_file.read_text()) == client._process.pid


async def test_load_and_resume_defaults(start: Start, tmp_path: Path) -> None:
    client = await start({"protocol": 2}, 2)
    await client.initialize(2)
    seen = len(client.received)
    assert await client.request("session/resume", {"sessionId": "old", "cwd": str(tmp_path)}) == {}
    updates = [m["params"] for m in client.received[seen:] if m.get("method") == "session/update"]
    assert updates == [
        {"sessionId": "old", "update": {"sessionUpdate": "state_update", "state": "idle"}}
    ]
    listed = await client.request("session/list", {})
    assert listed == {"sessions": [{"sessionId": "old", "cwd": str(tmp_path)}]}
    assert client.schema_errors == []


def test_ready_made_scripts_load() -> None:
    names = sorted(path.stem for path in SCRIPTS_DIR.glob("*.json"))
    assert {"v1_basic", "v2_basic"} <= set(names)
    for name in names:
        assert isinstance(load_script(name), dict)
    assert script_command("v1_basic")[-1] == str(SCRIPTS_DIR / "v1_basic.json")
