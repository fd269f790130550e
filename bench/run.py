"""`make bench`: acpls against its baselines, measured in the same run (bench/README.md).

Usage: python bench/run.py [--quick] [--runs N] [--only P1,P3] [--no-results-md]

Every benchmark drives real processes over stdio with the fast editor of bench/editor.py and the
load agent of bench/load_agent.py. Each figure is the median of several runs; each target line
ends in PASS or FALL SHORT. The figures go to bench/results/<time>.json (and latest.json), and
into bench/RESULTS.md between its figure markers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from acpls import speedups  # noqa: E402
from bench import traffic  # noqa: E402
from bench.bytecode import compile_acpls  # noqa: E402
from bench.checkpoint_store import bench_p10  # noqa: E402
from bench.checkpoints import bench_p6  # noqa: E402
from bench.editor import Editor, cpu_seconds, rss_kib  # noqa: E402
from bench.json_codec import bench_p9  # noqa: E402
from bench.session_load import bench_p8  # noqa: E402
from bench.stalled_editor import bench_p13  # noqa: E402

PY = sys.executable
BENCH = REPO / "bench"
RESULTS_DIR = BENCH / "results"
RESULTS_MD = BENCH / "RESULTS.md"
MARK_START = "<!-- figures:start -->"
MARK_END = "<!-- figures:end -->"

RELAYS: dict[str, list[str]] = {
    "acpls": [PY, "-m", "acpls"],
    "bare": [PY, str(BENCH / "baselines" / "bare_relay.py")],
    "pygls": [PY, str(BENCH / "baselines" / "pygls_relay.py")],
    "sdk": [PY, str(BENCH / "baselines" / "sdk_relay.py")],
}
RELAYS["acpls-stdlib"] = RELAYS["acpls-uvloop"] = RELAYS["acpls"]
# The fast paths of server/acpls/speedups.py, measured in the same run: acpls as it starts by
# default (whatever the caller's environment says), with none (stdlib only), and with every one
# (uvloop too: not the default, so P1 keeps measuring whether it would pay).
RELAY_ENV: dict[str, dict[str, str]] = {
    "acpls": {"ACPLS_SPEEDUPS": ""},
    "acpls-stdlib": {"ACPLS_SPEEDUPS": "0"},
    "acpls-uvloop": {"ACPLS_SPEEDUPS": "all"},
}
MINIMAL_PYGLS = [PY, str(BENCH / "baselines" / "minimal_pygls.py")]
LABELS = {
    "acpls": "acpls",
    "acpls-v1": "acpls (v1 traffic)",
    "acpls-stdlib": "acpls, stdlib only",
    "acpls-stdlib-v1": "acpls, stdlib only (v1)",
    "acpls-uvloop": "acpls, all speed-ups (uvloop)",
    "acpls-uvloop-v1": "acpls, all speed-ups (v1)",
    "bare": "(a) bare Python",
    "bare-v1": "(a) bare Python (v1)",
    "pygls": "(b) pygls notify-per-chunk",
    "sdk": "(c) ACP SDK (v1 traffic)",
}
TAIL_CHECK = 64 * 1024


@dataclass
class Config:
    runs: int
    quick: bool
    p1_4k_count: int
    p1_64_count: int
    p2_events: int
    p3_bytes: int
    p4_runs: int
    p5_updates: int = 100_000
    p5_calls: int = 5
    p7_sessions: int = 1000
    p2_flood: int = 3000

    @classmethod
    def make(cls, quick: bool, runs: int | None) -> Config:
        if quick:
            return cls(runs or 1, True, 8192, 100_000, 60, 256 << 20, 3)
        return cls(runs or 3, False, 16384, 300_000, 120, 1 << 30, 7)


@dataclass
class Target:
    name: str
    passed: bool
    line: str


@dataclass
class Report:
    config: Config
    figures: dict[str, Any] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)

    def target(self, name: str, passed: bool, text: str) -> None:
        line = f"{name} {text} -> {'PASS' if passed else 'FALL SHORT'}"
        print(line, flush=True)
        self.targets.append(Target(name, passed, line))


# -- sessions -----------------------------------------------------------------------------------


class Relay:
    """One relay process with an editor attached and a session open on the load agent."""

    def __init__(self, name: str, protocol: int, workspace: Path, env: dict[str, str]) -> None:
        self.name = name
        self.editor = Editor(RELAYS[name], env={**env, **RELAY_ENV.get(name, {})})
        agent = {"command": PY, "args": [str(BENCH / "load_agent.py"), "--protocol", str(protocol)]}
        self.editor.initialize(str(workspace), {"agent": agent})

    def new_session(self) -> str:
        return self.editor.command("acpls.newSession", {})["sessionId"]

    def prompt(self, session_id: str, scenario: dict[str, Any], timeout: float = 600) -> Any:
        return self.editor.command(
            "acpls.prompt", {"sessionId": session_id, "text": json.dumps(scenario)}, timeout
        )

    def close(self) -> None:
        self.editor.close()


class TerminalView:
    """What an editor shows of terminal output: every text since the last reset (its tail), and a
    running BLAKE2b digest of all of it (P1 compares it with the agent's whole stream)."""

    def __init__(self) -> None:
        self.digest = hashlib.blake2b()
        self.since_reset = 0  # bytes the digest covers
        self.parts: list[str] = []
        self.held = 0
        self.received = 0
        self.messages = 0
        self.resets = 0

    def on_output(self, params: dict[str, Any]) -> None:
        text = params["text"]
        self.messages += 1
        self.received += len(text)
        if params.get("reset"):
            self.resets += 1
            self.parts = []
            self.held = 0
            self.digest = hashlib.blake2b()
            self.since_reset = 0
        encoded = text.encode()
        self.digest.update(encoded)
        self.since_reset += len(encoded)
        self.parts.append(text)
        self.held += len(text)
        if self.held > 4 * TAIL_CHECK:
            kept = "".join(self.parts)[-TAIL_CHECK:]
            self.parts = [kept]
            self.held = len(kept)

    def tail(self) -> str:
        return "".join(self.parts)[-TAIL_CHECK:]


class Context:
    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="acpls-bench-"))
        self.workspace = self.root / "ws"
        self.workspace.mkdir()
        self.env = {
            **os.environ,
            "XDG_STATE_HOME": str(self.root / "state"),
            "PYTHONPATH": str(REPO),
        }

    def relay(self, name: str, protocol: int) -> Relay:
        return Relay(name, protocol, self.workspace, self.env)

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


