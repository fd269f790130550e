"""Files the agent writes straight to disk during a turn, seen with `watchfiles`.

A `TurnWatcher` runs while a turn runs (`start` when it starts, `stop` when it ends). It reports
every file added, modified or deleted under the workspace roots to a callback, except build and
tool directories (`.git/`, `node_modules/`, `__pycache__/`, `.venv/`, `build/`, `dist/`,
`target/`, `out/`, ...), editor swap files, and paths the caller marked with `ignore_once`
(the editor's own saves, acpls' own writes).

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
    ) -> None:
        self._roots = [os.path.realpath(r) for r in roots]
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
        self._snapshot: dict[str, tuple[int, int]] = {}
        self._snapshot_complete = False
        self._repos: list[_Repo] = []
        self._seen: set[str] = set()

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
        roots = self._existing_roots()
        if not roots:
            return
        self._task = asyncio.create_task(self._run(roots), name="acpls-turn-watcher")
        # The watch is set up synchronously in the task's first step; let it take that step.
        for _ in range(3):
            await asyncio.sleep(0)
        self._snapshot, self._snapshot_complete = await asyncio.to_thread(self._list_files, roots)
        self._repos = await self._git_state(roots) if self._use_git else []

    def _existing_roots(self) -> list[str]:
        roots = [r for r in self._roots if os.path.isdir(r)]
        for missing in set(self._roots) - set(roots):
            log.warning("not watching %s: not a directory", missing)
        return roots

    async def stop(self, *, flush: bool = True) -> None:
        """Stop watching (the turn ended). With `flush`, changes written just before the end
        still get one debounce period to arrive."""
        task = self._task
        if task is None:
            self._remembered.clear()
            return
        try:
            if flush and not task.done():
                await asyncio.sleep((self._debounce_ms + 100) / 1000)
        finally:
            # Even when cancelled (acpls exiting mid-turn): the watch runs in a worker thread that
            # only this event stops, and the interpreter would wait for that thread at exit.
            self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), 2.0)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        finally:
            self._task = None
            # What was remembered belongs to this turn; the next one starts from scratch.
            self._remembered.clear()

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

    async def _run(self, roots: list[str]) -> None:
        try:
            async for batch in watchfiles.awatch(
                *roots,
                watch_filter=self._wanted,
                debounce=self._debounce_ms,
                step=50,
                stop_event=self._stop,
                ignore_permission_denied=True,
            ):
                await self._handle({path for _change, path in batch})
        except Exception:
            log.exception("file watcher failed; direct disk writes are not seen this turn")

    def _wanted(self, _change: watchfiles.Change, path: str) -> bool:
        name = os.path.basename(path)
        if name.endswith(_SWAP_SUFFIXES) or name.startswith(".#") or name == "4913":
            return False
        root = self._root_of(path)
        if root is None:
            return False
        parts = os.path.relpath(path, root).split(os.sep)
        return not any(part in IGNORED_DIRS for part in parts)

    async def _handle(self, paths: set[str]) -> None:
        for path in sorted(paths):
            if self._consume_ignore(path):
                continue
            change = await asyncio.to_thread(self._describe, path)
            if change is None:
                continue
            self._seen.add(path)
            try:
                result = self._on_change(change)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("change callback failed for %s", path)

    def _describe(self, path: str) -> DiskChange | None:
        """Runs in a worker thread: it touches the disk."""
        existed: bool | None = path in self._snapshot
        if not existed and not self._snapshot_complete:
            existed = None
        if os.path.isdir(path):
            return None
        if not os.path.lexists(path):
            if existed is False and path not in self._seen:
                return None  # a temporary file that came and went during the turn
            return DiskChange(path, "deleted", None, False, existed)
        text, is_text = self._read_text(path)
        kind: ChangeKind = "added" if existed is False and path not in self._seen else "modified"
        return DiskChange(path, kind, text, is_text, existed)

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

    def _list_files(self, roots: list[str]) -> tuple[dict[str, tuple[int, int]], bool]:
        """(mtime_ns, size) of the files under the roots, and whether the listing is complete."""
        found: dict[str, tuple[int, int]] = {}
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
                        if entry.name not in IGNORED_DIRS:
                            pending.append(entry.path)
                    elif entry.is_file():
                        stat = entry.stat()
                        found[os.path.realpath(entry.path)] = (stat.st_mtime_ns, stat.st_size)
                except OSError:
                    continue
                if len(found) >= self._max_snapshot_files:
                    log.info("turn-start listing stopped at %d files", len(found))
                    return found, False
        return found, True

    def _read_text(self, path: str) -> tuple[str | None, bool]:
        try:
            with open(path, "rb") as f:
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
