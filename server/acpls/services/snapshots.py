"""Snapshots of a workspace folder in a git object store private to acpls.

Each workspace folder gets its own git directory under `$XDG_STATE_HOME/acpls/checkpoints/`, with
its own index. Git runs with `GIT_DIR` (the private directory), `GIT_INDEX_FILE` (the private
index) and `GIT_WORK_TREE` (the folder), without the system or global configuration, without
hooks, and with every other `GIT_*` variable of acpls' environment removed. So nothing is ever
written to the user's `.git` (index, refs, objects, stash, config, hooks, worktrees), and the
working tree is only read. Plain folders without git work the same way.

Which files: tracked and untracked, not ignored. Ignore rules are the folder's `.gitignore` files
plus the user's `.git/info/exclude` and global `~/.config/git/ignore` (copied, read-only, into the
private `info/exclude`); `.git` directories are never recorded. A nested repository is listed as
not recorded. Symbolic links are recorded as links (never followed), the executable bit as git's
file mode.

Speed: the private index is a stat cache. A snapshot is `git ls-files -t -m -o -d` (one walk with
one `lstat` per file; unchanged files are not read), `git update-index` of the files that
changed (from 64 files on, their contents streamed into one new pack), `git write-tree`, and
`git update-ref` for a tree not seen before: with nothing changed it is one process.

Limits: a file over `max_file_bytes`, or a binary file that would take the snapshot's new binary
bytes over `binary_budget_bytes`, is not recorded (and listed with its reason). Unsaved editor
buffers are written as blobs of their own (what the user saw) and kept reachable through a small
tree. Every tree a checkpoint uses is kept by a ref `refs/acpls/<tree>`; `drop()` deletes refs.

Storage: `pack()` (after each turn) moves the loose objects into packs (zlib, deltas between
versions of a file) and, once refs were dropped, rewrites the packs without what no ref and no
index entry reaches and prunes it at once. Git's own grace period (two weeks, or minutes) is for
repositories others write into; this one only acpls writes, and every snapshot and every pack runs
under the store's lock (`lock`, an flock also held against a second acpls on the same folder), so
no object is ever pruned between its writing and the ref that keeps it.

Privacy: the store holds copies of the user's files (a `.env`). Every folder is created 0700 and
every file 0600 (`private_files`); git runs with a umask of 077 (its own files are created so; its
objects and packs are read-only, 0400) and `core.sharedRepository=0600` as a second guard. A store
left by an older acpls (0755/0644, loose objects) is narrowed on first use and packed after the
first turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import os
import stat
import zlib
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import IO

import attrs

from acpls.services import private_files

logger = logging.getLogger(__name__)

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_BINARY_PROBE = 8000
_GIT_TIMEOUT_S = 60.0
_PRIVATE_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tautocrlf = false
\tsafecrlf = false
\tignorecase = false
\tfsmonitor = false
\tuntrackedCache = true
\thooksPath = /dev/null
\tlogAllRefUpdates = false
\tsharedRepository = 0600
[gc]
\tauto = 0
[repack]
\tupdateServerInfo = false
\twriteBitmaps = false
[index]
\tskipHash = false
"""
# Git's child processes create their files private (the process umask is left alone: the agent
# and its terminals inherit it).
_GIT_UMASK = 0o077
# Incremental packs (one per turn) are merged into one when there are this many.
_MAX_PACKS = 16
_LOCK_POLL_S = 0.02
# New file contents written by one `update-index` go into one pack (git's bulk check-in), not a
# loose file each: 5,000 files took 21 MB of 4 KiB blocks and 3-5x the time. Deltas between
# versions come later, from `repack` (which reads the store's own threshold, git's 512 MiB).
_STREAM_TO_PACK = ("-c", "core.bigFileThreshold=1")
# Fewer files than this (a turn's few changes) are written loose, as git does: a pack of its own
# is fsync-ed and costs more than the few files; `pack()` packs them after the turn.
_PACK_FROM_FILES = 64
# Other version control systems' metadata is no more the user's files than `.git` is.
_ALWAYS_EXCLUDED = "/.hg/\n/.svn/\n/.jj/\n"


