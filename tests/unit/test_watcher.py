"""Direct disk writes during a turn: reported, filtered, and given the right baseline."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acpls.services.watcher import Baseline, DiskChange, TurnWatcher, _Ref  # pyright: ignore[reportPrivateUsage]
from acpls.state.review import ReviewStore
from acpls.translate.text_edits import apply_text_edits


def real(path: Path | str) -> str:
    return os.path.realpath(path)


class Changes:
    def __init__(self) -> None:
        self.seen: list[DiskChange] = []
        self._event = asyncio.Event()

    async def on_change(self, change: DiskChange) -> None:
        self.seen.append(change)
        self._event.set()

    async def wait_for(self, path: Path, kind: str | None = None) -> DiskChange:
        wanted = real(path)
        for _ in range(100):
            for change in self.seen:
                if change.path == wanted and (kind is None or change.change == kind):
                    return change
            self._event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._event.wait(), 0.1)
        raise AssertionError(f"no {kind or 'change'} for {path}; saw {self.seen}")

    def paths(self) -> set[str]:
        return {c.path for c in self.seen}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("x = 1\n")
    (root / "old.txt").write_text("old\n")
    return root


@pytest.fixture
async def watched(ws: Path) -> AsyncIterator[tuple[TurnWatcher, Changes]]:
    changes = Changes()
    watcher = TurnWatcher([str(ws)], changes.on_change, debounce_ms=50, use_git=False)
    await watcher.start()
    yield watcher, changes
    await watcher.stop(flush=False)


async def test_direct_write_is_reported(watched: tuple[TurnWatcher, Changes], ws: Path) -> None:
    watcher, changes = watched
    (ws / "src" / "main.py").write_text("x = 2\n")
    change = await changes.wait_for(ws / "src" / "main.py")
    assert change.change == "modified" and change.text == "x = 2\n" and change.is_text
    assert change.existed_before is True
    # Existed before, no git, never remembered: the old text is unknown.
    assert await watcher.baseline_for(str(ws / "src" / "main.py")) == Baseline(
        known=False, text=None, source="unknown"
    )


async def test_new_file_has_no_baseline(watched: tuple[TurnWatcher, Changes], ws: Path) -> None:
    watcher, changes = watched
    (ws / "src" / "new.py").write_text("fresh\n")
    change = await changes.wait_for(ws / "src" / "new.py")
    assert change.change == "added" and change.existed_before is False
    assert await watcher.baseline_for(str(ws / "src" / "new.py")) == Baseline(True, None, "new")


async def test_remembered_text_is_the_baseline(
    watched: tuple[TurnWatcher, Changes], ws: Path
) -> None:
    watcher, changes = watched
    watcher.remember(str(ws / "src" / "main.py"), "x = 1\n")
    watcher.remember(str(ws / "src" / "main.py"), "later read, ignored\n")
    (ws / "src" / "main.py").write_text("x = 3\n")
    await changes.wait_for(ws / "src" / "main.py")
    baseline = await watcher.baseline_for(str(ws / "src" / "main.py"))
    assert baseline == Baseline(known=True, text="x = 1\n", source="remembered")


async def test_git_node_modules_and_swap_files_ignored(
    watched: tuple[TurnWatcher, Changes], ws: Path
) -> None:
    _, changes = watched
    (ws / ".git" / "index").write_text("binary-ish")
    (ws / "node_modules" / "pkg" / "index.js").write_text("x")
    (ws / "src" / ".main.py.swp").write_text("swap")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_text("o")
    (ws / "sentinel.txt").write_text("done\n")
    await changes.wait_for(ws / "sentinel.txt")
    await asyncio.sleep(0.2)
    assert changes.paths() == {real(ws / "sentinel.txt")}


async def test_excluded_folder_is_neither_reported_nor_listed(ws: Path) -> None:
    """acpls' own state inside the workspace (a folder opened at `~`): its transcripts change
    during every turn, and none of it is an agent's write."""
    state = ws / ".local" / "state" / "acpls"
    (state / "transcripts").mkdir(parents=True)
    (state / "transcripts" / "old.md").write_text("old\n")
    changes = Changes()
    watcher = TurnWatcher(
        [str(ws)], changes.on_change, debounce_ms=50, use_git=False, excluded=[str(state)]
    )
    await watcher.start()
    try:
        (state / "transcripts" / "s1.md").write_text("a turn\n")
        (state / "transcripts" / "old.md").write_text("appended\n")
        (ws / ".local" / "state" / "other.log").write_text("not ours\n")
        await changes.wait_for(ws / ".local" / "state" / "other.log")
        await asyncio.sleep(0.2)
        assert changes.paths() == {real(ws / ".local" / "state" / "other.log")}
        listed = watcher._snapshot  # pyright: ignore[reportPrivateUsage]
        assert real(ws / "old.txt") in listed
        assert not [p for p in listed if p.startswith(real(state))]
    finally:
        await watcher.stop(flush=False)


