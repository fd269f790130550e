"""The pure decision "is a write here always put to the user" (state/protected.py), and the
bounded reader's line window (services/file_reads.py) against the slicing it replaces."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acpls.services.file_reads import NotRegularFile, TooLarge, read_window
from acpls.state import protected as p
from acpls.state.paths import PathPolicy
from acpls.state.protected import protection, valid_glob

ROOT = "/home/u/proj"
ROOTS = (ROOT, "/opt/common")
OWN = ("/home/u/.local/state/acpls", "/home/u/.config/acpls")


def reason(path: str, always_ask: tuple[str, ...] = ()) -> str | None:
    found = protection(path, ROOTS, OWN, always_ask)
    return found.reason if found is not None else None


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (f"{ROOT}/.git/hooks/pre-commit", p.GIT_HOOKS),
        (f"{ROOT}/.git/hooks", p.GIT_HOOKS),
        (f"{ROOT}/vendor/lib/.git/hooks/post-checkout", p.GIT_HOOKS),
        (f"{ROOT}/.GIT/Hooks/pre-commit", p.GIT_HOOKS),  # a file system that ignores case
        (f"{ROOT}/.git/config", p.GIT_CONFIG),
        (f"{ROOT}/.git/index", p.GIT_OTHER),
        (f"{ROOT}/.git/refs/heads/main", p.GIT_OTHER),
        (f"{ROOT}/sub/.git", p.GIT_OTHER),  # a worktree's or submodule's `.git` file
        (f"{ROOT}/.vscode/settings.json", p.EDITOR_CONFIG),
        (f"{ROOT}/.vscode/tasks.json", p.EDITOR_CONFIG),
        (f"{ROOT}/.helix/config.toml", p.EDITOR_CONFIG),
        (f"{ROOT}/.nvim.lua", p.EDITOR_CONFIG),
        (f"{ROOT}/.exrc", p.EDITOR_CONFIG),
        (f"{ROOT}/lisp/.dir-locals.el", p.EDITOR_CONFIG),
        (f"{ROOT}/.envrc", p.ENVRC),
        (f"{ROOT}/deep/er/.envrc", p.ENVRC),
        ("/etc/passwd", p.OUTSIDE),
        ("/home/u/proj-other/x.py", p.OUTSIDE),  # a sibling that shares the prefix
        ("/home/u/.local/state/acpls/rules.json", p.OWN_STATE),
        ("/home/u/.config/acpls/x", p.OWN_STATE),
    ],
)
def test_protected_places_and_why(path: str, why: str) -> None:
    assert reason(path) == why


@pytest.mark.parametrize(
    "path",
    [
        f"{ROOT}/src/app.py",
        f"{ROOT}/.gitignore",
        f"{ROOT}/.github/workflows/ci.yml",
        f"{ROOT}/git/hooks/x",
        f"{ROOT}/docs/.gitkeep",
        f"{ROOT}/my.envrc.example",
        "/opt/common/notes.txt",  # an allowed root
    ],
)
def test_ordinary_files_are_not_protected(path: str) -> None:
    assert reason(path) is None


def test_own_state_inside_the_workspace_is_protected_before_anything_else() -> None:
    """A user who opens `~`: acpls' rules file is inside the workspace, and still asked."""
    home_roots = ("/home/u",)
    found = protection("/home/u/.local/state/acpls/rules.json", home_roots, OWN)
    assert found is not None and found.reason == p.OWN_STATE
    assert protection("/home/u/.local/state/other/x", home_roots, OWN) is None


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        (".github/workflows/**", f"{ROOT}/.github/workflows/ci.yml", True),
        (".github/workflows/**", f"{ROOT}/.github/dependabot.yml", False),
        ("Makefile", f"{ROOT}/Makefile", True),
        ("Makefile", f"{ROOT}/sub/Makefile", False),
        ("**/Makefile", f"{ROOT}/sub/Makefile", True),
        ("scripts", f"{ROOT}/scripts/deploy.sh", True),  # a folder covers what is inside
        ("*.sh", f"{ROOT}/run.sh", True),
        ("*.sh", f"{ROOT}/bin/run.sh", False),  # `*` stays within one name
        ("bin/?.sh", f"{ROOT}/bin/a.sh", True),
        ("/opt/common/secrets", "/opt/common/secrets/key", True),
        ("/opt/common/*.pem", "/opt/common/a.pem", True),
        ("/opt/common/*.pem", "/opt/common/a.txt", False),
    ],
)
def test_always_ask_globs(glob: str, path: str, hit: bool) -> None:
    found = reason(path, (glob,))
    assert (found is not None and glob in found) is hit, found


