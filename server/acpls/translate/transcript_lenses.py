"""Code lenses on a session's transcript (generic mode): on each of the user's prompts, "Restore
files to before this turn" and "Continue from here", for the turns that have a checkpoint.

Pure: the transcript's text and the session's checkpoints in, LSP-shaped lenses out (plain dicts).
The k-th prompt of the transcript is turn k of its session, as checkpoints count them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

USER_LABEL = "**You:**"


def prompt_lines(text: str) -> list[int]:
    """The line of each of the user's prompts, in order."""
    return [n for n, line in enumerate(text.split("\n")) if line.startswith(USER_LABEL)]


def lenses(text: str, checkpoints: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    by_turn = {c["turn"]: c for c in checkpoints if isinstance(c.get("turn"), int)}
    found: list[dict[str, Any]] = []
    for turn, line in enumerate(prompt_lines(text), start=1):
        checkpoint = by_turn.get(turn)
        if checkpoint is None:
            continue
        where = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}
        count = len(checkpoint.get("files") or [])
        restore = f"↺ Restore files to before turn {turn}"
        if count:
            restore += f" ({count} changed)"
        found.append(_lens(where, restore, "acpls.restoreCheckpoint", checkpoint["id"]))
        found.append(
            _lens(where, "Continue from here", "acpls.continueFromCheckpoint", checkpoint["id"])
        )
    return found


def _lens(where: dict[str, Any], title: str, command: str, checkpoint_id: str) -> dict[str, Any]:
    return {
        "range": where,
        "command": {"title": title, "command": command, "arguments": [{"id": checkpoint_id}]},
    }
