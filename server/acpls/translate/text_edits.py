"""Whole-line text edits between two versions of a document, in LSP coordinates.

Lines are split the way LSP splits them (`\\n`, `\\r\\n` and a lone `\\r` all end a line) and
columns count UTF-16 code units, so the ranges produced here mean the same thing to the editor.
Every line keeps its own terminator, which is how CRLF files and a last line without a newline
come out exactly.  Edits are plain JSON-shaped dicts (`{"range", "newText"}`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

import attrs

# A line with its terminator, or a final line without one.  `\r\n` is tried before a lone `\r`.
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

Position = dict[str, int]
TextEdit = dict[str, Any]


@attrs.frozen
class LineHunk:
    """One changed block: `old_lines` lines at `old_start` in old became `new_lines` at `new_start`.

    Line numbers are 0-based (LSP).  `old_text`/`new_text` are the block's full lines, terminators
    included.  A pure insertion has `old_lines == 0` and `old_start` = the line it goes before.
    """

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    old_text: str
    new_text: str


def split_lines(text: str) -> list[str]:
    """Split into LSP lines, each keeping its terminator.  `""` has no lines."""
    return _LINE_RE.findall(text)


def utf16_len(s: str) -> int:
    """Length of `s` in UTF-16 code units (what LSP columns count)."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _strip_terminator(line: str) -> str:
    return line.rstrip("\r\n")


# Gaps without a line unique to both sides are left to difflib, which is quadratic on lines that
# repeat (blank lines, `}`); above this many line pairs it may junk popular lines instead.
_EXACT_GAP_LIMIT = 250_000

Block = tuple[int, int, int, int]
"""(i1, i2, j1, j2): old lines [i1, i2) became new lines [j1, j2)."""


