"""One settings schema: editors/fixtures/settings.json lists every server setting, and the Python
parser, editors/protocol.md, the VS Code contributions and settings model must all have each key
with the same type and default (the Neovim side is checked in tests/nvim/test_settings_schema.py).
A key added to one front end and not the others fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest

from acpls import settings as settings_module
from acpls.settings import Settings, parse_settings

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "editors" / "fixtures" / "settings.json").read_text("utf-8"))
KEYS: dict[str, dict[str, Any]] = SCHEMA["settings"]
PACKAGE = json.loads((ROOT / "vscode-extension" / "package.json").read_text("utf-8"))
CONTRIBUTED = PACKAGE["contributes"]["configuration"]["properties"]
# VS Code settings that the extension reads itself and never sends to the server.
VSCODE_ONLY = {"permissions.ui", "python", "server.command", "trace.server"}
# `log.level` unset means "as --log-level says" in the server; editors show its usual value.
SERVER_DEFAULT_NONE = {"log.level"}


def _nested(key: str, value: Any) -> dict[str, Any]:
    section, _, sub = key.partition(".")
    return {section: {sub: value}} if sub else {section: value}


def _field(key: str) -> str:
    return settings_module._KEYS[key][0]


def test_the_schema_and_the_python_parser_have_the_same_keys() -> None:
    assert set(KEYS) == set(settings_module.KEYS)


@pytest.mark.parametrize("key", sorted(KEYS))
def test_every_key_is_complete(key: str) -> None:
    entry = KEYS[key]
    assert {"type", "default", "description", "example"} <= set(entry), key
    assert entry["description"].strip(), key
    assert entry["example"] != entry["default"], f"{key}: the example must differ from the default"


@pytest.mark.parametrize("key", sorted(KEYS))
def test_python_default_and_example(key: str) -> None:
    entry = KEYS[key]
    default, problems = parse_settings(_nested(key, entry["default"]))
    assert problems == []
    if key in SERVER_DEFAULT_NONE:
        assert getattr(Settings(), _field(key)) is None
    else:
        assert default == Settings(), f"{key}: the schema's default is not the parser's"
    example, problems = parse_settings(_nested(key, entry["example"]))
    assert problems == []
    assert getattr(example, _field(key)) != getattr(Settings(), _field(key))


@pytest.mark.parametrize("key", sorted(KEYS))
def test_python_rejects_a_wrong_type(key: str) -> None:
    wrong: Any = {"wrong": "type"} if "object" not in KEYS[key]["type"] else 12.5
    settings, problems = parse_settings(_nested(key, wrong))
    assert settings == Settings()
    assert any(p.startswith(f"acpls.{key}:") for p in problems), problems


def test_restart_keys_are_the_ones_the_schema_marks() -> None:
    base = Settings()
    for key, entry in KEYS.items():
        changed, _ = parse_settings(_nested(key, entry["example"]))
        restarts = changed.agent_restart_key() != base.agent_restart_key()
        assert restarts == bool(entry.get("restartsAgent")), key


def test_protocol_md_documents_every_key_with_its_default() -> None:
    doc = (ROOT / "editors" / "protocol.md").read_text("utf-8")
    section = doc.split("| key | meaning | default |", 1)[1].split("\n\n", 1)[0]
    rows = dict(re.findall(r"^\| `([\w.]+)` \|.*\| (.+?) \|$", section, re.M))
    assert set(rows) == set(KEYS)
    for key, entry in KEYS.items():
        shown = rows[key].strip("`")
        assert (
            json.loads(shown)
            if shown[:1] in '"[{' or shown[:1].isdigit() or shown in ("true", "false")
            else shown
        ) == entry["default"], key


@pytest.mark.parametrize("key", sorted(KEYS))
def test_vscode_contributes_the_key(key: str) -> None:
    contributed = CONTRIBUTED.get(f"acpls.{key}")
    assert contributed is not None, f"package.json does not contribute acpls.{key}"
    entry = KEYS[key]
    assert contributed["type"] == entry["type"], key
    assert contributed["default"] == entry["default"], key
    assert contributed.get("enum") == entry.get("enum"), key
    assert contributed.get("minimum") == entry.get("minimum"), key
    if "items" in entry:
        assert contributed["items"]["type"] == entry["items"], key
    described = contributed.get("markdownDescription") or contributed.get("description")
    assert described == entry["description"], key


def test_vscode_contributes_nothing_else() -> None:
    contributed = {name.removeprefix("acpls.") for name in CONTRIBUTED}
    assert contributed - VSCODE_ONLY == set(KEYS)


def test_vscode_settings_model_sends_every_key() -> None:
    source = (ROOT / "vscode-extension" / "src" / "model" / "settings.ts").read_text("utf-8")
    block = source.split("export const SERVER_KEYS = [", 1)[1].split("] as const", 1)[0]
    assert re.findall(r'"([\w.]+)"', block) == list(KEYS)


def test_settings_attrs_fields_are_all_reachable() -> None:
    """Every Settings field but the agent's own is set by exactly one key."""
    fields = {f.name for f in attrs.fields(Settings)}
    assert sorted(_field(k) for k in KEYS) == sorted(fields)
