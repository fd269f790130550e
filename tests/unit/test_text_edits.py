"""Whole-line LSP edits (acpls.translate.text_edits)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acpls.translate.text_edits import (
    LineHunk,
    apply_text_edits,
    changed_blocks,
    diff_hunks,
    line_counts,
    minimal_line_edits,
    split_lines,
    utf16_len,
)


def rng(sl: int, sc: int, el: int, ec: int) -> dict[str, dict[str, int]]:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def test_split_lines_follows_lsp_line_ends():
    assert split_lines("") == []
    assert split_lines("a") == ["a"]
    assert split_lines("a\nb\r\nc\rd") == ["a\n", "b\r\n", "c\r", "d"]
    assert split_lines("a\n") == ["a\n"]
    # Characters Python's str.splitlines treats as line breaks are not LSP line ends.
    assert split_lines("a\u2028b\x0cc\x85d\n") == ["a\u2028b\x0cc\x85d\n"]


def test_utf16_len_counts_astral_characters_twice():
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("é€") == 2
    assert utf16_len("😀x") == 3


def test_replace_one_line_in_the_middle():
    edits = minimal_line_edits("a\nb\nc\n", "a\nB\nc\n")
    assert edits == [{"range": rng(1, 0, 2, 0), "newText": "B\n"}]


def test_insert_and_delete_are_empty_ranges_or_empty_text():
    assert minimal_line_edits("a\nc\n", "a\nb\nc\n") == [
        {"range": rng(1, 0, 1, 0), "newText": "b\n"}
    ]
    assert minimal_line_edits("a\nb\nc\n", "a\nc\n") == [{"range": rng(1, 0, 2, 0), "newText": ""}]


def test_no_change_means_no_edits():
    assert minimal_line_edits("same\r\n", "same\r\n") == []
    assert minimal_line_edits("", "") == []


def test_last_line_without_newline_is_addressed_by_its_end_column():
    # "b😀" has no line after it: the range ends at its end, in UTF-16 units.
    edits = minimal_line_edits("a\nb😀", "a\nc")
    assert edits == [{"range": rng(1, 0, 1, 3), "newText": "c"}]
    assert apply_text_edits("a\nb😀", edits) == "a\nc"


def test_appending_after_a_final_newline_uses_the_empty_last_line():
    edits = minimal_line_edits("a\n", "a\nb")
    assert edits == [{"range": rng(1, 0, 1, 0), "newText": "b"}]


def test_adding_a_final_newline_replaces_the_last_line():
    edits = minimal_line_edits("a\nb", "a\nb\n")
    assert edits == [{"range": rng(1, 0, 1, 1), "newText": "b\n"}]
    assert apply_text_edits("a\nb", edits) == "a\nb\n"


def test_new_file_is_one_insertion_at_the_start():
    assert minimal_line_edits("", "x\ny") == [{"range": rng(0, 0, 0, 0), "newText": "x\ny"}]


def test_crlf_to_lf_is_a_change_of_every_line():
    edits = minimal_line_edits("a\r\nb\r\n", "a\nb\n")
    assert edits == [{"range": rng(0, 0, 2, 0), "newText": "a\nb\n"}]


def test_edits_are_minimal_blocks_in_order():
    old = "".join(f"{n}\n" for n in range(10))
    new = old.replace("2\n", "two\n").replace("7\n", "")
    edits = minimal_line_edits(old, new)
    assert [edit["range"] for edit in edits] == [rng(2, 0, 3, 0), rng(7, 0, 8, 0)]
    assert apply_text_edits(old, edits) == new


def test_apply_text_edits_clamps_like_lsp_and_rejects_overlaps():
    assert apply_text_edits("ab\ncd", [{"range": rng(0, 99, 1, 0), "newText": "-"}]) == "ab-cd"
    assert apply_text_edits("ab", [{"range": rng(5, 0, 9, 0), "newText": "!"}]) == "ab!"
    # UTF-16 column 2 is after the emoji, which is one Python character
    assert apply_text_edits("😀x", [{"range": rng(0, 2, 0, 3), "newText": "y"}]) == "😀y"
    overlapping = [
        {"range": rng(0, 0, 0, 2), "newText": "x"},
        {"range": rng(0, 1, 0, 3), "newText": "y"},
    ]
    with pytest.raises(ValueError, match="overlapping"):
        apply_text_edits("abcd", overlapping)
    with pytest.raises(ValueError, match="ends before"):
        apply_text_edits("abcd", [{"range": rng(0, 3, 0, 1), "newText": ""}])


def test_insertions_at_one_place_keep_their_order():
    edits = [
        {"range": rng(0, 1, 0, 1), "newText": "1"},
        {"range": rng(0, 1, 0, 1), "newText": "2"},
    ]
    assert apply_text_edits("ab", edits) == "a12b"


def test_line_counts_and_hunks():
    old = "a\nb\nc\nd\n"
    new = "a\nB\nc\nd\ne\n"
    assert line_counts(old, new) == (2, 1)
    assert diff_hunks(old, new) == [
        LineHunk(
            old_start=1, old_lines=1, new_start=1, new_lines=1, old_text="b\n", new_text="B\n"
        ),
        LineHunk(old_start=4, old_lines=0, new_start=4, new_lines=1, old_text="", new_text="e\n"),
    ]
    assert line_counts("", "x\ny") == (2, 0)
    assert line_counts("x\n", "") == (0, 1)


def test_autojunk_does_not_inflate_edits_of_long_files():
    # difflib's autojunk would treat the frequent "}" line as junk in a file over 200 lines.
    old = "".join(f"f{n}() {{\n}}\n" for n in range(300))
    new = old.replace("f150() {\n", "g150() {\n")
    edits = minimal_line_edits(old, new)
    assert edits == [{"range": rng(300, 0, 301, 0), "newText": "g150() {\n"}]


# ---------------------------------------------------------------------------------------------
# Round trips

line_body = st.text(alphabet=st.sampled_from(["a", "b", " ", "é", "😀", "\t"]), max_size=4)
line_end = st.sampled_from(["\n", "\n", "\r\n", "\r"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.tuples(line_body, line_end), max_size=10))
    text = "".join(body + end for body, end in lines)
    if draw(st.booleans()):
        text += draw(line_body)  # a last line without a line end
    return text


@st.composite
def document_pairs(draw: st.DrawFn) -> tuple[str, str]:
    old = draw(documents())
    if draw(st.booleans()):
        return old, draw(documents())
    lines = split_lines(old)
    new_lines: list[str] = []
    for line in lines:
        choice = draw(st.sampled_from(["keep", "keep", "drop", "edit", "add"]))
        if choice != "drop":
            new_lines.append(line if choice != "edit" else draw(line_body) + draw(line_end))
        if choice == "add":
            new_lines.append(draw(line_body) + draw(line_end))
    return old, "".join(new_lines) + draw(st.sampled_from(["", "tail", "\n"]))


@settings(max_examples=300, deadline=None)
@given(document_pairs())
def test_minimal_line_edits_round_trip(pair: tuple[str, str]):
    old, new = pair
    edits = minimal_line_edits(old, new)
    assert apply_text_edits(old, edits) == new
    # Applying them one at a time from the last one back, as the brief's editors may, agrees.
    text = old
    for edit in reversed(edits):
        text = apply_text_edits(text, [edit])
    assert text == new
    for edit in edits:  # whole lines: every range starts at a line start
        assert edit["range"]["start"]["character"] == 0


@settings(max_examples=200, deadline=None)
@given(document_pairs())
def test_hunks_describe_the_same_change_as_the_edits(pair: tuple[str, str]):
    old, new = pair
    hunks = diff_hunks(old, new)
    assert [hunk.new_text for hunk in hunks] == [e["newText"] for e in minimal_line_edits(old, new)]
    assert line_counts(old, new) == (
        sum(hunk.new_lines for hunk in hunks),
        sum(hunk.old_lines for hunk in hunks),
    )
    # Rebuild new from old and the hunks alone.
    old_lines, rebuilt, cursor = split_lines(old), [], 0
    for hunk in hunks:
        rebuilt.extend(old_lines[cursor : hunk.old_start])
        rebuilt.append(hunk.new_text)
        assert "".join(old_lines[hunk.old_start : hunk.old_start + hunk.old_lines]) == hunk.old_text
        cursor = hunk.old_start + hunk.old_lines
    rebuilt.extend(old_lines[cursor:])
    assert "".join(rebuilt) == new


def test_long_file_of_repeated_lines_stays_fast_and_minimal():
    # difflib alone takes many seconds here (blank lines and braces repeat thousands of times).
    old = "".join(("\n", "}\n", f"x{n} = {n}\n")[n % 3] for n in range(20_000))
    new_lines = split_lines(old)
    new_lines[10_001] = "changed\n"
    new_lines[15_000:15_000] = ["inserted\n", "\n"]
    new = "".join(new_lines)
    started = time.perf_counter()
    edits = minimal_line_edits(old, new)
    assert time.perf_counter() - started < 5
    assert [edit["range"]["start"]["line"] for edit in edits] == [10_001, 15_000]
    assert apply_text_edits(old, edits) == new


def test_changed_blocks_without_unique_lines_fall_back_to_difflib():
    a = ["}\n", "\n", "}\n", "\n"]
    b = ["}\n", "\n", "\n", "}\n", "\n"]
    blocks = changed_blocks(a, b)
    assert sum(j2 - j1 for _i1, _i2, j1, j2 in blocks) == 1
    assert sum(i2 - i1 for i1, i2, _j1, _j2 in blocks) == 0