async def test_a_root_inside_an_excluded_folder_is_watched_whole(tmp_path: Path) -> None:
    """A project kept under the state home is the user's: only folders inside a root are left
    out, never the root itself or what holds it."""
    state_home = tmp_path / "state"
    project = state_home / "project"
    project.mkdir(parents=True)
    changes = Changes()
    watcher = TurnWatcher(
        [str(project)],
        changes.on_change,
        debounce_ms=50,
        use_git=False,
        excluded=[str(state_home), str(project)],
    )
    await watcher.start()
    try:
        (project / "main.py").write_text("x = 2\n")
        await changes.wait_for(project / "main.py")
    finally:
        await watcher.stop(flush=False)


async def test_deleted_file_is_reported(watched: tuple[TurnWatcher, Changes], ws: Path) -> None:
    _, changes = watched
    (ws / "old.txt").unlink()
    change = await changes.wait_for(ws / "old.txt", "deleted")
    assert change.text is None and change.existed_before is True


async def test_temporary_file_that_vanished_is_not_reported(
    watched: tuple[TurnWatcher, Changes], ws: Path
) -> None:
    _, changes = watched
    tmp = ws / "src" / "main.py.tmp123"
    tmp.write_text("x = 5\n")
    os.replace(tmp, ws / "src" / "main.py")
    change = await changes.wait_for(ws / "src" / "main.py")
    assert change.change == "modified" and change.text == "x = 5\n"
    await asyncio.sleep(0.2)
    assert real(tmp) not in changes.paths()


async def test_ignore_once_skips_the_editors_save(
    watched: tuple[TurnWatcher, Changes], ws: Path
) -> None:
    watcher, changes = watched
    target = ws / "src" / "main.py"
    watcher.ignore_once(str(target))
    target.write_text("saved by the editor\n")
    (ws / "sentinel.txt").write_text("1\n")
    await changes.wait_for(ws / "sentinel.txt")
    assert real(target) not in changes.paths()
    target.write_text("written by the agent\n")
    change = await changes.wait_for(target)
    assert change.text == "written by the agent\n"


async def test_binary_file_reported_without_text(
    watched: tuple[TurnWatcher, Changes], ws: Path
) -> None:
    _, changes = watched
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02")
    change = await changes.wait_for(ws / "blob.bin")
    assert change.text is None and not change.is_text


async def test_nothing_reported_after_stop(ws: Path) -> None:
    changes = Changes()
    watcher = TurnWatcher([str(ws)], changes.on_change, debounce_ms=50, use_git=False)
    await watcher.start()
    assert watcher.running
    (ws / "during.txt").write_text("1\n")
    await watcher.stop()  # the flush lets the last write of the turn arrive
    assert not watcher.running
    assert real(ws / "during.txt") in changes.paths()
    (ws / "after.txt").write_text("2\n")
    await asyncio.sleep(0.3)
    assert real(ws / "after.txt") not in changes.paths()


