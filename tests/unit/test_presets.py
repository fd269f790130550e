"""Presets: the executable on PATH when there is one, else the pinned npm package through npx."""

from __future__ import annotations

import re

import pytest

from acpls.presets import PRESET_LIST, PRESETS_BY_NAME, resolve_preset
from acpls.settings import parse_settings

ACP_ARGS = {
    "claude": (),
    "gemini": ("--acp",),
    "codex": (),
    "opencode": ("acp",),
    "qwen": ("--acp",),
    "copilot": ("--acp",),
    "goose": ("acp",),
}


def test_every_preset_the_issue_names_exists():
    assert set(PRESETS_BY_NAME) == {*ACP_ARGS, "demo"}


@pytest.mark.parametrize("name", sorted(ACP_ARGS))
def test_on_path_the_users_own_install_runs_with_its_acp_arguments(name):
    preset = PRESETS_BY_NAME[name]
    spec = preset.resolve(which=lambda exe: f"/usr/local/bin/{exe}")
    assert spec.argv == [preset.executable, *ACP_ARGS[name]]


@pytest.mark.parametrize("preset", [p for p in PRESET_LIST if p.package], ids=lambda p: p.name)
def test_not_on_path_npx_runs_the_pinned_package(preset):
    spec = preset.resolve(which=lambda exe: None)
    assert spec.command == "npx"
    assert re.fullmatch(r"(@[\w.-]+/)?[\w.-]+@\d+\.\d+\.\d+", preset.package or "")
    assert spec.args == ("-y", f"--package={preset.package}", "--", preset.executable, *preset.args)


def test_goose_and_demo_are_never_run_through_npx():
    assert resolve_preset("goose").command == "goose"
    demo = resolve_preset("demo")
    assert demo.args == ("-m", "acpls.demo")


def test_the_setting_resolves_a_preset_and_rejects_an_unknown_one():
    settings, problems = parse_settings({"agent": "qwen"})
    assert not problems and settings.agent.name == "qwen"
    _, problems = parse_settings({"agent": "nope"})
    assert problems and "copilot" in problems[0]


def test_install_hints_name_the_pinned_version():
    for preset in PRESET_LIST:
        if preset.package:
            assert preset.package in preset.install_hint
