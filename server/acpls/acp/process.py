"""The agent subprocess as an explicit state machine: starting → running → exited | failed.

The agent runs in its own process group (so `npx` and whatever it spawns go together) and is told
to die with acpls (`PR_SET_PDEATHSIG`) in case acpls itself is killed; it carries acpls' mark, so
that what it starts, daemons too, is stopped by acpls' watchdog (services/owned_processes.py). Its
stderr is forwarded to acpls' log with a rate limit (a flooding agent must not flood the editor's
log), and the last lines are kept for the error message when it fails. Shutdown is the polite
sequence: close stdin, wait, SIGTERM the group, wait, SIGKILL the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import enum
import errno
import logging
import signal
import time
from collections import deque
from collections.abc import Callable

from acpls.acp.delivery import BlockSink, deliver
from acpls.flow import FlowGate
from acpls.services.owned_processes import OwnedProcesses
from acpls.services.process_group import ON_WINDOWS, spawn_options, stop_group
from acpls.supervisor import TaskSupervisor

logger = logging.getLogger(__name__)
stderr_logger = logging.getLogger("acpls.agent.stderr")

STDERR_TAIL_LINES = 20
STDERR_LINE_MAX = 2000
STDERR_LOG_BUDGET_PER_SECOND = 200
READ_CHUNK = 256 * 1024
DEFAULT_MAX_INPUT_BYTES = 64 * 1024 * 1024
# How much of the agent's command line messages and log lines show: a command line of hundreds of
# kilobytes (too long to start) must not become an error message or log line of that size.
SHOWN_ARG_CHARS = 200
SHOWN_COMMAND_CHARS = 1000


class AgentState(enum.Enum):
    STARTING = "starting"
    RUNNING = "running"
    EXITED = "exited"
    FAILED = "failed"


class AgentStartError(Exception):
    pass


# The agent's stdout pipe (Linux; the default is 64 KiB): a burst it writes (thousands of tool
# calls at once) reaches acpls in large blocks, and follow sees the newest location of each block
# before the block is handled (core/routing.py `look_ahead`).
STDOUT_PIPE_BYTES = 1024 * 1024
# A read at least this large may have more behind it in the pipe: that joins it (`_more_waiting`).
MORE_AFTER_BYTES = 64 * 1024


def _die_with_parent() -> None:
    """Runs in the child before exec: SIGKILL it when acpls goes away, however that happens; and
    widen its stdout pipe (done here, on the child's fd 1, whatever event loop runs acpls)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except OSError:
        pass
    try:
        import fcntl

        fcntl.fcntl(1, getattr(fcntl, "F_SETPIPE_SZ", 1031), STDOUT_PIPE_BYTES)
    except (ImportError, OSError):
        pass


async def _more_waiting(stream: asyncio.StreamReader, data: bytes) -> bytes:
    """A full read: what else is already in the pipe joins it (up to STDOUT_PIPE_BYTES), so a
    burst is handled as one block whose newest location follow sees first."""
    more = await _waiting_output(stream, STDOUT_PIPE_BYTES - len(data))
    return data + more if more else data


async def _waiting_output(stream: asyncio.StreamReader, limit: int) -> bytes:
    """What the agent wrote that acpls has not read yet, up to `limit` bytes; never waits for the
    agent. Each loop turn reads one chunk of the pipe, and runs this task before that read (its
    wake-up was queued first): the pipe is empty once two turns in a row found nothing."""
    parts: list[bytes] = []
    held = idle = 0
    while held < limit and idle < 2:
        await asyncio.sleep(0)
        if not stream._buffer:  # type: ignore[attr-defined]
            idle += 1
            continue
        idle = 0
        more = await stream.read(limit - held)  # returns at once: data is buffered
        if not more:
            break
        parts.append(more)
        held += len(more)
    return b"".join(parts)


class AgentProcess:
    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        on_stdout: BlockSink,
        on_exit: Callable[[AgentProcess], None],
        max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
        output_gate: FlowGate | None = None,
        name: str = "",
        owned: OwnedProcesses | None = None,
    ) -> None:
        self.argv = argv
        # Marks the agent as acpls' (None: unmarked), so that what it starts, even daemons, is
        # found and stopped when acpls ends (services/owned_processes.py).
        self._owned = owned
        # Closed while the editor is behind: the agent's stdout is left unread (flow.py).
        self._output_gate = output_gate if output_gate is not None else FlowGate()
        # Which agent this is, in every log line of it (several agents can run at once).
        self.name = name
        self._tag = f"[{name}] " if name else ""
        self.max_input_bytes = max_input_bytes
        # Why acpls killed the agent itself (it stopped reading its input), for the error message.
        self._kill_reason: str | None = None
        # Called at once when acpls gives up on the agent, before its exit is seen.
        self.on_given_up: Callable[[str], None] | None = None
        # Called with each stderr line (without its line end); must not raise.
        self.on_stderr_line: Callable[[str], None] | None = None
        self.cwd = cwd
        self.env = env
        self.state = AgentState.STARTING
        self.returncode: int | None = None
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._on_stdout = on_stdout
        self._on_exit = on_exit
        self._proc: asyncio.subprocess.Process | None = None
        self._tasks = TaskSupervisor("agent-process")
        self._stopping = False
        self._readers: list[asyncio.Task[None]] = []
        self.failure: str | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def describe(self) -> str:
        return describe_argv(self.argv)

    async def start(self) -> None:
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env if self._owned is None else self._owned.mark(self.env),
                # Its own process group (stopped as one), and on Linux killed with acpls.
                **spawn_options(),
                preexec_fn=None if ON_WINDOWS else _die_with_parent,
                limit=READ_CHUNK,
            )
        except (OSError, ValueError) as exc:
            self.state = AgentState.FAILED
            self.failure = f"could not start `{self.describe()}`: {exc}"
            if isinstance(exc, OSError) and exc.errno == errno.E2BIG:
                size = sum(len(a.encode("utf-8", "replace")) + 1 for a in self.argv)
                env = sum(len(k) + len(v) + 2 for k, v in self.env.items())
                self.failure += (
                    f" (its command line is {size} bytes and its environment {env} bytes:"
                    " too long for the system to start it)"
                )
            raise AgentStartError(self.failure) from exc
        self.state = AgentState.RUNNING
        if self._owned is not None:
            self._owned.spare_group(self._proc.pid)  # stop() stops its group, stdin first
        logger.info("%sagent started: %s (pid %d)", self._tag, self.describe(), self._proc.pid)
        self._readers = [
            self._tasks.spawn("stdout", self._read_stdout()),
            self._tasks.spawn("stderr", self._read_stderr()),
        ]
        self._tasks.spawn("wait", self._wait())

    def write(self, data: bytes) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or self.state is not AgentState.RUNNING:
            logger.debug("agent is not running; dropped %d bytes", len(data))
            return
        if proc.stdin.is_closing() or self._kill_reason is not None:
            return
        try:
            proc.stdin.write(data)
        except (ConnectionError, RuntimeError) as exc:
            # The agent closed its input as it exited (uvloop says RuntimeError: "the handler is
            # closed"); its exit is reported by the waiter.
            logger.debug("%sagent input closed; dropped %d bytes: %s", self._tag, len(data), exc)
            return
        waiting = proc.stdin.transport.get_write_buffer_size()
        if waiting > self.max_input_bytes:
            self._stop_unread(waiting)

    def _stop_unread(self, waiting: int) -> None:
        """An agent that does not read what acpls sends would make acpls buffer without bound."""
        self._kill_reason = (
            f"it stopped reading its input ({waiting} bytes waiting for it, more than"
            f" limits.maxAgentInputBytes = {self.max_input_bytes})"
        )
        logger.error("%sstopping the agent: %s", self._tag, self._kill_reason)
        self._stop_group(force=True)
        if self.on_given_up is not None:
            self.on_given_up(self._kill_reason)

    async def drain(self) -> None:
        proc = self._proc
        if proc and proc.stdin and not proc.stdin.is_closing():
            with contextlib.suppress(ConnectionError, RuntimeError):  # RuntimeError: uvloop
                await proc.stdin.drain()

    async def _read_stdout(self) -> None:
        assert self._proc and self._proc.stdout
        stream = self._proc.stdout
        gate = self._output_gate
        while True:
            if not gate.is_open:
                # The editor is behind: leave the agent's output in its pipe (it blocks there)
                # rather than buffer it here.
                await gate.wait_open()
            data = await stream.read(READ_CHUNK)
            if not data:
                return
            if len(data) >= MORE_AFTER_BYTES:
                data = await _more_waiting(stream, data)
            await deliver(data, self._on_stdout, lambda room: self._arrived(stream, room))

    async def _arrived(self, stream: asyncio.StreamReader, room: int) -> bytes:
        """A loop turn while a block is handled, then what the transport read meanwhile (at most
        `room` bytes, nothing while the editor is behind): acp/delivery.py."""
        if room <= 0 or not self._output_gate.is_open:
            await asyncio.sleep(0)
            return b""
        return await _waiting_output(stream, room)

    async def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        stream = self._proc.stderr
        window_start = time.monotonic()
        logged = suppressed = 0
        pending = b""
        while True:
            data = await stream.read(READ_CHUNK)
            if not data:
                break
            lines = (pending + data).split(b"\n")
            pending = lines.pop()[-STDERR_LINE_MAX:]
            now = time.monotonic()
            if now - window_start >= 1.0:
                if suppressed:
                    stderr_logger.warning(
                        "(%d agent stderr lines not logged: rate limit)", suppressed
                    )
                window_start, logged, suppressed = now, 0, 0
            for raw in lines:
                text = raw[:STDERR_LINE_MAX].decode("utf-8", "replace").rstrip("\r")
                self.stderr_tail.append(text)
                if self.on_stderr_line is not None:
                    self.on_stderr_line(text)
                if logged < STDERR_LOG_BUDGET_PER_SECOND:
                    stderr_logger.info("%s%s", self._tag, text)
                    logged += 1
                else:
                    if not suppressed:
                        stderr_logger.warning(
                            "(agent stderr: more than %d lines a second; not logged: rate limit)",
                            STDERR_LOG_BUDGET_PER_SECOND,
                        )
                    suppressed += 1
        if pending:
            self.stderr_tail.append(pending.decode("utf-8", "replace"))
            if self.on_stderr_line is not None:
                self.on_stderr_line(pending.decode("utf-8", "replace"))
            stderr_logger.info("%s%s", self._tag, pending.decode("utf-8", "replace"))
        if suppressed:
            stderr_logger.warning("(%d agent stderr lines not logged: rate limit)", suppressed)

    async def _wait(self) -> None:
        assert self._proc
        returncode = await self._proc.wait()
        self.returncode = returncode
        if self._owned is not None:
            self._owned.forget_group(self._proc.pid)
        # Let the readers drain what the agent wrote before it died (its last stderr lines are
        # the most useful part of the error message). Children may hold the pipes open: bounded.
        await asyncio.wait(self._readers, timeout=0.5)
        failed = returncode != 0 and not self._stopping
        self.state = AgentState.FAILED if failed or self._kill_reason else AgentState.EXITED
        if self._kill_reason is not None:
            self.failure = f"`{self.describe()}` was stopped by acpls: {self._kill_reason}"
        elif self.state is AgentState.FAILED:
            self.failure = f"`{self.describe()}` {describe_returncode(returncode)}"
        logger.info("%sagent %s (%s)", self._tag, self.state.value, describe_returncode(returncode))
        try:
            self._on_exit(self)
        except Exception:
            logger.exception("agent exit handler failed")

    async def stop(self, grace: float = 1.0) -> None:
        """Close stdin, then SIGTERM, then SIGKILL the agent's process group."""
        proc = self._proc
        self._stopping = True
        if proc is None:
            return
        if proc.returncode is None:
            if proc.stdin and not proc.stdin.is_closing():
                proc.stdin.close()
            if not await self._exited_within(grace):
                self._stop_group(force=False)
                if not await self._exited_within(grace):
                    self._stop_group(force=True)
                    await self._exited_within(grace)
        # The leader may be gone while children linger in its group.
        self._stop_group(force=True)
        await self._tasks.aclose(grace=grace)

    async def _exited_within(self, seconds: float) -> bool:
        assert self._proc
        try:
            await asyncio.wait_for(asyncio.shield(self._proc.wait()), seconds)
            return True
        except TimeoutError:
            return False

    def _stop_group(self, *, force: bool) -> None:
        if self._proc is not None:
            stop_group(self._proc.pid, force=force)


def describe_argv(argv: list[str]) -> str:
    """The command line as messages show it, bounded: a long argument keeps its start and says
    how long it was, and the whole stops at SHOWN_COMMAND_CHARS."""
    shown = []
    for arg in argv:
        if len(arg) > SHOWN_ARG_CHARS:
            arg = f"{arg[: SHOWN_ARG_CHARS // 2]}… ({len(arg)} characters)"
        shown.append(arg)
    text = " ".join(shown)
    if len(text) > SHOWN_COMMAND_CHARS:
        text = f"{text[:SHOWN_COMMAND_CHARS]}… ({len(argv)} arguments)"
    return text


def describe_returncode(code: int | None) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"
