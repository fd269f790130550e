"""acpls settings: the `acpls` section of initializationOptions / didChangeConfiguration.

Every key is optional (editors/protocol.md section 1). Parsing never raises on a wrong value: the
wrong key keeps its default and the problem is returned, so the editor can be told what was ignored.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from acpls.presets import PRESETS_BY_NAME, AgentSpec, resolve_preset
from acpls.registry.spec import DEFAULT_REGISTRY_URL
from acpls.state.protected import valid_glob

# Resolves an agent name that is no preset (a registry id) given the registry URL; raises
# ValueError when it cannot. The hub passes its catalog's; the default reads the cache/snapshot.
AgentResolver = Callable[[str, str], AgentSpec]

DEFAULT_SCROLLBACK = 4 * 1024 * 1024
DEFAULT_MAX_LINE = 64 * 1024 * 1024
DEFAULT_MAX_AGENT_INPUT = 64 * 1024 * 1024
# Bytes of a file acpls reads from disk for one fs/read_text_file (and for its own looks at a
# file an agent named): a larger file is refused, or read by line/limit windows.
DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024


@attrs.frozen
class Settings:
    agent: AgentSpec = attrs.field(factory=lambda: resolve_preset("demo"))
    protocol_version: Literal["auto", 1, 2] = "auto"
    follow_enabled: bool = True
    follow_subagents: bool = False
    mcp_servers: tuple[Any, ...] = ()
    auto_approve_kinds: tuple[str, ...] = ()
    remember_rules: bool = True
    allowed_roots: tuple[str, ...] = ()
    # Globs (relative to a workspace root, or absolute) where a write is always asked about.
    always_ask: tuple[str, ...] = ()
    scrollback_bytes: int = DEFAULT_SCROLLBACK
    raw_terminal_output: bool = False
    env_remove: tuple[str, ...] = ()
    max_line_bytes: int = DEFAULT_MAX_LINE
    max_pending_permissions: int = 1000
    max_agent_input_bytes: int = DEFAULT_MAX_AGENT_INPUT
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES
    log_level: str | None = None  # None: as the command line says (--log-level)
    checkpoints_enabled: bool = True
    checkpoint_max_count: int = 200
    checkpoint_max_storage_bytes: int = 1024 * 1024 * 1024
    checkpoint_max_file_bytes: int = 5 * 1024 * 1024
    checkpoint_binary_budget_bytes: int = 20 * 1024 * 1024
    checkpoint_fork: bool = True
    context_max_embed_bytes: int = 256 * 1024
    context_max_image_bytes: int = 5 * 1024 * 1024
    registry_url: str = DEFAULT_REGISTRY_URL
    # Agent name -> the mode id set after session/new (`defaultMode`).
    default_modes: tuple[tuple[str, str], ...] = ()
    # Agent name -> (config option id, value) pairs set on each session (`defaultConfig`).
    default_configs: tuple[tuple[str, tuple[tuple[str, str | bool], ...]], ...] = ()
    # More agents by name (`agents`): name -> an agent object's spec (named by the key) or the
    # preset / registry name it stands for (resolved when a session asks for it).
    agents: tuple[tuple[str, AgentSpec | str], ...] = ()

    def agent_restart_key(self) -> tuple[Any, ...]:
        """Settings whose change means the running agent must be restarted."""
        return (self.agent, self.protocol_version, self.env_remove, repr(self.mcp_servers))

    def default_mode(self, agent: str) -> str | None:
        """The mode `agent`'s new sessions are put in (`defaultMode`), or None (its own)."""
        return dict(self.default_modes).get(agent)

    def default_config(self, agent: str) -> tuple[tuple[str, str | bool], ...]:
        """The config options `agent`'s sessions are given (`defaultConfig`), in order."""
        return dict(self.default_configs).get(agent, ())

    def configured_agent(self, name: str) -> AgentSpec | str | None:
        """The `agents` setting's entry for `name`, or None."""
        return dict(self.agents).get(name)

    def base_env(self, base: Mapping[str, str]) -> dict[str, str]:
        """The editor's environment minus `env.remove`: what any agent acpls starts inherits."""
        return {k: v for k, v in base.items() if not _removed(k, self.env_remove)}

    def agent_env(self, base: Mapping[str, str]) -> dict[str, str]:
        """The editor's environment minus `env.remove`, plus the agent's own env."""
        return {**self.base_env(base), **dict(self.agent.env)}


