"""The oldest versions acpls supports, in one place.

`acpls doctor`, `acpls --self-check`, the Neovim plugin (plugin/acpls.lua, lua/acpls/health.lua)
and the VS Code extension (package.json `engines.vscode`, src/model/python.ts) say the same;
tests/unit/test_requirements.py reads their sources and fails when one of them differs.
Kept importable on old Pythons (no syntax newer than 3.8): `--self-check` must be able to say
"too old" there.
"""

from __future__ import annotations

PYTHON = (3, 11)
PYTHON_TEXT = "3.11"
# The CPython versions the .vsix carries compiled modules (orjson, pybase64, uvloop) for
# (vscode-extension/scripts/bundle.py): newer ones run the server on the standard library.
BUNDLED_PYTHONS = ("3.11", "3.12", "3.13", "3.14")
NEOVIM = (0, 11)
NEOVIM_TEXT = "0.11"
# npm agents (claude, gemini, codex, ...) and their ACP adapters.
NODE = (20,)
NODE_TEXT = "20"
VSCODE_TEXT = "1.100.0"
VSCODE = (1, 100, 0)
