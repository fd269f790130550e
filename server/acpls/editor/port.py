"""The editor, as the core sees it (`core.ports.EditorPort`), over pygls' LSP connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

import attrs
from lsprotocol import types

from acpls.editor.messages import to_json
from acpls.services.file_reads import read_text
from acpls.speedups import JSONEncodeError, json_dumps
from acpls.translate.uris import uri_to_path

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

logger = logging.getLogger(__name__)

# How long after applyEdit's reply a didChange of that document still counts as acpls' own.
OWN_EDIT_WINDOW = 1.0
# Larger files are not compared with the disk on each change (cost per keystroke).
MATCH_DISK_LIMIT = 1024 * 1024
SETTLE_POLL_S = 0.01


class LspEditorPort:
    def __init__(self, server: LanguageServer) -> None:
        self._server = server
        # URIs acpls is editing right now: their didChange is ours, not the user's.
        self.own_edits: dict[str, int] = {}
        # Documents the editor applied an edit to and has not sent the didChange of yet: URI ->
        # the version before the edit.
        self._unreported: dict[str, int] = {}
        # (capabilities, custom_mode of them): see custom_mode.
        self._mode_of: tuple[types.ClientCapabilities | None, bool] = (None, False)

    # -- capabilities ----------------------------------------------------------------------------
    @property
    def _caps(self) -> types.ClientCapabilities | None:
        try:
            return self._server.client_capabilities
        except (AttributeError, RuntimeError):
            return None

    @property
    def custom_mode(self) -> bool:
        # Asked for every update routed to the editor: worked out once per capabilities object.
        caps = self._caps
        if caps is not self._mode_of[0]:
            experimental = getattr(caps, "experimental", None) if caps else None
            custom = isinstance(experimental, dict) and isinstance(experimental.get("acpls"), dict)
            self._mode_of = (caps, custom)
        return self._mode_of[1]

    def supports(self, feature: str) -> bool:
        caps = self._caps
        experimental = getattr(caps, "experimental", None) if caps else None
        acpls = experimental.get("acpls") if isinstance(experimental, dict) else None
        return isinstance(acpls, dict) and acpls.get(feature) is True

    @property
    def supports_show_document(self) -> bool:
        caps = self._caps
        window = caps.window if caps else None
        return bool(window and window.show_document and window.show_document.support)

    @property
    def supports_create_file(self) -> bool:
        caps = self._caps
        workspace = caps.workspace if caps else None
        edit = workspace.workspace_edit if workspace else None
        ops = edit.resource_operations if edit else None
        return bool(ops and types.ResourceOperationKind.Create in ops)

    @property
    def workspace_roots(self) -> list[str]:
        try:
            workspace = self._server.workspace
        except RuntimeError:
            return []
        roots = []
        for folder in workspace.folders.values():
            try:
                roots.append(uri_to_path(folder.uri))
            except ValueError:
                continue
        if not roots and workspace.root_uri:
            with contextlib.suppress(ValueError):
                roots.append(uri_to_path(workspace.root_uri))
        return roots

    # -- messages --------------------------------------------------------------------------------
    def notify(self, method: str, params: Any) -> None:
        """acpls/* notifications skip pygls' generic path (cattrs, `json.dumps` with a default
        hook, an INFO log of every body): they are plain attrs classes of JSON values, so one
        json_dumps call (orjson where installed) makes the frame. Anything it refuses (a lone
        surrogate in an agent's string) goes the generic way."""
        writer = self._server.protocol.writer
        if writer is not None and attrs.has(type(params)):
            try:
                body = json_dumps({"jsonrpc": "2.0", "method": method, "params": to_json(params)})
            except (JSONEncodeError, TypeError):
                pass
            else:
                writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
                return
        self._server.protocol.notify(method, params)

    def unread_bytes(self) -> int | None:
        """`core.ports.EditorBacklog`: what the stdio writer says the editor has not read yet
        (editor/stdio.py); None before it exists or where it cannot tell."""
        unread = getattr(self._server.protocol.writer, "unread", None)
        return unread() if unread is not None else None

    async def request(self, method: str, params: Any, msg_id: str) -> Any:
        protocol = self._server.protocol
        future = protocol.send_request(method, params, msg_id=msg_id)
        if method.startswith("acpls/"):
            # The answer as plain JSON: pygls would make it namedtuples and rename keys that are
            # not Python names (a form field called "first-name" would be lost).
            protocol._result_types[msg_id] = RawResult
        return await asyncio.wrap_future(future)

    def cancel_request(self, msg_id: str) -> None:
        future = self._server.protocol._request_futures.pop(msg_id, None)
        if future is not None and not future.done():
            future.cancel()
        self._server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    def show_message(self, level: int, text: str) -> None:
        self._server.window_show_message(
            types.ShowMessageParams(type=types.MessageType(level), message=text)
        )

    async def show_message_request(
        self, level: int, message: str, actions: list[str], msg_id: str | None = None
    ) -> str | None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType(level),
            message=message,
            actions=[types.MessageActionItem(title=a) for a in actions],
        )
        if msg_id is None:
            result = await self._server.window_show_message_request_async(params)
        else:
            future = self._server.protocol.send_request(
                types.WINDOW_SHOW_MESSAGE_REQUEST, params, msg_id=msg_id
            )
            result = await asyncio.wrap_future(future)
        return getattr(result, "title", None) if result is not None else None

    async def show_document(
        self, uri: str, selection: dict[str, Any] | None, *, take_focus: bool = False
    ) -> None:
        if not uri.startswith("file:///"):
            logger.warning("refusing to show a non-file URI: %s", uri)
            return
        rng = None
        if selection is not None:
            rng = types.Range(
                start=types.Position(**selection["start"]), end=types.Position(**selection["end"])
            )
        try:
            await self._server.window_show_document_async(
                types.ShowDocumentParams(uri=uri, take_focus=take_focus, selection=rng)
            )
        except Exception as exc:
            logger.debug("showDocument failed: %s", exc)

    async def open_external(self, url: str) -> bool:
        if not self.supports_show_document:
            return False
        try:
            result = await self._server.window_show_document_async(
                types.ShowDocumentParams(uri=url, external=True)
            )
        except Exception as exc:
            logger.debug("showDocument (external) failed: %s", exc)
            return False
        return bool(getattr(result, "success", False))

    async def apply_edit(self, edit: dict[str, Any], label: str) -> tuple[bool, str | None]:
        uris = _edit_uris(edit)
        versions = {uri: v for uri in uris if (v := self._version(uri)) is not None}
        for uri in uris:
            self.own_edits[uri] = self.own_edits.get(uri, 0) + 1
        try:
            converter = self._server.protocol._converter
            workspace_edit = converter.structure(edit, types.WorkspaceEdit)
            result = await self._server.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(edit=workspace_edit, label=label)
            )
        finally:
            loop = asyncio.get_running_loop()
            # The editor's didChange for this edit may arrive just after its reply.
            loop.call_later(OWN_EDIT_WINDOW, self._forget_own_edits, uris)
        applied = bool(getattr(result, "applied", False))
        reason = getattr(result, "failure_reason", None) or getattr(result, "failureReason", None)
        if applied:
            for uri, version in versions.items():
                if self._version(uri) == version:  # its didChange is still on the way
                    self._unreported[uri] = version
        return applied, reason

    def _version(self, uri: str) -> int | None:
        try:
            document = self._server.workspace.text_documents.get(uri)
        except RuntimeError:
            return None
        return None if document is None else document.version

    async def documents_settled(self, limit_s: float) -> None:
        deadline = asyncio.get_running_loop().time() + limit_s
        while True:
            for uri, version in list(self._unreported.items()):
                if self._version(uri) != version:  # reported (or closed)
                    del self._unreported[uri]
            if not self._unreported or asyncio.get_running_loop().time() >= deadline:
                break
            await asyncio.sleep(SETTLE_POLL_S)
        if self._unreported:
            logger.info("no didChange after applyEdit for %s", sorted(self._unreported))
            self._unreported.clear()

    def _forget_own_edits(self, uris: list[str]) -> None:
        for uri in uris:
            count = self.own_edits.get(uri, 0) - 1
            if count <= 0:
                self.own_edits.pop(uri, None)
            else:
                self.own_edits[uri] = count

    def is_own_edit(self, uri: str) -> bool:
        return uri in self.own_edits

    def matches_disk(self, uri: str) -> bool:
        """The document's text is the file's text on disk: a reload (of a file the agent wrote
        itself, say), not the user typing, who leaves the document unsaved."""
        text = self.document_text(uri)
        if text is None or not uri.startswith("file://"):
            return False
        try:
            # Never a FIFO or a device (an agent can put one where the document was).
            return read_text(uri_to_path(uri), max_bytes=MATCH_DISK_LIMIT) == text
        except (OSError, ValueError, UnicodeDecodeError):
            return False

    def open_documents(self) -> dict[str, str]:
        try:
            documents = self._server.workspace.text_documents
        except RuntimeError:
            return {}
        return {uri: doc.source for uri, doc in documents.items()}

    def document_text(self, uri: str) -> str | None:
        try:
            documents = self._server.workspace.text_documents
        except RuntimeError:
            return None
        document = documents.get(uri)
        if document is None:
            from urllib.parse import unquote

            document = documents.get(unquote(uri))
        return document.source if document is not None else None


@attrs.define
class RawResult:
    """A response whose result pygls keeps as the JSON it received."""

    id: Any
    jsonrpc: str
    result: Any = None


def _edit_uris(edit: dict[str, Any]) -> list[str]:
    uris = []
    for change in edit.get("documentChanges") or []:
        doc = change.get("textDocument")
        if isinstance(doc, dict):
            uris.append(doc.get("uri"))
        elif change.get("uri"):
            uris.append(change["uri"])
    uris.extend((edit.get("changes") or {}).keys())
    return [u for u in uris if isinstance(u, str)]
