"""P9: the JSON fallback's cost. acpls reads every line an agent writes and writes every acpls/*
frame through one front door (server/acpls/speedups.py `json_loads` / `json_dumps`): orjson where
it is installed, the standard library's `json` where it is not (a CPython the .vsix carries no
wheels for, a platform without them). Both paths, in the same run, over the same ACP traffic: v2
terminal output (base64), agent message chunks, tool-call updates with a diff, and a v1 terminal
`_meta` line; each line decoded, then re-encoded as acpls forwards it. The figure is the
fallback's CPU time over orjson's; the target is that both paths give the same values for every
line (speed is reported, not judged: the fallback exists so acpls starts, not to be fast).

`python bench/json_codec.py [--lines N]` runs it alone.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from acpls import speedups  # noqa: E402
from bench import traffic  # noqa: E402

if TYPE_CHECKING:
    from bench.run import Config, Context, Report

LINES = 20_000


def sample_lines() -> list[bytes]:
    """One of each kind of line an agent sends in a turn, as orjson writes them."""
    dumps = speedups._pick_json(frozenset({"json"}))[1]
    output = base64.b64encode(traffic.chunk_text(4096, 1)).decode()
    session = {"sessionId": "s1"}
    kinds: list[dict[str, Any]] = [
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": output},
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "héllo " * 20},
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "status": "completed",
            "content": [
                {
                    "type": "diff",
                    "path": "/ws/a.py",
                    "oldText": "x = 1\n" * 40,
                    "newText": "y\n" * 40,
                }
            ],
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c2",
            "_meta": {"terminal_output": {"terminal_id": "t1", "data": "ok lorem ipsum\r\n" * 8}},
        },
    ]
    return [
        dumps({"jsonrpc": "2.0", "method": "session/update", "params": {**session, "update": u}})
        for u in kinds
    ]


def cpu_seconds(
    loads: Callable[[bytes], Any], dumps: Callable[[Any], bytes], lines: list[bytes], count: int
) -> float:
    started = time.process_time()
    for index in range(count):
        dumps(loads(lines[index % len(lines)]))
    return time.process_time() - started


def measure(count: int, runs: int) -> dict[str, Any]:
    lines = sample_lines()
    fast_loads, fast_dumps, _, fast_name = speedups._pick_json(frozenset({"json"}))
    std_loads, std_dumps, _, std_name = speedups._pick_json(frozenset())
    exact = all(
        std_loads(line) == fast_loads(line)
        and fast_loads(std_dumps(std_loads(line))) == fast_loads(line)
        for line in lines
    )
    fast, std = [], []
    for _ in range(runs):  # alternated, so load on the machine falls on both alike
        fast.append(cpu_seconds(fast_loads, fast_dumps, lines, count))
        std.append(cpu_seconds(std_loads, std_dumps, lines, count))
    return {
        "lines": count,
        "fast": fast_name,
        "fallback": std_name,
        "fast_s": fast,
        "fallback_s": std,
        "exact": exact,
    }


def bench_p9(ctx: Context, cfg: Config, report: Report) -> None:
    """`make bench`'s P9 line."""
    figures = measure(LINES if not cfg.quick else LINES // 4, max(cfg.runs, 3))
    report.figures["p9"] = figures
    fast, std = statistics.median(figures["fast_s"]), statistics.median(figures["fallback_s"])
    per_line = 1e6 / figures["lines"]
    report.target(
        f"P9 JSON fallback ({figures['lines']} ACP lines decoded and re-encoded):",
        figures["exact"] and fast > 0,
        f"stdlib json {std * per_line:.1f} us a line = {std / fast:.1f}x orjson"
        f" {fast * per_line:.1f} us; same values {'yes' if figures['exact'] else 'NO'}"
        " (target: same values; the ratio is the cost of a Python without orjson)",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="P9: the JSON fallback against orjson")
    parser.add_argument("--lines", type=int, default=LINES)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    figures = measure(args.lines, args.runs)
    fast, std = statistics.median(figures["fast_s"]), statistics.median(figures["fallback_s"])
    exact = figures["exact"]
    print(f"orjson {fast:.3f} s, stdlib json {std:.3f} s ({std / fast:.1f}x), exact {exact}")
    return 0 if figures["exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
