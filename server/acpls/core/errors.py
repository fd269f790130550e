"""The error a command of the editor ends with, and its JSON-RPC code.

Its own module so the LSP side (server.py) can catch it without importing the hub.
"""

from __future__ import annotations

from acpls.acp.errors import INVALID_PARAMS


class CommandError(Exception):
    """A command the editor sent cannot be carried out; `code` is the JSON-RPC error code."""

    def __init__(self, message: str, code: int = INVALID_PARAMS) -> None:
        super().__init__(message)
        self.code = code
