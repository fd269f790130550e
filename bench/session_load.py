"""P8: a stored session of N updates loaded through acpls, against the agent's replay read raw.

The agent is tests/agents/speed_agent.py (`session/load` of `chat-<N>-<R>` replays exactly N
`session/update`s). Two figures per size, in the same run:

- acpls: `acpls.loadSession` from the bench editor (bench/editor.py), which declares
  `sessionUpdates` as both front ends do: from the request to its response, by which time every
  `acpls/sessionUpdates` batch of the replay has reached the editor (acpls flushes the session's
  updates before it answers). Beside it, the same load to an editor that does not declare it
  (one `acpls/sessionUpdate` per update, what every front end got before).
- raw: a bare reader that starts the same agent, sends `initialize` and `session/load` and reads
  the replay's lines (`json.loads` of each) until the response: what the agent itself costs.

Every run checks that the editor got every update in order, ending with the agent's last message.
`python bench/session_load.py [--sizes 5000,10000,20000] [--profile OUT.txt]` runs it alone.

`--e4` instead loads Neovim's E4 session (bench/nvim_editor.py `load_script`, the scripted agent)
through acpls alone, the agent started by the load as in E4, once sent at once after `initialized`
(the core is built meanwhile) and once `--built-after` seconds later; per load: the wall time, when
the first update arrived, and over the replay (first to last update) acpls' time on a CPU, runnable
but waiting for one, and asleep (/proc/<pid>/task/*/schedstat), which says whether acpls waits
for anything (the agent, a timer, the editor) or only for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.agents import script_command  # noqa: E402

from bench.editor import Editor, cpu_seconds  # noqa: E402

if TYPE_CHECKING:
    from bench.run import Config, Context, Report

PY = sys.executable
SPEED_AGENT = REPO / "tests" / "agents" / "speed_agent.py"
SIZES = (5000, 10000, 20000)


class Received:
    """What the editor shows of one session: its updates in arrival order, however delivered."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.messages = 0

    def on_update(self, params: dict[str, Any]) -> None:
        self.messages += 1
        self.updates.append(params["update"])

    def on_updates(self, params: dict[str, Any]) -> None:
        self.messages += 1
        self.updates.extend(params["updates"])

    def view(self) -> list[Any]:
        """The conversation as an editor shows it: messages (role, joined text) and tool calls
        (id, title, status) in order of first appearance, each at its last state."""
        items: dict[Any, Any] = {}
        for update in self.updates:
            kind = update.get("sessionUpdate")
            if kind == "message_chunk":
                key = ("message", update["messageId"])
                role, text = items.get(key, (update["role"], ""))
                items[key] = (role, text + update["content"]["text"])
            elif kind == "message":  # a whole message (a replay sends them so)
                text = "".join(block["text"] for block in update["content"])
                items[("message", update["messageId"])] = (update["role"], text)
            elif kind == "tool_call":
                call = update["toolCall"]
                items[("tool", call["toolCallId"])] = (
                    call["toolCallId"],
                    call["title"],
                    call["status"],
                )
        return list(items.values())


def expected_view(size: int, session_id: str) -> list[Any]:
    """What `Received.view` must be after loading `session_id`: the agent's replay with
    consecutive chunks of one role joined into one message."""
    sys.path.insert(0, str(SPEED_AGENT.parent))
    from speed_agent import chat_updates  # type: ignore[import-not-found]

    roles = {"user_message_chunk": "user", "agent_message_chunk": "agent"}
    items: list[Any] = []
    calls: dict[str, int] = {}
    last_role = None
    for update in chat_updates(size, session_id):
        kind = update["sessionUpdate"]
        if kind in roles:
            role, text = roles[kind], update["content"]["text"]
            if last_role == role:
                items[-1] = (role, items[-1][1] + text)
            else:
                items.append((role, text))
            last_role = role
            continue
        last_role = None
        call_id = update["toolCallId"]
        if kind == "tool_call":
            calls[call_id] = len(items)
            items.append((call_id, update["title"], update["status"]))
        else:
            at = calls[call_id]
            items[at] = (call_id, items[at][1], update["status"])
    return items


