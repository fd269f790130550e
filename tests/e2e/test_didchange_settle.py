"""An editor that debounces didChange (Neovim: 150 ms) answers applyEdit before it reports the
change. What acpls records at the turn's end (review, the checkpoint's list of changed files)
must still see the agent's last edit of an open buffer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.e2e.checkpoint_support import apply_on_disk
from tests.e2e.conftest import SERVER, command, make_client, scripted, start, stop_client

DEBOUNCE_S = 0.3


@pytest.fixture
async def debouncing_editor(server_env: dict[str, str]) -> AsyncIterator[LanguageClient]:
    config = ClientServerConfig(
        server_command=SERVER, client_factory=make_client, server_env=server_env
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    buffers: dict[str, str] = {}
    versions: dict[str, int] = {}
    client.buffers = buffers  # type: ignore[attr-defined]
    client.versions = versions  # type: ignore[attr-defined]
    converter = client.protocol._converter
    pending: list[asyncio.TimerHandle] = []

    def report(uri: str, path: str) -> None:
        versions[uri] += 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=versions[uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=buffers[path])],
            )
        )

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        edit = converter.unstructure(params.edit)
        apply_on_disk(edit, buffers)
        loop = asyncio.get_running_loop()
        for change in edit.get("documentChanges", []):
            uri = change.get("textDocument", {}).get("uri")
            if uri in versions:  # an open buffer: its didChange comes after the debounce
                path = str(Path(uri.removeprefix("file://")))
                pending.append(loop.call_later(DEBOUNCE_S, report, uri, path))
        return types.ApplyWorkspaceEditResult(applied=True)

    yield client
    for handle in pending:
        handle.cancel()
    await stop_client(client)


async def test_the_turns_last_buffer_edit_is_in_its_checkpoint(
    debouncing_editor: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    editor = debouncing_editor
    calc = workspace / "calc.py"
    uri, text = calc.as_uri(), calc.read_text()
    editor.buffers[str(calc)] = text  # type: ignore[attr-defined]
    editor.versions[uri] = 1  # type: ignore[attr-defined]
    turn = [
        {
            "request": "fs/write_text_file",
            "params": {"sessionId": "$sessionId", "path": str(calc), "content": "# agent\n"},
        }
    ]
    agent = scripted({"protocol": 1, "on_prompt": [turn]}, tmp_path / "a.log")
    await start(editor, workspace, agent)
    editor.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )
    done = await command(editor, "acpls.prompt", {"text": "edit calc"})
    listing = await command(editor, "acpls.checkpoints", {"sessionId": done["sessionId"]})
    assert listing[0]["files"] == [str(calc)]
