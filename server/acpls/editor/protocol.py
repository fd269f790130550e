"""acpls' pygls protocol class: LSP's message order kept, the acpls capability advertised.

It knows nothing of the core: a `$/cancelRequest` is handed to `on_cancel_request` (set by
server.py, which cancels the agent's turn of a cancelled `acpls.prompt`), and the id of the
request being handled is kept in `current_request_id()` for the command adapters.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol, lsp_method

logger = logging.getLogger(__name__)

# The id of the LSP request being handled (set per message: pygls runs each handler in a copy of
# this context).
_REQUEST_ID: contextvars.ContextVar[Any] = contextvars.ContextVar("acpls_request_id", default=None)


def current_request_id() -> Any:
    """The id of the LSP request whose handler is running (None for a notification)."""
    return _REQUEST_ID.get()


class AcplsProtocol(LanguageServerProtocol):
    """Advertises the acpls editor protocol in the initialize result, and keeps LSP's order: before
    `initialize` a request gets ServerNotInitialized (-32002) and a notification is dropped; after
    `shutdown` a request gets InvalidRequest (-32600); `exit` is always handled (pygls itself
    answers neither, and silently drops what comes after shutdown)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_received = False
        # Called with the id of each request the editor cancels ($/cancelRequest).
        self.on_cancel_request: Callable[[Any], None] | None = None

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        _REQUEST_ID.set(getattr(message, "id", None))
        if method == types.CANCEL_REQUEST and self.on_cancel_request is not None:
            self.on_cancel_request(getattr(getattr(message, "params", None), "id", None))
        if isinstance(method, str) and method != types.EXIT:
            error = self._out_of_order(method)
            if error is not None:
                if hasattr(message, "id"):
                    self._send_response(message.id, error=error.to_response_error())
                else:
                    logger.debug("dropping the %s notification: %s", method, error.message)
                return
            if method == types.INITIALIZE:
                self._initialize_received = True
        super().handle_message(message)

    def _out_of_order(self, method: str) -> JsonRpcException | None:
        if self._shutdown:
            return JsonRpcInvalidRequest(message=f"{method} after shutdown: acpls is stopping")
        if method == types.INITIALIZE and self._initialize_received:
            return JsonRpcInvalidRequest(message="initialize was already received")
        if not self._initialize_received and method != types.INITIALIZE:
            return JsonRpcServerNotInitialized(message=f"{method} before initialize")
        return None

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:  # type: ignore[override]
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {"acpls": {"version": 1}}
        return result

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Any:  # type: ignore[override]
        """pygls' own cancels pending requests while iterating over the dict that their
        cancellation shrinks ("dictionary changed size during iteration"); iterate a copy."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None