class SnapshotError(Exception):
    """git failed in the private store (the message has its stderr)."""


@attrs.frozen
class NotRecorded:
    path: str  # relative to the folder, `/`-separated
    reason: str


@attrs.frozen
class Snapshot:
    """One folder at one moment: `tree` (files on disk), `unsaved` (relative path → blob id of an
    editor buffer whose text differs from the file), `unsaved_tree` (keeps those blobs)."""

    tree: str
    unsaved: dict[str, str] = attrs.field(factory=dict)
    unsaved_tree: str | None = None
    not_recorded: tuple[NotRecorded, ...] = ()

    def trees(self) -> list[str]:
        return [t for t in (self.tree, self.unsaved_tree) if t]


@attrs.frozen
class TreeChange:
    """A path whose entry differs between two trees; a mode or oid of None: absent on that side."""

    path: str
    old_mode: str | None
    old_oid: str | None
    new_mode: str | None
    new_oid: str | None


@attrs.frozen
class Limits:
    max_file_bytes: int = 5 * 1024 * 1024
    binary_budget_bytes: int = 20 * 1024 * 1024


def store_dir_for(state_dir: Path, root: str) -> Path:
    """The private store of one workspace folder (by its real path)."""
    key = hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()
    return state_dir / "checkpoints" / key[:20]


def git_env(base: Mapping[str, str], git_dir: Path, index: Path, work_tree: str) -> dict[str, str]:
    """The environment for git in the private store: none of the caller's `GIT_*`, no user or
    system configuration, no prompts, no optional locks."""
    env = {k: v for k, v in base.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(git_dir),
        GIT_INDEX_FILE=str(index),
        GIT_WORK_TREE=work_tree,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_AUTHOR_NAME="acpls",
        GIT_AUTHOR_EMAIL="acpls@localhost",
        GIT_COMMITTER_NAME="acpls",
        GIT_COMMITTER_EMAIL="acpls@localhost",
        LC_ALL="C",
    )
    return env


