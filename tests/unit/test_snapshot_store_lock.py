"""Two acpls processes on the same folder share its store (and its index): the store's flock
makes their snapshots and prunes take turns, so an immediate prune never removes what the other
is writing and the index is never written by both at once."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from acpls.services.snapshots import SnapshotStore


def _store(root: Path, state: Path) -> SnapshotStore:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root / "no-home")}
    return SnapshotStore(str(root), state, environ=env)


async def test_two_stores_on_one_folder_take_turns(tmp_path: Path) -> None:
    root, state = tmp_path / "ws", tmp_path / "state"
    root.mkdir()
    for i in range(200):  # enough files for the bulk check-in into a pack
        (root / f"f{i}.txt").write_text(f"file {i}\n" * 20)
    # Each its own asyncio lock, as two processes have: only the flock orders them.
    first, second = _store(root, state), _store(root, state)
    trees: list[str] = []
    for turn in range(6):
        for i in range(0, 200, 3):
            (root / f"f{i}.txt").write_text(f"turn {turn} file {i}\n" * 20)
        one, two = await asyncio.gather(first.snapshot(), second.snapshot())
        assert one.tree == two.tree
        trees.append(one.tree)
        # The other one prunes at once what nothing keeps, while this one snapshots again.
        await asyncio.gather(second.drop(trees[-2:-1]), first.snapshot())
        await asyncio.gather(second.pack(prune=True), first.snapshot())
    fsck = await first._git("fsck", "--no-dangling", "--connectivity-only")
    assert fsck == b""
    kept = await first.entries(trees[-1], ["f0.txt"])
    blob = (await first.blobs([kept["f0.txt"][1]]))[kept["f0.txt"][1]]
    assert blob == b"turn 5 file 0\n" * 20