def _unique_anchors(
    a: Sequence[str], alo: int, ahi: int, b: Sequence[str], blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Pairs of lines occurring once in each range, the longest run increasing on both sides."""
    seen_a: dict[str, int] = {}
    for i in range(alo, ahi):
        seen_a[a[i]] = -1 if a[i] in seen_a else i
    seen_b: dict[str, int] = {}
    for j in range(blo, bhi):
        if seen_a.get(b[j], -1) >= 0:
            seen_b[b[j]] = -1 if b[j] in seen_b else j
    pairs = sorted((seen_a[line], j) for line, j in seen_b.items() if j >= 0)
    return _longest_increasing_by_second(pairs)


def _longest_increasing_by_second(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Patience sorting: the longest run of `pairs` (sorted by first) increasing in second."""
    tails: list[int] = []  # tails[k]: index into pairs ending the best run of length k+1
    previous: list[int] = [-1] * len(pairs)
    tail_values: list[int] = []
    for index, (_i, j) in enumerate(pairs):
        k = bisect_left(tail_values, j)
        if k > 0:
            previous[index] = tails[k - 1]
        if k == len(tails):
            tails.append(index)
            tail_values.append(j)
        else:
            tails[k], tail_values[k] = index, j
    run: list[tuple[int, int]] = []
    index = tails[-1] if tails else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    run.reverse()
    return run


def _gap_blocks(
    a: Sequence[str], alo: int, ahi: int, b: Sequence[str], blo: int, bhi: int
) -> list[Block]:
    """Changed blocks of a gap that has no unique anchor line, by difflib."""
    exact = (ahi - alo) * (bhi - blo) <= _EXACT_GAP_LIMIT
    matcher = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=not exact)
    return [
        (alo + i1, alo + i2, blo + j1, blo + j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def changed_blocks(a: Sequence[str], b: Sequence[str]) -> list[Block]:
    """The non-equal blocks between line lists `a` and `b`, in order, never two adjacent.

    A patience diff (as git's): common ends are trimmed, lines unique to both sides anchor the
    match, and the gaps between anchors are diffed the same way.  It stays fast on long files
    full of repeated lines, where difflib alone is quadratic.
    """
    blocks: list[Block] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
        if alo == ahi or blo == bhi:
            if alo < ahi or blo < bhi:
                blocks.append((alo, ahi, blo, bhi))
            continue
        anchors = _unique_anchors(a, alo, ahi, b, blo, bhi)
        if not anchors:
            blocks.extend(_gap_blocks(a, alo, ahi, b, blo, bhi))
            continue
        gaps: list[Block] = []
        for i, j in anchors:
            gaps.append((alo, i, blo, j))
            alo, blo = i + 1, j + 1
        gaps.append((alo, ahi, blo, bhi))
        stack.extend(reversed(gaps))  # popped left to right, so blocks come out in order
    return blocks


def diff_hunks(old: str, new: str) -> list[LineHunk]:
    """The changed line blocks between `old` and `new`, in order."""
    old_lines, new_lines = split_lines(old), split_lines(new)
    return [
        LineHunk(
            old_start=i1,
            old_lines=i2 - i1,
            new_start=j1,
            new_lines=j2 - j1,
            old_text="".join(old_lines[i1:i2]),
            new_text="".join(new_lines[j1:j2]),
        )
        for i1, i2, j1, j2 in changed_blocks(old_lines, new_lines)
    ]


def line_counts(old: str, new: str) -> tuple[int, int]:
    """(added, removed) line counts between `old` and `new`."""
    added = removed = 0
    for i1, i2, j1, j2 in changed_blocks(split_lines(old), split_lines(new)):
        added += j2 - j1
        removed += i2 - i1
    return added, removed


def _line_start_position(lines: Sequence[str], index: int) -> Position:
    """Position of the start of line `index`; past the last line it is the end of the document.

    The end of a document whose last line has no terminator is on that line, after its text; a
    position on a line that does not exist is not something every editor accepts.
    """
    if index < len(lines):
        return {"line": index, "character": 0}
    if not lines:
        return {"line": 0, "character": 0}
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return {"line": len(lines), "character": 0}
    return {"line": len(lines) - 1, "character": utf16_len(last)}


def minimal_line_edits(old: str, new: str) -> list[TextEdit]:
    """Whole-line replacements turning `old` into `new`, ranges relative to `old`, in order.

    The edits do not overlap; applying them all (as LSP does, against the original text) gives
    `new` exactly.
    """
    old_lines, new_lines = split_lines(old), split_lines(new)
    return [
        {
            "range": {
                "start": _line_start_position(old_lines, i1),
                "end": _line_start_position(old_lines, i2),
            },
            "newText": "".join(new_lines[j1:j2]),
        }
        for i1, i2, j1, j2 in changed_blocks(old_lines, new_lines)
    ]


def _utf16_column_to_index(line: str, column: int) -> int:
    """Index into `line` (text without terminator) of UTF-16 `column`, clamped to the line end."""
    units = 0
    for index, char in enumerate(line):
        if units >= column:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def _line_offsets(lines: Sequence[str]) -> list[int]:
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


def position_to_offset(
    lines: Sequence[str], offsets: Sequence[int], position: Mapping[str, Any]
) -> int:
    """String index of an LSP position, clamped like LSP says (to the line end, to the text end)."""
    line, character = int(position["line"]), int(position["character"])
    if line < 0 or character < 0:
        raise ValueError(f"negative position: {dict(position)}")
    if line >= len(lines):
        return offsets[-1]
    text = _strip_terminator(lines[line])
    return offsets[line] + _utf16_column_to_index(text, character)


def apply_text_edits(text: str, edits: Iterable[Mapping[str, Any]]) -> str:
    """Apply LSP TextEdits (ranges relative to `text`) and return the result.

    Raises ValueError when two edits overlap (LSP forbids it).  Edits inserting at the same
    position are applied in the order given.
    """
    lines = split_lines(text)
    offsets = _line_offsets(lines)
    spans: list[tuple[int, int, int, str]] = []
    for order, edit in enumerate(edits):
        start = position_to_offset(lines, offsets, edit["range"]["start"])
        end = position_to_offset(lines, offsets, edit["range"]["end"])
        if end < start:
            raise ValueError(f"edit range ends before it starts: {edit['range']}")
        spans.append((start, end, order, str(edit["newText"])))
    spans.sort()
    pieces: list[str] = []
    cursor = 0
    for start, end, _order, new_text in spans:
        if start < cursor:
            raise ValueError("overlapping text edits")
        pieces.append(text[cursor:start])
        pieces.append(new_text)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