class SnapshotStore:
    """The private store of one workspace folder."""

    def __init__(
        self,
        root: str,
        state_dir: Path,
        *,
        limits: Limits | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.root = os.path.realpath(root)
        self.dir = store_dir_for(state_dir, root)
        self.git_dir = self.dir / "git"
        self.index = self.dir / "index"
        self.limits = limits or Limits()
        self._state_dir = os.path.realpath(state_dir)
        self._env = git_env(environ or os.environ, self.git_dir, self.index, self.root)
        self._lock = asyncio.Lock()
        self._known_refs: set[str] | None = None
        self._last_tree: str | None = None
        self._index_stamp: tuple[int, int, int] | None = None
        self._migrated = False

    # -- git -------------------------------------------------------------------------------------
    async def _git(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        proc = await asyncio.create_subprocess_exec(
            "git",
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._env,
            cwd=self.root,
            umask=_GIT_UMASK,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), _GIT_TIMEOUT_S)
        except BaseException:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            raise
        if check and proc.returncode != 0:
            detail = err.decode("utf-8", "replace").strip()
            command = next(a for a in args if not a.startswith("-") and "=" not in a)
            raise SnapshotError(f"git {command} failed ({proc.returncode}): {detail}")
        return out

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        """The store to this task alone: no other snapshot or pack of this acpls (the asyncio
        lock) or of another acpls on the same folder (an flock on `lock`) runs meanwhile."""
        async with self._lock:
            handle = await self._flock()
            try:
                yield
            finally:
                handle.close()  # closing the file releases the flock

    async def _flock(self) -> IO[bytes]:
        private_files.make_dir(self.dir)
        handle = private_files.open_file(self.dir / "lock", "ab")
        try:
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return handle
                except BlockingIOError:
                    # Polled, not waited for in a thread: a cancelled wait leaves no lock behind.
                    await asyncio.sleep(_LOCK_POLL_S)
        except BaseException:
            handle.close()
            raise

    def _ensure_store(self) -> None:
        if not self._migrated:
            self._migrate()
        if (self.git_dir / "HEAD").exists():
            return
        for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
            private_files.make_dir(self.git_dir / sub)
        private_files.write_atomic(self.git_dir / "config", _PRIVATE_CONFIG)
        private_files.write_atomic(self.dir / "folder", self.root + "\n")
        private_files.write_atomic(self.git_dir / "HEAD", "ref: refs/heads/none\n")

    def _migrate(self) -> None:
        """A store an older acpls left: narrowed to 0700/0600 (its loose objects are packed by
        the next `pack()`), and given the current private configuration."""
        self._migrated = True
        _narrow_folder(self.dir.parent)
        private_files.tighten(self.dir)
        config = self.git_dir / "config"
        try:
            current = config.read_text(encoding="utf-8")
        except OSError:
            return  # a new store: `_ensure_store` writes it
        if current != _PRIVATE_CONFIG:
            private_files.write_atomic(config, _PRIVATE_CONFIG)

    def _sync_excludes(self) -> None:
        """The user's own ignore files, read-only, as the private store's `info/exclude`."""
        parts = [_ALWAYS_EXCLUDED, _own_state_pattern(self.root, self._state_dir)]
        config_home = self._env.get("XDG_CONFIG_HOME") or os.path.join(
            self._env.get("HOME", "/nonexistent"), ".config"
        )
        user_git = _user_git_dir(self.root)
        sources = [Path(config_home) / "git" / "ignore"]
        if user_git is not None:
            sources.insert(0, user_git / "info" / "exclude")
        for path in sources:
            try:
                parts.append(path.read_text(encoding="utf-8", errors="surrogateescape"))
            except OSError:
                continue
        text = "\n".join(parts)
        target = self.git_dir / "info" / "exclude"
        try:
            if target.read_text(encoding="utf-8", errors="surrogateescape") == text:
                return
        except OSError:
            pass
        private_files.write_atomic(target, text.encode("utf-8", "surrogateescape"))

    # -- snapshots -------------------------------------------------------------------------------
    async def snapshot(self, buffers: Mapping[str, str] | None = None) -> Snapshot:
        """Record the folder now; `buffers` are the editor's open documents (absolute path →
        text), recorded where they differ from the file."""
        async with self._locked():
            await asyncio.to_thread(self._prepare)
            listing = await self._git(
                "ls-files", "-z", "-t", "-m", "-o", "-d", "--exclude-standard"
            )
            add, remove, not_recorded = await asyncio.to_thread(self._triage, listing)
            if add:
                await self._git(
                    *(_STREAM_TO_PACK if len(add) >= _PACK_FROM_FILES else ()),
                    "update-index",
                    "-z",
                    "--add",
                    "--remove",
                    "--stdin",
                    stdin=_nul_join(add),
                )
            if remove:
                await self._git(
                    "update-index", "-z", "--force-remove", "--stdin", stdin=_nul_join(remove)
                )
            # The last tree stands while the index is the one it was written from (another
            # acpls on the same folder may have changed it since).
            if add or remove or self._last_tree is None or self._index_stamp != self._stamp():
                self._last_tree = (await self._git("write-tree")).decode().strip()
                self._index_stamp = self._stamp()
            tree = self._last_tree
            unsaved, unsaved_tree = await asyncio.to_thread(self._record_buffers, buffers or {})
            await self._keep([tree] + ([unsaved_tree] if unsaved_tree else []))
            return Snapshot(tree, unsaved, unsaved_tree, tuple(not_recorded))

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self.index)
        except OSError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def _prepare(self) -> None:
        self._ensure_store()
        self._sync_excludes()
        if self._known_refs is None:
            refs = self.git_dir / "refs" / "acpls"
            self._known_refs = set(os.listdir(refs)) if refs.is_dir() else set()
            packed = self.git_dir / "packed-refs"
            if packed.exists():
                for line in packed.read_text(encoding="utf-8").splitlines():
                    name = line.partition(" ")[2]
                    if name.startswith("refs/acpls/"):
                        self._known_refs.add(name.removeprefix("refs/acpls/"))

    def _triage(self, listing: bytes) -> tuple[list[str], list[str], list[NotRecorded]]:
        """Which of the listed paths go into the index, which leave it, which are not recorded."""
        add: list[str] = []
        remove: list[str] = []
        skipped: list[NotRecorded] = []
        seen: set[str] = set()
        binary_bytes = 0
        for item in listing.split(b"\0"):
            if len(item) < 3:
                continue
            tag, rel = item[:1], item[2:].decode("utf-8", "surrogateescape")
            if rel in seen:
                continue
            seen.add(rel)
            indexed = tag != b"?"
            if rel.endswith("/"):
                skipped.append(NotRecorded(rel.rstrip("/"), "a nested git repository"))
                continue
            try:
                st = os.lstat(os.path.join(self.root, rel))
            except FileNotFoundError:
                add.append(rel)  # --remove drops it from the index
                continue
            except OSError as exc:
                skipped.append(NotRecorded(rel, f"cannot be read: {exc.strerror}"))
                continue
            reason = None
            if stat.S_ISLNK(st.st_mode):
                add.append(rel)
                continue
            if not stat.S_ISREG(st.st_mode):
                reason = "not a regular file"
            elif st.st_size > self.limits.max_file_bytes:
                reason = f"over the size limit ({st.st_size} > {self.limits.max_file_bytes} bytes)"
            elif self._is_binary(rel):
                if binary_bytes + st.st_size > self.limits.binary_budget_bytes:
                    reason = (
                        f"binary, over the checkpoint's binary budget"
                        f" ({self.limits.binary_budget_bytes} bytes)"
                    )
                else:
                    binary_bytes += st.st_size
            if reason is None:
                add.append(rel)
            else:
                skipped.append(NotRecorded(rel, reason))
                if indexed:
                    remove.append(rel)
        return add, remove, skipped

    def _is_binary(self, rel: str) -> bool:
        try:
            with open(os.path.join(self.root, rel), "rb") as handle:
                return b"\0" in handle.read(_BINARY_PROBE)
        except OSError:
            return False

    def _record_buffers(self, buffers: Mapping[str, str]) -> tuple[dict[str, str], str | None]:
        unsaved: dict[str, str] = {}
        for path, text in buffers.items():
            rel = self.relative(path)
            if rel is None:
                continue
            data = text.encode("utf-8", "surrogatepass")
            try:
                with open(os.path.join(self.root, rel), "rb") as handle:
                    if handle.read(len(data) + 1) == data:
                        continue
            except OSError:
                pass  # a buffer whose file does not exist (yet): what the user saw is the buffer
            unsaved[rel] = self._write_object(b"blob", data)
        if not unsaved:
            return {}, None
        # Named by position: the tree only keeps the blobs reachable; the paths are in `unsaved`.
        entries = sorted((str(i), oid) for i, oid in enumerate(sorted(set(unsaved.values()))))
        body = b"".join(b"100644 %s\0%s" % (n.encode(), bytes.fromhex(o)) for n, o in entries)
        return unsaved, self._write_object(b"tree", body)

    def _write_object(self, kind: bytes, data: bytes) -> str:
        """A loose object written as git does (zlib of `<kind> <size>\\0<data>`), atomically."""
        raw = b"%s %d\0%s" % (kind, len(data), data)
        oid = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
        directory = self.git_dir / "objects" / oid[:2]
        target = directory / oid[2:]
        if target.exists():
            return oid
        private_files.make_dir(directory)
        private_files.write_atomic(target, zlib.compress(raw, 1), fsync=False)
        return oid

    async def _keep(self, trees: Iterable[str]) -> None:
        known = self._known_refs if self._known_refs is not None else set()
        new = [t for t in dict.fromkeys(trees) if t not in known]
        if not new:
            return
        commands = "".join(f"update refs/acpls/{t} {t}\n" for t in new).encode()
        await self._git("update-ref", "--stdin", stdin=commands)
        known.update(new)

    # -- reading ---------------------------------------------------------------------------------
    def relative(self, path: str) -> str | None:
        """`path` relative to the folder (`/`-separated), or None when it is not inside."""
        real = os.path.realpath(os.path.dirname(path))
        base = os.path.join(real, os.path.basename(path))
        if base == self.root or not base.startswith(self.root + os.sep):
            return None
        return os.path.relpath(base, self.root).replace(os.sep, "/")

    async def changes(self, old_tree: str, new_tree: str) -> list[TreeChange]:
        if old_tree == new_tree:
            return []
        out = await self._git("diff-tree", "-r", "-z", "--no-renames", "--raw", old_tree, new_tree)
        return _parse_raw_diff(out)

    async def entries(self, tree: str, paths: Iterable[str]) -> dict[str, tuple[str, str]]:
        """Mode and oid of each of `paths` in `tree` (absent paths are left out)."""
        paths = list(paths)
        if not paths:
            return {}
        out = await self._git("ls-tree", "-z", "--full-tree", tree, "--", *paths)
        entries: dict[str, tuple[str, str]] = {}
        for item in out.split(b"\0"):
            if not item:
                continue
            meta, _, name = item.partition(b"\t")
            mode, _kind, oid = meta.decode().split(" ")
            entries[name.decode("utf-8", "surrogateescape")] = (mode, oid)
        return entries

    async def blobs(self, oids: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(o for o in oids if o))
        if not wanted:
            return {}
        out = await self._git(
            "cat-file", "--batch", stdin="".join(f"{o}\n" for o in wanted).encode()
        )
        blobs: dict[str, bytes] = {}
        pos = 0
        for oid in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].split(b" ")
            pos = end + 1
            if len(header) < 3 or header[1] == b"missing":
                continue
            size = int(header[2])
            blobs[oid] = out[pos : pos + size]
            pos += size + 1
        return blobs

    # -- storage ---------------------------------------------------------------------------------
    async def drop(self, trees: Iterable[str]) -> None:
        """Stop keeping these trees (their objects go at the next `pack(prune=True)`)."""
        trees = [t for t in dict.fromkeys(trees) if t]
        if not trees or not self.git_dir.exists():
            return
        async with self._locked():
            await self.drop_unlocked(trees)

    async def drop_unlocked(self, trees: list[str]) -> None:
        """`drop()` for a caller that already holds the order of snapshots (no snapshot runs)."""
        commands = "".join(f"delete refs/acpls/{t}\n" for t in trees).encode()
        await self._git("update-ref", "--stdin", stdin=commands)
        if self._known_refs is not None:
            self._known_refs.difference_update(trees)

    async def pack(self, *, prune: bool) -> None:
        """Loose objects into a pack, loose refs into `packed-refs`; with `prune` (refs were
        dropped), every pack rewritten into one without the objects nothing keeps any more. What
        is left loose after that is kept by nothing (a snapshot `drop`ped at once): pruned now."""
        if not (self.git_dir / "HEAD").exists():
            return
        async with self._locked():
            if not self._migrated:
                await asyncio.to_thread(self._migrate)
            if prune or _pack_count(self.git_dir) >= _MAX_PACKS:
                await self._git("repack", "-a", "-d", "-q")
            elif _has_loose_objects(self.git_dir):
                await self._git("repack", "-d", "-q")
            if _has_loose_objects(self.git_dir):
                await self._git("prune", "--expire=now")
            if _has_loose_refs(self.git_dir):
                await self._git("pack-refs", "--all", "--prune")

    def storage_bytes(self) -> int:
        """The store's size on disk as `du` counts it: the allocated blocks of every folder and
        file (the log beside the store included)."""
        total = 0
        for dirpath, _dirs, files in os.walk(self.dir):
            for path in [dirpath, *(os.path.join(dirpath, name) for name in files)]:
                try:
                    total += os.lstat(path).st_blocks * 512
                except OSError:
                    continue
        return total


