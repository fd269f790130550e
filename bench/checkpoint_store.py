"""P10: the checkpoint store's size against the bytes it holds, and its first snapshot against
`git add -A` into a fresh index on the same tree.

The workspace is 5,000 small source-like files (0.3-1.5 KB) in 50 folders. Each run makes a new
store and times its first snapshot (`SnapshotStore.snapshot`, in this process: every file hashed,
its contents streamed into one pack), then `pack()` as after a turn, and weighs the store as `du`
does (the index and every folder included). The baseline, in the same run, alternated: a fresh
git directory and index, `git add -A` of the same tree (git's default: one loose object a file),
timed and weighed the same way. Then five turns of five changed files each, and the prune that
follows a turn once `maxCount` is reached (`pack(prune=True)`: every pack rewritten without what
nothing keeps), timed.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from acpls.services.snapshots import SnapshotStore

FILES = 5_000
FOLDERS = 50
TARGET_RATIO = 1.5
TARGET_SPEED = 1.0
_WORDS = ("def", "return", "import", "class", "self", "value", "index", "result", "if")


def make_files(root: Path, count: int = FILES, seed: int = 10) -> int:
    """`count` small source-like files (0.3-1.5 KB) in 50 folders; returns their bytes. The
    checkpoint store's tests make their workspaces with it too."""
    rnd = random.Random(seed)
    total = 0
    for i in range(count):
        folder = root / f"pkg{i % FOLDERS:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [
            " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(3, 9)))
            + f" {rnd.randrange(10**6)}"
            for _ in range(rnd.randint(6, 30))
        ]
        text = "\n".join(lines) + "\n"
        (folder / f"mod{i}.py").write_text(text)
        total += len(text)
    return total


def du(path: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for entry in [folder, *(os.path.join(folder, name) for name in files)]:
            total += os.lstat(entry).st_blocks * 512
    return total


def git_add_all(workspace: Path, git_dir: Path) -> tuple[float, int]:
    """`git add -A` into a fresh git directory and index: (ms, bytes on disk after)."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], env=env, check=True)
    env |= {"GIT_DIR": str(git_dir), "GIT_INDEX_FILE": str(git_dir / "index")}
    env["GIT_WORK_TREE"] = str(workspace)
    began = time.perf_counter()
    subprocess.run(["git", "add", "-A"], cwd=workspace, env=env, check=True)
    ms = (time.perf_counter() - began) * 1000
    return ms, du(git_dir)


async def first_snapshot(workspace: Path, state: Path) -> tuple[float, float, int, SnapshotStore]:
    """A new store's first snapshot and pack: (snapshot ms, pack ms, bytes on disk, store)."""
    store = SnapshotStore(str(workspace), state)
    began = time.perf_counter()
    await store.snapshot({})
    snap_ms = (time.perf_counter() - began) * 1000
    began = time.perf_counter()
    await store.pack(prune=False)
    pack_ms = (time.perf_counter() - began) * 1000
    return snap_ms, pack_ms, du(store.dir), store


async def turns_and_prune(workspace: Path, store: SnapshotStore) -> dict[str, float]:
    """Five turns of five changed files, the pack after each, then a prune that frees the first
    turn's trees."""
    trees: list[str] = []
    pack_ms: list[float] = []
    for turn in range(5):
        for i in range(5):
            path = workspace / f"pkg{i:02d}" / f"mod{i}.py"
            path.write_text(path.read_text() + f"# turn {turn}\n")
        trees.append((await store.snapshot({})).tree)
        began = time.perf_counter()
        await store.pack(prune=False)
        pack_ms.append((time.perf_counter() - began) * 1000)
    await store.drop(trees[:1])
    began = time.perf_counter()
    await store.pack(prune=True)
    return {
        "turn_pack_ms": statistics.median(pack_ms),
        "prune_ms": (time.perf_counter() - began) * 1000,
        "bytes_after": du(store.dir),
    }


def measure(base: Path, runs: int) -> dict[str, Any]:
    workspace = base / "store-ws"
    data = make_files(workspace)
    ours: list[dict[str, Any]] = []
    git: list[dict[str, Any]] = []
    last: SnapshotStore | None = None
    for run in range(max(runs, 3)):
        state, git_dir = base / f"store-state-{run}", base / f"store-git-{run}"
        # Alternated, so neither always runs on a warmer page cache.
        order = ("ours", "git") if run % 2 == 0 else ("git", "ours")
        for which in order:
            if which == "git":
                ms, size = git_add_all(workspace, git_dir)
                git.append({"ms": ms, "bytes": size})
                shutil.rmtree(git_dir)
            else:
                snap_ms, pack_ms, size, last = asyncio.run(first_snapshot(workspace, state))
                ours.append({"ms": snap_ms, "pack_ms": pack_ms, "bytes": size})
    assert last is not None
    turns = asyncio.run(turns_and_prune(workspace, last))
    return {"files": FILES, "data_bytes": data, "acpls": ours, "git_add": git, "turns": turns}


def bench_p10(ctx: Any, cfg: Any, report: Any) -> None:
    figures = measure(ctx.root, cfg.runs)
    report.figures["p10"] = figures
    data = figures["data_bytes"]
    size = statistics.median(r["bytes"] for r in figures["acpls"])
    git_size = statistics.median(r["bytes"] for r in figures["git_add"])
    ms = statistics.median(r["ms"] for r in figures["acpls"])
    pack_ms = statistics.median(r["pack_ms"] for r in figures["acpls"])
    git_ms = statistics.median(r["ms"] for r in figures["git_add"])
    turns = figures["turns"]
    ratio, speed = size / data, ms / git_ms
    report.target(
        f"P10 checkpoint store of {FILES:,} small files ({data / 1e6:.1f} MB):",
        ratio <= TARGET_RATIO and speed <= TARGET_SPEED,
        f"store {ratio:.2f}x the files' bytes ({size / 1e6:.1f} MB; git add -A leaves"
        f" {git_size / data:.1f}x), first snapshot {speed:.2f}x git add -A ({ms:.0f} ms vs"
        f" {git_ms:.0f} ms, pack after it {pack_ms:.0f} ms); per turn pack"
        f" {turns['turn_pack_ms']:.0f} ms, prune {turns['prune_ms']:.0f} ms"
        f" (target store <= {TARGET_RATIO}x, snapshot <= {TARGET_SPEED}x)",
    )