# -- P1: terminal relay throughput --------------------------------------------------------------


def terminal_run(ctx: Context, name: str, protocol: int, chunk: int, count: int) -> dict[str, Any]:
    relay = ctx.relay(name, protocol)
    try:
        session_id = relay.new_session()
        view = TerminalView()
        relay.editor.handlers["acpls/terminalOutput"] = view.on_output
        scenario = {"scenario": "terminal", "chunk": chunk, "count": count}
        cpu_before = cpu_seconds(relay.editor.pid)
        start = time.monotonic_ns()
        relay.prompt(session_id, scenario)
        seconds = (time.monotonic_ns() - start) / 1e9
        cpu = cpu_seconds(relay.editor.pid) - cpu_before
        # The whole text, byte for byte: a running digest of everything the editor was sent.
        # After a reset (the scrollback trimmed for an editor that fell behind) what the editor
        # holds must be the stream's exact suffix.
        suffix = view.since_reset if view.resets else None
        intact = view.digest.hexdigest() == traffic.expected_digest(chunk, count, suffix)
        return {
            "seconds": seconds,
            "mb_per_s": chunk * count / seconds / 1e6,
            "chunks_per_s": count / seconds,
            "relay_cpu_s": cpu,
            "mb_per_cpu_s": chunk * count / max(cpu, 0.01) / 1e6,
            "editor_messages": view.messages,
            "resets": view.resets,
            "received_chars": view.received,
            "intact": intact,
        }
    finally:
        relay.close()


