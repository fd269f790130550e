"""A stand-in editor for end-to-end review tests: it really applies `workspace/applyEdit`.

An edit lands in the open buffer of a document (and is synced back to acpls with didChange, as an
editor does), else on disk, bytes exact (or, with `new_buffers`, in a buffer the editor opens for
it and never saves, as eglot and VS Code do). `open()` opens a document (with unsaved text if given),
`save()` writes a buffer to disk. Messages the server asks (`window/showMessageRequest`,
`acpls/resolveConflict`) are recorded and answered by the test's `answer_*` callables; documents
the server shows are in `client.shown_documents` (pytest-lsp's own record).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from acpls.translate.text_edits import apply_text_edits
from acpls.translate.uris import uri_to_path
from tests.e2e.conftest import SERVER, make_client, record_custom, stop_client

Answer = Callable[[Any], Any]
# How long after its applyEdit reply a "late" editor sends the didChange of an edit.
LATE_DIDCHANGE_S = 0.3


class DiskEditor:
    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.buffers: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.edits: list[Any] = []
        self.message_requests: list[Any] = []
        self.conflicts: list[Any] = []
        self.permission_requests: list[Any] = []
        self.answer_message: Answer = lambda params: None
        self.answer_conflict: Answer | None = None
        # Runs as a workspace/applyEdit arrives, before the editor applies it (a test makes the
        # agent's own disk write land in between).
        self.before_apply: Callable[[dict[str, Any]], None] = lambda edit: None
        # Runs right after the editor created a file, before the text edits that follow (an
        # editor loads the new file's text from disk for them): a test makes the agent's own
        # disk write land there.
        self.after_create: Callable[[Path], None] = lambda path: None
        # Runs as the editor loads a file from disk for an edit, before it reads it.
        self.before_load: Callable[[Path], None] = lambda path: None
        # An edit of a file with no buffer: None applies it on disk; otherwise the editor loads
        # the file into a buffer it never saves (eglot, VS Code) and applies it there, and
        # "synced" tells acpls (didOpen, then didChange at once), "late" sends the didChange
        # after its applyEdit reply (eglot, after a pause in typing), "unseen" tells nothing
        # (eglot's buffers of a major mode acpls was not started for).
        self.new_buffers: str | None = None
        self._unseen: set[str] = set()
        self.answer_permission: Answer = lambda params: {
            "optionId": params["options"][0]["optionId"]
        }

    # -- the user's side ---------------------------------------------------------------------------
    def open(self, path: Path, text: str | None = None) -> None:
        uri = path.as_uri()
        disk = path.read_bytes().decode("utf-8")
        self.buffers[uri] = disk
        self.versions[uri] = 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=1, text=disk
                )
            )
        )
        if text is not None:
            self.type_text(path, text)

    def type_text(self, path: Path, text: str) -> None:
        """The user changes the whole buffer (unsaved)."""
        self._set_buffer(path.as_uri(), text)

    def save(self, path: Path) -> None:
        path.write_bytes(self.buffers[path.as_uri()].encode("utf-8"))

    def _set_buffer(self, uri: str, text: str) -> None:
        self.buffers[uri] = text
        self.versions[uri] += 1
        if uri in self._unseen:
            return
        change = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=uri, version=self.versions[uri]
            ),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
        if self.new_buffers == "late":
            asyncio.get_running_loop().call_later(
                LATE_DIDCHANGE_S, self.client.text_document_did_change, change
            )
        else:
            self.client.text_document_did_change(change)

    def _visit(self, uri: str) -> None:
        """Load a file into a new, unsaved buffer (empty when there is no file)."""
        path = Path(uri_to_path(uri))
        self.before_load(path)
        text = path.read_bytes().decode("utf-8") if path.exists() else ""
        self.buffers[uri] = text
        self.versions[uri] = 0
        if self.new_buffers == "unseen":
            self._unseen.add(uri)
            return
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=0, text=text
                )
            )
        )

    # -- applying edits ------------------------------------------------------------------------------
    def apply(self, edit: dict[str, Any]) -> None:
        for change in edit.get("documentChanges") or []:
            kind = change.get("kind")
            if kind == "create":
                path = Path(uri_to_path(change["uri"]))
                # LSP: `overwrite` wins over `ignoreIfExists` (as VS Code and Neovim do it).
                if not path.exists() or (change.get("options") or {}).get("overwrite"):
                    path.write_bytes(b"")
                    if change["uri"] in self.buffers:
                        self._set_buffer(change["uri"], "")
                self.after_create(path)
            elif kind == "delete":
                path = Path(uri_to_path(change["uri"]))
                if path.exists():
                    path.unlink()
                self.buffers.pop(change["uri"], None)
            elif kind == "rename":
                raise AssertionError("rename not expected in these tests")
            else:
                uri = change["textDocument"]["uri"]
                if uri not in self.buffers and self.new_buffers is not None:
                    self._visit(uri)
                if uri in self.buffers:
                    self._set_buffer(uri, apply_text_edits(self.buffers[uri], change["edits"]))
                else:
                    path = Path(uri_to_path(uri))
                    self.before_load(path)
                    text = path.read_bytes().decode("utf-8") if path.exists() else ""
                    path.write_bytes(apply_text_edits(text, change["edits"]).encode("utf-8"))


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def _maybe_await(value: Any) -> Any:
    return await value if asyncio.iscoroutine(value) else value


@contextlib.asynccontextmanager
async def disk_editor(server_env: dict[str, str]) -> AsyncIterator[DiskEditor]:
    config = ClientServerConfig(
        server_command=SERVER, client_factory=make_client, server_env=server_env
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    editor = DiskEditor(client)
    client.acpls_features = {"resolveConflict": True}  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edit = client.protocol._converter.unstructure(params.edit)
        editor.edits.append(edit)
        editor.before_apply(edit)
        editor.apply(edit)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def show_message_request(params: types.ShowMessageRequestParams) -> Any:
        editor.message_requests.append(params)
        answer = await _maybe_await(editor.answer_message(params))
        return types.MessageActionItem(title=answer) if isinstance(answer, str) else None

    @client.feature("acpls/requestPermission")
    async def request_permission(params: Any) -> Any:
        editor.permission_requests.append(params)
        return await _maybe_await(editor.answer_permission(params))

    @client.feature("acpls/resolveConflict")
    async def resolve_conflict(params: Any) -> Any:
        params = _plain(params)
        editor.conflicts.append(params)
        if editor.answer_conflict is None:
            raise RuntimeError("acpls/resolveConflict not expected here")
        return await _maybe_await(editor.answer_conflict(params))

    record_custom(client)
    try:
        yield editor
    finally:
        await stop_client(client)
