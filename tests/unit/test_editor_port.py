"""editor/port.py: custom mode is read from the editor's capabilities, whichever they are now."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from lsprotocol import types

from acpls.editor.port import LspEditorPort


def test_custom_mode_follows_the_capabilities_object() -> None:
    """It is worked out once per capabilities object (it is asked for every routed update), so
    new capabilities must be read again, and the same object must give the same answer."""
    server: Any = SimpleNamespace(client_capabilities=None)
    port = LspEditorPort(server)
    assert not port.custom_mode
    server.client_capabilities = types.ClientCapabilities(experimental={"acpls": {}})
    assert port.custom_mode
    assert port.custom_mode
    server.client_capabilities = types.ClientCapabilities(experimental={"other": {}})
    assert not port.custom_mode
    server.client_capabilities = types.ClientCapabilities()
    assert not port.custom_mode
