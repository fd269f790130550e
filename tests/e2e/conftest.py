"""End-to-end fixtures: the real `acpls` process (pytest-lsp) and a scripted or demo ACP agent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from tests.agents import script_command

SERVER = [sys.executable, "-m", "acpls"]


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: dict[str, Any] | None = None


@attrs.define
class RawRequest:
    id: int | str
    method: str
    jsonrpc: str
    params: dict[str, Any] | None = None


class RawAcplsProtocol(LanguageClientProtocol):
    """Keeps acpls/* payloads as the raw JSON (pygls would rename keys such as `_meta`)."""

    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        requests = ("acpls/requestPermission", "acpls/resolveConflict", "acpls/elicitation")
        if method in (*requests, "acpls/authEnv", "acpls/runLogin"):
            return RawRequest
        if method.startswith("acpls/"):
            return RawNotification
        return super().get_message_type(method)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter, protocol_cls=RawAcplsProtocol)
    register_lsp_features(client)
    return client


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (root / "README.md").write_text("# sample\n", encoding="utf-8")
    return root


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def server_env(state_dir: Path) -> dict[str, str]:
    return {**os.environ, "XDG_STATE_HOME": str(state_dir), "ACPLS_DEMO_SPEED": "0"}


@pytest.fixture
async def client(server_env: dict[str, str]) -> AsyncIterator[LanguageClient]:
    config = ClientServerConfig(
        server_command=SERVER, client_factory=make_client, server_env=server_env
    )
    lsp_client = await config.start()
    assert isinstance(lsp_client, LanguageClient)
    lsp_client.edits = []  # type: ignore[attr-defined]
    lsp_client.message_requests = []  # type: ignore[attr-defined]
    lsp_client.answer_message_request = None  # type: ignore[attr-defined]
    lsp_client.permission_requests = []  # type: ignore[attr-defined]
    lsp_client.answer_permission = None  # type: ignore[attr-defined]

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        lsp_client.edits.append(params)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    @lsp_client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def show_message_request(params: types.ShowMessageRequestParams) -> Any:
        lsp_client.message_requests.append(params)  # type: ignore[attr-defined]
        answer = lsp_client.answer_message_request  # type: ignore[attr-defined]
        if answer is None:
            return None
        result = answer(params)
        if asyncio.iscoroutine(result):
            result = await result
        return result

    @lsp_client.feature("acpls/requestPermission")
    async def request_permission(params: Any) -> Any:
        lsp_client.permission_requests.append(params)  # type: ignore[attr-defined]
        answer = lsp_client.answer_permission  # type: ignore[attr-defined]
        if answer is None:
            return None
        result = answer(params)
        if asyncio.iscoroutine(result):
            result = await result
        return result

    record_custom(lsp_client)
    yield lsp_client
    await stop_client(lsp_client)


async def stop_client(lsp_client: LanguageClient) -> None:
    """Shut the server down politely; if that cannot happen (pytest-lsp skips it after a fatal
    client error), close its stdin, then kill it, so a broken test never hangs the suite."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(lsp_client.shutdown_session(), 10)
    server = lsp_client._server
    if server is not None and server.returncode is None:
        if server.stdin is not None:
            server.stdin.close()
        try:
            await asyncio.wait_for(server.wait(), 5)
        except TimeoutError:
            server.kill()
            await server.wait()
    await lsp_client.stop()


def capabilities(custom: bool, editor: str = "visual-studio-code") -> types.ClientCapabilities:
    caps = client_capabilities(editor)
    if custom:
        caps.experimental = {"acpls": {"version": 1}}
    else:
        caps.experimental = None
    return caps


async def start(
    client: LanguageClient,
    workspace: Path,
    agent: dict[str, Any] | str,
    *,
    custom: bool = True,
    editor: str = "visual-studio-code",
    more_folders: tuple[Path, ...] = (),
    **settings: Any,
) -> types.InitializeResult:
    options = {"agent": agent, **settings}
    caps = capabilities(custom, editor)
    # Requests newer than version 1 that this test client handles (disk_editor sets them).
    features = getattr(client, "acpls_features", None)
    if custom and features and isinstance(caps.experimental, dict):
        caps.experimental["acpls"].update(features)
    folders = [types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")]
    folders += [types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in more_folders]
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=caps,
            root_uri=workspace.as_uri(),
            workspace_folders=folders,
            initialization_options=options,
        )
    )


def scripted(script: dict[str, Any] | Path, log: Path, **kwargs: Any) -> dict[str, Any]:
    argv = script_command(script, log, **kwargs)
    return {"command": argv[0], "args": argv[1:]}


async def command(client: LanguageClient, name: str, arg: dict[str, Any] | None = None) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=[arg or {}])
    )


def agent_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def notifications(client: LanguageClient, method: str) -> list[Any]:
    return [p for m, p in _recorded(client) if m == method]


def _recorded(client: LanguageClient) -> list[tuple[str, Any]]:
    return getattr(client, "acpls_notifications", [])


def record_custom(client: LanguageClient) -> None:
    """Record every acpls/* notification in order (pytest-lsp keeps only a few kinds)."""
    client.acpls_notifications = []  # type: ignore[attr-defined]
    for method in (
        "acpls/followAgent",
        "acpls/followState",
        "acpls/sessionUpdate",
        "acpls/sessionUpdates",
        "acpls/terminalUpdate",
        "acpls/terminalOutput",
        "acpls/changes",
        "acpls/agentStatus",
        "acpls/elicitationComplete",
    ):

        def handler(params: Any, _method: str = method) -> None:
            client.acpls_notifications.append((_method, params))  # type: ignore[attr-defined]

        client.feature(method)(handler)


def as_dict(obj: Any) -> Any:
    """pygls turns untyped params into namedtuple-like objects; make them plain again."""
    if hasattr(obj, "_asdict"):
        return {k: as_dict(v) for k, v in obj._asdict().items()}
    if isinstance(obj, list):
        return [as_dict(v) for v in obj]
    return obj
