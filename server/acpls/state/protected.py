"""Places where a write is always put to the user: files that make something run code, acpls' own
rules and settings, anything outside the workspace, and what `files.alwaysAsk` adds.

A write there is never answered by a remembered rule or `permissions.autoApprove`, and an
fs/write_text_file there is asked about every time: an agent that may edit the workspace must not
be able to plant a git hook, point git at a command, change what the editor runs when the folder
is opened, or rewrite acpls' rules into "allow everything".

The decision is pure: it is given the path (resolved by the caller; the caller also asks about the
path as named, so a link *named* `.git/hooks/x` counts too), the workspace roots (resolved), acpls'
own folders and the user's globs. Names are compared without regard to case: on a file system
that ignores case, `.GIT/hooks` is the hooks folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

import attrs

OUTSIDE = "it is outside the workspace"
OWN_STATE = "it holds acpls' own rules and settings (an agent could allow itself anything)"
GIT_HOOKS = "writes to .git/hooks run code on your machine (git runs them)"
GIT_CONFIG = "git's config can make git run any command"
GIT_OTHER = "git's own files (.git) can make git run code or rewrite history"
EDITOR_CONFIG = "the editor's project settings can run code when the folder is opened"
ENVRC = "direnv runs .envrc when you enter the folder"

# (glob relative to a workspace root, why a write there is asked): the first that matches wins.
# A glob matches a path or any folder above it, so `**/.git` covers everything inside `.git`.
BUILT_IN: tuple[tuple[str, str], ...] = (
    ("**/.git/hooks", GIT_HOOKS),
    ("**/.git/config", GIT_CONFIG),
    ("**/.git", GIT_OTHER),
    ("**/.vscode", EDITOR_CONFIG),
    ("**/.helix", EDITOR_CONFIG),
    ("**/.nvim.lua", EDITOR_CONFIG),
    ("**/.nvimrc", EDITOR_CONFIG),
    ("**/.exrc", EDITOR_CONFIG),
    ("**/.dir-locals.el", EDITOR_CONFIG),
    ("**/.dir-locals-2.el", EDITOR_CONFIG),
    ("**/.envrc", ENVRC),
)


@attrs.frozen
class Protection:
    """Why a write to a path is always asked about (`reason` is shown to the user)."""

    reason: str


def protection(
    path: str,
    roots: Sequence[str],
    own_dirs: Iterable[str] = (),
    always_ask: Iterable[str] = (),
) -> Protection | None:
    """Why writing `path` (absolute, normalised) must be asked about, or None when a rule or a
    setting may answer. `roots` are the workspace folders and allowed roots, `own_dirs` acpls'
    state and config folders, `always_ask` the user's globs (relative to a root, or absolute)."""
    for own in own_dirs:
        if _is_within(path, own):
            return Protection(OWN_STATE)
    absolute = [g for g in always_ask if g.startswith("/")]
    for pattern in absolute:
        if _matches(pattern, path):
            return Protection(_setting_reason(pattern))
    root = next((r for r in roots if _is_within(path, r)), None)
    if root is None:
        return Protection(OUTSIDE)
    relative = os.path.relpath(path, root) if path != root else "."
    for pattern, reason in BUILT_IN:
        if _matches(pattern, relative):
            return Protection(reason)
    for pattern in always_ask:
        if not pattern.startswith("/") and _matches(pattern, relative):
            return Protection(_setting_reason(pattern))
    return None


def valid_glob(pattern: str) -> bool:
    """A `files.alwaysAsk` entry acpls can use: a non-empty glob, absolute or relative (no `~`,
    no `..`)."""
    parts = pattern.split("/")
    return bool(pattern.strip()) and not pattern.startswith("~") and ".." not in parts


def _setting_reason(pattern: str) -> str:
    return f"it matches {pattern!r} in files.alwaysAsk"


def _matches(pattern: str, path: str) -> bool:
    """`path` or a folder above it matches the glob (`*` and `?` within one name, `**` any
    number of names)."""
    regex = _compiled(pattern)
    probe = path
    while True:
        if regex.fullmatch(probe):
            return True
        parent = os.path.dirname(probe)
        if not parent or parent == probe:
            return False
        probe = parent


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    pattern = pattern.rstrip("/") or "/"
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def _is_within(path: str, folder: str) -> bool:
    if folder == os.sep:
        return True
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