def test_an_absolute_glob_outside_the_workspace_names_itself() -> None:
    found = reason("/srv/deploy/x", ("/srv/deploy",))
    assert found is not None and "files.alwaysAsk" in found


@pytest.mark.parametrize(("glob", "ok"), [("a/**", True), ("/x", True), ("", False),
                                           ("~/x", False), ("../x", False), ("a/../b", False)])  # fmt: skip
def test_valid_globs(glob: str, ok: bool) -> None:
    assert valid_glob(glob) is ok


TEXTS = [
    "one\ntwo\nthree\n",
    "no end",
    "crlf\r\nlines\r\nhere",
    "mixed\rcr\nand\x0cform\u2028sep\n",
    "",
    "\n\n\n",
]


def _slice(text: str, line: int | None, limit: int | None) -> str:
    """The slicing fs/read_text_file did on the whole text before reads streamed."""
    lines = text.splitlines(keepends=True)
    start = line - 1 if isinstance(line, int) and line > 0 else 0
    end = start + limit if isinstance(limit, int) and limit >= 0 else len(lines)
    return "".join(lines[start:end])


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("line", [None, 0, 1, 2, 3, 9])
@pytest.mark.parametrize("limit", [None, 0, 1, 2, 50])
def test_the_window_is_the_slice_of_the_whole(
    tmp_path: Path, text: str, line: int | None, limit: int | None, monkeypatch
) -> None:
    monkeypatch.setattr("acpls.services.file_reads.CHUNK_BYTES", 3)  # lines cross chunks
    path = tmp_path / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    window = read_window(str(path), max_bytes=1000, line=line, limit=limit)
    assert window.text == _slice(text, line, limit)


def test_a_window_stops_reading_and_the_limit_counts_bytes_read(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(b"first\n" + b"x" * 200_000 + b"\n")
    assert read_window(str(path), max_bytes=100_000, limit=1).text == "first\n"
    with pytest.raises(TooLarge, match=r"limits\.maxReadBytes"):
        read_window(str(path), max_bytes=100_000)
    with pytest.raises(TooLarge):
        read_window(str(path), max_bytes=100_000, line=2, limit=1)


def test_only_regular_files_are_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match="named pipe"):
        read_window(str(fifo), max_bytes=10)  # returns: a FIFO with no writer is never opened
    with pytest.raises(NotRegularFile, match="character device"):
        read_window("/dev/zero", max_bytes=10)
    with pytest.raises(NotRegularFile, match="folder"):
        read_window(str(tmp_path), max_bytes=10)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    (tmp_path / "target").write_text("t\n")
    assert read_window(str(link), max_bytes=10).text == "t\n"
    with pytest.raises(NotRegularFile, match="symbolic link"):
        read_window(str(link), max_bytes=10, follow=False)


def test_a_root_reached_through_a_link_keeps_its_name(tmp_path: Path) -> None:
    """What acpls opens is the resolved path, named below the root as the editor named the root
    (a home folder on another disk): the editor's buffer of it is found, and a link inside the
    workspace that leads out is still outside."""
    real = tmp_path / "disk" / "proj"
    (real / "src").mkdir(parents=True)
    (real / "src" / "a.py").write_text("a\n")
    named = tmp_path / "proj"
    named.symlink_to(real, target_is_directory=True)
    (real / "alias.py").symlink_to(real / "src" / "a.py")
    (real / "out").symlink_to(tmp_path, target_is_directory=True)
    policy = PathPolicy([str(named)])
    decision = policy.check(str(named / "alias.py"))
    assert decision.inside
    assert decision.resolved == str(real / "src" / "a.py")
    assert decision.usable == str(named / "src" / "a.py")
    assert os.path.realpath(decision.usable) == decision.resolved
    escaped = policy.check(str(named / "out" / "secret"))
    assert not escaped.inside and escaped.usable == str(tmp_path / "secret")
