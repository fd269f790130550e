"""Remove terminal control strings that can act on the user's machine (editors/protocol.md 10).

Agent terminal output is shown in real terminal emulators (VS Code's xterm.js, Neovim's libvterm).
Those honour control strings that do more than draw: OSC 52 writes the clipboard, OSC 8 makes
clickable links (a `javascript:` or `vscode:` link is one click from running something), OSC 0/1/2
set the window title (and, with a title report, can type into a shell), and DCS / APC / PM / SOS
strings drive terminal-specific features. `TerminalSanitizer` removes those and keeps what only
draws: plain text, SGR colours, cursor movement and the other CSI sequences (except window
manipulation, `CSI ... t`), short ESC sequences, and every C0 control (CR, LF, TAB, BS...).

OSC 8 links whose URI scheme is `http`, `https` or `file` (and the empty-URI OSC 8 that ends a
link) are kept whole; other OSC 8 sequences are removed but the link text between them stays,
because it is ordinary text.

The sanitiser is streaming: one instance per terminal, fed decoded text chunk by chunk. A
sequence split across chunks comes out whole (it is held until its end arrives), so the output
does not depend on where the chunks were cut. Strings that are removed are skipped without
being stored; an OSC that may turn out to be a safe link is held up to `MAX_HELD_CHARS`, then
treated as unsafe and skipped. Seven-bit (`ESC [`) and eight-bit (`\\x9b`) introducers are
treated alike.

String terminators follow the VT parser: BEL (OSC only), ST (`ESC \\` or `\\x9c`), CAN and SUB end
a string; any other ESC aborts it and starts a new sequence.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_HELD_CHARS", "SAFE_LINK_SCHEMES", "TerminalSanitizer"]

MAX_HELD_CHARS: Final = 64 * 1024
SAFE_LINK_SCHEMES: Final = frozenset({"http", "https", "file"})

ESC: Final = "\x1b"
BEL: Final = "\x07"
ST_C1: Final = "\x9c"

# Introducers (7-bit ESC and the 8-bit C1 forms that start a sequence or string).
_C1_INTRODUCERS: Final = "\x90\x98\x9b\x9d\x9e\x9f"

# The first introducer that does not start a complete safe sequence: everything before it can be
# passed on as one slice. Safe are CSI sequences (7- or 8-bit) other than window manipulation
# (final `t`) and short ESC sequences (optional intermediates, then a final that does not start
# a CSI or a string). A pattern that starts with a literal ESC lets the regex engine jump from
# ESC to ESC, so colourful output costs one C-level scan; the C1 variant is only needed for
# text that contains C1 introducers at all.
_CSI_BODY: Final = r"[\x20-\x3f]*+[\x40-\x73\x75-\x7e]"
_SAFE_AFTER_ESC: Final = (
    rf"\[{_CSI_BODY}"
    r"|[\x20-\x2f]*+[\x30-\x4f\x51-\x57\x59\x5a\x5c\x60-\x7e]"
    r"|[\x20-\x2f]++[\x30-\x7e]"
)
_UNSAFE_ESC = re.compile(rf"{ESC}(?!{_SAFE_AFTER_ESC})")
_UNSAFE_ANY = re.compile(rf"{ESC}(?!{_SAFE_AFTER_ESC})|\x9b(?!{_CSI_BODY})|[\x90\x98\x9d\x9e\x9f]")
# The end of a chunk that may still become a safe sequence (held, then scanned with the next).
_ESC_PREFIX_AT_END = re.compile(rf"{ESC}[\x20-\x2f]*+\Z")
_SAFE_PREFIX_AT_END = re.compile(rf"(?:{ESC}\[|\x9b)[\x20-\x3f]*+\Z|{ESC}[\x20-\x2f]*+\Z")
_RESCAN_CHARS: Final = 256
_CSI_PARAMS = re.compile(r"[\x20-\x3f]*+")
_ESC_INTERMEDIATES = re.compile(r"[\x20-\x2f]*+")
_OSC_END = re.compile(f"[{BEL}\x18\x1a{ESC}{ST_C1}]")
_STRING_END = re.compile(f"[\x18\x1a{ESC}{ST_C1}]")
_CONTROL_IN_OSC = re.compile(r"[\x00-\x1f\x7f-\x9f]")

# ESC followed by one of these starts a string; the value says which kind.
_STRING_KIND_AFTER_ESC: Final = {"]": "osc", "P": "dcs", "X": "sos", "^": "pm", "_": "apc"}
_STRING_KIND_C1: Final = {"\x9d": "osc", "\x90": "dcs", "\x98": "sos", "\x9e": "pm", "\x9f": "apc"}

# Parser states.
_GROUND: Final = 0
_ESCAPE: Final = 1  # saw ESC (maybe with intermediates, held in _held)
_CSI: Final = 2  # inside a CSI sequence, prefix held in _held
_STRING: Final = 3  # inside an OSC/DCS/SOS/PM/APC string
_STRING_ESC: Final = 4  # inside a string, just saw ESC (is it ST?)


class TerminalSanitizer:
    """Streaming filter for one terminal's decoded output text."""

    __slots__ = ("_held", "_osc", "_osc_len", "_overflow", "_raw", "_state", "_string_kind")

    def __init__(self, *, raw: bool = False) -> None:
        self._raw = raw
        self._state = _GROUND
        self._held = ""  # the ESC / CSI prefix seen so far
        self._overflow = False  # that prefix grew past MAX_HELD_CHARS: drop the sequence
        self._string_kind = ""
        # Pieces of an OSC that may still become a safe link; None once it is known to be removed.
        self._osc: list[str] | None = None
        self._osc_len = 0

    @property
    def raw(self) -> bool:
        return self._raw

    @property
    def held_chars(self) -> int:
        """Characters of an unfinished sequence held back for the next `feed` (it comes out
        whole then, so a batch may be this much longer than the bytes it was pulled for)."""
        return len(self._held) + self._osc_len

    def reset(self) -> None:
        """Forget any partial sequence (used when the terminal's output is replaced)."""
        self._to_ground()

    def feed(self, text: str) -> str:
        """Return the safe part of `text`, holding back an unfinished sequence for the next call."""
        if self._raw:
            return text
        if self._state != _GROUND and self._can_rescan():
            # A short ESC / CSI prefix held from the last chunk: scanning it again with this chunk
            # is cheaper than stepping through the states, and gives the same result.
            text = self._held + text
            self._to_ground()
        if text.isascii():
            has_c1 = False
        else:  # substring tests run at memchr speed, a regex character class ~20x slower
            has_c1 = (
                "\x9b" in text
                or "\x9d" in text
                or "\x90" in text
                or "\x98" in text
                or "\x9e" in text
                or "\x9f" in text
            )
        if self._state == _GROUND and not has_c1 and ESC not in text:
            return text
        scan = _UNSAFE_ANY if has_c1 else _UNSAFE_ESC
        out: list[str] = []
        pos = 0
        end = len(text)
        while pos < end:
            state = self._state
            if state == _GROUND:
                pos = self._ground(scan, text, pos, out)
            elif state == _ESCAPE:
                pos = self._escape(text, pos, out)
            elif state == _CSI:
                pos = self._csi(text, pos, out)
            elif state == _STRING:
                pos = self._string(text, pos, out)
            else:
                pos = self._string_esc(text, pos, out)
        return "".join(out)

    def _can_rescan(self) -> bool:
        return (
            self._state in (_ESCAPE, _CSI)
            and not self._overflow
            and len(self._held) <= _RESCAN_CHARS
        )

    # -- states ---------------------------------------------------------------------------

    def _ground(self, scan: re.Pattern[str], text: str, pos: int, out: list[str]) -> int:
        unsafe = scan.search(text, pos)
        run_end = unsafe.start() if unsafe else len(text)
        if run_end > pos:
            out.append(text[pos:run_end])
        if unsafe is None:
            return run_end
        if _SAFE_PREFIX_AT_END.match(text, run_end):
            # The chunk ends inside what may become a safe sequence: hold it for the next chunk.
            self._state = _ESCAPE if _ESC_PREFIX_AT_END.match(text, run_end) else _CSI
            self._hold(text[run_end:])
            return len(text)
        char = text[run_end]
        if char == ESC:
            self._state = _ESCAPE
            self._held = ESC
        elif char == "\x9b":
            self._state = _CSI
            self._held = char
        else:
            self._start_string(_STRING_KIND_C1[char], char)
        return run_end + 1

    def _escape(self, text: str, pos: int, out: list[str]) -> int:
        if self._held == ESC:
            kind = _STRING_KIND_AFTER_ESC.get(text[pos])
            if kind is not None:
                self._start_string(kind, ESC + text[pos])
                return pos + 1
            if text[pos] == "[":
                self._state = _CSI
                self._held = ESC + "["
                return pos + 1
        match = _ESC_INTERMEDIATES.match(text, pos)
        stop = match.end() if match else pos
        self._hold(text[pos:stop])
        if stop >= len(text):
            return stop
        char = text[stop]
        if "\x30" <= char <= "\x7e":
            if not self._overflow:
                out.append(self._held + char)
            stop += 1
        # Anything else (a control, ESC, non-ASCII) aborts the sequence; that char is reprocessed.
        self._to_ground()
        return stop

    def _csi(self, text: str, pos: int, out: list[str]) -> int:
        match = _CSI_PARAMS.match(text, pos)
        stop = match.end() if match else pos
        self._hold(text[pos:stop])
        if stop >= len(text):
            return stop
        char = text[stop]
        if "\x40" <= char <= "\x7e":
            # `CSI ... t` manipulates the window: removed.
            if char != "t" and not self._overflow:
                out.append(self._held + char)
            stop += 1
        self._to_ground()
        return stop

    def _start_string(self, kind: str, introducer: str) -> None:
        self._state = _STRING
        self._string_kind = kind
        self._held = introducer
        self._osc = [] if kind == "osc" else None
        self._osc_len = 0

    def _string(self, text: str, pos: int, out: list[str]) -> int:
        pattern = _OSC_END if self._string_kind == "osc" else _STRING_END
        match = pattern.search(text, pos)
        stop = match.start() if match else len(text)
        if self._osc is not None and stop > pos:
            self._hold_osc(text[pos:stop])
        if match is None:
            return stop
        char = text[stop]
        if char == ESC:
            self._state = _STRING_ESC
        elif char in (BEL, ST_C1):
            self._finish_string(char, out)
        else:  # CAN / SUB abort the string; the terminal shows nothing for them either
            self._to_ground()
        return stop + 1

    def _string_esc(self, text: str, pos: int, out: list[str]) -> int:
        if text[pos] == "\\":
            self._finish_string(ESC + "\\", out)
            return pos + 1
        # ESC that is not ST aborts the string and starts a new sequence.
        self._to_ground()
        self._state = _ESCAPE
        self._held = ESC
        return pos

    # -- helpers --------------------------------------------------------------------------

    def _hold_osc(self, piece: str) -> None:
        osc = self._osc
        assert osc is not None
        if self._osc_len < 2 and not "8;".startswith(("".join(osc) + piece)[:2]):
            self._osc = None  # not OSC 8: removed whatever it says
            return
        self._osc_len += len(piece)
        if self._osc_len > MAX_HELD_CHARS:
            self._osc = None
            return
        osc.append(piece)

    def _finish_string(self, terminator: str, out: list[str]) -> None:
        if self._osc is not None:
            body = "".join(self._osc)
            if _is_safe_link(body):
                out.append(self._held + body + terminator)
        self._to_ground()

    def _hold(self, piece: str) -> None:
        """Extend the held ESC/CSI prefix; past the bound, keep parsing but drop the sequence."""
        if self._overflow:
            return
        self._held += piece
        if len(self._held) > MAX_HELD_CHARS:
            self._overflow = True
            self._held = ""

    def _to_ground(self) -> None:
        self._state = _GROUND
        self._held = ""
        self._overflow = False
        self._string_kind = ""
        self._osc = None
        self._osc_len = 0


def _is_safe_link(body: str) -> bool:
    """True for `8;params;uri` whose URI is empty (end of link) or has a safe scheme."""
    parts = body.split(";", 2)
    if len(parts) != 3 or parts[0] != "8" or _CONTROL_IN_OSC.search(body):
        return False
    uri = parts[2]
    if not uri:
        return True
    scheme, colon, _ = uri.partition(":")
    return bool(colon) and scheme.lower() in SAFE_LINK_SCHEMES
