"""Client-owned terminals: ACP v1 ``terminal/create``, ``output``, ``wait_for_exit``, ``kill``,
``release`` backed by real processes.

Each terminal runs one process on its own pseudo-terminal (so programs see a tty and emit colour)
in its own session and process group (so kill/release reach the whole tree): a POSIX pty on Linux
and macOS, ConPTY on Windows (services/ptys.py). Output is read in bounded chunks; every chunk goes
to ``on_output`` (the lead forwards it to the editor) and into a bounded per-terminal buffer the
agent reads with ``output``.

Choices worth knowing:

* ``command`` with ``args`` is executed directly. ``command`` without ``args`` that is not an
  executable by itself but contains spaces or shell metacharacters is a shell line, run through
  ``/bin/sh -c`` (``cmd.exe /d /s /c`` on Windows; agents send both forms).
* stdin is ``/dev/null``: ACP v1 gives the agent no way to type into a terminal, so a program that
  prompts gets end-of-file at once instead of hanging until the agent gives up. stdout and stderr
  are the pty, which is what decides colour and column layout. ``PAGER``/``GIT_PAGER`` default to
  ``cat`` for the same reason (a pager would wait for a key); the agent's ``env`` can override them.
* Output is kept as the pty produced it (``\\r\\n`` line ends, escape sequences), i.e. what a real
  terminal shows.
* Exit is reported once the process has exited *and* its output has been drained (end of file on
  the pty), or at most ``_DRAIN_AFTER_EXIT_S`` after the exit when a background grandchild keeps the
  pty open.
* Killing takes the process group, every process of the terminal's session, and every descendant
  found in the process table (``/proc``, or ``ps`` on macOS; services/process_tree.py), which
  catches children that started their own session. A process that double-forks *and* leaves the
  session escapes that; on Linux it still carries the terminal's ``ACPLS_OWNER`` mark and acpls'
  watchdog stops it when acpls ends (services/owned_processes.py). On Windows ``taskkill /T``
  ends the tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import shutil
import signal
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from acpls.services.owned_processes import OwnedProcesses
from acpls.services.process_tree import SIGKILL, SIGTERM, Member
from acpls.services.ptys import Platform, PtyChild

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002
INTERNAL_ERROR = -32603

_DRAIN_AFTER_EXIT_S = 0.5
_SHELL_CHARS = frozenset(" \t\n|&;<>()$`\\\"'*?[]#~=%{}!")


@attrs.frozen
class ExitStatus:
    """How a terminal's process ended: an exit code, or the name of the signal that killed it."""

    exit_code: int | None
    signal: str | None

    def to_acp(self) -> dict[str, Any]:
        return {"exitCode": self.exit_code, "signal": self.signal}


@attrs.frozen
class OutputResult:
    """The answer to ``terminal/output``."""

    output: str
    truncated: bool
    exit_status: ExitStatus | None

    def to_acp(self) -> dict[str, Any]:
        result: dict[str, Any] = {"output": self.output, "truncated": self.truncated}
        if self.exit_status is not None:
            result["exitStatus"] = self.exit_status.to_acp()
        return result