def _narrow_folder(folder: Path) -> None:
    """`checkpoints/` itself (its listing names the stores) 0700, when an older acpls made it."""
    with contextlib.suppress(OSError):
        info = os.lstat(folder)
        if stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077:
            os.chmod(folder, stat.S_IMODE(info.st_mode) & private_files.DIR_MODE)


def _pack_count(git_dir: Path) -> int:
    try:
        return sum(1 for n in os.listdir(git_dir / "objects" / "pack") if n.endswith(".pack"))
    except OSError:
        return 0


def _has_loose_objects(git_dir: Path) -> bool:
    """Any object outside a pack (`objects/<2 hex>/`; git removes emptied ones)."""
    try:
        with os.scandir(git_dir / "objects") as entries:
            return any(len(e.name) == 2 and e.is_dir() and any(os.scandir(e.path)) for e in entries)
    except OSError:
        return False


def _has_loose_refs(git_dir: Path) -> bool:
    try:
        return bool(os.listdir(git_dir / "refs" / "acpls"))
    except OSError:
        return False


def _own_state_pattern(root: str, state_dir: str) -> str:
    """An exclude pattern for acpls' own state (this store, the transcripts) when it lies inside
    the folder (a workspace opened at `~`): recorded, each snapshot's new objects and index made
    the next snapshot differ, so every turn hashed the store again and it grew without end."""
    if not state_dir.startswith(root.rstrip(os.sep) + os.sep):
        return ""
    rel = os.path.relpath(state_dir, root).replace(os.sep, "/")
    # gitignore syntax: a backslash makes the next character literal.
    escaped = "".join("\\" + c if c in "\\*?[]!# " else c for c in rel)
    return f"/{escaped}/\n"


