"""The "ask the agent" code actions that are not fixes, pure: one for a selection, and one for an
`@agent <question>` comment on the cursor's line (its question sent with the 20 lines around it).

Each is a title and the `acpls.prompt` argument it runs; editor/code_actions.py makes them LSP
code actions.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

AGENT_COMMENT = re.compile(r"@agent\b[:\s]*(?P<question>.*)$")
# Lines of code sent before and after an @agent comment.
COMMENT_CONTEXT_LINES = 20
TITLE_QUESTION_CHARS = 60
SELECTION_TITLE = "Ask the agent about this selection…"
SELECTION_PROMPT = "Explain this code."


@attrs.frozen
class PromptAction:
    title: str
    prompt: dict[str, Any]  # the acpls.prompt argument: {text, context}


def _is_empty(rng: dict[str, Any]) -> bool:
    start, end = rng["start"], rng["end"]
    return (start["line"], start["character"]) == (end["line"], end["character"])


def selection_action(uri: str, rng: dict[str, Any]) -> PromptAction | None:
    """ "Ask the agent about this selection…" for a non-empty range (LSP JSON)."""
    if _is_empty(rng):
        return None
    return PromptAction(
        SELECTION_TITLE, {"text": SELECTION_PROMPT, "context": [{"uri": uri, "range": rng}]}
    )


def agent_comment_action(uri: str, text: str, line: int) -> PromptAction | None:
    """ "Send to agent: …" when `line` of `text` holds `@agent <question>` (any comment syntax)."""
    lines = text.splitlines()
    if line >= len(lines):
        return None
    match = AGENT_COMMENT.search(lines[line])
    if match is None or not match.group("question").strip():
        return None
    question = match.group("question").strip().rstrip("*/#-> ").strip()
    context_range = {
        "start": {"line": max(line - COMMENT_CONTEXT_LINES, 0), "character": 0},
        "end": {"line": min(line + COMMENT_CONTEXT_LINES + 1, len(lines)), "character": 0},
    }
    return PromptAction(
        f"Send to agent: {question[:TITLE_QUESTION_CHARS]}",
        {"text": question, "context": [{"uri": uri, "range": context_range}]},
    )
