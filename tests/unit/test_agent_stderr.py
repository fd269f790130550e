"""translate/agent_stderr.py: which agent stderr lines are sandbox failures the user must see."""

from __future__ import annotations

import pytest

from acpls.translate.agent_stderr import MAX_PROBLEM_CHARS, sandbox_problem

# What codex-acp 0.16.0 wrote with CODEX_HOME under the temporary directory (colours included).
CODEX_APPLY_PATCH = (
    "\x1b[2m2026-12-02T00:59:45.306285Z\x1b[0m \x1b[31mERROR\x1b[0m \x1b[2mcodex_core::tools::"
    "router\x1b[0m\x1b[2m:\x1b[0m \x1b[3merror\x1b[0m\x1b[2m=\x1b[0mapply_patch verification failed:"
    " Failed to read file to update /ws/shop.py: fs sandbox helper failed with status exit status:"
    " 1: bwrap: execvp codex-linux-sandbox: No such file or directory"
)
CODEX_HELPER = (
    "WARNING: proceeding, even though we could not update PATH: Refusing to create helper binaries"
    ' under temporary dir "/tmp" (codex_home: AbsolutePathBuf("/tmp/h/.codex"))'
)


def test_codex_apply_patch_failure_is_cleaned() -> None:
    assert sandbox_problem(CODEX_APPLY_PATCH) == (
        "apply_patch verification failed: Failed to read file to update /ws/shop.py: fs sandbox"
        " helper failed with status exit status: 1: bwrap: execvp codex-linux-sandbox: No such"
        " file or directory"
    )


def test_codex_helper_refusal_is_a_sandbox_problem() -> None:
    assert sandbox_problem(CODEX_HELPER) == CODEX_HELPER


@pytest.mark.parametrize(
    "line",
    [
        "",
        "agent started",
        "Loaded sandbox profile workspace-write",  # sandbox, but nothing failed
        "error: could not reach the model",  # failed, but not the sandbox
        "\x1b[31m\x1b[0m",
    ],
)
def test_other_lines_are_not(line: str) -> None:
    assert sandbox_problem(line) is None


def test_long_lines_are_cut() -> None:
    problem = sandbox_problem("bwrap: failed " + "x" * 2000)
    assert problem is not None and len(problem) == MAX_PROBLEM_CHARS and problem.endswith("…")
