"""A workspace folder that holds acpls' own state (a workspace opened at `~`, or the Neovim
benchmark's folder with its XDG directories): the snapshots leave that state out."""

from __future__ import annotations

import os
from pathlib import Path

from acpls.services.snapshots import SnapshotStore


def _store(root: Path, state: Path) -> SnapshotStore:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(root / "no-home")}
    return SnapshotStore(str(root), state, environ=env)


async def _paths(store: SnapshotStore, tree: str) -> list[str]:
    out = await store._git("ls-tree", "-r", "-z", "--name-only", tree)
    return sorted(p.decode() for p in out.split(b"\0") if p)


async def test_state_inside_the_folder_is_not_recorded(tmp_path: Path) -> None:
    # Characters that mean something in an ignore pattern, so the pattern must escape them.
    state = tmp_path / "x[1] *" / ".local" / "state" / "acpls"
    (state / "transcripts").mkdir(parents=True)
    (state / "transcripts" / "t.md").write_text("old turn\n")
    (tmp_path / "x[1] *" / "kept.txt").write_text("the user's\n")
    # What the pattern would leave out were `[1]` and `*` read as a glob.
    (tmp_path / "x1 a" / ".local" / "state" / "acpls").mkdir(parents=True)
    (tmp_path / "x1 a" / ".local" / "state" / "acpls" / "u.txt").write_text("the user's too\n")
    (tmp_path / "main.py").write_text("print(1)\n")
    store = _store(tmp_path, state)

    first = await store.snapshot()
    # The first snapshot wrote objects and an index into the state: nothing the user changed.
    second = await store.snapshot()

    assert second.tree == first.tree
    assert await _paths(store, second.tree) == [
        "main.py",
        "x1 a/.local/state/acpls/u.txt",
        "x[1] */kept.txt",
    ]


async def test_state_outside_the_folder_leaves_the_folder_whole(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "acpls").mkdir(parents=True)
    (root / "acpls" / "notes.txt").write_text("a folder of the user's named like the state\n")
    store = _store(root, tmp_path / "state" / "acpls")

    snap = await store.snapshot()

    assert await _paths(store, snap.tree) == ["acpls/notes.txt"]
