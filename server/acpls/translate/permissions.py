"""Permission prompts, pure: what the user is shown and how an answer maps back to ACP.

Every option the agent sent is offered, in its order, whatever its kind (the four ACP kinds,
`_custom` kinds, unknown future kinds). A dismissed prompt picks the first `reject_once` option when
there is one, else the request is answered `cancelled` (editors/protocol.md section 4).
"""

from __future__ import annotations

from typing import Any

# The answers themselves are the ACP models' (one place builds them).
from acpls.acp.converter import permission_cancelled as cancelled
from acpls.acp.converter import permission_selected as selected
from acpls.acp.converter import unstructure
from acpls.acp.models import RequestPermissionRequest

KIND_LABELS = {
    "allow_once": "allow once",
    "allow_always": "always allow",
    "reject_once": "reject once",
    "reject_always": "always reject",
}


def offered_options(request: RequestPermissionRequest) -> list[dict[str, Any]]:
    """The options of a decoded request as the agent sent them (unknown kinds, `_meta` and keys
    acpls does not know kept), in its order: what the editor and the rules see."""
    return [unstructure(option) for option in request.options]


def kind_label(kind: Any) -> str:
    if isinstance(kind, str) and kind in KIND_LABELS:
        return KIND_LABELS[kind]
    return str(kind) if kind else "option"


def dismissed_outcome(options: list[dict[str, Any]]) -> dict[str, Any]:
    for option in options:
        if option.get("kind") == "reject_once":
            return selected(option["optionId"])
    return cancelled()


def outcome_for_title(options: list[dict[str, Any]], title: str | None) -> dict[str, Any]:
    """Generic mode: the editor answers with an action title, matched to an option by name."""
    if title is None:
        return dismissed_outcome(options)
    for option in options:
        if option["name"] == title:
            return selected(option["optionId"])
    return dismissed_outcome(options)


def outcome_for_option_id(options: list[dict[str, Any]], option_id: Any) -> dict[str, Any]:
    if isinstance(option_id, str) and any(o["optionId"] == option_id for o in options):
        return selected(option_id)
    return dismissed_outcome(options)


def unique_titles(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Generic editors answer with the title alone, so duplicate names are made distinct."""
    seen: dict[str, int] = {}
    out = []
    for option in options:
        name = option["name"]
        count = seen.get(name, 0)
        seen[name] = count + 1
        if count:
            option = {**option, "name": f"{name} ({kind_label(option.get('kind'))} {count + 1})"}
        out.append(option)
    return out


def generic_message(
    title: str,
    kind: str | None,
    file_lines: list[tuple[str, int, int]],
    description: str | None,
    remember_as: list[dict[str, Any]] | None = None,
) -> str:
    head = f"{title} ({kind})" if kind else title
    lines = [f"The agent asks: {head}"]
    if description:
        lines.append(description)
    lines.extend(f"{path} +{added} -{removed}" for path, added, removed in file_lines)
    if remember_as is not None:
        lines.append(remember_line(remember_as))
    return "\n".join(lines)


def remember_line(remember_as: list[dict[str, Any]]) -> str:
    """What "always" records, in words: the rule is shown before the user answers."""
    if not remember_as:
        return "Always allow/reject records nothing here: you will be asked again."
    return "Always allow/reject records: " + "; ".join(
        str(scope.get("description")) for scope in remember_as
    )
