"""Throws random and mutated ACP frames at the ACP side of acpls, in process; counts what breaks.

The target is what a real agent talks to: an `AcpProtocol` fed through a `LineReader` (framing
limits included), with acpls' client handlers and the session-update router registered by the
`Hub`, sessions registered in both ACP versions, turns in flight, and an in-memory editor
(`FakeEditor`, a `core.ports.EditorPort`) that serialises every message the way the LSP side would.

Frames come from seeds (the scripts in tests/agents/scripts/, the golden editor fixtures in
editors/fixtures/, and instances sampled from the official ACP schemas' request and notification
types) and from mutations of them: values replaced by other JSON types, keys dropped or added,
ids and session ids shuffled, deep nesting, long strings, control characters, and byte-level damage
(truncation, flipped bytes, invalid UTF-8, two frames on one line).

Counted as failures: an exception escaping `feed_line`, an exception the asyncio loop's exception
handler reports, a traceback logged by acpls (a catch-all caught what the code did not expect),
and an editor message that cannot be serialised. Run `python -m tests.fuzz.frame_fuzzer --frames
100000` for the figures; tests/fuzz/test_frame_fuzzer.py runs it short (make test) and full
(make stress).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import logging
import os
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
from pygls.protocol import default_converter

from acpls.acp.connection import AgentConnection
from acpls.acp.process import AgentState
from acpls.acp.transport import INTERNAL_ERROR, AcpError, LineReader
from acpls.core.hub import Hub
from acpls.editor.messages import register_message_hooks

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tests" / "agents" / "scripts"
FIXTURES = ROOT / "editors" / "fixtures"
SCHEMAS = ROOT / "editors" / "acp-schema"

SESSION_IDS = ("fz-v1-a", "fz-v1-b", "fz-v2-a", "fz-v2-b")
MAX_LINE = 256 * 1024
BATCH = 40

# Schema types an agent sends, and the method each travels under.
SCHEMA_MESSAGES = {
    "SessionNotification": "session/update",
    "UpdateSessionNotification": "session/update",
    "RequestPermissionRequest": "session/request_permission",
    "ReadTextFileRequest": "fs/read_text_file",
    "WriteTextFileRequest": "fs/write_text_file",
    "TerminalOutputRequest": "terminal/output",
    "ReleaseTerminalRequest": "terminal/release",
    "WaitForTerminalExitRequest": "terminal/wait_for_exit",
    "KillTerminalRequest": "terminal/kill",
    "CreateTerminalRequest": "terminal/create",
}
NOTIFICATIONS = {"session/update"}
KNOWN_METHODS = [*sorted(set(SCHEMA_MESSAGES.values())), "$/cancel_request", "_acme/x", "bogus"]


# -- the editor ------------------------------------------------------------------------------------


class FakeEditor:
    """`core.ports.EditorPort` in memory. Every message is serialised as pygls would send it."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.converter = default_converter()
        register_message_hooks(self.converter)
        self.counts: Counter[str] = Counter()
        self.problems: list[str] = []
        self.rng = random.Random(7)

    @property
    def custom_mode(self) -> bool:
        return True

    def supports(self, feature: str) -> bool:
        return False

    @property
    def supports_show_document(self) -> bool:
        return True

    @property
    def supports_create_file(self) -> bool:
        return True

    @property
    def workspace_roots(self) -> list[str]:
        return [self.root]

    def _serialise(self, method: str, params: Any) -> None:
        try:
            payload = self.converter.unstructure(params) if attrs.has(type(params)) else params
            json.dumps({"jsonrpc": "2.0", "method": method, "params": payload})
        except (TypeError, ValueError, RecursionError) as exc:
            self.problems.append(f"{method}: cannot serialise ({type(exc).__name__}: {exc})")
        self.counts[method] += 1

    def notify(self, method: str, params: Any) -> None:
        self._serialise(method, params)

    async def request(self, method: str, params: Any, msg_id: str) -> Any:
        self._serialise(method, params)
        await asyncio.sleep(0)
        options = getattr(params, "options", None) or [{}]
        choice = self.rng.choice([None, options[0].get("optionId"), "nonexistent", 5])
        return {"optionId": choice}

    def cancel_request(self, msg_id: str) -> None:
        self.counts["$/cancelRequest"] += 1

    def show_message(self, level: int, text: str) -> None:
        self.counts["window/showMessage"] += 1

    async def show_message_request(
        self, level: int, message: str, actions: list[str], msg_id: str | None = None
    ) -> str | None:
        self.counts["window/showMessageRequest"] += 1
        return self.rng.choice([None, *actions]) if actions else None

    async def show_document(
        self, uri: str, selection: dict[str, Any] | None, *, take_focus: bool = False
    ) -> None:
        if not uri.startswith("file:///"):
            self.problems.append(f"showDocument of a non-file URI: {uri!r}")
        self.counts["window/showDocument"] += 1

    async def open_external(self, url: str) -> bool:
        self.counts["window/showDocument"] += 1
        return self.rng.random() < 0.5

    async def apply_edit(self, edit: dict[str, Any], label: str) -> tuple[bool, str | None]:
        self._serialise("workspace/applyEdit", {"edit": edit, "label": label})
        return self.rng.random() < 0.8, None

    def open_documents(self) -> dict[str, str]:
        return {}

    async def documents_settled(self, limit_s: float) -> None:
        return

    def document_text(self, uri: str) -> str | None:
        return None


