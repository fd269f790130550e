"""Files the agent writes straight to disk during a turn, seen with `watchfiles`.

A `TurnWatcher` runs while a turn runs (`start` when it starts, `stop` when it ends). It reports
every file added, modified or deleted under the workspace roots to a callback, except build and
tool directories (`.git/`, `node_modules/`, `__pycache__/`, `.venv/`, `build/`, `dist/`,
`target/`, `out/`, ...), editor swap files, the caller's `excluded` folders inside a root
(acpls' own state and `$XDG_STATE_HOME`, when the workspace holds them) and paths the caller
marked with `ignore_once` (the editor's own saves, acpls' own writes).

The hard part is the *baseline*: review needs each file's text from before the agent first
touched it, but a change event arrives after the write, when the old text is gone from disk.
Copying every file at turn start would be too expensive, so the baseline comes from, in order:

1. `remember(path, text)`: texts acpls already holds. The caller passes the editor's synced text
   of every open document at turn start (no copy: strings are shared) and every text the agent
   read through acpls during the turn. Exact.
2. git: at turn start the watcher runs `git status` once per repository. A file that was tracked
   and clean then had exactly the committed content, so `git cat-file --filters HEAD:<path>`
   (which applies the checkout conversions, e.g. CRLF) gives the text, checked against the
   file's size recorded at turn start when it was listed. Exact.
3. The turn-start listing: the watcher records (mtime, size) of up to 20,000 files under the
   roots (skipping the ignored directories). A file absent from a complete listing did not exist
   before the turn, so its baseline is "no file". Exact.
4. Anything else (dirty in git, untracked, no git, listing cut short) has an unknown baseline: the
   caller shows the whole file as added, with a note, and offers keep but not reject
   (`ReviewStore.unknown_baseline`).

Reported paths are real paths (symlinks resolved) under the real roots.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

import attrs
import watchfiles

from acpls.services.file_reads import open_regular

log = logging.getLogger(__name__)

ChangeKind = Literal["added", "modified", "deleted"]

IGNORED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", "build", "dist", "target",
        "out", ".next", ".gradle", ".idea",
    }
)  # fmt: skip
_SWAP_SUFFIXES = (".swp", ".swx", ".swo", "~")
_GIT_TIMEOUT_S = 5.0
_TEXT_PROBE = 8192
# How far back a file's timestamps must lie before the moment it was stat'ed for any later write
# to show in them: more than one tick of the filesystem's clock. Linux stamps files from its
# coarse clock (one jiffy, at most 10 ms); filesystems with whole-second stamps (FAT: 2 s) are
# told apart by a stamp with no sub-second part.
_RACY_NS = 20_000_000
_RACY_WHOLE_SECONDS_NS = 3_000_000_000

# (mtime_ns, size, ctime_ns, inode) of a file; any write changes it unless it is racy (see
# `_Ref.racy`). The size stays at index 1 (git's double check reads it).
Stat = tuple[int, int, int, int]


@attrs.frozen
class DiskChange:
    """One file changed on disk. `text` is its content now when it is UTF-8 text within the size
    bound (else None, and `is_text` says which); `existed_before` is whether the file was there
    at turn start (None when the turn-start listing was cut short)."""

    path: str
    change: ChangeKind
    text: str | None
    is_text: bool
    existed_before: bool | None


@attrs.frozen
class Baseline:
    """A file's text before the turn. `known` False: nobody can tell (see module docstring).
    `text` None with `known`: the file did not exist. `source`: remembered, git, new, unknown."""

    known: bool
    text: str | None
    source: Literal["remembered", "git", "new", "unknown"]


ChangeCallback = Callable[[DiskChange], Awaitable[None] | None]


@attrs.frozen
class _Ref:
    """What the watcher last knew of a file: its stat (None: no file) taken at `at_ns` (wall
    clock, read just before the stat), and whether that came from a report (whose text is in
    `_last`) or from the turn-start listing or an ignored change (no text kept)."""

    stat: Stat | None
    at_ns: int
    reported: bool

    def racy(self) -> bool:
        """A later write in the same clock tick as the stat could leave it unchanged (the
        "racy git" problem): true when both stamps are within a tick of `at_ns`."""
        if self.stat is None:
            return False
        mtime, _size, ctime, _ino = self.stat
        whole = mtime % 1_000_000_000 == 0 and ctime % 1_000_000_000 == 0
        margin = _RACY_WHOLE_SECONDS_NS if whole else _RACY_NS
        return min(mtime, ctime) > self.at_ns - margin


# What a report says of a file: whether it exists, its text, whether it is text.
_State = tuple[bool, str | None, bool]


@attrs.define
class _Repo:
    top: str
    dirty: set[str]
    dirty_dirs: list[str]

    def is_clean(self, path: str) -> bool:
        return path not in self.dirty and not any(path.startswith(d) for d in self.dirty_dirs)


class TurnWatcher:
    """Watches the workspace roots during one turn at a time."""

    def __init__(
        self,
        roots: Iterable[str],
        on_change: ChangeCallback,
        *,
        debounce_ms: int = 100,
        max_snapshot_files: int = 20_000,
        max_file_bytes: int = 2 * 1024 * 1024,
        ignore_ttl_s: float = 5.0,
        use_git: bool = True,
        excluded: Iterable[str] = (),
    ) -> None:
        self._roots = [os.path.realpath(r) for r in roots]
        # Folders never reported nor listed, as prefixes ending in a separator: only those inside
        # a root (a root inside one, a project kept under ~/.local/state, is watched whole).
        prefixes = (os.path.join(os.path.realpath(e), "") for e in excluded)
        roots_as_prefixes = [os.path.join(r, "") for r in self._roots]
        self._excluded = tuple(
            p for p in prefixes if any(p.startswith(r) and p != r for r in roots_as_prefixes)
        )
        self._on_change = on_change
        self._debounce_ms = debounce_ms
        self._max_snapshot_files = max_snapshot_files
        self._max_file_bytes = max_file_bytes
        self._ignore_ttl_s = ignore_ttl_s
        self._use_git = use_git
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ignore: dict[str, float] = {}
        self._remembered: dict[str, str] = {}
        self._snapshot: dict[str, Stat] = {}
        self._snapshot_complete = False
        self._listed_at_ns = 0
        self._repos: list[_Repo] = []
        self._seen: set[str] = set()
        # Per path, the last thing reported (a repeat of it is not reported again) and the stat
        # behind what the watcher last knew (the final flush compares the disk with it).
        self._last: dict[str, _State] = {}
        self._refs: dict[str, _Ref] = {}
        # One batch at a time: the final flush runs after a batch under way, never beside it.
        self._lock = asyncio.Lock()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    # -- turn lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Begin watching (a turn starts). Returns once the watch is in place."""
        if self.running:
            return
        self._stop = asyncio.Event()
        self._seen.clear()
        self._last.clear()
        self._refs.clear()
        roots = self._existing_roots()
        if not roots:
            return
        self._task = asyncio.create_task(self._run(roots, self._stop), name="acpls-turn-watcher")
        # The watch is set up synchronously in the task's first step; let it take that step.
        for _ in range(3):
            await asyncio.sleep(0)
        self._listed_at_ns = time.time_ns()
        self._snapshot, self._snapshot_complete = await asyncio.to_thread(self._list_files, roots)
        self._repos = await self._git_state(roots) if self._use_git else []

    def _existing_roots(self) -> list[str]:
        roots = [r for r in self._roots if os.path.isdir(r)]
        for missing in set(self._roots) - set(roots):
            log.warning("not watching %s: not a directory", missing)
        return roots

    async def stop(self, *, flush: bool = True) -> None:
        """Stop watching (the turn ended). With `flush`, every change written before the end is
        reported first: found by listing the roots again and comparing with what the watcher
        knew (no wait), or, when that cannot vouch for every file, by giving the watch one
        debounce period more, as before."""
        task = self._task
        if task is None:
            self._remembered.clear()
            return
        try:
            if flush and not task.done() and await self._flush_by_listing():
                self._end_soon(task)
            else:
                await self._wait_and_end(task, flush)
        finally:
            # Even when cancelled (acpls exiting mid-turn): the watch runs in a worker thread that
            # only this event stops, and the interpreter would wait for that thread at exit.
            self._stop.set()
            self._task = None
            # What was remembered belongs to this turn; the next one starts from scratch.
            self._remembered.clear()

    async def _wait_and_end(self, task: asyncio.Task[None], flush: bool) -> None:
        """With `flush`, give the watch one debounce period more for the last writes to arrive;
        then stop it and wait for its end."""
        try:
            if flush and not task.done():
                await asyncio.sleep((self._debounce_ms + 100) / 1000)
        finally:
            self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 2.0)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _flush_by_listing(self) -> bool:
        """Report what changed on disk since the watcher last knew each file, and stop the
        watch. False (nothing done) when the listing cannot vouch for every file: cut short,
        or a file whose stamps are within a clock tick of when it was stat'ed and whose text
        the watcher does not hold (a same-size rewrite in that tick changes no stamp).

        Why not drain the watch's pending events instead: watchfiles yields a batch only after
        `step` ms of quiet and discards what it holds when stopped, so its pending events
        cannot be had without a wait. The disk itself is the truth once the turn has ended:
        every write the agent made before is visible to stat and read."""
        if not self._snapshot_complete:
            return False
        roots = self._existing_roots()
        listing, complete = await asyncio.to_thread(self._list_files, roots)
        if not complete:
            return False
        async with self._lock:
            found = await asyncio.to_thread(self._changed_since, listing)
            if found is None:
                return False
            # Set before reporting: a batch the watch still yields is not handled (`_run`); what
            # it holds was written before now, and the listing above has it.
            self._stop.set()
            await self._handle(found, time.time_ns())
        return True

    def _changed_since(self, listing: dict[str, Stat]) -> set[str] | None:
        """Paths whose file appeared, vanished or changed since the watcher last knew it; None
        when a racy stat leaves that unknowable (see `_flush_by_listing`). Runs in a worker
        thread, under the lock (nothing else changes `_refs` meanwhile)."""
        found: set[str] = set()
        for path in self._snapshot.keys() | self._refs.keys() | listing.keys():
            ref = self._refs.get(path)
            if ref is None:
                ref = _Ref(self._snapshot.get(path), self._listed_at_ns, reported=False)
            now = listing.get(path)
            unchanged = ref.stat == now
            if unchanged and not ref.racy():
                continue
            if not self._wanted(watchfiles.Change.modified, path):
                continue
            if unchanged and not ref.reported:
                return None
            found.add(path)  # a racy reported file is read again and its text compared
        return found

    def _end_soon(self, task: asyncio.Task[None]) -> None:
        """The watch's thread ends at its next step (at most `step` ms) now that the stop event
        is set; nothing waits for it, but the task is kept until then (asyncio holds tasks
        weakly)."""
        _ENDING.add(task)
        task.add_done_callback(_ENDING.discard)

    # -- what the caller tells us --------------------------------------------------------------

    def ignore_once(self, path: str) -> None:
        """The next change of `path` (within a few seconds) is the editor's or acpls' own."""
        self._ignore[os.path.realpath(path)] = time.monotonic() + self._ignore_ttl_s

    def remember(self, path: str, text: str) -> None:
        """Text of `path` as acpls knows it before the agent changed it (open documents at turn
        start, files the agent read). The first text for a path in a turn wins; `stop` forgets
        them all. May be called before `start`."""
        self._remembered.setdefault(os.path.realpath(path), text)

    async def baseline_for(self, path: str) -> Baseline:
        """The text `path` had at turn start, as far as it can be known."""
        real, known = self._known_baseline(path)
        if known is not None:
            return known
        text = await self._git_text(real)
        if text is not None:
            return Baseline(known=True, text=text, source="git")
        return Baseline(known=False, text=None, source="unknown")

    def known_baseline(self, path: str) -> Baseline | None:
        """The turn-start text of `path` when it is known without asking git (remembered, or
        absent from a complete turn-start listing); None otherwise."""
        return self._known_baseline(path)[1]

    def _known_baseline(self, path: str) -> tuple[str, Baseline | None]:
        real = os.path.realpath(path)
        if real in self._remembered:
            return real, Baseline(known=True, text=self._remembered[real], source="remembered")
        if self._snapshot_complete and real not in self._snapshot:
            return real, Baseline(known=True, text=None, source="new")
        return real, None

    # -- watching ------------------------------------------------------------------------------

    async def _run(self, roots: list[str], stop: asyncio.Event) -> None:
        try:
            async for batch in watchfiles.awatch(
                *roots,
                watch_filter=self._wanted,
                debounce=self._debounce_ms,
                step=50,
                stop_event=stop,
                ignore_permission_denied=True,
            ):
                received_ns = time.time_ns()
                async with self._lock:
                    if stop.is_set():
                        return  # the final flush has reported this batch's changes
                    await self._handle({path for _change, path in batch}, received_ns)
        except Exception:
            log.exception("file watcher failed; direct disk writes are not seen this turn")

    def _wanted(self, _change: watchfiles.Change, path: str) -> bool:
        name = os.path.basename(path)
        if name.endswith(_SWAP_SUFFIXES) or name.startswith(".#") or name == "4913":
            return False
        root = self._root_of(path)
        if root is None or self._is_excluded(path):
            return False
        parts = os.path.relpath(path, root).split(os.sep)
        return not any(part in IGNORED_DIRS for part in parts)

    async def _handle(self, paths: set[str], received_ns: int) -> None:
        """Report the changes of `paths`, read from the disk now; `received_ns` is when their
        events arrived."""
        for path in sorted(paths):
            if self._consume_ignore(path):
                # The editor's or acpls' own write: nothing to report, and no text to compare a
                # later change with (a later event is reported whatever its text). Its stat is
                # dated back to the batch: the agent may have written since, and that write,
                # whose event may still be pending, must not pass for part of the ignored one
                # (its stamps are newer than the batch, so the final flush cannot vouch).
                self._last.pop(path, None)
                ref = await asyncio.to_thread(self._ref_now, path, False)
                self._refs[path] = attrs.evolve(ref, at_ns=received_ns)
                continue
            described = await asyncio.to_thread(self._describe, path)
            if described is None:
                continue
            change, ref = described
            self._refs[path] = ref
            state = (change.change != "deleted", change.text, change.is_text)
            if self._last.get(path) == state:
                continue  # nothing new since the last report of this path (a repeat event)
            self._last[path] = state
            self._seen.add(path)
            try:
                result = self._on_change(change)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("change callback failed for %s", path)

    def _describe(self, path: str) -> tuple[DiskChange, _Ref] | None:
        """Runs in a worker thread: it touches the disk. The stat is taken before the read, so
        a write between them shows as a change of the stat at the final flush."""
        existed: bool | None = path in self._snapshot
        if not existed and not self._snapshot_complete:
            existed = None
        if os.path.isdir(path):
            return None
        ref = self._ref_now(path, True)
        if not os.path.lexists(path):
            if existed is False and path not in self._seen:
                return None  # a temporary file that came and went during the turn
            return DiskChange(path, "deleted", None, False, existed), ref
        text, is_text = self._read_text(path)
        kind: ChangeKind = "added" if existed is False and path not in self._seen else "modified"
        return DiskChange(path, kind, text, is_text, existed), ref

    @staticmethod
    def _ref_now(path: str, reported: bool) -> _Ref:
        at_ns = time.time_ns()
        try:
            stat: Stat | None = _stat_of(os.stat(path))
        except OSError:
            stat = None
        return _Ref(stat, at_ns, reported)

    def _consume_ignore(self, path: str) -> bool:
        now = time.monotonic()
        for stale in [p for p, deadline in self._ignore.items() if deadline < now]:
            del self._ignore[stale]
        return self._ignore.pop(path, None) is not None

    def _root_of(self, path: str) -> str | None:
        for root in self._roots:
            if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
                return root
        return None

    # -- files ---------------------------------------------------------------------------------

    def _is_excluded(self, path: str) -> bool:
        return bool(self._excluded) and os.path.join(path, "").startswith(self._excluded)

    def _list_files(self, roots: list[str]) -> tuple[dict[str, Stat], bool]:
        """`Stat` of the files under the roots, and whether the listing is complete."""
        found: dict[str, Stat] = {}
        pending = list(roots)
        while pending:
            directory = pending.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in IGNORED_DIRS and not self._is_excluded(entry.path):
                            pending.append(entry.path)
                    elif entry.is_file():
                        found[os.path.realpath(entry.path)] = _stat_of(entry.stat())
                except OSError:
                    continue
                if len(found) >= self._max_snapshot_files:
                    log.info("turn-start listing stopped at %d files", len(found))
                    return found, False
        return found, True

    def _read_text(self, path: str) -> tuple[str | None, bool]:
        try:
            # Only a regular file is opened: a FIFO the agent made would block this thread.
            with open(open_regular(path), "rb") as f:
                data = f.read(self._max_file_bytes + 1)
        except OSError:
            return None, False
        return _as_text(data, self._max_file_bytes)

    # -- git -----------------------------------------------------------------------------------

    async def _git_state(self, roots: list[str]) -> list[_Repo]:
        repos: list[_Repo] = []
        for root in roots:
            top = await _git(root, "rev-parse", "--show-toplevel")
            if top is None:
                continue
            top_path = _real(top.decode("utf-8", "surrogateescape").strip())
            if any(repo.top == top_path for repo in repos):
                continue
            status = await _git(top_path, "status", "--porcelain=v1", "-z", "--no-renames")
            if status is None:
                continue
            repos.append(_parse_status(top_path, status))
        return repos

    async def _git_text(self, path: str) -> str | None:
        repo = next((r for r in self._repos if path.startswith(r.top + os.sep)), None)
        if repo is None or not repo.is_clean(path):
            return None
        relative = path[len(repo.top) + 1 :]
        data = await _git(repo.top, "cat-file", "--filters", f"HEAD:{relative}")
        if data is None:
            return None  # not committed (ignored, or created during the turn)
        # Clean and committed means it was on disk with this content (a committed file missing
        # from disk is listed as deleted). The size, when listed, double-checks that.
        listed = self._snapshot.get(path)
        if listed is not None and listed[1] != len(data):
            return None
        text, _is_text = _as_text(data, self._max_file_bytes)
        return text


