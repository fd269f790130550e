"""Settings: every key parsed, wrong values reported and ignored, nothing raised."""

from __future__ import annotations

from acpls.presets import resolve_preset
from acpls.settings import Settings, parse_settings


def test_defaults_when_nothing_is_given() -> None:
    settings, problems = parse_settings(None)
    assert settings == Settings() and problems == []
    assert settings.agent.name == "demo" and settings.protocol_version == "auto"


def test_preset_and_custom_agent() -> None:
    claude, _ = parse_settings({"agent": "claude"})
    assert claude.agent == resolve_preset("claude")
    custom, problems = parse_settings(
        {"agent": {"command": "/opt/bin/my-agent", "args": ["--acp"], "env": {"TOKEN": "x"}}}
    )
    assert problems == []
    assert custom.agent.argv == ["/opt/bin/my-agent", "--acp"]
    assert custom.agent.name == "my-agent"
    assert custom.agent_env({"PATH": "/bin"}) == {"PATH": "/bin", "TOKEN": "x"}


def test_did_change_configuration_shape_is_accepted() -> None:
    settings, problems = parse_settings(
        {"acpls": {"follow": {"enabled": False}, "protocolVersion": 1}}
    )
    assert problems == []
    assert settings.follow_enabled is False and settings.protocol_version == 1


def test_wrong_values_are_reported_and_keep_their_defaults() -> None:
    settings, problems = parse_settings(
        {
            "agent": "nonesuch",
            "protocolVersion": 3,
            "follow": {"enabled": "yes"},
            "terminal": {"scrollbackBytes": -1},
            "bogus": 1,
        }
    )
    assert settings == Settings()
    text = "\n".join(problems)
    for fragment in (
        "unknown agent 'nonesuch'",
        "protocolVersion",
        "follow.enabled: must be",
        "scrollbackBytes",
        "acpls.bogus",
    ):
        assert fragment in text


def test_a_later_change_keeps_what_it_does_not_mention() -> None:
    first, _ = parse_settings({"agent": "gemini", "permissions": {"autoApprove": ["read"]}})
    second, _ = parse_settings({"follow": {"enabled": False}}, first)
    assert second.agent == resolve_preset("gemini") and second.auto_approve_kinds == ("read",)
    assert second.follow_enabled is False


def test_env_remove_takes_names_and_globs() -> None:
    settings, _ = parse_settings({"env": {"remove": ["AWS_*", "GITHUB_TOKEN"]}})
    env = settings.agent_env({"AWS_KEY": "1", "AWS_SECRET": "2", "GITHUB_TOKEN": "3", "HOME": "/h"})
    assert env == {"HOME": "/h"}


def test_restart_key_changes_only_for_agent_settings() -> None:
    base = Settings()
    follow, _ = parse_settings({"follow": {"enabled": False}}, base)
    agent, _ = parse_settings({"agent": "codex"}, base)
    assert follow.agent_restart_key() == base.agent_restart_key()
    assert agent.agent_restart_key() != base.agent_restart_key()