def bench_p1(ctx: Context, cfg: Config, report: Report) -> None:
    # label: (relay, protocol)
    contenders = {
        "acpls": ("acpls", 2),
        "acpls-v1": ("acpls", 1),
        "acpls-stdlib": ("acpls-stdlib", 2),
        "acpls-stdlib-v1": ("acpls-stdlib", 1),
        "acpls-uvloop": ("acpls-uvloop", 2),
        "acpls-uvloop-v1": ("acpls-uvloop", 1),
        "bare": ("bare", 2),
        "bare-v1": ("bare", 1),
        "pygls": ("pygls", 2),
        "sdk": ("sdk", 1),
    }
    for chunk, count in ((4096, cfg.p1_4k_count), (64, cfg.p1_64_count)):
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label in contenders}
        for _ in range(cfg.runs):
            for label, (name, protocol) in contenders.items():
                runs[label].append(terminal_run(ctx, name, protocol, chunk, count))
        medians = {label: _median(r, "mb_per_s") for label, r in runs.items()}
        per_cpu = {label: _median(r, "mb_per_cpu_s") for label, r in runs.items()}
        intact = {label: all(x["intact"] for x in r) for label, r in runs.items()}
        key = f"p1_{chunk}"
        report.figures[key] = {
            "median_mb_per_cpu_s": per_cpu,
            "chunk": chunk,
            "count": count,
            "runs": runs,
            "median_mb_per_s": medians,
        }
        for label in runs:
            rate = medians[label]
            chunks = rate * 1e6 / chunk
            print(
                f"   {LABELS[label]:<28} {rate:8.1f} MB/s {chunks / 1000:8.1f}k chunks/s"
                f"  {per_cpu[label]:7.1f} MB per relay CPU-s"
                f"  editor msgs {statistics.median(x['editor_messages'] for x in runs[label]):.0f}"
                f"{'' if intact[label] else '  OUTPUT WRONG'}",
                flush=True,
            )
        ours = medians["acpls"]
        ratio_a = ours / medians["bare"]
        passed = (
            ratio_a >= 0.9
            and ours > medians["pygls"]
            and medians["acpls-v1"] > medians["sdk"]  # (c) reads v1: compared on that stream
            and intact["acpls"]
            and intact["acpls-v1"]
        )
        size = "4 KiB" if chunk == 4096 else "64 B"
        report.target(
            f"P1 terminal relay {size}:",
            passed,
            f"acpls {ours:.1f} MB/s = {ratio_a:.2f}x (a) {medians['bare']:.1f};"
            f" {ours / medians['pygls']:.1f}x (b) {medians['pygls']:.1f};"
            f" v1 {medians['acpls-v1']:.1f} = {medians['acpls-v1'] / medians['sdk']:.1f}x"
            f" (c) {medians['sdk']:.1f} (target >= 0.9x (a), ahead of (b), v1 ahead of (c));"
            f" per relay CPU-second {per_cpu['acpls'] / per_cpu['bare']:.2f}x (a)",
        )
        _speedups_target(report, chunk, medians, intact, passed)


NOISE_AT_64B = "; at 64 B both pairs decode alike: their ratios are noise"


def _speedups_target(
    report: Report,
    chunk: int,
    medians: dict[str, float],
    intact: dict[str, bool],
    relay_passed: bool,
) -> None:
    """Past the bare-Python limit: acpls as it starts by default (speedups.DEFAULT), at 4 KiB
    >= 1.3x the bare stdlib relay, v2 and v1; at 64 B the 64 B figure is not lost: the P1 64 B
    line (`relay_passed`) holds with the default speed-ups on. Beside it, the default against
    acpls with none, and what uvloop on top of the default gives (neither part of the target)."""
    v2 = medians["acpls"] / medians["bare"]
    v1 = medians["acpls-v1"] / medians["bare-v1"]
    gain2 = medians["acpls"] / medians["acpls-stdlib"]
    gain1 = medians["acpls-v1"] / medians["acpls-stdlib-v1"]
    loop2 = medians["acpls-uvloop"] / medians["acpls"]
    loop1 = medians["acpls-uvloop-v1"] / medians["acpls-v1"]
    whole = all(intact[k] for k in ("acpls", "acpls-v1", "acpls-stdlib", "acpls-stdlib-v1"))
    if chunk == 4096:
        passed, goal = v2 >= 1.3 and v1 >= 1.3 and whole, "target >= 1.3x (a), v2 and v1"
    else:
        # At 64 B acpls and acpls stdlib-only decode with the same call (text shorter than
        # speedups.SMALL_BASE64 goes to binascii; v1 has no base64 at all), so their ratio is
        # this run's noise (v2 0.94-1.13x, v1 0.85-1.11x in five idle runs), not a loss.
        passed, goal = relay_passed and whole, "target: the P1 64 B line holds"
    report.target(
        f"P1 speedups ({speedups.describe(speedups.DEFAULT)})"
        f" {'4 KiB' if chunk == 4096 else '64 B'}:",
        passed,
        f"v2 {medians['acpls']:.1f} MB/s = {v2:.2f}x (a) {medians['bare']:.1f}"
        f" ({gain2:.2f}x acpls stdlib-only {medians['acpls-stdlib']:.1f});"
        f" v1 {medians['acpls-v1']:.1f} = {v1:.2f}x (a) v1 {medians['bare-v1']:.1f}"
        f" ({gain1:.2f}x stdlib-only {medians['acpls-stdlib-v1']:.1f}"
        f") ({goal}{NOISE_AT_64B if chunk != 4096 else ''});"
        f" uvloop on top: v2 {loop2:.2f}x, v1 {loop1:.2f}x",
    )