async def test_callback_errors_do_not_stop_watching(ws: Path) -> None:
    reported: list[str] = []

    def flaky(change: DiskChange) -> None:
        reported.append(change.path)
        if len(reported) == 1:
            raise RuntimeError("boom")

    watcher = TurnWatcher([str(ws)], flaky, debounce_ms=50, use_git=False)
    await watcher.start()
    try:
        (ws / "one.txt").write_text("1\n")
        for _ in range(50):
            if reported:
                break
            await asyncio.sleep(0.05)
        (ws / "two.txt").write_text("2\n")
        for _ in range(50):
            if len(reported) >= 2:
                break
            await asyncio.sleep(0.05)
        assert real(ws / "two.txt") in reported
    finally:
        await watcher.stop(flush=False)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "clean.py").write_text("def f():\n    return 1\n")
    (root / "dirty.py").write_text("a\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    (root / "dirty.py").write_text("a\nuncommitted\n")
    return root


async def test_git_baseline_for_clean_files_only(repo: Path) -> None:
    changes = Changes()
    watcher = TurnWatcher([str(repo)], changes.on_change, debounce_ms=50, max_snapshot_files=1)
    await watcher.start()
    try:
        (repo / "clean.py").write_text("def f():\n    return 2\n")
        (repo / "dirty.py").write_text("agent\n")
        await changes.wait_for(repo / "clean.py")
        await changes.wait_for(repo / "dirty.py")
        clean = await watcher.baseline_for(str(repo / "clean.py"))
        assert clean == Baseline(True, "def f():\n    return 1\n", "git")
        # Uncommitted work at turn start: HEAD is not what was on disk, so it is unknown.
        assert (await watcher.baseline_for(str(repo / "dirty.py"))).known is False
    finally:
        await watcher.stop(flush=False)


async def test_disk_write_reviewed_and_rejected(repo: Path) -> None:
    """The whole path: a direct write shows up as a hunk and rejecting it restores the file."""
    review = ReviewStore()
    watcher: TurnWatcher

    async def on_change(change: DiskChange) -> None:
        if not review.is_tracked(change.path):
            baseline = await watcher.baseline_for(change.path)
            if baseline.known:
                review.baseline(change.path, baseline.text, session_id="s1")
            elif change.text is not None:
                review.unknown_baseline(change.path, change.text, session_id="s1")
                return
        review.changed(change.path, change.text)

    watcher = TurnWatcher([str(repo)], on_change, debounce_ms=50)
    await watcher.start()
    target = repo / "clean.py"
    target.write_text("def f():\n    return 42\n")
    for _ in range(100):
        if review.files():
            break
        await asyncio.sleep(0.05)
    await watcher.stop()
    [changed] = review.files()
    [hunk] = changed.hunks
    assert (hunk.old_text, hunk.new_text) == ("    return 1\n", "    return 42\n")
    edit = review.reject_hunk(hunk.hunk_id)
    target.write_text(apply_text_edits(target.read_text(), edit.edits))
    assert target.read_text() == "def f():\n    return 1\n"
    assert review.files() == []


async def test_remember_before_start_and_forgotten_after_stop(ws: Path) -> None:
    changes = Changes()
    watcher = TurnWatcher([str(ws)], changes.on_change, debounce_ms=50, use_git=False)
    target = str(ws / "src" / "main.py")
    watcher.remember(target, "x = 1\n")
    await watcher.start()
    assert (await watcher.baseline_for(target)).source == "remembered"
    await watcher.stop(flush=False)
    await watcher.start()
    try:
        assert (await watcher.baseline_for(target)).known is False
    finally:
        await watcher.stop(flush=False)


# -- the final flush: the disk listed again at the end of the turn, no blind wait ---------------


def age(*paths: Path) -> None:
    """Stamp the files an hour back, as files the user has not touched just now: their stat at
    turn start then shows any later write (it is not "racy")."""
    old = time.time() - 3600
    for path in paths:
        os.utime(path, (old, old))


class SleepSpy:
    """Records every non-zero `asyncio.sleep` while it is installed (yields still happen)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.delays: list[float] = []
        original = asyncio.sleep

        async def spy(delay: float, result: object = None) -> object:
            if delay:
                self.delays.append(delay)
            return await original(delay, result)

        monkeypatch.setattr(asyncio, "sleep", spy)


async def aged_watcher(ws: Path, changes: Changes, max_snapshot_files: int = 20_000) -> TurnWatcher:
    age(ws / "src" / "main.py", ws / "old.txt")
    watcher = TurnWatcher(
        [str(ws)],
        changes.on_change,
        debounce_ms=50,
        use_git=False,
        max_snapshot_files=max_snapshot_files,
    )
    await watcher.start()
    return watcher


async def test_final_flush_reports_each_last_write_once_without_waiting(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes = Changes()
    watcher = await aged_watcher(ws, changes)
    watcher.remember(str(ws / "src" / "main.py"), "x = 1\n")
    (ws / "src" / "main.py").write_text("x = 2\n")
    (ws / "old.txt").unlink()
    (ws / "src" / "new.py").write_text("new\n")
    sleeps = SleepSpy(monkeypatch)
    await watcher.stop()
    assert sleeps.delays == []  # the listing vouched for every file: no debounce wait
    assert not watcher.running
    by_path = {c.path: c for c in changes.seen}
    assert sorted(c.path for c in changes.seen) == sorted(by_path)  # each once
    main = by_path[real(ws / "src" / "main.py")]
    assert (main.change, main.text, main.existed_before) == ("modified", "x = 2\n", True)
    gone = by_path[real(ws / "old.txt")]
    assert (gone.change, gone.existed_before) == ("deleted", True)
    new = by_path[real(ws / "src" / "new.py")]
    assert (new.change, new.text, new.existed_before) == ("added", "new\n", False)
    assert len(by_path) == 3


async def test_final_flush_baseline_is_the_turns(ws: Path) -> None:
    changes = Changes()
    watcher = await aged_watcher(ws, changes)
    watcher.remember(str(ws / "src" / "main.py"), "x = 1\n")
    (ws / "src" / "main.py").write_text("x = 2\n")
    baselines: list[Baseline] = []

    async def on_change(change: DiskChange) -> None:
        baselines.append(await watcher.baseline_for(change.path))

    watcher._on_change = on_change  # pyright: ignore[reportPrivateUsage]
    await watcher.stop()
    assert baselines == [Baseline(known=True, text="x = 1\n", source="remembered")]


async def test_write_seen_by_the_watch_is_not_reported_again_at_the_end(ws: Path) -> None:
    changes = Changes()
    watcher = await aged_watcher(ws, changes)
    (ws / "old.txt").write_text("new\n")
    await changes.wait_for(ws / "old.txt")
    await watcher.stop()
    assert [c.path for c in changes.seen] == [real(ws / "old.txt")]


async def test_written_and_restored_file_reported_once_with_its_turn_start_text(ws: Path) -> None:
    changes = Changes()
    watcher = await aged_watcher(ws, changes)
    (ws / "old.txt").write_text("tmp\n")
    (ws / "old.txt").write_text("old\n")
    await watcher.stop()
    assert [(c.path, c.text) for c in changes.seen] == [(real(ws / "old.txt"), "old\n")]


async def test_untouched_files_are_not_reported_by_the_final_flush(ws: Path) -> None:
    changes = Changes()
    watcher = await aged_watcher(ws, changes)
    await watcher.stop()
    assert changes.seen == []


async def test_incomplete_listing_keeps_the_debounce_wait(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes = Changes()
    watcher = await aged_watcher(ws, changes, max_snapshot_files=1)
    (ws / "old.txt").write_text("new\n")
    sleeps = SleepSpy(monkeypatch)
    await watcher.stop()
    assert sleeps.delays == [0.15]
    assert real(ws / "old.txt") in changes.paths()


def test_changed_since_reads_again_a_racy_reported_file_and_gives_up_on_a_racy_listed_one(
    ws: Path,
) -> None:
    watcher = TurnWatcher([str(ws)], lambda _c: None)
    path = real(ws / "old.txt")
    now = time.time_ns()
    stat = (now - 1_000_000, 4, now - 1_000_000, 7)  # stamped a millisecond before the stat
    watcher._snapshot_complete = True  # pyright: ignore[reportPrivateUsage]
    watcher._refs[path] = _Ref(stat, now, reported=True)  # pyright: ignore[reportPrivateUsage]
    # Unchanged stat, but a same-size rewrite in that tick would not show: the text decides.
    assert watcher._changed_since({path: stat}) == {path}  # pyright: ignore[reportPrivateUsage]
    watcher._refs[path] = _Ref(stat, now, reported=False)  # pyright: ignore[reportPrivateUsage]
    assert watcher._changed_since({path: stat}) is None  # pyright: ignore[reportPrivateUsage]
    old = (now - 10**10, 4, now - 10**10, 7)
    watcher._refs[path] = _Ref(old, now, reported=False)  # pyright: ignore[reportPrivateUsage]
    assert watcher._changed_since({path: old}) == set()  # pyright: ignore[reportPrivateUsage]
    assert watcher._changed_since({}) == {path}  # pyright: ignore[reportPrivateUsage]


def test_whole_second_stamps_are_racy_for_longer() -> None:
    second = 1_700_000_000 * 10**9
    assert _Ref((second, 1, second, 1), second + 2 * 10**9, reported=False).racy()
    assert not _Ref((second + 1, 1, second + 1, 1), second + 2 * 10**9, reported=False).racy()
