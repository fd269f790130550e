""" "Ask the agent to fix" code actions, pure: built from the diagnostics an editor passes with
`textDocument/codeAction` (`context.diagnostics`, LSP JSON), so every LSP editor gets them.

Each action is an `acpls.prompt` argument: the prompt text names the diagnostic (source, code,
severity, message, 1-based range) and the context holds the code around it and the whole file, which
acpls sends as embedded resources or resource links (core/routing.py). An editor only passes the
diagnostics under the cursor or selection, so "fix all" lists those and asks the agent to find the
file's other problems itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

# Lines of code sent before and after the diagnostic's range.
SURROUNDING_LINES = 10
# How much of a diagnostic's message fits in a code action title (menus are one line).
TITLE_MESSAGE_CHARS = 60
FIX_ALL_TITLE = "Ask the agent to fix all diagnostics in this file"
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


@attrs.frozen
class FixAction:
    title: str
    prompt: dict[str, Any]  # the acpls.prompt argument
    diagnostics: list[dict[str, Any]]  # the diagnostics it fixes, as the editor sent them


def fix_actions(
    uri: str, name: str, diagnostics: Sequence[Any], line_count: int | None
) -> list[FixAction]:
    """One action per diagnostic, then "fix all" (when there is at least one). `name` is how the
    prompt calls the file; `line_count` (None when unknown) bounds the surrounding lines."""
    usable = [d for d in diagnostics if _usable(d)]
    actions = [_fix_one(uri, name, d, line_count) for d in usable]
    if usable:
        actions.append(_fix_all(uri, name, usable))
    return actions


def _fix_one(uri: str, name: str, diagnostic: dict[str, Any], line_count: int | None) -> FixAction:
    text = (
        f"Fix this diagnostic in {name}:\n\n- {describe(diagnostic)}\n\n"
        "The code around it and the whole file are attached."
    )
    context = [{"uri": uri, "range": surrounding(diagnostic["range"], line_count)}, {"uri": uri}]
    title = f"Ask the agent to fix: {_short(diagnostic['message'])}"
    return FixAction(title, {"text": text, "context": context}, [diagnostic])


def _fix_all(uri: str, name: str, diagnostics: list[dict[str, Any]]) -> FixAction:
    listed = "\n".join(f"- {describe(d)}" for d in diagnostics)
    text = (
        f"Fix all the diagnostics in {name}. The editor reported these at the cursor:\n\n"
        f"{listed}\n\nAlso fix any other problem that the project's linters, type checkers or "
        "compiler report in this file. The whole file is attached."
    )
    return FixAction(FIX_ALL_TITLE, {"text": text, "context": [{"uri": uri}]}, diagnostics)


def describe(diagnostic: dict[str, Any]) -> str:
    """`line 3, col 5 to line 3, col 8 (error, pyright reportUndefinedVariable): "x" is not
    defined`: positions 1-based, as compilers print them."""
    rng = diagnostic["range"]
    start, end = rng["start"], rng["end"]
    where = f"line {start['line'] + 1}, col {start.get('character', 0) + 1}"
    if end != start:
        where += f" to line {end['line'] + 1}, col {end.get('character', 0) + 1}"
    origin = [SEVERITIES.get(diagnostic.get("severity"), "")]  # type: ignore[arg-type]
    label = " ".join(
        str(diagnostic[k]) for k in ("source", "code") if diagnostic.get(k) is not None
    )
    origin.append(label)
    details = ", ".join(part for part in origin if part)
    message = diagnostic["message"].strip()
    return f"{where} ({details}): {message}" if details else f"{where}: {message}"


def surrounding(rng: dict[str, Any], line_count: int | None) -> dict[str, Any]:
    """Whole lines from SURROUNDING_LINES before the range to SURROUNDING_LINES after it (the end
    is exclusive: character 0 of the next line)."""
    start = max(rng["start"]["line"] - SURROUNDING_LINES, 0)
    end = rng["end"]["line"] + SURROUNDING_LINES + 1
    if line_count is not None:
        end = min(end, line_count)
    end = max(end, start + 1)
    return {"start": {"line": start, "character": 0}, "end": {"line": end, "character": 0}}


def _short(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else ""
    if len(first) <= TITLE_MESSAGE_CHARS:
        return first
    cut = first[: TITLE_MESSAGE_CHARS - 1]
    if " " in cut[TITLE_MESSAGE_CHARS // 2 :]:  # at a word's end, when there is one near
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


def _usable(diagnostic: Any) -> bool:
    """A diagnostic with a message and an LSP range (editors pass what they have)."""
    if not isinstance(diagnostic, dict) or not isinstance(diagnostic.get("message"), str):
        return False
    rng = diagnostic.get("range")
    return (
        isinstance(rng, dict)
        and all(isinstance(rng.get(k), dict) for k in ("start", "end"))
        and all(
            isinstance(rng[k].get("line"), int) and rng[k]["line"] >= 0 for k in ("start", "end")
        )
        and bool(diagnostic["message"].strip())
    )
