"""LineReader (acp/transport.py) against the obvious model: split the whole stream at newlines and
drop every line longer than the limit. However the stream is cut into reads, the same lines come
out, the same number are dropped, and what is held never exceeds the limit."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from acpls.acp.transport import LineReader

LINES = st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12)


def model(stream: bytes, limit: int) -> tuple[list[bytes], int, bytes]:
    *complete, rest = stream.split(b"\n")
    kept = [line for line in complete if len(line) <= limit]
    dropped = len(complete) - len(kept) + (1 if len(rest) > limit else 0)
    return kept, dropped, rest if len(rest) <= limit else b""


@settings(max_examples=500, deadline=None)
@given(
    lines=LINES,
    trailing=st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    limit=st.integers(1, 30),
    cuts=st.lists(st.integers(0, 600), max_size=12),
)
def test_line_reader_matches_the_model(
    lines: list[bytes], trailing: bytes, limit: int, cuts: list[int]
) -> None:
    stream = b"".join(line + b"\n" for line in lines) + trailing
    got: list[bytes] = []
    reader = LineReader(got.append, max_line=limit)
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    for start, end in itertools.pairwise(points):
        reader.feed(stream[start:end])
        assert reader._held <= limit  # bounded whatever the agent sends
    expected, dropped, rest = model(stream, limit)
    assert got == expected
    assert reader.dropped_lines == dropped
    assert reader.finish() == rest