class TerminalError(Exception):
    """A terminal request that cannot be served; ``code`` is the JSON-RPC error code to answer."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


OutputCallback = Callable[[str, str, bytes], None]
ExitCallback = Callable[[str, str, ExitStatus], None]


class ClientTerminals:
    """All client-owned terminals of one acpls process, keyed by (session id, terminal id)."""

    def __init__(
        self,
        *,
        base_env: dict[str, str],
        on_output: OutputCallback,
        on_exit: ExitCallback,
        max_output_bytes: int = 4 * 1024 * 1024,
        kill_grace_s: float = 2.0,
        columns: int = 120,
        rows: int = 40,
        platform: Platform | None = None,
        owned: OwnedProcesses | None = None,
    ) -> None:
        self._base_env = dict(base_env)
        # Marks every terminal's processes as acpls' (None: unmarked): services/owned_processes.py.
        self._owned = owned
        self._on_output = on_output
        self._on_exit = on_exit
        self._max_output_bytes = max_output_bytes
        self._kill_grace_s = kill_grace_s
        self._size = (rows, columns)
        self._platform = platform if platform is not None else Platform.current()
        self._terminals: dict[tuple[str, str], _Terminal] = {}
        self._ids = itertools.count(1)
        self._closed = False
        self._closing: set[asyncio.Future[None]] = set()  # closes under way (_close_keys)

    # -- ACP requests -------------------------------------------------------------------------

    async def create(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[dict[str, Any]] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        """Start ``command`` and return the new terminal's id."""
        if self._closed:
            raise TerminalError(INTERNAL_ERROR, "terminals are shut down")
        limit = self._check_limit(output_byte_limit)
        work_dir = _check_cwd(cwd)
        full_env = self._environment(env)
        argv = _argv(command, args or [], full_env, work_dir, self._platform)
        terminal_id = f"term_{next(self._ids)}"
        terminal = _Terminal(self, session_id, terminal_id, limit)
        await terminal.start(argv, full_env, work_dir, self._size)
        if self._closed:  # aclose() ran while the process was starting
            await terminal.close(self._kill_grace_s)
            raise TerminalError(INTERNAL_ERROR, "terminals are shut down")
        self._terminals[(session_id, terminal_id)] = terminal
        log.info("terminal %s started: %s (pid %d)", terminal_id, argv, terminal.pid)
        return terminal_id

    def output(self, session_id: str, terminal_id: str) -> OutputResult:
        return self._get(session_id, terminal_id).result()

    async def wait_for_exit(self, session_id: str, terminal_id: str) -> ExitStatus:
        return await self._get(session_id, terminal_id).wait()

    async def kill(self, session_id: str, terminal_id: str) -> None:
        """Stop the process tree; the terminal stays valid for ``output`` and ``wait_for_exit``."""
        await self._get(session_id, terminal_id).kill(self._kill_grace_s)

    async def release(self, session_id: str, terminal_id: str) -> None:
        """Stop the process tree and forget the terminal; later calls for its id fail."""
        terminal = self._terminals.pop((session_id, terminal_id), None)
        if terminal is None:
            raise _unknown(session_id, terminal_id)
        await terminal.close(self._kill_grace_s)

    # -- lifecycle ----------------------------------------------------------------------------

    async def close_session(self, session_id: str) -> None:
        """Release every terminal of a session (the session ended)."""
        keys = [key for key in self._terminals if key[0] == session_id]
        await self._close_keys(keys)

    async def kill_all(self) -> None:
        """Release every terminal of every session (the agent exited)."""
        await self._close_keys(list(self._terminals))

    async def aclose(self) -> None:
        """Release everything and refuse new terminals (acpls is exiting); also waits for the
        closes already under way (a session's end started them), which are no longer listed."""
        self._closed = True
        await self.kill_all()
        while self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    def kill_all_now(self) -> None:
        """SIGKILL every process tree at once, without the loop: for ``atexit`` and signal paths."""
        for terminal in list(self._terminals.values()):
            terminal.kill_tree_now()

    def terminal_ids(self, session_id: str) -> list[str]:
        return [tid for sid, tid in self._terminals if sid == session_id]

    # -- helpers ------------------------------------------------------------------------------

    async def _close_keys(self, keys: Iterable[tuple[str, str]]) -> None:
        terminals = [t for key in keys if (t := self._terminals.pop(key, None)) is not None]
        if not terminals:
            return
        # Its own task, shielded: a caller cancelled meanwhile (a session's close task when acpls
        # shuts down) must not stop a kill in its grace period, between SIGTERM and SIGKILL;
        # aclose() waits for it.
        closing = asyncio.ensure_future(self._close_terminals(terminals))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)
        await asyncio.shield(closing)

    async def _close_terminals(self, terminals: list[_Terminal]) -> None:
        results = await asyncio.gather(
            *(t.close(self._kill_grace_s) for t in terminals), return_exceptions=True
        )
        for terminal, result in zip(terminals, results, strict=True):
            if isinstance(result, BaseException):
                log.error("closing terminal %s failed: %r", terminal.terminal_id, result)

    def _get(self, session_id: str, terminal_id: str) -> _Terminal:
        terminal = self._terminals.get((session_id, terminal_id))
        if terminal is None:
            raise _unknown(session_id, terminal_id)
        return terminal

    def _check_limit(self, output_byte_limit: int | None) -> int:
        if output_byte_limit is None:
            return self._max_output_bytes
        if isinstance(output_byte_limit, bool) or not isinstance(output_byte_limit, int):
            raise TerminalError(INVALID_PARAMS, "outputByteLimit must be an integer")
        if output_byte_limit < 0:
            raise TerminalError(INVALID_PARAMS, "outputByteLimit must not be negative")
        return min(output_byte_limit, self._max_output_bytes)

    def _environment(self, env: list[dict[str, Any]] | None) -> dict[str, str]:
        full = dict(self._base_env)
        full["TERM"] = "xterm-256color"
        full.setdefault("COLORTERM", "truecolor")
        full["PAGER"] = "cat"
        full["GIT_PAGER"] = "cat"
        for item in env or []:
            name, value = _env_item(item)
            full[name] = value
        return full

    def _emit_output(self, terminal: _Terminal, data: bytes) -> None:
        try:
            self._on_output(terminal.session_id, terminal.terminal_id, data)
        except Exception:
            log.exception("on_output callback failed for terminal %s", terminal.terminal_id)

    def _emit_exit(self, terminal: _Terminal, status: ExitStatus) -> None:
        try:
            self._on_exit(terminal.session_id, terminal.terminal_id, status)
        except Exception:
            log.exception("on_exit callback failed for terminal %s", terminal.terminal_id)


