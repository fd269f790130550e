"""Where the agent may go: roots, symlinks, `..`, relative and `~` paths, approvals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acpls.state.paths import InvalidPath, PathPolicy


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    (ws / "src" / "main.py").write_text("x = 1\n")
    (outside / "secret.txt").write_text("s\n")
    (ws / "escape").symlink_to(outside)
    (ws / "inner").symlink_to(ws / "src")
    (ws / "secret-link.txt").symlink_to(outside / "secret.txt")
    return {"ws": ws, "outside": outside, "tmp": tmp_path}


def test_inside_and_outside(layout: dict[str, Path]) -> None:
    policy = PathPolicy([str(layout["ws"])], [])
    inside = policy.check(str(layout["ws"] / "src" / "main.py"))
    assert inside.inside and inside.root == os.path.realpath(layout["ws"])
    outside = policy.check(str(layout["outside"] / "secret.txt"))
    assert outside.outside and outside.root is None
    assert policy.check(str(layout["ws"])).inside


def test_sibling_with_common_prefix_is_outside(layout: dict[str, Path]) -> None:
    sibling = layout["tmp"] / "ws-other"
    sibling.mkdir()
    policy = PathPolicy([str(layout["ws"])], [])
    assert policy.check(str(sibling / "f")).outside


def test_symlink_escaping_workspace_is_outside(layout: dict[str, Path]) -> None:
    policy = PathPolicy([str(layout["ws"])], [])
    assert policy.check(str(layout["ws"] / "escape" / "secret.txt")).outside
    assert policy.check(str(layout["ws"] / "secret-link.txt")).outside
    # A file that does not exist yet under a symlinked directory is judged by its real place.
    new_file = policy.check(str(layout["ws"] / "escape" / "new" / "file.txt"))
    assert new_file.outside
    assert new_file.resolved == os.path.realpath(layout["outside"]) + "/new/file.txt"


def test_symlink_staying_inside_is_inside(layout: dict[str, Path]) -> None:
    policy = PathPolicy([str(layout["ws"])], [])
    decision = policy.check(str(layout["ws"] / "inner" / "main.py"))
    assert decision.inside
    assert decision.resolved == os.path.realpath(layout["ws"] / "src" / "main.py")


def test_dotdot_escape_is_outside(layout: dict[str, Path]) -> None:
    policy = PathPolicy([str(layout["ws"])], [])
    assert policy.check(str(layout["ws"]) + "/src/../../outside/secret.txt").outside
    assert policy.check(str(layout["ws"]) + "/missing/../../outside/x").outside
    assert policy.check(str(layout["ws"]) + "/src/../src/main.py").inside


@pytest.mark.parametrize("path", ["src/main.py", "./main.py", "~/x", "~", "", "a\0b"])
def test_relative_tilde_and_garbage_refused(layout: dict[str, Path], path: str) -> None:
    policy = PathPolicy([str(layout["ws"])], [])
    with pytest.raises(InvalidPath):
        policy.check(path)


def test_tilde_message_says_not_expanded(layout: dict[str, Path]) -> None:
    with pytest.raises(InvalidPath, match="not expanded"):
        PathPolicy([str(layout["ws"])]).check("~/.ssh/id_rsa")


def test_allowed_extra_roots(layout: dict[str, Path]) -> None:
    policy = PathPolicy([str(layout["ws"])], [str(layout["outside"])])
    decision = policy.check(str(layout["outside"] / "secret.txt"))
    assert decision.inside and decision.root == os.path.realpath(layout["outside"])


def test_check_uri(layout: dict[str, Path]) -> None:
    policy = PathPolicy([str(layout["ws"])], [])
    assert policy.check_uri((layout["ws"] / "src" / "main.py").as_uri()).inside
    for uri in ("https://example.com/x", "untitled:Untitled-1", "file://host/etc/passwd"):
        with pytest.raises(InvalidPath):
            policy.check_uri(uri)


def test_session_approvals(layout: dict[str, Path]) -> None:
    policy = PathPolicy([str(layout["ws"])], [])
    secret = str(layout["outside"] / "secret.txt")
    assert not policy.allowed("s1", secret)
    # Approving through a symlinked spelling approves the real file.
    policy.approve("s1", str(layout["ws"] / "secret-link.txt"))
    assert policy.is_approved("s1", secret)
    assert policy.allowed("s1", secret)
    assert not policy.allowed("s2", secret)
    assert not policy.allowed("s1", str(layout["outside"] / "other.txt"))
    policy.forget_session("s1")
    assert not policy.allowed("s1", secret)


def test_set_roots_replaces(layout: dict[str, Path]) -> None:
    policy = PathPolicy([str(layout["ws"])], [])
    policy.set_roots([str(layout["outside"])])
    assert policy.check(str(layout["ws"] / "src" / "main.py")).outside
    assert policy.roots == (os.path.realpath(layout["outside"]),)
