"""acpls settings: the `acpls` section of initializationOptions / didChangeConfiguration.

Every key is optional (editors/protocol.md section 1). Parsing never raises on a wrong value: the
wrong key keeps its default and the problem is returned, so the editor can be told what was ignored.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from acpls.presets import PRESETS_BY_NAME, AgentSpec, resolve_preset

DEFAULT_SCROLLBACK = 4 * 1024 * 1024
DEFAULT_MAX_LINE = 64 * 1024 * 1024
DEFAULT_MAX_AGENT_INPUT = 64 * 1024 * 1024


@attrs.frozen
class Settings:
    agent: AgentSpec = attrs.field(factory=lambda: resolve_preset("demo"))
    protocol_version: Literal["auto", 1, 2] = "auto"
    follow_enabled: bool = True
    mcp_servers: tuple[Any, ...] = ()
    auto_approve_kinds: tuple[str, ...] = ()
    remember_rules: bool = True
    allowed_roots: tuple[str, ...] = ()
    scrollback_bytes: int = DEFAULT_SCROLLBACK
    raw_terminal_output: bool = False
    env_remove: tuple[str, ...] = ()
    max_line_bytes: int = DEFAULT_MAX_LINE
    max_pending_permissions: int = 1000
    max_agent_input_bytes: int = DEFAULT_MAX_AGENT_INPUT
    log_level: str | None = None  # None: as the command line says (--log-level)

    def agent_restart_key(self) -> tuple[Any, ...]:
        """Settings whose change means the running agent must be restarted."""
        return (self.agent, self.protocol_version, self.env_remove, repr(self.mcp_servers))

    def base_env(self, base: Mapping[str, str]) -> dict[str, str]:
        """The editor's environment minus `env.remove`: what any agent acpls starts inherits."""
        return {k: v for k, v in base.items() if not _removed(k, self.env_remove)}

    def agent_env(self, base: Mapping[str, str]) -> dict[str, str]:
        """The editor's environment minus `env.remove`, plus the agent's own env."""
        return {**self.base_env(base), **dict(self.agent.env)}


def _removed(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def parse_settings(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from an editor's JSON; returns (settings, problems)."""
    base = base or Settings()
    problems: list[str] = []
    if raw is None:
        return base, problems
    if not isinstance(raw, Mapping):
        return base, [f"settings must be an object, got {type(raw).__name__}"]
    if isinstance(raw.get("acpls"), Mapping):  # didChangeConfiguration sends {"acpls": {...}}
        raw = raw["acpls"]
    changes: dict[str, Any] = {}
    for key, parse in _PARSERS.items():
        if key in raw:
            try:
                changes.update(parse(raw[key]))
            except (TypeError, ValueError) as exc:
                problems.append(f"acpls.{key}: {exc}")
    unknown = sorted(set(raw) - set(_PARSERS))
    if unknown:
        problems.append("unknown settings ignored: " + ", ".join(f"acpls.{k}" for k in unknown))
    return attrs.evolve(base, **changes), problems


def _parse_agent(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        if value not in PRESETS_BY_NAME:
            names = ", ".join(sorted(PRESETS_BY_NAME))
            raise ValueError(f"unknown preset {value!r} (presets: {names})")
        return {"agent": resolve_preset(value)}
    if not isinstance(value, Mapping):
        raise TypeError("must be a preset name or {command, args?, env?}")
    command = value.get("command")
    if not isinstance(command, str) or not command:
        raise ValueError("agent.command must be a non-empty string")
    args = value.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise TypeError("agent.args must be a list of strings")
    env = value.get("env") or {}
    if not isinstance(env, Mapping) or not all(isinstance(v, str) for v in env.values()):
        raise TypeError("agent.env must map names to strings")
    given = value.get("name")
    name = given if isinstance(given, str) else command.rsplit("/", 1)[-1]
    spec = AgentSpec(name=name, command=command, args=tuple(args), env=tuple(sorted(env.items())))
    return {"agent": spec}


def _parse_version(value: Any) -> dict[str, Any]:
    versions: dict[Any, Literal["auto", 1, 2]] = {"auto": "auto", 1: 1, 2: 2, "1": 1, "2": 2}
    if not isinstance(value, bool) and value in versions:
        return {"protocol_version": versions[value]}
    raise ValueError(f'must be "auto", 1 or 2, got {value!r}')


def _section(value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError("must be an object")
    return value


def _bool(section: Mapping[str, Any], key: str) -> bool:
    value = section[key]
    if not isinstance(value, bool):
        raise TypeError(f"{key} must be true or false")
    return value


def _positive_int(section: Mapping[str, Any], key: str) -> int:
    value = section[key]
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{key} must be a positive integer")
    return value


def _strings(section: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = section[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{key} must be a list of strings")
    return tuple(value)


def _parse_follow(value: Any) -> dict[str, Any]:
    section = _section(value)
    return {"follow_enabled": _bool(section, "enabled")} if "enabled" in section else {}


def _parse_mcp(value: Any) -> dict[str, Any]:
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise TypeError("must be a list of MCP server objects")
    return {"mcp_servers": tuple(value)}


def _parse_permissions(value: Any) -> dict[str, Any]:
    section = _section(value)
    out: dict[str, Any] = {}
    if "autoApprove" in section:
        out["auto_approve_kinds"] = _strings(section, "autoApprove")
    if "rules" in section:
        out["remember_rules"] = _bool(section, "rules")
    return out


def _parse_files(value: Any) -> dict[str, Any]:
    section = _section(value)
    return {"allowed_roots": _strings(section, "allowedRoots")} if "allowedRoots" in section else {}


def _parse_terminal(value: Any) -> dict[str, Any]:
    section = _section(value)
    out: dict[str, Any] = {}
    if "scrollbackBytes" in section:
        out["scrollback_bytes"] = _positive_int(section, "scrollbackBytes")
    if "rawOutput" in section:
        out["raw_terminal_output"] = _bool(section, "rawOutput")
    return out


def _parse_env(value: Any) -> dict[str, Any]:
    section = _section(value)
    return {"env_remove": _strings(section, "remove")} if "remove" in section else {}


def _parse_limits(value: Any) -> dict[str, Any]:
    section = _section(value)
    out: dict[str, Any] = {}
    if "maxLineBytes" in section:
        out["max_line_bytes"] = _positive_int(section, "maxLineBytes")
    if "maxPendingPermissions" in section:
        out["max_pending_permissions"] = _positive_int(section, "maxPendingPermissions")
    if "maxAgentInputBytes" in section:
        out["max_agent_input_bytes"] = _positive_int(section, "maxAgentInputBytes")
    return out


def _parse_log(value: Any) -> dict[str, Any]:
    section = _section(value)
    level = section.get("level", "info")
    if level not in ("debug", "info", "warning", "error"):
        raise ValueError("log.level must be debug, info, warning or error")
    return {"log_level": level}


_PARSERS = {
    "agent": _parse_agent,
    "protocolVersion": _parse_version,
    "follow": _parse_follow,
    "mcpServers": _parse_mcp,
    "permissions": _parse_permissions,
    "files": _parse_files,
    "terminal": _parse_terminal,
    "env": _parse_env,
    "limits": _parse_limits,
    "log": _parse_log,
}