def _removed(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def parse_settings(
    raw: Any, base: Settings | None = None, agents: AgentResolver | None = None
) -> tuple[Settings, list[str]]:
    """Settings from an editor's JSON; returns (settings, problems). A wrong value is reported
    and keeps its previous value; the other keys of its section still apply."""
    base = base or Settings()
    problems: list[str] = []
    if raw is None:
        return base, problems
    if not isinstance(raw, Mapping):
        return base, [f"settings must be an object, got {type(raw).__name__}"]
    if isinstance(raw.get("acpls"), Mapping):  # didChangeConfiguration sends {"acpls": {...}}
        raw = raw["acpls"]
    changes: dict[str, Any] = {}
    unknown: list[str] = []
    # `registry` before `agent`: a registry id resolves against the registry.url being set
    for name, value in sorted(raw.items(), key=lambda item: item[0] != "registry"):
        if name in _KEYS:
            _parse_key(name, value, changes, problems)
        elif name in _SECTIONS:
            if not isinstance(value, Mapping):
                problems.append(f"acpls.{name}: must be an object")
                continue
            for sub, sub_value in value.items():
                if f"{name}.{sub}" in _KEYS:
                    _parse_key(f"{name}.{sub}", sub_value, changes, problems)
        else:
            unknown.append(name)
    if "agent" in changes and isinstance(changes["agent"], str):
        url = changes.get("registry_url", base.registry_url)
        try:
            changes["agent"] = (agents or _presets_only)(changes["agent"], url)
        except ValueError as exc:
            del changes["agent"]
            problems.append(f"acpls.agent: {exc}")
    if unknown:
        problems.append(
            "unknown settings ignored: " + ", ".join(f"acpls.{k}" for k in sorted(unknown))
        )
    return attrs.evolve(base, **changes), problems


def _parse_key(key: str, value: Any, changes: dict[str, Any], problems: list[str]) -> None:
    field, parse = _KEYS[key]
    try:
        changes[field] = parse(value)
    except (TypeError, ValueError) as exc:
        problems.append(f"acpls.{key}: {exc}")


def _presets_only(name: str, url: str) -> AgentSpec:
    """Without the server's agent catalog (core/agents.py, which callers pass in: settings sit
    below core/), a name that is not a preset cannot be resolved."""
    raise ValueError(
        f"unknown agent {name!r}: not a preset ({', '.join(PRESETS_BY_NAME)}), and no agent"
        f" registry at {url} was asked"
    )


def _parse_agent(value: Any) -> AgentSpec | str:
    """A preset's or an explicit command's spec; a registry id stays a name until the end of
    parse_settings, which resolves it against the registry.url being set."""
    if isinstance(value, str):
        if value in PRESETS_BY_NAME:
            return resolve_preset(value)
        if not value:
            raise ValueError("must be a preset name, a registry id or {command, args?, env?}")
        return value
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
    return AgentSpec(name=name, command=command, args=tuple(args), env=tuple(sorted(env.items())))


def _parse_agents(value: Any) -> tuple[tuple[str, AgentSpec | str], ...]:
    """`agents`: name -> a preset name, a registry id or {command, args?, env?} (named by the
    key). Registry ids are resolved when a session of that agent starts, not here, so a name the
    registry lacks fails that session with the reason, not every setting."""
    if value == []:  # an empty Lua table arrives as a list
        return ()
    if not isinstance(value, Mapping):
        raise TypeError("must map agent names to a preset name, a registry id or {command, …}")
    out: list[tuple[str, AgentSpec | str]] = []
    for name, entry in value.items():
        if not isinstance(name, str) or not name:
            raise ValueError("agent names must be non-empty strings")
        if isinstance(entry, Mapping):
            entry = {**entry, "name": name}
        try:
            out.append((name, _parse_agent(entry)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name}: {exc}") from exc
    return tuple(sorted(out, key=lambda item: item[0]))


def _parse_version(value: Any) -> Literal["auto", 1, 2]:
    versions: dict[Any, Literal["auto", 1, 2]] = {"auto": "auto", 1: 1, 2: 2, "1": 1, "2": 2}
    if not isinstance(value, bool) and value in versions:
        return versions[value]
    raise ValueError(f'must be "auto", 1 or 2, got {value!r}')


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError("must be true or false")
    return value


def _positive_int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError("must be a positive integer")
    return value


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("must be a list of strings")
    return tuple(value)


def _globs(value: Any) -> tuple[str, ...]:
    globs = _strings(value)
    bad = [g for g in globs if not valid_glob(g)]
    if bad:
        raise ValueError(f"not a glob relative to a workspace folder or absolute: {bad!r}")
    return globs


def _mcp_servers(value: Any) -> tuple[Any, ...]:
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise TypeError("must be a list of MCP server objects")
    return tuple(value)


def _log_level(value: Any) -> str:
    if value not in ("debug", "info", "warning", "error"):
        raise ValueError("must be debug, info, warning or error")
    return value


def _registry_url(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("must be a string")
    if value and not value.startswith(("https://", "http://", "file://")):
        raise ValueError('must be an http(s):// or file:// URL, or "" for no network')
    return value


def _default_modes(value: Any) -> tuple[tuple[str, str], ...]:
    if value == []:  # an empty Lua table arrives as a list
        return ()
    if not isinstance(value, Mapping):
        raise TypeError("must map agent names to mode ids")
    if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()):
        raise ValueError("must map agent names to non-empty mode ids")
    return tuple(sorted(value.items()))


def _default_configs(value: Any) -> tuple[tuple[str, tuple[tuple[str, str | bool], ...]], ...]:
    if value == []:
        return ()
    if not isinstance(value, Mapping):
        raise TypeError("must map agent names to {option id: value}")
    out = []
    for agent, options in sorted(value.items()):
        if options == []:
            options = {}
        if not isinstance(agent, str) or not isinstance(options, Mapping):
            raise ValueError(f"{agent!r} must map option ids to values")
        pairs = tuple(options.items())
        if not all(isinstance(k, str) and k and isinstance(v, (str, bool)) for k, v in pairs):
            raise ValueError(f"{agent}: each option id maps to a value id (string) or a boolean")
        out.append((agent, pairs))
    return tuple(out)


# Every key the server reads, dotted as editors/protocol.md section 1 and
# editors/fixtures/settings.json name it: the Settings field it sets and how it is checked.
_KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "agent": ("agent", _parse_agent),
    "agents": ("agents", _parse_agents),
    "protocolVersion": ("protocol_version", _parse_version),
    "defaultMode": ("default_modes", _default_modes),
    "defaultConfig": ("default_configs", _default_configs),
    "follow.enabled": ("follow_enabled", _bool),
    "follow.subagents": ("follow_subagents", _bool),
    "mcpServers": ("mcp_servers", _mcp_servers),
    "permissions.autoApprove": ("auto_approve_kinds", _strings),
    "permissions.rules": ("remember_rules", _bool),
    "files.allowedRoots": ("allowed_roots", _strings),
    "files.alwaysAsk": ("always_ask", _globs),
    "terminal.scrollbackBytes": ("scrollback_bytes", _positive_int),
    "terminal.rawOutput": ("raw_terminal_output", _bool),
    "env.remove": ("env_remove", _strings),
    "limits.maxLineBytes": ("max_line_bytes", _positive_int),
    "limits.maxPendingPermissions": ("max_pending_permissions", _positive_int),
    "limits.maxAgentInputBytes": ("max_agent_input_bytes", _positive_int),
    "limits.maxReadBytes": ("max_read_bytes", _positive_int),
    "log.level": ("log_level", _log_level),
    "checkpoints.enabled": ("checkpoints_enabled", _bool),
    "checkpoints.maxCount": ("checkpoint_max_count", _positive_int),
    "checkpoints.maxStorageBytes": ("checkpoint_max_storage_bytes", _positive_int),
    "checkpoints.maxFileBytes": ("checkpoint_max_file_bytes", _positive_int),
    "checkpoints.binaryBudgetBytes": ("checkpoint_binary_budget_bytes", _positive_int),
    "checkpoints.fork": ("checkpoint_fork", _bool),
    "context.maxEmbedBytes": ("context_max_embed_bytes", _positive_int),
    "context.maxImageBytes": ("context_max_image_bytes", _positive_int),
    "registry.url": ("registry_url", _registry_url),
}
KEYS = tuple(_KEYS)
_SECTIONS = frozenset(key.split(".", 1)[0] for key in _KEYS if "." in key)
