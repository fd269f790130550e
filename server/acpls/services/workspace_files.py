"""The workspace's files as `git` sees them (tracked and untracked, .gitignore respected), for
@-mention completion; outside a git repository, a walk that skips hidden directories."""

from __future__ import annotations

import asyncio
import logging
import os

logger = logging.getLogger(__name__)

# A walk outside git stops after this many files (completion must stay quick in a huge folder).
WALK_LIMIT = 20_000
GIT_TIMEOUT_S = 5.0


async def workspace_files(root: str) -> list[str]:
    """Paths relative to `root`, slash-separated."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "-z",
            cwd=root,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError as exc:
        logger.debug("git ls-files cannot run in %s: %s", root, exc)
        return _walk(root)
    try:
        out, _ = await asyncio.wait_for(process.communicate(), GIT_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        return _walk(root)
    if process.returncode != 0:
        return _walk(root)
    names = out.decode("utf-8", "replace").split("\0")
    return sorted({n for n in names if n})


def _walk(root: str) -> list[str]:
    found: list[str] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith(".")]
        for name in files:
            found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
            if len(found) >= WALK_LIMIT:
                return sorted(found)
    return sorted(found)
