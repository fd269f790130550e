"""@-mentions in a prompt, pure: the `mentions` of `acpls.prompt` checked, and the ACP content
blocks each becomes once core has read what it points at (editors/protocol.md section 3.2).

A file, selection or symbol becomes an embedded `resource` holding the buffer's text (unsaved
changes included) when the agent takes embedded context and the text is at most
`context.maxEmbedBytes`, else a `resource_link` the agent reads itself. Diagnostics and a
terminal's output are text. A session's transcript is embedded like a file; an agent without
embedded context gets it as text (a link would point outside the workspace), its end when too long.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import attrs

from acpls.translate.fix_actions import describe

KINDS = ("file", "selection", "symbol", "diagnostics", "terminal", "session", "image")
# A terminal mention sends the end of the output, this many bytes at most.
TERMINAL_TAIL_BYTES = 16 * 1024


@attrs.frozen
class Mention:
    kind: str
    uri: str | None = None
    range: dict[str, Any] | None = None
    name: str | None = None
    session_id: str | None = None
    terminal_id: str | None = None
    # (uri, LSP Diagnostic) pairs, for `diagnostics`
    diagnostics: tuple[tuple[str, dict[str, Any]], ...] = ()
    # `image`: a file path, or base64 `data` with its `mime_type`
    path: str | None = None
    data: str | None = None
    mime_type: str | None = None


def parse_mentions(raw: Any) -> list[Mention]:
    """The `mentions` argument checked; ValueError says what is wrong."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError("mentions must be a list")
    return [_parse(item) for item in raw]


def _parse(item: Any) -> Mention:
    if not isinstance(item, dict) or item.get("type") not in KINDS:
        raise ValueError(f"each mention needs a type, one of {', '.join(KINDS)}")
    kind = item["type"]
    if kind in ("file", "selection", "symbol"):
        uri, rng = item.get("uri"), item.get("range")
        if not isinstance(uri, str) or not uri:
            raise ValueError(f"a {kind} mention needs a uri")
        if (rng is not None or kind != "file") and not _is_range(rng):
            raise ValueError(f"a {kind} mention needs an LSP range")
        name = item.get("name")
        if kind == "symbol" and (not isinstance(name, str) or not name):
            raise ValueError("a symbol mention needs its name")
        return Mention(kind, uri=uri, range=rng, name=name if isinstance(name, str) else None)
    if kind == "diagnostics":
        return Mention(kind, diagnostics=_diagnostics(item.get("diagnostics")))
    if kind == "terminal":
        terminal_id = item.get("terminalId")
        if not isinstance(terminal_id, str) or not terminal_id:
            raise ValueError("a terminal mention needs a terminalId")
        session_id = item.get("sessionId")
        if session_id is not None and not isinstance(session_id, str):
            raise ValueError("sessionId must be a string")
        return Mention(kind, terminal_id=terminal_id, session_id=session_id)
    if kind == "image":
        return _image(item)
    session_id = item.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("a session mention needs a sessionId")
    return Mention(kind, session_id=session_id)


def _image(item: dict[str, Any]) -> Mention:
    path, data, mime = item.get("path"), item.get("data"), item.get("mimeType")
    if isinstance(path, str) and path.startswith("/"):
        return Mention("image", path=path)
    if isinstance(data, str) and data and isinstance(mime, str) and mime.startswith("image/"):
        return Mention("image", data=data, mime_type=mime)
    raise ValueError(
        "an image mention needs an absolute path, or base64 data with an image/* mimeType"
    )


def image_block(data_b64: str, mime_type: str, uri: str | None) -> dict[str, Any]:
    block = {"type": "image", "data": data_b64, "mimeType": mime_type}
    if uri is not None:
        block["uri"] = uri
    return block


