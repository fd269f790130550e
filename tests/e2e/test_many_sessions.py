"""A long-lived server: 1,000 sessions created, used (a turn with a followed tool call, a file
read, a command run in a terminal, a reply) and closed leave nothing of any of
them behind.

Nothing is counted by owner name here: every object reachable from the hub (through containers,
acpls' own objects and the tasks its supervisors hold) is searched for a closed session's id, so
a new kind of per-session state that forgets its closer fails this test too. The hub runs in
this process against the real scripted agent. RSS is bench/run.py's P7 (not asserted here: no
timed or machine-dependent assertion in tests).
"""

from __future__ import annotations

import asyncio
import collections
import gc
import os
import re
import types
from pathlib import Path
from typing import Any

from acpls.core.hub import Hub
from tests.agents import script_command
from tests.e2e.test_session_close import AllowingEditor

SESSIONS = 1000
# The scripted agent names its sessions scripted-N; an id inside a longer string (a path, a key)
# counts too.
BATCH = 50
SESSION_ID = re.compile(r"scripted-\d+")


def turn_script() -> dict[str, Any]:
    return {
        "protocol": 1,
        "on_initialize": {
            "protocolVersion": 1,
            "agentInfo": {"name": "scripted-agent", "version": "0"},
            "agentCapabilities": {"sessionCapabilities": {"close": {}}},
        },
        "on_close": {},
        "on_prompt": [
            {
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "read-1",
                    "title": "read calc.py",
                    "kind": "read",
                    "status": "in_progress",
                    "locations": [{"path": "$cwd/calc.py", "line": 2}],
                }
            },
            {
                "request": "fs/read_text_file",
                "params": {"sessionId": "$sessionId", "path": "$cwd/calc.py"},
            },
            {
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "read-1",
                    "status": "completed",
                }
            },
            {
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "done"},
                }
            },
        ],
    }


TERMINAL_STEPS = [
    {
        "request": "terminal/create",
        "params": {"sessionId": "$sessionId", "command": "true", "cwd": "$cwd"},
        "save": "t",
    },
    {
        "request": "terminal/wait_for_exit",
        "params": {"sessionId": "$sessionId", "terminalId": "$t.terminalId"},
    },
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "run-1",
            "title": "true",
            "kind": "execute",
            "status": "completed",
            "content": [{"type": "terminal", "terminalId": "$t.terminalId"}],
        }
    },
]

# Walked through: containers, and instances of acpls' own classes (attrs, __dict__, __slots__).
CONTAINERS = (dict, list, tuple, set, frozenset, collections.deque)
SKIPPED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, str, bytes)


def _children(obj: Any) -> list[Any]:
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, CONTAINERS):
        return list(obj)
    if isinstance(obj, types.MethodType):
        return [obj.__self__]
    if isinstance(obj, asyncio.Task):
        coro = obj.get_coro()
        frame = getattr(coro, "cr_frame", None)
        return [obj.get_name(), *(frame.f_locals.values() if frame is not None else ())]
    module = type(obj).__module__ or ""
    if not (module.startswith("acpls") or module.startswith("asyncio")):
        return []
    found = list(vars(obj).values()) if hasattr(obj, "__dict__") else []
    for klass in type(obj).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if hasattr(obj, slot):
                found.append(getattr(obj, slot))
    return found


def holding(root: Any, ids: set[str]) -> dict[str, list[str]]:
    """Each id of `ids` found in what `root` reaches, with where (the type holding it)."""
    found: dict[str, list[str]] = {}
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(root, type(root).__name__)]
    while stack:
        obj, where = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            named = {obj} if obj in ids else set(SESSION_ID.findall(obj)) & ids
            for session_id in named:
                found.setdefault(session_id, []).append(where)
            continue
        if isinstance(obj, SKIPPED) and not isinstance(obj, str):
            continue
        here = type(obj).__name__
        stack.extend((child, f"{where}>{here}") for child in _children(obj))
    return found


def count_per_session_state(hub: Hub, ids: set[str]) -> dict[str, Any]:
    gc.collect()
    return {
        "sessions": len(hub.sessions),
        "tasks": [t.get_name() for t in hub.tasks._tasks if not t.done()],
        "held": holding(hub, ids),
    }


async def test_a_thousand_sessions_leave_nothing_behind(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    script = turn_script()
    steps = [*script["on_prompt"], *TERMINAL_STEPS]
    argv = script_command({**script, "on_prompt": steps}, tmp_path / "agent.jsonl")
    editor = AllowingEditor(str(workspace))
    hub = Hub(editor, environ=dict(os.environ), state_dir=tmp_path / "state")
    hub.configure(
        {
            "agent": {"command": argv[0], "args": argv[1:]},
            "checkpoints": {"enabled": False},
        }
    )
    admin = hub.admin
    closed: set[str] = set()
    try:
        # The scan is shown to find a live session's state first: it can fail.
        probe = await hub.new_session()
        await hub.prompt(probe.id, "go", [])
        live = count_per_session_state(hub, {probe.id})
        assert probe.id in live["held"], live
        await admin.close(probe.id)
        closed.add(probe.id)

        async def use_one(index: int) -> str:
            session = await hub.new_session()
            result = await hub.prompt(session.id, f"turn {index}", [])
            assert result["stopReason"] == "end_turn", result
            await admin.close(session.id)
            return session.id

        # Turns of different sessions run at once, as in an editor with many chats open (one at
        # a time would spend minutes in the review watcher's end-of-turn debounce alone).
        for start in range(1, SESSIONS, BATCH):
            batch = range(start, min(start + BATCH, SESSIONS))
            closed.update(await asyncio.gather(*(use_one(i) for i in batch)))

        # A closed session's terminals are stopped by a task of their own: let those finish.
        closing = [t for t in hub.tasks._tasks if SESSION_ID.search(t.get_name())]
        if closing:
            await asyncio.wait(closing, timeout=30)
        assert len(closed) == SESSIONS
        left = count_per_session_state(hub, closed)
        assert left == {"sessions": 0, "tasks": [], "held": {}}, left
    finally:
        await hub.aclose()
