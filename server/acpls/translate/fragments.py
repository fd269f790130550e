"""Where a v1 diff's texts sit in a file: whole files or fragments, placed or not.

A v1 diff item is `{path, oldText, newText}`. ACP meant both texts to be whole files, but real
adapters (Claude Code, OpenCode, Copilot CLI; Codex with a few lines of context) send only the
replaced region: an `Edit{old_string, new_string}` goes out as it is. Taking such an `oldText` for
the whole file loses the user's file (a preview with no edit, a review baseline that is one line,
a reject that writes that line over the file). So a v1 diff is placed in the file's current text
before anything is made from it (editor contract section 6):

- the file's text equals `oldText`: the agent's edit has not happened yet (a whole-file diff);
- the file's text equals `newText`: it has happened (a whole-file diff, already written);
- `oldText` occurs exactly once and `newText` does not: not happened yet, at that place;
- `newText` occurs exactly once and `oldText` does not: happened, at that place;
- anything else (neither found, either found more than once, both found): the diff cannot be
  placed, and nothing (no preview edit, no review baseline, no write) is made from it.

A file with CRLF line ends is often described with LF-only texts (agents normalise what they
read, and write the file's own line ends back). When every line of the file ends in `\r\n` and
neither diff text has a `\r`, both texts are read with the file's line ends before they are
placed; a diff that still cannot be placed stays unplaced, as above. A file with mixed line ends
is never converted.

Occurrences are counted overlapping (`aa` occurs twice in `aaa`), and an empty text is never
placed by search (it occurs everywhere), only by the whole-file comparison.

Pure: strings in, a `Placement` out.
"""

from __future__ import annotations

from typing import Literal

import attrs

When = Literal["before", "after"]
"""`before`: the file holds the agent's pre-image (the edit is still to come); `after`: it holds
the post-image (the agent already wrote it)."""


@attrs.frozen
class Placement:
    """A v1 diff placed in a file: the file's whole text before and after the agent's edit."""

    when: When
    pre_image: str
    post_image: str
    start: int
    """Index in the current text where the placed fragment (old or new text) begins."""
    whole_file: bool


@attrs.frozen
class Unplaced:
    """A v1 diff that cannot be placed in the file; `reason` says why, for the user."""

    reason: str


def occurrences(text: str, needle: str, limit: int = 2) -> list[int]:
    """Start indexes of `needle` in `text`, overlapping ones included, at most `limit` of them.
    An empty needle is reported as found `limit` times (it occurs everywhere)."""
    if not needle:
        return [0] * limit
    found: list[int] = []
    index = text.find(needle)
    while index >= 0 and len(found) < limit:
        found.append(index)
        index = text.find(needle, index + 1)
    return found


def place_v1_diff(current: str, old_text: str, new_text: str) -> Placement | Unplaced:
    """Place a v1 diff's texts in the file's current text (see the module docstring)."""
    placed = _place(current, old_text, new_text)
    if isinstance(placed, Unplaced) and _describes_crlf_with_lf(current, old_text, new_text):
        crlf = _place(current, _to_crlf(old_text), _to_crlf(new_text))
        if isinstance(crlf, Placement):
            return crlf
    return placed


def _describes_crlf_with_lf(current: str, old_text: str, new_text: str) -> bool:
    """A file whose every line ends in CRLF, and texts with no CR at all, neither of them in the
    file as it is. A file with mixed line ends is never converted: its LF lines may be
    exactly what the agent wrote."""
    if "\r" in old_text or "\r" in new_text or not old_text:
        return False
    if old_text in current or (new_text and new_text in current):
        return False
    crlf = current.count("\r\n")
    return crlf > 0 and crlf == current.count("\n")


def _to_crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def _place(current: str, old_text: str, new_text: str) -> Placement | Unplaced:
    if current == old_text:
        return Placement("before", current, new_text, 0, whole_file=True)
    if current == new_text:
        return Placement("after", old_text, current, 0, whole_file=True)
    olds = occurrences(current, old_text)
    news = occurrences(current, new_text)
    if old_text == new_text and len(olds) == 1:
        return Placement("before", current, current, olds[0], whole_file=False)  # a no-op
    if len(olds) == 1 and not news:
        start = olds[0]
        post = current[:start] + new_text + current[start + len(old_text) :]
        return Placement("before", current, post, start, whole_file=False)
    if len(news) == 1 and not olds:
        start = news[0]
        pre = current[:start] + old_text + current[start + len(new_text) :]
        return Placement("after", pre, current, start, whole_file=False)
    return Unplaced(_why_unplaced(len(olds), len(news)))


def _why_unplaced(olds: int, news: int) -> str:
    if not olds and not news:
        return "neither its old nor its new text is in the file"
    if olds and news:
        return "both its old and its new text are in the file, so acpls cannot tell where it goes"
    which = "old" if olds else "new"
    return f"its {which} text occurs more than once in the file"