def _diagnostics(raw: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    if not isinstance(raw, list):
        raise ValueError("a diagnostics mention needs diagnostics: [{uri, diagnostic}]")
    out = []
    for item in raw:
        if not isinstance(item, dict):
            raise ValueError("each diagnostic needs a uri and an LSP diagnostic")
        diagnostic = item.get("diagnostic")
        if (
            not isinstance(item.get("uri"), str)
            or not isinstance(diagnostic, dict)
            or not isinstance(diagnostic.get("message"), str)
            or not _is_range(diagnostic.get("range"))
        ):
            raise ValueError("each diagnostic needs a uri and an LSP diagnostic")
        out.append((item["uri"], diagnostic))
    return tuple(out)


def _is_range(rng: Any) -> bool:
    def pos(p: Any) -> bool:
        return isinstance(p, dict) and isinstance(p.get("line"), int) and p["line"] >= 0

    return isinstance(rng, dict) and pos(rng.get("start")) and pos(rng.get("end"))


def resource_block(
    uri: str, name: str, text: str, *, embedded: bool, max_bytes: int
) -> dict[str, Any]:
    """The buffer's `text` embedded, or a link when the agent cannot take it or it is too big."""
    size = len(text.encode("utf-8"))
    if embedded and size <= max_bytes:
        return {"type": "resource", "resource": {"uri": uri, "text": text}}
    return {"type": "resource_link", "uri": uri, "name": name}


def diagnostics_block(
    diagnostics: Sequence[tuple[str, dict[str, Any]]], names: dict[str, str]
) -> dict[str, Any]:
    """One text block listing the diagnostics, grouped by file (`names`: uri → how to call it)."""
    if not diagnostics:
        return {"type": "text", "text": "The editor reports no diagnostics."}
    lines = ["Diagnostics the editor reports:"]
    current = None
    for uri, diagnostic in diagnostics:
        if uri != current:
            current = uri
            lines.append(f"\n{names.get(uri, uri)}:")
        lines.append(f"- {describe(diagnostic)}")
    return {"type": "text", "text": "\n".join(lines)}


# Escape sequences (colours, cursor moves, OSC titles and links): the agent reads plain text.
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def terminal_block(command: str | None, output: str, truncated: bool) -> dict[str, Any]:
    output = _ESCAPES.sub("", output)
    output = output.replace("\r\n", "\n").rstrip("\n")  # a pty's line ends
    label = f"`{command}`" if command else "a terminal"
    cut = " (its end)" if truncated else ""
    return {"type": "text", "text": f"Recent output of {label}{cut}:\n\n```\n{output}\n```"}


def session_block(
    uri: str, title: str, transcript: str, *, embedded: bool, max_bytes: int
) -> dict[str, Any]:
    """Another session's transcript: embedded when it fits, else as text (its end)."""
    data = transcript.encode("utf-8")
    if embedded and len(data) <= max_bytes:
        return {"type": "resource", "resource": {"uri": uri, "text": transcript}}
    cut = len(data) > max_bytes
    if cut:
        transcript = data[-max_bytes:].decode("utf-8", "ignore")
    note = " (its end)" if cut else ""
    return {
        "type": "text",
        "text": f"Transcript of the session {title}{note}:\n\n{transcript}",
    }


def fuzzy_score(query: str, candidate: str) -> int | None:
    """How well `query` matches `candidate` as a subsequence (case-insensitive; higher is better),
    None when it does not: consecutive letters and letters of the file name count more, long
    paths a little less."""
    if not query:
        return 0
    text = candidate.lower()
    base = text.rfind("/") + 1
    score, at, previous = 0, 0, -2
    for char in query.lower():
        found = text.find(char, at)
        if found < 0:
            return None
        score += 1 + (3 if found == previous + 1 else 0) + (2 if found >= base else 0)
        previous, at = found, found + 1
    return score * 100 - len(candidate)


def best_matches(query: str, candidates: Sequence[str], limit: int) -> list[str]:
    scored = [(s, c) for c in candidates if (s := fuzzy_score(query, c)) is not None]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [c for _, c in scored[:limit]]
