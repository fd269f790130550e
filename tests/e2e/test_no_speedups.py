"""The server on a Python without its compiled speed-ups (a CPython the .vsix has no wheels for,
a platform without them): orjson, pybase64 and uvloop made unimportable by a sitecustomize, the
real `acpls` process initializes and runs an agent's turn (v1 and v2) on the standard library."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import command, notifications, scripted, start

BLOCKED = ("orjson", "pybase64", "uvloop")
# `sys.modules[name] = None` makes `import name` raise ImportError, as where nothing is installed.
SHIM = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in BLOCKED)


def without_speedups(env: dict[str, str], shim_dir: Path) -> dict[str, str]:
    shim_dir.mkdir(exist_ok=True)
    (shim_dir / "sitecustomize.py").write_text(SHIM, encoding="utf-8")
    path = [str(shim_dir), env.get("PYTHONPATH", "")]
    # Every fast path asked for, uvloop too: each must fall back, not fail.
    return {**env, "PYTHONPATH": os.pathsep.join(p for p in path if p), "ACPLS_SPEEDUPS": "all"}


@pytest.fixture
def server_env(state_dir: Path, tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "XDG_STATE_HOME": str(state_dir), "ACPLS_DEMO_SPEED": "0"}
    return without_speedups(env, tmp_path / "shim")


def test_the_shim_leaves_the_server_on_the_standard_library(server_env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acpls", "--self-check", "--json"],
        env=server_env,
        capture_output=True,
        text=True,
        check=False,
    )
    result = json.loads(done.stdout)
    assert (done.returncode, result["ok"], result["problems"]) == (0, True, [])
    speedups = result["speedups"]
    assert speedups["json"].startswith("json (orjson not usable here: ")
    assert speedups["base64"].startswith("binascii (pybase64 not usable here: ")
    assert speedups["loop"] == "asyncio"


def _update(**fields: Any) -> dict[str, Any]:
    return {"update": fields}


async def test_a_v2_turn_with_terminal_output_runs_on_the_fallbacks(
    client, workspace: Path, tmp_path: Path
) -> None:
    output = "".join(f"line {i} é\r\n" for i in range(200)).encode()
    steps = [
        _update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": "héllo"}),
        _update(sessionUpdate="terminal_update", terminalId="t1", command="make"),
        _update(
            sessionUpdate="terminal_output_chunk",
            terminalId="t1",
            data=base64.b64encode(output).decode(),
        ),
        _update(sessionUpdate="terminal_update", terminalId="t1", exitStatus={"exitCode": 0}),
    ]
    log = tmp_path / "agent.jsonl"
    result = await start(client, workspace, scripted({"protocol": 2, "on_prompt": steps}, log))
    assert result.server_info is not None and result.server_info.name == "acpls"
    await command(client, "acpls.prompt", {"text": "build"})
    shown = "".join(p["text"] for p in notifications(client, "acpls/terminalOutput"))
    assert shown == output.decode()
    updates = [
        u
        for batch in notifications(client, "acpls/sessionUpdates")
        for u in batch.get("updates", [])
    ] + notifications(client, "acpls/sessionUpdate")
    texts = json.dumps(updates, ensure_ascii=False)
    assert "héllo" in texts


async def test_a_v1_turn_with_terminal_output_runs_on_the_fallbacks(
    client, workspace: Path, tmp_path: Path
) -> None:
    meta_info = {"terminal_info": {"terminal_id": "t1", "cwd": str(workspace)}}
    steps = [
        _update(
            sessionUpdate="tool_call",
            toolCallId="c1",
            title="Run make",
            kind="execute",
            status="in_progress",
            _meta=meta_info,
        ),
        *(
            _update(
                sessionUpdate="tool_call_update",
                toolCallId="c1",
                _meta={"terminal_output": {"terminal_id": "t1", "data": f"{word}\n"}},
            )
            for word in ("one", "two", "thrée")
        ),
        _update(
            sessionUpdate="tool_call_update",
            toolCallId="c1",
            status="completed",
            _meta={"terminal_exit": {"terminal_id": "t1", "exit_code": 0}},
        ),
    ]
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "build"})
    shown = ""
    for params in notifications(client, "acpls/terminalOutput"):
        shown = params["text"] if params.get("reset") else shown + params["text"]
    assert shown == "one\r\ntwo\r\nthrée\r\n"
