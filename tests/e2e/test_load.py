"""Load: 20 sessions at once, each streaming messages, tool-call updates and terminal output
(tests/agents/load_agent.py) through the real acpls to a custom-mode editor. Nothing may be lost
or reordered within a session, and acpls' memory must stay flat. A few seconds in `make test`;
a minute in `make stress`."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import sys
import time
from collections import defaultdict
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from tests.agents import AGENTS_DIR
from tests.e2e.conftest import command, notifications, start
from tests.e2e.hostile_support import rss_mb, server_pid

SESSIONS = 20
RATE = 20  # ticks a second per session: 3 ACP messages each


def load_agent(seconds: float) -> dict[str, Any]:
    script = str(AGENTS_DIR / "load_agent.py")
    return {
        "command": sys.executable,
        "args": [script, "--seconds", str(seconds), "--rate", str(RATE)],
    }


async def sample_rss(pid: int, samples: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        samples.append(rss_mb(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


def per_session(client: LanguageClient) -> dict[str, dict[str, Any]]:
    """What the editor saw of each session: message text, terminal text, tool-call titles."""
    seen: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"text": [], "terminal": "", "titles": []}
    )
    for params in notifications(client, "acpls/sessionUpdate"):
        update, view = params["update"], seen[params["sessionId"]]
        kind = update["sessionUpdate"]
        if kind == "message_chunk" and update.get("role") == "agent":
            view["text"].append(update["content"]["text"])
        elif kind == "tool_call" and update["toolCall"]["toolCallId"] == "work":
            call = update["toolCall"]
            view["titles"].append((int(call["title"].split()[1]), call["status"]))
    for params in notifications(client, "acpls/terminalOutput"):
        view = seen[params["sessionId"]]
        view["terminal"] = (
            params["text"] if params.get("reset") else view["terminal"] + params["text"]
        )
    return seen


async def run_load(client: LanguageClient, workspace: Any, seconds: float) -> dict[str, Any]:
    await start(client, workspace, load_agent(seconds))
    session_ids = [
        (await command(client, "acpls.newSession"))["sessionId"] for _ in range(SESSIONS)
    ]
    pid = server_pid(client)
    samples: list[float] = []
    stop = asyncio.Event()
    sampler = asyncio.ensure_future(sample_rss(pid, samples, stop))
    started = time.monotonic()
    results = await asyncio.wait_for(
        asyncio.gather(
            *(command(client, "acpls.prompt", {"sessionId": s, "text": "go"}) for s in session_ids)
        ),
        seconds * 4 + 60,
    )
    elapsed = time.monotonic() - started
    await asyncio.sleep(0.3)  # the last flush
    stop.set()
    await sampler
    ticks = int(seconds * RATE)
    expected_text = "".join(f"{n} " for n in range(ticks))
    expected_terminal = "".join(f"line {n}\r\n" for n in range(ticks))
    seen = per_session(client)
    for session_id, result in zip(session_ids, results, strict=True):
        assert result == {"sessionId": session_id, "stopReason": "end_turn"}
        view = seen[session_id]
        assert "".join(view["text"]) == expected_text, f"{session_id}: messages lost or reordered"
        assert view["terminal"] == expected_terminal, f"{session_id}: terminal output lost"
        steps = [n for n, _ in view["titles"]]
        assert steps == sorted(steps) and len(set(steps)) == len(steps), f"{session_id}: {steps}"
        assert view["titles"][-1] == (ticks - 1, "completed")
    messages = len(notifications(client, "acpls/sessionUpdate")) + len(
        notifications(client, "acpls/terminalOutput")
    )
    figures = {
        "sessions": SESSIONS,
        "seconds": round(elapsed, 1),
        "acp_messages": SESSIONS * (3 * ticks + 2),
        "editor_messages": messages,
        "rss_samples": samples,
    }
    print(
        f"load: {SESSIONS} sessions for {elapsed:.1f} s, {figures['acp_messages']} ACP messages in,"
        f" {messages} editor messages out; RSS MiB start {samples[0]:.0f},"
        f" max {max(samples):.0f}, end {samples[-1]:.0f}"
    )
    return figures


async def test_twenty_sessions_stream_without_loss_for_a_few_seconds(client, workspace):
    figures = await run_load(client, workspace, seconds=3)
    samples = figures["rss_samples"]
    assert max(samples) < samples[0] + 64


@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_twenty_sessions_stream_without_loss_for_a_minute(client, workspace):
    figures = await run_load(client, workspace, seconds=60)
    samples = figures["rss_samples"]
    quarter = max(len(samples) // 4, 1)
    early = statistics.median(samples[quarter : 2 * quarter])
    late = statistics.median(samples[-quarter:])
    assert late < early + 16, f"memory grew from {early:.0f} to {late:.0f} MiB: {samples}"
