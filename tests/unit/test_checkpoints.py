"""The pure part of checkpoints: what a restore changes, skips, and leaves to the disk."""

from __future__ import annotations

from acpls.state.checkpoints import (
    Change,
    Checkpoint,
    CheckpointLog,
    FolderState,
    effective_changes,
    plan_restore,
    safe_relative,
)

ROOT = "/ws"
BLOBS = {
    "a1": b"old text\n",
    "a2": b"new text\n",
    "a3": b"third\n",
    "bin1": b"\0\1\2",
    "bin2": b"\0\3\4",
    "ln": b"target.txt",
}


def plan(changes: list[Change], current: FolderState | None = None, **kw):
    current = current or FolderState("t0")
    target = kw.pop("target", FolderState("t1"))
    return plan_restore(
        ROOT, changes, BLOBS, current, target, include_unsaved=kw.pop("include", set()),
        preview=kw.pop("preview", False), **kw,
    )  # fmt: skip


def test_text_edit_delete_create_and_rename() -> None:
    p = plan(
        [
            Change("edited.txt", ("100644", "a2"), ("100644", "a1")),
            Change("created.txt", ("100644", "a2"), None),
            Change("deleted.txt", None, ("100755", "a3")),
            Change("moved_now.txt", ("100644", "a1"), None),
            Change("moved_before.txt", None, ("100644", "a1")),
        ]
    )
    kinds = [c.get("kind", "edit") for c in p.document_changes]
    assert kinds.count("rename") == 1
    rename = next(c for c in p.document_changes if c.get("kind") == "rename")
    assert rename["oldUri"].endswith("moved_now.txt")
    assert rename["newUri"].endswith("moved_before.txt")
    assert any(
        c.get("kind") == "delete" and c["uri"].endswith("created.txt") for c in p.document_changes
    )
    assert any(
        c.get("kind") == "create" and c["uri"].endswith("deleted.txt") for c in p.document_changes
    )
    assert [(op.kind, op.path) for op in p.disk] == [("chmod", "/ws/deleted.txt")]
    assert p.skipped == []
    assert "/ws/moved_now.txt" in p.edited and "/ws/moved_before.txt" in p.edited


def test_binary_links_and_modes_go_to_disk() -> None:
    p = plan(
        [
            Change("logo.bin", ("100644", "bin2"), ("100644", "bin1")),
            Change("link", ("120000", "a1"), ("120000", "ln")),
            Change("run.sh", ("100644", "a1"), ("100755", "a1")),
        ]
    )
    assert p.document_changes == []
    ops = [(op.kind, op.path, op.data) for op in p.disk]
    assert ("write", "/ws/logo.bin", b"\0\1\2") in ops
    assert ("remove", "/ws/link", b"") in ops and ("link", "/ws/link", b"target.txt") in ops
    assert ("chmod", "/ws/run.sh", b"") in ops


def test_skips_unsaved_unrecorded_nested_and_escaping_paths() -> None:
    current = FolderState("t0", unsaved={"dirty.txt": "a2"}, not_recorded={"huge.txt": "big"})
    target = FolderState("t1", not_recorded={"gone.txt": "over the size limit"})
    p = plan(
        [
            Change("dirty.txt", ("100644", "a2"), ("100644", "a1")),
            Change("huge.txt", None, ("100644", "a1")),
            Change("gone.txt", ("100644", "a1"), None),
            Change("vendor/lib", ("160000", "x"), None),
            Change("../escape.txt", None, ("100644", "a1")),
            Change("via_link/x.txt", None, ("100644", "a1")),
        ],
        current,
        target=target,
        outside=frozenset({"via_link/x.txt"}),
    )
    reasons = {s["path"]: s["reason"] for s in p.skipped}
    assert "unsaved changes" in reasons["/ws/dirty.txt"]
    assert "not recorded" in reasons["/ws/huge.txt"]
    assert "not recorded in the checkpoint" in reasons["/ws/gone.txt"]
    assert "nested git repository" in reasons["/ws/vendor/lib"]
    assert "leaves the workspace" in reasons["/ws/../escape.txt"]
    assert "leaves the workspace" in reasons["/ws/via_link/x.txt"]
    assert p.document_changes == [] and p.disk == []


def test_include_unsaved_and_preview_annotations() -> None:
    current = FolderState("t0", unsaved={"dirty.txt": "a2"})
    p = plan(
        [Change("dirty.txt", ("100644", "a2"), ("100644", "a1"))],
        current,
        include={"/ws/dirty.txt"},
        preview=True,
    )
    (edit,) = p.document_changes
    assert all(e["annotationId"] == "acpls.restoreCheckpoint" for e in edit["edits"])


def test_buffers_are_laid_over_the_trees() -> None:
    current = FolderState("t0", unsaved={"a.txt": "buf"})
    target = FolderState("t1")
    entries = {"a.txt": (None, ("100755", "disk"), ("100755", "disk"))}
    (change,) = effective_changes([], current, target, entries)
    assert change == Change("a.txt", ("100755", "buf"), ("100755", "disk"))
    # The same buffer on both sides: no change, whatever the disk did.
    same = FolderState("t1", unsaved={"a.txt": "buf"})
    tree_change = [("a.txt", ("100644", "x"), ("100644", "y"))]
    assert effective_changes(tree_change, current, same, {"a.txt": (None, None, None)}) == []


def test_log_listing_turns_history_and_pruning() -> None:
    log = CheckpointLog()
    for i, (session, turn) in enumerate([("s1", 1), ("s2", 1), ("s1", 2), ("s1", None)]):
        log.add(
            Checkpoint(
                f"c{i}", session, turn, f"prompt {i}\nmore", "t", {ROOT: FolderState(f"t{i}")}
            )
        )
    assert [c["id"] for c in log.listing("s1")] == ["c3", "c2", "c0"]
    assert log.listing(None)[0]["prompt"] == "prompt 3"
    assert log.turns("s1") == 2
    assert [c.id for c in log.history(log.items[2])] == ["c0"]
    restored = CheckpointLog.from_json(log.to_json())
    assert [c.to_json() for c in restored.items] == [c.to_json() for c in log.items]
    removed = log.prune(2)
    assert [c.id for c in removed] == ["c0", "c1"]
    assert log.trees_in_use() == {(ROOT, "t2"), (ROOT, "t3")}


def test_safe_relative() -> None:
    assert safe_relative("a/b.txt")
    for bad in ("", "/abs", "a/../b", "./a", "a//b", "a\0b"):
        assert not safe_relative(bad)


def test_turn_numbers_outlive_pruning_and_old_logs() -> None:
    log = CheckpointLog()
    for n in range(1, 5):
        turn = log.next_turn("s1")
        assert turn == n
        log.add(Checkpoint(f"c{n}", "s1", turn, "p", "t", {ROOT: FolderState(f"t{n}")}))
        log.prune(1)  # only the newest stays: counting what is left would say 1 each time
    assert [c.turn for c in log.items] == [4]
    restored = CheckpointLog.from_json(log.to_json())
    assert restored.next_turn("s1") == 5 and restored.next_turn("s2") == 1
    # A log of an older acpls (no lastTurns) starts from the turns it holds; junk is ignored.
    old = {"version": 1, "checkpoints": [c.to_json() for c in log.items]}
    assert CheckpointLog.from_json(old).next_turn("s1") == 5
    junk = {**old, "lastTurns": {"s1": "9", "s3": 2.5, "s4": 3}}
    assert CheckpointLog.from_json(junk).last_turns == {"s4": 3}