# -- P2: follow latency -------------------------------------------------------------------------


def follow_run(ctx: Context, cfg: Config, with_stream: bool) -> dict[str, Any]:
    """Latencies (ms) of the locations that arrived, and whether the last one did (a location
    superseded within 16 ms by a newer one is dropped by design: the last one wins). With the
    stream, the same session's terminal streams 20 MB/s meanwhile, and a flood of
    `cfg.p2_flood` locations written at once follows: its newest must arrive within 50 ms."""
    relay = ctx.relay("acpls", 2)
    latencies: list[float] = []
    last: dict[str, Any] = {"index": -1, "ms": None}
    paced = cfg.p2_events

    def on_follow(params: dict[str, Any]) -> None:
        index, sent = (int(part) for part in params["toolCallId"][1:].split("-"))
        ms = (time.monotonic_ns() - sent) / 1e6
        if index < paced:
            latencies.append(ms)
        last["index"], last["ms"] = index, ms

    try:
        session = relay.new_session()
        relay.editor.handlers["acpls/followAgent"] = on_follow
        relay.editor.handlers["acpls/terminalOutput"] = TerminalView().on_output
        interval = 0.025  # above the 16 ms follow window, so no location waits for it
        if with_stream:
            scenario = {
                "scenario": "follow_stream",
                "count": paced,
                "interval": interval,
                "rate": 20e6,
                "flood": cfg.p2_flood,
            }
        else:
            scenario = {"scenario": "follow", "count": paced, "interval": interval}
        relay.prompt(session, scenario)
        newest = paced + (cfg.p2_flood if with_stream else 0) - 1
        return {
            "latencies": latencies,
            "last_arrived": last["index"] == newest,
            "newest_ms": last["ms"] if last["index"] == newest else None,
        }
    finally:
        relay.close()


def bench_p2(ctx: Context, cfg: Config, report: Report) -> None:
    for with_stream in (False, True):
        runs = [follow_run(ctx, cfg, with_stream) for _ in range(cfg.runs)]
        samples = [ms for run in runs for ms in run["latencies"]]
        last_arrived = all(run["last_arrived"] for run in runs)
        p50, p99 = _percentile(samples, 50), _percentile(samples, 99)
        key = "p2_stream" if with_stream else "p2_alone"
        newest = [run["newest_ms"] for run in runs]
        report.figures[key] = {
            "events_per_run": cfg.p2_events,
            "received": len(samples),
            "last_arrived": last_arrived,
            "p50_ms": p50,
            "p99_ms": p99,
            "max_ms": max(samples) if samples else None,
            "runs": [run["latencies"] for run in runs],
        }
        expected = cfg.p2_events * cfg.runs
        passed = last_arrived and p50 <= 2.0 and p99 <= 10.0
        label = "alone"
        flood = ""
        if with_stream:
            label = "with a 20 MB/s terminal stream in the same session"
            report.figures[key]["flood"] = cfg.p2_flood
            report.figures[key]["flood_newest_ms"] = newest
            flood_ok = all(ms is not None and ms <= 50 for ms in newest)
            passed = passed and flood_ok
            shown = ", ".join("lost" if ms is None else f"{ms:.1f}" for ms in newest)
            flood = f"; newest of a {cfg.p2_flood}-location flood after {shown} ms (target <= 50)"
        report.target(
            f"P2 follow latency {label}:",
            passed,
            f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {max(samples):.2f} ms"
            f" ({len(samples)}/{expected} locations, the last one"
            f" {'always' if last_arrived else 'NOT always'} arrived; target p50 <= 2, p99 <= 10)"
            + flood,
        )


# -- P3: memory while 1 GB streams ---------------------------------------------------------------


