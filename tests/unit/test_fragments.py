"""v1 diffs whose texts are fragments (Claude Code, OpenCode, Copilot, Codex): placed in the file,
or not used at all (translate/fragments.py, translate/diffs.py, editor contract section 6)."""

from __future__ import annotations

from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from acpls.translate.diffs import workspace_edit_from_content
from acpls.translate.fragments import Placement, Unplaced, occurrences, place_v1_diff
from acpls.translate.text_edits import apply_text_edits

PATH = "/ws/shop.py"
SHOP = (
    "def price(item):\n"
    "    return item.cost\n"
    "\n"
    "def total(items):\n"
    "    return sum(price(i) for i in items)\n"
)

LINES = st.sampled_from(["x = 1", "y = 2", "", "é", "🦀 crab", "  indented", "}", "x = 1"])
FILES = st.lists(LINES, min_size=1, max_size=12).flatmap(
    lambda lines: st.sampled_from(["\n", "\r\n"]).map(
        lambda eol: "".join(line + eol for line in lines)
    )
)
NEW_TEXTS = st.text(alphabet=st.sampled_from("abz\n é🦀"), max_size=30)


def preview(text: str | None, old: str | None, new: str) -> Any:
    item: dict[str, Any] = {"type": "diff", "path": PATH, "oldText": old, "newText": new}
    files = {} if text is None else {PATH: text}
    result = workspace_edit_from_content([item], files.get)
    assert result is not None
    return result


def applied(result: Any, text: str) -> str:
    edits = [
        e
        for change in result.edit["documentChanges"]
        if "textDocument" in change
        for e in change["edits"]
    ]
    return apply_text_edits(text, edits)


def text_edit_count(result: Any) -> int:
    return sum(len(c.get("edits", [])) for c in result.edit["documentChanges"])


# -- properties ----------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(file=FILES, data=st.data(), new=NEW_TEXTS)
def test_a_located_fragment_preview_gives_exactly_the_agents_result(file: str, data, new: str):
    start = data.draw(st.integers(0, len(file) - 1))
    end = data.draw(st.integers(start + 1, len(file)))
    old = file[start:end]
    assume(len(occurrences(file, old)) == 1 and not occurrences(file, new))
    result = preview(file, old, new)
    agents_result = file[:start] + new + file[end:]
    assert result.problems == []
    assert applied(result, file) == agents_result
    placed = place_v1_diff(file, old, new)
    assert isinstance(placed, Placement) and placed.pre_image == file
    # After the agent wrote it, the same diff finds its new text and puts the old one back.
    if agents_result not in (old, new):
        after = place_v1_diff(agents_result, old, new)
        if isinstance(after, Placement):
            assert after.when == "after" and after.pre_image == file


@settings(max_examples=200, deadline=None)
@given(file=FILES, data=st.data(), new=NEW_TEXTS)
def test_an_ambiguous_or_missing_fragment_makes_no_edit(file: str, data, new: str):
    start = data.draw(st.integers(0, len(file) - 1))
    end = data.draw(st.integers(start + 1, len(file)))
    old = file[start:end]
    assume(file not in (old, new) and old != new)  # an unchanged fragment is a no-op
    assume(len(occurrences(file, old)) > 1 or occurrences(file, new))
    assume(not (len(occurrences(file, new)) == 1 and not occurrences(file, old)))
    result = preview(file, old, new)
    assert text_edit_count(result) == 0
    assert any(PATH in problem for problem in result.problems)


@settings(max_examples=100, deadline=None)
@given(file=FILES, new=FILES)
def test_whole_file_old_text_keeps_working(file: str, new: str):
    result = preview(file, file, new)
    assert result.problems == []
    assert applied(result, file) == new


# -- the agents' own shapes ------------------------------------------------------------------------


def test_claude_single_line_fragment_is_an_exact_hunk_at_its_place():
    result = preview(SHOP, "    return item.cost\n", "    return item.cost * 2\n")
    assert result.problems == []
    ((edit,),) = [c["edits"] for c in result.edit["documentChanges"]]
    assert edit["range"]["start"] == {"line": 1, "character": 0}
    assert applied(result, SHOP) == SHOP.replace("item.cost\n", "item.cost * 2\n")
    assert [(f.added, f.removed) for f in result.files] == [(1, 1)]


def test_partial_line_fragment_is_placed_inside_its_line():
    result = preview(SHOP, "item.cost", "item.price")
    assert applied(result, SHOP) == SHOP.replace("item.cost", "item.price")


def test_codex_hunk_with_context_is_placed():
    old = "\ndef total(items):\n    return sum(price(i) for i in items)\n"
    new = "\ndef total(items):\n    return round(sum(price(i) for i in items), 2)\n"
    result = preview(SHOP, old, new)
    assert applied(result, SHOP) == SHOP.replace(old, new)


