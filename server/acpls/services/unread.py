"""How many bytes acpls wrote to the editor that the editor has not read yet, as the OS counts them.

Editors start acpls with libuv (Neovim, VS Code's node), whose "pipes" for a child's stdio are
AF_UNIX stream socketpairs: the sender's unread count is `SIOCOUTQ` (the same number as
`TIOCOUTQ`), which counts the kernel's buffers for the bytes (a few percent above the bytes).
For a real pipe, `FIONREAD` works on either end. Anything else (a file, a tty, a TCP socket, a
system other than Linux) has no count: `unread_counter` returns None and nothing is paced.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import stat
import struct
import sys
import termios
from collections.abc import Callable

logger = logging.getLogger(__name__)

_INT = struct.Struct("i")


def unread_counter(fd: int) -> Callable[[], int] | None:
    """A function returning how many bytes written to `fd` its reader has not read yet, or None
    when `fd` is not a pipe or a unix stream socket on Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        request = termios.FIONREAD
    elif stat.S_ISSOCK(mode) and _is_unix_stream(fd):
        request = termios.TIOCOUTQ  # SIOCOUTQ
    else:
        return None
    counter = _ioctl_counter(fd, request)
    try:
        counter()
    except OSError as exc:
        logger.debug("no unread count for fd %d (%s)", fd, exc)
        return None
    return counter


def _is_unix_stream(fd: int) -> bool:
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return False
    with sock:
        return sock.family == socket.AF_UNIX and sock.type == socket.SOCK_STREAM


def _ioctl_counter(fd: int, request: int) -> Callable[[], int]:
    zero = _INT.pack(0)

    def unread() -> int:
        return _INT.unpack(fcntl.ioctl(fd, request, zero))[0]

    return unread
