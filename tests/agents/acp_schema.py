"""Validate ACP messages against the official JSON schemas vendored in editors/acp-schema/.

A message is checked twice: its envelope against `AgentRequest` / `AgentNotification` /
`AgentResponse` (or the `Client*` ones), and its params or result against the schema type whose
`x-method` names that method (the envelope types accept any extension payload, so this second check
is what makes validation strict). For `session/update`, the update kind must also be one the schema
names: v2's open enums would otherwise accept a misspelt kind as a "future" one.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for

# The repository's vendored copy (editors/acp-schema/SOURCE.txt); a missing file fails the test.
SCHEMA_ROOT = Path(__file__).resolve().parents[2] / "editors" / "acp-schema"

Side = str  # "agent" (messages the agent sends) or "client" (messages the client sends)


class AcpSchemaError(AssertionError):
    """A message that does not match the official schema."""


@functools.cache
def load_schema(version: int) -> dict[str, Any]:
    return json.loads((SCHEMA_ROOT / f"v{version}" / "schema.json").read_text(encoding="utf-8"))


class AcpValidator:
    """Checks messages of one protocol version."""

    def __init__(self, version: int) -> None:
        self.version = version
        schema = load_schema(version)
        self._defs: dict[str, Any] = schema["$defs"]
        self._validators: dict[str, Any] = {}
        self._by_method = self._index_methods()
        self.update_kinds = self._discriminator_values("SessionUpdate", "sessionUpdate")
        self.content_kinds = self._discriminator_values("ToolCallContent", "type")

    def _index_methods(self) -> dict[tuple[str, str], str]:
        """(method, role) -> type name; role is request/notification/response, by who serves."""
        index: dict[tuple[str, str], str] = {}
        for name, definition in self._defs.items():
            method = definition.get("x-method")
            if not isinstance(method, str):
                continue
            if name.endswith("Response"):
                role = "response"
            elif name.endswith("Notification"):
                role = "notification"
            else:
                role = "request"
            index[(method, role)] = name
        return index

    def _discriminator_values(self, name: str, key: str) -> set[str]:
        values: set[str] = set()
        stack = [self._defs[name]]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                prop = node.get("properties", {}).get(key)
                if isinstance(prop, dict) and isinstance(prop.get("const"), str):
                    values.add(prop["const"])
                stack.extend(node.get("anyOf", []))
                stack.extend(node.get("oneOf", []))
        return values

    def _validator(self, name: str) -> Any:
        validator = self._validators.get(name)
        if validator is None:
            schema = {"$ref": f"#/$defs/{name}", "$defs": self._defs}
            cls = validator_for(load_schema(self.version))
            validator = cls(schema)
            self._validators[name] = validator
        return validator

    def check(self, name: str, instance: Any, what: str) -> None:
        error = best_match(self._validator(name).iter_errors(instance))
        if error is not None:
            path = "/".join(str(part) for part in error.absolute_path)
            raise AcpSchemaError(
                f"v{self.version} {what} does not match {name} at '{path}': {error.message}\n"
                f"{json.dumps(instance)[:2000]}"
            )

    def method_type(self, method: str, role: str) -> str | None:
        return self._by_method.get((method, role))

    def validate(self, message: dict[str, Any], sender: Side, request_method: str | None = None):
        """Validate one message sent by `sender`; `request_method` is needed for responses."""
        prefix = "Agent" if sender == "agent" else "Client"
        if "method" in message:
            method = message["method"]
            is_request = "id" in message
            self.check(f"{prefix}{'Request' if is_request else 'Notification'}", message, method)
            role = "request" if is_request else "notification"
            type_name = self.method_type(method, role)
            if type_name is None:
                raise AcpSchemaError(f"v{self.version}: unknown {role} method {method!r}")
            self.check(type_name, message.get("params"), f"{method} params")
            if method == "session/update":
                self._check_update(message["params"]["update"])
            return
        self.check(f"{prefix}Response", message, "response")
        if "result" in message:
            if request_method is None:
                raise AcpSchemaError(f"response {message.get('id')!r} to no known request")
            type_name = self.method_type(request_method, "response")
            if type_name is None:
                raise AcpSchemaError(f"v{self.version}: no response type for {request_method!r}")
            self.check(type_name, message["result"], f"{request_method} result")

    def _check_update(self, update: dict[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if kind not in self.update_kinds:
            raise AcpSchemaError(
                f"v{self.version}: session update kind {kind!r} is not in the schema"
            )
        if not kind.startswith("tool_call"):
            return
        content = update.get("content")
        items = [content] if isinstance(content, dict) else content or []
        for item in items:
            if isinstance(item, dict) and item.get("type") not in self.content_kinds:
                raise AcpSchemaError(f"v{self.version}: tool content type {item.get('type')!r}")
