"""Helpers for the checkpoint tests: an editor that applies edits to disk (as one that saves does),
and exact pictures of a folder and of its git repository, to compare before and after."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

from acpls.translate.text_edits import apply_text_edits
from acpls.translate.uris import uri_to_path


def apply_on_disk(edit: dict[str, Any], buffers: dict[str, str] | None = None) -> None:
    """Apply a WorkspaceEdit (JSON) to the files, or to `buffers` (path → text) for open ones."""
    buffers = buffers if buffers is not None else {}
    for change in edit.get("documentChanges") or []:
        kind = change.get("kind")
        if kind == "create":
            path = uri_to_path(change["uri"])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if not os.path.exists(path):
                Path(path).write_bytes(b"")
        elif kind == "delete":
            path = uri_to_path(change["uri"])
            if os.path.lexists(path):
                os.unlink(path)
            buffers.pop(path, None)
        elif kind == "rename":
            old, new = uri_to_path(change["oldUri"]), uri_to_path(change["newUri"])
            os.makedirs(os.path.dirname(new), exist_ok=True)
            os.rename(old, new)
            if old in buffers:
                buffers[new] = buffers.pop(old)
        else:
            path = uri_to_path(change["textDocument"]["uri"])
            if path in buffers:
                buffers[path] = apply_text_edits(buffers[path], change["edits"])
                continue
            text = Path(path).read_bytes().decode("utf-8")
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(apply_text_edits(text, change["edits"]))


def folder_state(root: Path) -> dict[str, tuple[str, str]]:
    """Every file under `root` except `.git`: kind and mode, and content (or link target)."""
    out: dict[str, tuple[str, str]] = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            else:
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                out[rel] = (f"file {stat.S_IMODE(st.st_mode) & 0o111:o}", digest)
    return out


def git(root: Path, *args: str) -> str:
    # No optional locks: the test's own `git status` must not refresh the index it compares.
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env
    ).stdout


def git_state(root: Path) -> dict[str, Any]:
    """The repository state a checkpoint must never touch."""
    git_dir = root / ".git"
    listing = sorted(
        (str(p.relative_to(git_dir)), p.stat().st_size)
        for p in git_dir.rglob("*")
        if p.is_file() and p.name != "index"
    )
    index = hashlib.sha256((git_dir / "index").read_bytes()).hexdigest()
    return {
        "index": index,
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "stash": git(root, "stash", "list"),
        "refs": git(root, "for-each-ref"),
        "config": (git_dir / "config").read_text(),
        "files": listing,
    }


def make_repo(root: Path) -> None:
    """A repository with a commit, a stash, staged and unstaged changes and an ignored file."""
    env_args = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("ignored.log\n")
    git(root, "add", "-A")
    git(root, *env_args, "commit", "-q", "-m", "first")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b  # stashed\n")
    git(root, *env_args, "stash", "-q")
    (root / "README.md").write_text("# sample, staged\n")
    git(root, "add", "README.md")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b  # unstaged\n")
    (root / "ignored.log").write_text("ignored\n")
