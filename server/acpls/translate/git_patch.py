"""Parser, applier and writer for git's `--patch` text (ACP v2 `git_patch`).

ACP's form has absolute paths without git's `a/` and `b/` prefixes
(`diff --git /p/x.py /p/x.py`, `--- /p/x.py`); git's usual prefixed, relative form is accepted too,
with the prefixes removed.  A plain unified diff (`---`/`+++` without `diff --git`) is read as one
section as well, since agents produce those too.

Lines are split on `\\n` only: a `\\r` before it belongs to the line's content, so CRLF files
round-trip exactly.  Every `HunkLine.text` carries its line's terminator unless `no_newline`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Literal

import attrs

from acpls.translate.text_edits import Block, changed_blocks

HunkOp = Literal[" ", "+", "-"]

DEV_NULL = "/dev/null"

_HUNK_HEADER_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(?: |$)")
_NO_NEWLINE_PREFIX = "\\"
# The header lines git writes between `diff --git` and the first hunk, with the field they set.
_PATH_HEADERS = {
    "rename from ": "rename_from",
    "rename old ": "rename_from",
    "rename to ": "rename_to",
    "rename new ": "rename_to",
    "copy from ": "copy_from",
    "copy to ": "copy_to",
}
_IGNORED_HEADERS = ("index ", "similarity index ", "dissimilarity index ")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


class PatchError(ValueError):
    """Malformed patch text; `line` is the 1-based line of the patch where it was found."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class PatchApplyError(PatchError):
    """The patch does not fit the text it was applied to (its pre-image does not match)."""


@attrs.frozen
class HunkLine:
    op: HunkOp
    text: str
    """The line as in the file: with its terminator (`\\n`, `\\r\\n`) unless `no_newline`."""
    no_newline: bool = False


@attrs.frozen
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[HunkLine, ...]

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.op == "+")

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.op == "-")


@attrs.frozen
class FilePatch:
    """One `diff --git` section.

    `old_path` is None for a new file, `new_path` for a deleted one.
    """

    old_path: str | None
    new_path: str | None
    hunks: tuple[Hunk, ...] = ()
    is_new: bool = False
    is_deleted: bool = False
    is_binary: bool = False
    is_rename: bool = False
    is_copy: bool = False
    old_mode: str | None = None
    new_mode: str | None = None

    @property
    def path(self) -> str:
        """The path the section is about: the new one, or the old one for a deletion."""
        path = self.new_path if self.new_path is not None else self.old_path
        assert path is not None  # the parser never builds a section without any path
        return path

    @property
    def added(self) -> int:
        return sum(hunk.added for hunk in self.hunks)

    @property
    def removed(self) -> int:
        return sum(hunk.removed for hunk in self.hunks)


# ---------------------------------------------------------------------------------------------
# Paths


def _unquote_c_string(quoted: str, line_no: int) -> tuple[str, str]:
    """Decode a git C-quoted string at the start of `quoted`; return (value, rest after it)."""
    assert quoted.startswith('"')
    out = bytearray()
    i = 1
    while i < len(quoted):
        char = quoted[i]
        if char == '"':
            return out.decode("utf-8", "surrogateescape"), quoted[i + 1 :]
        if char != "\\":
            out += char.encode("utf-8", "surrogateescape")
            i += 1
            continue
        escape = quoted[i + 1 : i + 2]
        if escape in _C_ESCAPES:
            out.append(_C_ESCAPES[escape])
            i += 2
        elif re.fullmatch(r"[0-3][0-7][0-7]", quoted[i + 1 : i + 4]):
            out.append(int(quoted[i + 1 : i + 4], 8))
            i += 4
        else:
            raise PatchError(f"bad escape in quoted path {quoted!r}", line_no)
    raise PatchError(f"unterminated quoted path {quoted!r}", line_no)


def _strip_prefix(path: str, prefix: str) -> str:
    """Drop git's `a/`/`b/` prefix from a relative path; ACP's absolute paths have none."""
    if not path.startswith("/") and path.startswith(prefix):
        return path[len(prefix) :]
    return path


def _parse_path(raw: str, prefix: str, line_no: int) -> str | None:
    """A path from a `---`/`+++`/`rename`/`copy` line; None for /dev/null."""
    if raw.startswith('"'):
        path, _rest = _unquote_c_string(raw, line_no)
    else:
        # git ends an unquoted name containing a space with a tab; `diff -u` adds a date after one.
        path = raw.split("\t", 1)[0]
    if not path:
        raise PatchError("empty path", line_no)
    if path == DEV_NULL:
        return None
    return _strip_prefix(path, prefix)


