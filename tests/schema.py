"""Validate what acpls sends to an agent against the official ACP JSON schemas.

The schemas are vendored in the repository, `editors/acp-schema/v{1,2}/schema{,.unstable}.json`
(source, version and licence in `editors/acp-schema/SOURCE.txt`; `make update-schemas` refreshes
them). A missing schema is an error, never a skip. Use:

    validate_client_message(2, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": p})
    validate_client_message(1, {"jsonrpc": "2.0", "id": 7, "result": r}, method="fs/read_text_file")

A message is checked twice: against the JSON-RPC envelope (`ClientRequest`, `ClientNotification`
or `ClientResponse`) and, because those envelopes accept any params through their extension
variant, against the exact definition of its method (`x-method` in the schema). Raises
`jsonschema.ValidationError` when invalid, `UnknownMethodError` for a method the version lacks.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Literal

import jsonschema
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

SCHEMA_ROOT = Path(__file__).resolve().parents[1] / "editors" / "acp-schema"

Kind = Literal["Request", "Notification", "Response"]


class UnknownMethodError(ValueError):
    """The method does not exist (for this direction) in that ACP version's schema."""


def schema_path(version: int, *, unstable: bool = False) -> Path:
    name = "schema.unstable.json" if unstable else "schema.json"
    return SCHEMA_ROOT / f"v{version}" / name


@functools.cache
def load_schema(version: int, unstable: bool = False) -> dict[str, Any]:
    path = schema_path(version, unstable=unstable)
    if not path.is_file():
        raise FileNotFoundError(f"ACP schema {path} is missing: run `make update-schemas`")
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _uri(version: int, unstable: bool) -> str:
    return f"urn:acp:v{version}{':unstable' if unstable else ''}"


@functools.cache
def _registry(version: int, unstable: bool) -> Registry:
    resource = Resource.from_contents(load_schema(version, unstable))
    return Registry().with_resource(_uri(version, unstable), resource)


@functools.cache
def definition_validator(
    version: int, name: str, unstable: bool = False
) -> jsonschema.Draft202012Validator:
    """A validator for `#/$defs/<name>` with every `$ref` resolved inside the same schema."""
    if name not in load_schema(version, unstable)["$defs"]:
        raise KeyError(f"ACP v{version} schema has no definition {name!r}")
    ref = {"$ref": f"{_uri(version, unstable)}#/$defs/{name}"}
    return jsonschema.Draft202012Validator(ref, registry=_registry(version, unstable))


def validate_definition(version: int, name: str, instance: Any, *, unstable: bool = False) -> None:
    """Raise `jsonschema.ValidationError` (the most relevant one) unless `instance` fits."""
    validator = definition_validator(version, name, unstable)
    error = best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


def method_definition(version: int, method: str, kind: Kind, *, unstable: bool = False) -> str:
    """The definition name of `method`'s client-sent params/result (`x-method` in the schema)."""
    # Requests/notifications go to the agent (x-side "agent"); responses answer agent requests.
    side = "client" if kind == "Response" else "agent"
    for name, definition in load_schema(version, unstable)["$defs"].items():
        if (
            definition.get("x-method") == method
            and definition.get("x-side") == side
            and name.endswith(kind)
        ):
            return name
    raise UnknownMethodError(f"ACP v{version} has no client {kind.lower()} for {method!r}")


def validate_client_message(
    version: int, message: dict[str, Any], *, method: str | None = None, unstable: bool = False
) -> None:
    """Validate one message acpls sends to an agent speaking ACP `version` (1 or 2).

    Requests have `id` and `method`, notifications `method` only, responses `result` (or
    `error`); a response's result is checked against its method's definition when `method`
    (the request it answers) is given. Extension methods (leading `_`) get the envelope check.
    """
    if "method" in message:
        kind: Kind = "Request" if "id" in message else "Notification"
        validate_definition(version, f"Client{kind}", message, unstable=unstable)
        name = message["method"]
        if not name.startswith("_"):
            params_def = method_definition(version, name, kind, unstable=unstable)
            validate_definition(version, params_def, message.get("params"), unstable=unstable)
        return
    validate_definition(version, "ClientResponse", message, unstable=unstable)
    if method is not None and "result" in message and not method.startswith("_"):
        result_def = method_definition(version, method, "Response", unstable=unstable)
        validate_definition(version, result_def, message["result"], unstable=unstable)
