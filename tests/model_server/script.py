"""Scripts for the scripted model server: which reply the model gives at each point of a turn.

A script is a JSON file `scripts/<agent>/<scenario>.json`:

    {
      "description": "read, edit, run a command, answer",
      "steps": [
        {"text": "Reading it.", "tools": [{"name": "Read", "input": {"file_path": "${workspace}/shop.py"}}]},
        {"tools": [{"name": "Edit", "input": {"file_path": "...", "old_string": "-", "new_string": "+"}}]},
        {"delay": 0.2, "text": "Done."},
        {"stall": true}
      ],
      "side_text": "OK",
      "side_json": {"next_speaker": "user"}
    }

Step N is the reply to a request whose conversation already holds N assistant turns (see
`framing.progress`). A step has `text`, `tools` (each `{name, input}`; an `input` that is a string
is a freeform/custom tool call, Codex's `apply_patch`), `delay` (seconds before the reply starts)
and `stall` (send the start of the reply, then hold the connection open until the client goes
away: a cancel test's "model is thinking"). `${name}` in any string is replaced by the variables the
test gives (`workspace`, ...); an unknown name is an error, not an empty string.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import attrs

SCRIPTS_DIR = Path(__file__).parent / "scripts"


@attrs.frozen
class ToolCall:
    name: str
    # A dict for function tools; a string for freeform (custom) tools such as Codex's apply_patch.
    input: dict[str, Any] | str
    call_id: str


@attrs.frozen
class Reply:
    text: str | None = None
    tools: tuple[ToolCall, ...] = ()
    delay: float = 0.0
    stall: bool = False

    @property
    def stop_for_tools(self) -> bool:
        return bool(self.tools)


@attrs.frozen
class Script:
    steps: tuple[Reply, ...]
    description: str = ""
    side_text: str = "OK"
    side_json: dict[str, Any] = attrs.field(factory=dict)

    @property
    def tool_names(self) -> frozenset[str]:
        return frozenset(t.name for step in self.steps for t in step.tools)

    def step(self, index: int) -> Reply | None:
        return self.steps[index] if 0 <= index < len(self.steps) else None


class ScriptError(ValueError):
    pass


def script_path(agent: str, scenario: str) -> Path:
    return SCRIPTS_DIR / agent / f"{scenario}.json"


def load_script(agent: str, scenario: str, **variables: str) -> Script:
    """The script `scripts/<agent>/<scenario>.json` with `${name}` replaced by `variables`."""
    path = script_path(agent, scenario)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ScriptError(f"cannot read script {path}: {error}") from error
    return parse_script(raw, variables, origin=str(path))


def parse_script(
    raw: dict[str, Any], variables: dict[str, str] | None = None, *, origin: str = "script"
) -> Script:
    filled = _substitute(raw, variables or {}, origin)
    steps = filled.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ScriptError(f"{origin}: `steps` must be a non-empty list")
    return Script(
        steps=tuple(_parse_step(i, step, origin) for i, step in enumerate(steps)),
        description=str(filled.get("description", "")),
        side_text=str(filled.get("side_text", "OK")),
        side_json=dict(filled.get("side_json", {})),
    )


def _parse_step(index: int, raw: Any, origin: str) -> Reply:
    if not isinstance(raw, dict):
        raise ScriptError(f"{origin}: step {index} must be an object")
    unknown = set(raw) - {"text", "tools", "delay", "stall", "comment"}
    if unknown:
        raise ScriptError(f"{origin}: step {index} has unknown keys {sorted(unknown)}")
    tools = []
    for n, tool in enumerate(raw.get("tools", [])):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ScriptError(f"{origin}: step {index} tool {n} needs a `name`")
        tool_input = tool.get("input", {})
        if not isinstance(tool_input, dict | str):
            raise ScriptError(f"{origin}: step {index} tool {n}: `input` is an object or a string")
        tools.append(ToolCall(tool["name"], tool_input, f"call_s{index}_{n}"))
    return Reply(
        text=raw.get("text"),
        tools=tuple(tools),
        delay=float(raw.get("delay", 0.0)),
        stall=bool(raw.get("stall", False)),
    )


def _substitute(value: Any, variables: dict[str, str], origin: str) -> Any:
    if isinstance(value, str):
        try:
            return string.Template(value).substitute(variables)
        except (KeyError, ValueError) as error:
            raise ScriptError(f"{origin}: no value for {error} in {value!r}") from error
    if isinstance(value, list):
        return [_substitute(v, variables, origin) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, variables, origin) for k, v in value.items()}
    return value
