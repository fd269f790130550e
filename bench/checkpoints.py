"""P6: a checkpoint of a 10,000-file workspace, against `git stash create` on the same tree.

The workspace is a git repository of 10,000 files in 100 directories (committed), with untracked
files beside them. Each run changes a few files (as a turn does), then times what acpls runs before
a prompt (`SnapshotStore.snapshot`, the same code, in this process) and then `git stash create`
(which hashes the same working tree changes into the repository, without the untracked files).
The first snapshot (cold: every file hashed into the private store) is reported but not the
target: the target is the warm one, with the private index as stat cache.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from acpls.services.snapshots import SnapshotStore

FILES = 10_000
DIRS = 100
CHANGED_PER_RUN = 5
TARGET_MS = 100.0


def make_workspace(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for d in range(DIRS):
        directory = root / f"pkg{d:03d}"
        directory.mkdir(exist_ok=True)
        for f in range(FILES // DIRS):
            n = d * (FILES // DIRS) + f
            (directory / f"mod{f:03d}.py").write_text(f"VALUE = {n}\n" + "# filler line\n" * 30)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    for args in (["init", "-q"], ["add", "-A"], [*ident, "commit", "-q", "-m", "tree"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    for u in range(50):
        (root / f"untracked{u:02d}.txt").write_text(f"scratch {u}\n")


def change_some(root: Path, run: int) -> None:
    for i in range(CHANGED_PER_RUN):
        d = (run * 7 + i * 13) % DIRS
        path = root / f"pkg{d:03d}" / f"mod{i:03d}.py"
        path.write_text(path.read_text() + f"# run {run}\n")


def stash_create_ms(root: Path) -> float:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    began = time.perf_counter()
    subprocess.run(["git", "stash", "create"], cwd=root, env=env, check=True, capture_output=True)
    return (time.perf_counter() - began) * 1000


async def snapshot_ms(store: SnapshotStore) -> float:
    began = time.perf_counter()
    await store.snapshot({})
    return (time.perf_counter() - began) * 1000


def measure(base: Path, runs: int) -> dict[str, Any]:
    workspace = base / "checkpoint-ws"
    make_workspace(workspace)
    store = SnapshotStore(str(workspace), base / "checkpoint-state")
    cold = asyncio.run(snapshot_ms(store))
    ours: list[float] = []
    stash: list[float] = []
    for run in range(max(runs, 5)):
        change_some(workspace, run)
        ours.append(asyncio.run(snapshot_ms(store)))
        stash.append(stash_create_ms(workspace))
    unchanged = asyncio.run(snapshot_ms(store))
    return {
        "files": FILES,
        "changed_per_run": CHANGED_PER_RUN,
        "cold_ms": cold,
        "warm_ms": ours,
        "unchanged_ms": unchanged,
        "git_stash_create_ms": stash,
    }


def bench_p6(ctx: Any, cfg: Any, report: Any) -> None:
    figures = measure(ctx.root, cfg.runs)
    report.figures["p6"] = figures
    ms = statistics.median(figures["warm_ms"])
    ref = statistics.median(figures["git_stash_create_ms"])
    report.target(
        f"P6 checkpoint of {FILES:,} files ({CHANGED_PER_RUN} changed, warm):",
        ms <= TARGET_MS,
        f"acpls {ms:.0f} ms (cold {figures['cold_ms']:.0f} ms, unchanged"
        f" {figures['unchanged_ms']:.0f} ms), git stash create {ref:.0f} ms (target <= 100 ms)",
    )