def _split_git_header_paths(rest: str, line_no: int) -> tuple[str, str]:
    """The two names of `diff --git <old> <new>`, prefixes removed.

    Unquoted names may contain spaces, so the split is ambiguous; like git, prefer the split where
    both names are the same (the header of a section that is not a rename).  A rename or copy gets
    its real names from its `rename`/`copy`/`---`/`+++` lines, which are not ambiguous.
    """
    if rest.startswith('"'):
        old, after = _unquote_c_string(rest, line_no)
        after = after.lstrip(" ")
        new = _unquote_c_string(after, line_no)[0] if after.startswith('"') else after
        return _strip_prefix(old, "a/"), _strip_prefix(new, "b/")
    if rest.endswith('"') and ' "' in rest:
        split = rest.index(' "')
        new = _unquote_c_string(rest[split + 1 :], line_no)[0]
        return _strip_prefix(rest[:split], "a/"), _strip_prefix(new, "b/")
    spaces = [i for i, char in enumerate(rest) if char == " "]
    for i in spaces:
        old, new = _strip_prefix(rest[:i], "a/"), _strip_prefix(rest[i + 1 :], "b/")
        if old == new:
            return old, new
    for i in spaces:  # a rename: prefer a split where the second name looks like a name
        if rest[i + 1 :].startswith(("/", "b/")):
            return _strip_prefix(rest[:i], "a/"), _strip_prefix(rest[i + 1 :], "b/")
    if spaces:
        i = spaces[len(spaces) // 2]
        return _strip_prefix(rest[:i], "a/"), _strip_prefix(rest[i + 1 :], "b/")
    raise PatchError(f"cannot read the paths of 'diff --git {rest}'", line_no)


# ---------------------------------------------------------------------------------------------
# Parsing


def _split_patch_lines(text: str) -> list[str]:
    """Split on `\\n` only, keeping it; a last line without one gets one (patch text is lines)."""
    lines = text.split("\n")
    tail = lines.pop()
    result = [line + "\n" for line in lines]
    if tail:
        result.append(tail + "\n")
    return result


def _header_text(line: str) -> str:
    """A header line without its terminator (header lines may come with CRLF from some tools)."""
    return line.rstrip("\n").rstrip("\r")


@attrs.define
class _SectionBuilder:
    """Mutable state of the section being read; turned into a frozen FilePatch at its end."""

    start_line: int
    git_old: str | None = None
    git_new: str | None = None
    minus_path: str | None = None
    plus_path: str | None = None
    saw_minus: bool = False
    saw_plus: bool = False
    rename_from: str | None = None
    rename_to: str | None = None
    copy_from: str | None = None
    copy_to: str | None = None
    is_new: bool = False
    is_deleted: bool = False
    is_binary: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    hunks: list[Hunk] = attrs.Factory(list)

    def build(self) -> FilePatch:
        is_rename = self.rename_from is not None or self.rename_to is not None
        is_copy = self.copy_from is not None or self.copy_to is not None
        old_path = self.rename_from or self.copy_from
        new_path = self.rename_to or self.copy_to
        if old_path is None:
            old_path = self.minus_path if self.saw_minus else self.git_old
        if new_path is None:
            new_path = self.plus_path if self.saw_plus else self.git_new
        if self.is_new or (self.saw_minus and self.minus_path is None):
            old_path = None
        if self.is_deleted or (self.saw_plus and self.plus_path is None):
            new_path = None
        if old_path is None and new_path is None:
            raise PatchError("section names no file", self.start_line)
        return FilePatch(
            old_path=old_path,
            new_path=new_path,
            hunks=tuple(self.hunks),
            is_new=old_path is None,
            is_deleted=new_path is None,
            is_binary=self.is_binary,
            is_rename=is_rename,
            is_copy=is_copy,
            old_mode=self.old_mode,
            new_mode=self.new_mode,
        )


class _Parser:
    def __init__(self, text: str) -> None:
        self.lines = _split_patch_lines(text)
        self.pos = 0  # index of the next line to read
        self.patches: list[FilePatch] = []

    @property
    def line_no(self) -> int:
        """1-based number of the line at `pos`."""
        return self.pos + 1

    def peek(self) -> str | None:
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    def parse(self) -> list[FilePatch]:
        while (line := self.peek()) is not None:
            if line.startswith("diff --git "):
                self.parse_git_section()
            elif line.startswith("--- ") and self._next_starts_with("+++ "):
                self.parse_plain_section()
            elif line.startswith("diff --cc ") or line.startswith("diff --combined "):
                raise PatchError("combined (merge) diffs are not supported", self.line_no)
            else:
                self.pos += 1  # text before the first section (a commit message) is not patch
        return self.patches

    def _next_starts_with(self, prefix: str) -> bool:
        return self.pos + 1 < len(self.lines) and self.lines[self.pos + 1].startswith(prefix)

    def parse_git_section(self) -> None:
        section = _SectionBuilder(start_line=self.line_no)
        rest = _header_text(self.lines[self.pos])[len("diff --git ") :]
        section.git_old, section.git_new = _split_git_header_paths(rest, self.line_no)
        self.pos += 1
        self.parse_extended_headers(section)
        self.parse_file_headers_and_hunks(section)
        self.patches.append(section.build())

    def parse_plain_section(self) -> None:
        section = _SectionBuilder(start_line=self.line_no)
        self.parse_file_headers_and_hunks(section)
        self.patches.append(section.build())

    def parse_extended_headers(self, section: _SectionBuilder) -> None:
        while (line := self.peek()) is not None:
            header = _header_text(line)
            if header.startswith(("--- ", "@@ ", "diff --git ")):
                return
            if header.startswith("new file mode "):
                section.is_new, section.new_mode = True, header.split()[-1]
            elif header.startswith("deleted file mode "):
                section.is_deleted, section.old_mode = True, header.split()[-1]
            elif header.startswith("old mode "):
                section.old_mode = header.split()[-1]
            elif header.startswith("new mode "):
                section.new_mode = header.split()[-1]
            elif header.startswith("Binary files ") and header.endswith(" differ"):
                section.is_binary = True
            elif header == "GIT binary patch":
                section.is_binary = True
                self.skip_binary_payload()
                return
            elif header.startswith(_IGNORED_HEADERS) or not header:
                pass
            elif not self.parse_path_header(section, header):
                raise PatchError(f"unexpected line in patch header: {header!r}", self.line_no)
            self.pos += 1

    def parse_path_header(self, section: _SectionBuilder, header: str) -> bool:
        for prefix, field in _PATH_HEADERS.items():
            if header.startswith(prefix):
                # These names carry no a/ b/ prefix in git's output; strip_prefix keeps them.
                path = _parse_path(header[len(prefix) :], "", self.line_no)
                setattr(section, field, path)
                return True
        return False

    def skip_binary_payload(self) -> None:
        """Skip git's base85 `literal`/`delta` blocks: everything up to the next section."""
        self.pos += 1
        while (line := self.peek()) is not None and not line.startswith("diff --git "):
            self.pos += 1

    def parse_file_headers_and_hunks(self, section: _SectionBuilder) -> None:
        line = self.peek()
        if line is not None and line.startswith("--- "):
            section.saw_minus = True
            section.minus_path = _parse_path(_header_text(line)[4:], "a/", self.line_no)
            self.pos += 1
            line = self.peek()
            if line is None or not line.startswith("+++ "):
                raise PatchError("'---' line without a '+++' line after it", self.line_no)
            section.saw_plus = True
            section.plus_path = _parse_path(_header_text(line)[4:], "b/", self.line_no)
            self.pos += 1
        while (line := self.peek()) is not None:
            if line.startswith("@@ "):
                section.hunks.append(self.parse_hunk())
            elif line.startswith("@@@"):
                raise PatchError("combined (merge) diffs are not supported", self.line_no)
            elif line.startswith("diff --git "):
                return
            elif _header_text(line) == "-- ":
                self.skip_signature()
                return
            elif line.startswith("--- ") and self._next_starts_with("+++ "):
                return  # the next plain unified-diff section
            elif line.startswith(("+", "-", " ", _NO_NEWLINE_PREFIX)):
                raise PatchError("hunk has more lines than its header counts", self.line_no)
            elif self._only_blank_lines_left():
                self.pos = len(self.lines)  # trailing blank lines, as some agents send
            else:
                raise PatchError(f"unexpected line in patch: {_header_text(line)!r}", self.line_no)

    def _only_blank_lines_left(self) -> bool:
        return all(not _header_text(line) for line in self.lines[self.pos :])

    def skip_signature(self) -> None:
        """`git format-patch` ends with `-- ` and git's version: not part of any file."""
        while (line := self.peek()) is not None and not line.startswith("diff --git "):
            self.pos += 1

    def parse_hunk(self) -> Hunk:
        header_line = self.line_no
        match = _HUNK_HEADER_RE.match(_header_text(self.lines[self.pos]))
        if match is None:
            header = _header_text(self.lines[self.pos])
            raise PatchError(f"bad hunk header {header!r}", self.line_no)
        old_start, new_start = int(match[1]), int(match[3])
        old_count = int(match[2]) if match[2] is not None else 1
        new_count = int(match[4]) if match[4] is not None else 1
        self.pos += 1
        lines = self.read_hunk_lines(old_count, new_count, header_line)
        return Hunk(old_start, old_count, new_start, new_count, tuple(lines))

    def read_hunk_lines(self, old_count: int, new_count: int, header_line: int) -> list[HunkLine]:
        lines: list[HunkLine] = []
        old_left, new_left = old_count, new_count
        old_ended = new_ended = False  # a side's no-newline line must be its last line
        while old_left > 0 or new_left > 0 or self._no_newline_marker_next():
            line = self.peek()
            if line is None:
                raise PatchError(
                    f"patch ends inside the hunk starting on line {header_line} "
                    f"({old_left} old and {new_left} new lines missing)",
                    self.line_no,
                )
            if line.startswith(_NO_NEWLINE_PREFIX):
                lines[-1] = self.mark_no_newline(lines)
                old_ended = old_ended or lines[-1].op != "+"
                new_ended = new_ended or lines[-1].op != "-"
                self.pos += 1
                continue
            op, text = self.hunk_line_op(line, header_line)
            uses_old, uses_new = op != "+", op != "-"
            if (uses_old and (old_left == 0 or old_ended)) or (
                uses_new and (new_left == 0 or new_ended)
            ):
                raise PatchError(
                    f"hunk starting on line {header_line} has more lines than its header counts",
                    self.line_no,
                )
            old_left -= uses_old
            new_left -= uses_new
            lines.append(HunkLine(op, text))
            self.pos += 1
        return lines

    def _no_newline_marker_next(self) -> bool:
        line = self.peek()
        return line is not None and line.startswith(_NO_NEWLINE_PREFIX)

    def mark_no_newline(self, lines: Sequence[HunkLine]) -> HunkLine:
        if not lines or lines[-1].no_newline:
            raise PatchError("'\\ No newline at end of file' without a line before", self.line_no)
        last = lines[-1]
        return HunkLine(last.op, last.text.removesuffix("\n"), no_newline=True)

    def hunk_line_op(self, line: str, header_line: int) -> tuple[HunkOp, str]:
        first = line[0]
        if first == " " or first == "+" or first == "-":
            return first, line[1:]
        if line in ("\n", "\r\n"):
            # An empty context line whose leading space was stripped by an editor or mailer;
            # git apply accepts these too.
            return " ", line
        raise PatchError(
            f"unexpected line inside the hunk starting on line {header_line}: "
            f"{_header_text(line)!r}",
            self.line_no,
        )


def parse_git_patch(text: str) -> list[FilePatch]:
    """Parse git `--patch` text into its file sections.  Raises PatchError on malformed input."""
    return _Parser(text).parse()


# ---------------------------------------------------------------------------------------------
# Applying


def split_file_lines(text: str) -> list[str]:
    """Split file text into lines the way git does (on `\\n`), each keeping its terminator."""
    lines = text.split("\n")
    tail = lines.pop()
    result = [line + "\n" for line in lines]
    if tail:
        result.append(tail)
    return result


def _hunk_index(hunk: Hunk) -> int:
    """0-based index of the first old line the hunk covers (or inserts before)."""
    # A hunk without old lines names the line it comes after.
    return hunk.old_start if hunk.old_count == 0 else hunk.old_start - 1


def apply_file_patch(old_text: str, fp: FilePatch) -> str:
    """The post-image of `fp` applied to `old_text`.

    The hunks must match exactly where they say (no fuzz, no offset): a patch whose pre-image is
    not `old_text` raises PatchApplyError, so a stale diff is never applied to a changed file.
    """
    if fp.is_binary:
        raise PatchApplyError(f"{fp.path}: a binary patch cannot be applied as text")
    if fp.is_new and old_text:
        raise PatchApplyError(f"{fp.path}: new file, but there is already text")
    old_lines = split_file_lines(old_text)
    out: list[str] = []
    cursor = 0
    for number, hunk in enumerate(fp.hunks, start=1):
        index = _hunk_index(hunk)
        if index < cursor:
            raise PatchApplyError(f"{fp.path}: hunk {number} overlaps or precedes the one before")
        expected = [line.text for line in hunk.lines if line.op != "+"]
        actual = old_lines[index : index + len(expected)]
        if actual != expected:
            raise PatchApplyError(
                f"{fp.path}: hunk {number} (@@ -{hunk.old_start},{hunk.old_count}) does not match"
            )
        out.extend(old_lines[cursor:index])
        out.extend(line.text for line in hunk.lines if line.op != "-")
        cursor = index + len(expected)
    out.extend(old_lines[cursor:])
    result = "".join(out)
    if fp.is_deleted and result:
        raise PatchApplyError(f"{fp.path}: deleted file, but text is left after the patch")
    return result


def pre_image_matches(old_text: str, fp: FilePatch) -> bool:
    """Whether `fp` applies to `old_text`.  False for a binary section (it cannot be checked)."""
    try:
        apply_file_patch(old_text, fp)
    except PatchApplyError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# Writing


def quote_path(path: str) -> str:
    """Quote a path as git does when it holds a control character, a quote or a backslash."""
    if not any(char in '"\\' or ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        return path
    reverse = {value: key for key, value in _C_ESCAPES.items()}
    out = ['"']
    for byte in path.encode("utf-8", "surrogateescape"):
        if byte in reverse:
            out.append("\\" + reverse[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    out.append('"')
    return "".join(out)


def _file_header_path(path: str | None) -> str:
    if path is None:
        return DEV_NULL
    quoted = quote_path(path)
    # git's trailing tab tells `patch` where a name with spaces ends.
    return quoted + "\t" if " " in path and quoted == path else quoted


def _hunk_range(start: int, count: int) -> str:
    return f"{start}" if count == 1 else f"{start},{count}"


def _hunk_groups(blocks: Sequence[Block], context: int) -> Iterator[list[Block]]:
    """Changed blocks grouped into hunks: blocks closer than two contexts share one hunk."""
    group: list[Block] = []
    for block in blocks:
        if group and block[0] - group[-1][1] > 2 * context:
            yield group
            group = []
        group.append(block)
    if group:
        yield group


def _hunk_text(old_lines: Sequence[str], new_lines: Sequence[str], context: int) -> Iterator[str]:
    for group in _hunk_groups(changed_blocks(old_lines, new_lines), context):
        i1 = max(0, group[0][0] - context)
        i2 = min(len(old_lines), group[-1][1] + context)
        j1 = group[0][2] - (group[0][0] - i1)
        j2 = group[-1][3] + (i2 - group[-1][1])
        # An empty side is numbered by the line it comes after, as in git.
        old_start = i1 + 1 if i2 > i1 else i1
        new_start = j1 + 1 if j2 > j1 else j1
        yield f"@@ -{_hunk_range(old_start, i2 - i1)} +{_hunk_range(new_start, j2 - j1)} @@\n"
        cursor = i1
        for a1, a2, b1, b2 in group:
            yield from _patch_lines(" ", old_lines[cursor:a1])
            yield from _patch_lines("-", old_lines[a1:a2])
            yield from _patch_lines("+", new_lines[b1:b2])
            cursor = a2
        yield from _patch_lines(" ", old_lines[cursor:i2])


def _patch_lines(op: str, lines: Sequence[str]) -> Iterator[str]:
    for line in lines:
        if line.endswith("\n"):
            yield op + line
        else:
            yield op + line + "\n\\ No newline at end of file\n"


def make_git_patch(
    path_old: str | None,
    path_new: str | None,
    old_text: str | None,
    new_text: str | None,
    *,
    context: int = 3,
) -> str:
    """A git_patch section (ACP form: absolute paths, no a/ b/) turning old_text into new_text.

    `old_text`/`path_old` None means a new file, `new_text`/`path_new` None a deleted one; two
    different paths make a rename.  Returns "" when nothing changes.
    """
    if path_old is None and path_new is None:
        raise ValueError("make_git_patch needs at least one path")
    if old_text is None or path_old is None:
        path_old, old_text = None, ""
    if new_text is None or path_new is None:
        path_new, new_text = None, ""
    header_old = path_old if path_old is not None else path_new
    header_new = path_new if path_new is not None else path_old
    assert header_old is not None and header_new is not None
    head = [f"diff --git {quote_path(header_old)} {quote_path(header_new)}\n"]
    if path_old is None:
        head.append("new file mode 100644\n")
    elif path_new is None:
        head.append("deleted file mode 100644\n")
    elif path_old != path_new:
        head.append(f"rename from {quote_path(path_old)}\nrename to {quote_path(path_new)}\n")
    body = list(_hunk_text(split_file_lines(old_text), split_file_lines(new_text), context))
    if not body and len(head) == 1:
        return ""
    if body:
        head.append(f"--- {_file_header_path(path_old)}\n+++ {_file_header_path(path_new)}\n")
    return "".join(head + body)
