"""Conversion between absolute paths (what ACP speaks) and `file:` URIs (what LSP speaks).

Pure functions.  POSIX paths are encoded as UTF-8 with `surrogateescape`, so a path that came from
undecodable bytes survives the round trip unchanged.  Windows paths (`windows=True`, the default on
Windows) are drive paths (`C:\\src\\a.py` <-> `file:///C:/src/a.py`; VS Code's `file:///c%3A/...`
reads back too) and UNC paths (`\\\\server\\share\\a.py` <-> `file://server/share/a.py`).
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote, unquote, unquote_to_bytes, urlsplit

ON_WINDOWS = os.name == "nt"

# Characters left as they are in the path part of a file URI, besides the unreserved ones that
# `quote` never encodes.  Keeping these readable matches what VS Code and Neovim produce for
# ordinary paths, so URIs compare equal with the editor's own.
_PATH_SAFE = "/!$&'()*+,;=:@"
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
_URI_DRIVE = re.compile(r"^/([A-Za-z]):(/|$)")


def path_to_uri(path: str, *, windows: bool = ON_WINDOWS) -> str:
    """`/home/u/a b.py` -> `file:///home/u/a%20b.py`.  Raises ValueError for a relative path."""
    if windows:
        return _windows_path_to_uri(path)
    if not path.startswith("/"):
        raise ValueError(f"not an absolute path: {path!r}")
    if path.startswith("//"):
        # A leading `//` would read back as a URI authority (host); one slash is the same path.
        path = "/" + path.lstrip("/")
    raw = path.encode("utf-8", "surrogateescape")
    return "file://" + quote(raw, safe=_PATH_SAFE)


def uri_to_path(uri: str, *, windows: bool = ON_WINDOWS) -> str:
    """`file:///home/u/a%20b.py` -> `/home/u/a b.py`.

    Raises ValueError for a non-file URI, a URI naming a remote host (on POSIX; on Windows that is a
    UNC path), or one whose path is relative.
    """
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        raise ValueError(f"not a file URI: {uri!r}")
    if windows:
        return _windows_uri_to_path(uri, parts.netloc, parts.path)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"file URI names a remote host: {uri!r}")
    if not parts.path.startswith("/"):
        raise ValueError(f"file URI without an absolute path: {uri!r}")
    return unquote_to_bytes(parts.path).decode("utf-8", "surrogateescape")


def _windows_path_to_uri(path: str) -> str:
    slashed = path.replace("\\", "/")
    if _DRIVE.match(path):
        # The drive letter upper-cased: `c:` and `C:` are the same drive, and one spelling keeps
        # the URIs of one file equal.
        return "file:///" + slashed[0].upper() + quote(slashed[1:], safe=_PATH_SAFE)
    if slashed.startswith("//") and len(slashed) > 2 and slashed[2] not in "/?.":
        host, _, rest = slashed[2:].partition("/")
        if not host or not rest.strip("/"):
            raise ValueError(f"UNC path without a share: {path!r}")
        return f"file://{quote(host, safe='')}/{quote(rest, safe=_PATH_SAFE)}"
    raise ValueError(f"not an absolute Windows path: {path!r}")


def _windows_uri_to_path(uri: str, host: str, path: str) -> str:
    text = unquote(path)
    if host not in ("", "localhost"):
        if not text.strip("/"):
            raise ValueError(f"UNC file URI without a share: {uri!r}")
        return "\\\\" + unquote(host) + text.replace("/", "\\")
    drive = _URI_DRIVE.match(text)
    if drive is None:
        raise ValueError(f"file URI without a drive or server: {uri!r}")
    rest = text[3:] or "/"
    return drive.group(1).upper() + ":" + rest.replace("/", "\\")
