"""The relay of terminal output and tool-call bursts, end to end on the real server."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import command, notifications, scripted, start
from tests.e2e.timed import TimedRecord


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


async def test_terminal_output_reaches_the_editor_in_capped_pieces_before_the_exit(
    client, workspace: Path, tmp_path: Path
):
    """A 35,000-line log and its exit in one burst (one flush): every output piece is at most
    64 Ki characters and comes before the terminal update with the exit status, so the editor's
    "process exited" line lands after the last output line (issue 18)."""
    lines = b"".join(b"log line %06d\r\n" % i for i in range(35_000))
    chunks = [lines[i : i + 65_536] for i in range(0, len(lines), 65_536)]
    steps: list[dict[str, Any]] = [
        _update(sessionUpdate="terminal_update", terminalId="t1", command="cat big.log"),
        *(
            _update(
                sessionUpdate="terminal_output_chunk",
                terminalId="t1",
                data=base64.b64encode(chunk).decode(),
            )
            for chunk in chunks
        ),
        _update(sessionUpdate="terminal_update", terminalId="t1", exitStatus={"exitCode": 0}),
    ]
    log = tmp_path / "agent.jsonl"
    script = tmp_path / "script.json"  # too long for a command line
    script.write_text(json.dumps({"protocol": 2, "on_prompt": steps}))
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "cat"})
    events = [
        (method, params)
        for method, params in getattr(client, "acpls_notifications", [])
        if method in ("acpls/terminalOutput", "acpls/terminalUpdate")
    ]
    outputs = [p for m, p in events if m == "acpls/terminalOutput"]
    assert max(len(p["text"]) for p in outputs) <= 64 * 1024
    assert len(outputs) >= len(lines) // (64 * 1024)
    shown = "".join(p["text"] for p in outputs)
    # Compared by parts: a failing `==` of two 560 kB strings makes pytest diff them for minutes.
    assert (len(shown), shown[-17:]) == (len(lines), "log line 034999\r\n")
    assert shown == lines.decode(), "the output shown differs from the log"
    last_output = max(i for i, (m, _) in enumerate(events) if m == "acpls/terminalOutput")
    exits = [
        i for i, (m, p) in enumerate(events) if m == "acpls/terminalUpdate" and "exitStatus" in p
    ]
    assert exits, "no terminal update with the exit status"
    assert min(exits) > last_output


async def test_output_past_the_scrollback_before_it_is_sent_reaches_the_editor_as_a_reset_saying_what_was_dropped(
    client, workspace: Path, tmp_path: Path
):
    """More output than `terminal.scrollbackBytes` within one flush: acpls keeps the end and
    sends it as a reset with `dropped`, the bytes before it that are gone, so the pane can say
    it does not start at the beginning (issue 18: a trim says so in the pane)."""
    lines = b"".join(b"line %05d\r\n" % i for i in range(2000))  # 24,000 bytes
    steps = [
        _update(sessionUpdate="terminal_update", terminalId="t1", command="cat big.log"),
        _update(
            sessionUpdate="terminal_output_chunk",
            terminalId="t1",
            data=base64.b64encode(lines).decode(),
        ),
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"protocol": 2, "on_prompt": steps}))
    await start(
        client,
        workspace,
        scripted(script, tmp_path / "agent.jsonl"),
        terminal={"scrollbackBytes": 4096},
    )
    await command(client, "acpls.prompt", {"text": "cat"})
    outputs = notifications(client, "acpls/terminalOutput")
    assert outputs[0]["reset"] is True
    shown = "".join(p["text"] for p in outputs)
    assert 0 < len(shown) <= 4096 and lines.decode().endswith(shown)
    assert outputs[0]["dropped"] == len(lines) - len(shown)
    assert all("dropped" not in p for p in outputs[1:])


async def test_a_burst_with_follow_stays_within_the_session_message_budget(
    client, workspace: Path, tmp_path: Path
):
    """Five tool calls updated 2,500 times over ~2.5 s, each update with a new location, follow
    on: the editor gets at most 60 messages of the session in any second, follow messages
    counted with the session updates (protocol.md 5.4); follow still moves, its last move is the
    agent's newest location, and the last state of each tool call is the agent's."""
    steps: list[dict[str, Any]] = []
    for group in range(100):
        for n in range(group * 25, group * 25 + 25):
            steps.append(
                _update(
                    sessionUpdate="tool_call_update",
                    toolCallId=f"c{n % 5}",
                    title=f"step {n}",
                    status="completed" if n >= 2495 else "in_progress",
                    locations=[{"path": str(workspace / f"f{n % 5}.py"), "line": n + 1}],
                )
            )
        steps.append({"sleep": 0.025})
    timed = TimedRecord()
    client.acpls_notifications = timed
    log = tmp_path / "agent.jsonl"
    script = tmp_path / "burst.json"  # too long for one command-line argument
    script.write_text(json.dumps({"protocol": 2, "on_prompt": steps}))
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "burst"})
    counted = [
        at
        for at, (method, _params) in zip(timed.times, timed, strict=True)
        if method in ("acpls/sessionUpdate", "acpls/followAgent")
    ]
    worst = max(sum(1 for t in counted if start <= t < start + 1.0) for start in counted)
    assert worst <= 60, f"{worst} messages in one second"
    follows = notifications(client, "acpls/followAgent")
    assert len(follows) >= 20
    assert follows[-1]["uri"] == (workspace / "f4.py").as_uri()
    assert follows[-1]["range"]["start"]["line"] == 2499
    calls = [
        p["update"]["toolCall"]
        for p in notifications(client, "acpls/sessionUpdate")
        if p["update"]["sessionUpdate"] == "tool_call"
    ]
    final = {call["toolCallId"]: (call["title"], call["status"]) for call in calls}
    assert final == {f"c{n % 5}": (f"step {n}", "completed") for n in range(2495, 2500)}


def _v1_output_line(data_body: str, terminal_id: str = "t1") -> dict[str, Any]:
    """A raw v1 terminal output line whose `data` string is `data_body` as written (JSON
    escapes and all), compact as claude-agent-acp writes it."""
    template = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "$sessionId",
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "c1",
                    "_meta": {"terminal_output": {"terminal_id": terminal_id, "data": "@"}},
                },
            },
        },
        separators=(",", ":"),
    )
    return {"raw": template.replace('"@"', f'"{data_body}"')}


async def test_v1_output_lines_read_by_their_bytes_show_what_parsing_them_shows(
    client, workspace: Path, tmp_path: Path
):
    """The v1 output fast path (core/output_lines.py) takes the lines after the first of each
    form; lines it must decline (not JSON, another structure, a lone surrogate) go the ordinary
    way in their place, and what the editor shows is what parsing each line gives: converted
    per chunk, sanitised, in order, across an interleaved status update and a second terminal."""
    steps = [
        _update(
            sessionUpdate="tool_call",
            toolCallId="c1",
            title="Run make",
            kind="execute",
            status="in_progress",
            _meta={"terminal_info": {"terminal_id": "t1", "cwd": str(workspace)}},
        ),
        _v1_output_line("first\\n"),  # learned from
        _v1_output_line("second\\r\\n\\u001b[32mgreen\\u001b[0m\\n"),
        _v1_output_line('x\\",\\"extra\\":\\"y'),  # an escaped quote: part of the text
        _v1_output_line('x","extra":"y'),  # another key: the ordinary path shows "x"
        _v1_output_line("ab\\\\"),  # an escaped backslash
        _v1_output_line("ab\\"),  # the closing quote escaped: not JSON, dropped
        _v1_output_line("\\ud83d"),  # a lone surrogate: not JSON for orjson, dropped
        _update(sessionUpdate="tool_call_update", toolCallId="c1", title="Run make again"),
        _v1_output_line("a\\r"),
        _v1_output_line("\\nb"),  # per chunk this LF is bare: CR CR LF
        _v1_output_line("two\\n", terminal_id="t2"),
        _v1_output_line("\\u001b]52;c;SGVsbG8=\\u0007clip\\u00e9 😀\\n"),  # OSC 52 removed
        _v1_output_line("three\\n", terminal_id="t2"),
        _update(
            sessionUpdate="tool_call_update",
            toolCallId="c1",
            _meta={"terminal_exit": {"terminal_id": "t1", "exit_code": 0}},
        ),
    ]
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "build"})
    shown: dict[str, str] = {}
    for params in notifications(client, "acpls/terminalOutput"):
        before = "" if params.get("reset") else shown.get(params["terminalId"], "")
        shown[params["terminalId"]] = before + params["text"]
    assert shown == {
        "t1": 'first\r\nsecond\r\n\x1b[32mgreen\x1b[0m\r\nx","extra":"yxab\\a\r\r\nbclipé 😀\r\n',
        "t2": "two\r\nthree\r\n",
    }
    states = notifications(client, "acpls/terminalUpdate")
    assert [s["exitStatus"] for s in states if s["terminalId"] == "t1" and "exitStatus" in s] == [
        {"exitCode": 0}
    ]
