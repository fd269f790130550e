"""TerminalSanitizer: control strings that act on the machine go, drawing sequences stay."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acpls.translate.sanitize import MAX_HELD_CHARS, TerminalSanitizer

ESC = "\x1b"
BEL = "\x07"
ST = ESC + "\\"


def sanitize(text: str) -> str:
    return TerminalSanitizer().feed(text)


def feed_pieces(pieces: list[str]) -> str:
    sanitizer = TerminalSanitizer()
    return "".join(sanitizer.feed(piece) for piece in pieces)


# -- what is removed ----------------------------------------------------------------------


@pytest.mark.parametrize("terminator", [BEL, ST, "\x9c"])
def test_osc_52_clipboard_write_is_removed(terminator: str) -> None:
    assert sanitize(f"a{ESC}]52;c;aGVsbG8={terminator}b") == "ab"


def test_osc_52_clipboard_write_with_8bit_introducer_is_removed() -> None:
    assert sanitize("a\x9d52;c;aGVsbG8=\x9cb") == "ab"


@pytest.mark.parametrize("number", ["0", "1", "2"])
def test_title_setting_osc_is_removed(number: str) -> None:
    assert sanitize(f"{ESC}]{number};pwned{BEL}ok") == "ok"


@pytest.mark.parametrize(
    "uri", ["javascript:alert(1)", "ftp://host/file", "vscode://ext/run", "command:x", "nolink"]
)
def test_osc_8_link_with_unsafe_scheme_is_removed_but_link_text_kept(uri: str) -> None:
    text = f"see {ESC}]8;;{uri}{ST}here{ESC}]8;;{ST}."
    assert sanitize(text) == f"see here{ESC}]8;;{ST}."


@pytest.mark.parametrize(
    "uri", ["http://example.com", "https://example.com/a?b=c", "FILE:///tmp/x"]
)
def test_osc_8_link_with_http_https_or_file_scheme_is_kept(uri: str) -> None:
    text = f"see {ESC}]8;id=1;{uri}{BEL}here{ESC}]8;;{BEL}."
    assert sanitize(text) == text


def test_osc_8_link_with_control_character_in_uri_is_removed() -> None:
    assert sanitize(f"{ESC}]8;;http://a\nb{BEL}x") == "x"


def test_osc_starting_with_8_but_not_osc_8_is_removed() -> None:
    assert sanitize(f"{ESC}]81;x{BEL}y") == "y"


@pytest.mark.parametrize(
    "introducer", [f"{ESC}P", f"{ESC}_", f"{ESC}^", f"{ESC}X", "\x90", "\x9f", "\x9e", "\x98"]
)
def test_dcs_apc_pm_and_sos_strings_are_removed(introducer: str) -> None:
    assert sanitize(f"a{introducer}payload;1;2{ST}b") == "ab"


def test_window_manipulation_csi_is_removed() -> None:
    assert sanitize(f"{ESC}[8;100;100tx{ESC}[21ty") == "xy"


def test_string_aborted_by_escape_drops_the_string_and_starts_the_next_sequence() -> None:
    assert sanitize(f"{ESC}]2;title{ESC}[31mred") == f"{ESC}[31mred"


@pytest.mark.parametrize("abort", ["\x18", "\x1a"])
def test_can_and_sub_abort_a_string(abort: str) -> None:
    assert sanitize(f"{ESC}]52;c;xx{abort}after") == "after"


# -- what is kept -------------------------------------------------------------------------


def test_sgr_colours_are_kept() -> None:
    text = f"{ESC}[1;31merror{ESC}[0m {ESC}[38;2;10;20;30mtrue colour{ESC}[m"
    assert sanitize(text) == text


def test_cursor_movement_and_erase_csi_are_kept() -> None:
    text = f"{ESC}[2K{ESC}[1A{ESC}[10;5H{ESC}[?25l{ESC}[?25h{ESC}[J"
    assert sanitize(text) == text


def test_eight_bit_csi_is_kept() -> None:
    assert sanitize("\x9b31mred\x9b0m") == "\x9b31mred\x9b0m"


def test_short_escape_sequences_are_kept() -> None:
    text = f"{ESC}7{ESC}8{ESC}(B{ESC}={ESC}>{ESC}M"
    assert sanitize(text) == text


def test_carriage_return_newline_tab_and_backspace_are_kept() -> None:
    text = "progress 10%\rprogress 20%\r\n\tcol\bX\n"
    assert sanitize(text) == text


# -- streaming ----------------------------------------------------------------------------


def test_escape_sequence_split_over_two_chunks_comes_out_whole() -> None:
    sanitizer = TerminalSanitizer()
    assert sanitizer.feed(f"a{ESC}[3") == "a"
    assert sanitizer.feed("1mred") == f"{ESC}[31mred"


def test_lone_escape_at_chunk_end_is_held_until_the_next_chunk() -> None:
    sanitizer = TerminalSanitizer()
    assert sanitizer.feed(f"a{ESC}") == "a"
    assert sanitizer.feed("[0mb") == f"{ESC}[0mb"


def test_osc_52_split_over_chunks_is_removed() -> None:
    assert feed_pieces(["x", ESC, "]5", "2;c;aGVs", "bG8=", ESC, "\\y"]) == "xy"


def test_safe_link_split_over_chunks_comes_out_whole() -> None:
    link = f"{ESC}]8;;https://example.com{ST}"
    assert feed_pieces([link[:3], link[3:10], link[10:-1], link[-1:] + "t"]) == link + "t"


def test_unterminated_safe_link_is_dropped_past_the_bound() -> None:
    sanitizer = TerminalSanitizer()
    assert sanitizer.feed(f"{ESC}]8;;https://x/") == ""
    assert sanitizer.feed("a" * (MAX_HELD_CHARS + 10)) == ""
    # Too long to keep: the whole string is removed when it ends, the text after it stays.
    assert sanitizer.feed(f"{BEL}after") == "after"


@pytest.mark.parametrize("params", ["1;31", "38;5;" + "1;" * 200 + "2"])
def test_csi_fed_one_character_at_a_time_comes_out_whole(params: str) -> None:
    sequence = f"{ESC}[{params}m"
    assert feed_pieces([*sequence, "x"]) == sequence + "x"


def test_unsafe_csi_fed_one_character_at_a_time_is_removed() -> None:
    assert feed_pieces([*f"a{ESC}[8;{'1;' * 200}1t", "b"]) == "ab"


def test_overlong_csi_is_dropped_without_holding_it() -> None:
    sanitizer = TerminalSanitizer()
    assert sanitizer.feed(f"{ESC}[" + "1;" * MAX_HELD_CHARS) == ""
    assert sanitizer.feed("mok") == "ok"


def test_reset_forgets_a_partial_sequence() -> None:
    sanitizer = TerminalSanitizer()
    assert sanitizer.feed(f"{ESC}]52;c;") == ""
    sanitizer.reset()
    assert sanitizer.feed("visible") == "visible"


def test_fast_path_returns_the_same_object_for_text_without_escapes() -> None:
    text = "plain output, ünïcödé, box ─│ and tabs\t\r\n" * 10
    assert TerminalSanitizer().feed(text) is text


def test_raw_mode_passes_everything_through() -> None:
    text = f"{ESC}]52;c;aGVsbG8={BEL}{ESC}]0;t{BEL}{ESC}Pq{ST}"
    sanitizer = TerminalSanitizer(raw=True)
    assert sanitizer.raw
    assert sanitizer.feed(text) is text


# -- properties ---------------------------------------------------------------------------

_INTRODUCERS = [
    ESC,
    "[",
    "]",
    "P",
    "_",
    "^",
    "X",
    "\\",
    BEL,
    "\x9b",
    "\x9c",
    "\x9d",
    "\x90",
    "\x18",
]
_INTERESTING = st.sampled_from(
    [*_INTRODUCERS, "8", ";", "52", "0", "1", "m", "t", "H", "(", "B", "https://x", "javascript:y"]
)
_TEXTS = st.lists(_INTERESTING | st.text(max_size=3), max_size=40).map("".join)
_SAFE_LINK = re.compile(
    r"\x1b\]8;[^;\x07\x1b]*;(?:(?:https?|file):[^\x07\x1b]*)?(?:\x07|\x1b\\)", re.I
)


@given(_TEXTS, st.lists(st.integers(min_value=0, max_value=200), max_size=6))
def test_output_does_not_depend_on_where_chunks_are_cut(text: str, cuts: list[int]) -> None:
    bounds = sorted({min(cut, len(text)) for cut in cuts})
    pieces = [
        text[start:end] for start, end in zip([0, *bounds], [*bounds, len(text)], strict=True)
    ]
    assert feed_pieces(pieces) == sanitize(text)


@given(_TEXTS)
def test_output_holds_no_control_string_but_safe_links(text: str) -> None:
    out = _SAFE_LINK.sub("", sanitize(text))
    assert not re.search(r"\x1b[\]P_^X]|[\x90\x98\x9d\x9e\x9f]", out)
    assert not re.search(r"(?:\x1b\[|\x9b)[\x20-\x3f]*t", out)
