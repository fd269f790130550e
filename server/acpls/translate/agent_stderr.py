"""What in an agent's stderr the user must see: sandbox failures.

Codex (codex-acp) runs every command, and the file reads of its `apply_patch`, inside a sandbox
(bubblewrap and its `codex-linux-sandbox` helper on Linux). When the sandbox cannot run, each tool
call fails and codex-acp sends no `tool_call` for it at all: the failure reaches only the model
and the agent's stderr (`WARNING: ... Refusing to create helper binaries under temporary dir`,
`ERROR codex_core::tools::router: error=apply_patch verification failed: ... fs sandbox helper
failed ...: bwrap: execvp codex-linux-sandbox: No such file or directory`). acpls shows such lines
instead of leaving them in its log. Pure: no I/O.
"""

from __future__ import annotations

import re

__all__ = ["sandbox_problem"]

# Terminal colours (Rust's tracing output is coloured even into a pipe).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_SANDBOX = re.compile(r"sandbox|bwrap|bubblewrap|landlock|seccomp|helper binaries", re.IGNORECASE)
_FAILURE = re.compile(
    r"error|fail|refus|denied|not permitted|no such file|not found|cannot|could not|unable",
    re.IGNORECASE,
)
# A tracing line's prefix: timestamp, level, target (`2026-...Z ERROR codex_core::x: `).
_TRACING_PREFIX = re.compile(r"^\S+Z\s+(?:ERROR|WARN|INFO|DEBUG|TRACE)\s+[\w:]+:\s*")
MAX_PROBLEM_CHARS = 500


def sandbox_problem(line: str) -> str | None:
    """The line, cleaned (no colours, no log prefix, at most MAX_PROBLEM_CHARS), when it reports
    that the agent's sandbox failed; else None."""
    text = _ANSI.sub("", line).strip()
    if not text or not _SANDBOX.search(text) or not _FAILURE.search(text):
        return None
    text = _TRACING_PREFIX.sub("", text)
    if text.startswith("error="):
        text = text[len("error=") :]
    if len(text) > MAX_PROBLEM_CHARS:
        text = text[: MAX_PROBLEM_CHARS - 1] + "…"
    return text