def acpls_load(
    workspace: Path,
    env: dict[str, str],
    size: int,
    run: int,
    argv: list[str] | None = None,
    batches: bool = True,
) -> dict[str, Any]:
    """One load; `batches`: the editor declares `sessionUpdates` (as both front ends do)."""
    editor = Editor(argv or [PY, "-m", "acpls"], env=env)
    received = Received()
    editor.handlers["acpls/sessionUpdate"] = received.on_update
    editor.handlers["acpls/sessionUpdates"] = received.on_updates
    try:
        agent = {"command": PY, "args": [str(SPEED_AGENT)]}
        features = {"sessionUpdates": True} if batches else None
        editor.initialize(str(workspace), {"agent": agent}, features=features)
        # The agent starts with the first load: a tiny one, so the figure is the replay's alone.
        editor.command("acpls.loadSession", {"sessionId": "chat-1-0"})
        received.updates.clear()
        received.messages = 0
        session_id = f"chat-{size}-{run}"
        cpu_before = cpu_seconds(editor.pid)
        start = time.monotonic()
        editor.command("acpls.loadSession", {"sessionId": session_id})
        seconds = time.monotonic() - start
        cpu = cpu_seconds(editor.pid) - cpu_before
        view = received.view()
        return {
            "seconds": seconds,
            "acpls_cpu": cpu,
            "messages": received.messages,
            "updates": len(received.updates),
            "exact": view == expected_view(size, session_id),
            "last": view[-1][1] if view else None,
        }
    finally:
        editor.close()


def schedstat(pid: int) -> tuple[int, int]:
    """Nanoseconds a process' threads spent on a CPU and runnable waiting for one, so far."""
    ran = waited = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", encoding="ascii") as stat:
                on_cpu, queued, _ = stat.read().split()
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
        ran += int(on_cpu)
        waited += int(queued)
    return ran, waited


class Replay:
    """When each batch of a replay reached the editor, with acpls' schedstat then."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.updates = 0
        self.marks: list[tuple[float, int, int]] = []  # (monotonic, on CPU ns, runnable ns)

    def on_updates(self, params: dict[str, Any]) -> None:
        self._arrived(len(params["updates"]))

    def on_update(self, _params: dict[str, Any]) -> None:
        self._arrived(1)

    def _arrived(self, count: int) -> None:
        self.updates += count
        self.marks.append((time.monotonic(), *schedstat(self.pid)))

    def split(self, start: float) -> dict[str, float]:
        """The replay's wall time (first to last update) split into acpls on a CPU, waiting
        for one, and asleep; and when the first update came after `start`."""
        (t0, run0, wait0), (t1, run1, wait1) = self.marks[0], self.marks[-1]
        on_cpu, runnable = (run1 - run0) / 1e9, (wait1 - wait0) / 1e9
        return {
            "first": t0 - start,
            "replay": t1 - t0,
            "on_cpu": on_cpu,
            "runnable": runnable,
            "asleep": (t1 - t0) - on_cpu - runnable,
        }


def e4_load(workspace: Path, env: dict[str, str], size: int, built_after: float) -> dict[str, Any]:
    """One load of E4's session through acpls alone, sent `built_after` seconds after
    `initialized` (0: at once, as E4 does, while acpls builds its core)."""
    # Imported here: the Neovim bench module needs pynvim, which P8 does not.
    from bench.nvim_editor import load_script

    script = workspace.parent / f"e4-{size}.json"
    script.write_text(json.dumps(load_script(size)))
    editor = Editor([PY, "-m", "acpls"], env=env)
    replay = Replay(editor.pid)
    editor.handlers["acpls/sessionUpdate"] = replay.on_update
    editor.handlers["acpls/sessionUpdates"] = replay.on_updates
    try:
        argv = script_command(script)
        agent = {"command": argv[0], "args": argv[1:]}
        editor.initialize(str(workspace), {"agent": agent}, features={"sessionUpdates": True})
        time.sleep(built_after)
        cpu_before = cpu_seconds(editor.pid)
        start = time.monotonic()
        editor.command("acpls.loadSession", {"sessionId": "old-1"})
        seconds = time.monotonic() - start
        cpu = cpu_seconds(editor.pid) - cpu_before
        assert replay.updates == size, (replay.updates, size)
        return {"seconds": seconds, "acpls_cpu": cpu, **replay.split(start)}
    finally:
        editor.close()


def scratch_workspace(prefix: str) -> tuple[Path, dict[str, str]]:
    """A fresh workspace folder, and the environment that keeps acpls' state beside it."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    workspace = root / "ws"
    workspace.mkdir()
    return workspace, {**os.environ, "XDG_STATE_HOME": str(root / "state"), "PYTHONPATH": str(REPO)}


def measure_e4(sizes: tuple[int, ...], runs: int, built_after: float) -> dict[str, Any]:
    """Per size, alternating: a load at once after `initialized`, one `built_after` later."""
    workspace, env = scratch_workspace("acpls-e4-")
    out: dict[str, Any] = {}
    for size in sizes:
        for _ in range(runs):
            for after in (0.0, built_after):
                load = e4_load(workspace, env, size, after)
                shown = {k: round(v, 3) for k, v in load.items()}
                out.setdefault(f"{size} after {after}", []).append(shown)
    return out


