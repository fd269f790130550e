"""acpls' own state on disk: folders 0700 and files 0600, created so, never widened afterwards.

Everything acpls keeps (rules, transcripts, checkpoint objects and metadata, proposed writes,
questions' answers, caches) may hold a copy of what the workspace keeps private (a `.env`, an API
key a terminal printed). OpenSSH's discipline is the model: a private file is created with its
final mode in the same `open(2)` that creates it (the mode passed to `os.open`/`mkdir`, which the
umask can only narrow), never written first and chmod-ed after, so there is no moment in which
another user could open it. The process umask is left alone: it is inherited by the agent and its
terminals, whose files are the user's and keep the user's modes.

`tighten()` narrows state left by an older acpls (0755 folders, 0644 files) when acpls starts.
Symlinks are never followed here: a link planted in the state folder is neither written through
nor chmod-ed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from pathlib import Path
from typing import IO, Any, Literal, overload

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FLAGS = {
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
}


def make_dir(path: str | os.PathLike[str]) -> Path:
    """`path` and every missing parent, each created 0700. An existing folder is left as is
    (`tighten` narrows acpls' own at start); a symlink or a file in the way raises OSError."""
    target = Path(path)
    missing: list[Path] = []
    probe = target
    while not probe.exists() and not probe.is_symlink():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, DIR_MODE)
    if not target.is_dir():
        raise NotADirectoryError(f"{target} is not a folder")
    return target


@overload
def open_file(
    path: str | os.PathLike[str], mode: Literal["w", "a", "x"] = "w", *, encoding: str = "utf-8"
) -> IO[str]: ...
@overload
def open_file(path: str | os.PathLike[str], mode: Literal["wb", "ab", "xb"]) -> IO[bytes]: ...
def open_file(path: str | os.PathLike[str], mode: str = "w", *, encoding: str = "utf-8") -> IO[Any]:
    """Open a private file for writing, created 0600; a symlink at `path` is refused (ELOOP)."""
    binary = mode.endswith("b")
    flags = _FLAGS[mode.rstrip("b")] | _NOFOLLOW | _CLOEXEC
    fd = os.open(path, flags, FILE_MODE)
    if binary:
        return os.fdopen(fd, mode)
    return os.fdopen(fd, mode, encoding=encoding, newline="")


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, fsync: bool = True) -> None:
    """Replace `path` with `data` at once: a 0600 temporary file beside it (mkstemp creates it
    so), flushed, then renamed over the old one. Readers see the old text or the new, whole."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def tighten(root: str | os.PathLike[str]) -> int:
    """Narrow an existing state folder: every folder 0700, every file 0600 (group and other bits
    cleared, the owner's kept: a program stays 0700). Symlinks are left alone. Returns how many
    entries changed."""
    changed = 0
    top = Path(root)
    if not top.is_dir() or top.is_symlink():
        return 0
    # os.walk does not descend into symlinked folders; it visits every real one as `folder`.
    for folder, _dirs, files in os.walk(top, followlinks=False):
        changed += _narrow(folder, DIR_MODE)
        for name in files:
            changed += _narrow(os.path.join(folder, name), FILE_MODE)
    if changed:
        log.info("state at %s was readable by others: %d entries made private", top, changed)
    return changed


def _narrow(path: str, wanted: int) -> int:
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    if stat.S_ISLNK(info.st_mode):
        return 0
    mode = stat.S_IMODE(info.st_mode)
    # The owner's execute bit stays: a program acpls keeps (a node shim, an installed agent)
    # must still run for its owner.
    narrowed = mode & (wanted | stat.S_IXUSR)
    if narrowed == mode:
        return 0
    try:
        os.chmod(path, narrowed, follow_symlinks=False)
    except (OSError, NotImplementedError):
        # Linux cannot chmod without following links; the lstat above says this is no link.
        try:
            os.chmod(path, narrowed)
        except OSError as exc:
            log.warning("cannot make %s private: %s", path, exc)
            return 0
    return 1
