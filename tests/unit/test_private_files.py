"""acpls' state is private from the moment it exists: folders 0700, files 0600, no symlink followed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from acpls.services import private_files


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture(autouse=True)
def open_umask():
    """The most open umask a user may have: only acpls' own modes keep the state private."""
    old = os.umask(0)
    yield
    os.umask(old)


def test_folders_and_their_missing_parents_are_created_0700(tmp_path: Path):
    target = tmp_path / "a" / "b" / "c"
    private_files.make_dir(target)
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", target)] == [0o700] * 3


def test_files_are_created_0600_in_every_mode(tmp_path: Path):
    for name, how in (("w", "w"), ("a", "a"), ("x", "x"), ("wb", "wb")):
        with private_files.open_file(tmp_path / name, how) as handle:  # type: ignore[call-overload]
            handle.write(b"x" if how.endswith("b") else "x")
        assert mode(tmp_path / name) == 0o600, name
    private_files.write_atomic(tmp_path / "atomic", "secret")
    assert mode(tmp_path / "atomic") == 0o600
    assert (tmp_path / "atomic").read_text() == "secret"


def test_a_symlink_planted_where_a_file_goes_is_not_written_through(tmp_path: Path):
    victim = tmp_path / "victim"
    victim.write_text("mine\n")
    (tmp_path / "state").symlink_to(victim)
    with pytest.raises(OSError):
        private_files.open_file(tmp_path / "state", "w")
    assert victim.read_text() == "mine\n"


def test_tighten_narrows_old_state_and_leaves_links_alone(tmp_path: Path):
    state = tmp_path / "state"
    (state / "sub").mkdir(parents=True)
    os.chmod(state, 0o755)
    os.chmod(state / "sub", 0o755)
    (state / "sub" / "t.md").write_text("x")
    os.chmod(state / "sub" / "t.md", 0o644)
    outside = tmp_path / "outside"
    outside.write_text("x")
    os.chmod(outside, 0o644)
    (state / "link").symlink_to(outside)
    assert private_files.tighten(state) == 3
    assert (mode(state), mode(state / "sub"), mode(state / "sub" / "t.md")) == (0o700, 0o700, 0o600)
    assert mode(outside) == 0o644
    assert private_files.tighten(state) == 0


def test_tighten_keeps_a_programs_owner_execute_bit(tmp_path: Path):
    """A node shim or an installed agent an older acpls left 0755 still runs for its owner."""
    state = tmp_path / "state"
    state.mkdir()
    program = state / "node"
    program.write_text("#!/bin/sh\n")
    os.chmod(program, 0o755)
    assert private_files.tighten(state) == 2
    assert mode(program) == 0o700
