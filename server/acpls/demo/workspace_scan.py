"""What the demo agent looks at in the session's working directory, and the edit it proposes.

Pure functions over paths and text (no protocol): the agent reads the sample project shipped in
`acpls/demo/workspace/` when the working directory holds it, and otherwise works on whatever Python
files it finds there, proposing only a non-destructive change (a notes file of its own).
"""

from __future__ import annotations

import difflib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

SAMPLE_WORKSPACE = Path(__file__).with_name("workspace")
NOTES_FILE = "DEMO_NOTES.md"

_SKIPPED_DIRS = {"node_modules", "__pycache__", "venv", "build", "dist", "site-packages"}
_MAX_DEPTH = 3
_MAX_ENTRIES = 2000
_SUBTRACT_BUG = re.compile(r"^(?P<indent>\s*)return a \+ b\s*$")


def copy_sample_workspace(destination: Path) -> Path:
    """Copy the sample project into `destination` (created if needed); return `destination`."""
    destination.mkdir(parents=True, exist_ok=True)
    for source in sorted(SAMPLE_WORKSPACE.iterdir()):
        if source.is_file():
            shutil.copyfile(source, destination / source.name)
    return destination


def find_python_files(root: Path, limit: int = 20) -> list[Path]:
    """Up to `limit` .py files under `root` (shallow first, hidden and vendored dirs skipped)."""
    found: list[Path] = []
    level = [root]
    visited = 0
    for _depth in range(_MAX_DEPTH):
        next_level: list[Path] = []
        for directory in level:
            try:
                entries = sorted(directory.iterdir())
            except OSError:
                continue
            for entry in entries:
                visited += 1
                if visited > _MAX_ENTRIES or len(found) >= limit:
                    return found
                if entry.name.startswith("."):
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    if entry.name not in _SKIPPED_DIRS:
                        next_level.append(entry)
                elif entry.suffix == ".py" and entry.is_file():
                    found.append(entry)
        level = next_level
    return found


def is_sample_project(root: Path) -> bool:
    return (root / "calc.py").is_file() and (root / "test_calc.py").is_file()


def first_line_matching(text: str, pattern: str) -> int | None:
    """1-based number of the first line containing `pattern`, or None."""
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern in line:
            return number
    return None


@dataclass(frozen=True)
class ProposedEdit:
    path: Path
    old_text: str | None  # None: the file is new
    new_text: str
    line: int  # 1-based line the edit is about
    title: str
    explanation: str


def find_subtract_bug(text: str) -> int | None:
    """1-based line of `return a + b` inside `def subtract`, the sample project's bug."""
    lines = text.splitlines()
    start = first_line_matching(text, "def subtract(")
    if start is None:
        return None
    for index in range(start, len(lines)):
        if lines[index].lstrip().startswith("def "):
            return None
        if _SUBTRACT_BUG.match(lines[index]):
            return index + 1
    return None


def fix_subtract(path: Path, text: str) -> ProposedEdit | None:
    line = find_subtract_bug(text)
    if line is None:
        return None
    lines = text.splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace("a + b", "a - b")
    return ProposedEdit(
        path=path,
        old_text=text,
        new_text="".join(lines),
        line=line,
        title=f"Fix subtract() in {path.name}",
        explanation="`subtract()` returns `a + b`; it should return `a - b`.",
    )


def notes_edit(root: Path, current: str | None, reviewed: list[Path]) -> ProposedEdit:
    """Create or extend the agent's own notes file: the one edit that is safe in any project."""
    names = ", ".join(path.relative_to(root).as_posix() for path in reviewed) or "no Python files"
    entry = f"- Reviewed {names}.\n"
    if current is None:
        new_text = "# Notes from the acpls demo agent\n\n" + entry
    else:
        new_text = current + ("" if current.endswith("\n") or not current else "\n") + entry
    line = new_text.count("\n")
    return ProposedEdit(
        path=root / NOTES_FILE,
        old_text=current,
        new_text=new_text,
        line=max(line, 1),
        title=f"{'Create' if current is None else 'Update'} {NOTES_FILE}",
        explanation=f"I will note what I reviewed in `{NOTES_FILE}` rather than touch your code.",
    )


def git_patch(path: Path, old_text: str | None, new_text: str) -> str:
    """A one-file `git --patch` text with absolute paths and no a/ b/ prefixes (ACP v2)."""
    name = str(path)
    header = [f"diff --git {name} {name}\n"]
    if old_text is None:
        header.append("new file mode 100644\n")
    old_lines = (old_text or "").splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    body = difflib.unified_diff(
        old_lines, new_lines, fromfile="/dev/null" if old_text is None else name, tofile=name
    )
    out = list(header)
    for line in body:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