class _Terminal:
    """One process on one pty, its bounded output buffer and its owned waiter task."""

    def __init__(self, owner: ClientTerminals, session_id: str, terminal_id: str, limit: int):
        self.owner = owner
        self.platform = owner._platform
        self.session_id = session_id
        self.terminal_id = terminal_id
        self.limit = limit
        self.buffer = bytearray()
        self.truncated = False
        self.exit_status: ExitStatus | None = None
        self.exited = asyncio.Event()
        self.eof = asyncio.Event()
        self.pid = 0
        self.start_time: int | str | None = None
        self._child: PtyChild | None = None
        self._waiter: asyncio.Task[None] | None = None

    async def start(
        self, argv: list[str], env: dict[str, str], cwd: str | None, size: tuple[int, int]
    ) -> None:
        # Marked last, over the agent's `env`: the tree is found and stopped when acpls ends, even
        # a daemon that left the terminal's session (services/owned_processes.py).
        if self.owner._owned is not None:
            env = self.owner._owned.mark(env)
        try:
            child: PtyChild = await self.platform.spawn(argv, env, cwd, *size)
        except (OSError, ValueError) as exc:
            raise _spawn_error(argv[0], exc) from exc
        self._child = child
        self.pid = child.pid
        self.start_time = self.platform.trees.start_time(self.pid)
        child.start_reading(self._on_data, self.eof.set)
        self._waiter = asyncio.create_task(self._wait_process(), name=f"{self.terminal_id}-wait")

    # -- output -------------------------------------------------------------------------------

    def _on_data(self, data: bytes) -> None:
        self._append(data)
        self.owner._emit_output(self, data)

    def _append(self, data: bytes) -> None:
        if self.limit == 0:
            self.truncated = True
            return
        self.buffer += data
        excess = len(self.buffer) - self.limit
        if excess > 0:
            del self.buffer[:excess]
            self.truncated = True

    def result(self) -> OutputResult:
        return OutputResult(
            output=_decode_tail(self.buffer, self.truncated),
            truncated=self.truncated,
            exit_status=self.exit_status,
        )

    # -- exit ---------------------------------------------------------------------------------

    async def _wait_process(self) -> None:
        assert self._child is not None
        returncode = await self._child.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.eof.wait(), _DRAIN_AFTER_EXIT_S)
        self.exit_status = _exit_status(returncode)
        self.exited.set()
        log.info("terminal %s exited: %s", self.terminal_id, self.exit_status)
        self.owner._emit_exit(self, self.exit_status)

    async def wait(self) -> ExitStatus:
        await self.exited.wait()
        if self.exit_status is None:
            # Released while waiting, and the process never reported its end.
            raise _unknown(self.session_id, self.terminal_id)
        return self.exit_status

    async def kill(self, grace_s: float) -> None:
        if self.platform.windows:
            await self._kill_windows(grace_s)
        else:
            await self._kill_posix(grace_s)
        if self._waiter is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._waiter), grace_s + 5.0)
            except TimeoutError:
                log.error("terminal %s: process %d does not exit", self.terminal_id, self.pid)

    async def _kill_posix(self, grace_s: float) -> None:
        trees = self.platform.trees
        tree = self._tree()
        if not tree:
            return
        trees.signal(self.pid, tree, SIGTERM)
        survivors = await trees.wait_gone(tree, grace_s)
        if survivors:
            log.info("terminal %s: SIGKILL for %d process(es)", self.terminal_id, len(tree))
            trees.signal(self.pid, survivors | self._tree(), SIGKILL)

    async def _kill_windows(self, grace_s: float) -> None:
        if self.exited.is_set() or self._waiter is None:
            return
        await asyncio.to_thread(self.platform.stop_tree, self.pid, force=False)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._waiter), grace_s)
        if not self._waiter.done():
            log.info("terminal %s: taskkill /F for process %d", self.terminal_id, self.pid)
            await asyncio.to_thread(self.platform.stop_tree, self.pid, force=True)

    def kill_tree_now(self) -> None:
        if self.platform.windows:
            self.platform.stop_tree(self.pid, force=True)
        else:
            self.platform.trees.signal(self.pid, self._tree(), SIGKILL)

    async def close(self, grace_s: float) -> None:
        try:
            await self.kill(grace_s)
        finally:
            if self._child is not None:
                self._child.drain()
                self._child.close()
            self.eof.set()
            if self._waiter is not None and not self._waiter.done():
                self._waiter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._waiter
            self.exited.set()  # wake any wait_for_exit still pending

    def _tree(self) -> set[Member]:
        """(pid, start time) of every live process that belongs to this terminal."""
        return self.platform.trees.tree(self.pid, self.start_time)