def test_fragment_that_occurs_twice_is_not_placed():
    text = SHOP + "\ndef again(item):\n    return item.cost\n"
    result = preview(text, "    return item.cost\n", "    return 0\n")
    assert text_edit_count(result) == 0
    assert result.problems == [
        f"the diff for {PATH} cannot be placed in the file: its old text occurs more than once in"
        " the file; no edit is made from it"
    ]
    (annotation,) = result.edit["changeAnnotations"].values()
    assert annotation["label"] == f"modify {PATH}" and "more than once" in annotation["description"]


def test_fragment_the_file_already_holds_is_reported_not_applied_again():
    written = SHOP.replace("item.cost\n", "item.cost * 2\n")
    result = preview(written, "    return item.cost\n", "    return item.cost * 2\n")
    assert text_edit_count(result) == 0
    assert result.problems == [f"{PATH} already holds this change"]


def test_new_file_with_null_old_text_keeps_working():
    result = preview(None, None, "print('hi')\n")
    assert result.problems == []
    kinds = [c.get("kind", "text") for c in result.edit["documentChanges"]]
    assert kinds == ["create", "text"]


def test_placement_rules():
    assert place_v1_diff("a\nb\n", "a\nb\n", "c\n") == Placement("before", "a\nb\n", "c\n", 0, True)
    assert place_v1_diff("c\n", "a\nb\n", "c\n") == Placement("after", "a\nb\n", "c\n", 0, True)
    assert place_v1_diff("xaay", "aa", "b") == Placement("before", "xaay", "xby", 1, False)
    assert place_v1_diff("xaaay", "aa", "b") == Unplaced(
        "its old text occurs more than once in the file"
    )
    assert isinstance(place_v1_diff("abc", "", "z"), Unplaced)  # an empty fragment is everywhere
    assert isinstance(place_v1_diff("x\na\nb\n", "a\n", "a\nb\n"), Unplaced)  # both found
    assert occurrences("aaa", "aa") == [0, 1]


# -- CRLF files described with LF texts --------------------------------------------------------

SHOP_CRLF = SHOP.replace("\n", "\r\n")


def test_lf_fragment_of_a_crlf_file_is_placed_with_the_files_line_ends():
    old, new = "def total(items):\n    return", "def total(items):\n    # sum\n    return"
    placed = place_v1_diff(SHOP_CRLF, old, new)
    assert isinstance(placed, Placement) and placed.when == "before"
    assert placed.pre_image == SHOP_CRLF
    assert placed.post_image == SHOP_CRLF.replace(
        "def total(items):\r\n", "def total(items):\r\n    # sum\r\n"
    )
    assert "\n" not in placed.post_image.replace("\r\n", "")


def test_lf_whole_file_of_a_crlf_file_already_written_is_placed_after():
    new = SHOP.replace("item.cost", "item.price")
    placed = place_v1_diff(new.replace("\n", "\r\n"), SHOP, new)
    assert isinstance(placed, Placement) and placed.when == "after" and placed.whole_file
    assert placed.pre_image == SHOP_CRLF


def test_crlf_fragment_is_taken_as_it_is_and_mixed_texts_are_not_converted():
    old = "    return item.cost\r\n"
    placed = place_v1_diff(SHOP_CRLF, old, "    return item.price\r\n")
    assert isinstance(placed, Placement) and placed.post_image.count("\r\n") == 5
    # A text with a CR of its own is the agent's exact bytes: never converted.
    assert isinstance(place_v1_diff(SHOP_CRLF, "def price(item):\n\r", "x"), Unplaced)


def test_lf_file_is_never_searched_with_crlf():
    assert isinstance(place_v1_diff(SHOP, "cost\r\n", "price\r\n"), Unplaced)


@settings(max_examples=200, deadline=None)
@given(FILES, st.data(), NEW_TEXTS)
def test_crlf_placement_preserves_everything_outside_the_fragment(text, data, new):
    assume("\r\n" in text)
    lines = text.splitlines(keepends=True)
    line = data.draw(st.integers(0, len(lines) - 1))
    old_lf = lines[line].replace("\r\n", "\n")
    new = new.replace("\r", "")
    assume(old_lf not in text and not (new and new in text))  # else placed as the texts are
    placed = place_v1_diff(text, old_lf, new)
    if isinstance(placed, Unplaced):
        return  # ambiguous or not found: nothing is made from it
    assert placed.pre_image == text
    if placed.when == "before" and not placed.whole_file:
        # The CRLF line replaced by the new text with CRLF line ends, the rest byte for byte.
        start = placed.start
        assert (
            placed.post_image
            == text[:start] + new.replace("\n", "\r\n") + text[start + len(lines[line]) :]
        )


def test_preview_of_an_lf_fragment_in_a_crlf_file_keeps_the_files_line_ends():
    result = preview(SHOP_CRLF, "    return item.cost\n", "    return item.price\n")
    assert result.problems == []
    assert applied(result, SHOP_CRLF) == SHOP_CRLF.replace("item.cost", "item.price")
