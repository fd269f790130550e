"""The acpls/* message classes, editors/protocol.md and editors/fixtures/ must agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import attrs
import cattrs
import pytest

from acpls.editor import messages

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = (ROOT / "editors" / "protocol.md").read_text(encoding="utf-8")
FIXTURES = sorted((ROOT / "editors" / "fixtures").glob("acpls_*.json"))  # messages
NORMALISED_KINDS = re.findall(
    r"^\| `([a-z_]+)` \|", PROTOCOL.split("### 5.4")[1].split("###")[0], re.M
)


def _section(method: str) -> str:
    match = re.search(rf"^### [\d.]+ `{re.escape(method)}`.*?(?=^### |\Z)", PROTOCOL, re.M | re.S)
    assert match, f"editors/protocol.md has no section for {method}"
    return match.group(0)


def _fixture(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("method", sorted(messages.METHODS))
def test_every_method_is_documented_with_every_field(method: str) -> None:
    section = _section(method)
    spec = messages.METHODS[method]
    assert spec.kind in section, f"{method}: section does not say it is a {spec.kind}"
    for field in attrs.fields(spec.params):
        assert f'"{field.name}"' in section or f"`{field.name}`" in section, (
            f"{method}: field {field.name} is not documented"
        )
    assert "```json" in section, f"{method}: no example"


@pytest.mark.parametrize("method", sorted(messages.METHODS))
def test_every_method_has_a_fixture(method: str) -> None:
    stem = method.replace("/", "_")
    assert any(p.name.split(".")[0] == stem for p in FIXTURES), f"no fixture for {method}"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_parses_and_round_trips(path: Path) -> None:
    body = _fixture(path)
    method = path.name.split(".")[0].replace("_", "/", 1)
    spec = messages.METHODS[method]
    if "result" in body:
        assert spec.result is not None
        parsed = messages._converter.structure(body["result"], spec.result)
        assert messages.to_json(parsed) == body["result"]
        return
    assert body["method"] == method
    parsed = messages.from_json(method, body["params"])
    assert messages.to_json(parsed) == body["params"]


def test_every_documented_normalised_update_has_a_fixture() -> None:
    assert len(NORMALISED_KINDS) >= 12
    kinds = set()
    for path in FIXTURES:
        body = _fixture(path)
        if body.get("method") == messages.SESSION_UPDATE:
            kinds.add(body["params"]["update"]["sessionUpdate"])
    missing = set(NORMALISED_KINDS) - kinds - {"compaction"}
    assert not missing, f"no fixture for normalised updates {sorted(missing)}"


def test_unknown_update_fixture_is_forwarded_raw() -> None:
    body = _fixture(ROOT / "editors" / "fixtures" / "acpls_sessionUpdate.unknown.json")
    update = body["params"]["update"]
    assert update["sessionUpdate"] not in NORMALISED_KINDS
    assert update["_meta"] == {"zed.dev": {"x": 1}}


def test_wrong_field_is_rejected() -> None:
    with pytest.raises(cattrs.BaseValidationError):
        messages.from_json(messages.FOLLOW_AGENT, {"sessionId": "s", "uri": "file:///a"})
    with pytest.raises(cattrs.BaseValidationError):
        messages.from_json(messages.FOLLOW_STATE, {"enabled": True, "bogus": 1})
