"""The traffic the load agent emits, shared with the editor side so it can check what arrived.

Everything here is deterministic: the load agent generates a stream from a scenario, and the
benchmark's editor regenerates what it must have received (the terminal text's tail, a burst's
final tool-call states) without the agent having to report it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from typing import Any

# A few distinct chunk bodies, cycled: enough variety that nothing can cache one answer.
VARIANTS = 8
WORKSPACE = "/bench/ws"


def chunk_text(size: int, variant: int) -> bytes:
    """`size` bytes of printable terminal output ending in CR LF, with some SGR colour."""
    line = f"\x1b[32mok\x1b[0m {variant:02d} " + "lorem ipsum dolor sit amet consectetur "
    body = (line * (size // len(line) + 2)).encode()
    if size <= 2:
        return b"\r\n"[:size]
    body = body[: size - 2]
    cut = body.rfind(b"\x1b")
    if cut >= 0 and b"m" not in body[cut:]:  # no escape sequence cut in half
        body = body[:cut] + b"." * (len(body) - cut)
    return body + b"\r\n"


def chunk_bodies(size: int) -> list[bytes]:
    return [chunk_text(size, v) for v in range(VARIANTS)]


def expected_tail(size: int, count: int, tail: int) -> bytes:
    """The last `tail` bytes of a stream of `count` chunks of `size` bytes."""
    bodies = chunk_bodies(size)
    parts: list[bytes] = []
    held = 0
    index = count - 1
    while index >= 0 and held < tail:
        part = bodies[index % VARIANTS]
        parts.append(part)
        held += len(part)
        index -= 1
    return b"".join(reversed(parts))[-tail:]


def expected_digest(size: int, count: int, suffix: int | None = None) -> str:
    """The BLAKE2b digest of the text of a stream of `count` chunks of `size` bytes: all of it,
    or its last `suffix` bytes (what an editor holds after a reset: acpls trims the scrollback
    of a terminal the editor cannot keep up with, and says so with `reset`)."""
    bodies = chunk_bodies(size)
    total = size * count
    skip = 0 if suffix is None else max(total - suffix, 0)
    digest = hashlib.blake2b()
    index, offset = divmod(skip, size)
    if offset:
        digest.update(bodies[index % VARIANTS][offset:])
        index += 1
    cycle = b"".join(bodies)
    while index < count and index % VARIANTS:
        digest.update(bodies[index % VARIANTS])
        index += 1
    whole, rest = divmod(count - index, VARIANTS)
    for _ in range(whole):
        digest.update(cycle)
    for extra in range(rest):
        digest.update(bodies[extra])
    return digest.hexdigest()


def terminal_lines(session_id: str, terminal_id: str, size: int, protocol: int) -> list[bytes]:
    """One ndjson line per chunk variant: v2 `terminal_output_chunk`, or for v1 the `_meta`
    terminal extension on `tool_call_update` (what claude-agent-acp sends)."""
    lines = []
    for body in chunk_bodies(size):
        if protocol == 2:
            update: dict[str, Any] = {
                "sessionUpdate": "terminal_output_chunk",
                "terminalId": terminal_id,
                "data": base64.b64encode(body).decode(),
            }
        else:
            update = {
                "sessionUpdate": "tool_call_update",
                "toolCallId": terminal_id,
                "_meta": {"terminal_output": {"terminal_id": terminal_id, "data": body.decode()}},
            }
        lines.append(notification(session_id, update))
    return lines


def terminal_start(session_id: str, terminal_id: str, protocol: int) -> list[bytes]:
    """The tool call that shows the terminal, before its output starts."""
    if protocol == 2:
        return [
            notification(
                session_id,
                {
                    "sessionUpdate": "terminal_update",
                    "terminalId": terminal_id,
                    "command": "yes",
                    "cwd": WORKSPACE,
                },
            ),
            notification(
                session_id,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": terminal_id,
                    "title": "Run yes",
                    "kind": "execute",
                    "status": "in_progress",
                    "content": [{"type": "terminal", "terminalId": terminal_id}],
                },
            ),
        ]
    return [
        notification(
            session_id,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": terminal_id,
                "title": "Run yes",
                "kind": "execute",
                "status": "in_progress",
                "_meta": {"terminal_info": {"terminal_id": terminal_id, "cwd": WORKSPACE}},
            },
        )
    ]


def terminal_end(session_id: str, terminal_id: str, protocol: int) -> list[bytes]:
    """The command exits and its tool call completes, as a real agent ends a terminal."""
    done: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": terminal_id,
        "status": "completed",
    }
    if protocol == 2:
        exited = {
            "sessionUpdate": "terminal_update",
            "terminalId": terminal_id,
            "exitStatus": {"exitCode": 0},
        }
        return [notification(session_id, exited), notification(session_id, done)]
    done["_meta"] = {"terminal_exit": {"terminal_id": terminal_id, "exit_code": 0}}
    return [notification(session_id, done)]


def notification(session_id: str, update: dict[str, Any]) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


# -- tool-call bursts (P5) -------------------------------------------------------------------

STATUSES = ("pending", "in_progress", "in_progress", "in_progress")


def tool_call_updates(updates: int, calls: int, protocol: int) -> Iterator[dict[str, Any]]:
    """`updates` tool-call updates spread round-robin over `calls` tool calls, each with a
    location, a changing title and status, and a final `completed`."""
    for index in range(updates):
        call = index % calls
        step = index // calls
        last_round = index >= updates - calls
        call_id = f"call-{call}"
        update: dict[str, Any] = {
            "sessionUpdate": "tool_call" if protocol == 1 and step == 0 else "tool_call_update",
            "toolCallId": call_id,
            "title": f"Edit file_{call}.py (step {step})",
            "status": "completed" if last_round else STATUSES[step % len(STATUSES)],
            "locations": [{"path": f"{WORKSPACE}/src/file_{call}.py", "line": step % 500 + 1}],
        }
        if step == 0:
            update["kind"] = "edit"
            update["rawInput"] = {"path": f"{WORKSPACE}/src/file_{call}.py"}
        yield update


def final_tool_calls(updates: int, calls: int, protocol: int) -> dict[str, dict[str, Any]]:
    """The agent's state of every tool call once the burst is over (upsert semantics)."""
    states: dict[str, dict[str, Any]] = {}
    for update in tool_call_updates(updates, calls, protocol):
        state = states.setdefault(update["toolCallId"], {})
        for key, value in update.items():
            if key == "sessionUpdate":
                continue
            if value is None:
                state.pop(key, None)
            else:
                state[key] = value
    return states
