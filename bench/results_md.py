"""The figure blocks of bench/RESULTS.md that benchmark runs rewrite (issue 18: every figure is
recorded with the revision it was measured at).

Each block sits between `<!-- NAME:begin -->` and `<!-- NAME:end -->`; a run replaces only what
is between its own markers, so the notes written around a block by hand are kept. The VS Code
part (`vscode-extension/test/bench/editors.ts`) writes its block the same way.
"""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS_MD = REPO / "bench" / "RESULTS.md"
NVIM_BLOCK = "editors-nvim"
NVIM_HEADING = "## In a real Neovim (bench/nvim_editor.py, issue 18)"


def replace_block(text: str, name: str, lines: list[str], heading: str) -> str:
    """`text` with the block `name` holding `lines`. A file without the block gets it right under
    `heading` (or, without the heading, the heading and the block at the end)."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = "\n".join([begin, *lines, end])
    at = text.find(begin)
    to = text.find(end, at + len(begin)) if at >= 0 else -1
    if to >= 0:
        return text[:at] + block + text[to + len(end) :]
    at = text.find(heading)
    if at >= 0:
        cut = at + len(heading)
        return f"{text[:cut]}\n\n{block}\n{text[cut:]}"
    return f"{text.rstrip()}\n\n{heading}\n\n{block}\n"


def revision() -> str:
    """The short commit, `+changes` when tracked files differ from it (figures of a work tree
    with edits are not the commit's)."""
    try:
        git = ["git", "-C", str(REPO)]
        rev = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{rev}+changes" if dirty else rev


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def nvim_block(
    figures: list[str], *, runs: int, quick: bool, load_at_start: str, revision: str
) -> list[str]:
    """The Neovim block: when, at which revision, how many runs, how loaded the machine was
    (wall-clock figures under load move with it), then the figure lines as printed."""
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    kind = " --quick (8 MB stream)," if quick else ""
    return [
        f"Neovim (headless `--embed`, pynvim), `make bench-editors`,{kind} {when}, revision"
        f" `{revision}`, {runs} runs each (medians), Python {platform.python_version()};"
        f" load average {load_at_start} at the start, {load_average()} at the end"
        f" ({os.cpu_count()} cores):",
        "",
        "```",
        *figures,
        "```",
    ]


def record_nvim(
    figures: list[str], *, runs: int, quick: bool, load_at_start: str, path: Path = RESULTS_MD
) -> None:
    """Rewrite the Neovim block of RESULTS.md with this run's figure lines."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    lines = nvim_block(
        figures, runs=runs, quick=quick, load_at_start=load_at_start, revision=revision()
    )
    path.write_text(replace_block(text, NVIM_BLOCK, lines, NVIM_HEADING))
