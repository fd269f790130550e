"""The oldest versions acpls supports are said in one place (server/acpls/requirements.py), and
every other place that states one (pyproject, the Neovim plugin and its health check, the VS Code
extension's manifest and its Python choice, the .vsix build) agrees with it."""

from __future__ import annotations

import json
import re
import runpy
import tomllib
from pathlib import Path

from acpls import requirements

REPO = Path(__file__).resolve().parents[2]


def read(path: str) -> str:
    return (REPO / path).read_text(encoding="utf-8")


def test_pyproject_requires_the_same_python() -> None:
    project = tomllib.loads(read("pyproject.toml"))["project"]
    assert project["requires-python"] == f">={requirements.PYTHON_TEXT}"


def test_the_texts_match_the_tuples() -> None:
    assert ".".join(map(str, requirements.PYTHON)) == requirements.PYTHON_TEXT
    assert ".".join(map(str, requirements.NEOVIM)) == requirements.NEOVIM_TEXT
    assert ".".join(map(str, requirements.NODE)) == requirements.NODE_TEXT
    assert ".".join(map(str, requirements.VSCODE)) == requirements.VSCODE_TEXT
    assert requirements.BUNDLED_PYTHONS[0] == requirements.PYTHON_TEXT


def test_the_neovim_plugin_and_its_health_check_need_the_same_neovim() -> None:
    wanted = f"nvim-{requirements.NEOVIM_TEXT}"
    for path in ("neovim/plugin/acpls.lua", "neovim/lua/acpls/health.lua"):
        found = set(re.findall(r"has\('(nvim-[\d.]+)'\)", read(path)))
        assert found == {wanted}, f"{path} checks {found}, acpls/requirements.py says {wanted}"
        stated = set(re.findall(r"Neovim (\d+\.\d+) or newer", read(path)))
        assert stated == {requirements.NEOVIM_TEXT}, f"{path} says Neovim {stated}"


def test_the_vscode_extension_states_the_same_versions() -> None:
    package = json.loads(read("vscode-extension/package.json"))
    assert package["engines"]["vscode"] == f"^{requirements.VSCODE_TEXT}"
    model = read("vscode-extension/src/model/python.ts")
    major, minor = requirements.PYTHON
    assert f"MIN_PYTHON: readonly [number, number] = [{major}, {minor}];" in model


def test_the_vsix_bundles_the_pythons_requirements_names() -> None:
    bundle = runpy.run_path(str(REPO / "vscode-extension" / "scripts" / "bundle.py"))
    assert tuple(bundle["PYTHONS"]) == requirements.BUNDLED_PYTHONS


def test_compiled_dependencies_are_asked_for_only_where_they_have_wheels() -> None:
    """pyproject's compiled dependencies stop at the CPython after the newest one the .vsix
    carries modules for: a newer Python installs acpls without them and runs on the standard
    library, instead of failing to build them from source."""
    from packaging.requirements import Requirement

    newest = requirements.BUNDLED_PYTHONS[-1]
    major, minor = newest.split(".")
    beyond = f"{major}.{int(minor) + 1}"
    project = tomllib.loads(read("pyproject.toml"))["project"]
    compiled = {"orjson", "pybase64", "uvloop", "pywinpty"}
    found = set()
    for line in project["dependencies"]:
        requirement = Requirement(line)
        if requirement.name not in compiled:
            continue
        found.add(requirement.name)
        assert requirement.marker is not None, line
        for python, wanted in ((newest, True), (beyond, False)):
            env = {
                "python_version": python,
                "platform_python_implementation": "CPython",
                "sys_platform": "win32" if requirement.name == "pywinpty" else "linux",
            }
            assert requirement.marker.evaluate(env) is wanted, (line, python)
    assert found == compiled
