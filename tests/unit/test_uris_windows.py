"""File URIs of Windows paths (drive letters, UNC shares), exercised here with `windows=True`, and
the POSIX forms unchanged. The URIs are the ones VS Code and Neovim send on Windows."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acpls.translate.uris import path_to_uri, uri_to_path


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        (r"C:\Users\ann\a b.py", "file:///C:/Users/ann/a%20b.py"),
        (r"c:\src\x.py", "file:///C:/src/x.py"),
        ("D:/mixed/slashes.txt", "file:///D:/mixed/slashes.txt"),
        ("C:\\", "file:///C:/"),
        (r"C:\src\ünï cødé\#1.py", "file:///C:/src/%C3%BCn%C3%AF%20c%C3%B8d%C3%A9/%231.py"),
        (r"\\server\share\dir\f.py", "file://server/share/dir/f.py"),
    ],
)
def test_windows_paths_round_trip(path: str, uri: str) -> None:
    assert path_to_uri(path, windows=True) == uri
    expected = path.replace("/", "\\")
    expected = expected[0].upper() + expected[1:] if expected[1:2] == ":" else expected
    assert uri_to_path(uri, windows=True) == expected


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///c%3A/Users/ann/x.py", r"C:\Users\ann\x.py"),  # VS Code's spelling
        ("file:///C:/Users/ann/x.py", r"C:\Users\ann\x.py"),  # Neovim's
        ("file://localhost/C:/x.py", r"C:\x.py"),
        ("FILE:///e:/a%20b", r"E:\a b"),
        ("file://srv/share/a%20b/c.txt", r"\\srv\share\a b\c.txt"),
    ],
)
def test_editor_spellings_read_back(uri: str, path: str) -> None:
    assert uri_to_path(uri, windows=True) == path


@pytest.mark.parametrize(
    "path", [r"relative\x.py", r"\rooted\no\drive", "C:relative", r"\\server", r"\\server\\", ""]
)
def test_windows_paths_that_are_not_absolute_are_refused(path: str) -> None:
    with pytest.raises(ValueError):
        path_to_uri(path, windows=True)


@pytest.mark.parametrize("uri", ["file:///no/drive.py", "https://x/C:/a", "file://server/"])
def test_windows_uris_without_drive_or_share_are_refused(uri: str) -> None:
    with pytest.raises(ValueError):
        uri_to_path(uri, windows=True)


def test_posix_is_unchanged_by_the_flag() -> None:
    assert path_to_uri("/home/u/a b.py", windows=False) == "file:///home/u/a%20b.py"
    assert uri_to_path("file:///home/u/a%20b.py", windows=False) == "/home/u/a b.py"
    with pytest.raises(ValueError):
        uri_to_path("file://server/share/x", windows=False)


_segment = st.text(
    st.characters(blacklist_characters='\\/:*?"<>|\0', blacklist_categories=("Cs",)), min_size=1
).filter(lambda s: s not in (".", ".."))


@given(st.sampled_from("CDEZ"), st.lists(_segment, min_size=1, max_size=4))
def test_any_drive_path_round_trips(drive: str, segments: list[str]) -> None:
    path = f"{drive}:\\" + "\\".join(segments)
    assert uri_to_path(path_to_uri(path, windows=True), windows=True) == path
