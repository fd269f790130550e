"""ACP v1 `_meta.terminal_output` text is turned into CR LF bytes once per pull over the joined
text (`_Output.append_text`), not once per chunk. These properties check that the editor gets
byte for byte what converting and appending each chunk on its own gave, on random chunkings and
random pulls: CR LF split across chunks, a lone CR at a chunk end, escape sequences and UTF-8
characters split across chunks, lone surrogates, snapshots, raw bytes in between, and scrollback
trimming (small limits make the store fall back to converting chunk by chunk near the limit)."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acpls.translate.terminals import TerminalStore, _crlf, _Output

S = "sess_1"
CALL = "toolu_1"

# Per chunk, as the relay did before: every LF not after a CR (in this chunk) becomes CR LF. A
# look-behind regex, written independently of the store's two-pass `replace`.
_BARE_LF = re.compile(r"(?<!\r)\n")


def per_chunk(text: str) -> bytes:
    return _BARE_LF.sub("\r\n", text).encode("utf-8", "replace")


_PIECES = [
    "\r",
    "\n",
    "\r\n",
    "a",
    "bc",
    "é",
    "😀",
    "\x1b",
    "[31m",
    "\x1b[0m",
    "\x07",
    "\ud83d",
    " ",
]
_text = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)
_op = st.one_of(
    st.tuples(st.just("chunk"), _text),
    st.tuples(st.just("chunk"), _text),
    st.tuples(st.just("chunk"), _text),
    st.tuples(st.just("pull"), st.just("")),
    st.tuples(st.just("snapshot"), _text),
    st.tuples(st.just("bytes"), _text),
    st.tuples(st.just("tail"), st.just("")),
)


def _reference(store: TerminalStore, kind: str, text: str) -> None:
    """The per-chunk path through public methods: what `_v1_output` did before."""
    store.set_tool_call(S, CALL, CALL)
    if kind == "snapshot":
        # A v1 snapshot replaces the output: the same as a v2 `terminal_update` output snapshot.
        data = base64.b64encode(per_chunk(text)).decode("ascii")
        store.apply_update(S, {"terminalId": CALL, "output": {"data": data}})
    else:
        store.append_bytes(S, CALL, per_chunk(text))


def _batches(store: TerminalStore) -> list[tuple[str, bool]]:
    return [(batch.text, batch.reset) for batch in store.take_output()]


def _run(ops: list[tuple[str, str]], scrollback: int, sanitize: bool) -> None:
    new = TerminalStore(scrollback_bytes=scrollback, sanitize=sanitize)
    old = TerminalStore(scrollback_bytes=scrollback, sanitize=sanitize)
    for kind, text in ops:
        if kind == "pull":
            assert _batches(new) == _batches(old)
        elif kind == "tail":
            assert new.output_tail(S, CALL, 7) == old.output_tail(S, CALL, 7)
        elif kind == "bytes":
            raw = text.encode("utf-8", "replace")
            new.append_bytes(S, CALL, raw)
            old.append_bytes(S, CALL, raw)
        else:
            item: dict[str, Any] = {"terminal_id": CALL, "data": text}
            if kind == "snapshot":
                item["snapshot"] = True
            new.apply_v1_meta(S, CALL, {"terminal_output": item})
            _reference(old, kind, text)
    assert _batches(new) == _batches(old)
    assert new.output_bytes(S, CALL) == old.output_bytes(S, CALL)


@settings(max_examples=400, deadline=None)
@given(ops=st.lists(_op, max_size=40), sanitize=st.booleans())
def test_per_pull_conversion_equals_per_chunk_conversion(
    ops: list[tuple[str, str]], sanitize: bool
) -> None:
    _run(ops, 4 * 1024 * 1024, sanitize)


@settings(max_examples=400, deadline=None)
@given(ops=st.lists(_op, max_size=40), scrollback=st.integers(8, 200), sanitize=st.booleans())
def test_per_pull_conversion_equals_per_chunk_conversion_while_trimming(
    ops: list[tuple[str, str]], scrollback: int, sanitize: bool
) -> None:
    _run(ops, scrollback, sanitize)


def test_crlf_split_across_chunks_and_lone_cr_at_a_chunk_end_keep_their_per_chunk_bytes() -> None:
    store = TerminalStore()
    for data in ["one\r", "\ntwo\r", "", "\nthree\r\n", "\x1b[3", "1mred\n", "last\r"]:
        store.apply_v1_meta(S, CALL, {"terminal_output": {"terminal_id": CALL, "data": data}})
    expected = b"one\r\r\ntwo\r\r\nthree\r\n\x1b[31mred\r\nlast\r"
    assert store.output_bytes(S, CALL) == expected
    (batch,) = store.take_output()
    assert batch.text == expected.decode()


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_text, max_size=20))
def test_pending_text_is_counted_at_least_at_the_bytes_it_becomes(texts: list[str]) -> None:
    """The scrollback check before converting relies on this bound: pending text that becomes
    more bytes than counted could trim the scrollback at a different byte than per chunk."""
    out = _Output(limit=1 << 20, trim_to=0.5, sanitize=False)
    for text in texts:
        out.append_text(text)
    counted = out.pending_bytes
    out.flush()
    assert len(out.data) == sum(len(per_chunk(text)) for text in texts)
    assert counted >= len(out.data)


_line = st.lists(st.sampled_from(["a", "é", "\r", "\x1b[0m", "\ud83d"]), max_size=150).map("".join)


@settings(max_examples=500, deadline=None)
@given(
    lines=st.lists(_line, max_size=8), ends=st.lists(st.sampled_from(["\n", "\r\n"]), max_size=8)
)
def test_crlf_conversion_equals_the_look_behind_regex(lines: list[str], ends: list[str]) -> None:
    """Long lines and short, with and without CR: every path of `_crlf`."""
    text = "".join(line + end for line, end in zip(lines, ends, strict=False)) + "".join(
        lines[len(ends) :]
    )
    assert _crlf(text) == _BARE_LF.sub("\r\n", text)


@pytest.mark.parametrize(
    "text",
    [
        "a" * 5000 + "\r\n" + "b\n" * 100 + "c\r\nd",  # long lines at first, then short ones
        "x\r" + "b\n" * 3000,  # short lines with a CR: the two replaces
        "\n" + "a" * 5000 + "\r\n" + "a" * 70 + "\n",  # a bare LF first, long lines
        ("a" * 4094 + "\r\n") * 20,  # P1's form: nothing to add, returned as it is
    ],
)
def test_crlf_conversion_judged_on_the_first_4096_characters_is_still_exact(text: str) -> None:
    assert _crlf(text) == _BARE_LF.sub("\r\n", text)