_ENDING: set[asyncio.Task[None]] = set()


def _stat_of(stat: os.stat_result) -> Stat:
    return (stat.st_mtime_ns, stat.st_size, stat.st_ctime_ns, stat.st_ino)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _as_text(data: bytes, limit: int) -> tuple[str | None, bool]:
    if len(data) > limit or b"\0" in data[:_TEXT_PROBE]:
        return None, False
    try:
        return data.decode("utf-8"), True
    except UnicodeDecodeError:
        return None, False


def _parse_status(top: str, output: bytes) -> _Repo:
    """Paths `git status --porcelain -z` lists: changed, staged, untracked (dirs end in /)."""
    dirty: set[str] = set()
    dirty_dirs: list[str] = []
    for record in output.split(b"\0"):
        if len(record) < 4:
            continue
        name = record[3:].decode("utf-8", "surrogateescape")
        path = os.path.join(top, name)
        if name.endswith("/"):
            dirty_dirs.append(path)
        else:
            dirty.add(path)
    return _Repo(top=top, dirty=dirty, dirty_dirs=dirty_dirs)


async def _git(cwd: str, *args: str) -> bytes | None:
    """Run git; its stdout, or None when it fails, is missing, or takes too long."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except OSError:
        return None
    try:
        stdout, _ = await asyncio.wait_for(process.communicate(), _GIT_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        log.warning("git %s in %s took too long", args[0], cwd)
        return None
    return stdout if process.returncode == 0 else None