def bench_p3(ctx: Context, cfg: Config, report: Report) -> None:
    chunk = 64 * 1024
    count = cfg.p3_bytes // chunk
    relay = ctx.relay("acpls", 2)
    try:
        session_id = relay.new_session()
        view = TerminalView()
        relay.editor.handlers["acpls/terminalOutput"] = view.on_output
        pid = relay.editor.pid
        cold = rss_kib(pid)
        # A first, small turn: what acpls sets up once per session or turn (the file watcher,
        # the transcript, lazily imported modules) is not growth while output streams.
        relay.prompt(session_id, {"scenario": "terminal", "chunk": chunk, "count": 64})
        before = rss_kib(pid)
        peak = [before]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.05):
                peak[0] = max(peak[0], rss_kib(pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.monotonic()
        relay.prompt(session_id, {"scenario": "terminal", "chunk": chunk, "count": count})
        seconds = time.monotonic() - start
        stop.set()
        sampler.join()
        after = rss_kib(pid)
        growth = (max(peak[0], after) - before) / 1024
        report.figures["p3"] = {
            "bytes": count * chunk,
            "rss_cold_mib": cold / 1024,
            "rss_before_mib": before / 1024,
            "rss_peak_mib": peak[0] / 1024,
            "rss_after_mib": after / 1024,
            "growth_mib": growth,
            "seconds": seconds,
            "mb_per_s": count * chunk / seconds / 1e6,
        }
        report.target(
            f"P3 memory while {count * chunk / 2**30:.2f} GiB of terminal output streams:",
            growth <= 50,
            f"RSS {before / 1024:.1f} -> peak {peak[0] / 1024:.1f} MiB, grew {growth:.1f} MiB"
            f" (first turn from {cold / 1024:.1f} MiB)"
            f" ({count * chunk / seconds / 1e6:.0f} MB/s; target <= 50 MB)",
        )
    finally:
        relay.close()


# -- P7: a long-lived server ----------------------------------------------------------------------


def session_cycle(relay: Relay, index: int) -> None:
    """One session created, used (a turn with followed locations, a small terminal's output and
    a reply) and closed."""
    session_id = relay.new_session()
    relay.prompt(session_id, {"scenario": "mixed"})
    relay.editor.command("acpls.closeSession", {"sessionId": session_id})


def session_cycles(relay: Relay, first: int, count: int) -> None:
    """`count` session cycles, 20 at a time (as an editor with many chats would)."""
    with ThreadPoolExecutor(max_workers=20) as pool:
        list(pool.map(lambda i: session_cycle(relay, i), range(first, first + count)))


def bench_p7(ctx: Context, cfg: Config, report: Report) -> None:
    sessions = cfg.p7_sessions
    relay = ctx.relay("acpls", 2)
    try:
        pid = relay.editor.pid
        # A first hundred: what is set up once (imports, caches, the allocator's arenas) is not
        # growth.
        session_cycles(relay, 0, 100)
        before = rss_kib(pid)
        start = time.monotonic()
        session_cycles(relay, 100, sessions)
        seconds = time.monotonic() - start
        after = rss_kib(pid)
        open_sessions = relay.editor.command("acpls.sessions", {})
        left = len(open_sessions.get("sessions", [])) if isinstance(open_sessions, dict) else -1
        growth = (after - before) / 1024
        report.figures["p7"] = {
            "sessions": sessions,
            "rss_before_mib": before / 1024,
            "rss_after_mib": after / 1024,
            "growth_mib": growth,
            "open_after": left,
            "seconds": seconds,
        }
        report.target(
            f"P7 {sessions} sessions created, used and closed:",
            growth <= 5 and left == 0,
            f"RSS {before / 1024:.1f} -> {after / 1024:.1f} MiB ({growth:+.1f} MiB), {left} open"
            f" after, {seconds / sessions * 1000:.0f} ms a session (target within 5 MB, none open)",
        )
    finally:
        relay.close()


# -- P4: start ----------------------------------------------------------------------------------


def start_time(argv: list[str], ctx: Context) -> tuple[float, float]:
    """Wall time (ms) from spawn to the `initialize` result, and the CPU time (ms) the server
    used by then (on a loaded machine the wall-clock ratio moves with the load, the CPU one
    much less)."""
    editor = Editor(argv, env=ctx.env)
    try:
        agent = {"command": PY, "args": [str(BENCH / "load_agent.py")]}
        editor.initialize(str(ctx.workspace), {"agent": agent})
        wall = (time.monotonic_ns() - editor.spawned_at) / 1e6
        return wall, cpu_seconds(editor.pid) * 1000
    finally:
        editor.close()


def bench_p4(ctx: Context, cfg: Config, report: Report) -> None:
    ours: list[tuple[float, float]] = []
    reference: list[tuple[float, float]] = []
    for _ in range(cfg.p4_runs):
        ours.append(start_time(RELAYS["acpls"], ctx))
        reference.append(start_time(MINIMAL_PYGLS, ctx))
    ms, ref = statistics.median(w for w, _ in ours), statistics.median(w for w, _ in reference)
    cpu = statistics.median(c for _, c in ours)
    ref_cpu = statistics.median(c for _, c in reference)
    report.figures["p4"] = {
        "acpls_ms": [w for w, _ in ours],
        "minimal_pygls_ms": [w for w, _ in reference],
        "acpls_cpu_ms": [c for _, c in ours],
        "minimal_pygls_cpu_ms": [c for _, c in reference],
        "ratio": ms / ref,
        "cpu_ratio": cpu / ref_cpu,
    }
    report.target(
        "P4 start (spawn -> initialize result):",
        ms <= 1.2 * ref,
        f"acpls {ms:.0f} ms = {ms / ref:.2f}x minimal pygls {ref:.0f} ms (target <= 1.2x);"
        f" CPU {cpu:.0f} ms = {cpu / ref_cpu:.2f}x {ref_cpu:.0f} ms",
    )


# -- P5: tool-call burst ------------------------------------------------------------------------


def bench_p5(ctx: Context, cfg: Config, report: Report) -> None:
    runs = []
    for _ in range(cfg.runs):
        runs.append(burst_run(ctx, cfg))
    worst_window = max(r["max_per_second"] for r in runs)
    exact = all(r["exact"] for r in runs)
    report.figures["p5"] = {"updates": cfg.p5_updates, "calls": cfg.p5_calls, "runs": runs}
    seconds = statistics.median(r["seconds"] for r in runs)
    messages = statistics.median(r["messages"] for r in runs)
    report.target(
        f"P5 burst of {cfg.p5_updates // 1000}k tool-call updates ({cfg.p5_calls} tool calls):",
        worst_window <= 60 and exact,
        f"{messages:.0f} editor messages (every method, follow included) in {seconds:.2f} s,"
        f" at most {worst_window} in any"
        f" second; final state {'exact' if exact else 'DIFFERS'} (target <= 60/s, exact)",
    )


def burst_run(ctx: Context, cfg: Config) -> dict[str, Any]:
    relay = ctx.relay("acpls", 2)
    arrivals: list[int] = []
    states: dict[str, dict[str, Any]] = {}

    methods: dict[str, int] = {}

    def on_any(method: str) -> None:
        # Every message the editor gets during the turn counts (follow, terminals, anything).
        arrivals.append(time.monotonic_ns())
        methods[method] = methods.get(method, 0) + 1

    def on_update(params: dict[str, Any]) -> None:
        update = params["update"]
        if update.get("sessionUpdate") == "tool_call":
            states[update["toolCall"]["toolCallId"]] = update["toolCall"]

    try:
        session_id = relay.new_session()
        relay.editor.handlers["acpls/sessionUpdate"] = on_update
        relay.editor.on_any = on_any
        start = time.monotonic_ns()
        scenario = {"scenario": "toolcalls", "updates": cfg.p5_updates, "calls": cfg.p5_calls}
        relay.prompt(session_id, scenario)
        seconds = (time.monotonic_ns() - start) / 1e9
        relay.editor.on_any = None
        expected = traffic.final_tool_calls(cfg.p5_updates, cfg.p5_calls, 2)
        mismatches = [k for k, v in expected.items() if _editor_view(states.get(k)) != v]
        return {
            "seconds": seconds,
            "messages": len(arrivals),
            "by_method": methods,
            "max_per_second": _max_in_window(arrivals, 1_000_000_000),
            "exact": not mismatches and len(states) == len(expected),
            "mismatched": mismatches,
        }
    finally:
        relay.close()


def _editor_view(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """The editor's tool call without the keys acpls adds as empty defaults."""
    if state is None:
        return None
    return {k: v for k, v in state.items() if v not in ([], None, {})}


def _max_in_window(times: list[int], window: int) -> int:
    best = start = 0
    for end, at in enumerate(times):
        while at - times[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


# -- helpers and output -------------------------------------------------------------------------


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _percentile(samples: list[float], pct: float) -> float:
    if not samples:
        return float("inf")
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    return {
        "host": platform.node(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }


def git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_results(report: Report, started: datetime, write_md: bool) -> Path:
    RESULTS_DIR.mkdir(exist_ok=True)
    data = {
        "date": started.isoformat(timespec="seconds"),
        "revision": git_revision(),
        "machine": machine(),
        "config": report.config.__dict__,
        "targets": [t.__dict__ for t in report.targets],
        "figures": report.figures,
    }
    path = RESULTS_DIR / f"{started.strftime('%Y%m%dT%H%M%SZ')}.json"
    text = json.dumps(data, indent=1)
    path.write_text(text)
    (RESULTS_DIR / "latest.json").write_text(text)
    if write_md:
        _update_results_md(data)
    return path


def _update_results_md(data: dict[str, Any]) -> None:
    m = data["machine"]
    lines = [
        MARK_START,
        f"Run {data['date']} at revision `{data['revision']}`"
        f"{' (--quick)' if data['config']['quick'] else ''}, {m['cpu']}, {m['cores']} cores,"
        f" Python {m['python']}, {m['system']}. Medians of {data['config']['runs']} runs.",
        "",
        "```",
        *[t["line"] for t in data["targets"]],
        "```",
    ]
    for chunk in (4096, 64):
        figure = data["figures"].get(f"p1_{chunk}")
        if not figure:
            continue
        lines += ["", f"P1 detail, {chunk} B chunks ({figure['count']} chunks):", ""]
        lines += [
            "| relay | MB/s | chunks/s | MB per relay CPU-second | editor messages |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for label, runs in figure["runs"].items():
            rate = figure["median_mb_per_s"][label]
            messages = statistics.median(r["editor_messages"] for r in runs)
            per_second = rate * 1e6 / chunk / 1000
            cpu_rate = figure["median_mb_per_cpu_s"][label]
            lines.append(
                f"| {LABELS[label]} | {rate:.1f} | {per_second:.1f}k | {cpu_rate:.1f} |"
                f" {messages:.0f} |"
            )
    lines.append(MARK_END)
    block = "\n".join(lines)
    text = RESULTS_MD.read_text() if RESULTS_MD.exists() else f"# Benchmark results\n\n{MARK_END}"
    if MARK_START in text and MARK_END in text:
        head, rest = text.split(MARK_START, 1)
        tail = rest.split(MARK_END, 1)[1]
        text = head + block + tail
    else:
        text = text + "\n" + block + "\n"
    RESULTS_MD.write_text(text)


BENCHMARKS: dict[str, Callable[[Context, Config, Report], None]] = {
    "P1": bench_p1,
    "P2": bench_p2,
    "P3": bench_p3,
    "P4": bench_p4,
    "P5": bench_p5,
    "P6": bench_p6,
    "P7": bench_p7,
    "P8": bench_p8,
    "P9": bench_p9,
    "P10": bench_p10,
    "P13": bench_p13,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="acpls benchmarks (bench/README.md)")
    parser.add_argument("--quick", action="store_true", help="smaller streams, fewer runs")
    parser.add_argument("--runs", type=int, help="runs per figure (median); default 3, quick 1")
    parser.add_argument("--only", help="comma-separated targets, e.g. P1,P3")
    parser.add_argument(
        "--no-results-md", action="store_true", help="do not rewrite bench/RESULTS.md"
    )
    args = parser.parse_args(argv)
    compile_acpls()
    cfg = Config.make(args.quick, args.runs)
    chosen = [p.strip().upper() for p in args.only.split(",")] if args.only else list(BENCHMARKS)
    report = Report(cfg)
    started = datetime.now(UTC)
    ctx = Context()
    print(
        f"acpls benchmarks ({'quick' if cfg.quick else 'full'}, {cfg.runs} runs each)", flush=True
    )
    try:
        for name in chosen:
            began = time.monotonic()
            BENCHMARKS[name](ctx, cfg, report)
            print(f"   ({name} took {time.monotonic() - began:.0f} s)", flush=True)
    finally:
        ctx.cleanup()
    path = write_results(report, started, write_md=not args.no_results_md and not args.only)
    print(f"results: {path.relative_to(REPO)}")
    failed = [t.name for t in report.targets if not t.passed]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