# -- command line and environment ---------------------------------------------------------


def _argv(
    command: str, args: list[str], env: dict[str, str], cwd: str | None, platform: Platform
) -> list[str]:
    if not isinstance(command, str) or not command.strip():
        raise TerminalError(INVALID_PARAMS, "command must be a non-empty string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise TerminalError(INVALID_PARAMS, "args must be a list of strings")
    if any("\0" in part for part in (command, *args)):
        raise TerminalError(INVALID_PARAMS, "command and args must not contain NUL bytes")
    executable = _find_executable(command, env, cwd, windows=platform.windows)
    if executable is not None:
        return [executable, *args]
    if any(ch in _SHELL_CHARS for ch in command):
        # A shell line; args (rare with this form) become the line's positional parameters.
        return platform.shell_argv(command, args)
    raise TerminalError(INVALID_PARAMS, f"command not found: {command}")


def _find_executable(
    command: str, env: dict[str, str], cwd: str | None, *, windows: bool = False
) -> str | None:
    if "/" in command or (windows and ("\\" in command or command[1:2] == ":")):
        path = command if os.path.isabs(command) else os.path.join(cwd or os.getcwd(), command)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        return None
    return shutil.which(command, path=env.get("PATH", os.defpath))


def _check_cwd(cwd: str | None) -> str | None:
    if cwd is None:
        return None
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise TerminalError(INVALID_PARAMS, f"cwd must be an absolute path: {cwd!r}")
    if not os.path.isdir(cwd):
        raise TerminalError(INVALID_PARAMS, f"cwd does not exist or is not a directory: {cwd}")
    return cwd


def _env_item(item: Any) -> tuple[str, str]:
    if not isinstance(item, dict):
        raise TerminalError(INVALID_PARAMS, "env entries must be objects with name and value")
    name, value = item.get("name"), item.get("value")
    if not isinstance(name, str) or not name or "=" in name or "\0" in name:
        raise TerminalError(INVALID_PARAMS, f"invalid environment variable name: {name!r}")
    if not isinstance(value, str) or "\0" in value:
        raise TerminalError(INVALID_PARAMS, f"invalid value for environment variable {name}")
    return name, value


def _spawn_error(command: str, exc: OSError | ValueError) -> TerminalError:
    if isinstance(exc, FileNotFoundError):
        return TerminalError(INVALID_PARAMS, f"command not found: {command}")
    if isinstance(exc, PermissionError):
        return TerminalError(INVALID_PARAMS, f"permission denied: {command}")
    if isinstance(exc, OSError):
        return TerminalError(INTERNAL_ERROR, f"cannot start {command}: {exc.strerror or exc}")
    return TerminalError(INVALID_PARAMS, f"cannot start {command}: {exc}")


def _unknown(session_id: str, terminal_id: str) -> TerminalError:
    return TerminalError(
        RESOURCE_NOT_FOUND,
        f"unknown terminal {terminal_id!r} in session {session_id!r} (never created or released)",
    )


# -- output decoding ----------------------------------------------------------------------


def _decode_tail(buffer: bytearray, truncated: bool) -> str:
    """Decode the buffer; a truncated start that cut a character is skipped, and an incomplete
    character at the end (the rest is still on its way) is left out."""
    start = 0
    if truncated:
        while start < min(len(buffer), 3) and (buffer[start] & 0xC0) == 0x80:
            start += 1
    end = len(buffer) - _incomplete_tail(buffer)
    return bytes(buffer[start:end]).decode("utf-8", errors="replace")


def _incomplete_tail(buffer: bytearray) -> int:
    """Length of a UTF-8 sequence at the end of ``buffer`` that still misses bytes."""
    for back in range(1, min(4, len(buffer)) + 1):
        byte = buffer[-back]
        if byte & 0xC0 == 0x80:
            continue
        if byte >= 0xF0:
            needed = 4
        elif byte >= 0xE0:
            needed = 3
        elif byte >= 0xC0:
            needed = 2
        else:
            needed = 1
        return back if back < needed else 0
    return 0


def _exit_status(returncode: int) -> ExitStatus:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"SIG{-returncode}"
        return ExitStatus(exit_code=None, signal=name)
    return ExitStatus(exit_code=returncode, signal=None)
