"""The lines an LSP range covers, for context and @-mentions that name a part of a file (the
prompt's context items in core/routing.py, `@file:PATH#Lx-y` mentions in core/mentions.py)."""

from __future__ import annotations

from typing import Any


def line_span(selection: dict[str, Any]) -> tuple[int, int]:
    """The first and last line a range covers: an end at character 0 of a later line stops
    before that line."""
    start = selection["start"]["line"]
    end = selection["end"]["line"]
    if selection["end"].get("character", 0) == 0 and end > start:
        end -= 1
    return start, end


def slice_lines(text: str, selection: dict[str, Any]) -> str:
    start, end = line_span(selection)
    return "".join(text.splitlines(keepends=True)[start : end + 1])
