"""Reading a file an agent named, safely: only a regular file is opened, reading is bounded, and a
line window is cut while reading.

An agent controls what its paths are: a FIFO blocks `open(2)` until a writer comes (the event loop,
or a worker thread the process cannot leave at exit, waits forever), `/dev/zero` never ends, a
300 MB log read for one line would be loaded whole. So the file is `stat`-ed first and anything but
a regular file is refused without being opened; the open itself is non-blocking and its `fstat`
must be the same regular file (a swap between the two is refused too); at most `max_bytes` bytes
are read, and a `line`/`limit` window stops reading once it is complete.

Lines are counted as `str.splitlines` counts them (the way fs/read_text_file always has).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
from collections.abc import Callable, Iterator

import attrs

CHUNK_BYTES = 64 * 1024

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class ReadRefused(OSError):
    """The file is not read: it is no regular file, it is longer than the limit allows, or the
    caller's `accept` refused it."""


class NotRegularFile(ReadRefused):
    pass


class TooLarge(ReadRefused):
    pass


# Shown the opened file's `fstat`: None to read it, else why not (the caller's own checks on
# the very file that is read, not on what the path led to a moment earlier).
Accept = Callable[[os.stat_result], "str | None"]


@attrs.frozen
class Window:
    """What a read returned: `text` (the line window asked for), and whether that is the whole
    file (read from its first line to its end)."""

    text: str
    whole: bool


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words the user knows."""
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def open_regular(path: str, *, follow: bool = True, accept: Accept | None = None) -> int:
    """A file descriptor of `path`, opened for reading only when it is a regular file (never a
    FIFO, socket or device: those are refused without being opened). With `follow=False` a
    symbolic link as the last part of `path` is refused. `accept` is shown the opened file's
    `fstat` and may refuse it (saying why). Raises ReadRefused or OSError."""
    before = os.stat(path) if follow else os.lstat(path)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegularFile(f"{path} is {kind_of(before.st_mode)}, not a regular file")
    fd = os.open(path, _FLAGS | (0 if follow else _NOFOLLOW))
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (
            before.st_dev,
            before.st_ino,
        ):
            raise NotRegularFile(f"{path} changed while it was being opened")
        problem = accept(now) if accept is not None else None
        if problem is not None:
            raise ReadRefused(f"{path} {problem}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_window(
    path: str,
    *,
    max_bytes: int,
    line: int | None = None,
    limit: int | None = None,
    follow: bool = True,
    accept: Accept | None = None,
) -> Window:
    """`path`'s UTF-8 text from line `line` (1-based; None or < 1: the first), at most `limit`
    lines (None or < 0: to the end). Reading stops once the window is complete; past `max_bytes`
    bytes read it raises TooLarge. UnicodeDecodeError and OSError as `open` raises them."""
    start = line - 1 if line is not None and line > 0 else 0
    count = limit if limit is not None and limit >= 0 else None
    fd = open_regular(path, follow=follow, accept=accept)
    with contextlib.closing(_FdChunks(fd, path, max_bytes)) as chunks:
        if count == 0:
            return Window("", whole=False)
        if start == 0 and count is None and os.fstat(fd).st_size > max_bytes:
            raise chunks.too_large()  # the whole file is wanted: known too long before reading
        kept: list[str] = []
        for index, piece in enumerate(_lines(chunks), start=1):
            if index > start:
                kept.append(piece)
            if count is not None and index >= start + count:
                return Window("".join(kept), whole=False)
        return Window("".join(kept), whole=start == 0)


def read_text(path: str, *, max_bytes: int, follow: bool = True) -> str:
    """The whole UTF-8 text of a regular file of at most `max_bytes` bytes (see read_window)."""
    return read_window(path, max_bytes=max_bytes, follow=follow).text


class _FdChunks:
    """The decoded text of an open file, chunk by chunk, counting the bytes read."""

    def __init__(self, fd: int, path: str, max_bytes: int) -> None:
        self._fd = fd
        self._path = path
        self._max = max_bytes
        self._read = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")

    def __iter__(self) -> Iterator[str]:
        while True:
            # Never past the limit: a window that ends before it is served; at the limit one
            # byte more tells a file of exactly `max_bytes` from a longer one.
            room = self._max - self._read
            data = os.read(self._fd, min(CHUNK_BYTES, room) if room else 1)
            if data and not room:
                raise self.too_large()
            self._read += len(data)
            text = self._decoder.decode(data, final=not data)
            if text:
                yield text
            if not data:
                return

    def too_large(self) -> TooLarge:
        return TooLarge(f"{self._path} is larger than limits.maxReadBytes ({self._max} bytes)")

    def close(self) -> None:
        os.close(self._fd)


def _lines(chunks: _FdChunks) -> Iterator[str]:
    """The lines (ends kept) of a stream of text, as `str.splitlines(keepends=True)` cuts the
    whole: a line is held back until its end is seen, and a `\\r` at a chunk's end waits for a
    `\\n` that may follow."""
    carry = ""
    for text in chunks:
        pieces = (carry + text).splitlines(keepends=True)
        carry = ""
        if pieces and (_open_ended(pieces[-1]) or pieces[-1].endswith("\r")):
            carry = pieces.pop()
        yield from pieces
    if carry:
        yield carry


def _open_ended(piece: str) -> bool:
    return piece.splitlines()[0] == piece
