"""VS Code's `activate()` only wires (issue 17): extension.ts builds the parts and connects them;
command bodies live in commands.ts and `VirtualDocuments` in its own module. Read from the
source: a command body or a class written into extension.ts fails here."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "vscode-extension" / "src"
EXTENSION = (SRC / "extension.ts").read_text("utf-8")


def test_extension_ts_defines_no_class_and_no_function_but_activate_and_deactivate() -> None:
    assert not re.search(r"^\s*(export\s+)?class\s", EXTENSION, re.MULTILINE)
    functions = re.findall(r"^(?:export\s+)?(?:async\s+)?function\s+(\w+)", EXTENSION, re.MULTILINE)
    assert sorted(functions) == ["activate", "deactivate"]


def test_every_command_is_registered_from_commands_ts() -> None:
    registrations = re.findall(r"registerCommand\(([^)]*)\)", EXTENSION)
    assert registrations == ["id, run"], registrations
    assert re.search(r"Object\.entries\(uiCommands\(", EXTENSION)
    assert 'from "./commands"' in EXTENSION


def test_virtual_documents_live_in_their_own_module() -> None:
    assert 'import { VirtualDocuments } from "./virtualDocuments";' in EXTENSION
    assert re.search(r"export class VirtualDocuments\b", (SRC / "virtualDocuments.ts").read_text())


def test_the_check_sees_a_command_body() -> None:
    """The registration check can fail: an inline command body is not `id, run`."""
    inline = 'vscode.commands.registerCommand("acpls.ui.x", async () => { await go(); })'
    assert re.findall(r"registerCommand\(([^)]*)\)", inline) != ["id, run"]
