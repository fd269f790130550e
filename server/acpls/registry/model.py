"""The registry format as published by agentclientprotocol/registry (registry.schema.json and
agent.schema.json, FORMAT.md): `{"version", "agents": [...], "extensions": [...]}`, each entry with
an id, name, version, description and a `distribution` of `npx`, `uvx` and/or per-platform `binary`
archives. Parsed with cattrs; keys acpls does not know are kept raw in `extra` (a newer registry
may add them, and `sha256` on a binary target is read from there)."""

from __future__ import annotations

import platform as _platform
import re
from collections.abc import Mapping
from typing import Any

import attrs
import cattrs

from acpls.registry.spec import DEFAULT_REGISTRY_URL as DEFAULT_REGISTRY_URL

PLATFORMS = (
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
)
_ID = re.compile(r"^[a-z][a-z0-9-]*$")


class RegistryFormatError(ValueError):
    """The registry document does not have the published shape."""


@attrs.frozen
class PackageDistribution:
    """An `npx` or `uvx` distribution: a package (maybe with its version) and its ACP arguments."""

    package: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    extra: Mapping[str, Any] = attrs.field(factory=dict, eq=False)

    def pinned_npm(self, version: str) -> str:
        """`name@version`: the registry's own version when the package names none (never latest)."""
        name_part = self.package[1:] if self.package.startswith("@") else self.package
        return self.package if "@" in name_part else f"{self.package}@{version}"

    def pinned_pypi(self, version: str) -> str:
        """`name==version` unless the package already carries a version (`==`, `@`, `>=`...)."""
        if re.search(r"[=<>~!@]", self.package):
            return self.package
        return f"{self.package}=={version}"


@attrs.frozen
class BinaryTarget:
    """One platform's archive: where to download it and what to run inside it."""

    archive: str
    cmd: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    extra: Mapping[str, Any] = attrs.field(factory=dict, eq=False)

    @property
    def sha256(self) -> str | None:
        value = self.extra.get("sha256")
        return value.lower() if isinstance(value, str) else None


@attrs.frozen
class Distribution:
    npx: PackageDistribution | None = None
    uvx: PackageDistribution | None = None
    binary: Mapping[str, BinaryTarget] = attrs.field(factory=dict)
    extra: Mapping[str, Any] = attrs.field(factory=dict, eq=False)

    @property
    def kinds(self) -> tuple[str, ...]:
        found = (("npx", self.npx), ("uvx", self.uvx), ("binary", self.binary or None))
        return tuple(kind for kind, value in found if value is not None)


@attrs.frozen
class RegistryAgent:
    id: str
    name: str
    version: str
    description: str
    distribution: Distribution
    repository: str | None = None
    authors: tuple[str, ...] = ()
    license: str | None = None
    icon: str | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict, eq=False)

    def binary_target(self, platform: str | None) -> BinaryTarget | None:
        return self.distribution.binary.get(platform) if platform else None


@attrs.frozen
class Registry:
    version: str
    agents: tuple[RegistryAgent, ...] = ()
    extensions: tuple[RegistryAgent, ...] = ()
    extra: Mapping[str, Any] = attrs.field(factory=dict, eq=False)

    def agent(self, agent_id: str) -> RegistryAgent | None:
        return next((a for a in self.agents if a.id == agent_id), None)


def current_platform(system: str | None = None, machine: str | None = None) -> str | None:
    """This machine as a registry platform target (`linux-x86_64`...), None when it has none."""
    os_name = {"linux": "linux", "darwin": "darwin", "windows": "windows"}.get(
        (system or _platform.system()).lower()
    )
    arch = {
        "x86_64": "x86_64",
        "amd64": "x86_64",
        "aarch64": "aarch64",
        "arm64": "aarch64",
    }.get((machine or _platform.machine()).lower())
    return f"{os_name}-{arch}" if os_name and arch else None


def _with_extra(cls: type) -> Any:
    """A structure hook for an attrs class that keeps the keys it does not declare in `extra`."""
    names = {f.name for f in attrs.fields(cls)} - {"extra"}
    base = converter.gen_structure_attrs_fromdict(cls)

    def structure(value: Any, _: Any) -> Any:
        if not isinstance(value, Mapping):
            raise RegistryFormatError(f"{cls.__name__}: expected an object, got {value!r}")
        known = {k: v for k, v in value.items() if k in names}
        extra = {k: v for k, v in value.items() if k not in names}
        obj = base(known, cls)
        return attrs.evolve(obj, extra=extra)

    return structure


converter = cattrs.Converter(forbid_extra_keys=False)
for _cls in (PackageDistribution, BinaryTarget, Distribution, RegistryAgent, Registry):
    converter.register_structure_hook(_cls, _with_extra(_cls))


def parse_registry(raw: Any) -> Registry:
    """The registry from its JSON; RegistryFormatError when it has not the published shape. An
    agent entry that is malformed on its own is dropped (one bad entry must not hide the rest)."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("agents"), list):
        raise RegistryFormatError("a registry is an object with an `agents` list")
    if not isinstance(raw.get("version"), str):
        raise RegistryFormatError("the registry has no `version` string")
    agents = tuple(a for a in (_agent_or_none(e) for e in raw["agents"]) if a is not None)
    extensions = tuple(
        a for a in (_agent_or_none(e) for e in raw.get("extensions") or []) if a is not None
    )
    extra = {k: v for k, v in raw.items() if k not in ("version", "agents", "extensions")}
    return Registry(version=raw["version"], agents=agents, extensions=extensions, extra=extra)


def _agent_or_none(entry: Any) -> RegistryAgent | None:
    try:
        agent = converter.structure(entry, RegistryAgent)
    except (cattrs.BaseValidationError, RegistryFormatError, TypeError, ValueError, KeyError):
        return None
    if not _ID.match(agent.id) or not agent.distribution.kinds:
        return None
    return agent


def unstructure_registry(registry: Registry) -> dict[str, Any]:
    """Back to the published JSON shape, unknown keys included (round-trips what was parsed)."""
    return {
        "version": registry.version,
        "agents": [_entry_json(a) for a in registry.agents],
        "extensions": [_entry_json(a) for a in registry.extensions],
        **registry.extra,
    }


def _entry_json(agent: RegistryAgent) -> dict[str, Any]:
    dist = agent.distribution
    out: dict[str, Any] = {
        "id": agent.id,
        "name": agent.name,
        "version": agent.version,
        "description": agent.description,
    }
    for key in ("repository", "license", "icon"):
        if getattr(agent, key) is not None:
            out[key] = getattr(agent, key)
    if agent.authors:
        out["authors"] = list(agent.authors)
    distribution: dict[str, Any] = dict(dist.extra)
    for kind in ("npx", "uvx"):
        pkg: PackageDistribution | None = getattr(dist, kind)
        if pkg is not None:
            distribution[kind] = _drop_empty(
                {"package": pkg.package, "args": list(pkg.args), "env": dict(pkg.env), **pkg.extra}
            )
    if dist.binary:
        distribution["binary"] = {
            name: _drop_empty(
                {
                    "archive": t.archive,
                    "cmd": t.cmd,
                    "args": list(t.args),
                    "env": dict(t.env),
                    **t.extra,
                }
            )
            for name, t in dist.binary.items()
        }
    out["distribution"] = distribution
    return {**out, **agent.extra}


def _drop_empty(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v not in ([], {})}
