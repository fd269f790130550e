"""services/unread.py: the OS's count of bytes the editor has not read, for the kinds of stdout
an editor gives acpls (a libuv socketpair, a pipe), and none for the others (never an error)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from acpls.services.unread import unread_counter


def test_a_unix_socketpair_counts_what_its_peer_has_not_read() -> None:
    ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, peer:
        unread = unread_counter(ours.fileno())
        assert unread is not None
        assert unread() == 0
        ours.sendall(b"x" * 30_000)
        # The kernel counts its buffers for the bytes: a little above them.
        assert 30_000 <= unread() < 40_000
        peer.recv(100_000)
        assert unread() == 0


def test_a_pipe_counts_what_its_reader_has_not_read() -> None:
    read_end, write_end = os.pipe()
    try:
        unread = unread_counter(write_end)
        assert unread is not None
        os.write(write_end, b"y" * 5000)
        assert unread() == 5000
        os.read(read_end, 5000)
        assert unread() == 0
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_file_a_tty_or_a_closed_fd_has_no_count(tmp_path: Path) -> None:
    with (tmp_path / "out").open("wb") as out:
        assert unread_counter(out.fileno()) is None
    leader, follower = os.openpty()
    try:
        assert unread_counter(follower) is None
    finally:
        os.close(leader)
        os.close(follower)
    closed = os.open(os.devnull, os.O_RDONLY)
    os.close(closed)
    assert unread_counter(closed) is None


def test_a_datagram_socket_has_no_count() -> None:
    ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    with ours, peer:
        assert unread_counter(ours.fileno()) is None


def test_elsewhere_than_linux_nothing_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ioctls are Linux's: on another system even a socketpair has no count (no pacing)."""
    monkeypatch.setattr(sys, "platform", "darwin")
    ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with ours, peer:
        assert unread_counter(ours.fileno()) is None
