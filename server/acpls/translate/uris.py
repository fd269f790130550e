"""Conversion between absolute POSIX paths (what ACP speaks) and `file:` URIs (what LSP speaks).

Pure functions.  Paths are encoded as UTF-8 with `surrogateescape`, so a path that came from
undecodable bytes survives the round trip unchanged.
"""

from __future__ import annotations

from urllib.parse import quote, unquote_to_bytes, urlsplit

# Characters left as they are in the path part of a file URI, besides the unreserved ones that
# `quote` never encodes.  Keeping these readable matches what VS Code and Neovim produce for
# ordinary paths, so URIs compare equal with the editor's own.
_PATH_SAFE = "/!$&'()*+,;=:@"


def path_to_uri(path: str) -> str:
    """`/home/u/a b.py` -> `file:///home/u/a%20b.py`.  Raises ValueError for a relative path."""
    if not path.startswith("/"):
        raise ValueError(f"not an absolute path: {path!r}")
    if path.startswith("//"):
        # A leading `//` would read back as a URI authority (host); one slash is the same path.
        path = "/" + path.lstrip("/")
    raw = path.encode("utf-8", "surrogateescape")
    return "file://" + quote(raw, safe=_PATH_SAFE)


def uri_to_path(uri: str) -> str:
    """`file:///home/u/a%20b.py` -> `/home/u/a b.py`.

    Raises ValueError for a non-file URI, a URI naming a remote host, or one whose path is relative.
    """
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        raise ValueError(f"not a file URI: {uri!r}")
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"file URI names a remote host: {uri!r}")
    if not parts.path.startswith("/"):
        raise ValueError(f"file URI without an absolute path: {uri!r}")
    return unquote_to_bytes(parts.path).decode("utf-8", "surrogateescape")
