"""One process on a pseudo-terminal, on each platform: what services/terminals.py runs commands on.

* Linux and macOS: `os.openpty()`; the child leads a new session with the pty's slave side as its
  stdout and stderr (stdin is /dev/null: ACP gives the agent no way to type), and the master is
  read by the asyncio loop (`loop.add_reader`) in bounded chunks.
* Windows: ConPTY through PyPI `pywinpty` (`winpty.PtyProcess`), whose reads block, so one reader
  thread per terminal hands chunks to the loop (`call_soon_threadsafe`) and ends when the pty
  closes; the terminal owns the thread and joins it when it closes.

A `Platform` bundles what differs (how to spawn, how to find and stop the process tree, how a
shell line is run) so that tests run the Windows and macOS paths here, with pywinpty and `ps`
stand-ins where the real thing cannot run.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import struct
import subprocess
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol

import attrs

from acpls.services.process_group import ON_WINDOWS, Runner, stop_group
from acpls.services.process_tree import ProcessTrees, TableReader

log = logging.getLogger(__name__)

READ_CHUNK = 64 * 1024
_JOIN_S = 2.0

OnData = Callable[[bytes], None]
OnEof = Callable[[], None]


class PtyChild(Protocol):
    """A started process on a pty."""

    pid: int

    def start_reading(self, on_data: OnData, on_eof: OnEof) -> None: ...

    def drain(self) -> None:
        """Hand over what is still buffered, now (before the pty closes)."""

    def stop_reading(self) -> None: ...

    async def wait(self) -> int:
        """The exit code; negative: killed by that signal (POSIX)."""
        ...

    def close(self) -> None: ...


# -- POSIX ------------------------------------------------------------------------------------


class PosixPty:
    def __init__(self, process: asyncio.subprocess.Process, master: int) -> None:
        self._process = process
        self._master: int | None = master
        self.pid = process.pid
        self._on_data: OnData | None = None
        self._on_eof: OnEof | None = None
        self._reading = False

    @classmethod
    async def spawn(
        cls, argv: list[str], env: dict[str, str], cwd: str | None, rows: int, columns: int
    ) -> PosixPty:
        import fcntl
        import termios

        master, slave = os.openpty()
        try:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
            os.set_blocking(master, False)
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        # Only the child may hold the slave side, or end of file never comes.
        os.close(slave)
        return cls(process, master)

    def start_reading(self, on_data: OnData, on_eof: OnEof) -> None:
        assert self._master is not None
        self._on_data, self._on_eof = on_data, on_eof
        asyncio.get_running_loop().add_reader(self._master, self._read_chunk)
        self._reading = True

    def _read_chunk(self) -> bool:
        """Read one bounded chunk; False when nothing was there (or the pty is finished)."""
        if self._master is None or not self._reading:
            return False
        try:
            data = os.read(self._master, READ_CHUNK)
        except BlockingIOError:
            return False
        except OSError as exc:
            # EIO: every slave descriptor is closed, i.e. the whole tree let go of the terminal.
            if exc.errno != errno.EIO:
                log.warning("pty of pid %d: read failed: %s", self.pid, exc)
            self._finish()
            return False
        if not data:
            self._finish()
            return False
        assert self._on_data is not None
        self._on_data(data)
        return True

    def _finish(self) -> None:
        self.stop_reading()
        if self._on_eof is not None:
            self._on_eof()

    def drain(self) -> None:
        while self._read_chunk():
            pass

    def stop_reading(self) -> None:
        if self._reading and self._master is not None:
            asyncio.get_running_loop().remove_reader(self._master)
        self._reading = False

    async def wait(self) -> int:
        return await self._process.wait()

    def close(self) -> None:
        self.stop_reading()
        if self._master is not None:
            os.close(self._master)
            self._master = None


# -- Windows: ConPTY through pywinpty ---------------------------------------------------------


class ConPty:
    """A `winpty.PtyProcess` and the thread that reads it."""

    def __init__(self, process: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._process = process
        self._loop = loop
        self.pid: int = int(process.pid)
        self._thread: threading.Thread | None = None
        self._reading = False
        self._closed = False

    @classmethod
    async def spawn(
        cls,
        winpty: ModuleType,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None,
        rows: int,
        columns: int,
    ) -> ConPty:
        process = winpty.PtyProcess.spawn(argv, cwd=cwd, env=env, dimensions=(rows, columns))
        return cls(process, asyncio.get_running_loop())

    def start_reading(self, on_data: OnData, on_eof: OnEof) -> None:
        self._reading = True
        self._thread = threading.Thread(
            target=self._pump, args=(on_data, on_eof), name=f"conpty-{self.pid}", daemon=True
        )
        self._thread.start()

    def _pump(self, on_data: OnData, on_eof: OnEof) -> None:
        """The reader thread: blocking reads until the pty closes. pywinpty decodes UTF-8 (and
        waits for a character's missing bytes), so the text is encoded back for the terminal."""
        try:
            while True:
                text = self._process.read(READ_CHUNK)
                if text and self._reading:
                    self._post(on_data, text.encode("utf-8"))
        except (EOFError, OSError):
            pass
        except Exception:
            log.exception("conpty %d: reader failed", self.pid)
        self._post(on_eof)

    def _post(self, callback: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: acpls is exiting
            self._loop.call_soon_threadsafe(callback, *args)

    def drain(self) -> None:
        # Chunks are posted to the loop as they are read; nothing waits in the pty for us.
        return

    def stop_reading(self) -> None:
        self._reading = False

    async def wait(self) -> int:
        status = await asyncio.to_thread(self._process.wait)
        return int(status) if status is not None else 0

    def close(self) -> None:
        self.stop_reading()
        if self._closed:
            return
        self._closed = True
        try:
            self._process.close(force=True)
        except OSError as exc:
            log.warning("conpty %d: close failed: %s", self.pid, exc)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(_JOIN_S)
            if self._thread.is_alive():
                log.error("conpty %d: reader thread did not end", self.pid)


# -- what differs by platform ---------------------------------------------------------------------


@attrs.frozen
class Platform:
    """How terminals spawn, run shell lines and stop process trees on one platform."""

    windows: bool
    spawn: Callable[..., Any]
    """async (argv, env, cwd, rows, columns) -> PtyChild"""
    trees: ProcessTrees
    """The process table (POSIX); unavailable on Windows, where `taskkill /T` stops the tree."""
    run: Runner = subprocess.run
    """What runs `taskkill` (Windows)."""

    @classmethod
    def current(cls) -> Platform:
        if ON_WINDOWS:
            return cls.for_windows(_import_winpty())
        return cls.for_posix()

    @classmethod
    def for_posix(cls, reader: TableReader | None = None) -> Platform:
        trees = ProcessTrees(reader) if reader is not None else ProcessTrees.of_this_machine()
        return cls(windows=False, spawn=PosixPty.spawn, trees=trees)

    @classmethod
    def for_windows(cls, winpty: ModuleType | None, run: Runner = subprocess.run) -> Platform:
        async def spawn(argv: list[str], env: dict[str, str], cwd: str | None, rows, columns):
            if winpty is None:
                raise OSError(errno.ENOSYS, "terminals on Windows need pywinpty (pip install it)")
            return await ConPty.spawn(winpty, argv, env, cwd, rows, columns)

        return cls(windows=True, spawn=spawn, trees=ProcessTrees(None), run=run)

    def shell_argv(self, line: str, args: list[str]) -> list[str]:
        """A shell line with optional positional arguments."""
        if self.windows:
            tail = " " + subprocess.list2cmdline(args) if args else ""
            # /s: cmd strips the quotes pywinpty puts around the line; /d: no AutoRun commands.
            return ["cmd.exe", "/d", "/s", "/c", line + tail]
        return ["/bin/sh", "-c", f'{line} "$@"' if args else line, "sh", *args]

    def stop_tree(self, pid: int, *, force: bool) -> None:
        """Windows: `taskkill /T` (with `/F` to force)."""
        stop_group(pid, force=force, windows=True, run=self.run)


def _import_winpty() -> ModuleType | None:
    try:
        import winpty  # type: ignore[import-not-found]
    except ImportError:
        log.error("pywinpty is not installed: agent terminals cannot start on this machine")
        return None
    return winpty
