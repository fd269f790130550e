"""Sums up the traces of `make bench-vscode TRACE=DIR`: `python bench/trace.py FILE... [--show N]`.

For each trace: the tasks of the main thread that ran the agent panel's page (the workbench and
the panel share it), how many took more than 16 ms and 8 ms, the longest, and what the long ones
spent their time on (self time per trace event: Layout, UpdateLayoutTree, Paint, FunctionCall,
GC...). A CPU profile calls all of rendering "(program)"; the trace tells its parts apart. A key
typed while such a task runs waits for its end: these counts are the figures V5 follows, and they
depend less on the machine's load than the keys' latencies do.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

Event = dict[str, Any]
TASK_NAMES = {"RunTask", "ThreadControllerImpl::RunTask"}


def page_thread(events: list[Event]) -> tuple[int, int]:
    """The (pid, tid) that ran the panel's script."""
    owners: Counter[tuple[int, int]] = Counter()
    for e in events:
        if e.get("name") == "FunctionCall" and "webview" in json.dumps(e.get("args", {})):
            owners[(e["pid"], e["tid"])] += 1
    if not owners:
        raise SystemExit("no call into the panel's script in this trace")
    return owners.most_common(1)[0][0]


def outer_tasks(spans: list[Event]) -> list[Event]:
    """Tasks not nested in the task before them (a task may run another inside)."""
    tasks: list[Event] = []
    for e in spans:
        if e["name"] not in TASK_NAMES:
            continue
        if tasks and e["ts"] < tasks[-1]["ts"] + tasks[-1]["dur"]:
            continue
        tasks.append(e)
    return tasks


def self_times(task: Event, spans: list[Event]) -> Counter[str]:
    """Self time (µs) per event name inside `task` (spans sorted by start)."""
    times: Counter[str] = Counter()
    stack: list[Event] = []
    end = task["ts"] + task["dur"]
    for e in spans:
        if e is task or e["ts"] < task["ts"] or e["ts"] + e["dur"] > end:
            continue
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
            stack.pop()
        if stack:
            times[stack[-1]["name"]] -= e["dur"]
        times[e["name"]] += e["dur"]
        stack.append(e)
    return times


def gc_line(spans: list[Event]) -> str:
    """The collector's time on the thread: young-generation scavenges (each stops the thread for its
    whole length; its cost grows with what survives, so with what the page keeps) and the old
    generation's incremental marking steps and final pauses."""
    minor = [e["dur"] for e in spans if e["name"] == "MinorGC"]
    major = sum(e["dur"] for e in spans if e["name"] in ("MajorGC", "V8.GC_MC_INCREMENTAL"))
    return (
        f"  GC: {len(minor)} scavenges, {sum(minor) / 1000:.0f} ms (longest "
        f"{max(minor, default=0) / 1000:.1f} ms); old generation {major / 1000:.0f} ms"
    )


def summary(path: Path, show: int) -> None:
    events: list[Event] = json.loads(path.read_text())["traceEvents"]
    thread = page_thread(events)
    spans = sorted(
        (
            e
            for e in events
            if (e.get("pid"), e.get("tid")) == thread and e.get("ph") == "X" and "dur" in e
        ),
        key=lambda e: e["ts"],
    )
    tasks = outer_tasks(spans)
    long = [t for t in tasks if t["dur"] > 16_000]
    busy = sum(t["dur"] for t in tasks)
    longest = max((t["dur"] for t in tasks), default=0)
    over8 = sum(1 for t in tasks if t["dur"] > 8_000)
    long_ms = sum(t["dur"] for t in long) / 1000
    print(
        f"{path.name}: {len(tasks)} tasks, busy {busy / 1000:.0f} ms, > 16 ms: {len(long)} "
        f"({long_ms:.0f} ms), > 8 ms: {over8}, longest {longest / 1000:.1f} ms"
    )
    print(gc_line(spans))
    inside: Counter[str] = Counter()
    for t in long:
        inside.update(self_times(t, spans))
    print(
        "  in the tasks > 16 ms (self ms): "
        + ", ".join(f"{k} {v / 1000:.0f}" for k, v in inside.most_common(10))
    )
    start = tasks[0]["ts"] if tasks else 0
    for t in sorted(long, key=lambda t: -t["dur"])[:show]:
        parts = ", ".join(f"{k} {v / 1000:.1f}" for k, v in self_times(t, spans).most_common(5))
        print(f"  at {(t['ts'] - start) / 1000:6.0f} ms, {t['dur'] / 1000:5.1f} ms: {parts}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description="long tasks of the agent panel's thread in chromium traces"
    )
    parser.add_argument("traces", nargs="+", type=Path)
    parser.add_argument("--show", type=int, default=5, help="list this many of the longest tasks")
    args = parser.parse_args()
    for path in args.traces:
        summary(path, args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