# -- seeds -----------------------------------------------------------------------------------------


def script_seeds() -> list[dict[str, Any]]:
    """Every message the ready-made agent scripts send, as the frame the agent would write."""
    seeds: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("update"), dict):
                params = {"sessionId": "$sessionId", "update": node["update"]}
                seeds.append({"jsonrpc": "2.0", "method": "session/update", "params": params})
            if isinstance(node.get("request"), str):
                seeds.append(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": node["request"],
                        "params": node.get("params"),
                    }
                )
            if isinstance(node.get("send"), dict):
                seeds.append(node["send"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted(SCRIPTS.glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return seeds


def fixture_seeds() -> list[dict[str, Any]]:
    """The editor fixtures' updates, sent back as if an agent spoke acpls' normalised shapes."""
    seeds = []
    for path in sorted(FIXTURES.glob("acpls_sessionUpdate.*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        params = data.get("params", data)
        update = params.get("update") if isinstance(params, dict) else None
        if isinstance(update, dict):
            seeds.append(
                {
                    "jsonrpc": "2.0",
                    "method": "session/update",
                    "params": {"sessionId": "$sessionId", "update": update},
                }
            )
    return seeds


class SchemaSampler:
    """Random instances of a JSON schema's definitions (enough of JSON Schema for ACP's)."""

    def __init__(self, schema: dict[str, Any], rng: random.Random) -> None:
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.rng = rng

    def sample(self, name: str) -> Any:
        return self._value(self.defs[name], 0)

    def _value(self, node: Any, depth: int) -> Any:
        rng = self.rng
        if not isinstance(node, dict) or depth > 12:
            return None
        if "$ref" in node:
            return self._value(self.defs.get(node["$ref"].rsplit("/", 1)[-1], {}), depth + 1)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return rng.choice(node["enum"])
        for key in ("oneOf", "anyOf"):
            if key in node:
                chosen = self._value(rng.choice(node[key]), depth + 1)
                rest = {k: v for k, v in node.items() if k not in (key, "description")}
                if isinstance(chosen, dict) and rest.get("properties"):
                    base = self._value(rest, depth + 1)
                    if isinstance(base, dict):
                        return {**base, **chosen}
                return chosen
        if "allOf" in node:
            merged: dict[str, Any] = {}
            for part in node["allOf"]:
                value = self._value(part, depth + 1)
                if isinstance(value, dict):
                    merged.update(value)
                elif not merged and value is not None:
                    return value
            own = {k: v for k, v in node.items() if k != "allOf"}
            if own.get("properties"):
                base = self._value(own, depth + 1)
                if isinstance(base, dict):
                    merged = {**base, **merged}
            return merged
        kind = node.get("type")
        if isinstance(kind, list):
            kind = rng.choice(kind)
        if kind == "object" or "properties" in node:
            out = {}
            required = set(node.get("required", []))
            for key, sub in node.get("properties", {}).items():
                if key in required or rng.random() < 0.5:
                    out[key] = self._value(sub, depth + 1)
            return out
        if kind == "array":
            return [self._value(node.get("items", {}), depth + 1) for _ in range(rng.randint(0, 3))]
        if kind == "string":
            return rng.choice(["", "x", "/ws/a.py", "hello", "é🦀", "t1", "c1"])
        if kind == "integer":
            return rng.choice([0, 1, 7, -1, 2**31])
        if kind == "number":
            return rng.choice([0.5, 1, -3.25])
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        return None


def schema_seeds(rng: random.Random, per_type: int = 6) -> list[dict[str, Any]]:
    seeds: list[dict[str, Any]] = []
    for version in ("v1", "v2"):
        path = SCHEMAS / version / "schema.json"
        # A missing vendored schema is an error (FileNotFoundError), never a quiet loss of seeds.
        sampler = SchemaSampler(json.loads(path.read_text(encoding="utf-8")), rng)
        for name, method in SCHEMA_MESSAGES.items():
            if name not in sampler.defs:
                continue
            for _ in range(per_type):
                params = sampler.sample(name)
                frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
                if method not in NOTIFICATIONS:
                    frame["id"] = 1
                seeds.append(frame)
    return seeds


# -- mutation --------------------------------------------------------------------------------------


def deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"d": value}
    return value


class Mutator:
    def __init__(
        self,
        rng: random.Random,
        seeds: list[dict[str, Any]],
        live_ids: Callable[[], list[Any]] = list,
    ) -> None:
        self.rng = rng
        self.seeds = seeds
        self.next_id = 0
        # Ids of acpls' requests still waiting: answering those ends turns and other requests.
        self.live_ids = live_ids

    def random_json(self, depth: int = 0) -> Any:
        rng = self.rng
        pick = rng.randrange(12 if depth < 3 else 8)
        return [
            lambda: None,
            lambda: rng.choice([True, False]),
            lambda: rng.choice([0, -1, 1, 2**63, -(2**70), 3.5, float("1e308")]),
            lambda: rng.choice(
                ["", "x", "\x00\x1b]52;c;aGk=\x07", "\u202e", "é🦀", "/../../etc/passwd"]
            ),
            lambda: "y" * rng.choice([1, 100, 10_000]),
            lambda: rng.choice((*SESSION_IDS, "nope")),
            lambda: rng.choice(["file:///etc/passwd", "javascript:alert(1)", "~/x", "rel/path"]),
            lambda: deep(rng.choice([5, 50, 200])),
            lambda: [self.random_json(depth + 1) for _ in range(rng.randint(0, 3))],
            lambda: {
                rng.choice(["a", "sessionUpdate", "content", "_meta", "toolCallId", "path"]): (
                    self.random_json(depth + 1)
                )
                for _ in range(rng.randint(0, 3))
            },
            lambda: rng.choice(self.seeds).get("params"),
            lambda: {"type": rng.choice(["text", "diff", "terminal", "content", "_x"])},
        ][pick]()

    def mutate_value(self, value: Any, budget: int = 3) -> Any:
        rng = self.rng
        if budget <= 0:
            return value
        if isinstance(value, dict) and value and rng.random() < 0.8:
            key = rng.choice(list(value))
            action = rng.randrange(4)
            out = dict(value)
            if action == 0:
                del out[key]
            elif action == 1:
                out[key] = self.random_json()
            elif action == 2:
                out[key] = self.mutate_value(out[key], budget - 1)
            else:
                out[rng.choice(["_meta", "extra", "sessionUpdate", "status", key + "_"])] = (
                    self.random_json()
                )
            return out
        if isinstance(value, list) and value and rng.random() < 0.8:
            out_list = list(value)
            index = rng.randrange(len(out_list))
            action = rng.randrange(3)
            if action == 0:
                del out_list[index]
            elif action == 1:
                out_list[index] = self.mutate_value(out_list[index], budget - 1)
            else:
                out_list.insert(index, self.random_json())
            return out_list
        return self.random_json()

    def frame(self) -> dict[str, Any]:
        rng = self.rng
        frame = copy.deepcopy(rng.choice(self.seeds))
        params = frame.get("params")
        if isinstance(params, dict) and "sessionId" in params:
            params["sessionId"] = rng.choice(SESSION_IDS) if rng.random() < 0.9 else "unknown"
        if "id" in frame:
            self.next_id += 1
            frame["id"] = rng.choice([self.next_id, f"s{self.next_id}", self.next_id % 5])
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            target = rng.random()
            if target < 0.7 and isinstance(frame.get("params"), dict):
                frame["params"] = self.mutate_value(frame["params"], budget=4)
            elif target < 0.8:
                frame["method"] = rng.choice(KNOWN_METHODS)
            elif target < 0.9:
                mutated = self.mutate_value(frame, budget=2)
                if not isinstance(mutated, dict):
                    return {"jsonrpc": "2.0", "junk": mutated}
                frame = mutated
            else:
                frame = self.response()
        return frame

    def response(self) -> dict[str, Any]:
        rng = self.rng
        live = self.live_ids()
        msg_id = rng.choice([rng.randint(1, 60), "acpls-1", None, rng.randint(1, 10**9)])
        if live and rng.random() < 0.6:
            msg_id = rng.choice(live)
            if rng.random() < 0.7:
                return {"jsonrpc": "2.0", "id": msg_id, "result": {"stopReason": "end_turn"}}
        if rng.random() < 0.5:
            return {"jsonrpc": "2.0", "id": msg_id, "result": self.random_json()}
        error = {"code": rng.choice([-32603, -32000, -32800, "x"]), "message": self.random_json()}
        return {"jsonrpc": "2.0", "id": msg_id, "error": error}

    def line(self) -> bytes:
        """One line for the agent's stdout: mostly a frame, sometimes damaged bytes."""
        rng = self.rng
        data = _dumps(self.frame())
        roll = rng.random()
        if roll < 0.06:
            data = data[: rng.randrange(len(data) + 1)]
        elif roll < 0.1:
            data = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            data = bytes(data).replace(b"\n", b" ")
        elif roll < 0.13:
            index = rng.randrange(len(data) + 1)
            data = data[:index] + rng.choice([b"\xff", b"\xc3(", b"\xed\xa0\x80"]) + data[index:]
        elif roll < 0.15:
            data = data + _dumps(self.frame())
        elif roll < 0.16:
            data = b"[" * 5000 + b"]" * 5000
        elif roll < 0.165:
            data = b'"' + b"z" * (MAX_LINE + 10) + b'"'
        return data


def _dumps(frame: Any) -> bytes:
    # json, not orjson: an agent may send integers past 64 bits.
    return json.dumps(frame, ensure_ascii=False).encode("utf-8", "surrogatepass")


# -- the run ---------------------------------------------------------------------------------------


@attrs.define
class FuzzReport:
    frames: int = 0
    bytes_fed: int = 0
    seconds: float = 0.0
    escaped: int = 0
    loop_errors: int = 0
    logged_tracebacks: int = 0
    editor_problems: int = 0
    lines_dropped: int = 0
    prompts_started: int = 0
    prompts_ended: int = 0
    max_rss_mb: float = 0.0
    editor_messages: int = 0
    samples: list[str] = attrs.Factory(list)

    @property
    def exceptions(self) -> int:
        return self.escaped + self.loop_errors + self.logged_tracebacks + self.editor_problems

    def summary(self) -> str:
        rate = self.frames / self.seconds if self.seconds else 0.0
        return (
            f"frames fuzzed: {self.frames} ({self.bytes_fed / 1e6:.1f} MB, {self.seconds:.1f} s,"
            f" {rate:.0f} frames/s); exceptions: {self.exceptions} (escaped feed_line"
            f" {self.escaped}, loop handler {self.loop_errors}, logged tracebacks"
            f" {self.logged_tracebacks}, unserialisable editor messages {self.editor_problems});"
            f" over-long lines dropped: {self.lines_dropped}; prompts started/ended:"
            f" {self.prompts_started}/{self.prompts_ended};"
            f" editor messages: {self.editor_messages};"
            f" max RSS: {self.max_rss_mb:.0f} MiB"
        )


class _TracebackCounter(logging.Handler):
    """Counts records that carry an exception: a catch-all in acpls caught something."""

    def __init__(self, report: FuzzReport) -> None:
        super().__init__(logging.DEBUG)
        self.report = report

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[0] is not None:
            self.report.logged_tracebacks += 1
            if len(self.report.samples) < 20:
                self.report.samples.append(
                    f"{record.name}: {record.getMessage()[:300]}\n{self.format(record)[-1500:]}"
                )


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _terminals_disabled(params: Any) -> Any:
    # Random commands must never run on the machine that fuzzes.
    raise AcpError(INTERNAL_ERROR, "terminal/create is disabled in the frame fuzzer")


def _connect(hub: Hub, root: str) -> AgentConnection:
    """An agent connection whose stdout is the fuzzer and whose stdin is a sink."""
    conn = AgentConnection(
        ["frame-fuzzer"], cwd=root, env={}, max_line_bytes=MAX_LINE, on_exit=lambda c: None
    )
    conn.process.state = AgentState.RUNNING
    conn.protocol.attach_writer(lambda data: None)
    name = hub.settings.agent.name
    hub.agent_requests.register(conn, name, {})
    conn.register({}, {"session/update": hub.router.on_session_update})
    conn.register({"terminal/create": _terminals_disabled}, {})
    slot = hub.processes.slot(name)  # the default agent, as `AgentProcesses._start` sets it
    slot.spec = hub.settings.agent
    slot.conn = conn
    slot.restart_key = hub.processes.restart_key(hub.settings.agent)
    return conn


async def run(frames: int, seed: int = 1, report_every: int = 0) -> FuzzReport:
    """Feed `frames` lines: half to an agent speaking ACP v1, half to one speaking v2."""
    report = FuzzReport()
    loop = asyncio.get_running_loop()

    def on_loop_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        report.loop_errors += 1
        if len(report.samples) < 20:
            report.samples.append(f"loop: {context.get('message')} {context.get('exception')!r}")

    previous_handler = loop.get_exception_handler()
    loop.set_exception_handler(on_loop_error)
    counter = _TracebackCounter(report)
    loggers = [logging.getLogger("acpls"), logging.getLogger("pygls")]
    old_levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(counter)
        lg.setLevel(logging.ERROR)  # the errors are expected; only tracebacks count
        lg.propagate = False
    rng = random.Random(seed)
    mutator = Mutator(rng, script_seeds() + fixture_seeds() + schema_seeds(rng))
    started = time.perf_counter()
    try:
        first = frames // 2
        await _phase(1, first, mutator, rng, report, report_every)
        await _phase(2, frames - first, mutator, rng, report, report_every)
    finally:
        report.seconds = time.perf_counter() - started
        for lg, level in zip(loggers, old_levels, strict=True):
            lg.removeHandler(counter)
            lg.setLevel(level)
            lg.propagate = True
        loop.set_exception_handler(previous_handler)
    report.max_rss_mb = _rss_mb()
    return report


def _workspace(tmp: str) -> str:
    root = os.path.join(tmp, "ws")
    os.mkdir(root)
    Path(root, "a.py").write_text("x = 1\n", encoding="utf-8")
    return root


async def _phase(
    version: int,
    frames: int,
    mutator: Mutator,
    rng: random.Random,
    report: FuzzReport,
    report_every: int,
) -> None:
    with tempfile.TemporaryDirectory(prefix="acpls-fuzz-") as tmp:
        root = _workspace(tmp)
        editor = FakeEditor(root)
        environ = {"HOME": tmp, "PATH": "/usr/bin:/bin"}
        hub = Hub(editor, environ=environ, state_dir=Path(tmp) / "state")
        conn = _connect(hub, root)
        conn.version = version
        for session_id in SESSION_IDS:
            hub._register_session(conn, session_id, root, {})
        mutator.live_ids = lambda: list(conn.protocol._outgoing)
        reader = LineReader(_guarded(conn.protocol.feed_line, report), MAX_LINE)
        prompts: set[asyncio.Task[Any]] = set()
        try:
            for index in range(frames):
                line = mutator.line()
                report.bytes_fed += len(line) + 1
                reader.feed(line + b"\n")
                report.frames += 1
                if index % BATCH == BATCH - 1:
                    _keep_turns_going(hub, prompts, report, rng)
                    await asyncio.sleep(0)
                    await asyncio.sleep(0)
                if report_every and report.frames % report_every == 0:
                    report.max_rss_mb = _rss_mb()
                    print(
                        f"  ... {report.frames} frames, {report.exceptions} exceptions", flush=True
                    )
            await asyncio.sleep(0.05)
        finally:
            await hub.aclose()  # ends every turn: the prompts get their answer
            results = await asyncio.gather(*prompts, return_exceptions=True)
            report.prompts_ended += len(results)
        report.lines_dropped += reader.dropped_lines
        report.editor_problems += len(editor.problems)
        report.samples.extend(editor.problems[:5])
        report.editor_messages += sum(editor.counts.values())


def _guarded(feed: Any, report: FuzzReport) -> Any:
    def feed_line(line: bytes) -> None:
        try:
            feed(line)
        except Exception as exc:  # feed_line promises never to raise: count it, keep going
            report.escaped += 1
            if len(report.samples) < 20:
                report.samples.append(f"escaped: {exc!r} on {line[:200]!r}")

    return feed_line


def _conn_of(hub: Hub) -> AgentConnection:
    conn = hub.processes.running(None)
    assert conn is not None
    return conn


def _keep_turns_going(
    hub: Hub, prompts: set[asyncio.Task[Any]], report: FuzzReport, rng: random.Random
) -> None:
    """A prompt in flight in some sessions, so turn-ending frames have a turn to end; now and
    then the user cancels one."""
    for task in [t for t in prompts if t.done()]:
        prompts.discard(task)
        report.prompts_ended += 1
        if not task.cancelled():
            task.exception()  # retrieved: a failed turn is an answer the editor gets
    for session_id in SESSION_IDS:
        session = hub.sessions.get(session_id)
        if session is None:
            hub._register_session(_conn_of(hub), session_id, hub.workspace_root(), {})
        elif session.turn is None and rng.random() < 0.3:
            prompts.add(asyncio.ensure_future(hub.prompt(session_id, "fuzz", [])))
            report.prompts_started += 1
        elif session.turn is not None and not session.turn.cancel_requested and rng.random() < 0.02:
            asyncio.ensure_future(hub.cancel(session_id)).add_done_callback(_retrieve)


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def iter_lines(count: int, seed: int = 1) -> Iterator[bytes]:
    """The lines a run with this seed feeds (for replaying a failure outside the loop)."""
    rng = random.Random(seed)
    mutator = Mutator(rng, script_seeds() + fixture_seeds() + schema_seeds(rng))
    for _ in range(count):
        yield mutator.line()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fuzz the ACP side of acpls in process")
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    report = asyncio.run(run(args.frames, args.seed, report_every=10_000))
    print(report.summary())
    for sample in report.samples:
        print("---", sample)
    return 1 if report.exceptions else 0


if __name__ == "__main__":
    sys.exit(main())