def _nul_join(paths: list[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def _user_git_dir(root: str) -> Path | None:
    """The folder's own git directory (read for `info/exclude` only), when it has one."""
    dot_git = Path(root) / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        first = dot_git.read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return None
    if first.startswith("gitdir:"):
        target = Path(first.removeprefix("gitdir:").strip())
        return target if target.is_absolute() else Path(root) / target
    return None


def _parse_raw_diff(out: bytes) -> list[TreeChange]:
    changes: list[TreeChange] = []
    fields = out.split(b"\0")
    i = 0
    while i + 1 < len(fields):
        meta = fields[i].decode()
        path = fields[i + 1].decode("utf-8", "surrogateescape")
        i += 2
        if not meta.startswith(":"):
            continue
        old_mode, new_mode, old_oid, new_oid, _status = meta[1:].split(" ")
        changes.append(
            TreeChange(
                path,
                None if old_mode == "000000" else old_mode,
                None if old_mode == "000000" else old_oid,
                None if new_mode == "000000" else new_mode,
                None if new_mode == "000000" else new_oid,
            )
        )
    return changes


# -- restoring on disk ---------------------------------------------------------------------------
def inside(root: str, path: str) -> bool:
    """`path` is in the folder `root` once its directory's symbolic links are resolved (the file
    itself is not followed: it may be a link that is replaced)."""
    real_root = os.path.realpath(root)
    parent = os.path.realpath(os.path.dirname(path))
    return parent == real_root or parent.startswith(real_root + os.sep)


def apply_disk_op(root: str, kind: str, path: str, data: bytes, mode: str) -> str | None:
    """Carry out one restore step on disk (`state.checkpoints.DiskOp`); returns the reason it
    could not be done, or None. Writes go through a temporary file and a rename."""
    if not inside(root, path):
        return "the path leaves the workspace folder"
    try:
        if kind == "remove":
            if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
                os.unlink(path)
            return None
        if kind == "chmod":
            if os.path.islink(path) or not os.path.exists(path):
                return "the editor did not create the file"
            current = stat.S_IMODE(os.lstat(path).st_mode)
            # Executable for whoever may read it, as git checks files out.
            wanted = current | (current & 0o444) >> 2 if mode == "100755" else current & ~0o111
            os.chmod(path, wanted)
            return None
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not inside(root, path):
            return "the path leaves the workspace folder"
        temp = f"{path}.acpls-restore-{os.getpid()}"
        if kind == "link":
            os.symlink(os.fsdecode(data), temp)
        else:
            with open(temp, "wb") as handle:
                handle.write(data)
            os.chmod(temp, 0o755 if mode == "100755" else 0o644)
        os.replace(temp, path)
        return None
    except OSError as exc:
        return f"could not be restored: {exc.strerror or exc}"