def raw_load(workspace: Path, size: int, run: int) -> dict[str, Any]:
    """The agent's replay read by a bare reader: one `json.loads` per line, nothing else."""
    proc = subprocess.Popen(
        [PY, str(SPEED_AGENT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,
    )
    assert proc.stdin is not None and proc.stdout is not None
    fd = proc.stdout.fileno()
    pending = bytearray()

    def lines() -> Any:
        while True:
            data = os.read(fd, 1 << 20)
            if not data:
                return
            pending.extend(data)
            end = pending.rfind(b"\n") + 1
            if end:
                chunk = bytes(pending[:end])
                del pending[:end]
                yield from chunk.splitlines()

    stream = lines()

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")

    def until(msg_id: int) -> int:
        for count, line in enumerate(stream):
            message = json.loads(line)
            if message.get("id") == msg_id and "method" not in message:
                return count
        raise RuntimeError("the agent closed its output")

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        until(1)
        session_id = f"chat-{size}-{run}"
        start = time.monotonic()
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "session/load",
                "params": {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []},
            }
        )
        updates = until(2)
        return {"seconds": time.monotonic() - start, "updates": updates}
    finally:
        proc.stdin.close()
        proc.wait(10)


def measure(sizes: tuple[int, ...], runs: int, argv: list[str] | None = None) -> dict[int, Any]:
    """Per size: the runs of both, interleaved (raw, acpls, raw, acpls…) so load hits both."""
    workspace, env = scratch_workspace("acpls-load-")
    out: dict[int, Any] = {}
    for size in sizes:
        raws, acplses, singles = [], [], []
        for run in range(1, runs + 1):
            raws.append(raw_load(workspace, size, run))
            acplses.append(acpls_load(workspace, env, size, run, argv))
            singles.append(acpls_load(workspace, env, size, run, argv, batches=False))
        out[size] = {"raw": raws, "acpls": acplses, "single": singles}
    return out


def _median(runs: list[dict[str, Any]], key: str) -> float:
    values = sorted(r[key] for r in runs)
    return values[len(values) // 2]


def bench_p8(ctx: Context, cfg: Config, report: Report) -> None:
    """`make bench`'s P8 line: medians per size, growth per doubling, every load exact."""
    measured = measure(SIZES, cfg.runs)
    rows = []
    for size in SIZES:
        runs = measured[size]
        acpls, raw, single = (_median(runs[k], "seconds") for k in ("acpls", "raw", "single"))
        cpu = _median(runs["acpls"], "acpls_cpu")
        single_cpu = _median(runs["single"], "acpls_cpu")
        messages = max(r["messages"] for r in runs["acpls"])
        single_messages = max(r["messages"] for r in runs["single"])
        rows.append((size, acpls, raw, cpu, messages, single, single_cpu, single_messages))
    exact = all(r["exact"] for m in measured.values() for k in ("acpls", "single") for r in m[k])
    growth = [rows[i + 1][1] / rows[i][1] for i in range(len(rows) - 1)]
    report.figures["p8"] = measured
    last = rows[-1]
    shown = ", ".join(
        f"{n // 1000}k {a:.2f} s (raw {r:.2f} s; acpls CPU {c:.2f} s, {m} messages; one per"
        f" update: {s1:.2f} s, CPU {sc:.2f} s, {sm} messages)"
        for n, a, r, c, m, s1, sc, sm in rows
    )
    report.target(
        f"P8 session load 5k / 10k / 20k updates: {shown};",
        exact and last[1] <= 0.5 and all(g <= 2.5 for g in growth),
        f"x{' x'.join(f'{g:.2f}' for g in growth)} per doubling; every update in order"
        f" {'yes' if exact else 'NO'} (target 20k <= 0.5 s, each doubling <= 2.5x, exact)",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="P8: a long session loaded through acpls")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--profile", type=Path, help="run acpls under pyinstrument, report here")
    parser.add_argument("--acpls", help="the command that runs acpls (another checkout's)")
    parser.add_argument("--e4", action="store_true", help="Neovim E4's session, acpls alone")
    parser.add_argument("--built-after", type=float, default=1.5, help="--e4's later load")
    args = parser.parse_args()
    if args.e4:
        sizes = tuple(int(s) for s in args.sizes.split(","))
        for key, loads in measure_e4(sizes, args.runs, args.built_after).items():
            print(key, json.dumps(loads))
        return 0
    argv = args.acpls.split() if args.acpls else None
    if args.profile is not None:
        argv = [PY, str(REPO / "bench" / "profiled_acpls.py"), str(args.profile)]
    sizes = tuple(int(s) for s in args.sizes.split(","))
    print(json.dumps(measure(sizes, args.runs, argv), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
