"""Per-agent defaults for a session's config options (`defaultConfig`): which to set, and why one
cannot be. Pure: the session's options as the agent sent them in, the settings' values in, the
`session/set_config_option` calls to make and the problems to show out.

An option is named by its id (v2 `configId`, v1 `id`). A value is a select option's `value` (in
any of its groups) or a boolean for a boolean option; one already current is not set again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ConfigValue = str | bool


def plan_defaults(
    options: Iterable[Any] | None, wanted: Iterable[tuple[str, ConfigValue]]
) -> tuple[list[tuple[str, ConfigValue]], list[str]]:
    """(the options to set with their values, one problem sentence per default that cannot be)."""
    by_id: dict[str, Mapping[str, Any]] = {}
    for option in options or ():
        option_id = _option_id(option) if isinstance(option, Mapping) else None
        if option_id is not None:
            by_id[option_id] = option
    to_set: list[tuple[str, ConfigValue]] = []
    problems: list[str] = []
    for config_id, value in wanted:
        option = by_id.get(config_id)
        if option is None:
            offered = ", ".join(sorted(by_id)) or "none"
            problems.append(f"{config_id}: the agent offers no such option (it offers {offered})")
            continue
        problem = _misfit(option, value)
        if problem is not None:
            problems.append(f"{config_id}: {problem}")
        elif option.get("currentValue") != value:
            to_set.append((config_id, value))
    return to_set, problems


def _misfit(option: Mapping[str, Any], value: ConfigValue) -> str | None:
    if option.get("type") == "boolean":
        return None if isinstance(value, bool) else f"takes true or false, not {value!r}"
    if isinstance(value, bool):
        return f"takes one of its values, not {value!r}"
    values = select_values(option)
    if value in values:
        return None
    return f"{value!r} is not one of its values ({', '.join(values) or 'none'})"


def select_values(option: Mapping[str, Any]) -> list[str]:
    """A select option's values, flat or grouped."""
    out: list[str] = []
    for item in option.get("options") or []:
        if not isinstance(item, Mapping):
            continue
        entries = item.get("options") if "groupId" in item else [item]
        for entry in entries or []:
            if isinstance(entry, Mapping) and isinstance(entry.get("value"), str):
                out.append(entry["value"])
    return out


def _option_id(option: Mapping[str, Any]) -> str | None:
    value = option.get("configId") or option.get("id")
    return value if isinstance(value, str) else None
