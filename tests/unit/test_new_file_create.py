"""acpls writes a new file itself where the editor cannot create one (no `resourceOperations`):
exclusively, so nothing already at the path (the agent's own copy, a symlink) is written through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acpls.core.agent_requests import _create_with_text


def test_creates_the_file_with_the_text(tmp_path: Path):
    path = tmp_path / "notes.md"
    _create_with_text(str(path), "# Notes\r\n")
    assert path.read_bytes() == b"# Notes\r\n"


def test_a_symlink_swapped_in_is_not_followed(tmp_path: Path):
    outside = tmp_path / "outside" / "hooks.sh"
    outside.parent.mkdir()
    link = tmp_path / "ws" / "new.sh"
    link.parent.mkdir()
    os.symlink(outside, link)  # dangling: it names a file that does not exist yet
    with pytest.raises(FileExistsError):
        _create_with_text(str(link), "echo owned\n")
    assert not outside.exists()


def test_the_agents_own_copy_is_left_alone(tmp_path: Path):
    path = tmp_path / "notes.md"
    path.write_text("the agent's\n")
    with pytest.raises(FileExistsError):
        _create_with_text(str(path), "acpls'\n")
    assert path.read_text() == "the agent's\n"
