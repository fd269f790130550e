"""JSON-RPC error codes ACP uses, and the error both sides raise (`AcpError`).

Small on purpose: the LSP side imports it to turn an agent's error into the editor's without
loading the transport or the core.
"""

from __future__ import annotations

from typing import Any

import attrs
from pygls.exceptions import JsonRpcException

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
RESOURCE_NOT_FOUND = -32002


@attrs.define
class AcpErrorObject:
    code: int
    message: str
    data: Any = None


class AcpError(JsonRpcException):
    """An error answer from the agent, or one acpls sends to it (raised by a handler)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message=message, code=code, data=data)

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    def to_response_error(self) -> AcpErrorObject:  # type: ignore[override]
        return AcpErrorObject(self.code, self.message, self.data)
