"""The Neovim plugin checks every server setting of editors/fixtures/settings.json (the schema the
Python parser and VS Code are tested against too): its default is accepted and sent to the server,
a wrong type is reported naming the key, so a setting cannot be missing from config.lua again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.nvim.conftest import REPO

pytestmark = pytest.mark.nvim

KEYS: dict[str, dict[str, Any]] = json.loads(
    (REPO / "editors" / "fixtures" / "settings.json").read_text("utf-8")
)["settings"]


def _nested(key: str, value: Any) -> dict[str, Any]:
    section, _, sub = key.partition(".")
    return {section: {sub: value}} if sub else {section: value}


def _wrong(entry: dict[str, Any]) -> Any:
    types = entry["type"] if isinstance(entry["type"], list) else [entry["type"]]
    return "not-a-boolean" if "boolean" in types else True


def test_every_setting_is_validated_and_sent(plain_nvim):
    nvim = plain_nvim
    server_keys = set(nvim.exec_lua("return require('acpls.config').server_keys"))
    assert server_keys == {key.split(".")[0] for key in KEYS}
    for key, entry in KEYS.items():
        for value in (entry["default"], entry["example"]):
            opts = _nested(key, value)
            problems = nvim.exec_lua("return require('acpls.config').validate(...)", opts)
            assert problems == [], (key, value, problems)
            sent = nvim.exec_lua(
                "local c = require('acpls.config'); return c.server_settings(...)", opts
            )
            assert json.loads(json.dumps(sent)) == opts or value in ([], {}), (key, sent)
        problems = nvim.exec_lua(
            "return require('acpls.config').validate(...)", _nested(key, _wrong(entry))
        )
        assert [p["level"] for p in problems] == ["error"], (key, problems)
        assert problems[0]["msg"].startswith(f"{key}:"), (key, problems)
