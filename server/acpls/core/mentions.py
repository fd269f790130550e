"""@-mentions of a prompt turned into ACP content: core reads what each points at (the editor's
buffer or the disk, an agent terminal's output, a session's transcript) and
translate/mentions.py makes the blocks (editors/protocol.md section 3.2)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import mimetypes
import os
from typing import TYPE_CHECKING, Any, Protocol

from acpls.core.errors import CommandError
from acpls.services.transcript import stored_transcript, stored_transcripts
from acpls.services.workspace_files import workspace_files
from acpls.translate import mentions as tm
from acpls.translate.line_ranges import line_span, slice_lines
from acpls.translate.uris import path_to_uri

if TYPE_CHECKING:
    from pathlib import Path

    from acpls.acp.connection import AgentConnection
    from acpls.core.parts import RouterPart
    from acpls.core.ports import EditorPort
    from acpls.core.session import Session
    from acpls.settings import Settings
    from acpls.translate.terminals import TerminalStore


class MentionSources(Protocol):
    """What mentions read: buffers and the disk, terminals, sessions and their transcripts
    (live through the router, stored under `state_dir`), and the embedding limits."""

    @property
    def editor(self) -> EditorPort: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def terminals(self) -> TerminalStore: ...

    @property
    def state_dir(self) -> Path: ...

    @property
    def router(self) -> RouterPart: ...

    def session(self, session_id: Any) -> Session | None: ...

    def agent_name_of(self, conn: AgentConnection) -> str: ...

    def path_of(self, uri: str) -> str: ...

    def session_summaries(self) -> dict[str, Any]: ...

    def workspace_root(self) -> str: ...


logger = logging.getLogger(__name__)


def mention_blocks(
    hub: MentionSources, conn: AgentConnection, mentions: list[tm.Mention]
) -> list[dict[str, Any]]:
    embedded = bool(conn.prompt_capability("embeddedContext"))
    image_ok = bool(conn.prompt_capability("image"))
    limit = hub.settings.context_max_embed_bytes
    agent = hub.agent_name_of(conn)
    return [_block(hub, m, embedded, limit, image_ok, agent) for m in mentions]


def _block(
    hub: MentionSources, mention: tm.Mention, embedded: bool, limit: int, image_ok: bool, agent: str
) -> dict[str, Any]:
    if mention.kind == "diagnostics":
        names = {uri: _name(hub, uri) for uri, _ in mention.diagnostics}
        return tm.diagnostics_block(mention.diagnostics, names)
    if mention.kind == "terminal":
        return _terminal(hub, mention)
    if mention.kind == "session":
        return _session(hub, mention, embedded, limit)
    if mention.kind == "image":
        return _image(hub, mention, image_ok, agent)
    assert mention.uri is not None
    text = document_text(hub, mention.uri)
    uri, name = mention.uri, _name(hub, mention.uri)
    if mention.range is not None:
        text = slice_lines(text, mention.range)
        first, last = line_span(mention.range)
        uri = f"{uri}#L{first + 1}-{last + 1}"
    if mention.kind == "symbol" and mention.name:
        name = f"{mention.name} ({name})"
    return tm.resource_block(uri, name, text, embedded=embedded, max_bytes=limit)


def document_text(hub: MentionSources, uri: str) -> str:
    """The editor's buffer (unsaved changes included) or else the file on disk."""
    text = hub.editor.document_text(uri)
    if text is not None:
        return text
    try:
        with open(hub.path_of(uri), encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError as exc:
        raise CommandError(f"cannot read {uri}: {exc.strerror}") from exc


def _name(hub: MentionSources, uri: str) -> str:
    try:
        return hub.path_of(uri).rsplit("/", 1)[-1]
    except Exception:
        return uri


def _terminal(hub: MentionSources, mention: tm.Mention) -> dict[str, Any]:
    assert mention.terminal_id is not None
    found = hub.terminals.recent_output(
        mention.terminal_id, mention.session_id, tm.TERMINAL_TAIL_BYTES
    )
    if found is None:
        raise CommandError(f"no terminal {mention.terminal_id!r}")
    command, output, truncated = found
    return tm.terminal_block(command, output, truncated)


def _session(
    hub: MentionSources, mention: tm.Mention, embedded: bool, limit: int
) -> dict[str, Any]:
    try:
        session = hub.session(mention.session_id)
    except CommandError:
        # Not open any more (the agent was restarted or switched): its transcript on disk, so a
        # task moves from one agent to another.
        return _stored_session(hub, mention, embedded, limit)
    assert session is not None
    uri = hub.router.transcript_uri(session)  # flushes it
    transcript = document_text(hub, uri)
    title = f"{session.title!r} ({session.id})" if session.title else session.id
    return tm.session_block(uri, title, transcript, embedded=embedded, max_bytes=limit)


def _stored_session(
    hub: MentionSources, mention: tm.Mention, embedded: bool, limit: int
) -> dict[str, Any]:
    session_id = str(mention.session_id)
    found = stored_transcript(hub.state_dir, session_id)
    if found is None:
        raise CommandError(f"unknown session {session_id!r} (not open, and no transcript of it)")
    label, path = found
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CommandError(f"cannot read the transcript of {session_id!r}: {exc.strerror}") from exc
    title = f"{session_id} ({label})"
    return tm.session_block(path_to_uri(str(path)), title, text, embedded=embedded, max_bytes=limit)


def _image(hub: MentionSources, mention: tm.Mention, image_ok: bool, agent: str) -> dict[str, Any]:
    """An image file or pasted image data, checked against what the agent takes and the size
    limit before anything is sent."""
    if not image_ok:
        raise CommandError(
            f"{agent} does not accept images "
            "(its promptCapabilities.image is off): send the prompt without the image"
        )
    limit = hub.settings.context_max_image_bytes
    if mention.path is not None:
        mime = mimetypes.guess_type(mention.path)[0] or ""
        if not mime.startswith("image/"):
            raise CommandError(f"{mention.path} is not an image (png, jpeg, gif, webp, …)")
        try:
            size = os.path.getsize(mention.path)
            if size > limit:
                raise CommandError(_too_big(mention.path, size, limit))
            with open(mention.path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            raise CommandError(f"cannot read {mention.path}: {exc.strerror}") from exc
        return tm.image_block(
            base64.b64encode(raw).decode("ascii"), mime, path_to_uri(mention.path)
        )
    assert mention.data is not None and mention.mime_type is not None
    try:
        size = len(base64.b64decode(mention.data, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise CommandError("the image data is not valid base64") from exc
    if size > limit:
        raise CommandError(_too_big("the pasted image", size, limit))
    return tm.image_block(mention.data, mention.mime_type, None)


def _too_big(what: str, size: int, limit: int) -> str:
    return (
        f"{what} is {size:,} bytes, over the {limit:,} bytes of context.maxImageBytes: "
        "send a smaller image"
    )


async def mention_candidates(hub: MentionSources, query: str, limit: int) -> dict[str, Any]:
    """`acpls.mentionCandidates`: files of the workspace folders matching `query` (fuzzy,
    .gitignore respected) and the open sessions, for @-mention completion."""
    roots = hub.editor.workspace_roots or [hub.workspace_root()]
    paths: dict[str, str] = {}  # label -> absolute path
    for root in roots:
        prefix = "" if len(roots) == 1 else root.rstrip("/").rsplit("/", 1)[-1] + "/"
        for rel in await workspace_files(root):
            paths[prefix + rel] = f"{root.rstrip('/')}/{rel}"
    items: list[dict[str, Any]] = [
        {"type": "file", "label": label, "uri": path_to_uri(paths[label])}
        for label in tm.best_matches(query, list(paths), limit)
    ]
    open_ids: set[str] = set()
    for summary in hub.session_summaries().get("sessions", []):
        open_ids.add(summary["sessionId"])
        label = summary.get("title") or summary["sessionId"]
        if tm.best_matches(query, [label], 1):
            items.append({"type": "session", "label": label, "sessionId": summary["sessionId"]})
    # Sessions no longer open whose transcript acpls kept (another agent's, before a switch).
    for session_id, about, _ in await asyncio.to_thread(stored_transcripts, hub.state_dir, 10):
        label = f"{session_id} ({about})"
        if session_id not in open_ids and tm.best_matches(query, [label], 1):
            items.append({"type": "session", "label": label, "sessionId": session_id})
    return {"items": items}
