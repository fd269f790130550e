"""One version: the server's (server/acpls/__init__.py, which hatch reads for the wheel), the VS
Code extension's (package.json; `make vsix` refuses a mismatch too) and the Neovim plugin's
(lua/acpls/version.lua, which `:checkhealth acpls` compares with the server it runs) agree, and
CHANGELOG.md has a section for it."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from acpls import __version__

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_takes_its_version_from_the_server() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["hatch"]["version"]["path"] == "server/acpls/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_the_extension_and_the_plugin_carry_the_servers_version() -> None:
    package = json.loads((REPO / "vscode-extension" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == __version__
    lock = json.loads((REPO / "vscode-extension" / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["version"] == __version__
    plugin = (REPO / "neovim" / "lua" / "acpls" / "version.lua").read_text(encoding="utf-8")
    assert re.findall(r"^return '([^']*)'$", plugin, re.MULTILINE) == [__version__]


def test_the_changelog_has_a_section_for_this_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(__version__)}\b", changelog, re.MULTILINE)


def test_the_licence_is_the_one_pyproject_names() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
