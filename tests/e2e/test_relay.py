"""The relay of terminal output and tool-call bursts, end to end on the real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.conftest import command, notifications, scripted, start


def _update(**fields: Any) -> dict[str, Any]:
    return {"update": fields}


async def test_v1_terminal_meta_output_is_shown_once_when_the_tool_call_completes(
    client, workspace: Path, tmp_path: Path
):
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
        _update(
            sessionUpdate="tool_call_update",
            toolCallId="c1",
            _meta={"terminal_output": {"terminal_id": "t1", "data": "one\n"}},
        ),
        _update(
            sessionUpdate="tool_call_update",
            toolCallId="c1",
            _meta={"terminal_output": {"terminal_id": "t1", "data": "two\n"}},
        ),
        # A later update without output must not append the last output again.
        _update(sessionUpdate="tool_call_update", toolCallId="c1", status="completed"),
        _update(
            sessionUpdate="tool_call_update",
            toolCallId="c1",
            _meta={"terminal_exit": {"terminal_id": "t1", "exit_code": 0}},
        ),
    ]
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "build"})
    outputs = notifications(client, "acpls/terminalOutput")
    shown = ""
    for params in outputs:
        shown = params["text"] if params.get("reset") else shown + params["text"]
    assert shown == "one\r\ntwo\r\n"
    states = notifications(client, "acpls/terminalUpdate")
    assert states[-1]["exitStatus"] == {"exitCode": 0}


async def test_tool_call_burst_reaches_the_editor_coalesced_with_the_final_state(
    client, workspace: Path, tmp_path: Path
):
    steps = [
        _update(
            sessionUpdate="tool_call_update",
            toolCallId=f"c{n % 4}",
            title=f"step {n}",
            status="completed" if n >= 396 else "in_progress",
        )
        for n in range(400)
    ]
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 2, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "burst"})
    updates = [p["update"] for p in notifications(client, "acpls/sessionUpdate")]
    calls = [u["toolCall"] for u in updates if u["sessionUpdate"] == "tool_call"]
    assert len(calls) < 400
    final = {call["toolCallId"]: call for call in calls}
    assert {k: (v["title"], v["status"]) for k, v in final.items()} == {
        f"c{n % 4}": (f"step {n}", "completed") for n in range(396, 400)
    }
