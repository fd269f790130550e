"""TerminalStore against a trivial model: a list of bytes where a snapshot replaces and a chunk
appends. Whatever the interleaving of chunks, snapshots and pulls, the editor's view (every pulled
text since the last reset, concatenated) is the decoded retained bytes."""

from __future__ import annotations

import base64
import codecs

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from acpls.translate.sanitize import TerminalSanitizer
from acpls.translate.terminals import TerminalStore

S = "s"
TERMINALS = ("t1", "t2")

# Bytes that exercise the decoder and the sanitiser: pieces of multi-byte characters, invalid
# bytes, ESC and C1 introducers, string terminators, newlines.
_PIECES = st.sampled_from(
    [
        b"a",
        b"\n",
        b"\r",
        "é".encode(),
        "€".encode()[:2],
        "€".encode()[2:],
        "🦀".encode()[:1],
        "🦀".encode()[1:3],
        "🦀".encode()[3:],
        b"\xff",
        b"\x1b",
        b"[31m",
        b"]52;c;",
        b"]8;;https://x",
        b"]8;;javascript:y",
        b"\x07",
        b"\\",
        b"P",
        "\x9d".encode(),
        "\x9b".encode(),
    ]
)
_CHUNKS = st.lists(_PIECES, max_size=8).map(b"".join)


def expected_view(data: bytes, sanitize: bool) -> str:
    """What the editor must show for these retained bytes (a fresh decode, like a reset)."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data)
    return TerminalSanitizer().feed(text) if sanitize else text


class TerminalStoreMachine(RuleBasedStateMachine):
    scrollback = 1 << 20  # no trimming: the retained bytes are exactly the model's

    def __init__(self) -> None:
        super().__init__()
        self.sanitize = False
        self.store = TerminalStore(scrollback_bytes=self.scrollback, sanitize=False)
        self.model: dict[str, list[bytes]] = {}
        self.view: dict[str, str] = {}

    @initialize(sanitize=st.booleans())
    def choose_sanitizing(self, sanitize: bool) -> None:
        self.sanitize = sanitize
        self.store = TerminalStore(scrollback_bytes=self.scrollback, sanitize=sanitize)

    @rule(terminal=st.sampled_from(TERMINALS), chunk=_CHUNKS)
    def append_chunk(self, terminal: str, chunk: bytes) -> None:
        assert self.store.append_chunk(S, terminal, base64.b64encode(chunk).decode())
        self.model.setdefault(terminal, []).append(chunk)

    @rule(terminal=st.sampled_from(TERMINALS), snapshot=_CHUNKS)
    def apply_snapshot(self, terminal: str, snapshot: bytes) -> None:
        data = base64.b64encode(snapshot).decode()
        self.store.apply_update(S, {"terminalId": terminal, "output": {"data": data}})
        self.model[terminal] = [snapshot]

    @rule(terminal=st.sampled_from(TERMINALS))
    def send_invalid_chunk(self, terminal: str) -> None:
        assert not self.store.append_chunk(S, terminal, "!!")

    @rule()
    def pull(self) -> None:
        seen = set()
        for batch in self.store.take_output():
            assert batch.terminal_id not in seen, "one batch per terminal per pull"
            seen.add(batch.terminal_id)
            assert len(batch.text) <= self.store.scrollback_bytes
            shown = self.view.get(batch.terminal_id, "")
            self.view[batch.terminal_id] = batch.text if batch.reset else shown + batch.text
        for terminal in TERMINALS:
            retained = self.store.output_bytes(S, terminal)
            assert self.view.get(terminal, "") == expected_view(retained, self.sanitize)

    @invariant()
    def retained_bytes_match_the_model(self) -> None:
        for terminal, chunks in self.model.items():
            assert self.store.output_bytes(S, terminal) == b"".join(chunks)


class TrimmingTerminalStoreMachine(TerminalStoreMachine):
    """Trimming bytes the editor already has sends nothing again: the editor's view is every
    byte since its last reset (a reset's text is the retained bytes at that pull), of which the
    retained bytes are a suffix."""

    scrollback = 48  # trims often: the retained bytes are a suffix of the model's

    def __init__(self) -> None:
        super().__init__()
        self.unpulled: dict[str, list[bytes]] = {}
        self.since_reset: dict[str, bytes] = {}

    @rule(terminal=st.sampled_from(TERMINALS), chunk=_CHUNKS)
    def append_chunk(self, terminal: str, chunk: bytes) -> None:
        super().append_chunk(terminal, chunk)
        self.unpulled.setdefault(terminal, []).append(chunk)

    @rule()
    def pull(self) -> None:
        held = {t: self.held_by_sanitizer(self.since_reset.get(t, b"")) for t in TERMINALS}
        for batch in self.store.take_output():
            terminal = batch.terminal_id
            # A sequence the sanitizer held from bytes pulled before comes out whole now, even
            # where the trim has cut those bytes since: only that may exceed the scrollback.
            assert len(batch.text) <= self.store.scrollback_bytes + (
                0 if batch.reset else held[terminal]
            )
            if batch.reset:
                self.since_reset[terminal] = self.store.output_bytes(S, terminal)
                self.view[terminal] = batch.text
            else:
                fresh = b"".join(self.unpulled.get(terminal, []))
                self.since_reset[terminal] = self.since_reset.get(terminal, b"") + fresh
                self.view[terminal] = self.view.get(terminal, "") + batch.text
        self.unpulled.clear()
        for terminal in TERMINALS:
            shown = self.since_reset.get(terminal, b"")
            assert shown.endswith(self.store.output_bytes(S, terminal))
            assert self.view.get(terminal, "") == expected_view(shown, self.sanitize)

    def held_by_sanitizer(self, shown: bytes) -> int:
        if not self.sanitize:
            return 0
        sanitizer = TerminalSanitizer()
        sanitizer.feed(codecs.getincrementaldecoder("utf-8")(errors="replace").decode(shown))
        return sanitizer.held_chars

    @invariant()
    def retained_bytes_match_the_model(self) -> None:
        for terminal, chunks in self.model.items():
            everything = b"".join(chunks)
            retained = self.store.output_bytes(S, terminal)
            assert everything.endswith(retained)
            assert len(retained) <= self.scrollback
            # Trimmed between characters: the retained text is a suffix of the whole text.
            whole_text = expected_view(everything, sanitize=False)
            assert whole_text.endswith(expected_view(retained, sanitize=False))


TerminalStoreMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=40)
TrimmingTerminalStoreMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=40)

TestTerminalStore = TerminalStoreMachine.TestCase
TestTrimmingTerminalStore = TrimmingTerminalStoreMachine.TestCase


def test_a_held_link_comes_out_whole_after_the_trim_cut_its_bytes() -> None:
    # Found by the machine above: the sanitizer holds an unfinished OSC 8 link from the first
    # pull; the second chunk finishes it while the trim cuts the bytes it began with.
    store = TerminalStore(scrollback_bytes=48, sanitize=True)
    first = b"\x1b]8;;https://x]8;;https://xa[31m"
    second = b"]8;;javascript:y\x07"
    store.append_chunk(S, "t1", base64.b64encode(first).decode())
    assert [batch.text for batch in store.take_output()] == [""]
    store.append_chunk(S, "t1", base64.b64encode(second).decode())
    [batch] = store.take_output()
    assert not batch.reset
    assert batch.text == (first + second).decode()  # one https link: safe, shown whole
    assert len(store.output_bytes(S, "t1")) <= 48
