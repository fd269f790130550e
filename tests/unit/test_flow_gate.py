"""The editor-output gate is passed in (flow.py), not a module global: an agent process given a
closed gate leaves its stdout unread until the gate opens."""

from __future__ import annotations

import asyncio
import sys

from acpls.acp.process import AgentProcess
from acpls.acp.transport import LineReader
from acpls.flow import FlowGate


async def test_a_closed_gate_leaves_the_agents_output_unread_until_it_opens() -> None:
    gate = FlowGate()
    gate.close()
    received: list[bytes] = []
    got_line = asyncio.Event()

    def on_line(line: bytes) -> None:
        received.append(line)
        got_line.set()

    process = AgentProcess(
        [sys.executable, "-c", "print('hello', flush=True)"],
        cwd=".",
        env={},
        on_stdout=LineReader(on_line, max_line=1024),
        on_exit=lambda _p: None,
        output_gate=gate,
    )
    await process.start()
    assert process._proc is not None
    await process._proc.wait()  # it wrote and exited; acpls has not read it
    await asyncio.sleep(0)
    assert received == []
    gate.open()
    await asyncio.wait_for(got_line.wait(), 10)
    assert received == [b"hello"]
    await process.stop()


async def test_two_gates_are_independent() -> None:
    one, two = FlowGate(), FlowGate()
    one.close()
    assert not one.is_open and two.is_open
    await asyncio.wait_for(two.wait_open(), 1)
