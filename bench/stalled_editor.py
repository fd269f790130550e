"""P13: acpls' memory while a terminal floods an editor that reads nothing (a minimised editor).

The agent is tests/agents/scripted_agent.py: a turn runs `terminal/create` of a shell line that
writes `bytes` of text lines through the terminal's pty (`yes LINE | head -c N`, then an end
mark), waits for its exit (`terminal/wait_for_exit`) and reads its output (`terminal/output`).
The bench editor (bench/editor.py) stops reading acpls' stdout before the prompt and starts again
once the agent has its terminal's output: acpls reads the pty on (the agent's view stays live)
and keeps what waits for the editor bounded (core/routing.py `UpdateRouter._terminals_may_go`).

Baseline, in the same run and the same process: acpls' RSS after a first small turn with the
same terminal (1 MiB, the editor reading), as P3 takes its "before". The figure is the peak RSS
while the editor reads nothing against that baseline; every run checks that the editor, reading
again, gets the tail of the output (its end mark) after a reset saying how many bytes were
dropped. `python bench/stalled_editor.py [--mib N]` runs it alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.agents import script_command  # noqa: E402

from bench.editor import Editor, rss_kib  # noqa: E402

if TYPE_CHECKING:
    from bench.run import Config, Context, Report

PY = sys.executable
LINE = "acpls bench flood 0123456789abcdefghijklmnopqrstuvwxyz 0123456789abcdef"
END_MARK = "END-OF-FLOOD"
# The target: the peak RSS while the editor reads nothing at most this many times the baseline
# (without the bound it grows by about the flood: 500 MiB gave 13x a 42 MiB baseline).
TARGET_RATIO = 2.0
FLOOD_TIMEOUT_S = 900.0


def flood_turn(size: int) -> list[dict[str, Any]]:
    """A turn that floods a client terminal with `size` bytes, waits for it and reads it: three
    requests to acpls."""
    line = f"yes '{LINE}' | head -c {size}; printf '\\n{END_MARK}\\n'"
    terminal = {"sessionId": "$sessionId", "terminalId": "$t.terminalId"}
    return [
        {
            "request": "terminal/create",
            "params": {"sessionId": "$sessionId", "command": line, "cwd": "$cwd"},
            "save": "t",
        },
        {"request": "terminal/wait_for_exit", "params": terminal},
        {"request": "terminal/output", "params": terminal},
    ]


class Shown:
    """What the editor shows of the turn's terminal: the text since the last reset (its tail) and
    the `dropped` of each reset."""

    def __init__(self) -> None:
        self.tail = ""
        self.dropped: list[int] = []

    def on_output(self, params: dict[str, Any]) -> None:
        if params.get("reset"):
            self.tail = ""
            self.dropped.append(params.get("dropped", 0))
        self.tail = (self.tail + params["text"])[-4096:]


def answers(log: Path) -> int:
    """How many answers to its requests the agent has received (whole lines of its log)."""
    if not log.exists():
        return 0
    whole = log.read_text().split("\n")[:-1]  # a line being written has no line end yet
    messages = [json.loads(line) for line in whole if line.strip()]
    return sum(1 for m in messages if "method" not in m and "id" in m)


def stalled_run(ctx: Context, size: int, index: int) -> dict[str, Any]:
    log = Path(tempfile.mkdtemp(prefix=f"p13-{index}-", dir=ctx.root)) / "agent.jsonl"
    # The first turn warms up (1 MiB, the editor reading), the second floods.
    script = {"protocol": 1, "on_prompt": [flood_turn(1 << 20), flood_turn(size)]}
    argv = script_command(script, log)
    # The acpls of this checkout (in a git worktree the venv's editable install is another's).
    path = os.pathsep.join([str(REPO / "server"), ctx.env.get("PYTHONPATH", "")])
    env = {**ctx.env, "PYTHONPATH": path, "ACPLS_SPEEDUPS": ""}
    editor = Editor([PY, "-m", "acpls"], env=env)
    try:
        pid = editor.pid
        editor.initialize(str(ctx.workspace), {"agent": {"command": argv[0], "args": argv[1:]}})
        editor.command("acpls.prompt", {"text": "warm up"}, FLOOD_TIMEOUT_S)
        baseline = rss_kib(pid)
        shown = Shown()
        editor.handlers["acpls/terminalOutput"] = shown.on_output
        editor.pause_reading()
        started = time.monotonic()
        answer = editor.command_async("acpls.prompt", {"text": "flood"})
        peak = baseline
        while answers(log) < 6:  # the warm-up turn's three answers and the flood's
            if time.monotonic() - started > FLOOD_TIMEOUT_S:
                raise TimeoutError("the flood did not end")
            peak = max(peak, rss_kib(pid))
            time.sleep(0.05)
        seconds = time.monotonic() - started
        peak = max(peak, rss_kib(pid))
        editor.resume_reading()
        answer.result(FLOOD_TIMEOUT_S)
        return {
            "baseline_mib": baseline / 1024,
            "peak_mib": peak / 1024,
            "ratio": peak / baseline,
            "flood_seconds": seconds,
            "mb_per_s": size / seconds / 1e6,
            "dropped": shown.dropped[-1] if shown.dropped else 0,
            "tail_intact": shown.tail.endswith(f"{END_MARK}\r\n") and bool(shown.dropped),
        }
    finally:
        editor.resume_reading()
        editor.close()


def bench_p13(ctx: Context, cfg: Config, report: Report) -> None:
    size = cfg.p3_bytes // 2
    runs = [stalled_run(ctx, size, index) for index in range(cfg.runs)]
    ratio = sorted(run["ratio"] for run in runs)[len(runs) // 2]
    middle = next(run for run in runs if run["ratio"] == ratio)
    intact = all(run["tail_intact"] for run in runs)
    report.figures["p13"] = {"bytes": size, "runs": runs, "ratio": ratio}
    report.target(
        f"P13 stalled editor RSS while a terminal writes {size / 2**20:.0f} MiB:",
        ratio <= TARGET_RATIO and intact,
        f"RSS {middle['baseline_mib']:.1f} (after a first turn) -> peak"
        f" {middle['peak_mib']:.1f} MiB, {ratio:.2f}x, the editor reading nothing"
        f" ({middle['mb_per_s']:.0f} MB/s through the pty; reading again it got a reset,"
        f" {middle['dropped'] / 2**20:.0f} MiB dropped, and the tail"
        f"{'' if intact else ': TAIL WRONG'}) (target <= {TARGET_RATIO:.1f}x)",
    )


def main(argv: list[str] | None = None) -> int:
    from bench.run import Config, Context, Report

    parser = argparse.ArgumentParser(description="P13: a stalled editor's acpls memory")
    parser.add_argument("--mib", type=int, default=512, help="terminal output per run")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    cfg = Config.make(quick=False, runs=args.runs)
    cfg.p3_bytes = 2 * args.mib * 2**20
    report = Report(cfg)
    ctx = Context()
    try:
        bench_p13(ctx, cfg, report)
    finally:
        ctx.cleanup()
    return 0 if all(t.passed for t in report.targets) else 1


if __name__ == "__main__":
    sys.exit(main())
