"""Where the agent may read and write: the workspace folders, extra allowed roots, and paths the
user approved for one session.

A path is judged after resolving `..` and symlinks, so `/ws/link/secret` where `link` points to
`/etc` is outside. A path that does not exist yet is resolved through its deepest existing ancestor
(`os.path.realpath` does exactly that on POSIX), so a new file under a symlinked directory is judged
by where it would really be written. Nothing is expanded: `~/x` is a relative path, and relative
paths are refused (ACP requires absolute paths).

Reading the file system to resolve symlinks is the one impurity here; nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import attrs

from acpls.translate.uris import uri_to_path


class InvalidPath(ValueError):
    """A path or URI the agent may not use at all (relative, `~`, NUL, not `file:`); -32602."""


@attrs.frozen
class PathDecision:
    """The verdict on one path: `inside` a root (workspace or allowed extra) or outside."""

    path: str
    resolved: str
    inside: bool
    root: str | None
    # The resolved path as the editor names it: below the root as the editor gave it (a root
    # reached through a symlink, a home folder on another disk, keeps its name), so the
    # editor's buffer of it is found and no second copy is opened. Outside: `resolved`.
    usable: str = ""

    @property
    def outside(self) -> bool:
        return not self.inside


class PathPolicy:
    """Roots the agent may use, and each session's memory of user-approved outside paths."""

    def __init__(self, roots: Iterable[str], allowed_extra: Iterable[str] = ()) -> None:
        self._roots: tuple[str, ...] = ()
        self._named: dict[str, str] = {}  # resolved root -> the root as the editor named it
        self._approved: dict[str, set[str]] = {}
        self.set_roots(roots, allowed_extra)

    @property
    def roots(self) -> tuple[str, ...]:
        return self._roots

    @property
    def editor_roots(self) -> tuple[str, ...]:
        """The roots as the editor (or the setting) named them, unresolved."""
        return tuple(self._named.values())

    def set_roots(self, roots: Iterable[str], allowed_extra: Iterable[str] = ()) -> None:
        """Replace the roots (workspace folders changed, or the `files.allowedRoots` setting)."""
        resolved: list[str] = []
        named: dict[str, str] = {}
        for root in (*roots, *allowed_extra):
            real = resolve(root)
            if real not in resolved:
                resolved.append(real)
                named[real] = os.path.normpath(root)
        self._roots = tuple(resolved)
        self._named = named

    def check(self, path: str) -> PathDecision:
        """Judge an absolute path. Raises InvalidPath for anything else."""
        real = resolve(path)
        root = next((r for r in self._roots if _is_within(real, r)), None)
        usable = real if root is None else self._named.get(root, root) + real[len(root) :]
        return PathDecision(
            path=path, resolved=real, inside=root is not None, root=root, usable=usable
        )

    def check_uri(self, uri: str) -> PathDecision:
        """Judge a `file:` URI; any other scheme (or a remote host) is InvalidPath."""
        try:
            path = uri_to_path(uri)
        except ValueError as exc:
            raise InvalidPath(str(exc)) from exc
        return self.check(path)

    def allowed(self, session_id: str, path: str) -> bool:
        """Inside a root, or approved by the user for this session."""
        decision = self.check(path)
        return decision.inside or decision.resolved in self._approved.get(session_id, ())

    def approve(self, session_id: str, path: str) -> None:
        """Remember that the user let this session use this outside path."""
        self._approved.setdefault(session_id, set()).add(resolve(path))

    def is_approved(self, session_id: str, path: str) -> bool:
        return resolve(path) in self._approved.get(session_id, ())

    def forget_session(self, session_id: str) -> None:
        self._approved.pop(session_id, None)


def resolve(path: str) -> str:
    """The real absolute path, with `..` and symlinks resolved. Raises InvalidPath."""
    if not isinstance(path, str) or not path:
        raise InvalidPath("path must be a non-empty string")
    if "\0" in path:
        raise InvalidPath(f"path contains a NUL byte: {path!r}")
    if path.startswith("~"):
        raise InvalidPath(f"path must be absolute; '~' is not expanded: {path!r}")
    if not os.path.isabs(path):
        raise InvalidPath(f"path must be absolute: {path!r}")
    return os.path.realpath(path)


def _is_within(path: str, root: str) -> bool:
    if root == os.sep:
        return True
    return path == root or path.startswith(root + os.sep)
