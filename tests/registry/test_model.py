"""The registry format as published: the bundled snapshot parses and round-trips, unknown keys are
kept, packages are pinned to the registry's version, platforms map to the registry's targets."""

from __future__ import annotations

import json

import pytest

from acpls.presets import PRESET_LIST
from acpls.registry.bundled import load_snapshot, snapshot_text
from acpls.registry.model import (
    PLATFORMS,
    PackageDistribution,
    RegistryFormatError,
    current_platform,
    parse_registry,
    unstructure_registry,
)


def test_the_snapshot_parses_and_round_trips_to_the_published_json():
    raw = json.loads(snapshot_text())
    registry = load_snapshot()
    assert len(registry.agents) == len(raw["agents"]) >= 10
    assert unstructure_registry(registry) == raw
    gemini = registry.agent("gemini")
    assert gemini is not None and gemini.distribution.kinds == ("npx",)
    assert gemini.icon == "https://cdn.agentclientprotocol.com/registry/v1/latest/gemini.svg"
    for agent in registry.agents:
        assert set(agent.distribution.binary) <= set(PLATFORMS), agent.id


def test_unknown_keys_are_kept_at_every_level():
    raw = {
        "version": "1.1.0",
        "generatedAt": "2026-12-01",
        "agents": [
            {
                "id": "a",
                "name": "A",
                "version": "1.0.0",
                "description": "d",
                "authMethods": [{"id": "x"}],
                "distribution": {
                    "npx": {"package": "a", "engines": ">=20"},
                    "binary": {
                        "linux-x86_64": {"archive": "https://x/a.tgz", "cmd": "a", "sha256": "AB"}
                    },
                    "docker": {"image": "a"},
                },
            }
        ],
        "extensions": [],
    }
    registry = parse_registry(raw)
    agent = registry.agents[0]
    assert registry.extra == {"generatedAt": "2026-12-01"}
    assert agent.extra == {"authMethods": [{"id": "x"}]}
    assert agent.distribution.extra == {"docker": {"image": "a"}}
    assert agent.distribution.npx is not None and agent.distribution.npx.extra == {
        "engines": ">=20"
    }
    assert agent.binary_target("linux-x86_64").sha256 == "ab"  # type: ignore[union-attr]
    assert unstructure_registry(registry) == raw


def test_a_malformed_entry_is_dropped_and_the_rest_kept():
    good = {
        "id": "ok",
        "name": "OK",
        "version": "1.0.0",
        "description": "d",
        "distribution": {"npx": {"package": "ok"}},
    }
    bad = [
        {"id": "Bad Id", **{k: v for k, v in good.items() if k != "id"}},
        {k: v for k, v in good.items() if k != "distribution"},
        {**good, "id": "no-dist", "distribution": {}},
        {**good, "id": "bad-npx", "distribution": {"npx": {"args": []}}},
        "not an object",
    ]
    registry = parse_registry({"version": "1.0.0", "agents": [*bad, good]})
    assert [a.id for a in registry.agents] == ["ok"]


@pytest.mark.parametrize("raw", [[], {"agents": []}, {"version": "1", "agents": {}}])
def test_a_document_without_the_registry_shape_is_refused(raw):
    with pytest.raises(RegistryFormatError):
        parse_registry(raw)


@pytest.mark.parametrize(
    ("package", "npm", "pypi"),
    [
        ("@scope/pkg", "@scope/pkg@1.2.3", "@scope/pkg"),
        ("@scope/pkg@0.9.0", "@scope/pkg@0.9.0", "@scope/pkg@0.9.0"),
        ("pkg", "pkg@1.2.3", "pkg==1.2.3"),
        ("pkg==2.0", None, "pkg==2.0"),
    ],
)
def test_packages_are_pinned_to_the_registry_version(package, npm, pypi):
    dist = PackageDistribution(package=package)
    if npm is not None:
        assert dist.pinned_npm("1.2.3") == npm
    if not package.startswith("@"):
        assert dist.pinned_pypi("1.2.3") == pypi


@pytest.mark.parametrize(
    ("system", "machine", "target"),
    [
        ("Linux", "x86_64", "linux-x86_64"),
        ("Linux", "aarch64", "linux-aarch64"),
        ("Darwin", "arm64", "darwin-aarch64"),
        ("Windows", "AMD64", "windows-x86_64"),
        ("FreeBSD", "x86_64", None),
        ("Linux", "riscv64", None),
    ],
)
def test_current_platform(system, machine, target):
    assert current_platform(system, machine) == target


def test_presets_name_their_registry_entry_and_share_its_package_where_it_matches():
    """A preset stands for a registry entry (its description and icon are shown); where the npm
    package is the same, the preset keeps its own tested version (newer than the snapshot's)."""
    snapshot = load_snapshot()
    same_package = set()
    for preset in PRESET_LIST:
        if preset.registry_id is None:
            continue
        agent = snapshot.agent(preset.registry_id)
        assert agent is not None, preset.name
        npx = agent.distribution.npx
        package = preset.package
        if (
            npx is not None
            and package
            and npx.package.rsplit("@", 1)[0] == package.rsplit("@", 1)[0]
        ):
            same_package.add(preset.name)
    assert same_package == {"gemini", "qwen"}
